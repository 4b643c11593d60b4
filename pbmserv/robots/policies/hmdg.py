"""The robots' policy for Hidden Move Double Gomoku.

Evaluated on the searching seat's determinisation (a full state): the windows of five each side
could still fill (none of the other side's revealed pieces in them), weighted steeply by the
pieces already there. Playouts are six uniform random moves, then that evaluation; both are
done on bit masks (:mod:`pbmserv.robots.policies.hmdg_fast`), with the same results as through
the game contract at a fraction of the cost. An iteration costs about a third of what it did
(the search's own bookkeeping, its determinisations and its tree moves are most of what is
left), so each level does 2.2 times the iterations in no more CPU a move than before (measured
over positions from robot games: L1 110 iterations, L2 880, L3 7040).

The tree announces on the :data:`CANDIDATE_POINTS` points where a piece of the mover's adds
most to the windows of five it could still fill (each with its row and its column), where it
took all of up to 160 announcements in at once: at 7040 iterations that left each root move
about forty, a flat Monte Carlo; on ten points the tree reads on. The opponent's answers are
all kept. Level 1 still searches every announcement: its 110 iterations on the ten best points
played nearly as well as level 2 (L2 against L1 26/0/14, 65%, where the ladder wants 75%; with
every announcement, L2 won 40/0/0). Against 020b28e's L3: 24/0/16 (60%) before, 34/0/6 (85%)
after, at 2,306 ms a move against its 3,034 (bench/results, session 12).
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any, Final

from pbmserv.games.base import AnyGame
from pbmserv.games.hmdg.geometry import SIZE, WINDOWS, points_of
from pbmserv.games.hmdg.state import Announce, HmdgState
from pbmserv.robots.policies.hmdg_fast import (
    PLAYOUT_PLIES,
    WINDOW_WEIGHT,
    evaluate_position,
    fast_playout,
)
from pbmserv.robots.policy import Policy

#: How many points the tree announces on.
CANDIDATE_POINTS: Final = 10

#: What one more piece adds to a window holding ``n`` of the side's pieces (n = 0..4).
_ADDED: Final = tuple(WINDOW_WEIGHT[n + 1] - WINDOW_WEIGHT[n] for n in range(5))
#: Each window of five: its mask and its points.
_WINDOW_POINTS: Final = tuple((window.mask, tuple(points_of(window.mask))) for window in WINDOWS)


@lru_cache(maxsize=4096)
def points_by_gain(own: int, blocked: int) -> tuple[int, ...]:
    """Every point, those where a piece of the side whose pieces are ``own`` adds most to the
    weights of its open windows (none of ``blocked``, the other side's revealed pieces) first,
    ties in board order, its own pieces' points last. The same pieces come back again and
    again within a search (the searching seat's own are no secret), hence the cache."""
    gain = [0.0] * (SIZE * SIZE)
    for mask, points in _WINDOW_POINTS:
        held = own & mask
        if mask & blocked or held == mask:
            continue
        added = _ADDED[held.bit_count()]
        for point in points:
            gain[point] += added
    for point in points_of(own):
        gain[point] = -1.0  # the side's own pieces: no piece can be added there
    return tuple(sorted(range(SIZE * SIZE), key=lambda point: -gain[point]))


def _hmdg_candidates(
    game: AnyGame, state: HmdgState, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """The announcements on the mover's best :data:`CANDIDATE_POINTS` free points (see
    :func:`points_by_gain`), row and column each; any other moves (an answer, the opening, the
    choice of side) all."""
    if not moves or not isinstance(moves[0], Announce):
        return moves
    mover = state.mover
    by_point: dict[int, list[Any]] = {}
    for move in moves:
        by_point.setdefault(move.point, []).append(move)
    ranked = points_by_gain(state.pieces[mover], state.shown[1 - mover])
    chosen = [point for point in ranked if point in by_point][:CANDIDATE_POINTS]
    return [move for point in chosen for move in by_point[point]]


POLICY = Policy(
    evaluate=evaluate_position,
    cutoff=PLAYOUT_PLIES,
    playout=fast_playout,
    iteration_scale=2.2,
    candidates=_hmdg_candidates,
    candidates_from_level=2,
)
