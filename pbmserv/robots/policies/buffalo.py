"""The robots' policy for Buffalo.

Random play lets the buffalo through every time, so random playouts say nothing of White's
moves. White's playout moves capture with the chief and block the most advanced buffalo; the
playout stops after a few moves and the evaluation weighs how far the free buffalo have come.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.robots.policy import Policy, Values, sigmoid

_BUFFALO_COLS = 11
_BUFFALO_WHITE = 1


def _free_buffalo(cells: str) -> list[int]:
    """Buffalo with an empty square ahead, the most advanced first."""
    cols = _BUFFALO_COLS
    return [i for i in range(cols, len(cells)) if cells[i] == "B" and cells[i - cols] == "."]


def _buffalo_choose(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    cells = state.cells
    if seat != _BUFFALO_WHITE:
        if rng.random() < 0.5:  # push a buffalo that is already on its way
            lead = min(moves, key=lambda m: m.src)
            return lead
        return moves[rng.randrange(len(moves))]
    captures = [m for m in moves if cells[m.dst] == "B"]
    if captures:
        return min(captures, key=lambda m: m.dst)
    for buffalo in _free_buffalo(cells)[:3]:
        blocks = [m for m in moves if m.dst == buffalo - _BUFFALO_COLS]
        if blocks:
            return blocks[rng.randrange(len(blocks))]
    return moves[rng.randrange(len(moves))]


def _buffalo_evaluate(game: AnyGame, state: Any) -> Values:
    """Black's threat: each buffalo's advance squared, a blocked one counting a third."""
    cells, cols = state.cells, _BUFFALO_COLS
    threat = 0.0
    for i in range(cols, len(cells)):
        if cells[i] == "B":
            advance = 7 - (i // cols + 1)
            blocked = cells[i - cols] != "."
            threat += advance * advance / (3.0 if blocked else 1.0)
    return (v := sigmoid((threat - 12.0) / 6.0), 1.0 - v)


POLICY = Policy(choose=_buffalo_choose, evaluate=_buffalo_evaluate, cutoff=16)
