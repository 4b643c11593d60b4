"""The SMTP listener: it only stores messages (durably, before answering 250) and wakes the
processing worker. It never runs commands itself."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import re
import socket
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from email._header_value_parser import get_addr_spec, get_angle_addr
from email.errors import HeaderParseError

from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.play.board_mail import mask_tokens
from pbmserv.db.engine import engine_of, store_intent
from pbmserv.inbound.inbox import Envelope as StoredEnvelope
from pbmserv.inbound.inbox import Stored, StoreFailed, store_messages

log = logging.getLogger("pbmserv.smtp")


class _MaskReplyTokens(logging.Filter):
    """aiosmtpd logs every command line at INFO, RCPT TO and its reply address among them:
    the address's token is a secret, masked before any handler sees it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = mask_tokens(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True


logging.getLogger("mail.log").addFilter(_MaskReplyTokens())

TOO_MANY_CONNECTIONS = b"421 4.3.2 Too many connections, try again later\r\n"
# After a failed accept (out of descriptors, most likely) the listener pauses this long: the
# condition lasts until connections close, and retrying at once only spins.
ACCEPT_BACKOFF_SECONDS = 0.5
# A condition that may recur thousands of times a second is logged once per this interval.
WARNING_INTERVAL_SECONDS = 60.0
_OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE})


class GroupStore:
    """Stores the messages that arrive together in one transaction (a group commit): while
    one group is being written, the next gathers, so a burst costs a few commits rather than
    one a message, and no message waits for more than the write before its own."""

    MAX_GROUP = 100

    def __init__(self, factory: sessionmaker[Session], settings: Settings) -> None:
        self.factory = factory
        self.settings = settings
        self._waiting: list[tuple[StoredEnvelope, asyncio.Future[Stored | StoreFailed]]] = []
        self._writer: asyncio.Task[None] | None = None
        # On SQLite, said from the first message waiting to the last stored: a processing
        # batch holding the write lock then makes way (db.engine.StoreIntent).
        self._intent = store_intent(engine_of(factory))

    async def store(self, raw: bytes, mail_from: str, rcpt_tos: Sequence[str] = ()) -> Stored:
        """Store one message; raises if it could not be stored (the caller answers 451)."""
        future: asyncio.Future[Stored | StoreFailed] = asyncio.get_running_loop().create_future()
        self._waiting.append(((raw, mail_from, tuple(rcpt_tos)), future))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())
        outcome = await future
        if isinstance(outcome, StoreFailed):
            raise outcome.error
        return outcome

    async def _write(self) -> None:
        with self._intent.announced() if self._intent is not None else nullcontext():
            while self._waiting:
                await self._write_group()

    async def _write_group(self) -> None:
        group = self._waiting[: self.MAX_GROUP]
        del self._waiting[: self.MAX_GROUP]
        try:
            outcomes = await asyncio.to_thread(
                store_messages, self.factory, self.settings, [message for message, _ in group]
            )
        except Exception as error:  # the database itself: every sender tries again
            for _message, future in group:
                if not future.done():
                    future.set_exception(error)
            return
        for (_message, future), outcome in zip(group, outcomes, strict=True):
            if not future.done():  # a client gone meanwhile cancelled its wait
                future.set_result(outcome)


class InboxHandler:
    """aiosmtpd handler: DATA is committed to the inbox before the 250 reply."""

    def __init__(
        self,
        factory: sessionmaker[Session],
        settings: Settings,
        on_stored: Callable[[], object] | None = None,
    ) -> None:
        self.factory = factory
        self.settings = settings
        self.on_stored = on_stored
        self.store = GroupStore(factory, settings)

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        mail_from = envelope.mail_from if envelope.mail_from is not None else ""
        try:
            outcome = await self.store.store(raw, mail_from, envelope.rcpt_tos)
        except Exception:
            log.exception("could not store a message from %s", mail_from)
            # A temporary failure: the sending server keeps the message and tries again.
            return "451 4.3.0 Temporary failure storing the message; try again later"
        if outcome is Stored.RATE_LIMITED:
            return "451 4.7.1 Too many messages from this sender; try again later"
        if self.on_stored is not None:
            self.on_stored()
        if outcome is Stored.DUPLICATE:
            return "250 2.0.0 Message already received"
        return "250 2.0.0 Message accepted"


