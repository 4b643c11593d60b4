"""The robots' policy for Entropy.

A game is two rounds of about a hundred moves each, and a random Order slides for nothing; the
playout instead deals the counters not yet on the board (the bag, or Entropy II's supply and
reserve: what everyone can count) into the empty squares at random and scores the board. In
round 2 that projection is set against round 1's score; in round 1 against the mean score of a
randomly filled board.
"""

from __future__ import annotations

import random
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.games.entropy.score import board_score
from pbmserv.robots.policy import Policy, Values, for_seat, sigmoid

#: Mean and spread of the score of a board filled at random, by size (20,000 boards each).
_ENTROPY_RANDOM_SCORE = {5: (32.0, 8.4), 7: (54.5, 12.3)}


def _entropy_values(state: Any, projected: float) -> Values:
    """Each seat's chance of winning when the round in play ends with ``projected`` points."""
    mean, spread = _ENTROPY_RANDOM_SCORE[state.size]
    against = mean if state.round == 1 else board_score(state.first, state.size).total
    return for_seat(state.order_seat, sigmoid(1.6 * (projected - against) / spread))


def _entropy_playout(game: AnyGame, state: Any, rng: random.Random) -> Values | None:
    size, cells = state.size, state.cells
    counters = [c for c in range(1, size + 1) for _ in range(size - cells.count(c))]
    rng.shuffle(counters)
    filled = bytearray(cells)
    dealt = iter(counters)
    for i, code in enumerate(filled):
        if not code:
            filled[i] = next(dealt)
    return _entropy_values(state, board_score(bytes(filled), size).total)


def _entropy_evaluate(game: AnyGame, state: Any) -> Values:
    """The board's score now, with the empty squares' share of a random board's mean."""
    size, cells = state.size, state.cells
    mean, _ = _ENTROPY_RANDOM_SCORE[size]
    empty = cells.count(0) / (size * size)
    return _entropy_values(state, board_score(cells, size).total + mean * empty)


POLICY = Policy(playout=_entropy_playout, evaluate=_entropy_evaluate, widen=4.0)
