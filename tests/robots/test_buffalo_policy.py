"""The Buffalo robot's tactics: the chief captures a buffalo on row 2, a dog blocks a buffalo
on row 3 the chief cannot reach, Black pushes a buffalo through or makes a threat White cannot
meet; and the evaluation reads those tactics."""

from __future__ import annotations

import random

from pbmserv.games import find_game
from pbmserv.games.base import AnyGame
from pbmserv.games.buffalo import BLACK, WHITE, BuffaloState, position
from pbmserv.robots.levels import BUDGETS
from pbmserv.robots.mcts import Budget, search
from pbmserv.robots.policies import buffalo as policy
from pbmserv.robots.policies import policy_for


def _game() -> AnyGame:
    game = find_game("buffalo")
    assert game is not None
    return game


#: Four dogs on row 2, each holding back a buffalo on row 3: none may leave its square.
PINNED = {
    "d3": "B",
    "e3": "B",
    "g3": "B",
    "h3": "B",
    "d2": "D",
    "e2": "D",
    "g2": "D",
    "h2": "D",
}


def _move(state: BuffaloState, seat: int, level: int = 1, seed: int = 0) -> str:
    """The move the search finds with the level's iterations, the best one (the levels'
    temperatures, which sometimes play a lesser move, are not what is tested here)."""
    game = _game()
    budget = Budget(BUDGETS[level].iterations, cpu_seconds=30.0)
    found = search(game, state, seat, policy_for(game), budget, random.Random(seed))
    return game.format_move(state, found.move)


def test_the_chief_captures_a_buffalo_on_row_two() -> None:
    state = position(
        {"c2": "B", "a7": "B", "k7": "B", "d3": "C", "a4": "D", "b5": "D", "j4": "D", "k5": "D"},
        to_move=WHITE,
    )
    for seed in range(3):
        assert _move(state, WHITE, seed=seed) == "d3xc2"


def test_a_dog_blocks_a_buffalo_the_chief_cannot_reach() -> None:
    state = position(
        {"b3": "B", "f7": "B", "j7": "B", "k2": "C", "d5": "D", "e5": "D", "g5": "D", "h6": "D"},
        to_move=WHITE,
    )
    for seed in range(3):
        assert _move(state, WHITE, seed=seed).endswith("b2")


def test_black_pushes_a_buffalo_over_the_river() -> None:
    state = position({**PINNED, "b2": "B", "k2": "C", "a7": "B"}, to_move=BLACK)
    assert _move(state, BLACK) == "b2-b1"


def test_black_makes_a_threat_white_cannot_meet() -> None:
    # b4-b3 threatens b2: the chief is too far and a dog that blocks lets its own buffalo go.
    state = position({**PINNED, "b4": "B", "k6": "C", "a7": "B", "k7": "B"}, to_move=BLACK)
    for seed in range(3):
        assert _move(state, BLACK, level=2, seed=seed) == "b4-b3"


def test_the_evaluation_sees_a_lost_defence() -> None:
    game = _game()
    lost = position({**PINNED, "b3": "B", "k6": "C", "a7": "B"}, to_move=BLACK)
    held = position({**PINNED, "b3": "B", "c2": "C", "a7": "B"}, to_move=BLACK)
    assert policy.POLICY.evaluate is not None
    assert policy.POLICY.evaluate(game, lost)[BLACK] > 0.95
    assert policy.POLICY.evaluate(game, held)[BLACK] < 0.97


def test_white_tree_moves_leave_no_unanswerable_push() -> None:
    game = _game()
    state = position(
        {"b3": "B", "f7": "B", "j7": "B", "k2": "C", "d5": "D", "e5": "D", "g5": "D", "h6": "D"},
        to_move=WHITE,
    )
    moves = game.legal_moves(state, WHITE)
    assert policy.POLICY.candidates is not None
    kept = policy.POLICY.candidates(game, state, WHITE, moves, random.Random(0))
    assert kept
    assert all(move.dst == policy.COLS + 1 for move in kept)  # every one blocks b2


def test_the_opening_is_neither_won_nor_lost() -> None:
    # An evaluation that calls every position lost leaves the search nothing to choose by.
    game = _game()
    start = game.new_game(game.validate_options({}, 2), random.Random(0))
    assert policy.POLICY.evaluate is not None
    assert 0.3 < policy.POLICY.evaluate(game, start)[BLACK] < 0.7


