"""What a policy is: how the search (:mod:`pbmserv.robots.mcts`) plays and scores one game.

The search needs nothing but the game contract; a game gains strength from a policy (in
:mod:`pbmserv.robots.policies`) where uniform random playouts pay badly (long games, lopsided
random results). Every value is a tuple of results, one per seat, 0 (loss) .. 1 (win). An
evaluation reads only the state it is given, which for a game with secrets is the searching
seat's determinisation.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.robots.tactics import Tactics

#: One result per seat, 0 (loss) .. 1 (win), 0.5 a draw.
Values = tuple[float, ...]
#: Picks a playout move for ``seat`` among its legal ``moves``.
Chooser = Callable[[AnyGame, Any, int, Sequence[Any], random.Random], Any]
#: Scores a position that has not ended, one value per seat.
Evaluator = Callable[[AnyGame, Any], Values]
#: A whole playout done another (faster) way; None to fall back on the ordinary playout.
Playout = Callable[[AnyGame, Any, random.Random], "Values | None"]
#: Which of the moves not yet in the tree (``fresh``) a node that may widen takes next, as an
#: index into them.
Expander = Callable[[AnyGame, Any, int, Sequence[Any], random.Random], int]
#: The moves worth a place in the tree, out of ``seat``'s legal ``moves`` (never none of them);
#: the generator may break ties in their order.
Candidates = Callable[[AnyGame, Any, int, list[Any], random.Random], list[Any]]


def uniform_choice(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    """Any legal move, all alike."""
    return moves[rng.randrange(len(moves))]


@dataclass(frozen=True)
class Policy:
    """How the search plays and scores one game."""

    #: The playout's move choice.
    choose: Chooser = uniform_choice
    #: Scores a playout stopped after ``cutoff`` moves (a draw, 0.5 each, without one).
    evaluate: Evaluator | None = None
    #: Playout moves before the evaluation; None plays to the end.
    cutoff: int | None = None
    #: A faster playout, tried before the ordinary one.
    playout: Playout | None = None
    #: The UCB exploration constant (results are 0..1).
    exploration: float = 0.7
    #: Progressive widening: a node with ``visits`` visits has at most
    #: ``widen * sqrt(visits + 1)`` children; None lets every legal move in at once.
    widen: float | None = None
    #: The robot looks for a move that wins at once when it has at most this many moves.
    decisive_check_limit: int = 400
    #: A level's iterations are multiplied by this (games whose iterations are cheap get more).
    iteration_scale: float = 1.0
    #: Per level (L1 first), a further factor on its iterations: a level whose search came out
    #: cheaper than its CPU budget may spend the rest without the others doing so.
    level_scales: tuple[float, ...] | None = None
    #: The game's own temperature for each level (L1 first), in place of the levels' usual ones:
    #: where one lesser move loses at once (Buffalo's defence) a level drawing its moves as
    #: freely plays no better than chance.
    temperatures: tuple[float, ...] | None = None
    #: Implicit minimax backups: the weight of the minimax of the evaluations in the tree
    #: against the mean result, in games without chance or secrets (0: plain UCT).
    minimax_weight: float = 0.0
    #: New children are tried in the order of the (candidate) moves, best first, rather than
    #: at random.
    ordered: bool = False
    #: Picks the next child of a widening node (else the first, ``ordered``, or one at random).
    expand: Expander | None = None
    #: Narrows the moves the tree considers (a game whose legal moves are mostly idle).
    candidates: Candidates | None = None
    #: The lowest level whose tree takes only the candidates; a level below it searches every
    #: legal move (where a few iterations on the best few moves play nearly as well as the
    #: level above, and the ladder would no longer climb).
    candidates_from_level: int = 1
    #: A shallow alpha-beta read before the tree search (games without chance or secrets):
    #: the root's moves that it finds clearly worse than the best are left out of the tree.
    tactics: Tactics | None = None
    #: The tree search, too, runs on the tactics' lean position (a LeanPlay then): its moves
    #: pushed and popped, its playouts and evaluations the lean position's own.
    lean_tree: bool = False

    def widening(self, visits: int) -> float:
        """How many children a node with ``visits`` visits may have."""
        if self.widen is None:
            return math.inf
        return self.widen * math.sqrt(visits + 1)

    def tree_moves(
        self, game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
    ) -> list[Any]:
        """The moves the tree considers for ``seat``: the candidates, or all of them."""
        if self.candidates is None:
            return moves
        return self.candidates(game, state, seat, moves, rng) or moves


DEFAULT = Policy()


def sigmoid(x: float) -> float:
    """The logistic function, 0 .. 1."""
    if x < -40:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


def for_seat(seat: int, value: float) -> Values:
    """Two seats' values when ``seat`` scores ``value``."""
    return (value, 1.0 - value) if seat == 0 else (1.0 - value, value)
