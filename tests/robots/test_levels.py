"""The robots on every game: legal moves whose text reads back, at every level and in every
stage; the same seed, the same choice; wins taken at once; no seed and no secret read; values
in 0..1; whole games between robots."""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

import pytest

import pbmserv.games.base
from pbmserv.games import all_games, find_game
from pbmserv.games.base import AnyGame, move_rng
from pbmserv.games.testing import random_playout
from pbmserv.robots import LEVELS, SeatView, robot_move, robot_value, seat_view
from pbmserv.robots.baselines import greedy_move, random_move
from pbmserv.robots.levels import BUDGETS, _budget
from pbmserv.robots.policies import policy_for

#: Option sets that reach every kind of decision: Entropy II's stocking, Rebel Buffalo's dog
#: placements, classic Owlman's repetition rule.
OPTIONS: dict[str, list[dict[str, str]]] = {
    "buffalo": [{}, {"variant": "rebel"}],
    "chameleon": [{"size": "7"}],
    "entropy": [{}, {"variant": "entropy2", "size": "5"}],
    "owlman": [{}, {"variant": "classic"}],
}
#: A cap that keeps the higher levels quick here; the level's own code path still runs.
QUICK = 0.05


def _can_search(game: AnyGame) -> bool:
    """Whether the game gives the search what it needs (HMDG waits for its determinize)."""
    if not game.SPEC.hidden_information:
        return True
    state = game.new_game(game.validate_options({}, game.SPEC.players), random.Random(0))
    try:
        game.determinize(state, 0, random.Random(0))
    except NotImplementedError:
        return False
    return True


def _games() -> Iterator[Any]:
    for game in all_games():
        for raw in OPTIONS.get(game.SPEC.name, [{}]):
            marks = [] if _can_search(game) else [pytest.mark.skip("no determinize yet")]
            label = ",".join(f"{k}={v}" for k, v in raw.items()) or "defaults"
            yield pytest.param(game, raw, id=f"{game.SPEC.name}-{label}", marks=marks)


GAMES = list(_games())


