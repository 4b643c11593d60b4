"""A bench's server and its database: `pbmserv serve` as a child process with the bench
environment, a scratch database (a SQLite file or a private PostgreSQL schema), and waiting until
the server has processed and delivered everything.

The server's environment is ``BENCH_ENV`` (a private server: no address confirmation, no
idle-board maintenance, quick delivery retries, text logs), then every ``PBMSERV_*`` variable
the caller set in the shell (``PBMSERV_BOARD_PICTURES=false python bench/throughput.py`` runs a
pictures-off row; only ``PBMSERV_CONFIG`` is left out, so that no operator's file is read),
then what the bench itself asks for.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, text

from bench.rig.basics import count_tracebacks, free_port, wait_listening
from bench.rig.cpu_and_memory import (
    child_pids,
    cpu_by_part,
    cpu_seconds,
    load_average,
    memory_by_part,
    roles_by_pid,
    vm_hwm_kb,
)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SERVER_ADDRESS = "pbmserv@test.example"
# Settings for a bench server: no idle-board maintenance; a refused delivery is retried within
# seconds, not half a minute, so that "wait until everything is delivered" stays short.
BENCH_ENV = {
    # No web view unless a bench is about it (bench/web.py gives it a port of its own).
    "PBMSERV_WEB_LISTEN": "",
    "PBMSERV_MAINTENANCE_INTERVAL_SECONDS": "0",
    "PBMSERV_RETRY_BASE_SECONDS": "1",
    "PBMSERV_RETRY_MAX_SECONDS": "5",
    "PBMSERV_LOG_FORMAT": "text",
    # A private server: the benches' players are strangers (the abuse phase turns it on).
    "PBMSERV_CONFIRM_ADDRESSES": "false",
    # People's moves alone (bench/robots_beside_people.py turns the robots on).
    "PBMSERV_ROBOTS": "false",
}


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

    def upgrade(
        self, command: Sequence[str] | None = None, env: dict[str, str] | None = None
    ) -> None:
        """Run `pbmserv db upgrade`, as an operator would (``command``: another `pbmserv`
        than this Python's, with its own migrations; ``env``: added to this environment)."""
        result = subprocess.run(
            [*(command or pbmserv_command()), "db", "upgrade", "--db", self.url],
            capture_output=True,
            timeout=120,
            cwd=ROOT,
            env={**os.environ, **env} if env else None,
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
    given: str | None,
    workdir: Path,
    label: str = "bench",
    command: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[ScratchDatabase]:
    """A migrated ScratchDatabase (see there for ``given``), dropped afterwards; migrated by
    ``command`` (another `pbmserv`, see ScratchDatabase.upgrade) if given."""
    db = ScratchDatabase.create(given, workdir, label)
    try:
        db.upgrade(command, env)
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


def sign_off(started: float) -> None:
    """Print a bench's last line: the load average at the end and the seconds since
    ``started`` (time.monotonic())."""
    print(
        f"\n(load average {load_average()} at the end; {time.monotonic() - started:.0f} s in all)"
    )


class ServerProcess:
    """`pbmserv serve` as a real child process on 127.0.0.1, relaying to ``relay``, with the
    bench environment (``server_env(env)``); its log is ``workdir/NAME.log``. ``port``: a free
    one unless given. ``poll_seconds``, ``rate_limit``: the server's defaults unless given.
    ``command``: another `pbmserv` than this Python's (an older commit's, bench/rig/baseline.py)."""

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
        command: Sequence[str] | None = None,
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
            *(command or pbmserv_command()),
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
