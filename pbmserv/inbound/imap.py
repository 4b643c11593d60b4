"""A hosted mailbox read by IMAP instead of an SMTP listener (``serve`` with ``imap`` set).

Many operators have no MTA, only a mailbox at a provider. The reader logs in, waits with IDLE
(or polls every ``imap_poll_seconds`` where the server has none), and hands each message to the
same inbox the listener fills. A message is committed to the inbox *before* it leaves the
folder (moved into ``pbmserv-done``); a message fetched again after a disconnect is stored
already and only moved (remembered by UIDVALIDITY and UID, and, across restarts, by the
inbox's own Message-ID dedupe). Connection trouble of any kind is one log line and a reconnect
after a pause that doubles up to a minute: the server never stops for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from imapclient import IMAPClient, SocketTimeout
from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import ConfigError, Settings
from pbmserv.inbound.inbox import Stored, store_message, store_too_large
from pbmserv.inbound.reading.rawheaders import scan_headers

log = logging.getLogger("pbmserv.imap")
# imapclient says "Connection closed" at each reconnection, a second line for one failure.
logging.getLogger("imapclient").setLevel(logging.WARNING)

# RFC 2177: a server may drop a client idle for 30 minutes, so IDLE is re-issued well before;
# five minutes also keeps NAT mappings alive (some expire idle connections after 350 s), and
# each renewal is followed by a look at the folder, whatever IDLE may have missed.
IDLE_RENEW_SECONDS = 5 * 60.0
# How often the IDLE wait looks up to see whether the server is stopping.
IDLE_CHECK_SECONDS = 1.0
# Pauses between reconnections: the first, then doubled after each failure, up to the last.
BACKOFF_FIRST_SECONDS = 1.0
BACKOFF_MAX_SECONDS = 60.0
# A message over the sender's hourly limit stays in the folder; it is tried again after this,
# and one that could not be stored (the database down, or the message's own trouble) after that.
RATE_LIMITED_RETRY_SECONDS = 300.0
STORE_RETRY_SECONDS = 30.0
# Messages taken in one pass at most (a backlog's UIDs in one command would be too long).
PASS_LIMIT = 200
# Where processed messages go (created if missing, under the personal namespace's prefix).
DONE_FOLDER = "pbmserv-done"
#: The most of a too-large message's header read, to answer it (the header limits' order).
MAX_HEADER_BYTES = 65_536
# Seconds to connect, and to wait for any answer (IDLE excepted) before the connection is dead.
TIMEOUT = SocketTimeout(connect=30.0, read=120.0)
# How long a stopping server waits for the reader's thread to finish its message.
STOP_WAIT_SECONDS = 10.0


@dataclass(frozen=True)
class MailboxURL:
    """``imaps://USER@HOST[:PORT]/FOLDER``: where the mailbox is and whom to log in as."""

    tls: bool  # imaps: TLS from the first byte; imap: STARTTLS when the server offers it
    user: str
    host: str
    port: int
    folder: str
    auth: str = ""  # "" (LOGIN with imap_password) or "XOAUTH2" (imap_password is the token)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'imaps' if self.tls else 'imap'}://{self.user}@{host}:{self.port}/{self.folder}"


def parse_imap_url(url: str) -> MailboxURL:
    """Read the ``imap`` setting; ConfigError names what is wrong with it.

    The user may contain ``@`` (``me@example.org@imap.example.org``): the host follows the
    last one. Any part may be percent-encoded. ``;AUTH=XOAUTH2`` after the user (RFC 5092)
    logs in with a token. A password in the URL is refused: it belongs in imap_password,
    which ``config show`` masks and the logs never show.
    """
    scheme, sep, rest = url.strip().partition("://")
    if not sep or scheme.lower() not in ("imap", "imaps"):
        raise ConfigError(f"imap must look like imaps://USER@HOST/FOLDER, not {url!r}")
    netloc, _, path = rest.partition("/")
    userinfo, at, hostport = netloc.rpartition("@")
    if not at or not userinfo:
        raise ConfigError(f"imap: name the user to log in as (imaps://USER@HOST/...): {url!r}")
    if ":" in userinfo:
        raise ConfigError("imap: put the password in imap_password, not in the URL")
    user, _, auth = userinfo.partition(";")
    mechanism = auth.partition("=")[2].upper() if auth.upper().startswith("AUTH=") else auth
    if mechanism not in ("", "*", "PLAIN", "LOGIN", "XOAUTH2"):
        raise ConfigError(f"imap: unknown ;AUTH= mechanism {auth!r} (use XOAUTH2 or none)")
    try:
        parts = urlsplit(f"//{unquote(hostport)}")
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ConfigError(f"imap: {hostport!r} is not HOST or HOST:PORT") from None
    if not host:
        raise ConfigError("imap: the URL names no host")
    tls = scheme.lower() == "imaps"
    return MailboxURL(
        tls=tls,
        user=unquote(user),
        host=host,
        port=port or (993 if tls else 143),
        folder=unquote(path).strip("/") or "INBOX",
        auth="XOAUTH2" if mechanism == "XOAUTH2" else "",
    )


