"""The robots share their time fairly and think with a secret seed (issue 48, items 4 and 5):
one person's robot boards do not hold up another's (round robin by person, a CPU budget per
person per hour), a proposal sent again is answered from the last answer until the position
changes and is thought about with a small budget of its own, and a robot's generator cannot
be derived from the public facts of its turn, while the operator can replay it with the key.
The real runner (runtime.robot_runner) on a real database."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import select

from pbmserv.core.robots import moves as robot_moves
from pbmserv.core.robots.seeds import public_seed, robot_key, robot_rng
from pbmserv.core.robots.turns import RobotTurn
from pbmserv.db.engine import transaction
from pbmserv.db.models import GameRow, MoveRow
from pbmserv.games import find_game
from pbmserv.robots.levels import Choice, robot_move
from pbmserv.robots.view import SeatView
from pbmserv.runtime.robot_runner import RobotRunner
from tests.core.client import Client

pytestmark = pytest.mark.db

ALICE, BOB = "alice@example.org", "bob@example.org"


@pytest.fixture
def people(client: Client) -> Client:
    client.settings = replace(
        client.settings, robot_cpu_seconds=5.0, robot_games_per_user=20, robot_turns_at_once=1
    )
    assert client.run("signup alice secret1", ALICE).ok
    assert client.run("signup bob hunter22", BOB).ok
    return client


def robot_moves_in_order(client: Client) -> list[int]:
    """The boards of the robots' moves, in the order they were played."""
    rows = client.query(
        select(MoveRow.game_id)
        .where(MoveRow.kind == "move", MoveRow.seat == 0)
        .order_by(MoveRow.id)
    )
    return [board for (board,) in rows]


def play_all(runner: RobotRunner) -> None:
    while runner.play_round():
        pass


def test_one_persons_robot_boards_do_not_hold_up_anothers(people: Client) -> None:
    # Alice's three boards, the robot to move on each, waiting longest: two of her user ids
    # at her one address (one person, however many ids).
    assert people.run("signup alice2 secret2", ALICE).ok
    for userid in ("alice", "alice2", "alice"):
        assert people.run(f"buffalo challenge robot1 {userid}", ALICE).ok
    assert people.run("buffalo challenge robot1 bob", BOB).ok  # bob's, the newest
    play_all(RobotRunner(people.factory, people.settings))
    # Round robin by person: bob's board comes second, not after all of alice's.
    assert robot_moves_in_order(people) == [1, 4, 2, 3]


def test_several_people_are_thought_for_at_once(people: Client) -> None:
    settings = replace(people.settings, robot_turns_at_once=2)
    for _ in range(3):
        assert people.run("buffalo challenge robot1 alice", ALICE).ok
    assert people.run("buffalo challenge robot1 bob", BOB).ok
    assert RobotRunner(people.factory, settings).play_round() == 2  # one of each, together
    assert sorted(robot_moves_in_order(people)) == [1, 4]


def test_a_person_over_their_hours_budget_waits_and_loses_nothing(people: Client) -> None:
    # A budget any turn uses up: alice's first turn spends her hour.
    settings = replace(people.settings, robot_cpu_seconds_per_person_per_hour=1e-9)
    for _ in range(2):
        assert people.run("buffalo challenge robot1 alice", ALICE).ok
    now = [1000.0]
    runner = RobotRunner(people.factory, settings, clock=lambda: now[0])
    assert runner.play_round() == 1  # alice's first board
    assert people.run("buffalo challenge robot1 bob", BOB).ok
    assert runner.play_round() == 1  # bob's board: alice's second waits for her budget
    assert runner.play_round() == 0
    assert robot_moves_in_order(people) == [1, 3]
    now[0] += 3601  # an hour on, alice's budget is free again
    assert runner.play_round() == 1
    assert robot_moves_in_order(people) == [1, 3, 2]


def test_a_repeated_proposal_is_answered_from_the_last_answer(
    people: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The robot's valuation is held at "no draw" (a real one might agree, and end the board);
    # what is counted is how often, and with what budget, the robot is asked to think.
    asked: list[float | None] = []

    def valuation(*args: Any, **kwargs: Any) -> float:
        asked.append(kwargs.get("cpu_seconds"))  # keyword-only in robot_value
        return 0.9

    monkeypatch.setattr(robot_moves, "robot_value", valuation)
    assert people.run("hmdg challenge alice robot1", ALICE).ok
    runner = RobotRunner(people.factory, people.settings)
    for _ in range(5):  # the same proposal, again and again, the board where it was
        assert people.run("hmdg propose 1 alice secret1 draw", ALICE).ok
        assert runner.play_round() == 1
    rejected = people.query(select(MoveRow.ply).where(MoveRow.kind == "reject"))
    assert rejected == [(0,)] * 5  # each answered, at the same position ...
    assert asked == [people.settings.robot_proposal_cpu_seconds]  # ... from one small thought
    assert people.settings.robot_proposal_cpu_seconds < people.settings.robot_cpu_seconds
    # Once the position changes, it is thought about again.
    [(row_state,)] = people.query(select(GameRow.state).where(GameRow.id == 1))
    game = find_game("hmdg")
    assert game is not None
    state = game.load(row_state)
    move = game.format_move(state, random.Random(1).choice(game.legal_moves(state, 0)))
    assert people.run(f"hmdg move 1 alice secret1 {move}", ALICE).ok
    assert runner.play_round() == 1  # the robot's move
    assert people.run("hmdg propose 1 alice secret1 draw", ALICE).ok
    assert runner.play_round() == 1
    assert len(asked) == 2


def test_robot_moves_cannot_be_worked_out_from_public_facts(
    people: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 20 robot decisions through the runner; each generator's state is watched as the robot
    # got it. A move may coincide by chance (few legal moves), so what is measured is the
    # generator: derivable from the public facts of the turn (board, ply, task) or not.
    seen: list[tuple[Any, ...]] = []

    def watched(
        game: Any, view: SeatView, level: int, rng: random.Random, cpu: float | None = None
    ) -> Choice:
        before = rng.getstate()  # only watches: the generator as given, what it chose
        choice = robot_move(game, view, level, rng, cpu)
        seen.append((game, view, level, before, choice.text))
        return choice

    monkeypatch.setattr(robot_moves, "robot_move", watched)
    for _ in range(20):
        assert people.run("buffalo challenge robot1 alice", ALICE).ok
    play_all(RobotRunner(people.factory, people.settings))
    assert robot_moves_in_order(people) == list(range(1, 21))  # one person: board by board
    turns = [RobotTurn(board, "buffalo", 0, 1, 0) for board in range(1, 21)]
    with transaction(people.factory) as session:
        key = robot_key(session)
    public = [random.Random(public_seed(turn)).getstate() for turn in turns]
    derivable = sum(before in public for *_rest, before, _text in seen)
    assert len(seen) == 20 and derivable == 0  # no generator follows from public facts
    # The operator, with the key, has every generator and replays every move exactly.
    assert [before for *_rest, before, _text in seen] == [
        robot_rng(key, turn).getstate() for turn in turns
    ]
    replayed = sum(
        robot_move(game, view, level, robot_rng(key, turn)).text == text
        for turn, (game, view, level, _before, text) in zip(turns, seen, strict=True)
    )
    assert replayed == 20
    print(f"generators derivable from public facts: {derivable} of 20; replayed: {replayed} of 20")
