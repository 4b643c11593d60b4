"""Other hidden placements with the same public facts: what the no-leak check varies."""

from __future__ import annotations

import random
from dataclasses import replace

from pbmserv.games.hmdg.geometry import (
    O_SIDE,
    X_SIDE,
    _fives_through,
    double_five,
    line_mask,
    mask_of,
    points_of,
)
from pbmserv.games.hmdg.state import (
    Announce,
    HmdgState,
)

# --- helpers of vary_hidden and load ----------------------------------------------------------


def _vary_once(state: HmdgState, side: int, rng: random.Random) -> HmdgState | None:
    """Move the pending point of ``side``, or one of its hidden pieces, elsewhere on the same
    (public) line; None if no such change keeps the public facts."""
    pending = state.pending if state.mover == side else None
    movable = [
        i
        for i, t in enumerate(state.turns)
        if t.side == side and not t.revealed and state.hidden(side) >> t.point & 1
    ]
    if pending is not None and (not movable or rng.random() < 0.5):
        places = state.free(side) & line_mask(pending.point, pending.line) & ~(1 << pending.point)
        if not places:
            return None
        return replace(state, pending=Announce(rng.choice(points_of(places)), pending.line))
    if not movable:
        return None
    index = rng.choice(movable)
    record = state.turns[index]
    taken = state.revealed | state.pieces[side] | (1 << pending.point if pending else 0)
    choices = points_of(line_mask(record.point, record.line) & ~taken)
    if not choices:
        return None
    return _move_hidden_piece(state, index, rng.choice(choices))


def _move_hidden_piece(state: HmdgState, index: int, point: int) -> HmdgState | None:
    """``state`` with the secret placement of turn ``index`` on ``point`` (a point that is
    neither revealed nor its side's), or None if that changes when the side made its first five
    or gives it a win.

    Nothing else can change: every later move stays legal, and the side's free points only
    trade ``point`` for the old one, so the passes stay as they were.
    """
    turns = list(state.turns)
    side, old = turns[index].side, turns[index].point
    turns[index] = replace(turns[index], point=point)
    placing = [t for t in turns[index:] if t.side == side and t.placed]
    mask = state.pieces[side] & ~(1 << old) & ~mask_of(t.point for t in placing)
    had_five = any(t.five for t in turns[:index] if t.side == side)
    for turn in placing:
        mask |= 1 << turn.point
        new_five = bool(_fives_through(mask, turn.point))
        if turn.five != (new_five and not had_five) or (new_five and double_five(mask, turn.point)):
            return None
        had_five = had_five or new_five
    pieces = list(state.pieces)
    pieces[side] = mask
    return replace(state, turns=tuple(turns), pieces=(pieces[X_SIDE], pieces[O_SIDE]))
