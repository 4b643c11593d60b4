"""The rig every end-to-end bench runs on: a recording relay sink, a scratch database (a SQLite
file or a private PostgreSQL schema), `pbmserv serve` as a child process with the bench
environment and an SMTP client that reports status codes; the Chameleon move load of
throughput.py and growth.py is in _move_load.py, on top of it.

The server's environment is ``BENCH_ENV`` (a private server: no address confirmation, no
idle-board maintenance, quick delivery retries, text logs), then every ``PBMSERV_*`` variable
the caller set in the shell (``PBMSERV_BOARD_PICTURES=false python bench/throughput.py`` runs a
pictures-off row; only ``PBMSERV_CONFIG`` is left out, so that no operator's file is read),
then what the bench itself asks for.

The load: smtplib in N threads sends legal Chameleon moves, each with its password, across many
concurrent games; a game's next move is sent only once the previous move's reply and both board
mails have reached the relay, so the load is many games in parallel.

Everything talks to 127.0.0.1 only, and every wait is bounded: a run that cannot finish in time
returns what it has and says so in its notes.

Run ``python bench/_rig.py aiosmtpd-sink PORT`` to get a bare aiosmtpd ``Sink`` relay on
127.0.0.1 (throughput.py starts it so); it stops by itself after an hour at most.
"""

from __future__ import annotations

import argparse
import contextlib
import email.policy
import os
import re
import shutil
import signal
import smtplib
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from email.message import EmailMessage, Message
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from aiosmtpd.controller import Controller  # noqa: E402
from aiosmtpd.smtp import SMTP, Envelope  # noqa: E402
from aiosmtpd.smtp import Session as SMTPSession  # noqa: E402
from sqlalchemy import Engine, create_engine, text  # noqa: E402

from pbmserv.games import find_game  # noqa: E402

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SERVER_ADDRESS = "pbmserv@test.example"
# Settings for a bench server: no idle-board maintenance; a refused delivery is retried within
# seconds, not half a minute, so that "wait until everything is delivered" stays short.
BENCH_ENV = {
    "PBMSERV_MAINTENANCE_INTERVAL_SECONDS": "0",
    "PBMSERV_RETRY_BASE_SECONDS": "1",
    "PBMSERV_RETRY_MAX_SECONDS": "5",
    "PBMSERV_LOG_FORMAT": "text",
    # A private server: the benches' players are strangers (the abuse phase turns it on).
    "PBMSERV_CONFIRM_ADDRESSES": "false",
    # People's moves alone (bench/robots_beside_people.py turns the robots on).
    "PBMSERV_ROBOTS": "false",
}
GAME = find_game("chameleon")
assert GAME is not None

BOARD_SUBJECT = re.compile(rb"^\s*(\w+) board (\d+)\b")


# --- small helpers ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def parse_host_port(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if host not in ("127.0.0.1", "localhost", "") or not port.isdigit():
        raise ValueError(f"{text!r}: give 127.0.0.1:PORT (the benches only talk to 127.0.0.1)")
    return "127.0.0.1", int(port)


