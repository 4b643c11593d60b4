"""Entropy made cheaper for the robots, against the plain code it replaced, kept here as the
reference: the policy's dealing and scoring (pbmserv.robots.policies.entropy_fast) and the rule
module's cached moves, prompts and states. Over random positions of every size and variant:
the same boards, values, moves, prompts and positions, and the same draws of the generator; and
a robot's search, the same with the reference policy as with the new one."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games.base import AnyGame, Turn
from pbmserv.games.entropy import GAME
from pbmserv.games.entropy.prompts import _compose_task
from pbmserv.games.entropy.rules import (
    _bump,
    _present,
    _result,
    _round_start,
    _slide_problem,
    _stockings,
)
from pbmserv.games.entropy.score import board_score
from pbmserv.games.entropy.state import (
    _COLUMNS,
    _LETTERS,
    ENTROPY2,
    OVER,
    PLACE,
    RESERVE_SIZE,
    SLIDE,
    STANDARD,
    STOCK,
    EntropyMove,
    EntropyState,
    Pass,
    Place,
    Slide,
    Stock,
    _draw,
    _slides,
    square_name,
)
from pbmserv.robots.mcts import Budget, Search
from pbmserv.robots.policies import entropy as policy_module
from pbmserv.robots.policies.entropy_fast import board_total, deal
from pbmserv.robots.policies.entropy_lookahead import played_then_dealt
from pbmserv.robots.policy import Policy, Values, for_seat, sigmoid

# --- the reference: the policy as it was ----------------------------------------------------

_RANDOM_SCORE = {5: (32.0, 8.4), 7: (54.5, 12.3)}


def ref_values(state: Any, projected: float) -> Values:
    mean, spread = _RANDOM_SCORE[state.size]
    against = mean if state.round == 1 else board_score(state.first, state.size).total
    return for_seat(state.order_seat, sigmoid(1.6 * (projected - against) / spread))


def ref_fill(cells: bytes, size: int, rng: random.Random) -> bytearray:
    counters = [c for c in range(1, size + 1) for _ in range(size - cells.count(c))]
    rng.shuffle(counters)
    filled = bytearray(cells)
    dealt = iter(counters)
    for i, code in enumerate(filled):
        if not code:
            filled[i] = next(dealt)
    return filled


def ref_playout(game: AnyGame, state: Any, rng: random.Random) -> Values | None:
    """Entropy II's playout deals at once; standard Entropy's plays a few turns first
    (tests/robots/test_entropy_lookahead.py), its board scored here by the plain scorer."""
    if state.variant == STANDARD:
        filled = played_then_dealt(state, rng, policy_module.LOOKAHEAD_TURNS)
    else:
        filled = ref_fill(state.cells, state.size, rng)
    return ref_values(state, board_score(bytes(filled), state.size).total)


def ref_evaluate(game: AnyGame, state: Any) -> Values:
    size, cells = state.size, state.cells
    mean, _ = _RANDOM_SCORE[size]
    empty = cells.count(0) / (size * size)
    return ref_values(state, board_score(cells, size).total + mean * empty)


#: The same widening choice as the policy's (it reads the board, not the playout).
REF_POLICY = Policy(
    playout=ref_playout,
    evaluate=ref_evaluate,
    widen=4.0,
    expand=policy_module.POLICY.expand,
)


# --- the reference: the rule module's moves and positions as they were ---------------------


def ref_legal_moves(state: EntropyState, seat: int) -> list[EntropyMove]:
    if seat != state.mover:
        return []
    if state.stage == PLACE:
        colours = [state.drawn] if state.variant == STANDARD else _present(state.reserve)
        empty = [i for i, c in enumerate(state.cells) if not c]
        return [Place(cell, colour) for cell in empty for colour in colours]
    if state.stage == STOCK:
        return [Stock(counts) for counts in _stockings(state.supply(), RESERVE_SIZE)]
    gives = _present(state.supply()) if state.variant == ENTROPY2 else []
    gives = gives or [0]
    moves: list[EntropyMove] = [Pass(give) for give in gives]
    for src, dst in _slides(state.cells, state.size):
        moves.extend(Slide(src, dst, give) for give in gives)
    return moves


def ref_square_name(cell: int, size: int) -> str:
    row, col = divmod(cell, size)
    return f"{_COLUMNS[col]}{row + 1}"


def ref_after_place(state: EntropyState, move: Place, rng: random.Random) -> EntropyState:
    text = f"{ref_square_name(move.cell, state.size)} {_LETTERS[move.colour - 1]}"
    cells = bytearray(state.cells)
    cells[move.cell] = move.colour
    reserve = state.reserve
    if state.variant == ENTROPY2:
        reserve = _bump(reserve, move.colour, -1)
    ply = state.ply + 1
    if 0 in cells:
        return replace(
            state,
            stage=SLIDE,
            cells=bytes(cells),
            reserve=reserve,
            drawn=0,
            ply=ply,
            last_move=text,
        )
    if state.round == 1:
        start = _round_start(state.size, state.variant, 2, rng, bytes(cells))
        return replace(start, ply=ply, last_move=text)
    final = replace(
        state, stage=OVER, cells=bytes(cells), reserve=reserve, drawn=0, ply=ply, last_move=text
    )
    return replace(final, result=_result(final))


def ref_after_order(state: EntropyState, move: Slide | Pass, rng: random.Random) -> EntropyState:
    size = state.size
    text = "pass"
    cells = state.cells
    if isinstance(move, Slide):
        text = f"{ref_square_name(move.src, size)}-{ref_square_name(move.dst, size)}"
        moved = bytearray(cells)
        moved[move.dst], moved[move.src] = moved[move.src], 0
        cells = bytes(moved)
    if move.give:
        text += f" give {_LETTERS[move.give - 1]}"
    reserve, drawn = state.reserve, 0
    if move.give:
        reserve = _bump(reserve, move.give, 1)
    if state.variant == STANDARD:
        drawn = _draw(tuple(size - cells.count(c) for c in range(1, size + 1)), rng)
    return replace(
        state,
        stage=PLACE,
        cells=cells,
        reserve=reserve,
        drawn=drawn,
        ply=state.ply + 1,
        last_move=text,
    )


# --- random positions -----------------------------------------------------------------------

OPTIONS = (
    {"size": 7, "variant": STANDARD},
    {"size": 5, "variant": STANDARD},
    {"size": 7, "variant": ENTROPY2},
    {"size": 5, "variant": ENTROPY2},
)


def game_length(options: dict[str, Any]) -> int:
    """The plies of a whole game: two rounds, each a move per square and one between them
    (Entropy II's stocking in place of the last)."""
    area = options["size"] ** 2
    return 2 * (2 * area - (options["variant"] == STANDARD))


def random_position(seed: int, options: dict[str, Any], in_play: bool) -> EntropyState:
    """A game played at random for some of its length (any share of it, either round)."""
    rng = random.Random(seed)
    state = GAME.new_game(options, rng)
    for _ in range(rng.randrange(game_length(options) + (not in_play))):
        moves = GAME.legal_moves(state, min(GAME.to_move(state).seats))
        state = GAME.apply(state, rng.choice(moves), rng)
    return state


positions = st.builds(
    random_position, st.integers(0, 2**32 - 1), st.sampled_from(OPTIONS), st.just(False)
)
#: Positions still in play (the playout and the search are asked only about those).
in_play = st.builds(
    random_position, st.integers(0, 2**32 - 1), st.sampled_from(OPTIONS), st.just(True)
)
seeds = st.integers(0, 2**32 - 1)


def boards(size: int, empties: bool) -> st.SearchStrategy[bytes]:
    colour = st.integers(0 if empties else 1, size)
    return st.lists(colour, min_size=size * size, max_size=size * size).map(bytes)


any_board = st.sampled_from((5, 7)).flatmap(
    lambda size: st.tuples(st.just(size), boards(size, True) | boards(size, False))
)


# --- the policy's parts ---------------------------------------------------------------------


@settings(max_examples=400)
@given(any_board)
def test_the_whole_board_score_is_the_sum_of_the_lines(sized: tuple[int, bytes]) -> None:
    size, cells = sized
    assert board_total(cells, size) == board_score(cells, size).total


def test_the_score_of_boards_with_long_palindromes() -> None:
    # Random boards seldom hold the longest palindromes; these do, in rows and columns alike.
    for size in (5, 7):
        for cells in (
            bytes([1]) * (size * size),
            bytes([(col % 2) + 1 for _ in range(size) for col in range(size)]),
            bytes([min(col, size - 1 - col) + 1 for _ in range(size) for col in range(size)]),
            bytes([min(row, size - 1 - row) + 1 for row in range(size) for _ in range(size)]),
            bytes([0 if (cell * 7) % 5 == 0 else 1 for cell in range(size * size)]),
        ):
            assert board_total(cells, size) == board_score(cells, size).total


@settings(max_examples=200)
@given(in_play, seeds)
def test_the_deal_is_the_shuffle(state: EntropyState, seed: int) -> None:
    mine, theirs = random.Random(seed), random.Random(seed)
    assert deal(state.cells, state.size, mine) == ref_fill(state.cells, state.size, theirs)
    assert mine.getstate() == theirs.getstate()  # the very same draws


class OwnDraws(random.Random):
    """A generator of another kind, whose shuffle draws differently from random.Random's."""

    def random(self) -> float:
        return (super().random() * 3) % 1.0


@settings(max_examples=50)
@given(in_play, seeds)
def test_another_generator_deals_by_its_own_shuffle(state: EntropyState, seed: int) -> None:
    mine, theirs = OwnDraws(seed), OwnDraws(seed)
    assert deal(state.cells, state.size, mine) == ref_fill(state.cells, state.size, theirs)
    assert mine.getstate() == theirs.getstate()


@settings(max_examples=200)
@given(in_play, seeds)
def test_the_playout_and_the_evaluation_give_the_same_values(
    state: EntropyState, seed: int
) -> None:
    policy = policy_module.POLICY
    assert policy.playout is not None and policy.evaluate is not None
    mine, theirs = random.Random(seed), random.Random(seed)
    assert policy.playout(GAME, state, mine) == ref_playout(GAME, state, theirs)
    assert mine.getstate() == theirs.getstate()
    assert policy.evaluate(GAME, state) == ref_evaluate(GAME, state)


@settings(max_examples=10, deadline=None)
@given(in_play, seeds)
def test_a_search_finds_the_same_as_with_the_reference(state: EntropyState, seed: int) -> None:
    seat = min(GAME.to_move(state).seats)
    policy = replace(policy_module.POLICY, iteration_scale=1.0)
    budget = Budget(iterations=150, cpu_seconds=60.0)
    mine = Search(GAME, state, seat, policy, random.Random(seed)).run(budget)
    theirs = Search(GAME, state, seat, REF_POLICY, random.Random(seed)).run(budget)
    assert (mine.move, mine.value, mine.root_value, mine.iterations) == (
        theirs.move,
        theirs.value,
        theirs.root_value,
        theirs.iterations,
    )


# --- the rule module's parts ----------------------------------------------------------------


@settings(max_examples=300)
@given(positions)
def test_the_legal_moves_are_the_same_in_the_same_order(state: EntropyState) -> None:
    for seat in (0, 1):
        moves = GAME.legal_moves(state, seat)
        assert moves == ref_legal_moves(state, seat)
        moves.clear()  # the caller's own list: the cached moves are untouched
        assert GAME.legal_moves(state, seat) == ref_legal_moves(state, seat)


@settings(max_examples=300)
@given(in_play, seeds)
def test_a_move_leads_to_the_same_position_with_the_same_draws(
    state: EntropyState, seed: int
) -> None:
    seat = min(GAME.to_move(state).seats)
    moves = GAME.legal_moves(state, seat)
    move = moves[random.Random(seed).randrange(len(moves))]
    mine, theirs = random.Random(seed), random.Random(seed)
    after = GAME.apply(state, move, mine)
    if isinstance(move, Place):
        assert after == ref_after_place(state, move, theirs)
    elif isinstance(move, Slide | Pass):
        assert after == ref_after_order(state, move, theirs)
    assert mine.getstate() == theirs.getstate()


@settings(max_examples=300)
@given(positions)
def test_the_turn_and_its_prompt_are_the_same(state: EntropyState) -> None:
    turn = GAME.to_move(state)
    seat = state.mover
    if seat is None:
        assert turn == Turn(seats=frozenset(), stage=OVER)
    else:
        assert turn == Turn(frozenset({seat}), state.stage, {seat: _compose_task(state)})


@settings(max_examples=200)
@given(in_play, st.integers(0, 48), st.integers(0, 48))
def test_a_slide_is_refused_for_the_same_reason(state: EntropyState, src: int, dst: int) -> None:
    area = state.size * state.size
    src, dst = src % area, dst % area
    assert _slide_problem(state, src, dst) == ref_slide_problem(state, src, dst)


def test_every_square_keeps_its_name() -> None:
    for size in (5, 7):
        for cell in range(-size, size * size + size):
            assert square_name(cell, size) == ref_square_name(cell, size)


def ref_slide_problem(state: EntropyState, src: int, dst: int) -> str | None:
    from pbmserv.games.entropy.state import _named, square_rays

    size, cells = state.size, state.cells
    src_name, dst_name = ref_square_name(src, size), ref_square_name(dst, size)
    if not cells[src]:
        return f"there is no counter on {src_name} to slide"
    if src == dst:
        return f"{src_name}-{dst_name} does not move the counter; write pass to leave it"
    if cells[dst]:
        return f"{dst_name} already holds a {_named(cells[dst])} counter"
    for ray in square_rays(size)[src]:
        if dst in ray:
            for cell in ray[: ray.index(dst)]:
                if cells[cell]:
                    return (
                        f"the {_named(cells[cell])} counter on {ref_square_name(cell, size)} "
                        "is in the way; counters slide over empty squares only"
                    )
            return None
    return f"a counter slides like a rook, along its row or column; {dst_name} is neither"
