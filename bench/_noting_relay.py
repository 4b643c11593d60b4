"""The move load's relay in a process of its own (bench/_move_load.py): it accepts every mail
the server relays and writes one line of JSON a mail to its standard output, saying what the
load's tracker needs (when it arrived, its board, the message it answers).

In the client's process the relay would share one interpreter lock with the client's threads,
and a relay slow to answer holds the server's delivery up: the figures would be the bench's.
Run as ``python bench/_noting_relay.py PORT``; it prints ``listening`` once it listens, and
stops at the end of its standard input.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench._move_load import noted_of  # noqa: E402
from bench._rig import RecordingRelay, Relayed  # noqa: E402

_WRITING = threading.Lock()


def _write(item: Relayed) -> None:
    line = json.dumps(noted_of(item).__dict__)
    with _WRITING:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def main() -> None:
    relay = RecordingRelay(int(sys.argv[1]), keep=False, on_mail=_write).start()
    print("listening", flush=True)
    try:
        sys.stdin.read()  # until the bench closes it (or is gone)
    finally:
        relay.stop()


if __name__ == "__main__":
    main()
