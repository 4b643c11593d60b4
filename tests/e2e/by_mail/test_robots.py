"""Robots by mail: a person challenges a robot, the robot moves in a process part of its own
(runtime.robot_runner) off every message's transaction, and the person gets the board mail; a
robot is mailed nothing, logs in to nothing, plays no other robot, and a turn is played once
however many think about it."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest
from sqlalchemy import Engine, func, select, text
from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.db.engine import make_engine, session_factory
from pbmserv.db.models import GameRow, MoveRow, OutboxMessage
from pbmserv.games import find_game
from pbmserv.runtime import robot_runner
from pbmserv.runtime.robot_runner import RobotRunner
from pbmserv.runtime.worker import EVERYTHING, ROBOTS
from tests.support import Received, RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

ALICE = "alice@example.org"


def robot_settings(settings: Settings, **changes: object) -> Settings:
    return replace(settings, robot_cpu_seconds=0.2, robot_poll_seconds=0.1, **changes)


@pytest.fixture
def robot_server(settings: Settings):  # type: ignore[no-untyped-def]
    running = RunningServer(robot_settings(settings), parts=EVERYTHING | {ROBOTS}).start()
    yield running
    running.stop()


def send(port: int, engine: Engine, sink: Sink, subject: str) -> list[Received]:
    before = len(sink.messages)
    assert smtp_send(port, make_mail(ALICE, subject))[0] == 250
    settle(engine)
    return sink.messages[before:]


def board_row(engine: Engine, number: int) -> GameRow:
    with Session(engine) as session:
        row = session.get(GameRow, number)
        assert row is not None
        session.expunge(row)
        return row


def wait_for_turn(engine: Engine, number: int, seat: int, timeout: float = 30.0) -> GameRow:
    """The board once ``seat`` is to move (or it is over)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = board_row(engine, number)
        if row.status != "active" or str(seat) in row.to_move.split(","):
            settle(engine)
            return row
        time.sleep(0.05)
    raise AssertionError(f"board {number}: seat {seat} never came to move")


def a_legal_move(row: GameRow, seat: int, rng: random.Random) -> str:
    game = find_game(row.game)
    assert game is not None
    state = game.load(row.state)
    return game.format_move(state, rng.choice(game.legal_moves(state, seat)))


