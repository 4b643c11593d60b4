"""HMDG's determinize: a whole position drawn for a computer player from what its seat sees.

The property that matters: the draw depends on the seat's view and the generator alone, so
positions that look the same to the seat draw the same state (checked against ``vary_hidden``
and against the draws themselves, which look the same to the seat too); and every draw is a
real game (its moves replay under the rules) that looks the same to the seat.
"""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games.base import PUBLIC
from pbmserv.games.hmdg import GAME
from pbmserv.games.hmdg.geometry import O_SIDE, X_SIDE, fives, line_mask, points_of
from pbmserv.games.hmdg.puzzle import puzzle
from pbmserv.games.hmdg.state import Announce, HmdgState
from pbmserv.games.testing import random_playout
from pbmserv.games.testing.positions import seen_by
from tests.games.test_hmdg import (
    ALICE,
    BOB,
    O_COLOUR,
    RNG,
    X_COLOUR,
    play,
    pt,
    replayed,
    seat_to_act,
    start,
    turn,
)


def drawn(state: HmdgState, seat: int, k: int) -> HmdgState:
    return GAME.determinize(state, seat, random.Random(k))


def dumped(state: HmdgState) -> dict:
    return json.loads(json.dumps(GAME.dump(state)))


def assert_a_real_game_that_looks_the_same(state: HmdgState, seat: int, draw: HmdgState) -> None:
    """``draw`` replays move by move under the rules, loads back, takes every legal move, and
    shows ``seat`` (and the public) what ``state`` shows them; ``seat``'s own secrets are
    as they were."""
    data = dumped(draw)
    assert replayed(data) == draw
    assert GAME.dump(GAME.load(data)) == data
    for viewer in (seat, PUBLIC):
        assert seen_by(GAME, draw, viewer) == seen_by(GAME, state, viewer)
    for mover in GAME.to_move(draw).seats:
        for move in GAME.legal_moves(draw, mover):
            GAME.apply(draw, move, RNG)
    side = state.side_of(seat)
    if side is not None:
        assert draw.pieces[side] == state.pieces[side]
        assert [t for t in draw.turns if t.side == side] == [
            t for t in state.turns if t.side == side
        ]
        if state.mover == side:
            assert draw.pending == state.pending


def colour_game(seed: int) -> list[HmdgState]:
    """Every position of a game played on each side's colour while it can (no five there), the
    answers mostly revealing: the board fills and a side may have to pass."""
    rng = random.Random(seed)
    state = play(GAME.new_game({}, RNG), "A1", rng.choice("xo"))
    states = [state]
    while GAME.outcome(state) is None:
        seat = seat_to_act(state)
        moves = GAME.legal_moves(state, seat)
        if GAME.to_move(state).stage == "reveal":
            move = rng.choice(moves) if rng.random() < 0.8 else moves[-1]
        else:
            colour = X_COLOUR if state.mover == X_SIDE else O_COLOUR
            move = rng.choice(
                [m for m in moves if isinstance(m, Announce) and m.point in colour] or moves
            )
        state = GAME.apply(state, move, RNG)
        states.append(state)
    return states


@given(st.integers(0, 2**32), st.floats(0, 1), st.integers(0, 2**16))
@settings(max_examples=40, deadline=None)
def test_the_draw_depends_only_on_what_the_seat_sees(seed: int, when: float, k: int) -> None:
    states = random_playout(GAME, {}, seed).states
    state = states[int(when * (len(states) - 1))]
    rng = random.Random(seed)
    for seat in (ALICE, BOB):
        draw = drawn(state, seat, k)
        for _ in range(3):
            other = GAME.vary_hidden(state, seat, rng)
            if state.x_seat is not None:
                opponent = O_SIDE if state.side_of(seat) == X_SIDE else X_SIDE
                assert puzzle(other, opponent) == puzzle(state, opponent)
            assert GAME.dump(drawn(other, seat, k)) == GAME.dump(draw)
        # A draw looks the same to the seat as the state, so it draws the same again.
        again = drawn(drawn(state, seat, k + 1), seat, k)
        assert GAME.dump(again) == GAME.dump(draw)
        assert_a_real_game_that_looks_the_same(state, seat, draw)


