"""`serve`'s heartbeat: how its processes are, as the parent sees them, in the database.

The web view's ``/healthz`` and ``/metrics`` (web/views/operator.py, web/metrics.py) run in a
process of their own and cannot ask `serve`; so every :data:`HEARTBEAT_SECONDS` the parent
writes one row a process to the ``heartbeats`` table: its own (the listener, or whatever part
of the work it does itself) and each child's (processing, delivery, robots, web: up, or dead
and waiting to be started again), with the restarts counted. A child found dead, or started
again, is written at once. Each write is one short transaction of its own, a few UPSERTs, in
a thread: never on the way of a message or a move.

A row older than three intervals is stale: its server stopped saying anything (killed, or
hung). A clean stop deletes the server's rows, so a server taken away leaves nothing behind;
rows of the processes it no longer runs (its configuration changed) go at its first write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import SQLAlchemyError

from pbmserv.db.engine import core_transaction
from pbmserv.db.models import Heartbeat, table_of
from pbmserv.db.times import utcnow
from pbmserv.runtime.child_processes import Children
from pbmserv.runtime.supervisor import WORKER_SLOT_ENV

log = logging.getLogger("pbmserv.serve")

#: How often the parent reports (a report older than three of these is stale).
HEARTBEAT_SECONDS = 5.0
UP, RESTARTING = "up", "restarting"
#: The parts of the work (runtime.worker's RECEIVE, PROCESS, ...) by the name a report gives.
PART_NAMES = {
    "receive": "listener",
    "process": "processing",
    "deliver": "delivery",
    "robots": "robots",
    "web": "web",
}
_ORDER = tuple(PART_NAMES.values())
_TABLE = table_of(Heartbeat)


def role_of(parts: Iterable[str]) -> str:
    """The name of a process doing ``parts`` ("delivery"; "listener+processing+delivery")."""
    names = {PART_NAMES.get(part, part) for part in parts}
    return "+".join(sorted(names, key=lambda n: (_ORDER.index(n) if n in _ORDER else 99, n)))


def server_name(where: str) -> str:
    """How a `serve` is named in its reports: its host and where it receives mail (and its
    slot among `--workers N`): stable across restarts, apart from another `serve`'s."""
    name = f"{socket.gethostname()} {where}"
    slot = os.environ.get(WORKER_SLOT_ENV)
    return f"{name} worker {slot}" if slot is not None else name


@dataclass(frozen=True)
class Report:
    role: str
    slot: int
    pid: int | None
    state: str
    restarts: int


def reports_of(own_parts: Iterable[str], children: Sequence[Children]) -> list[Report]:
    """The parent itself (up: it is the one saying so), then each child as the parent sees it."""
    found = [Report(role_of(own_parts), 0, os.getpid(), UP, 0)] if own_parts else []
    for group in children:
        role = role_of(group.parts)
        for slot, pid, running in group.states():
            state = UP if running else RESTARTING
            found.append(Report(role, slot, pid, state, group.restarts[slot]))
    return found


def write_reports(
    engine: Engine,
    server: str,
    reports: Sequence[Report],
    now: datetime,
    every: float,
    *,
    replace_all: bool = False,
) -> None:
    """One transaction: an UPSERT a report (``replace_all``: the server's other rows deleted
    first, as at its start)."""
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    with core_transaction(engine) as conn:
        if replace_all:
            conn.execute(delete(_TABLE).where(_TABLE.c.server == server))
        for report in reports:
            values = {
                "server": server,
                "role": report.role,
                "slot": report.slot,
                "pid": report.pid,
                "state": report.state,
                "seen_at": now,
                "every_seconds": every,
                "restarts": report.restarts,
            }
            statement = dialect.insert(_TABLE).values(values)
            changed = {k: statement.excluded[k] for k in ("pid", "state", "seen_at", "restarts")}
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=["server", "role", "slot"],
                    set_={**changed, "every_seconds": statement.excluded.every_seconds},
                )
            )


def clear_reports(engine: Engine, server: str) -> None:
    """The server's rows deleted (a clean stop)."""
    with core_transaction(engine) as conn:
        conn.execute(delete(_TABLE).where(_TABLE.c.server == server))


class Heartbeats:
    """The parent's reporter: :meth:`run` writes every ``every`` seconds, and at once when one
    of ``children`` dies or is started again, until ``stopping``; then clears its rows."""

    def __init__(
        self,
        engine: Engine,
        server: str,
        own_parts: Iterable[str],
        children: Sequence[Children],
        every: float = HEARTBEAT_SECONDS,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.engine = engine
        self.server = server
        self.own_parts = frozenset(own_parts)
        self.children = list(children)
        self.every = every
        self.clock = clock
        self.changed = asyncio.Event()
        self._written = False
        self._failing = False
        for group in self.children:
            group.on_change = self.changed.set

    def _write(self, reports: Sequence[Report]) -> None:
        """Write ``reports`` (the first time, replacing the server's older rows); a database
        that does not answer is logged once, and tried again at the next beat."""
        try:
            write_reports(
                self.engine,
                self.server,
                reports,
                self.clock(),
                self.every,
                replace_all=not self._written,
            )
        except SQLAlchemyError as error:
            if not self._failing:  # once, until it works again
                log.warning("cannot write the heartbeat: %s", error.__class__.__name__)
            self._failing = True
            return
        if self._failing:
            log.info("the heartbeat is written again")
        self._written, self._failing = True, False

    async def run(self, stopping: asyncio.Event) -> None:
        try:
            while not stopping.is_set():
                self.changed.clear()
                # The children's state is read here, on the loop that supervises them.
                reports = reports_of(self.own_parts, self.children)
                await asyncio.to_thread(self._write, reports)
                await _first_of(stopping, self.changed, self.every)
        finally:
            with contextlib.suppress(SQLAlchemyError):
                await asyncio.to_thread(clear_reports, self.engine, self.server)


async def _first_of(first: asyncio.Event, second: asyncio.Event, timeout: float) -> None:
    """Wait until either event is set, or ``timeout`` seconds."""
    waits = {asyncio.create_task(first.wait()), asyncio.create_task(second.wait())}
    try:
        await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in waits:
            task.cancel()
