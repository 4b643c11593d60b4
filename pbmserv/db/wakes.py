"""Wake-ups through PostgreSQL (LISTEN/NOTIFY): rows one server commits wake the processes of
every other server sharing the database at once, rather than at their next poll.

Within one `serve` the processes wake each other through pipes (runtime.child_processes); a
second `serve` on the same database, a `serve --workers N` sibling, or the admin shell queuing
mail has no pipe to them. On PostgreSQL the transaction that stores a message or queues mail
also says so (``pg_notify``, delivered only if it commits), and each processing or delivery
process listens on a connection of its own. A notice names its schema and its sender, so that
a server ignores another schema's (another install in the same PostgreSQL database) and its own
(its pipes were quicker). SQLite has nothing of the kind: there the
others find the work at their next poll, as before.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping

from sqlalchemy import Connection, Engine, text
from sqlalchemy.orm import Session

log = logging.getLogger("pbmserv.wakes")

#: Messages were stored in the inbox: processing has work.
INBOX = "pbmserv_inbox"
#: Mail was queued in the outbox: delivery has work.
OUTBOX = "pbmserv_outbox"
CHANNELS = (INBOX, OUTBOX)
#: How long a listener waits for notices before looking whether it should stop.
CHECK_SECONDS = 0.5
RETRY_MAX_SECONDS = 30.0

#: The notice's text is ``_notice(schema, origin)``, the schema read where the rows are written.
_NOTIFY = text("SELECT pg_notify(:channel, coalesce(current_schema(), '') || '|' || :origin)")
_origin = f"{socket.gethostname()}:{os.getpid()}"


def set_origin(pid: int) -> None:
    """Name this process's notices after the process whose pipes wake it (its `serve`)."""
    global _origin
    _origin = f"{socket.gethostname()}:{pid}"


def origin() -> str:
    return _origin


def announce(where: Session | Connection, channel: str) -> None:
    """Say, in the caller's transaction, that there is work on ``channel`` (nothing on any
    database but PostgreSQL). PostgreSQL sends one notice a channel per transaction, at
    commit, and none if it rolls back."""
    dialect = where.dialect if isinstance(where, Connection) else where.get_bind().dialect
    if dialect.name == "postgresql":
        # The schema too: another install in the same PostgreSQL database (its own schema, a
        # test's) hears the channel but is not woken.
        where.execute(_NOTIFY, {"channel": channel, "origin": _origin})


def _notice(schema: str | None, sender: str) -> str:
    """A notice's text: the schema whose rows it announces, and who sent it."""
    return f"{schema or ''}|{sender}"


class DatabaseWakes:
    """A thread listening on ``channels`` (name: what to call with a notice from another
    origin), on a connection of its own. Called also each time it starts listening (again):
    a notice sent while it was not listening is lost, so the work is looked for then."""

    def __init__(self, engine: Engine, channels: Mapping[str, Callable[[], object]]) -> None:
        unknown = set(channels) - set(CHANNELS)
        if unknown:
            raise ValueError(f"no such channel: {sorted(unknown)}")
        # Connected as the engine's own connections are (its options, a search_path among them).
        self.connect_args = engine.dialect.create_connect_args(engine.url)
        self.channels = dict(channels)
        #: Notices of this origin are ignored: set_origin comes first.
        self.origin = _origin
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="database-wakes", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 2 * CHECK_SECONDS) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        import psycopg  # the PostgreSQL driver; only a server on PostgreSQL listens

        delay, complained = 1.0, False
        while not self._stopping.is_set():
            try:
                args, keywords = self.connect_args
                with psycopg.connect(*args, **{**keywords, "autocommit": True}) as connection:
                    for channel in self.channels:  # our own names: nothing to quote
                        connection.execute(f"LISTEN {channel}")
                    schema = connection.execute("SELECT current_schema()").fetchone()
                    ignored = _notice(schema[0] if schema else None, self.origin)
                    if complained:
                        log.warning("listening for other servers' wake-ups again")
                    delay, complained = 1.0, False
                    for wake in self.channels.values():
                        wake()
                    self._listen(connection, ignored)
            except Exception as error:  # the database restarted, say: polls go on meanwhile
                if not complained:
                    log.warning("cannot listen for other servers' wake-ups: %s", error)
                    complained = True
                self._stopping.wait(delay)
                delay = min(delay * 2, RETRY_MAX_SECONDS)

    def _listen(self, connection: object, own: str) -> None:
        """Wake for notices about this schema from anyone but ``own`` (its own notice)."""
        schema = own.partition("|")[0]
        while not self._stopping.is_set():
            for notice in connection.notifies(timeout=CHECK_SECONDS):  # type: ignore[attr-defined]
                wake = self.channels.get(notice.channel)
                about, _bar, _sender = notice.payload.partition("|")
                if wake is not None and about == schema and notice.payload != own:
                    wake()
