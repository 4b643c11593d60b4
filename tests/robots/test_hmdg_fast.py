"""HMDG's bit-mask playout and evaluation (pbmserv.robots.policies.hmdg_fast) against the plain
ones they replaced, kept here as the reference: over random positions (determinised as the
search determinises them, at either stage of a turn), the same values and the same draws of
the generator; and a robot's move, the same with the reference policy as with the new one."""

from __future__ import annotations

import pickle
import random
from dataclasses import astuple, replace
from typing import Any

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pbmserv.games.base import AnyGame
from pbmserv.games.hmdg import GAME
from pbmserv.games.hmdg.geometry import COL, FULL, MOVE, ROW, WINDOWS, points_of
from pbmserv.games.hmdg.state import Announce, HmdgState, TurnRecord
from pbmserv.robots.mcts import Budget, Search, outcome_values
from pbmserv.robots.policies import hmdg as policy_module
from pbmserv.robots.policies import hmdg_fast
from pbmserv.robots.policy import Policy, Values, for_seat, sigmoid

# --- the plain evaluation and playout, as the policy had them (the reference) ---------------

_REF_WINDOWS = tuple(window.mask for window in WINDOWS)
LINES = (ROW, COL)
_REF_WEIGHT = (0.0, 1.0, 4.0, 16.0, 64.0, 256.0)


def ref_evaluate(game: AnyGame, state: HmdgState) -> Values:
    if state.x_seat is None:
        return (0.5, 0.5)
    totals = []
    for side in (0, 1):
        own, blocked = state.pieces[side], state.shown[1 - side]
        total = 0.0
        for window in _REF_WINDOWS:
            if not window & blocked:
                total += _REF_WEIGHT[(own & window).bit_count()]
        totals.append(total)
    x_value = sigmoid((totals[0] - totals[1]) / 40.0)
    return for_seat(state.seat_of(0), x_value)


REF_POLICY = Policy(evaluate=ref_evaluate, cutoff=6)


def ref_legal_moves(state: HmdgState, seat: int) -> list[Any]:
    """The game's legal moves as it listed them before the announcements were made once."""
    if seat not in GAME.to_move(state).seats:
        return []
    if state.stage == MOVE:
        return [Announce(p, line) for p in points_of(state.free(state.mover)) for line in LINES]
    return GAME.legal_moves(state, seat)


def ref_playout(state: HmdgState, rng: random.Random) -> Values:
    """The search's ordinary playout under the reference policy (uniform moves, 6 of them)."""
    for _ in range(6):
        seats = GAME.to_move(state).seats
        if not seats:
            break
        moves = GAME.legal_moves(state, min(seats))
        state = GAME.apply(state, moves[rng.randrange(len(moves))], rng)
    result = GAME.outcome(state)
    if result is not None:
        return outcome_values(result, 2)
    return ref_evaluate(GAME, state)


# --- random positions -----------------------------------------------------------------------


def random_position(seed: int, plies: int) -> HmdgState:
    """A game played ``plies`` moves at random (fewer if it ends first)."""
    rng = random.Random(seed)
    state = GAME.new_game({}, rng)
    for _ in range(plies):
        seats = GAME.to_move(state).seats
        if not seats:
            break
        moves = GAME.legal_moves(state, min(seats))
        state = GAME.apply(state, rng.choice(moves), rng)
    return state


positions = st.builds(random_position, st.integers(0, 2**32 - 1), st.integers(0, 200)) | st.builds(
    random_position, st.integers(0, 2**32 - 1), st.integers(100, 200)
)


def searched(state: HmdgState, seat: int, seed: int) -> HmdgState:
    """What a search's iteration starts from: the seat's determinisation."""
    return GAME.determinize(state, seat, random.Random(seed))


# --- the properties -------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(positions, st.integers(0, 1), st.integers(0, 2**32 - 1))
def test_evaluation_is_the_reference(state: HmdgState, seat: int, seed: int) -> None:
    drawn = searched(state, seat, seed)
    assert hmdg_fast.evaluate_position(GAME, drawn) == ref_evaluate(GAME, drawn)


@settings(max_examples=300, deadline=None)
@given(positions, st.integers(0, 1), st.integers(0, 2**32 - 1))
def test_playout_is_the_reference(state: HmdgState, seat: int, seed: int) -> None:
    drawn = searched(state, seat, seed)
    if GAME.outcome(drawn) is not None:
        return
    fast_rng, ref_rng = random.Random(seed), random.Random(seed)
    fast = hmdg_fast.fast_playout(GAME, drawn, fast_rng)
    if drawn.x_seat is None:
        assert fast is None  # the ordinary playout plays the opening and the choice
        return
    assert fast == ref_playout(drawn, ref_rng)
    assert fast_rng.getstate() == ref_rng.getstate()


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_playouts_reach_every_ending(seed: int, play_seed: int) -> None:
    """Late positions, where fives, wins, passes and draws happen within a playout."""
    state = random_position(seed, 150)
    while GAME.outcome(state) is None and (state.pieces[0] | state.pieces[1]).bit_count() < 120:
        seats = GAME.to_move(state).seats
        moves = GAME.legal_moves(state, min(seats))
        state = GAME.apply(state, random.Random(play_seed).choice(moves), random.Random(0))
        play_seed += 1
        fast_rng, ref_rng = random.Random(play_seed), random.Random(play_seed)
        if GAME.outcome(state) is not None:
            break
        assert hmdg_fast.fast_playout(GAME, state, fast_rng) == ref_playout(state, ref_rng)
        assert fast_rng.getstate() == ref_rng.getstate()