def envelope_sender(raw: bytes) -> str | None:
    """The envelope sender the provider wrote into the topmost Return-Path (``""`` for the
    null path of a bounce, which is never answered); None when there is none."""
    values = scan_headers(raw, ("return-path",)).values.get("return-path")
    if not values:
        return None
    return "".join(values[0].decode("utf-8", "replace").split()).strip("<>")


class MailboxReader:
    """Reads one folder until ``stop()``; ``run`` blocks, so it gets a thread of its own."""

    def __init__(
        self,
        factory: sessionmaker[Session],
        settings: Settings,
        on_stored: Callable[[], object] = lambda: None,
    ) -> None:
        if not settings.imap:
            raise ConfigError("imap: no mailbox URL is set")
        if not settings.imap_password:
            raise ConfigError("imap_password (PBMSERV_IMAP_PASSWORD) is not set")
        self.url = parse_imap_url(settings.imap)
        self.factory = factory
        self.settings = settings
        self.on_stored = on_stored
        self._stopping = threading.Event()
        self._delay = BACKOFF_FIRST_SECONDS
        self._validity: int | None = None
        # UIDs stored in the inbox but not yet moved out (a disconnect came between).
        self._stored: set[int] = set()
        # Rate-limited UIDs, with the monotonic time before which they are left alone.
        self._deferred: dict[int, float] = {}

    def stop(self) -> None:
        self._stopping.set()

    def run(self) -> None:
        """Connect, read, and reconnect after any failure, until stopped."""
        while not self._stopping.is_set():
            client = None
            try:
                client = self._connect()
                self._read(client)
            except Exception as error:
                if self._stopping.is_set():
                    break
                why = f"{type(error).__name__}: {error}"
                log.warning("mailbox %s: %s; reconnecting in %.3g s", self.url, why, self._delay)
                self._stopping.wait(self._delay)
                self._delay = min(self._delay * 2, BACKOFF_MAX_SECONDS)
            finally:
                _close(client, polite=self._stopping.is_set())

    def _connect(self) -> Any:
        url = self.url
        context = ssl.create_default_context()  # checks the certificate (SSL_CERT_FILE too)
        client = IMAPClient(url.host, url.port, ssl=url.tls, ssl_context=context, timeout=TIMEOUT)
        try:
            if not url.tls and client.has_capability("STARTTLS"):
                # imap:// takes plain text, so TLS here is opportunistic, as relay_tls = may.
                context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
                client.starttls(context)
            assert self.settings.imap_password is not None
            if url.auth == "XOAUTH2":
                client.oauth2_login(url.user, self.settings.imap_password)
            else:
                client.login(url.user, self.settings.imap_password)
        except BaseException:
            _close(client, polite=False)
            raise
        return client

    def _read(self, client: Any) -> None:
        """Select the folder, then alternate passes over it and waits for news."""
        validity = client.select_folder(self.url.folder)[b"UIDVALIDITY"]
        if validity != self._validity:  # UIDs of another folder generation mean nothing
            self._validity, self._stored, self._deferred = validity, set(), {}
        done = _done_folder(client)
        idle = client.has_capability("IDLE")
        log.info("reading the mailbox %s (%s)", self.url, "IDLE" if idle else "polling")
        while not self._stopping.is_set():
            while self._pass(client, done):
                pass  # more may have come while this pass worked
            self._delay = BACKOFF_FIRST_SECONDS  # a whole pass went through: healthy
            wait = self._pause(IDLE_RENEW_SECONDS if idle else self.settings.imap_poll_seconds)
            if idle:
                _wait_in_idle(client, wait, self._stopping)
            else:
                self._stopping.wait(wait)

    def _pause(self, longest: float) -> float:
        """Wait no longer than until the first rate-limited message is due again."""
        now = time.monotonic()
        return min([longest, *(due - now for due in self._deferred.values())])

    def _pass(self, client: Any, done: str) -> int:
        """Store and move every message now in the folder; how many went."""
        client.noop()  # a UID SEARCH alone does not see messages not yet announced
        now = time.monotonic()
        found = set(client.search("UNDELETED"))
        self._deferred = {u: due for u, due in self._deferred.items() if u in found}
        uids = sorted(u for u in found if self._deferred.get(u, 0.0) <= now)[:PASS_LIMIT]
        sizes = client.fetch(uids, ["RFC822.SIZE"]) if uids else {}
        moved = 0
        for uid in uids:
            if self._stopping.is_set():
                break
            size = sizes.get(uid, {}).get(b"RFC822.SIZE", 0)
            if uid in self._stored or self._take(client, uid, size):
                _move(client, uid, done)
                self._stored.discard(uid)
                self._delay = BACKOFF_FIRST_SECONDS  # a message went through: healthy
                moved += 1
        return moved

    def _take(self, client: Any, uid: int, size: int) -> bool:
        """Store message ``uid`` in the inbox; whether it may leave the folder."""
        too_large = size > self.settings.max_message_bytes
        if too_large:
            # Its header alone, to answer it once (SMTP would have refused it: its sender's
            # MTA would have said so). A header past the limit of one is cut at a line.
            part = f"BODY.PEEK[HEADER]<0.{MAX_HEADER_BYTES}>"
            fetched = client.fetch([uid], [part]).get(uid, {})
            raw = next((v for k, v in fetched.items() if k.startswith(b"BODY[HEADER]")), None)
            if raw is not None and len(raw) >= MAX_HEADER_BYTES:
                raw = raw[: raw.rfind(b"\n") + 1]
            log.warning("message %s of %s bytes is too large: moved aside, answered", uid, size)
        else:
            raw = client.fetch([uid], ["BODY.PEEK[]"]).get(uid, {}).get(b"BODY[]")
        if raw is None:  # gone meanwhile (another reader took it)
            return False
        try:
            store = store_too_large if too_large else store_message
            outcome = store(self.factory, self.settings, raw, envelope_sender(raw))
        except Exception as error:  # this message's trouble (or the database's): others go on
            log.warning("message %s not stored: %s: %s", uid, type(error).__name__, error)
            self._deferred[uid] = time.monotonic() + STORE_RETRY_SECONDS
            return False
        if outcome is Stored.RATE_LIMITED:
            log.info("message %s: sender over the hourly limit; left for later", uid)
            self._deferred[uid] = time.monotonic() + RATE_LIMITED_RETRY_SECONDS
            return False
        self._deferred.pop(uid, None)
        self._stored.add(uid)
        self.on_stored()
        return True


