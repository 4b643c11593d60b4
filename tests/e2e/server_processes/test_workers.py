"""`pbmserv serve --workers N`: several server processes on one port and one database answer
every message exactly once; a worker that dies is replaced; SIGTERM stops them all. The real
executable, real SMTP, the real database (SQLite's writers queue on a file lock)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from pbmserv.db.models import OutboxMessage
from tests.e2e.processes import environment, spool_messages, start_serve
from tests.support import free_port, make_mail, settle, smtp_send

pytestmark = pytest.mark.db


def children(parent: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if int(fields[1]) == parent and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def wait_for_children(parent: int, count: int, timeout: float = 30.0) -> set[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = children(parent)
        if len(found) == count:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{len(children(parent))} workers, expected {count}")


def test_workers_answer_every_message_once_and_a_dead_worker_is_replaced(  # type: ignore[no-untyped-def]
    db_url: str, engine, tmp_path: Path
) -> None:
    spool = tmp_path / "spool"
    port = free_port()
    env = environment(
        db_url,
        spool,
        PBMSERV_LISTEN=f"127.0.0.1:{port}",
        PBMSERV_POLL_SECONDS="0.2",
        PBMSERV_WORKERS="2",
        PBMSERV_DELIVERY_LEASE_SECONDS="3",
    )
    supervisor = start_serve(env, port, tmp_path / "serve.log")
    sent = []
    try:
        first = wait_for_children(supervisor.pid, 2)
        for i in range(60):
            if i == 30:
                os.kill(min(first), signal.SIGKILL)  # a worker dies in the middle of the work
            message = make_mail(f"user{i}@example.org", f"help {i}")
            code = 0
            for _attempt in range(50):  # the kernel may still route to the dead worker's port
                try:
                    code = smtp_send(port, message)[0]
                    break
                except OSError:
                    time.sleep(0.1)
            assert code == 250
            sent.append(message["Message-ID"])
        replaced = wait_for_children(supervisor.pid, 2)
        assert min(first) not in replaced and max(first) in replaced
        settle(engine, timeout=60)
    finally:
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(40) == 0
    assert children(supervisor.pid) == set()
    replies = [m["In-Reply-To"] for m in spool_messages(spool)]
    assert sorted(replies) == sorted(sent)  # every message answered, none twice
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(OutboxMessage)) == 60


def test_several_workers_need_a_port_named(db_url: str, tmp_path: Path) -> None:
    from tests.e2e.processes import run_pbmserv

    env = environment(db_url, tmp_path / "spool", PBMSERV_LISTEN="127.0.0.1:0", PBMSERV_WORKERS="2")
    result = run_pbmserv(["serve"], env)
    assert result.returncode != 0
    assert b"name the port" in result.stderr


def descendants(root: int) -> set[int]:
    found, frontier = set(), {root}
    while frontier:
        below = set().union(*(children(pid) for pid in frontier))
        found |= below
        frontier = below
    return found


def role_of(pid: int) -> str | None:
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return None
    for entry in environ:
        if entry.startswith(b"PBMSERV_CHILD_ROLE="):
            return entry.partition(b"=")[2].decode()
    return None


def test_several_workers_start_one_robots_process_between_them(  # type: ignore[no-untyped-def]
    db_url: str, engine, tmp_path: Path
) -> None:
    port = free_port()
    env = environment(
        db_url,
        tmp_path / "spool",
        PBMSERV_LISTEN=f"127.0.0.1:{port}",
        PBMSERV_WORKERS="2",
        PBMSERV_ROBOTS="true",
    )
    supervisor = start_serve(env, port, tmp_path / "serve.log")
    try:
        wait_for_children(supervisor.pid, 2)
        deadline = time.monotonic() + 30
        thinking: list[int] = []
        while time.monotonic() < deadline:
            thinking = [pid for pid in descendants(supervisor.pid) if role_of(pid) == "robots"]
            if thinking:
                break
            time.sleep(0.1)
        time.sleep(1.0)  # a second worker's robots process would have started by now
        thinking = [pid for pid in descendants(supervisor.pid) if role_of(pid) == "robots"]
        assert len(thinking) == 1, "the robots think in one process, whatever the workers"
    finally:
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(40) == 0
