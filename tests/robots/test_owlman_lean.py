"""Owlman's lean position (pbmserv.robots.policies.owlman_lean) plays as the rules do, in both
rule sets, and chooses as the policy does; the robots on it still see the game's end tactics."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import find_game
from pbmserv.games.owlman import (
    CLASSIC,
    DOC,
    EMPTY,
    HELPER,
    NIGHTFALL,
    OWL,
    OwlmanState,
    OwlMove,
    index,
)
from pbmserv.robots.lean_search import LeanSearch
from pbmserv.robots.levels import LEVELS, robot_move
from pbmserv.robots.mcts import Budget
from pbmserv.robots.policies import owlman, policy_for
from pbmserv.robots.policies.owlman_lean import OwlmanLean
from pbmserv.robots.tactics import LeanPlay
from pbmserv.robots.view import seat_view

GAME = find_game("owlman")
LEAN = OwlmanLean()


def _board(pieces: dict[str, str]) -> str:
    cells = [EMPTY] * 64
    for square, piece in pieces.items():
        cells[index(square)] = piece
    return "".join(cells)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    variant=st.sampled_from([NIGHTFALL, CLASSIC]),
    undo=st.sampled_from([0.0, 0.3, 0.6]),
)
def test_the_lean_position_plays_as_the_rules_do(seed: int, variant: str, undo: float) -> None:
    """At every position of a random game: the same moves, the same board and end after each
    of them (who won included), the policy's value, and a pop gives the position back. The
    games step back often (``undo``), so that classic Owlman meets the repetition rule."""
    assert GAME is not None
    rng = random.Random(seed)
    state = GAME.new_game({"variant": variant}, rng)
    last_move: dict[int, OwlMove] = {}
    while GAME.outcome(state) is None and state.ply < 240:
        seat = state.to_move
        legal = GAME.legal_moves(state, seat)
        position = LEAN.position(state)
        assert LEAN.ended(position) is None and LEAN.seat(position) == seat
        assert sorted(LEAN.moves(position)) == sorted(legal)
        assert set(LEAN.captures(position)) <= set(legal)
        before = position.key()
        for move in legal:
            LEAN.push(position, move)
            after = GAME.apply(state, move, rng)
            assert "".join(position.cells) == after.cells
            outcome, ended = GAME.outcome(after), LEAN.ended(position)
            if outcome is None:
                assert ended is None
                assert owlman.POLICY.evaluate is not None
                value = owlman.POLICY.evaluate(GAME, after)[after.to_move]
                assert LEAN.win_chance(position) == pytest.approx(value, abs=1e-12)
            else:
                assert ended is not None
                to_move = LEAN.seat(position)
                assert outcome.winners == {to_move if ended > 0 else 1 - to_move}
            LEAN.pop(position)
            assert position.key() == before
        # A side steps back (the reverse of its own last move) ``undo`` of the time, else the
        # policy's playout move or any move.
        previous, draw = last_move.get(seat), rng.random()
        back = [m for m in legal if previous and (m.src, m.dst) == (previous.dst, previous.src)]
        if back and draw < undo:
            move = back[0]
        elif draw < 0.8:
            move = owlman._owlman_choose(GAME, state, seat, legal, rng)
        else:
            move = legal[rng.randrange(len(legal))]
        last_move[seat] = move
        state = GAME.apply(state, move, rng)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), variant=st.sampled_from([NIGHTFALL, CLASSIC]))
def test_the_lean_moves_are_the_policys(seed: int, variant: str) -> None:
    """The tree's moves are the policy's candidates and a playout's move its chooser's, drawn
    with the same calls on the generator."""
    assert GAME is not None
    rng = random.Random(seed)
    state = GAME.new_game({"variant": variant}, rng)
    while GAME.outcome(state) is None:
        seat = state.to_move
        legal = GAME.legal_moves(state, seat)
        position = LEAN.position(state)
        candidates = owlman._owlman_candidates(GAME, state, seat, legal, rng)
        assert LEAN.tree_moves(position) == candidates
        for draw in range(3):
            chosen = owlman._owlman_choose(GAME, state, seat, legal, random.Random(draw))
            assert LEAN.playout_move(position, random.Random(draw)) == chosen
        state = GAME.apply(state, owlman._owlman_choose(GAME, state, seat, legal, rng), rng)


def test_a_repeated_move_is_left_out_in_classic() -> None:
    """Owlman played d5-c6 in this very position before: the rules and the lean position both
    forbid it, and the position after a capture forgets it."""
    assert GAME is not None
    cells = _board({"h1": DOC, "f3": HELPER, "h7": HELPER, "d5": OWL})
    state = OwlmanState(cells=cells, variant=CLASSIC, ply=11, played=frozenset({f"{cells}|d5-c6"}))
    legal = GAME.legal_moves(state, 1)
    position = LEAN.position(state)
    assert sorted(LEAN.moves(position)) == sorted(legal)
    assert all((m.src, m.dst) != (index("d5"), index("c6")) for m in LEAN.moves(position))
    scare = next(m for m in LEAN.moves(position) if m.capture == index("f3"))
    LEAN.push(position, scare)
    assert not position.played
    LEAN.pop(position)
    assert position.played


def test_the_lean_tree_leaves_its_position_as_it_found_it() -> None:
    assert GAME is not None
    policy = policy_for(GAME)
    lean = policy.tactics.lean if policy.tactics else None
    assert policy.lean_tree and isinstance(lean, LeanPlay)
    state = GAME.new_game({"variant": CLASSIC}, random.Random(0))
    search = LeanSearch(GAME, state, 0, policy, random.Random(1), lean)
    found = search.run(Budget(iterations=300, cpu_seconds=60.0))
    assert found.move in GAME.legal_moves(state, 0) and found.iterations == 300
    assert search.position.key() == LEAN.position(state).key()


@pytest.mark.parametrize("level", LEVELS)
def test_owlman_takes_doc_at_once(level: int) -> None:
    assert GAME is not None
    state = OwlmanState(_board({"h1": DOC, "d3": HELPER, "e4": HELPER, "e2": OWL}), ply=21)
    choice = robot_move(GAME, seat_view(GAME, state, 1), level, random.Random(level))
    assert choice.text == "e2-h1(xh1)"


@pytest.mark.parametrize("variant", [NIGHTFALL, CLASSIC])
@pytest.mark.parametrize("level", LEVELS)
def test_doc_threatened_on_h1_steps_off(level: int, variant: str) -> None:
    # Owlman on g4 swoops (3 + 1) onto h1 next: only Doc stepping off to g2 saves White.
    assert GAME is not None
    cells = _board({"h1": DOC, "d3": HELPER, "f5": HELPER, "c6": HELPER, "g4": OWL})
    state = OwlmanState(cells=cells, variant=variant, ply=10)
    choice = robot_move(GAME, seat_view(GAME, state, 0), level, random.Random(level))
    assert choice.text == "h1-g2"