def positions(game: AnyGame, raw: dict[str, str], seed: int, count: int) -> list[Any]:
    """Positions of a random game: the first of every stage (the swap's position too), then
    ``count`` spread over the game."""
    options = game.validate_options(raw, game.SPEC.players)
    states = [s for s in random_playout(game, options, seed).states if game.to_move(s).seats]
    firsts: dict[str, Any] = {}
    for state in states:
        firsts.setdefault(game.to_move(state).stage, state)
    picked = list(firsts.values())
    if game.SPEC.has_swap and len(states) > 1:
        picked.append(states[1])
    stride = max(1, len(states) // count)
    return picked + states[::stride][:count]


def assert_reads_back(game: AnyGame, state: Any, seat: int, text: str) -> None:
    move = game.parse_move(state, seat, text)
    assert game.format_move(state, move) == text
    legal = {game.format_move(state, m) for m in game.legal_moves(state, seat)}
    assert text in legal


@pytest.mark.parametrize(("game", "raw"), GAMES)
def test_every_level_plays_a_legal_move_in_every_stage(game: AnyGame, raw: dict[str, str]) -> None:
    stages = set()
    for index, state in enumerate(positions(game, raw, seed=1, count=3)):
        for seat in sorted(game.to_move(state).seats):
            stages.add(game.to_move(state).stage)
            for level in LEVELS:
                rng = random.Random(index * 10 + level)
                choice = robot_move(
                    game, seat_view(game, state, seat), level, rng, cpu_seconds=QUICK
                )
                assert_reads_back(game, state, seat, choice.text)
                assert 0.0 <= choice.value <= 1.0
                assert choice.iterations >= 0 and choice.cpu_seconds >= 0
    assert stages  # the playout had positions to move in


@pytest.mark.parametrize(("game", "raw"), GAMES)
def test_same_seed_same_choice(game: AnyGame, raw: dict[str, str]) -> None:
    for index, state in enumerate(positions(game, raw, seed=2, count=2)):
        seat = min(game.to_move(state).seats)
        first = robot_move(game, seat_view(game, state, seat), 1, random.Random(index))
        assert robot_move(game, seat_view(game, state, seat), 1, random.Random(index)) == first


def _winning_positions(game: AnyGame, seeds: range) -> Iterator[tuple[Any, int]]:
    """Positions of random games where the seat to move has a move that wins at once."""
    options = game.validate_options({}, game.SPEC.players)
    for seed in seeds:
        for state in random_playout(game, options, seed).states:
            for seat in sorted(game.to_move(state).seats):
                for move in game.legal_moves(state, seat):
                    result = game.outcome(game.apply(state, move, random.Random(0)))
                    if result is not None and result.winners == frozenset({seat}):
                        yield state, seat
                        break


@pytest.mark.parametrize(
    "game", [g for g in all_games() if not g.SPEC.hidden_information], ids=lambda g: g.SPEC.name
)
def test_a_win_at_once_is_taken(game: AnyGame) -> None:
    found = 0
    for state, seat in islice(_winning_positions(game, range(40)), 4):
        choice = robot_move(game, seat_view(game, state, seat), 1, random.Random(0))
        after = game.apply(state, game.parse_move(state, seat, choice.text), random.Random(0))
        result = game.outcome(after)
        assert result is not None and result.winners == frozenset({seat}), choice.text
        found += 1
    assert found == 4


def test_chameleon_completes_its_chain() -> None:
    game = find_game("chameleon")
    assert game is not None
    state = game.new_game({"size": 5}, random.Random(0))
    for seat, text in enumerate(["c1x", "a5o", "c2x", "b5o", "c3x", "d5o", "c4x", "e4o"]):
        state = game.apply(state, game.parse_move(state, seat % 2, text), random.Random(0))
    choice = robot_move(game, seat_view(game, state, 0), 3, random.Random(0))
    assert choice.text == "c5x" and choice.value == 1.0
    after = game.apply(state, game.parse_move(state, 0, choice.text), random.Random(0))
    result = game.outcome(after)
    assert result is not None and result.winners == {0}


def test_chameleon_blocks_a_chain_one_cell_short() -> None:
    # Horz (seat 1) needs only c3 for an x chain from a3 to e3; Vert must put an o there.
    game = find_game("chameleon")
    assert game is not None
    state = game.new_game({"size": 5}, random.Random(0))
    for ply, text in enumerate(["e5o", "a3x", "a1o", "b3x", "e1o", "d3x", "c5o", "e3x"]):
        state = game.apply(state, game.parse_move(state, ply % 2, text), random.Random(0))
    for level in LEVELS:
        assert (
            robot_move(game, seat_view(game, state, 0), level, random.Random(level)).text == "c3o"
        )


def test_no_seed_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two Entropy boards from different seeds whose public state is the same: the robot's
    # choice is the same, and it never derives the server's generator.
    game = find_game("entropy")
    assert game is not None
    options = game.validate_options({}, 2)
    by_state: dict[str, int] = {}
    seeds = None
    for seed in range(200):
        key = repr(game.dump(game.new_game(options, random.Random(seed))))
        if key in by_state:
            seeds = (by_state[key], seed)
            break
        by_state[key] = seed
    assert seeds is not None

    def forbidden(*args: object) -> random.Random:
        raise AssertionError("a robot derived the board's generator")

    monkeypatch.setattr(pbmserv.games.base, "move_rng", forbidden)
    choices = [
        robot_move(
            game,
            seat_view(game, game.new_game(options, random.Random(seed)), 0),
            2,
            random.Random(5),
        )
        for seed in seeds
    ]
    assert choices[0] == choices[1]


def test_the_robots_never_name_the_servers_generator() -> None:
    # The board's chance comes from move_rng(seed, ply); a robot draws from its own generator.
    import pbmserv.robots as package

    for path in Path(package.__file__).parent.glob("*.py"):
        source = path.read_text()
        assert "move_rng" not in source, path
        assert ".seed" not in source, path


def _hmdg() -> AnyGame:
    game = find_game("hmdg")
    assert game is not None
    if not _can_search(game):
        pytest.skip("HMDG has no determinize yet")
    return game


def test_a_seat_view_is_made_only_from_a_board_by_seat_view() -> None:
    game = find_game("extinction")
    assert game is not None
    state = game.new_game({}, random.Random(0))
    with pytest.raises(TypeError, match="made by seat_view"):
        SeatView(0, state)
    assert seat_view(game, state, 0).state is state  # no secrets: the board as it is


def test_hmdg_choice_ignores_the_opponents_secrets() -> None:
    # The property of the issue: moving the opponent's hidden pieces anywhere consistent with
    # the robot's view never changes its choice, in the move stage and when answering.
    game = _hmdg()
    options = game.validate_options({}, 2)
    checked: dict[str, int] = {}
    for seed in range(2):
        states = random_playout(game, options, seed).states[6:-1]
        for index, state in enumerate(states[:: max(1, len(states) // 5)]):
            seat = min(game.to_move(state).seats)
            stage = game.to_move(state).stage
            for j in range(2):
                varied = game.vary_hidden(state, seat, random.Random(j))
                # By construction: the robot is handed the same view of both boards...
                assert seat_view(game, varied, seat) == seat_view(game, state, seat)
                # ...which is not the board itself where the opponent has secrets.
                assert seat_view(game, state, seat).state is not state
                levels = (1, 2) if index == j == 0 else (1,)
                for level in levels:
                    k = seed * 100 + j * 10 + level
                    assert robot_move(
                        game, seat_view(game, state, seat), level, random.Random(k)
                    ) == robot_move(game, seat_view(game, varied, seat), level, random.Random(k))
                checked[stage] = checked.get(stage, 0) + (varied != state)
    assert checked.get("move", 0) >= 2 and checked.get("reveal", 0) >= 1, checked


@pytest.mark.parametrize(("game", "raw"), GAMES)
def test_values_are_between_0_and_1(game: AnyGame, raw: dict[str, str]) -> None:
    options = game.validate_options(raw, game.SPEC.players)
    playout = random_playout(game, options, 3)
    for state in [*playout.states[:: max(1, len(playout.states) // 3)], playout.final]:
        for seat in range(game.SPEC.players):
            value = robot_value(
                game, seat_view(game, state, seat), 1, random.Random(seat), cpu_seconds=QUICK
            )
            assert 0.0 <= value <= 1.0
    result = game.outcome(playout.final)
    assert result is not None
    for seat in range(game.SPEC.players):
        expected = 0.5 if not result.winners else float(seat in result.winners)
        assert (
            robot_value(game, seat_view(game, playout.final, seat), 3, random.Random(0)) == expected
        )


@pytest.mark.parametrize(("game", "raw"), GAMES)
def test_robots_play_whole_games(game: AnyGame, raw: dict[str, str]) -> None:
    options = game.validate_options(raw, game.SPEC.players)
    seed = 11
    state = game.new_game(options, random.Random(seed))
    rngs = [random.Random(f"robot{seat}") for seat in range(game.SPEC.players)]
    for ply in range(3000):
        seats = game.to_move(state).seats
        if not seats:
            break
        seat = min(seats)
        level = LEVELS[(ply // 2) % len(LEVELS)]
        text = robot_move(
            game, seat_view(game, state, seat), level, rngs[seat], cpu_seconds=0.01
        ).text
        assert_reads_back(game, state, seat, text)
        state = game.apply(state, game.parse_move(state, seat, text), move_rng(seed, ply))
    assert game.outcome(state) is not None


@pytest.mark.parametrize(("game", "raw"), GAMES)
def test_baselines_play_legal_moves(game: AnyGame, raw: dict[str, str]) -> None:
    for index, state in enumerate(positions(game, raw, seed=4, count=2)):
        seat = min(game.to_move(state).seats)
        for chooser in (greedy_move, random_move):
            move = chooser(game, state, seat, random.Random(index))
            assert_reads_back(game, state, seat, game.format_move(state, move))


def test_a_seat_not_to_move_and_an_unknown_level_are_refused() -> None:
    game = find_game("chameleon")
    assert game is not None
    state = game.new_game({"size": 5}, random.Random(0))
    with pytest.raises(ValueError):
        robot_move(game, seat_view(game, state, 1), 1, random.Random(0))
    with pytest.raises(ValueError):
        robot_move(game, seat_view(game, state, 0), 9, random.Random(0))


def test_a_level_scale_multiplies_only_its_own_levels_iterations() -> None:
    """Buffalo's top level spends its CPU headroom on more iterations; its lower levels and
    the other games keep theirs."""
    buffalo, owlman = find_game("buffalo"), find_game("owlman")
    scale = policy_for(buffalo).iteration_scale
    for level, factor in ((1, 1.0), (2, 1.0), (3, 1.45)):
        budget = _budget(buffalo, level, None, True)
        assert budget.iterations == round(BUDGETS[level].iterations * scale * factor)
    owlman_scale = policy_for(owlman).iteration_scale
    for level in LEVELS:
        budget = _budget(owlman, level, None, True)
        assert budget.iterations == round(BUDGETS[level].iterations * owlman_scale)
