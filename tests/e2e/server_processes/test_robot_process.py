"""`serve` thinks for the robots in a child process of its own at the lowest CPU priority, and
a kill -9 while a robot thinks loses nothing and plays nothing twice: the real executable, the
real database, mail to the spool."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from sqlalchemy import Engine, func, select

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import MoveRow
from tests.e2e.processes import environment, spool_messages, start_serve, wait_for_child
from tests.e2e.server_processes.test_child_processes import environ_of, gone, roles
from tests.support import free_port

pytestmark = pytest.mark.db

ALICE = "alice@example.org"


def seed(engine: Engine, line: str) -> None:
    with transaction(session_factory(engine)) as session:
        ctx = CommandContext(session, Settings(confirm_addresses=False), ALICE)
        assert dispatch_line(ctx, "signup alice secret1").ok
        assert dispatch_line(ctx, line).ok


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def niceness(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[16])


def robot_moves(engine: Engine) -> int:
    with engine.connect() as connection:
        query = select(func.count()).select_from(MoveRow).where(MoveRow.kind == "move")
        return int(connection.scalar(query) or 0)


def test_a_robot_killed_while_it_thinks_loses_nothing_and_moves_once(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    # robot3 on an 11x11 board thinks for seconds: long enough to be killed in the middle.
    seed(engine, "chameleon challenge robot3 alice")
    spool, port = tmp_path / "spool", free_port()
    env = environment(
        db_url,
        spool,
        PBMSERV_LISTEN=f"127.0.0.1:{port}",
        PBMSERV_ROBOTS="true",
        PBMSERV_ROBOT_POLL_SECONDS="0.2",
        PBMSERV_ROBOT_CPU_SECONDS="20",
    )
    server = start_serve(env, port, tmp_path / "serve.log")
    try:
        robot = roles(server.pid, 3)["robots"]
        wait_for_child(tmp_path / "serve.log", "robots")
        assert environ_of(robot)["PBMSERV_CHILD_OF"] == str(server.pid)
        assert niceness(robot) == 19  # it thinks only with CPU no one else wants
        deadline = time.monotonic() + 30
        while cpu_seconds(robot) < 1.5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert robot_moves(engine) == 0, "killed while it thinks, not after it moved"
        os.kill(robot, signal.SIGKILL)
        assert gone(robot, 15)
        again = roles(server.pid, 3)["robots"]
        assert again != robot  # started again, and thinks the turn over
        deadline = time.monotonic() + 90
        while robot_moves(engine) == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # (a second move, were one wrongly played, would come now)
        deadline = time.monotonic() + 30
        while not spool_messages(spool) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(40) == 0
    assert robot_moves(engine) == 1
    texts = [(m, m.get_body(preferencelist=("plain",))) for m in spool_messages(spool)]
    board_mail = [m for m, text in texts if text and "robot3 (Vert) played" in text.get_content()]
    assert len(board_mail) == 1 and board_mail[0]["To"] == ALICE
