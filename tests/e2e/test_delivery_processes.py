"""`serve` delivers from a process of its own (delivery_processes, issue 32): woken through a
pipe the moment mail is queued (not at the next poll), started again when it dies, gone when
its parent is gone however it died. The real executable, real SMTP, the real database."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.processes import environment, spool_messages, start_serve
from tests.e2e.test_workers import children, wait_for_children
from tests.support import free_port, make_mail, settle, smtp_send

pytestmark = pytest.mark.db


def serve(db_url: str, tmp_path: Path, **extra: str) -> tuple[subprocess.Popen, int, Path]:
    spool, port = tmp_path / "spool", free_port()
    env = environment(
        db_url,
        spool,
        PBMSERV_LISTEN=f"127.0.0.1:{port}",
        # Far longer than any wait below: mail that leaves at once was woken, not polled.
        PBMSERV_POLL_SECONDS="60",
        PBMSERV_DELIVERY_LEASE_SECONDS="3",
        **extra,
    )
    return start_serve(env, port, tmp_path / "serve.log"), port, spool


def answered_within(spool: Path, count: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if len(spool_messages(spool)) >= count:
            return True
        time.sleep(0.05)
    return False


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().partition("=")[::2] for item in raw if b"=" in item)


def gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


def test_mail_leaves_from_the_delivery_process_as_soon_as_it_is_queued(  # type: ignore[no-untyped-def]
    db_url: str, engine, tmp_path: Path
) -> None:
    server, port, spool = serve(db_url, tmp_path)
    try:
        (child,) = wait_for_children(server.pid, 1)
        assert environ_of(child)["PBMSERV_DELIVERY_OF"] == str(server.pid)
        for i in range(5):
            assert smtp_send(port, make_mail(f"user{i}@example.org", f"help {i}"))[0] == 250
            # Woken through the pipe: the answer is out long before a 60 s poll.
            assert answered_within(spool, i + 1, 10), (tmp_path / "serve.log").read_text()
        # The child died: another takes its place, and mail still leaves at once.
        os.kill(child, signal.SIGKILL)
        assert gone(child, 15)  # (not counted while it is still dying)
        (again,) = wait_for_children(server.pid, 1, timeout=30)
        assert again != child
        time.sleep(0.5)  # its wake-up listener is set up as it starts
        assert smtp_send(port, make_mail("late@example.org", "help"))[0] == 250
        assert answered_within(spool, 6, 15), (tmp_path / "serve.log").read_text()
        settle(engine, timeout=30)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(40) == 0
    assert children(server.pid) == set()
    assert len(spool_messages(spool)) == 6  # none twice


def test_the_delivery_process_stops_when_its_parent_is_killed(db_url: str, tmp_path: Path) -> None:
    server, _port, _spool = serve(db_url, tmp_path)
    (child,) = wait_for_children(server.pid, 1)
    server.send_signal(signal.SIGKILL)
    server.wait(10)
    # No one will wake it again: it sees its parent's end of the pipe close and stops.
    assert gone(child, 15), "the delivery process outlived its killed parent"


def test_no_delivery_process_delivers_from_the_one(  # type: ignore[no-untyped-def]
    db_url: str, engine, tmp_path: Path
) -> None:
    server, port, spool = serve(db_url, tmp_path, PBMSERV_DELIVERY_PROCESSES="0")
    try:
        assert smtp_send(port, make_mail("solo@example.org", "help"))[0] == 250
        assert answered_within(spool, 1, 10)
        assert children(server.pid) == set()
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(40) == 0
