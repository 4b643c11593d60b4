"""`serve` plays the moves in a process of its own and delivers from another (issue 32): each
woken through a pipe the moment there is work (not at the next poll), started again when it
dies, gone when its parent is gone however it died. The real executable, real SMTP, the real
database."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.processes import environment, spool_messages, start_serve, wait_for_child
from tests.e2e.server_processes.test_workers import children, wait_for_children
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


def roles(parent: int, count: int, timeout: float = 30.0) -> dict[str, int]:
    """The parent's children by the part of the work each does. A child caught between fork
    and exec still shows its parent's environment (no role yet): look again until each has one."""
    deadline = time.monotonic() + timeout
    while True:
        pids = wait_for_children(parent, count, timeout)
        try:
            found = {environ_of(pid).get("PBMSERV_CHILD_ROLE"): pid for pid in pids}
        except OSError:  # one died as we looked: a new one takes its place
            found = {}
        if len(found) == count and None not in found:
            return {role: pid for role, pid in found.items() if role is not None}
        assert time.monotonic() < deadline, f"children without a role: {found}"
        time.sleep(0.05)


def test_each_part_of_the_work_is_woken_at_once_and_a_dead_child_is_replaced(  # type: ignore[no-untyped-def]
    db_url: str, engine, tmp_path: Path
) -> None:
    server, port, spool = serve(db_url, tmp_path)
    try:
        children_by_role = roles(server.pid, 2)
        assert set(children_by_role) == {"process", "deliver"}
        for pid in children_by_role.values():
            assert environ_of(pid)["PBMSERV_CHILD_OF"] == str(server.pid)
        for i in range(5):
            assert smtp_send(port, make_mail(f"user{i}@example.org", f"help {i}"))[0] == 250
            # Woken through the pipes (listener -> processing -> delivery): the answer is out
            # long before a 60 s poll.
            assert answered_within(spool, i + 1, 10), (tmp_path / "serve.log").read_text()
        sent = 5
        for role in ("process", "deliver"):
            # The child died: another takes its place, and mail still leaves at once.
            os.kill(children_by_role[role], signal.SIGKILL)
            assert gone(children_by_role[role], 15)  # (not counted while it is still dying)
            again = roles(server.pid, 2)
            assert again[role] != children_by_role[role]
            children_by_role = again
            time.sleep(0.5)  # its wake-up listener is set up as it starts
            assert smtp_send(port, make_mail(f"late-{role}@example.org", "help"))[0] == 250
            sent += 1
            assert answered_within(spool, sent, 15), (tmp_path / "serve.log").read_text()
        settle(engine, timeout=30)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(40) == 0
    assert children(server.pid) == set()
    assert len(spool_messages(spool)) == 7  # none twice


def test_the_children_stop_when_their_parent_is_killed(db_url: str, tmp_path: Path) -> None:
    server, _port, _spool = serve(db_url, tmp_path)
    both = wait_for_children(server.pid, 2)
    server.send_signal(signal.SIGKILL)
    server.wait(10)
    # No one will wake them again: each sees its end of a pipe close and stops (delivery once
    # the processing child, which could also wake it, is gone).
    for pid in both:
        assert gone(pid, 15), "a child process outlived its killed parent"


@pytest.mark.parametrize(
    ("processing_process", "delivery_processes", "expected"),
    [("false", "0", set()), ("false", "1", {"deliver"}), ("true", "0", {"deliver+process"})],
)
def test_fewer_processes_still_answer_at_once(  # type: ignore[no-untyped-def]
    db_url: str,
    tmp_path: Path,
    processing_process: str,
    delivery_processes: str,
    expected: set[str],
) -> None:
    server, port, spool = serve(
        db_url,
        tmp_path,
        PBMSERV_PROCESSING_PROCESS=processing_process,
        PBMSERV_DELIVERY_PROCESSES=delivery_processes,
    )
    try:
        assert set(roles(server.pid, len(expected))) == expected
        assert smtp_send(port, make_mail("solo@example.org", "help"))[0] == 250
        assert answered_within(spool, 1, 10)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(40) == 0


def test_the_children_yield_the_cpu_to_the_listener(db_url: str, tmp_path: Path) -> None:
    """In a burst the listener keeps storing mail (and answering its senders) before moves
    are played and mail is sent: its children run at a lower CPU priority (child_niceness)."""
    server, port, spool = serve(db_url, tmp_path, PBMSERV_CHILD_NICENESS="7")
    try:
        for work in ("processing", "delivery"):  # each lowers its priority as it starts
            wait_for_child(tmp_path / "serve.log", work)
        by_role = roles(server.pid, 2)
        listener = os.getpriority(os.PRIO_PROCESS, server.pid)
        for pid in by_role.values():
            assert os.getpriority(os.PRIO_PROCESS, pid) == listener + 7
        assert smtp_send(port, make_mail("nice@example.org", "help"))[0] == 250
        assert answered_within(spool, 1, 10)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(40) == 0
