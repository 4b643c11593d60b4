"""Entropy's playout with Order in it (pbmserv.robots.policies.entropy_lookahead): the points
its players read from the changed lines are the whole board's change in score, its boards end
full with every counter of the round, and its players do what they are for."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games.entropy import GAME
from pbmserv.games.entropy.score import board_score
from pbmserv.games.entropy.state import STANDARD, Place, Slide
from pbmserv.robots.policies import entropy as policy_module
from pbmserv.robots.policies import entropy_lookahead as lookahead
from pbmserv.robots.policies.entropy_lookahead import (
    place_gain,
    played_then_dealt,
    slide_gain,
)

OPTIONS = ({"size": 7, "variant": STANDARD}, {"size": 5, "variant": STANDARD})


def random_position(seed: int, options: dict[str, Any]) -> Any:
    """A standard game played at random for part of its length, still in play."""
    rng = random.Random(seed)
    state = GAME.new_game(options, rng)
    for _ in range(rng.randrange(4 * options["size"] ** 2 - 2)):
        moves = GAME.legal_moves(state, min(GAME.to_move(state).seats))
        state = GAME.apply(state, rng.choice(moves), rng)
    return state


in_play = st.builds(random_position, st.integers(0, 2**32 - 1), st.sampled_from(OPTIONS))
seeds = st.integers(0, 2**32 - 1)


def total(cells: bytes | bytearray, size: int) -> int:
    return board_score(bytes(cells), size).total


@settings(max_examples=150, deadline=None)
@given(in_play)
def test_a_move_s_points_are_the_board_s_change(state: Any) -> None:
    size, cells = state.size, state.cells
    for move in GAME.legal_moves(state, state.mover):
        after = bytearray(cells)
        if isinstance(move, Place):
            after[move.cell] = move.colour
            gain = place_gain(cells, size, move.cell, move.colour)
        elif isinstance(move, Slide):
            after[move.dst], after[move.src] = cells[move.src], 0
            gain = slide_gain(cells, size, move.src, move.dst)
        else:
            continue
        assert gain == total(after, size) - total(cells, size), move


@settings(max_examples=150, deadline=None)
@given(in_play, seeds, st.integers(0, 6))
def test_the_board_ends_full_with_every_counter_of_the_round(
    state: Any, seed: int, turns: int
) -> None:
    size = state.size
    filled = played_then_dealt(state, random.Random(seed), turns)
    assert 0 not in filled
    assert sorted(filled) == sorted(c for c in range(1, size + 1) for _ in range(size))
    again = played_then_dealt(state, random.Random(seed), turns)
    assert again == filled  # one generator, one board


def mean_score(states: list[Any], turns: int) -> float:
    rng = random.Random(7)
    scores = [total(played_then_dealt(s, rng, turns), s.size) for s in states for _ in range(5)]
    return sum(scores) / len(scores)


def test_order_s_slides_raise_the_score_and_chaos_s_squares_lower_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over many positions, each simple player does what it is for: Order's slides (Chaos
    placing at random) give boards that score more than boards where Order never slides, and
    Chaos's squares (Order never sliding) boards that score less than random squares."""
    states = [random_position(seed, OPTIONS[0]) for seed in range(60)]
    states = [s for s in states if s.cells.count(0) >= 15]
    assert len(states) >= 10
    monkeypatch.setattr(lookahead, "CHAOS_CHOICES", 1)  # a random square
    monkeypatch.setattr(lookahead, "ORDER_CHOICES", 0)  # never a slide
    neither = mean_score(states, 10)
    monkeypatch.setattr(lookahead, "ORDER_CHOICES", 4)
    assert mean_score(states, 10) > neither + 2
    monkeypatch.setattr(lookahead, "ORDER_CHOICES", 0)
    monkeypatch.setattr(lookahead, "CHAOS_CHOICES", 3)
    assert mean_score(states, 10) < neither - 2


@settings(max_examples=60, deadline=None)
@given(in_play, seeds)
def test_a_widening_node_takes_in_the_move_best_at_once_for_its_mover(
    state: Any, seed: int
) -> None:
    """With every move weighed, the node takes in Order's slide that gains the most points or
    Chaos's placement that gives the fewest (pbmserv.robots.policies.entropy._entropy_expand)."""
    fresh = GAME.legal_moves(state, state.mover)
    policy = policy_module.POLICY
    assert policy.expand is not None
    old = policy_module.EXPANSION_SAMPLE
    policy_module.EXPANSION_SAMPLE = len(fresh)
    try:
        picked = fresh[policy.expand(GAME, state, state.mover, fresh, random.Random(seed))]
    finally:
        policy_module.EXPANSION_SAMPLE = old
    gains = [policy_module._gain(state, move) for move in fresh]
    if state.mover == state.order_seat:
        assert policy_module._gain(state, picked) == max(gains)
    else:
        assert policy_module._gain(state, picked) == min(gains)


@settings(max_examples=300, deadline=None)
@given(seeds, st.integers(1, 2**70))
def test_the_inlined_draw_is_randrange(seed: int, bound: int) -> None:
    """The playout's draws are the library's: the same numbers, the generator left alike."""
    ours, theirs = random.Random(seed), random.Random(seed)
    draw = lookahead.below(ours)
    assert [draw(bound) for _ in range(20)] == [theirs.randrange(bound) for _ in range(20)]
    assert ours.getstate() == theirs.getstate()


def ref_played_then_dealt(state: Any, rng: random.Random, turns: int) -> bytearray:
    """The playout as first written: the empty and held squares listed afresh each turn."""
    size, cells = state.size, bytearray(state.cells)

    def chaos(colour: int) -> None:
        empties = [i for i, c in enumerate(cells) if not c]
        best, best_gain = -1, 0
        for _ in range(lookahead.CHAOS_CHOICES):
            cell = empties[rng.randrange(len(empties))]
            gain = place_gain(cells, size, cell, colour)
            if best < 0 or gain < best_gain:
                best, best_gain = cell, gain
        cells[best] = colour

    def order() -> None:
        held = [i for i, c in enumerate(cells) if c]
        best, best_gain = None, 0
        for _ in range(lookahead.ORDER_CHOICES if held else 0):
            src = held[rng.randrange(len(held))]
            ray = lookahead.square_rays(size)[src][rng.randrange(4)]
            reach = next((n for n, square in enumerate(ray) if cells[square]), len(ray))
            if reach:
                dst = ray[rng.randrange(reach)]
                if (gain := slide_gain(cells, size, src, dst)) > best_gain:
                    best, best_gain = (src, dst), gain
        if best is not None:
            cells[best[1]], cells[best[0]] = cells[best[0]], 0

    bag = lookahead.bag_of(state.cells, size)
    if state.drawn:
        bag.remove(state.drawn)
        chaos(state.drawn)
    order()
    for _ in range(turns):
        if not bag:
            return cells
        at = rng.randrange(len(bag))
        colour, bag[at] = bag[at], bag[-1]
        bag.pop()
        chaos(colour)
        order()
    rng.shuffle(bag)
    for square, colour in zip([i for i, c in enumerate(cells) if not c], bag, strict=True):
        cells[square] = colour
    return cells


@settings(max_examples=200, deadline=None)
@given(in_play, seeds, st.integers(0, 6))
def test_the_kept_square_lists_play_as_listing_them_afresh(
    state: Any, seed: int, turns: int
) -> None:
    ours, theirs = random.Random(seed), random.Random(seed)
    assert played_then_dealt(state, ours, turns) == ref_played_then_dealt(state, theirs, turns)
    assert ours.getstate() == theirs.getstate()
