"""How the tactics deepen (pbmserv.robots.tactics), on Extinction's lean position: remembering
good moves changes how many positions a read takes, never a score that decides which moves are
kept; a pass the node budget cuts short keeps, for the moves it did not finish, the scores of
the last whole pass; the evaluation's faster counting gives the old values."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import find_game
from pbmserv.robots.policies import extinction_tactics
from pbmserv.robots.policies.extinction_tactics import TACTICS, ExtinctionLean
from pbmserv.robots.tactics import Tactics, root_scores, safe_moves

GAME = find_game("extinction")
LEAN = ExtinctionLean()
UNLIMITED = replace(TACTICS, node_budget=10**9, keep_last_pass=False)
#: A game of the top level against the one below (bench/robots.py, L3 : L2, game 0).
PLAYED = """a4 b6 h4 Ba6 d3 e5 Bg5 Qc8 Qc1 f6 Bd2 Bb7 a5 Kd8 axb6 cxb6 e4 Nc6 Ra2 a5 Kd1 h5 Be3
b5 Bb6 Ke8 Nd2 Nh6 Rh3 Kf7 Be2 g6 Ngf3 Bd6 Be3 Bf8 Bxh6 Bxh6 d4 Nb4 c3 Na6 Rxa5 Nc7 Rxa8 Qxa8
Qb1 d5 dxe5 dxe4 Ne1 Qc8 Rh1 Bxd2 Kxd2 Rd8 Kc1 fxe5 Qa2 Kg7 Qa7 Rg8"""


def _middle_game(seed: int, plies: int) -> Any:
    """A position after ``plies`` random moves (captures preferred: material comes off)."""
    assert GAME is not None
    rng = random.Random(seed)
    state = GAME.new_game({}, rng)
    for _ in range(plies):
        legal = GAME.legal_moves(state, state.seat_to_move)
        if not legal or GAME.outcome(state) is not None:
            break
        state = GAME.apply(state, rng.choice(legal), rng)
    return state


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(4, 30))
def test_remembered_moves_keep_the_same_moves_with_the_same_scores(seed: int, plies: int) -> None:
    state = _middle_game(seed, plies)
    if GAME is None or GAME.outcome(state) is not None:
        return
    plain = replace(UNLIMITED, remember_moves=False)
    with_memory, _ = root_scores(UNLIMITED, state, 3)
    without, _ = root_scores(plain, state, 3)
    # The levels that read past one ply keep moves within a share of the margin below 1: a
    # move read to fall short by the whole margin or more has only a bound, which the order
    # of reading changes (one exactly at the margin could go either way, as before).
    for share in (0.15, 0.3):
        margin = TACTICS.margin * share
        kept = safe_moves(with_memory, margin)
        assert set(kept) == set(safe_moves(without, margin))
        exact = dict(without)
        assert all(score == exact[move] for move, score in with_memory if move in kept)


def test_remembered_moves_read_four_plies_in_far_fewer_positions() -> None:
    """Positions of a game the robots played (random moves leave positions where every
    capture is good and no order helps)."""
    assert GAME is not None
    state = GAME.new_game({}, random.Random(0))
    positions = []
    for text in PLAYED.split():
        state = GAME.apply(
            state, GAME.parse_move(state, state.seat_to_move, text), random.Random(0)
        )
        positions.append(state)
    positions = positions[8::6]
    plain = replace(UNLIMITED, remember_moves=False)
    remembered = sum(root_scores(UNLIMITED, state, 4)[1] for state in positions)
    forgotten = sum(root_scores(plain, state, 4)[1] for state in positions)
    assert remembered < 0.8 * forgotten, (remembered, forgotten)


def test_remembering_needs_a_lean_position_that_names_itself() -> None:
    class Nameless:
        pass

    with pytest.raises(TypeError, match="key"):
        Tactics(lean=Nameless(), margin=1.0, remember_moves=True)  # type: ignore[arg-type]


def test_the_key_tells_positions_apart_and_names_a_transposition_alike() -> None:
    assert GAME is not None
    start = LEAN.position(GAME.new_game({}, random.Random(0)))
    one = LEAN.key(start)
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):
        LEAN.push(start, chess.Move.from_uci(uci))
        assert LEAN.key(start) != one or uci == "f6g8"
    assert LEAN.key(start) == one  # the knights back home: the same position
    LEAN.push(start, chess.Move.from_uci("e2e4"))
    assert LEAN.key(start) != one


def test_a_pass_cut_short_keeps_the_last_whole_pass_for_the_moves_it_did_not_finish() -> None:
    state = _middle_game(3, 18)
    whole_two, nodes_two = root_scores(replace(UNLIMITED, remember_moves=False), state, 2)
    one_pass, nodes_one = root_scores(replace(UNLIMITED, remember_moves=False), state, 1)
    assert nodes_one < nodes_two
    # A budget that the first pass spends, then a little of the second: some moves finish
    # two plies (their scores as read without a budget), the rest keep the first pass's.
    budget = nodes_one + (nodes_two - nodes_one) // 4
    cut = replace(UNLIMITED, remember_moves=False, node_budget=budget, keep_last_pass=True)
    scored, _ = root_scores(cut, state, 5)
    first, second = dict(one_pass), dict(whole_two)
    finished = [move for move, score in scored if score == second[move] != first[move]]
    kept_last = [move for move, score in scored if score == first[move] != second[move]]
    changed = [move for move in second if first[move] != second[move]]
    assert all(score in (first[move], second[move]) for move, score in scored)
    assert finished and kept_last, (len(finished), len(kept_last), len(changed))
    # Without keep_last_pass, an unfinished move is read shallower than either pass.
    loose = replace(cut, keep_last_pass=False)
    loose_scores, _ = root_scores(loose, state, 5)
    assert any(score not in (first[m], second[m]) for m, score in loose_scores)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), plies=st.integers(0, 60))
def test_the_evaluation_counts_as_the_plain_count_did(seed: int, plies: int) -> None:
    """The kinds' masks read straight off the board, as pieces_mask read them."""
    board = LEAN.position(_middle_game(seed, plies))
    for color in chess.COLORS:
        expected = 0.0
        for kind in (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING):
            count = board.pieces_mask(kind, color).bit_count()
            expected += extinction_tactics.VALUES[kind] * count
            if count == 1:
                expected -= extinction_tactics.LAST_OF_KIND
            elif count == 2:
                expected -= extinction_tactics.TWO_OF_KIND
        standing = extinction_tactics._standing(board, color)
        advance = standing - expected
        assert advance >= 0 and round(advance / extinction_tactics.ADVANCE, 6).is_integer()
        last = 0
        for kind in chess.PIECE_TYPES:
            pieces = board.pieces_mask(kind, color)
            if pieces.bit_count() == 1:
                last |= pieces
        assert extinction_tactics.last_of_kind(board, color) == last
