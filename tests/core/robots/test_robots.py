"""The robots in the database (core.robots.turns, core.robots.moves): who they are, which turns are
theirs, what a stale turn does, what a challenge of one may not be, and that a robot's move
goes the way a person's does: one history entry, board mail to the person only."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest
from sqlalchemy import delete, select, update

from pbmserv.core.context import CommandContext
from pbmserv.core.robots import moves as robot_moves
from pbmserv.core.robots.turns import (
    active_robot_boards,
    due_turns,
    ensure_robots,
    load_turn,
    robots,
)
from pbmserv.db.engine import transaction
from pbmserv.db.models import GameRow, MoveRow, User
from tests.core.client import Client

pytestmark = pytest.mark.db

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
#: A seed key (core.robots.seeds.robot_key makes the server's).
KEY = bytes(32)


@pytest.fixture
def alice(client: Client) -> Client:
    assert client.run("signup alice secret1").ok
    return client


def test_three_robots_are_there_and_made_again_if_removed(client: Client) -> None:
    with client.session() as session:
        assert [(r.userid, r.robot_level) for r in robots(session)] == [
            ("robot1", 1),
            ("robot2", 2),
            ("robot3", 3),
        ]
        assert all(r.email.endswith("@robots.invalid") for r in robots(session))
    with transaction(client.factory) as session:
        session.execute(delete(User).where(User.userid == "robot2"))
        # A person who held the id before robots came keeps it: the robot is named apart.
        session.execute(update(User).where(User.userid == "robot3").values(robot_level=None))
    with transaction(client.factory) as session:
        made = ensure_robots(session, NOW)
        assert sorted(r.userid for r in made) == ["pbmrobot3", "robot2"]
    with transaction(client.factory) as session:
        assert ensure_robots(session, NOW) == []  # nothing twice


def test_the_cap_counts_active_boards_against_robots_alone(alice: Client) -> None:
    alice.settings = replace(alice.settings, robot_games_per_user=2)
    assert alice.run("owlman challenge alice robot1").ok
    assert alice.run("buffalo challenge robot3 alice").ok
    refused = alice.run("chameleon challenge alice robot2")
    assert not refused.ok and "alice already has 2 boards against robots" in refused.text
    assert alice.run("owlman resign 1 alice secret1").ok  # a finished board frees a place
    assert alice.run("chameleon challenge alice robot2").ok
    with alice.session() as session:
        person = session.scalar(select(User).where(User.userid == "alice"))
        assert person is not None and active_robot_boards(session, person) == 2


def test_due_turns_are_the_robots_turns_answers_first(alice: Client) -> None:
    assert alice.run("owlman challenge alice robot1").ok  # alice to move: not the robot's
    assert alice.run("buffalo challenge robot2 alice").ok  # the robot to move
    assert alice.run("signup bob hunter22", "bob@example.org").ok
    assert alice.run("owlman challenge bob alice").ok  # no robot at all
    with alice.session() as session:
        [turn] = due_turns(session)
    assert (turn.board, turn.seat, turn.level, turn.task, turn.ply) == (2, 0, 2, "move", 0)
    assert alice.run("buffalo resign 2 alice secret1").ok
    with alice.session() as session:
        assert due_turns(session) == []


def test_a_robots_move_goes_as_a_persons_once(alice: Client) -> None:
    assert alice.run("owlman challenge robot1 alice").ok
    with alice.session() as session:
        [turn] = due_turns(session)
    with transaction(alice.factory) as session:
        ctx = CommandContext(session, alice.settings, None)
        board = load_turn(ctx, turn, for_update=True)
        assert board is not None
        section = robot_moves.carry_out(ctx, board, robot_moves.decide(board, turn, 0.2, KEY))
        assert section is not None and section.kind == "moved"
        assert [n.to for n in ctx.notifications] == ["alice@example.org"]  # not the robot
        assert session.scalar(select(GameRow.ply).where(GameRow.id == 1)) == 1
        # The same turn again: the board has moved on, so there is nothing to do.
        assert load_turn(ctx, turn, for_update=True) is None
    with alice.session() as session:
        entries = session.execute(select(MoveRow.seat, MoveRow.kind)).all()
    assert entries == [(0, "move")]


def test_a_robot_agrees_a_draw_only_when_its_search_says_so(
    alice: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert alice.run("hmdg challenge alice robot1").ok
    assert alice.run("hmdg propose 1 alice secret1 draw").ok
    with alice.session() as session:
        [turn] = due_turns(session)
    assert turn.task == "draw"
    with alice.session() as session:
        board = load_turn(CommandContext(session, alice.settings, None), turn, for_update=False)
    assert board is not None
    for value, answer in ((0.3, "accept"), (0.45, "accept"), (0.5, "reject"), (0.9, "reject")):
        monkeypatch.setattr(robot_moves, "robot_value", lambda *_a, v=value, **_k: v)
        assert robot_moves.decide(board, turn, 0.2, KEY).answer == answer
    undo = replace(turn, task="undo")
    assert robot_moves.decide(board, undo, 0.2, KEY).answer == "reject"  # no moves taken back