def _done_folder(client: Any) -> str:
    """The folder processed mail goes to, created if missing."""
    name = DONE_FOLDER
    if client.has_capability("NAMESPACE"):
        personal = client.namespace().personal
        if personal and personal[0][0]:  # e.g. "INBOX." on Courier-style servers
            name = personal[0][0] + name
    if not client.folder_exists(name):
        client.create_folder(name)
    return name


def _move(client: Any, uid: int, folder: str) -> None:
    """Move one stored message out of the folder: MOVE, or COPY and delete where none."""
    if client.has_capability("MOVE"):
        client.move([uid], folder)
        return
    client.copy([uid], folder)
    client.delete_messages([uid])
    if client.has_capability("UIDPLUS"):
        client.uid_expunge([uid])
    else:
        client.expunge()


def _wait_in_idle(client: Any, seconds: float, stopping: threading.Event) -> None:
    """IDLE until the server reports a change, ``seconds`` pass, or the reader stops.

    imaplib reads ahead: news the server sent together with IDLE's ``+`` line waits in its
    buffer where ``idle_check`` (which watches the socket) does not look, hence the peek. A
    closed connection makes ``idle_check`` return nothing at once: that is raised.
    """
    if seconds <= 0:
        return
    client.idle()
    deadline = time.monotonic() + seconds
    news = _read_ahead(client)
    while not news and not stopping.is_set() and (left := deadline - time.monotonic()) > 0:
        timeout = min(IDLE_CHECK_SECONDS, left)
        started = time.monotonic()
        responses = client.idle_check(timeout=timeout)
        if any(r[0] == b"BYE" for r in responses):
            raise ConnectionError("the server said BYE")
        if not responses and time.monotonic() - started < timeout / 2:
            raise ConnectionError("the server closed the connection")
        news = any(r[0] != b"OK" for r in responses)  # "* OK Still here" is no news
    client.idle_done()


def _read_ahead(client: Any) -> bool:
    """Whether imaplib holds unread bytes from the server (CPython's buffered socket file);
    False wherever that cannot be told: the renewal of IDLE bounds the delay then."""
    reader = getattr(getattr(client, "_imap", None), "file", None)
    peek = getattr(reader, "peek", None)
    if peek is None:
        return False
    sock = client.socket()
    timeout = sock.gettimeout()
    sock.setblocking(False)
    try:
        return bool(peek(1))
    except (OSError, ValueError):  # nothing there (BlockingIOError, SSLWantReadError)
        return False
    finally:
        sock.settimeout(timeout)


def _close(client: Any, polite: bool) -> None:
    """Log out when stopping; otherwise just drop the connection (it may be dead)."""
    if client is None:
        return
    with contextlib.suppress(Exception):
        if polite:
            client.logout()
        else:
            client.shutdown()


async def read_mailbox(reader: MailboxReader, stopping: asyncio.Event) -> None:
    """Run ``reader`` in a daemon thread until ``stopping`` is set (a daemon: a connection
    hung in a system call must not keep the process alive after the server stopped)."""
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[None] = loop.create_future()

    def run() -> None:
        try:
            reader.run()
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is closed already
                loop.call_soon_threadsafe(finished.set_result, None)

    threading.Thread(target=run, name="pbmserv-imap", daemon=True).start()
    await stopping.wait()
    reader.stop()
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(finished), STOP_WAIT_SECONDS)
