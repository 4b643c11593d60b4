"""`pbmserv serve --workers N`: N server processes on one port and one database.

Each worker is a whole server (listener, processing, delivery), as several servers sharing a
PostgreSQL database already are; the kernel spreads the SMTP connections among them
(SO_REUSEPORT), and the database's transactions keep every message processed exactly once.
The supervisor only starts them, starts again one that dies, and passes SIGTERM on.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from types import FrameType

log = logging.getLogger("pbmserv.serve")

#: Set in a worker's environment to its supervisor's pid: it is a worker, and stops with it.
WORKER_ENV = "PBMSERV_WORKER_OF"
#: Set in a worker's environment to its slot (0, 1, ..): work done once for all of them, such
#: as the robots' thinking, belongs to slot 0.
WORKER_SLOT_ENV = "PBMSERV_WORKER_SLOT"
#: A worker that dies sooner than this after its start waits longer before the next one.
QUICK_DEATH_SECONDS = 10.0
MAX_RESTART_DELAY = 30.0
STOP_TIMEOUT_SECONDS = 30.0


def restart_delay(previous: float, lived: float) -> float:
    """How long to wait before starting again a process that lived ``lived`` seconds: twice
    the last wait when it died soon after its start, else a second; 30 s at most."""
    delay = previous * 2 if lived < QUICK_DEATH_SECONDS else 1.0
    return min(delay, MAX_RESTART_DELAY)


def wait_all(processes: Iterable[subprocess.Popen[bytes]]) -> int:
    """Wait for ``processes`` to end (killed past STOP_TIMEOUT_SECONDS in all); the first
    failing exit code, or 0."""
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    worst = 0
    for process in processes:
        try:
            code = process.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            code = process.wait()
        worst = worst or (code if code and code > 0 else 0)
    return worst


class Supervisor:
    def __init__(self, count: int, command: Sequence[str]) -> None:
        self.count = count
        self.command = list(command)
        self.workers: dict[int, tuple[subprocess.Popen[bytes], float]] = {}
        self.stopping = False
        self.delay = 1.0

    def _start(self, slot: int) -> None:
        env = {**os.environ, WORKER_ENV: str(os.getpid()), WORKER_SLOT_ENV: str(slot)}
        process = subprocess.Popen(self.command, env=env)
        self.workers[slot] = (process, time.monotonic())
        log.info("worker %s started (pid %s)", slot, process.pid)

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        self.stopping = True
        for process, _started in self.workers.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)

    def run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._stop)
        for slot in range(self.count):
            self._start(slot)
        while not self.stopping:
            time.sleep(0.2)
            for slot, (process, started) in list(self.workers.items()):
                code = process.poll()
                if code is None or self.stopping:
                    continue
                self.delay = restart_delay(self.delay, time.monotonic() - started)
                log.error(
                    "worker %s (pid %s) exited with %s; starting another in %.0f s",
                    slot,
                    process.pid,
                    code,
                    self.delay,
                )
                time.sleep(self.delay)
                if not self.stopping:
                    self._start(slot)
        return self._wait_all()

    def _wait_all(self) -> int:
        worst = wait_all(process for process, _started in self.workers.values())
        log.info("stopped")
        return worst


def supervise(count: int, command: Sequence[str]) -> int:
    """Run ``count`` workers (each ``command``, a `pbmserv serve`) until SIGTERM or SIGINT."""
    return Supervisor(count, command).run()