class SessionSlots:
    """The SMTP sessions in progress, against a limit (0: none)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0

    @property
    def full(self) -> bool:
        return 0 < self.limit <= self.active


class MalformedAddress(ValueError):
    """An envelope address (MAIL FROM, RCPT TO, VRFY) the address parser cannot read."""


# RFC 5321 501: a syntax error in the command's arguments (RFC 3463 5.5.4: invalid arguments).
MALFORMED_ADDRESS_REPLY = "501 5.5.4 Syntax error in the address"
# Of an address quoted in the log, at most this much.
LOGGED_ADDRESS_CHARS = 200


_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
#: ``<local@domain>`` in plain dot-atoms: what nearly every client sends.
_PLAIN_ANGLE_ADDRESS = re.compile(rf"<({_ATEXT}(?:\.{_ATEXT})*@{_ATEXT}(?:\.{_ATEXT})*)>")


def read_address(arg: str, local_part_limit: int = 0) -> tuple[str | None, str | None]:
    """The address of a MAIL or RCPT argument and the text after it, as aiosmtpd reads it
    (its ``_getaddr``: the stdlib's RFC 5322 parser), but without the class aiosmtpd builds on
    every call, and with a plain ``<local@domain>`` read by one pattern (the same answer: see
    the test). (None, None) for an address that cannot be read."""
    if not arg:
        return "", ""
    # (An encoded-word "=?" is the stdlib parser's to judge: it raises on some.)
    plain = _PLAIN_ANGLE_ADDRESS.match(arg) if "=?" not in arg else None
    # The parser also takes the spaces after the address (and comments, left to it).
    rest = arg[plain.end() :].lstrip(" \t") if plain is not None else ""
    if plain is not None and not rest.startswith("("):
        address = plain.group(1)
    else:
        try:
            token, rest = (get_angle_addr if arg.lstrip().startswith("<") else get_addr_spec)(arg)
        except HeaderParseError:
            return None, None
        address = token.addr_spec
    if local_part_limit and len(address.rpartition("@")[0]) > local_part_limit:
        return None, None
    return address, rest


class _CountedSMTP(SMTP):
    """An aiosmtpd session that holds a slot from its connection to its disconnection, and
    answers an address it cannot read with 501 and one log line."""

    def __init__(self, handler: InboxHandler, slots: SessionSlots, **options: object) -> None:
        super().__init__(handler, **options)  # type: ignore[arg-type]
        self._slots = slots
        self._holds_slot = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if not self._holds_slot:
            self._slots.active += 1
            self._holds_slot = True
        super().connection_made(transport)

    def connection_lost(self, error: Exception | None) -> None:
        try:
            super().connection_lost(error)
        finally:
            if self._holds_slot:
                self._slots.active -= 1
                self._holds_slot = False

    def _getaddr(self, arg: str) -> tuple[str | None, str | None]:
        # The stdlib's address parser, which aiosmtpd uses, raises on some malformed addresses
        # (IndexError on "<=?utf-8?q??=@x.test>", AttributeError on "<a@[>"): aiosmtpd would
        # log a traceback and answer 500. Those, and the addresses it finds unreadable itself
        # ("<a@>", answered 553), become MalformedAddress, answered in handle_exception.
        try:
            address, rest = read_address(arg, self.local_part_limit)
        except Exception as error:
            raise MalformedAddress(arg) from error
        if address is None:
            raise MalformedAddress(arg)
        return address, rest

    async def handle_exception(self, error: Exception) -> str:
        """The reply to a command that raised; the session goes on after it."""
        if not isinstance(error, MalformedAddress):
            return await super().handle_exception(error)  # a bug: logged with its traceback
        peer = self.session.peer if self.session is not None else None
        address = mask_tokens(str(error))[:LOGGED_ADDRESS_CHARS]
        cause = type(error.__cause__).__name__ if error.__cause__ is not None else "unreadable"
        log.warning("%r sent a malformed address %r (%s); answered 501", peer, address, cause)
        return MALFORMED_ADDRESS_REPLY


def make_smtp(handler: InboxHandler, settings: Settings, slots: SessionSlots) -> SMTP:
    """One SMTP protocol instance (aiosmtpd answers 552 above the size limit)."""
    return _CountedSMTP(
        handler,
        slots,
        data_size_limit=settings.max_message_bytes,
        hostname=settings.address.rpartition("@")[2] or "localhost",
        ident="pbmserv",
    )


class OccasionalWarning:
    """A warning about a condition that can recur thousands of times a second: logged the
    first time, then at most once per interval, with how often it happened meanwhile."""

    def __init__(self, interval: float = WARNING_INTERVAL_SECONDS) -> None:
        self.interval = interval
        self._logged_at: float | None = None
        self._unlogged = 0

    def warn(self, message: str) -> None:
        self._unlogged += 1
        now = time.monotonic()
        if self._logged_at is not None and now - self._logged_at < self.interval:
            return
        repeats = f" ({self._unlogged} times since the last report)" if self._unlogged > 1 else ""
        log.warning("%s%s", message, repeats)
        self._logged_at, self._unlogged = now, 0


class Listener:
    """Accepts SMTP connections and hands them to aiosmtpd, at most ``max_connections``.

    It runs its own accept loop rather than ``loop.create_server``: asyncio, out of file
    descriptors, logs a traceback for every accept it retries (a hundred per wake-up, and the
    retries pile up: 170,000 tracebacks in 40 s were seen). Here a failed accept is logged once
    per interval and the loop pauses briefly. A connection above the limit is answered 421
    and closed at once, without an SMTP session.
    """

    def __init__(
        self, sockets: list[socket.socket], protocol: Callable[[], SMTP], slots: SessionSlots
    ) -> None:
        self._sockets = sockets
        self._protocol = protocol
        self._slots = slots
        self._tasks: list[asyncio.Task[None]] = []
        self._accept_failures = OccasionalWarning()
        self._refusals = OccasionalWarning()

    @property
    def port(self) -> int:
        return int(self._sockets[0].getsockname()[1])

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._accept_loop(sock)) for sock in self._sockets]

    async def close(self) -> None:
        """Stop accepting; the sessions in progress go on until the loop ends."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for sock in self._sockets:
            sock.close()

    async def _accept_loop(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                conn, _peer = await loop.sock_accept(sock)
            except ConnectionAbortedError:  # the client gave up while waiting: nothing to do
                continue
            except OSError as error:
                self._accept_failures.warn(_accept_trouble(error))
                await asyncio.sleep(ACCEPT_BACKOFF_SECONDS)
                continue
            if self._slots.full:
                self._refuse(conn)
                continue
            try:
                await loop.connect_accepted_socket(self._protocol, conn)
            except Exception:  # one connection's trouble must not stop the listener
                conn.close()
                log.exception("could not start an SMTP session")

    def _refuse(self, conn: socket.socket) -> None:
        self._refusals.warn(
            f"{self._slots.active} SMTP sessions in progress (max_connections): "
            "a new connection was refused with 421"
        )
        with contextlib.suppress(OSError):  # a client already gone needs no answer
            conn.send(TOO_MANY_CONNECTIONS)
        conn.close()


def _accept_trouble(error: OSError) -> str:
    if error.errno in _OUT_OF_DESCRIPTORS:
        return (
            f"out of file descriptors accepting SMTP connections ({error.strerror}); pausing "
            "new connections: raise LimitNOFILE or lower max_connections"
        )
    return f"accepting an SMTP connection failed ({error}); retrying"


async def start_listener(
    handler: InboxHandler, settings: Settings, share_port: bool = False
) -> Listener:
    """Listen on ``settings.listen`` and serve SMTP sessions with ``handler``; with
    ``share_port``, other processes (the workers of `serve --workers`) listen there too."""
    slots = SessionSlots(settings.max_connections)
    sockets = await _listening_sockets(settings.listen_host, settings.listen_port, share_port)
    listener = Listener(sockets, lambda: make_smtp(handler, settings, slots), slots)
    listener.start()
    return listener


async def _listening_sockets(host: str, port: int, share_port: bool) -> list[socket.socket]:
    """One listening socket per address of ``host``, as ``loop.create_server`` makes them."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _name, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if share_port:  # the kernel spreads connections among the workers
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if family == socket.AF_INET6:  # each family its own socket, as asyncio does
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(100)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets
