"""Shared parts of the mail benches: a recording relay, a scratch database, a `pbmserv serve`
subprocess, an SMTP client that reports status codes, and database counts.

Everything talks to 127.0.0.1 only. Every wait here is bounded in time.
"""

from __future__ import annotations

import contextlib
import email.policy
import os
import re
import signal
import smtplib
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import getaddresses
from pathlib import Path
from urllib.parse import quote

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession
from sqlalchemy import Engine, create_engine, text

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SERVER_ADDRESS = "pbmserv@test.example"
PBMSERV = [sys.executable, "-m", "pbmserv"]
# Settings for a bench server: no idle-board maintenance; a refused delivery is retried within
# seconds, not half a minute, so that "wait until everything is delivered" stays short.
BENCH_ENV = {
    "PBMSERV_MAINTENANCE_INTERVAL_SECONDS": "0",
    "PBMSERV_RETRY_BASE_SECONDS": "1",
    "PBMSERV_RETRY_MAX_SECONDS": "5",
    "PBMSERV_LOG_FORMAT": "text",
    # A private server: the benches' players are strangers (the abuse phase turns it on).
    "PBMSERV_CONFIRM_ADDRESSES": "false",
}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def parse_host_port(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if host not in ("127.0.0.1", "localhost", "") or not port.isdigit():
        raise ValueError(f"{text!r}: give 127.0.0.1:PORT (the benches only talk to 127.0.0.1)")
    return "127.0.0.1", int(port)


# --- the relay sink ---------------------------------------------------------------------


@dataclass(frozen=True)
class Relayed:
    """One message the server handed to the relay, byte for byte."""

    mail_from: str
    rcpt_tos: tuple[str, ...]
    raw: bytes
    at: float


class _RecordingHandler:
    def __init__(self) -> None:
        self.messages: list[Relayed] = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        item = Relayed(
            str(envelope.mail_from), tuple(envelope.rcpt_tos), bytes(raw), time.monotonic()
        )
        with self.lock:
            self.messages.append(item)
        return "250 OK"


class RecordingRelay:
    """An SMTP relay on 127.0.0.1 that accepts everything and keeps each message's raw bytes.

    It speaks SMTPUTF8, as a modern relay such as Postfix does.
    """

    def __init__(self, port: int = 0) -> None:
        self.handler = _RecordingHandler()
        self.controller = Controller(
            self.handler,
            hostname="127.0.0.1",
            port=port or free_port(),
            enable_SMTPUTF8=True,
            data_size_limit=64 * 1024 * 1024,
        )

    def start(self) -> RecordingRelay:
        self.controller.start()
        return self

    def stop(self) -> None:
        self.controller.stop()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.controller.port}"

    def messages(self) -> list[Relayed]:
        with self.handler.lock:
            return list(self.handler.messages)

    def count(self) -> int:
        with self.handler.lock:
            return len(self.handler.messages)


# --- the database -----------------------------------------------------------------------


@dataclass
class ScratchDatabase:
    """A fresh database for one bench run.

    SQLite: a file in the work folder (or the file of a given ``sqlite:`` URL). PostgreSQL: a
    private schema created in the given database and dropped afterwards, so that the tables of
    that database are never touched.
    """

    url: str
    schema: str | None = None
    admin_url: str | None = None
    _engine: Engine | None = field(default=None, repr=False)

    @classmethod
    def create(cls, given: str | None, workdir: Path) -> ScratchDatabase:
        if not given:
            return cls(url=f"sqlite:///{workdir / 'bench.db'}")
        if given.startswith("sqlite"):
            return cls(url=given)
        schema = f"pbmbench_{os.getpid()}_{uuid.uuid4().hex[:8]}"
        admin = create_engine(given)
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        admin.dispose()
        joiner = "&" if "?" in given else "?"
        url = f"{given}{joiner}options={quote(f'-csearch_path={schema}')}"
        return cls(url=url, schema=schema, admin_url=given)

    @property
    def kind(self) -> str:
        return "SQLite" if self.url.startswith("sqlite") else "PostgreSQL"

    def upgrade(self) -> None:
        """Run `pbmserv db upgrade`, as an operator would."""
        result = subprocess.run(
            [*PBMSERV, "db", "upgrade", "--db", self.url],
            capture_output=True,
            timeout=120,
            cwd=ROOT,
        )
        if result.returncode != 0:
            raise RuntimeError(f"pbmserv db upgrade failed: {result.stderr.decode()[-2000:]}")

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            args = {"connect_args": {"timeout": 30}} if self.url.startswith("sqlite") else {}
            self._engine = create_engine(self.url, **args)
        return self._engine

    def scalar(self, sql: str, **params: object) -> object:
        with self.engine.connect() as conn:
            return conn.execute(text(sql), params).scalar()

    def rows(self, sql: str, **params: object) -> list[tuple]:
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(text(sql), params)]

    def status_counts(self, table: str) -> dict[str, int]:
        """``{status: count}`` of the inbox or the outbox."""
        assert table in ("inbox", "outbox")
        return {
            str(status): int(count)
            for status, count in self.rows(f"SELECT status, count(*) FROM {table} GROUP BY status")
        }

    def drop(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
        if self.schema and self.admin_url:
            admin = create_engine(self.admin_url)
            with admin.begin() as conn:
                conn.execute(text(f'DROP SCHEMA "{self.schema}" CASCADE'))
            admin.dispose()


@dataclass(frozen=True)
class Settled:
    """How waiting for the server to finish its work ended."""

    settled: bool
    inbox_pending: int
    outbox_pending: int
    waited: float
    reason: str


def wait_settled(
    db: ScratchDatabase,
    timeout: float,
    stall: float,
    extra_done: Callable[[], bool] = lambda: True,
    on_tick: Callable[[], None] = lambda: None,
) -> Settled:
    """Wait until no inbox row and no outbox row is pending (and ``extra_done()``).

    Gives up after ``timeout`` seconds, or after ``stall`` seconds in which the pending counts
    did not change: a server that stopped processing is reported, not waited for.
    """
    start = last_change = time.monotonic()
    last: tuple[int, int] | None = None
    while True:
        on_tick()
        inbox = db.status_counts("inbox").get("pending", 0)
        outbox = db.status_counts("outbox").get("pending", 0)
        now = time.monotonic()
        if inbox == 0 and outbox == 0 and extra_done():
            return Settled(True, 0, 0, now - start, "settled")
        if (inbox, outbox) != last:
            last, last_change = (inbox, outbox), now
        if now - start > timeout:
            return Settled(False, inbox, outbox, now - start, f"timeout after {timeout:.0f} s")
        if now - last_change > stall:
            return Settled(False, inbox, outbox, now - start, f"no progress for {stall:.0f} s")
        time.sleep(0.25)


# --- the server process -----------------------------------------------------------------


class ServerProcess:
    """`pbmserv serve` as a real subprocess on 127.0.0.1:``port``, logging to a file."""

    def __init__(
        self,
        db_url: str,
        port: int,
        relay: str,
        workdir: Path,
        extra_env: dict[str, str] | None = None,
        poll_seconds: float = 0.5,
        rate_limit: int = 0,
    ) -> None:
        self.port = port
        self.log_path = workdir / "server.log"
        self.args = [
            *PBMSERV,
            "serve",
            "--db",
            db_url,
            "--listen",
            f"127.0.0.1:{port}",
            "--relay",
            relay,
            "--address",
            SERVER_ADDRESS,
            "--spool",
            str(workdir / "spool"),
            "--poll",
            str(poll_seconds),
            "--rate-limit",
            str(rate_limit),
        ]
        self.env = {**os.environ, **BENCH_ENV, **(extra_env or {})}
        self.env.pop("PBMSERV_CONFIG", None)
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.peak_kb = 0  # the largest VmHWM seen over all the processes started

    def start(self, timeout: float = 60.0) -> None:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.args, env=self.env, stdout=log, stderr=log, cwd=ROOT, start_new_session=True
            )
        self.starts += 1
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"pbmserv serve exited at start; see {self.log_path}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=1),
            ):
                return
            time.sleep(0.05)
        self.kill()
        raise RuntimeError(f"pbmserv serve did not listen within {timeout} s; see {self.log_path}")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def sample_memory(self) -> int:
        """Read VmHWM (peak resident memory, kB) of the running process; keep the largest."""
        if self.alive():
            self.peak_kb = max(self.peak_kb, vm_hwm_kb(self.proc.pid))  # type: ignore[union-attr]
        return self.peak_kb

    def kill(self) -> None:
        """SIGKILL: no clean-up at all, as in a power cut."""
        if self.alive():
            self.sample_memory()
            os.kill(self.proc.pid, signal.SIGKILL)  # type: ignore[union-attr]
        if self.proc is not None:
            self.proc.wait(30)

    def stop(self) -> None:
        """SIGTERM and wait (bounded); SIGKILL if it does not stop."""
        if not self.alive():
            return
        self.sample_memory()
        self.proc.send_signal(signal.SIGTERM)  # type: ignore[union-attr]
        try:
            self.proc.wait(20)  # type: ignore[union-attr]
        except subprocess.TimeoutExpired:
            self.kill()

    def tracebacks(self) -> int:
        return count_tracebacks(self.log_path)


def vm_hwm_kb(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def count_tracebacks(log_path: Path | None) -> int:
    if log_path is None or not log_path.exists():
        return 0
    return log_path.read_bytes().count(b"Traceback (most recent call last)")


# --- the SMTP client --------------------------------------------------------------------


@dataclass(frozen=True)
class Outgoing:
    """One message to send: its envelope and its exact bytes."""

    envelope_from: str
    raw: bytes
    rcpt: str = SERVER_ADDRESS


class SmtpClient:
    """One SMTP connection to the server, reopened when it breaks; reports a code per message.

    The code is the server's reply to DATA (or to MAIL/RCPT when those were refused), or a
    negative number when the connection failed: -1 refused or reset, -2 timed out.
    """

    def __init__(self, port: int, timeout: float = 60.0) -> None:
        self.port = port
        self.timeout = timeout
        self.client: smtplib.SMTP | None = None

    def _connect(self) -> smtplib.SMTP:
        if self.client is None:
            client = smtplib.SMTP(timeout=self.timeout)
            client.connect("127.0.0.1", self.port)
            client.ehlo("bench.test")
            self.client = client
        return self.client

    def close(self) -> None:
        if self.client is not None:
            with contextlib.suppress(Exception):
                self.client.quit()
            with contextlib.suppress(Exception):
                self.client.close()
            self.client = None

    def send(self, message: Outgoing) -> tuple[int, str]:
        try:
            client = self._connect()
            code, reply = client.mail(message.envelope_from)
            if code != 250:
                client.rset()
                return code, reply.decode("utf-8", "replace")
            code, reply = client.rcpt(message.rcpt)
            if code not in (250, 251):
                client.rset()
                return code, reply.decode("utf-8", "replace")
            code, reply = client.data(message.raw)
            return code, reply.decode("utf-8", "replace")
        except smtplib.SMTPDataError as error:
            return error.smtp_code, str(error.smtp_error)
        except smtplib.SMTPResponseException as error:
            self.close()
            return error.smtp_code, str(error.smtp_error)
        except TimeoutError:
            self.close()
            return -2, "timed out"
        except (OSError, smtplib.SMTPException) as error:
            self.close()
            return -1, f"{type(error).__name__}: {error}"


# --- reading relayed mail ---------------------------------------------------------------


def parse_relayed(raw: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def header_text(message: email.message.Message, name: str) -> str:
    """A header's decoded value, or "" (a header the library cannot read gives its raw text)."""
    try:
        value = message.get(name)
    except Exception:
        value = None
        for key, raw in message.raw_items():
            if key.lower() == name.lower():
                value = raw
                break
    return "" if value is None else str(value)


_MSGID = re.compile(r"<[^<>\s]*>")


def message_ids(value: str) -> list[str]:
    return _MSGID.findall(value)


def recipients(message: email.message.Message) -> list[str]:
    return [address for _name, address in getaddresses([header_text(message, "To")])]


def now_utc() -> datetime:
    return datetime.now(UTC)


@contextlib.contextmanager
def workdir_for(prefix: str, keep: bool) -> Iterator[Path]:
    """A temporary folder for the run, removed at the end unless ``keep``."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        if keep:
            print(f"(work folder kept: {path})")
        else:
            shutil.rmtree(path, ignore_errors=True)
