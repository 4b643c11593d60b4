"""Entropy's rules: what makes a move illegal, the position after a move (with the counter
drawn from the bag), and the result."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from pbmserv.games.base import Outcome, Termination
from pbmserv.games.entropy.score import board_score
from pbmserv.games.entropy.state import (
    COLOURS,
    ENTROPY2,
    OVER,
    PLACE,
    RESERVE_SIZE,
    SLIDE,
    STANDARD,
    STOCK,
    EntropyState,
    Pass,
    Place,
    Slide,
    Stock,
    _draw,
    _named,
    square_name,
    square_rays,
)

if TYPE_CHECKING:
    from pbmserv.games.entropy.state import EntropyMove

# --- rules -----------------------------------------------------------------------------------


def _present(counts: tuple[int, ...]) -> list[int]:
    """The colour codes with a count above 0."""
    return [c + 1 for c, n in enumerate(counts) if n]


def _stockings(supply: tuple[int, ...], total: int, start: int = 0) -> Iterator[tuple[int, ...]]:
    """Every way to take ``total`` counters from ``supply`` (from colour ``start`` on)."""
    if start == len(supply) - 1:
        if total <= supply[start]:
            yield (total,)
        return
    for n in range(min(total, supply[start]), -1, -1):
        for rest in _stockings(supply, total - n, start + 1):
            yield (n, *rest)


def _slide_problem(state: EntropyState, src: int, dst: int) -> str | None:
    """Why the slide from ``src`` to ``dst`` is not allowed, or None."""
    size, cells = state.size, state.cells
    if not cells[src]:
        return f"there is no counter on {square_name(src, size)} to slide"
    if src == dst:
        name = square_name(src, size)
        return f"{name}-{name} does not move the counter; write pass to leave it"
    if cells[dst]:
        return f"{square_name(dst, size)} already holds a {_named(cells[dst])} counter"
    for ray in square_rays(size)[src]:
        if dst in ray:
            for cell in ray[: ray.index(dst)]:
                if cells[cell]:
                    return (
                        f"the {_named(cells[cell])} counter on {square_name(cell, size)} is in "
                        "the way; counters slide over empty squares only"
                    )
            return None
    return (
        "a counter slides like a rook, along its row or column; "
        f"{square_name(dst, size)} is neither"
    )


def _stock_problem(state: EntropyState, counts: tuple[int, ...]) -> str | None:
    supply = state.supply()
    for c, n in enumerate(counts):
        if n > supply[c]:
            return f"the supply has only {supply[c]} {COLOURS[c][1]} counters"
    return None


#: The stage each kind of move is made in.
_STAGE_OF: dict[type, str] = {Place: PLACE, Stock: STOCK, Slide: SLIDE, Pass: SLIDE}


def _problem(state: EntropyState, move: EntropyMove) -> str | None:
    """Why ``move`` cannot be applied in ``state`` (apply's check of a move it was handed)."""
    size = state.size
    expected = _STAGE_OF.get(type(move))
    if expected != state.stage:
        return f"it is the {state.stage} stage, not a {expected or 'known'} move"
    if isinstance(move, Stock):
        if (
            state.variant == STANDARD
            or len(move.counts) != size
            or sum(move.counts) != RESERVE_SIZE
        ):
            return "not a stocking of 5 counters"
        return _stock_problem(state, move.counts)
    if isinstance(move, Place):
        if not (0 <= move.cell < size * size) or state.cells[move.cell]:
            return "that square is not empty"
        if state.variant == STANDARD:
            return None if move.colour == state.drawn else "that is not the counter drawn"
        ok = 1 <= move.colour <= size and state.reserve[move.colour - 1]
        return None if ok else "that colour is not in Chaos's reserve"
    supply = state.supply() if state.variant == ENTROPY2 else ()
    if move.give:
        if not (1 <= move.give <= len(supply) and supply[move.give - 1]):
            return "the supply has no such counter to hand over"
    elif any(supply):
        return "Order must hand Chaos a counter from the supply"
    if isinstance(move, Slide):
        if not (0 <= move.src < size * size and 0 <= move.dst < size * size):
            return "that square is not on the board"
        return _slide_problem(state, move.src, move.dst)
    return None


def _round_start(
    size: int, variant: str, round_: int, rng: random.Random, first: bytes | None
) -> EntropyState:
    """A round's first position: an empty board, and Chaos's first draw in standard Entropy."""
    empty = bytes(size * size)
    reserve = (0,) * size
    if variant == STANDARD:
        drawn = _draw((size,) * size, rng)
        return EntropyState(size, variant, round_, PLACE, empty, reserve, drawn, first)
    return EntropyState(size, variant, round_, STOCK, empty, reserve, 0, first)


def _after_place(state: EntropyState, move: Place, rng: random.Random, text: str) -> EntropyState:
    cells = bytearray(state.cells)
    cells[move.cell] = move.colour
    reserve = state.reserve
    if state.variant == ENTROPY2:
        reserve = _bump(reserve, move.colour, -1)
    ply = state.ply + 1
    if 0 in cells:
        # Built whole rather than by dataclasses.replace, which costs twice as much (a robot's
        # search applies thousands of moves a second).
        return EntropyState(
            state.size,
            state.variant,
            state.round,
            SLIDE,
            bytes(cells),
            reserve,
            0,
            state.first,
            ply,
            text,
            state.result,
        )
    if state.round == 1:  # the board is full: round 2 starts with the roles swapped
        start = _round_start(state.size, state.variant, 2, rng, bytes(cells))
        return replace(start, ply=ply, last_move=text)
    final = replace(
        state, stage=OVER, cells=bytes(cells), reserve=reserve, drawn=0, ply=ply, last_move=text
    )
    return replace(final, result=_result(final))


def _after_order(
    state: EntropyState, move: Slide | Pass, rng: random.Random, text: str
) -> EntropyState:
    cells = state.cells
    if isinstance(move, Slide):
        moved = bytearray(cells)
        moved[move.dst], moved[move.src] = moved[move.src], 0
        cells = bytes(moved)
    reserve, drawn = state.reserve, 0
    if move.give:
        reserve = _bump(reserve, move.give, 1)
    if state.variant == STANDARD:
        size = state.size
        drawn = _draw(tuple([size - cells.count(c) for c in range(1, size + 1)]), rng)
    return EntropyState(  # built whole, as in _after_place
        state.size,
        state.variant,
        state.round,
        PLACE,
        cells,
        reserve,
        drawn,
        state.first,
        state.ply + 1,
        text,
        state.result,
    )


def _bump(counts: tuple[int, ...], colour: int, by: int) -> tuple[int, ...]:
    """``counts`` with the count of colour code ``colour`` changed by ``by``."""
    return (*counts[: colour - 1], counts[colour - 1] + by, *counts[colour:])


def _result(state: EntropyState) -> Outcome:
    """The outcome once round 2's board is full."""
    assert state.first is not None
    first = board_score(state.first, state.size).total
    second = board_score(state.cells, state.size).total
    second_order = state.order_seat  # Order of round 2; Order of round 1 is the other seat
    scores = {second_order: second, 1 - second_order: first}
    if first == second:
        return Outcome(
            frozenset(),
            f"both scored {first} points as Order",
            scores,
            termination=Termination.SCORE,
        )
    if second > first:
        return Outcome(
            frozenset({second_order}),
            f"{second} points as Order in round 2, against {first} in round 1",
            scores,
            termination=Termination.SCORE,
        )
    return Outcome(
        frozenset({1 - second_order}),
        f"{first} points as Order in round 1, against {second} in round 2",
        scores,
        termination=Termination.SCORE,
    )
