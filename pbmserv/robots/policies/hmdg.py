"""The robots' policy for Hidden Move Double Gomoku.

Evaluated on the searching seat's determinisation (a full state): the windows of five each side
could still fill (none of the other side's revealed pieces in them), weighted steeply by the
pieces already there.
"""

from __future__ import annotations

from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.games.hmdg.geometry import WINDOWS
from pbmserv.robots.policy import Policy, Values, for_seat, sigmoid

_WINDOW_WEIGHT = (0.0, 1.0, 4.0, 16.0, 64.0, 256.0)


def _hmdg_evaluate(game: AnyGame, state: Any) -> Values:
    if state.x_seat is None:
        return (0.5, 0.5)
    totals = []
    for side in (0, 1):
        own, blocked = state.pieces[side], state.shown[1 - side]
        total = 0.0
        for window in _HMDG_WINDOWS:
            if not window & blocked:
                total += _WINDOW_WEIGHT[(own & window).bit_count()]
        totals.append(total)
    x_value = sigmoid((totals[0] - totals[1]) / 40.0)
    return for_seat(state.seat_of(0), x_value)


_HMDG_WINDOWS = tuple(window.mask for window in WINDOWS)


POLICY = Policy(evaluate=_hmdg_evaluate, cutoff=6)
