"""The robots' policy for Owlman.

Random White never wins; White's playout moves walk Doc towards a8 half the time, and the
evaluation weighs the helpers left, Doc's distance to a8 and the moves left before nightfall.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.robots.policy import Policy, Values, sigmoid

_OWL_WHITE = 0
_A8 = 56


def _doc_distance(square: int) -> int:
    return max(square % 8, 7 - square // 8)


def _owlman_choose(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    if seat == _OWL_WHITE and rng.random() < 0.5:
        cells = state.cells
        doc = cells.find("K")
        if doc >= 0:
            nearer = [
                m for m in moves if m.src == doc and _doc_distance(m.dst) < _doc_distance(doc)
            ]
            if nearer:
                return nearer[rng.randrange(len(nearer))]
    return moves[rng.randrange(len(moves))]


def _owlman_evaluate(game: AnyGame, state: Any) -> Values:
    cells = state.cells
    doc = cells.find("K")
    if doc < 0:
        return (0.0, 1.0)
    helpers = cells.count("H")
    distance = _doc_distance(doc)
    edge = 0.3 * (helpers - 6) - 0.4 * (distance - 2)
    if state.variant == "nightfall":
        left = 49 - (state.ply + 1) // 2
        if left < distance + 1:
            return (0.02, 0.98)
        edge -= 3.0 / max(1, left - distance)
    return (v := sigmoid(edge), 1.0 - v)


POLICY = Policy(choose=_owlman_choose, evaluate=_owlman_evaluate, cutoff=16)