def test_each_capture_and_each_free_dog_helps_white() -> None:
    game = _game()
    evaluate = policy.POLICY.evaluate
    assert evaluate is not None
    herd = {"a7": "B", "c6": "B", "e7": "B", "g5": "B", "i7": "B", "k6": "B", "f3": "C"}
    dogs = {"b2": "D", "d2": "D", "h2": "D", "j2": "D"}
    whole = evaluate(game, position({**herd, **dogs}, to_move=BLACK))[BLACK]
    eaten = evaluate(game, position({**herd, **dogs, "g5": "."}, to_move=BLACK))[BLACK]
    assert eaten < whole
    # The same dogs each freezing a buffalo on row 7 are not free to answer the others.
    frozen = {"a6": "D", "e6": "D", "i6": "D", "k5": "D"}
    assert evaluate(game, position({**herd, **frozen}, to_move=BLACK))[BLACK] > whole


def test_only_the_weakest_buffalo_level_plays_a_lesser_move() -> None:
    """A lesser move loses Buffalo's defence at once, so L2 and L3 play the best move the
    search finds, and only L1 draws its move (at a lower temperature than other games')."""
    from pbmserv.robots.levels import _search, robot_move
    from pbmserv.robots.view import seat_view

    game = _game()
    opening = game.new_game(game.validate_options({}, 2), random.Random(0))
    state = game.apply(opening, game.legal_moves(opening, BLACK)[3], random.Random(0))

    def differs_from_best(level: int) -> bool:
        for seed in range(8):
            chosen = robot_move(
                game, seat_view(game, state, WHITE), level, random.Random(seed)
            ).text
            # The same search with the same generator, its most visited move taken.
            best = _search(game, state, WHITE, level, random.Random(seed), None, temperature=False)
            if chosen != game.format_move(state, best.move):
                return True
        return False

    assert not differs_from_best(2)
    assert differs_from_best(1)


def _black(cells: dict[str, str], to_move: int) -> float:
    evaluate = policy.POLICY.evaluate
    assert evaluate is not None
    return evaluate(_game(), position(cells, to_move=to_move))[BLACK]


def test_a_buffalo_nobody_reaches_in_time_loses_the_game() -> None:
    # k4 walks down: j3 pins the dog on j2 and blocks the others' way to k2; only the chief,
    # if it is near, can answer it (seen in a robot's loss to random buffalo).
    herd = {"a7": "B", "b5": "B", "i5": "B", "k4": "B", "j3": "B"}
    dogs = {"b3": "D", "d3": "D", "g2": "D", "j2": "D"}
    assert _black({**herd, **dogs, "c6": "C"}, WHITE) > 0.9
    assert _black({**herd, **dogs, "i3": "C"}, WHITE) < 0.2


def test_a_free_dog_answers_a_far_buffalo_in_two_moves() -> None:
    herd = {"k6": "B", "a7": "B", "c7": "B", "a2": "C"}
    # d6 reaches k2 by way of h2; a dog on c6 freezes c7 and answers nothing.
    state = position({**herd, "d6": "D"}, to_move=WHITE)
    d6 = state.cells.index("D")
    reach = {d6: policy._white_targets(state.cells, d6)}
    assert policy._dog_in_two(state.cells, state.cells.index("B", 5 * policy.COLS), [d6], reach)
    assert _black({**herd, "d6": "D"}, WHITE) + 0.2 < _black({**herd, "c6": "D"}, WHITE)


def test_a_dog_holding_an_advanced_buffalo_is_not_free() -> None:
    # The dog on e2 holds e4 back: if it leaves to answer c5, e4 walks through instead.
    others = {"e2": "D", "c5": "B", "a7": "B", "k7": "B", "k2": "C"}
    assert _black({**others, "e4": "B"}, BLACK) > 0.9
    assert _black({**others, "e6": "B"}, BLACK) < 0.7


def test_the_chief_belongs_near_the_herds_front() -> None:
    wall = {"h4": "B", "i4": "B", "j4": "B", "h3": "D", "i3": "D", "j3": "D"}
    straggler = {"a6": "B", "a2": "D"}
    near = _black({**wall, **straggler, "g5": "C"}, WHITE)
    assert near + 0.03 < _black({**wall, **straggler, "b5": "C"}, WHITE)
