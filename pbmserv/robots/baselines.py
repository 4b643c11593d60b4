"""Players to measure the robots against: uniform random, and 1-ply greedy.

The greedy player tries each legal move once (with its own generator for chance) in a
determinisation of its own view, takes a move that wins at once, and otherwise the move whose
position the game's evaluation (:mod:`pbmserv.robots.policies`) likes best for it; with no
evaluation it plays any move that does not lose at once. Neither reads another seat's secrets
or the board's seed.
"""

from __future__ import annotations

import random
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.robots.mcts import outcome_values
from pbmserv.robots.policies import policy_for

#: The greedy player scores at most this many moves (a random sample of them) per decision:
#: Entropy II's stocking has hundreds.
GREEDY_SAMPLE = 400


def random_move(game: AnyGame, state: Any, seat: int, rng: random.Random) -> Any:
    """Any legal move of ``seat``, all alike."""
    moves = game.legal_moves(state, seat)
    return moves[rng.randrange(len(moves))]


def greedy_move(game: AnyGame, state: Any, seat: int, rng: random.Random) -> Any:
    """The move whose resulting position is best for ``seat`` by the game's evaluation (a win
    scores 1, a loss 0); ties go to a random one of the best."""
    players = game.SPEC.players
    evaluate = policy_for(game).evaluate
    sample = game.determinize(state, seat, rng)
    moves = game.legal_moves(sample, seat)
    if len(moves) > GREEDY_SAMPLE:
        moves = rng.sample(moves, GREEDY_SAMPLE)
    best: list[Any] = []
    best_score = -1.0
    for move in moves:
        after = game.apply(sample, move, rng)
        result = game.outcome(after)
        if result is not None:
            score = outcome_values(result, players)[seat]
        elif evaluate is not None:
            score = evaluate(game, after)[seat]
        else:
            score = 0.5
        if score > best_score + 1e-12:
            best, best_score = [move], score
        elif score >= best_score - 1e-12:
            best.append(move)
    return best[rng.randrange(len(best))]
