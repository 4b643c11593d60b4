"""The move load's relay in a process of its own (bench/rig/move_load.py): it accepts every mail
the server relays and writes one line of JSON a mail to its standard output, saying what the
load's tracker needs (when it arrived, its board, the message it answers).

In the client's process the relay would share one interpreter lock with the client's threads,
and a relay slow to answer holds the server's delivery up: the figures would be the bench's.
Run as ``python bench/rig/noting_relay.py PORT``; it prints ``listening`` once it listens, and
stops at the end of its standard input. The load starts it with :class:`NotingRelayProcess`.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from email.policy import compat32
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.rig import BOARD_SUBJECT, RecordingRelay, Relayed, free_port, wait_or_kill  # noqa: E402


@dataclass
class Noted:
    """What the tracker needs of a relayed mail: when it arrived (time.monotonic()), the board
    of a board mail, or the Message-ID a reply answers and whether it says the move failed."""

    at: float
    board: int | None = None
    answering: str = ""
    failed: bool = False


def noted_of(item: Relayed) -> Noted:
    headers = BytesHeaderParser(policy=compat32).parsebytes(item.raw)
    subject = str(headers.get("Subject", "")).encode()
    # Board mail answers the board's previous mail (threading), so it has In-Reply-To too: a
    # reply to a player is the mail marked auto-replied.
    replied = str(headers.get("Auto-Submitted", "")).strip() == "auto-replied"
    match = BOARD_SUBJECT.match(subject)
    if match and not replied:
        return Noted(item.at, board=int(match.group(2)))
    answering = str(headers.get("In-Reply-To", "")).strip() if replied else ""
    failed = answering != "" and b"did not work" in item.raw
    return Noted(item.at, answering=answering, failed=failed)


class NotingRelayProcess:
    """The relay of this script (:func:`main`), in a process of its own, its notes handed to
    ``on_noted`` by a thread of this process."""

    def __init__(self, on_noted: Callable[[Noted], None]) -> None:
        self.port = free_port()
        self.on_noted = on_noted
        self.process: subprocess.Popen[str] | None = None
        self.reader: threading.Thread | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def __enter__(self) -> NotingRelayProcess:
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), str(self.port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        if self.process.stdout.readline().strip() != "listening":
            self.__exit__()
            raise RuntimeError("the bench's relay did not start")
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        return self

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.on_noted(Noted(**json.loads(line)))

    def __exit__(self, *exc: object) -> None:
        if self.process is None:
            return
        with contextlib.suppress(OSError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        wait_or_kill(self.process)
        if self.reader is not None:
            self.reader.join(5)


# --- the relay's own process -----------------------------------------------------------------

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
