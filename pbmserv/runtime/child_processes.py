"""`serve`'s work in processes of its own: the moves played in one (``processing_process``),
the mail delivered from others (``delivery_processes``, 1 by default), the robots' thinking
and the web view (``web_listen``) in one each.

One process is one core, and each part of the work keeps one busy in a burst: the listener
storing messages, the processing playing the moves, delivery drawing the board pictures,
signing and sending. So `serve` keeps the listener (or the hosted mailbox's reader) and starts
the rest as child processes: the same command line, marked by :data:`ROLE_ENV`. Nothing changes
for exactly-once: processing claims messages in its transaction and delivery claims mail by
lease, as several servers sharing a database already do.

Each role is woken through a pipe (a byte; a full pipe already says "wake up"): the processing
child when the listener has stored a message, the delivery children when mail is queued (by
the processing child, which is handed that pipe's writing end). So work starts at once rather
than at the next poll. A child stops when its wake pipe's other end closes: its parent is gone,
however it died. The parent starts a child again if it dies.
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

from pbmserv.runtime.supervisor import restart_delay, wait_all

log = logging.getLogger("pbmserv.serve")

#: Set in a child's environment to the parts of the work it does, "+" between them
#: (runtime.worker's PROCESS, DELIVER).
ROLE_ENV = "PBMSERV_CHILD_ROLE"
#: Set in a child's environment to its parent's pid.
PARENT_ENV = "PBMSERV_CHILD_OF"
#: The child's end of its wake-up pipe (a file descriptor number).
WAKE_FD_ENV = "PBMSERV_WAKE_FD"
#: The processing child's end of the delivery children's wake-up pipe, to say mail is queued.
MAIL_WAKE_FD_ENV = "PBMSERV_MAIL_WAKE_FD"
CHECK_SECONDS = 0.5
_NAMES = {"process": "processing", "deliver": "delivery", "web": "web view"}


def named(parts: frozenset[str]) -> str:
    """How the log names a child by its parts ("delivery and processing")."""
    return " and ".join(_NAMES.get(part, part) for part in sorted(parts))


class WakePipe:
    """A pipe one side writes a byte to, to wake whoever reads the other end."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)

    def wake(self) -> None:
        wake_through(self.write_fd)

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def wake_through(fd: int) -> None:
    """Write a wake-up byte to ``fd`` (a full pipe: they are woken already)."""
    with contextlib.suppress(BlockingIOError, OSError):
        os.write(fd, b".")


class Children:
    """The parent's side: ``count`` children doing the same ``parts`` of the work, running
    ``command``, woken through one pipe; ``handed`` names more descriptors each child gets
    (environment name: fd)."""

    def __init__(
        self,
        parts: frozenset[str],
        count: int,
        command: Sequence[str],
        handed: dict[str, int] | None = None,
    ) -> None:
        self.parts = parts
        self.role = "+".join(sorted(parts))
        self.named = named(parts)
        self.count = count
        self.command = list(command)
        self.handed = dict(handed or {})
        self.pipe = WakePipe()
        self.processes: list[tuple[subprocess.Popen[bytes], float] | None] = [None] * count
        self.delay = 1.0
        #: How often each slot's child was started again.
        self.restarts = [0] * count
        #: Called when a child is found dead and when one is started again (the heartbeat,
        #: runtime/heartbeats.py, says so at once).
        self.on_change: Callable[[], None] | None = None

    def start(self) -> None:
        for slot in range(self.count):
            self._start(slot)

    def _start(self, slot: int) -> None:
        env = {
            **os.environ,
            ROLE_ENV: self.role,
            PARENT_ENV: str(os.getpid()),
            WAKE_FD_ENV: str(self.pipe.read_fd),
            **{name: str(fd) for name, fd in self.handed.items()},
        }
        fds = (self.pipe.read_fd, *self.handed.values())
        process = subprocess.Popen(self.command, env=env, pass_fds=fds)
        self.processes[slot] = (process, time.monotonic())
        log.info("%s process %s started (pid %s)", self.named, slot, process.pid)

    def wake(self) -> None:
        """Tell the children there is work."""
        self.pipe.wake()

    async def supervise(self, stopping: asyncio.Event) -> None:
        """Start a child again when one dies (sooner deaths wait longer), until ``stopping``."""
        while not stopping.is_set():
            for slot, entry in enumerate(self.processes):
                if entry is None or entry[0].poll() is None:
                    continue
                process, started = entry
                self.delay = restart_delay(self.delay, time.monotonic() - started)
                log.error(
                    "%s process %s (pid %s) exited with %s; starting another in %.0f s",
                    self.named,
                    slot,
                    process.pid,
                    process.returncode,
                    self.delay,
                )
                self.processes[slot] = None
                self._changed()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stopping.wait(), timeout=self.delay)
                if not stopping.is_set():
                    self._start(slot)
                    self.restarts[slot] += 1
                    self._changed()
                    self.wake()  # whatever woke the one that died is still to do
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stopping.wait(), timeout=CHECK_SECONDS)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def states(self) -> list[tuple[int, int | None, bool]]:
        """Each slot's child as the parent sees it: (slot, pid or None, whether it runs)."""
        seen: list[tuple[int, int | None, bool]] = []
        for slot, entry in enumerate(self.processes):
            if entry is None:
                seen.append((slot, None, False))
            else:
                seen.append((slot, entry[0].pid, entry[0].poll() is None))
        return seen

    def signal_stop(self) -> list[subprocess.Popen[bytes]]:
        """SIGTERM to every running child (each finishes the work in hand); those signalled."""
        running = [entry[0] for entry in self.processes if entry and entry[0].poll() is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        return running

    def close(self) -> None:
        self.pipe.close()


def stop_all(groups: Sequence[Children]) -> None:
    """Stop every group's children, in order (processing before delivery: the mail it queues
    last still leaves), with a bounded wait; then close their pipes."""
    for group in groups:
        wait_all(group.signal_stop())
    for group in groups:
        group.close()


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
