"""The robots' policy for Entropy.

A game is two rounds of about a hundred moves each, and a random Order slides for nothing; the
playout instead deals the counters not yet on the board (the bag, or Entropy II's supply and
reserve: what everyone can count) into the empty squares at random and scores the board. In
round 2 that projection is set against round 1's score; in round 1 against the mean score of a
randomly filled board.

The dealing and the scoring are :mod:`pbmserv.robots.policies.entropy_fast`'s: the same boards,
values and generator draws as the plain shuffle and ``board_score`` they replaced, at about half
the cost. With those and the rule module's cached moves and prompts an iteration costs about
half what it did, so each level does more iterations (``iteration_scale``) in no more CPU a
move than before.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.robots.policies.entropy_fast import board_total, deal
from pbmserv.robots.policy import Policy, Values, for_seat, sigmoid

#: Mean and spread of the score of a board filled at random, by size (20,000 boards each).
_ENTROPY_RANDOM_SCORE = {5: (32.0, 8.4), 7: (54.5, 12.3)}


@lru_cache(maxsize=64)
def _round_one_score(first: bytes, size: int) -> int:
    """Round 1's final score, asked for by every playout of round 2."""
    return board_total(first, size)


def _entropy_values(state: Any, projected: float) -> Values:
    """Each seat's chance of winning when the round in play ends with ``projected`` points."""
    mean, spread = _ENTROPY_RANDOM_SCORE[state.size]
    against = mean if state.round == 1 else _round_one_score(state.first, state.size)
    return for_seat(state.order_seat, sigmoid(1.6 * (projected - against) / spread))


def _entropy_playout(game: AnyGame, state: Any, rng: random.Random) -> Values | None:
    """The counters not on the board dealt into its empty squares at random, and scored."""
    size = state.size
    return _entropy_values(state, board_total(deal(state.cells, size, rng), size))


def _entropy_evaluate(game: AnyGame, state: Any) -> Values:
    """The board's score now, with the empty squares' share of a random board's mean."""
    size, cells = state.size, state.cells
    mean, _ = _ENTROPY_RANDOM_SCORE[size]
    empty = cells.count(0) / (size * size)
    return _entropy_values(state, board_total(cells, size) + mean * empty)


#: Iterations cost about half what they did (see the module docstring): 1.8 times as many keep
#: every level within the CPU a move it had (measured over positions from real games).
POLICY = Policy(
    playout=_entropy_playout, evaluate=_entropy_evaluate, widen=4.0, iteration_scale=1.8
)
