"""Run a bare aiosmtpd ``Sink`` relay on 127.0.0.1 (bench/throughput.py's baseline row starts it
so): ``python -m bench.rig aiosmtpd-sink PORT`` from the checkout, or ``python
bench/rig/__main__.py aiosmtpd-sink PORT`` from anywhere. It stops by itself after an hour at
most (``--seconds``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.rig.relays import serve_aiosmtpd_sink  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sink = commands.add_parser("aiosmtpd-sink", help="run a bare aiosmtpd Sink on 127.0.0.1")
    sink.add_argument("port", type=int)
    sink.add_argument("--seconds", type=float, default=3600, help="stop after (default 3600)")
    args = parser.parse_args()
    if args.command == "aiosmtpd-sink":
        serve_aiosmtpd_sink(args.port, args.seconds)


if __name__ == "__main__":
    main()