@st.composite
def crowded_positions(draw: st.DrawFn) -> HmdgState:
    """Made-up positions on a crowded board, where passes and draws happen within a playout
    (random games seldom get there): any pieces, any of them revealed, some turns placed in
    secret, either stage."""

    def some_points(density: float) -> int:
        seed = draw(st.integers(0, 2**32 - 1))
        rng = random.Random(seed)
        return sum(1 << p for p in range(81) if rng.random() < density)

    densities = st.floats(0.2, 0.98) | st.sampled_from((0.95, 0.99, 1.0))
    pieces = [some_points(draw(densities)), some_points(draw(densities))]
    shown = [pieces[side] & some_points(draw(st.floats(0.0, 1.0))) for side in (0, 1)]
    mover = draw(st.integers(0, 1))
    free = FULL & ~pieces[mover] & ~(shown[0] | shown[1])
    assume(free)
    turns = tuple(
        TurnRecord(side, point, line, (), placed=True)
        for side, point, line in draw(
            st.lists(st.tuples(st.integers(0, 1), st.integers(0, 80), st.sampled_from(LINES)))
        )
    )
    pending = None
    if draw(st.booleans()):
        pending = Announce(draw(st.sampled_from(points_of(free))), draw(st.sampled_from(LINES)))
    return HmdgState(
        opening=0,
        x_seat=draw(st.integers(0, 1)),
        turns=turns,
        mover=mover,
        pending=pending,
        pieces=(pieces[0], pieces[1]),
        shown=(shown[0], shown[1]),
    )


@settings(max_examples=400, deadline=None)
@given(crowded_positions(), st.integers(0, 2**32 - 1))
def test_crowded_playouts_are_the_reference(state: HmdgState, seed: int) -> None:
    fast_rng, ref_rng = random.Random(seed), random.Random(seed)
    assert hmdg_fast.fast_playout(GAME, state, fast_rng) == ref_playout(state, ref_rng)
    assert fast_rng.getstate() == ref_rng.getstate()
    assert hmdg_fast.evaluate_position(GAME, state) == ref_evaluate(GAME, state)


def test_a_pending_announcement_is_answered_first() -> None:
    """A playout from the answer stage answers first, as the ordinary one does."""
    for seed in range(40):
        state = random_position(seed, 60)
        if state.pending is None or GAME.outcome(state) is not None:
            continue
        for draw in range(5):
            fast_rng, ref_rng = random.Random(draw), random.Random(draw)
            assert hmdg_fast.fast_playout(GAME, state, fast_rng) == ref_playout(state, ref_rng)
            assert fast_rng.getstate() == ref_rng.getstate()


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 90), st.integers(0, 2**32 - 1))
def test_a_search_is_the_reference(seed: int, plies: int, search_seed: int) -> None:
    """The search with the new policy finds the same move and values as with the reference
    (same iterations: the scale and the tree's candidates aside, the policies are one)."""
    state = random_position(seed, plies)
    seats = GAME.to_move(state).seats
    if not seats:
        return
    seat = min(seats)
    budget = Budget(iterations=60, cpu_seconds=60.0)
    new_policy = replace(policy_module.POLICY, iteration_scale=1.0, candidates=None)
    found = [
        Search(GAME, state, seat, chosen, random.Random(search_seed)).run(budget)
        for chosen in (new_policy, REF_POLICY)
    ]
    assert (found[0].move, found[0].value, found[0].root_value) == (
        found[1].move,
        found[1].value,
        found[1].root_value,
    )
    assert found[0].iterations == found[1].iterations == 60


@settings(max_examples=300, deadline=None)
@given(positions, st.integers(0, 1), st.integers(0, 2**32 - 1))
def test_legal_moves_are_the_reference(state: HmdgState, seat: int, seed: int) -> None:
    drawn = searched(state, seat, seed)
    for mover in (0, 1):
        listed = GAME.legal_moves(drawn, mover)
        assert listed == ref_legal_moves(drawn, mover)
        assert [hash(move) for move in listed] == [
            hash(astuple(move)) for move in ref_legal_moves(drawn, mover)
        ]
        listed.clear()  # a list of the caller's own: the next call lists them all again
        assert GAME.legal_moves(drawn, mover) == ref_legal_moves(drawn, mover)


def test_an_announcement_hashes_and_pickles_as_before() -> None:
    move = Announce(40, COL)
    assert hash(move) == hash((40, COL))
    assert move == Announce(40, COL) and move != Announce(40, ROW)
    assert {move: 1}[Announce(40, COL)] == 1
    copied = pickle.loads(pickle.dumps(move))
    assert copied == move and hash(copied) == hash(move)
    assert replace(move, line=ROW) == Announce(40, ROW)
    assert hash(replace(move, line=ROW)) == hash((40, ROW))


def test_the_policy_uses_the_fast_playout() -> None:
    policy = policy_module.POLICY
    assert policy.playout is hmdg_fast.fast_playout
    assert policy.evaluate is hmdg_fast.evaluate_position
    assert policy.cutoff == hmdg_fast.PLAYOUT_PLIES == 6