def test_every_position_of_random_games_draws_real_games() -> None:
    for seed in range(3):
        states = random_playout(GAME, {}, seed).states
        for state in states[:: max(1, len(states) // 40)]:
            loaded = GAME.load(dumped(state))  # its turns read only when first needed
            for seat in (ALICE, BOB):
                draw = drawn(state, seat, seed)
                assert_a_real_game_that_looks_the_same(state, seat, draw)
                assert GAME.dump(drawn(loaded, seat, seed)) == GAME.dump(draw)


def test_passes_and_full_boards_are_drawn_as_the_log_says() -> None:
    """Near the end of a game that fills the board, the secret pieces of the side that passed
    (or did not) must leave it no point (or one) as the log says."""
    for seed in (1, 4, 6):
        states = colour_game(seed)
        assert any(t.passed for t in states[-1].turns)
        for state in states[-16:-1]:
            for seat in (ALICE, BOB):
                draw = drawn(state, seat, seed)
                assert_a_real_game_that_looks_the_same(state, seat, draw)
                other = drawn(state, seat, seed + 1)
                assert GAME.dump(drawn(other, seat, seed)) == GAME.dump(draw)


def test_nothing_is_drawn_where_nothing_is_secret() -> None:
    opened = play(GAME.new_game({}, RNG), "E5")
    final = random_playout(GAME, {}, 1).final
    all_answered = turn(start(), "C3 row")  # O's C3: secret from X
    all_answered = turn(turn(all_answered, "D3 col"), "D5 row", "reveal D3")  # X's D3: shown
    for state in (GAME.new_game({}, RNG), opened, final):
        for seat in (ALICE, BOB):
            assert drawn(state, seat, 0) is state
    # X's secret D3 was revealed since: the only placement left is the true one.
    assert all_answered.hidden(X_SIDE) == 0
    assert {json.dumps(GAME.dump(drawn(all_answered, BOB, k))) for k in range(5)} == {
        json.dumps(GAME.dump(all_answered))
    }
    assert drawn(all_answered, ALICE, 0) is not all_answered  # O's C3 is secret from X


def test_draws_differ_with_the_generator_where_there_is_room() -> None:
    state = start()  # alice X, bob O
    for o_move, x_move in [("C3 row", "J1 col"), ("G7 col", "J9 row"), ("A5 row", "H2 col")]:
        state = turn(turn(state, o_move), x_move)
    placements = {
        tuple(t.point for t in drawn(state, ALICE, k).turns if t.side == O_SIDE) for k in range(30)
    }
    assert len(placements) >= 20  # three turns of 8 or 9 points each
    lines = [line_mask(pt("C3"), "row"), line_mask(pt("G7"), "col"), line_mask(pt("A5"), "row")]
    for points in placements:  # each on its announced line
        assert all(line >> point & 1 for point, line in zip(points, lines, strict=True))


def test_the_pending_point_is_drawn_on_its_line_while_the_seat_is_to_answer() -> None:
    state = turn(turn(start(), "C3 row"), "J1 col")
    state = play(state, "F1 row")  # O announces row F: X's J1 column crosses it, X is asked
    assert GAME.to_move(state).seats == {ALICE} and GAME.to_move(state).stage == "reveal"
    pendings = {drawn(state, ALICE, k).pending for k in range(30)}
    assert len(pendings) >= 5
    row_f = line_mask(pt("F1"), "row")
    assert all(p is not None and row_f >> p.point & 1 and p.line == "row" for p in pendings)
    assert drawn(state, BOB, 3).pending == state.pending  # O's own announcement


def test_a_five_announced_in_secret_is_drawn_as_a_five() -> None:
    """O makes a five in row C in secret: every draw for X holds a five of O's there, made by
    the turn that announced it (the replay in the check gives the flags), and the draws differ."""
    state = start()
    for column in range(1, 6):
        state = turn(turn(state, f"C{column} row"), f"J{column} row")
    assert [t.five for t in state.turns if t.side == O_SIDE] == [False] * 4 + [True]
    windows = set()
    for k in range(20):
        draw = drawn(state, ALICE, k)
        assert_a_real_game_that_looks_the_same(state, ALICE, draw)
        (five,) = fives(draw.pieces[O_SIDE])
        assert points_of(five.mask) == points_of(draw.pieces[O_SIDE])
        windows.add(five.mask)
    assert len(windows) >= 2
