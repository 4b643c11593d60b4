"""What a robot is handed: its seat's view of a board, never the full state.

A :class:`SeatView` is made only by :func:`seat_view`, which keeps everything the seat may see
(as a player's mail shows it) and replaces every secret of the other seats with a draw from
what the seat knows (the game's ``determinize`` under a fixed generator). Since ``determinize``
gives the same state for every state that looks the same to the seat, two boards that differ
only in what the seat cannot see give equal views: nothing the robot is handed can tell them
apart, whatever its code does. The robots' entry points (:mod:`pbmserv.robots.levels`) take a
SeatView, not a state; the search determinises again from the view, as it always did.

Chance is no secret kept in a state here: it is drawn when a move is applied from the board's
seed, which no robot is given.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from pbmserv.games.base import AnyGame

#: The fixed draw that stands in for the secrets a seat cannot see (any value would do: the
#: draw depends on it and on what the seat knows, never on the secrets themselves).
_STAND_IN = 0x5EA7


@dataclass(frozen=True)
class SeatView:
    """A seat, and the board's state as that seat may know it."""

    seat: int
    state: Any
    #: Made by seat_view alone (a view built from a full state by hand would defeat it).
    _made_by_seat_view: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self._made_by_seat_view:
            raise TypeError("a SeatView is made by seat_view(game, state, seat)")


def seat_view(game: AnyGame, state: Any, seat: int) -> SeatView:
    """``seat``'s view of ``state``: the state itself in a game without secrets."""
    if game.SPEC.hidden_information:
        state = game.determinize(state, seat, random.Random(_STAND_IN))
    return SeatView(seat, state, _made_by_seat_view=True)