def test_a_person_plays_a_robot_by_mail(robot_server, engine: Engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    port = robot_server.port
    send(port, engine, sink, "signup alice secret1")
    before = len(sink.messages)
    out = send(port, engine, sink, "chameleon challenge -size=5 robot1 alice")
    # (the robot may have moved already: its board mail may come in the same moment)
    [answer] = [m for m in out if "has started" in m.body]
    assert "New game" not in answer.body
    assert "Its first move will come to alice with the board." in answer.body
    # The robot moves first: its move brings the board, the one board mail of the opening.
    wait_for_turn(engine, 1, seat=1)
    boards = [m for m in sink.messages[before:] if m.to == ALICE and m is not answer]
    assert len(boards) == 1, [m.subject for m in boards]
    assert "New game: Chameleon, board 1." in boards[0].body and "played" in boards[0].body
    number = 1
    rng = random.Random(3)
    for _turn in range(4):
        row = wait_for_turn(engine, number, seat=1)
        if row.status != "active":
            break
        # The robot's move came to the person as board mail, as a person's move would.
        assert any("robot1" in m.body and "played" in m.body for m in sink.messages[-3:])
        move = a_legal_move(row, 1, rng)
        [reply, *_board] = send(port, engine, sink, f"chameleon move 1 alice secret1 {move}")
        assert "error" not in reply.body.lower(), reply.body
    with Session(engine) as session:
        entries = session.execute(
            select(MoveRow.seat, MoveRow.message_id)
            .where(MoveRow.game_id == number, MoveRow.kind == "move")
            .order_by(MoveRow.id)
        ).all()
        to_robots = session.scalar(
            select(func.count())
            .select_from(OutboxMessage)
            .where(OutboxMessage.recipient.like("%@robots.invalid"))
        )
    seats = [seat for seat, _mid in entries]
    # The robot first, then turn about (the game may end before the person's fourth move).
    assert len(seats) >= 3 and seats == [ply % 2 for ply in range(len(seats))]
    assert all(mid is None for seat, mid in entries if seat == 0)  # no mail made its moves
    assert to_robots == 0  # a robot is mailed nothing


def test_what_a_robot_will_not_do(robot_server, engine: Engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    port = robot_server.port
    send(port, engine, sink, "signup alice secret1")
    [both] = send(port, engine, sink, "chameleon challenge robot1 robot2")
    assert "robots play people, not each other" in both.body
    [login] = send(port, engine, sink, "password robot1 anything newpass1")
    assert "robot1 is a robot" in login.body and "help robots" in login.body
    with Session(engine) as session:
        assert session.scalar(select(func.count()).select_from(GameRow)) == 0


def test_a_person_has_at_most_so_many_robot_boards(
    settings: Settings, engine: Engine, sink: Sink
) -> None:
    capped = replace(robot_settings(settings), robot_games_per_user=1)
    running = RunningServer(capped).start()  # no robots' part: the boards stay as they are
    try:
        send(running.port, engine, sink, "signup alice secret1")
        send(running.port, engine, sink, "owlman challenge alice robot3")
        [second] = send(running.port, engine, sink, "buffalo challenge robot2 alice")
        assert "alice already has 1 boards against robots" in second.body
        send(running.port, engine, sink, "signup bob hunter22")
        bob = send(running.port, engine, sink, "buffalo challenge bob alice")
        assert any("New game" in m.body for m in bob)  # people may still play people
    finally:
        running.stop()


def test_a_turn_is_played_once_however_many_think(
    settings: Settings, engine: Engine, sink: Sink
) -> None:
    running = RunningServer(settings).start()  # no robots' part: the runners below play
    try:
        send(running.port, engine, sink, "signup alice secret1")
        send(running.port, engine, sink, "buffalo challenge robot1 alice")
    finally:
        running.stop()
    factory = session_factory(engine)
    first, second = (
        RobotRunner(factory, robot_settings(settings)),
        RobotRunner(factory, robot_settings(settings)),
    )
    with factory() as session:
        [turn] = robot_runner.due_turns(session)
    assert turn.task == "move" and turn.ply == 0
    assert first.play_turn(turn) is True
    assert second.play_turn(turn) is False  # the board moved on while it thought
    assert second.play_round() == 0  # and nothing is due: the person is to move
    with Session(engine) as session:
        moves = session.scalar(
            select(func.count()).select_from(MoveRow).where(MoveRow.kind == "move")
        )
    assert moves == 1


def test_a_robot_thinks_with_no_transaction_open(
    settings: Settings, engine: Engine, sink: Sink, monkeypatch: pytest.MonkeyPatch
) -> None:
    running = RunningServer(settings).start()
    try:
        send(running.port, engine, sink, "signup alice secret1")
        send(running.port, engine, sink, "owlman challenge robot2 alice")
    finally:
        running.stop()
    written: list[int] = []
    thinking = robot_runner.decide

    def decide_while_another_writes(*args, **kwargs):  # type: ignore[no-untyped-def]
        # Another connection writes while the robot thinks: on SQLite it would wait for the
        # write lock (and time out) were the robot's transaction open; on PostgreSQL for the
        # board's row lock.
        other = make_engine(settings.db_url)
        try:
            with other.begin() as connection:
                if other.dialect.name == "sqlite":
                    connection.execute(text("PRAGMA busy_timeout = 200"))
                else:
                    connection.execute(text("SET LOCAL lock_timeout = '200ms'"))
                written.append(
                    connection.execute(
                        text("UPDATE games SET reminded_at = NULL WHERE id = 1")
                    ).rowcount
                )
        finally:
            other.dispose()
        return thinking(*args, **kwargs)

    monkeypatch.setattr(robot_runner, "decide", decide_while_another_writes)
    runner = RobotRunner(session_factory(engine), robot_settings(settings))
    assert runner.play_round() == 1
    assert written == [1]


def test_a_robot_takes_no_moves_back(robot_server, engine: Engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    port = robot_server.port
    send(port, engine, sink, "signup alice secret1")
    send(port, engine, sink, "owlman challenge alice robot1")
    row = board_row(engine, 1)
    move = a_legal_move(row, 0, random.Random(1))
    send(port, engine, sink, f"owlman move 1 alice secret1 {move}")
    wait_for_turn(engine, 1, seat=0)
    send(port, engine, sink, "owlman propose 1 alice secret1 undo")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with Session(engine) as session:
            answered = session.scalar(
                select(MoveRow.text).where(MoveRow.game_id == 1, MoveRow.kind == "reject")
            )
        if answered:
            break
        time.sleep(0.05)
    assert answered == "rejects the undo proposal"
    settle(engine)
    told = [m for m in sink.messages if m.to == ALICE and "rejected" in m.body]
    assert told, "the person is told the robot said no"
    assert board_row(engine, 1).ply == 2  # nothing was taken back


def test_robots_are_disabled_by_the_setting(settings: Settings) -> None:
    from pbmserv.cli.main import _serving_parts

    with_robots = _serving_parts(settings, ["pbmserv"])
    without = _serving_parts(replace(settings, robots=False), ["pbmserv"])
    assert any(ROBOTS in group.parts for group in with_robots["children"])
    assert not any(ROBOTS in group.parts for group in without["children"])
    assert ROBOTS not in with_robots["parts"]  # never in the listener's own process


def test_only_the_first_of_several_workers_starts_the_robots_process(settings: Settings) -> None:
    from pbmserv.cli.main import _serving_parts

    first = _serving_parts(settings, ["pbmserv"], first_worker=True)
    second = _serving_parts(settings, ["pbmserv"], first_worker=False)
    assert any(ROBOTS in group.parts for group in first["children"])
    assert not any(ROBOTS in group.parts for group in second["children"])
    assert ROBOTS not in second["parts"]  # nor does the second think in its own process