def wait_listening(port: int, timeout: float, alive: Callable[[], bool] = lambda: True) -> bool:
    """True once something accepts connections on 127.0.0.1:``port`` (within ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return True
        time.sleep(0.05)
    return False


def wait_until(condition: Callable[[], bool], deadline: float, step: float = 0.05) -> bool:
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def start_threads(
    target: Callable[[int], None], count: int, deadline: float
) -> list[threading.Thread]:
    """Run ``target(0..count-1)`` in daemon threads; wait for them until ``deadline``."""
    workers = [threading.Thread(target=target, args=(n,), daemon=True) for n in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(max(0.1, deadline - time.monotonic()))
    return workers


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile (nearest rank) of ``values``; NaN when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))]


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` (all its threads) and of its children
    that have ended, from /proc/PID/stat."""
    data = Path(f"/proc/{pid}/stat").read_text()
    fields = data[data.rindex(")") + 2 :].split()  # the name may hold spaces: skip past it
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def roles_by_pid(pid: int) -> dict[int, str]:
    """A `serve` and its child processes by the part of the work each does (a child's
    ``PBMSERV_CHILD_ROLE``: "process", "deliver"...); "receive" for the listener's own process
    (and the processes of `--workers`, and whatever else has no role)."""
    roles = {}
    for each in [pid, *child_pids(pid)]:
        try:
            environ = Path(f"/proc/{each}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        marked = [item for item in environ if item.startswith(b"PBMSERV_CHILD_ROLE=")]
        roles[each] = marked[0].partition(b"=")[2].decode() if marked else "receive"
    return roles


def cpu_by_part(pid: int) -> dict[str, float]:
    """CPU seconds of a `serve` and its child processes by their part of the work
    (:func:`roles_by_pid`), each process's own time alone."""
    parts: dict[str, float] = {}
    for each, role in roles_by_pid(pid).items():
        try:
            data = Path(f"/proc/{each}/stat").read_text()
        except OSError:
            continue
        fields = data[data.rindex(")") + 2 :].split()
        spent = sum(int(value) for value in fields[11:13]) / os.sysconf("SC_CLK_TCK")
        parts[role] = parts.get(role, 0.0) + spent
    return parts


def child_pids(parent: int) -> list[int]:
    """The processes descended from ``parent`` (children, their children...)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, waiting = [], list(parents.get(parent, []))
    while waiting:
        pid = waiting.pop()
        found.append(pid)
        waiting += parents.get(pid, [])
    return found


def postgres_cpu() -> dict[int, float]:
    """CPU time of every running process named postgres on this machine, by pid (the
    database's backends for the servers under test among them; other users' sessions too)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            data = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        if data[data.index("(") + 1 : data.rindex(")")] == "postgres":
            with contextlib.suppress(ValueError, OSError):
                found[int(stat.parent.name)] = cpu_seconds(int(stat.parent.name))
    return found


def postgres_cpu_since(before: dict[int, float]) -> float:
    """The postgres processes' CPU seconds since ``before`` (postgres_cpu()): each running
    process's growth, a new one's all. A backend that ended meanwhile takes its time with it:
    an under-count, never a negative figure."""
    return sum(spent - before.get(pid, 0.0) for pid, spent in postgres_cpu().items())


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def vm_hwm_kb(pid: int, field: str = "VmHWM") -> int:
    """A process's peak resident memory in kB (``field="VmRSS"``: its resident memory now)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return 0


def memory_by_part(pid: int) -> dict[str, tuple[int, int]]:
    """A `serve`'s processes' resident memory now and at its peak (kB), by their part of the
    work (:func:`roles_by_pid`)."""
    parts: dict[str, tuple[int, int]] = {}
    for each, role in roles_by_pid(pid).items():
        now, peak = parts.get(role, (0, 0))
        parts[role] = (now + vm_hwm_kb(each, "VmRSS"), peak + vm_hwm_kb(each))
    return parts


def count_tracebacks(log_path: Path | None) -> int:
    if log_path is None or not log_path.exists():
        return 0
    return log_path.read_bytes().count(b"Traceback (most recent call last)")


@contextlib.contextmanager
def workdir_for(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A temporary folder for the run (under $TMPDIR), removed at the end unless ``keep``."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        if keep:
            print(f"(work folder kept: {path})")
        else:
            shutil.rmtree(path, ignore_errors=True)


# --- the relay sink -----------------------------------------------------------------------


@dataclass(frozen=True)
class Relayed:
    """One message the server handed to the relay, byte for byte; ``at``: time.monotonic()."""

    mail_from: str
    rcpt_tos: tuple[str, ...]
    raw: bytes
    at: float


class _RecordingHandler:
    def __init__(self, keep: bool, on_mail: Callable[[Relayed], None] | None) -> None:
        self.keep = keep
        self.on_mail = on_mail
        self.messages: list[Relayed] = []
        self.count = 0
        self.lock = threading.Lock()

    async def handle_EHLO(
        self,
        server: SMTP,
        session: SMTPSession,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        """Offer PIPELINING, as Postfix does (aiosmtpd reads pipelined commands in order)."""
        session.host_name = hostname
        return [responses[0], "250-PIPELINING", *responses[1:]]

    async def handle_DATA(self, server: SMTP, session: SMTPSession, envelope: Envelope) -> str:
        raw = envelope.original_content or b""
        item = Relayed(
            str(envelope.mail_from), tuple(envelope.rcpt_tos), bytes(raw), time.monotonic()
        )
        with self.lock:
            self.count += 1
            if self.keep:
                self.messages.append(item)
        if self.on_mail is not None:
            self.on_mail(item)
        return "250 OK"


class RecordingRelay:
    """An SMTP relay on 127.0.0.1 that accepts everything. It keeps each message's raw bytes
    (unless ``keep`` is false: a long load would hold them all) and hands each to ``on_mail``
    as it arrives. It speaks SMTPUTF8 and PIPELINING, as a modern relay such as Postfix does."""

    def __init__(
        self,
        port: int = 0,
        keep: bool = True,
        on_mail: Callable[[Relayed], None] | None = None,
    ) -> None:
        self.handler = _RecordingHandler(keep, on_mail)
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

    def __enter__(self) -> RecordingRelay:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.controller.port}"

    def messages(self) -> list[Relayed]:
        with self.handler.lock:
            return list(self.handler.messages)

    def count(self) -> int:
        with self.handler.lock:
            return self.handler.count


class SinkProcess:
    """A baseline relay in a child process: a command given the port it must listen on."""

    def __init__(self, command: Callable[[int], list[str]], env: dict[str, str] | None = None):
        self.port = free_port()
        self.command = command(self.port)
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> SinkProcess:
        self.process = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=self.env,
        )
        if not wait_listening(self.port, 20, lambda: self.process.poll() is None):
            self.__exit__()
            raise RuntimeError(f"{self.command[0]} did not start listening")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


# --- the database -------------------------------------------------------------------------


def pbmserv_command() -> list[str]:
    """`pbmserv` from the same environment as this Python."""
    script = Path(sys.executable).with_name("pbmserv")
    return [str(script)] if script.exists() else [sys.executable, "-m", "pbmserv"]


@dataclass
class ScratchDatabase:
    """A fresh database for one bench run.

    SQLite: a file ``LABEL.db`` in the work folder (or the file of a given ``sqlite:`` URL).
    PostgreSQL: a private schema created in the given database and dropped afterwards, so that
    the tables of that database are never touched.
    """

    url: str
    schema: str | None = None
    admin_url: str | None = None
    _engine: Engine | None = field(default=None, repr=False)

    @classmethod
    def create(cls, given: str | None, workdir: Path, label: str = "bench") -> ScratchDatabase:
        if not given:
            return cls(url=f"sqlite:///{workdir / f'{label}.db'}")
        if given.startswith("sqlite"):
            return cls(url=given)
        schema = f"pbmbench_{label}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
        admin = create_engine(given)
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
        admin.dispose()
        # Every connection's search_path set to the schema (as tests/conftest.py does).
        joiner = "&" if "?" in given else "?"
        url = f"{given}{joiner}options={quote(f'-csearch_path={schema}')}"
        return cls(url=url, schema=schema, admin_url=given)

    @property
    def kind(self) -> str:
        return "SQLite" if self.url.startswith("sqlite") else "PostgreSQL"

    def upgrade(self) -> None:
        """Run `pbmserv db upgrade`, as an operator would."""
        result = subprocess.run(
            [*pbmserv_command(), "db", "upgrade", "--db", self.url],
            capture_output=True,
            timeout=120,
            cwd=ROOT,
        )
        if result.returncode != 0:
            raise RuntimeError(f"pbmserv db upgrade failed: {result.stderr.decode()[-2000:]}")

    @property
    def engine(self) -> Engine:
        """An engine for the bench's own reads (plain BEGIN: it takes no SQLite write lock)."""
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
                conn.execute(text("SET lock_timeout = '30s'"))
                conn.execute(text(f'DROP SCHEMA "{self.schema}" CASCADE'))
            admin.dispose()


@contextlib.contextmanager
def scratch_database(
    given: str | None, workdir: Path, label: str = "bench"
) -> Iterator[ScratchDatabase]:
    """A migrated ScratchDatabase (see there for ``given``), dropped afterwards."""
    db = ScratchDatabase.create(given, workdir, label)
    try:
        db.upgrade()
        yield db
    finally:
        db.drop()


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


# --- the server process -------------------------------------------------------------------


def server_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a bench server: this process's, ``BENCH_ENV`` over it, then again
    every ``PBMSERV_*`` variable the caller set (they win over the bench defaults), then
    ``extra`` (what the bench itself asks for). ``PBMSERV_CONFIG`` is never passed on."""
    caller = {k: v for k, v in os.environ.items() if k.startswith("PBMSERV_")}
    env = {**os.environ, **BENCH_ENV, **caller, **(extra or {})}
    env.pop("PBMSERV_CONFIG", None)
    return env


def announce(headline: str) -> None:
    """Print a bench's first line, then the ``PBMSERV_*`` variables of the caller that reach
    its servers (if any), so that the figures say what they were measured with."""
    print(headline, flush=True)
    names = sorted(k for k in os.environ if k.startswith("PBMSERV_") and k != "PBMSERV_CONFIG")
    if names:
        settings = " ".join(f"{k}={os.environ[k]}" for k in names)
        print(f"servers run with {settings} (from the environment)", flush=True)


class ServerProcess:
    """`pbmserv serve` as a real child process on 127.0.0.1, relaying to ``relay``, with the
    bench environment (``server_env(env)``); its log is ``workdir/NAME.log``. ``port``: a free
    one unless given. ``poll_seconds``, ``rate_limit``: the server's defaults unless given."""

    def __init__(
        self,
        db_url: str,
        relay: str,
        workdir: Path,
        name: str = "server",
        *,
        port: int | None = None,
        env: dict[str, str] | None = None,
        extra_args: Sequence[str] = (),
        poll_seconds: float | None = None,
        rate_limit: int | None = None,
    ) -> None:
        self.name = name
        self.port = port or free_port()
        self.log_path = workdir / f"{name}.log"
        self.workdir = workdir
        options = []
        if poll_seconds is not None:
            options += ["--poll", str(poll_seconds)]
        if rate_limit is not None:
            options += ["--rate-limit", str(rate_limit)]
        self.args = [
            *pbmserv_command(),
            "serve",
            "--db",
            db_url,
            "--listen",
            f"127.0.0.1:{self.port}",
            "--relay",
            relay,
            "--address",
            SERVER_ADDRESS,
            "--spool",
            str(workdir / f"{name}-spool"),
            *options,
            *extra_args,
        ]
        self.env = server_env(env)
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0
        self.peak_kb = 0  # the largest VmHWM seen over all the processes started

    def start(self, timeout: float = 60.0) -> ServerProcess:
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                self.args,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                start_new_session=True,
            )
        self.starts += 1
        self._profile()
        if not wait_listening(self.port, timeout, self.alive):
            exited = not self.alive()
            self.kill()
            said = "exited at start" if exited else f"did not listen within {timeout:.0f} s"
            raise RuntimeError(f"{self.name}: pbmserv serve {said}; log:\n{self.log_tail()}")
        return self

    def _profile(self) -> None:
        """With ``BENCH_PROFILE=DIR``: py-spy samples the server (and its worker processes)
        until it exits, into ``DIR/NAME-N.folded`` (read them with bench/profile_summary.py)."""
        folder = os.environ.get("BENCH_PROFILE")
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        if not folder or not os.access(spy, os.X_OK):
            return
        Path(folder).mkdir(parents=True, exist_ok=True)
        output = Path(folder) / f"{self.name}-{self.starts}.folded"
        subprocess.Popen(
            [spy, "record", "--pid", str(self.pid), "--subprocesses", "--nonblocking"]
            + ["--format", "raw", "--rate", "200", "--output", str(output)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def memory_by_part(self) -> dict[str, tuple[int, int]]:
        """Its resident memory now and at the peak (kB), by the part each process does."""
        return memory_by_part(self.pid)

    def cpu_by_part(self) -> dict[str, float]:
        """Its CPU time and its children's, by the part of the work each process does."""
        return cpu_by_part(self.pid)

    def cpu_seconds(self) -> float:
        """Its CPU time and its children's (the workers of `serve --workers N`)."""
        return sum(cpu_seconds(pid) for pid in [self.pid, *child_pids(self.pid)])

    def sample_memory(self) -> int:
        """Read VmHWM (peak resident memory, kB) of the running process; keep the largest."""
        if self.alive():
            self.peak_kb = max(self.peak_kb, vm_hwm_kb(self.pid))
        return self.peak_kb

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def tracebacks(self) -> int:
        return count_tracebacks(self.log_path)

    def kill(self) -> None:
        """SIGKILL to the server and its child processes at once (its own process group): no
        clean-up at all, as in a power cut."""
        if self.alive():
            self.sample_memory()
            os.killpg(self.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(30)

    def _note_roles(self) -> None:
        """With ``BENCH_PROFILE=DIR``: each process's part of the work, by pid, beside its
        profile (``DIR/NAME-N.roles``), for profile_summary.py --process."""
        folder = os.environ.get("BENCH_PROFILE")
        if not folder or not self.alive():
            return
        lines = [f"{pid} {role}" for pid, role in roles_by_pid(self.pid).items()]
        (Path(folder) / f"{self.name}-{self.starts}.roles").write_text("\n".join(lines) + "\n")

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM and wait (bounded); SIGKILL if it does not stop."""
        if not self.alive():
            return
        self._note_roles()
        self.sample_memory()
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()


# --- the SMTP client ----------------------------------------------------------------------


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
    ``reconnects``: how many times a message is tried again on a new connection after the
    connection failed (a connection the server closed while idle; 0 for the benches that count
    every failure).
    """

    def __init__(self, port: int, timeout: float = 60.0, reconnects: int = 0) -> None:
        self.port = port
        self.timeout = timeout
        self.reconnects = reconnects
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
        for _ in range(self.reconnects):
            code, reply = self._send_once(message)
            if code >= 0:
                return code, reply
        return self._send_once(message)

    def _send_once(self, message: Outgoing) -> tuple[int, str]:
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


# --- reading relayed mail -----------------------------------------------------------------


def parse_relayed(raw: bytes) -> EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def header_text(message: Message, name: str) -> str:
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


# --- a bare aiosmtpd Sink in its own process ---------------------------------------------------


def _serve_aiosmtpd_sink(port: int, seconds: float) -> None:
    from aiosmtpd.handlers import Sink

    controller = Controller(Sink(), hostname="127.0.0.1", port=port)
    controller.start()
    stopped = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopped.set())
    stopped.wait(seconds)
    controller.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    sink = commands.add_parser("aiosmtpd-sink", help="run a bare aiosmtpd Sink on 127.0.0.1")
    sink.add_argument("port", type=int)
    sink.add_argument("--seconds", type=float, default=3600, help="stop after (default 3600)")
    args = parser.parse_args()
    if args.command == "aiosmtpd-sink":
        _serve_aiosmtpd_sink(args.port, args.seconds)


if __name__ == "__main__":
    main()
