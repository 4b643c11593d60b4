"""The robots' policy for Entropy.

A game is two rounds of about a hundred moves each, and a random Order slides for nothing; the
playout instead fills the board with the counters not yet on it (the bag, or Entropy II's supply
and reserve: what everyone can count) and scores it. In round 2 that projection is set against
round 1's score; in round 1 against the mean score of a randomly filled board.

In standard Entropy the playout first plays the turn in hand and ``LOOKAHEAD_TURNS`` more with
two simple players (:mod:`pbmserv.robots.policies.entropy_lookahead`: Chaos's counter on the
square of three that gives Order the fewest points, Order's best slide of four for points at
once), and only then deals the rest at random. Dealt at once, every playout had Order stop
playing, so the search judged Order's and Chaos's moves as if the next slides would never come;
more iterations of that (1.8 times as many, session 7) played no better than before (8/1/11 of
20 against 020b28e's top level).

A node that may widen takes in, of ``EXPANSION_SAMPLE`` moves drawn at random, the one best for
its mover at once (:func:`_entropy_expand`): of a hundred slides taken in at random, the good
ones waited for the tree to grow.

The dealing and the scoring are :mod:`pbmserv.robots.policies.entropy_fast`'s (the same boards,
values and generator draws as the plain shuffle and ``board_score`` they replaced). With its
turns and its choice of children an iteration costs about what one did before the fast paths,
so each level does the iterations it had then; measured in the same games, the top level spent
623 ms a move against 020b28e's 649 (13 games; the playout's squares kept as lists and its
draws inlined, the same moves as the 649 ms against 608 of the 27 games before).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.games.entropy.state import STANDARD, Place, Slide
from pbmserv.robots.policies.entropy_fast import board_total, deal
from pbmserv.robots.policies.entropy_lookahead import place_gain, played_then_dealt, slide_gain
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
    """A few turns played (standard Entropy), the rest of the counters dealt into the empty
    squares at random, and the board scored."""
    size = state.size
    if state.variant == STANDARD:
        filled = played_then_dealt(state, rng, LOOKAHEAD_TURNS)
    else:
        filled = deal(state.cells, size, rng)
    return _entropy_values(state, board_total(filled, size))


def _entropy_evaluate(game: AnyGame, state: Any) -> Values:
    """The board's score now, with the empty squares' share of a random board's mean."""
    size, cells = state.size, state.cells
    mean, _ = _ENTROPY_RANDOM_SCORE[size]
    empty = cells.count(0) / (size * size)
    return _entropy_values(state, board_total(cells, size) + mean * empty)


#: Turns a playout plays (Chaos's placement and Order's slide) before it deals the rest.
LOOKAHEAD_TURNS = 2
#: How many of the moves not yet in the tree a widening node weighs before taking one in.
EXPANSION_SAMPLE = 8


def _gain(state: Any, move: Any) -> int:
    """The points Order gains on the board by ``move`` at once (a pass or a stocking: 0)."""
    if isinstance(move, Place):
        return place_gain(state.cells, state.size, move.cell, move.colour)
    if isinstance(move, Slide):
        return slide_gain(state.cells, state.size, move.src, move.dst)
    return 0


def _entropy_expand(
    game: AnyGame, state: Any, actor: int, fresh: Sequence[Any], rng: random.Random
) -> int:
    """A widening node takes in, of a few moves drawn at random, the one best for its mover at
    once: Order's slide that makes the most points, Chaos's placement that gives the fewest.
    Taken in at random (of a hundred slides), the good ones waited for the tree to grow."""
    if len(fresh) <= 1:
        return 0
    sign = 1 if actor == state.order_seat else -1
    drawn = rng.sample(range(len(fresh)), min(EXPANSION_SAMPLE, len(fresh)))
    return max(drawn, key=lambda index: sign * _gain(state, fresh[index]))


#: An iteration with the playout's turns and the choice of children costs about what one did
#: before the fast paths (see the module docstring).
POLICY = Policy(
    playout=_entropy_playout,
    evaluate=_entropy_evaluate,
    widen=4.0,
    iteration_scale=1.0,
    expand=_entropy_expand,
)
