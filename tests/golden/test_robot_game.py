"""A person plays a robot by mail, from signup to the end of the game, checked against a
golden transcript.

Every message goes through the real SMTP listener; the robot thinks in the server's robots'
part (runtime.robot_runner) and its moves come to the person as board mail through a real relay.
The robot's search is fixed by its iterations (the CPU cap is set high enough never to cut
it) and its seed by the server's secret, fixed here, so the game is the same every run. The
person plays the first legal move a seeded generator picks; "help robots" and a refused
challenge of two robots come first.
"""

from __future__ import annotations

import random
import time
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import Engine, insert
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.core.accounts.bouncing import KEY_NAME
from pbmserv.db.models import GameRow, ServerKey
from pbmserv.games import find_game
from pbmserv.runtime.worker import EVERYTHING, ROBOTS
from tests.golden.runner import check_golden, describe
from tests.support import RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("robot_game.txt")
ALICE = "alice@example.org"
GAME = "chameleon"
HUMAN_SEAT = 1  # the robot moves first


def _board(engine: Engine) -> GameRow:
    with Session(engine) as session:
        row = session.get(GameRow, 1)
        assert row is not None
        session.expunge(row)
        return row


def _wait_for_person(engine: Engine, timeout: float = 60.0) -> GameRow | None:
    """The board once the person is to move (or it is over); None before it exists."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        settle(engine)
        with Session(engine) as session:
            exists = session.get(GameRow, 1) is not None
        if not exists:
            return None
        row = _board(engine)
        if row.status != "active" or str(HUMAN_SEAT) in row.to_move.split(","):
            settle(engine)
            return row
        time.sleep(0.05)
    raise AssertionError("the robot never moved")


def test_a_person_plays_a_robot_to_the_end(settings: Settings, engine: Engine, sink: Sink) -> None:
    # The robot's search is cut by its iterations alone: a CPU cap this high never binds.
    robot_settings = replace(settings, robot_cpu_seconds=120.0, robot_poll_seconds=0.05)
    # Its generator is seeded under the server's secret (core.robots.seeds): a fixed one here.
    with engine.begin() as connection:
        connection.execute(insert(ServerKey).values(name=KEY_NAME, value="5eed" * 16))
    server = RunningServer(robot_settings, parts=EVERYTHING | {ROBOTS}).start()
    parts: list[str] = []

    def step(subject: str) -> GameRow | None:
        before = len(sink.messages)
        assert smtp_send(server.port, make_mail(ALICE, subject))[0] == 250
        row = _wait_for_person(engine)
        out = sorted(sink.messages[before:], key=lambda m: (m.to, m.subject, m.body))
        parts.append(f"=== {ALICE}: {subject}\n")
        parts.extend(describe(m) for m in out)
        return row

    try:
        step("signup alice secret1 Alice Liddell")
        step("help robots")
        step(f"{GAME} challenge robot1 robot2")
        row = step(f"{GAME} challenge -size=5 robot1 alice")
        game = find_game(GAME)
        assert game is not None and row is not None
        rng = random.Random(5)
        while row is not None and row.status == "active":
            state = game.load(row.state)
            moves = sorted(game.format_move(state, m) for m in game.legal_moves(state, HUMAN_SEAT))
            row = step(f"{GAME} move 1 alice secret1 {rng.choice(moves)}")
        assert row is not None and row.status == "finished"
        assert row.result is not None and row.result["winners"] == [0]  # robot1 won
    finally:
        server.stop()
    check_golden("\n".join(parts), GOLDEN)
