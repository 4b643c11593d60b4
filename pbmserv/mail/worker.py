"""`pbmserv serve`: the SMTP listener plus the processing and delivery workers, in one loop;
or, with ``delivery_processes``, the listener and processing here and delivery in child
processes (see mail.delivery_process), each a :class:`Server` in its own role."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal

from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.mail.delivery import BATCH as DELIVERY_BATCH
from pbmserv.mail.delivery import RelayConnection, deliver_due, purge_sent
from pbmserv.mail.delivery_process import DeliveryChildren, listen_for_wakes
from pbmserv.mail.imap import MailboxReader, read_mailbox
from pbmserv.mail.pictures import letters_can_be_drawn
from pbmserv.mail.processor import maintain, process_batch
from pbmserv.mail.smtp import InboxHandler, Listener, start_listener

log = logging.getLogger("pbmserv.serve")

# The relay connection outlives a batch while mail keeps coming; after this long without any
# it is closed (relays drop idle clients anyway, and an idle server holds nothing open).
RELAY_IDLE_SECONDS = 10.0
# How often `serve` deletes the sent mail older than sent_retention_days.
RETENTION_INTERVAL_SECONDS = 3600.0


#: What a server does: everything; the listener and processing (its delivery in children);
#: or delivery alone (a child).
ALL, FRONT, DELIVERY = "all", "front", "delivery"


class Server:
    """Runs until ``stop()``; every loop also polls, so several servers can share a database."""

    def __init__(
        self,
        factory: sessionmaker[Session],
        settings: Settings,
        parent: int | None = None,
        *,
        children: DeliveryChildren | None = None,
        wake_fd: int | None = None,
    ) -> None:
        self.factory = factory
        self.settings = settings
        #: The supervisor's pid when this server is one of `serve --workers N`; a delivery
        #: child's parent's.
        self.parent = parent
        #: This server's delivery processes (FRONT), if it has them.
        self.children = children
        #: A delivery child's end of its parent's wake-up pipe (DELIVERY).
        self.wake_fd = wake_fd
        self.role = FRONT if children else DELIVERY if wake_fd is not None else ALL
        self._work = asyncio.Event()
        self._mail = asyncio.Event()
        self._stopping = asyncio.Event()
        self.port: int | None = None
        self.handler: InboxHandler | None = None
        # SQLite has one write lock, which the listener's stores wait for: a processing batch
        # lets them in (PostgreSQL's writers do not wait for each other).
        sqlite = factory.kw["bind"].dialect.name == "sqlite"
        self._should_yield = self._stores_waiting if sqlite else None

    def wake(self) -> None:
        self._work.set()

    def _stores_waiting(self) -> bool:
        """Messages the listener is waiting to store (a batch then lets it in)."""
        return self.handler is not None and self.handler.store.waiting

    def mail_waiting(self) -> None:
        """Mail was queued: deliver it now (here, or in the delivery processes)."""
        self._mail.set()
        if self.children is not None:
            self.children.wake()

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
            try:
                count = await asyncio.to_thread(
                    process_batch, self.factory, self.settings, should_yield=self._should_yield
                )
            except Exception:
                log.exception("processing failed; retrying shortly")
                count = 0
            if count:
                self.mail_waiting()
                continue
            await self._wait(self._work)

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
                if count:
                    continue
                await self._wait(self._mail, await self._rest_relay(relay))
        finally:
            if relay is not None:
                await relay.close()

    async def _rest_relay(self, relay: RelayConnection | None) -> float | None:
        """Close the relay connection once idle long enough; how long to wait for mail."""
        if relay is None or relay.client is None:
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
        if self.role != DELIVERY:
            listener, mailbox = await self._start_receiving(loop)
        if self.role != FRONT and self.settings.board_pictures and not letters_can_be_drawn():
            log.warning(
                "no font to draw board pictures' letters with: install one (Debian: "
                "fonts-dejavu-core), or set board_pictures = false to send text alone"
            )
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.stop)
        tasks = [asyncio.create_task(self._watch_parent())]
        if self.role != DELIVERY:
            tasks += [
                asyncio.create_task(self._process_loop()),
                asyncio.create_task(self._maintain_loop()),
                asyncio.create_task(self._retention_loop()),
                *([asyncio.create_task(read_mailbox(mailbox, self._stopping))] if mailbox else []),
            ]
        if self.role != FRONT:
            tasks += self._delivery_tasks()
        if self.children is not None:
            self.children.start()
            tasks.append(asyncio.create_task(self.children.supervise(self._stopping)))
        if self.wake_fd is not None:
            listen_for_wakes(self.wake_fd, loop, self._mail.set, self.stop)
            log.info("delivering mail (pid %s)", os.getpid())
        try:
            await self._stopping.wait()
        finally:
            if listener is not None:
                await listener.close()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.children is not None:
                await asyncio.to_thread(self.children.stop)
            log.info("stopped")

    async def _start_receiving(
        self, loop: asyncio.AbstractEventLoop
    ) -> tuple[Listener | None, MailboxReader | None]:
        """The SMTP listener, or the hosted mailbox's reader (mail/imap.py) instead."""
        if self.settings.imap:
            mailbox = MailboxReader(
                self.factory, self.settings, on_stored=lambda: loop.call_soon_threadsafe(self.wake)
            )
            return None, mailbox
        handler = InboxHandler(
            self.factory, self.settings, on_stored=lambda: loop.call_soon_threadsafe(self.wake)
        )
        self.handler = handler
        listener = await start_listener(handler, self.settings, share_port=self.parent is not None)
        self.port = listener.port
        log.info("listening on %s:%s", self.settings.listen_host, self.port)
        return listener, None

    def _delivery_tasks(self) -> list[asyncio.Task[None]]:
        connections = self.settings.delivery_connections if self.settings.relay_host_port else 1
        # Small claims when several workers deliver, so that a burst is shared among them.
        batch = DELIVERY_BATCH if connections == 1 else max(5, DELIVERY_BATCH // connections)
        return [asyncio.create_task(self._deliver_loop(batch)) for _ in range(connections)]
