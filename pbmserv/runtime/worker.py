"""`pbmserv serve`: the SMTP listener plus the processing and delivery workers, in one loop;
or the listener here and the processing and delivery in child processes (see
runtime.child_processes), each a :class:`Server` doing its part."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Callable

from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.db.engine import engine_of, is_postgres, store_intent
from pbmserv.db.wakes import INBOX, OUTBOX, DatabaseWakes, set_origin
from pbmserv.inbound.imap import MailboxReader, read_mailbox
from pbmserv.inbound.smtp import InboxHandler, Listener, start_listener
from pbmserv.outbound.delivery import BATCH as DELIVERY_BATCH
from pbmserv.outbound.delivery import deliver_due, purge_sent
from pbmserv.outbound.relay.connection import RelayConnection
from pbmserv.pictures.raster import letters_can_be_drawn
from pbmserv.runtime.child_processes import (
    Children,
    listen_for_wakes,
    named,
    stop_all,
    wake_through,
)
from pbmserv.runtime.heartbeats import Heartbeats, server_name
from pbmserv.runtime.processor import Processed, process_next
from pbmserv.runtime.upkeep import maintain, sweep

log = logging.getLogger("pbmserv.serve")

# The relay connection outlives a batch while mail keeps coming; after this long without any
# it is closed (relays drop idle clients anyway, and an idle server holds nothing open).
RELAY_IDLE_SECONDS = 10.0
# How often `serve` deletes the sent mail older than sent_retention_days.
RETENTION_INTERVAL_SECONDS = 3600.0
# After a batch, how long at most the next waits for the listener's waiting stores: long enough
# for a few group commits (a burst is stored first), short enough that moves go on meanwhile.
MAKE_WAY_SECONDS = 0.05
# On stopping, how long the robots' loop waits for the turns its threads are thinking about
# (one cut short is thought about again: nothing is lost).
ROBOT_FINISH_SECONDS = 2.0

#: The parts of a server's work: receiving mail (the SMTP listener or the mailbox reader),
#: processing it (with the maintenance), delivering the mail it queues.
RECEIVE, PROCESS, DELIVER = "receive", "process", "deliver"
EVERYTHING = frozenset({RECEIVE, PROCESS, DELIVER})
#: Thinking for the robots and playing their turns (runtime.robot_runner): `serve` gives it a
#: process of its own, at the lowest CPU priority.
ROBOTS = "robots"
#: The read-only web view (pbmserv.web.serving): `serve` gives it a process of its own too,
#: at the children's CPU priority, which never takes a part of the mail work.
WEB = "web"


class Server:
    """Runs until ``stop()``; every loop also polls, so several servers can share a database."""

    def __init__(
        self,
        factory: sessionmaker[Session],
        settings: Settings,
        parent: int | None = None,
        *,
        parts: frozenset[str] = EVERYTHING,
        children: list[Children] | None = None,
        wake_fd: int | None = None,
        mail_wake_fd: int | None = None,
        heartbeat: bool = False,
    ) -> None:
        self.factory = factory
        self.settings = settings
        #: The supervisor's pid when this server is one of `serve --workers N`; a child's
        #: parent's.
        self.parent = parent
        #: What this server does itself; the rest its children do.
        self.parts = parts
        #: Its child processes (processing first, then delivery), if it has them.
        self.children = children or []
        #: A child's end of its parent's wake-up pipe.
        self.wake_fd = wake_fd
        #: Where a processing child says mail is queued (the delivery children's pipe).
        self.mail_wake_fd = mail_wake_fd
        #: Whether it reports itself and its children to the heartbeats table (`serve` does,
        #: not its children: runtime/heartbeats.py).
        self.heartbeat = heartbeat
        self._work = asyncio.Event()
        self._mail = asyncio.Event()
        self._stopping = asyncio.Event()
        self.port: int | None = None
        # SQLite has one write lock, which the listener's stores wait for: a processing batch
        # lets them in (PostgreSQL's writers do not wait for each other). The listener says it
        # is waiting through a lock file, so it may be in another process.
        self._stores = store_intent(engine_of(factory))
        self._should_yield = self._stores.waiting if self._stores is not None else None

    def mail_waiting(self) -> None:
        """Mail was queued: deliver it now (here, or in the delivery processes)."""
        self._mail.set()
        for group in self.children:
            if DELIVER in group.parts:
                group.wake()
        if self.mail_wake_fd is not None:
            wake_through(self.mail_wake_fd)

    def wake(self) -> None:
        """A message was stored: process it now (here, or in the processing child)."""
        self._work.set()
        for group in self.children:
            if PROCESS in group.parts:
                group.wake()

    def _woken(self) -> None:
        """A child's parent (or the processing child) says there is work for it."""
        self._work.set()
        self._mail.set()

    def stop(self) -> None:
        self._stopping.set()
        self._work.set()
        self._mail.set()

    async def _wait(self, event: asyncio.Event, timeout: float | None = None) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout=timeout or self.settings.poll_seconds)
        event.clear()

    async def _process_loop(self) -> None:
        while not self._stopping.is_set():
            # The batch takes every message stored before it begins: a wake-up that came
            # before now is answered by it, and left set would begin an empty transaction.
            self._work.clear()
            try:
                done = await asyncio.to_thread(
                    process_next, self.factory, self.settings, should_yield=self._should_yield
                )
            except Exception:
                log.exception("processing failed; retrying shortly")
                done = Processed(0, more_due=False)
            if done.taken:
                self.mail_waiting()
                await self._make_way()
            if not done.more_due:
                # Every due message was taken: the next is announced by a wake-up (or found
                # by the poll), so no empty transaction is begun on the chance of one.
                await self._wait(self._work)
                await self._gather()

    async def _gather(self) -> None:
        """Woken from idle: a moment for the messages that arrive together to share a batch."""
        gather = self.settings.processing_gather_seconds
        if gather > 0 and not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=gather)

    async def _make_way(self) -> None:
        """Let the listener's waiting stores take the write lock before the next batch does
        (SQLite's lock is not handed over in turn: a batch begun at once would win it again)."""
        if self._stores is None:
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + MAKE_WAY_SECONDS
        while self._stores.waiting() and loop.time() < deadline:
            await asyncio.sleep(0.001)

    async def _deliver_loop(self, batch: int) -> None:
        """One of the delivery workers: its own relay connection, its own claims."""
        relay = RelayConnection(self.settings) if self.settings.relay_host_port else None
        try:
            while not self._stopping.is_set():
                try:
                    count = await deliver_due(self.factory, self.settings, relay=relay, batch=batch)
                except Exception:
                    log.exception("delivery failed; retrying shortly")
                    count = 0
                    if relay is not None:
                        relay.drop()  # start afresh after whatever went wrong
                if count >= batch:
                    continue  # more may be due; a claim short of full took all that was
                await self._wait(self._mail, await self._rest_relay(relay))
        finally:
            if relay is not None:
                await relay.close()

    async def _robot_loop(self) -> None:
        """The robots' turns, a round whenever one may be due (every robot_poll_seconds)."""
        # The robots' search: loaded by the robots' process alone.
        from pbmserv.runtime.robot_runner import RobotRunner

        runner = RobotRunner(self.factory, self.settings)
        poll = self.settings.robot_poll_seconds
        while not self._stopping.is_set():
            try:
                # Starts what is due, fairly, and waits (up to poll) while robots think.
                done = await asyncio.to_thread(runner.step, poll)
                waited = runner.thinking()
            except Exception:
                log.exception("the robots' round failed; trying again shortly")
                done, waited = 0, False
            if done:
                self.mail_waiting()
            if done or waited:
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=poll)
        await asyncio.to_thread(runner.finish, ROBOT_FINISH_SECONDS)

    async def _rest_relay(self, relay: RelayConnection | None) -> float | None:
        """Close the relay connection once idle long enough; how long to wait for mail."""
        if relay is None or relay.session is None:
            return None
        idle = relay.idle_for()
        if idle >= RELAY_IDLE_SECONDS:
            await relay.close()
            return None
        return min(self.settings.poll_seconds, RELAY_IDLE_SECONDS - idle)

    async def _retention_loop(self) -> None:
        while self.settings.sent_retention_days > 0 and not self._stopping.is_set():
            try:
                await asyncio.to_thread(
                    purge_sent, self.factory, self.settings, stopping=self._stopping.is_set
                )
            except Exception:
                log.exception("purging sent mail failed; trying again next time")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=RETENTION_INTERVAL_SECONDS)

    async def _maintain_loop(self) -> None:
        interval = self.settings.maintenance_interval_seconds
        while interval > 0 and not self._stopping.is_set():
            try:
                report = await asyncio.to_thread(maintain, self.factory, self.settings)
            except Exception:
                log.exception("maintenance failed; trying again next time")
            else:
                if report.reminded or report.forfeited or report.digested:
                    self.mail_waiting()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=interval)

    async def _clock_loop(self) -> None:
        interval = self.settings.clock_sweep_seconds
        while interval > 0 and not self._stopping.is_set():
            try:
                report = await asyncio.to_thread(sweep, self.factory, self.settings)
            except Exception:
                log.exception("the clock sweep failed; trying again next time")
            else:
                if report.reminded or report.lost_on_time or report.vacations_begun:
                    self.mail_waiting()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=interval)

    async def _watch_parent(self) -> None:
        """A worker stops when its supervisor is gone (killed without passing SIGTERM on)."""
        while self.parent is not None and not self._stopping.is_set():
            if os.getppid() != self.parent:
                log.warning("the supervisor is gone; stopping")
                self.stop()
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=1.0)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        listener, mailbox = None, None
        if RECEIVE in self.parts:
            listener, mailbox = await self._start_receiving(loop)
        drawing = DELIVER in self.parts and self.settings.board_pictures
        if drawing and not letters_can_be_drawn():
            log.warning(
                "no font to draw board pictures' letters with: install one (Debian: "
                "fonts-dejavu-core), or set board_pictures = false to send text alone"
            )
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.stop)
        tasks = [asyncio.create_task(self._watch_parent())]
        if mailbox is not None:
            tasks.append(asyncio.create_task(read_mailbox(mailbox, self._stopping)))
        if PROCESS in self.parts:
            tasks += [
                asyncio.create_task(self._process_loop()),
                asyncio.create_task(self._maintain_loop()),
                asyncio.create_task(self._clock_loop()),
                asyncio.create_task(self._retention_loop()),
            ]
        if DELIVER in self.parts:
            tasks += self._delivery_tasks()
        if ROBOTS in self.parts:
            tasks.append(asyncio.create_task(self._robot_loop()))
        for group in self.children:
            group.start()
            tasks.append(asyncio.create_task(group.supervise(self._stopping)))
        if self.heartbeat:
            where = f"{self.settings.listen_host}:{self.port}" if listener else "imap"
            beats = Heartbeats(
                engine_of(self.factory), server_name(where), self.parts, self.children
            )
            tasks.append(asyncio.create_task(beats.run(self._stopping)))
        if self.wake_fd is not None:
            listen_for_wakes(self.wake_fd, loop, self._woken, self.stop)
            log.info("%s process (pid %s)", named(self.parts), os.getpid())
        database_wakes = self._database_wakes(loop)
        try:
            await self._stopping.wait()
        finally:
            if database_wakes is not None:
                await asyncio.to_thread(database_wakes.stop)
            if listener is not None:
                await listener.close()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.children:
                await asyncio.to_thread(stop_all, self.children)
            log.info("stopped")

    def _database_wakes(self, loop: asyncio.AbstractEventLoop) -> DatabaseWakes | None:
        """On PostgreSQL, other servers' stores and mail wake this one's processing and
        delivery at once (db.wakes); its own come through its pipes, quicker."""
        engine = engine_of(self.factory)
        if not is_postgres(engine):
            return None
        # A child's notices are its parent's: the pipes of that `serve` wake them all.
        set_origin(self.parent if self.wake_fd is not None and self.parent else os.getpid())
        channels: dict[str, Callable[[], object]] = {}
        if PROCESS in self.parts:
            channels[INBOX] = lambda: loop.call_soon_threadsafe(self._work.set)
        if DELIVER in self.parts:
            channels[OUTBOX] = lambda: loop.call_soon_threadsafe(self._mail.set)
        if not channels:
            return None
        wakes = DatabaseWakes(engine, channels)
        wakes.start()
        return wakes

    async def _start_receiving(
        self, loop: asyncio.AbstractEventLoop
    ) -> tuple[Listener | None, MailboxReader | None]:
        """The SMTP listener, or the hosted mailbox's reader (inbound/imap.py) instead."""
        if self.settings.imap:
            mailbox = MailboxReader(
                self.factory, self.settings, on_stored=lambda: loop.call_soon_threadsafe(self.wake)
            )
            return None, mailbox
        handler = InboxHandler(
            self.factory, self.settings, on_stored=lambda: loop.call_soon_threadsafe(self.wake)
        )
        listener = await start_listener(handler, self.settings, share_port=self.parent is not None)
        self.port = listener.port
        log.info("listening on %s:%s", self.settings.listen_host, self.port)
        return listener, None

    def _delivery_tasks(self) -> list[asyncio.Task[None]]:
        connections = self.settings.delivery_connections if self.settings.relay_host_port else 1
        # Small claims when several workers deliver, so that a burst is shared among them.
        batch = DELIVERY_BATCH if connections == 1 else max(5, DELIVERY_BATCH // connections)
        return [asyncio.create_task(self._deliver_loop(batch)) for _ in range(connections)]
