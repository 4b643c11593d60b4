"""`serve`'s delivery in processes of its own (``delivery_processes``, 1 by default).

One process is one core: drawing board pictures, signing and sending mail take as much CPU as
playing the moves, and none of it needs the database's write lock for long. So `serve` starts
its delivery as child processes (the same command line, marked by :data:`DELIVERY_ENV`) and
keeps the listener and the processing itself. Nothing changes for exactly-once: delivery
claims mail by lease, as several servers sharing a database already do.

The parent wakes the children through a pipe when it has queued mail (a byte; a full pipe
already says "wake up"), so mail leaves at once rather than at the next poll. A child stops
when the pipe's other end closes: its parent is gone, however it died. The parent starts a
child again if it dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence

from pbmserv.mail.supervisor import restart_delay, wait_all

log = logging.getLogger("pbmserv.serve")

#: Set in a delivery child's environment to its parent's pid.
DELIVERY_ENV = "PBMSERV_DELIVERY_OF"
#: The child's end of the wake-up pipe (a file descriptor number).
WAKE_FD_ENV = "PBMSERV_DELIVERY_WAKE_FD"
CHECK_SECONDS = 0.5


class DeliveryChildren:
    """The parent's side: ``count`` children running ``command``, woken through one pipe."""

    def __init__(self, count: int, command: Sequence[str]) -> None:
        self.count = count
        self.command = list(command)
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)
        self.processes: list[tuple[subprocess.Popen[bytes], float] | None] = [None] * count
        self.delay = 1.0

    def start(self) -> None:
        for slot in range(self.count):
            self._start(slot)

    def _start(self, slot: int) -> None:
        env = {**os.environ, DELIVERY_ENV: str(os.getpid()), WAKE_FD_ENV: str(self.read_fd)}
        process = subprocess.Popen(self.command, env=env, pass_fds=(self.read_fd,))
        self.processes[slot] = (process, time.monotonic())
        log.info("delivery process %s started (pid %s)", slot, process.pid)

    def wake(self) -> None:
        """Tell the children mail is waiting."""
        with contextlib.suppress(BlockingIOError, OSError):  # full: they are woken already
            os.write(self.write_fd, b".")

    async def supervise(self, stopping: asyncio.Event) -> None:
        """Start a child again when one dies (sooner deaths wait longer), until ``stopping``."""
        while not stopping.is_set():
            for slot, entry in enumerate(self.processes):
                if entry is None or entry[0].poll() is None:
                    continue
                process, started = entry
                self.delay = restart_delay(self.delay, time.monotonic() - started)
                log.error(
                    "delivery process %s (pid %s) exited with %s; starting another in %.0f s",
                    slot,
                    process.pid,
                    process.returncode,
                    self.delay,
                )
                self.processes[slot] = None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stopping.wait(), timeout=self.delay)
                if not stopping.is_set():
                    self._start(slot)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), timeout=CHECK_SECONDS)

    def stop(self) -> None:
        """SIGTERM to every child and a bounded wait (each finishes the mail in hand)."""
        running = [entry[0] for entry in self.processes if entry and entry[0].poll() is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        wait_all(running)
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def listen_for_wakes(
    fd: int, loop: asyncio.AbstractEventLoop, wake: Callable[[], None], orphaned: Callable[[], None]
) -> None:
    """The child's side: ``wake()`` whenever the parent writes to the pipe; ``orphaned()`` once
    the parent's end is closed (the parent stopped or died)."""
    os.set_blocking(fd, False)

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            wake()
            return
        loop.remove_reader(fd)
        orphaned()

    loop.add_reader(fd, readable)
