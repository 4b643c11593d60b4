"""Tactics before the tree search: a shallow alpha-beta with quiescence on captures.

Random playouts and a cut-off evaluation see a piece left hanging only by luck; a game where
one capture can end it (Extinction: the last piece of a kind) needs its next two or three plies
read exactly. A game's policy may give a :class:`LeanGame`, a fast mutable position used only
inside the search (cross-checked against the rule module in the tests). :func:`root_scores`
scores every root move with a negamax of ``depth`` plies and a quiescence search of captures
after them, and the tree search then considers only the moves within a margin of the best
(:func:`safe_moves`): it still chooses among good moves by its own lights, but never walks
into what the tactics saw.

Deterministic: a fixed depth and a node budget, never the clock, so a seed gives one move.
Scores are in the game's own units (pawns in Extinction), from the side to move's view; a won
or lost game is ``WIN`` less the plies to it, so that a quicker win scores higher.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

#: A won game's score (a lost one is its negative), less the plies it takes.
WIN = 10_000.0
#: Scores above this are a forced win found by the search (below its negative, a forced loss).
DECIDED = WIN - 1_000.0


class LeanGame(Protocol):
    """A game's fast position for the tactics: mutable, one per search."""

    def position(self, state: Any, rng: random.Random | None = None) -> Any:
        """A fresh mutable position of ``state`` (the searching seat's view). A tree search
        hands it its generator, for a position that breaks ties in its tree's moves at random
        (so that another seed plays another game); the tactics hand none (the position then
        draws from one seeded by ``state``)."""

    def moves(self, position: Any) -> Sequence[Hashable]:
        """The side to move's legal moves, the likeliest best first (captures first)."""

    def captures(self, position: Any) -> Sequence[Hashable]:
        """The side to move's captures, the likeliest best first, for the quiescence search."""

    def push(self, position: Any, move: Any) -> None: ...

    def pop(self, position: Any) -> None: ...

    def ended(self, position: Any) -> float | None:
        """The side to move's result if the game is over: 1 won, -1 lost, 0 drawn."""

    def evaluate(self, position: Any) -> float:
        """The side to move's prospects in a position that has not ended."""

    def no_moves(self, position: Any) -> float:
        """The side to move's result when it has no move (Extinction: a stalemate, drawn)."""


@runtime_checkable
class LeanPlay(LeanGame, Protocol):
    """A lean position that can also play the tree search's part."""

    def seat(self, position: Any) -> int:
        """The seat to move."""

    def tree_moves(self, position: Any) -> Sequence[Hashable]:
        """The moves the tree considers (never none of them while there are moves)."""

    def playout_move(self, position: Any, rng: random.Random) -> Any:
        """A playout's move for the side to move (None: it has none)."""

    def win_chance(self, position: Any) -> float:
        """The side to move's expected result, 0 .. 1, of a position that has not ended."""


@dataclass(frozen=True)
class Tactics:
    """A game's tactics: its lean position and how far from the best a move may score and
    still be left to the tree search."""

    lean: LeanGame
    margin: float
    #: A score's units against a result: a position scored ``s`` is worth sigmoid(s / scale).
    scale: float = 4.0
    #: A search stops deepening (quiescence first) past this many positions; it still
    #: finishes, with static scores for what it did not reach.
    node_budget: int = 25_000


@dataclass
class _Count:
    nodes: int = 0


def root_scores(
    tactics: Tactics, state: Any, depth: int
) -> tuple[list[tuple[Hashable, float]], int]:
    """Each root move of ``state`` with its score for the side to move (``depth`` plies, then
    captures); and the positions searched. Deepened one ply at a time, each pass trying the
    moves the last one scored best first: the best found early lets the rest be cut short."""
    lean, count = tactics.lean, _Count()
    position = lean.position(state)
    order = list(lean.moves(position))
    scored: list[tuple[Hashable, float]] = []
    for plies in range(1, max(1, depth) + 1):
        scored = _scored_once(tactics, position, order, plies, count)
        ranked = sorted(range(len(scored)), key=lambda i: -scored[i][1])  # stable: ties keep order
        order = [scored[i][0] for i in ranked]
        if scored and max(score for _, score in scored) > DECIDED:
            break  # a forced win: no deeper read can better it
    return scored, count.nodes


def _scored_once(
    tactics: Tactics, position: Any, moves: Sequence[Hashable], depth: int, count: _Count
) -> list[tuple[Hashable, float]]:
    lean = tactics.lean
    scored: list[tuple[Hashable, float]] = []
    alpha = -2 * WIN
    for move in moves:
        lean.push(position, move)
        # A move within the margin of the best so far must be scored exactly; below, a bound
        # is enough (it is left out either way).
        floor = alpha - tactics.margin
        score = -_negamax(tactics, position, depth - 1, -2 * WIN, -floor, 1, count)
        lean.pop(position)
        scored.append((move, score))
        alpha = max(alpha, score)
    return scored


def safe_moves(scored: Sequence[tuple[Hashable, float]], margin: float) -> list[Hashable]:
    """The moves within ``margin`` of the best score (all of them when every move loses: the
    tree search may still find the longest resistance)."""
    if not scored:
        return []
    best = max(score for _, score in scored)
    if best < -DECIDED:
        return [move for move, _ in scored]
    return [move for move, score in scored if score >= best - margin]


def _negamax(
    tactics: Tactics,
    position: Any,
    depth: int,
    alpha: float,
    beta: float,
    ply: int,
    count: _Count,
) -> float:
    lean = tactics.lean
    count.nodes += 1
    ended = lean.ended(position)
    if ended is not None:
        return ended * (WIN - ply)
    if depth <= 0 or count.nodes > tactics.node_budget:
        return _quiescence(tactics, position, alpha, beta, ply, count)
    moves = lean.moves(position)
    if not moves:
        return lean.no_moves(position) * (WIN - ply)
    best = -2 * WIN
    for move in moves:
        lean.push(position, move)
        score = -_negamax(tactics, position, depth - 1, -beta, -alpha, ply + 1, count)
        lean.pop(position)
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                if alpha >= beta:
                    break
    return best


def _quiescence(
    tactics: Tactics, position: Any, alpha: float, beta: float, ply: int, count: _Count
) -> float:
    """Captures only, the side to move free to stop (stand pat) at the static score."""
    lean = tactics.lean
    standing = lean.evaluate(position)
    if standing >= beta or count.nodes > 4 * tactics.node_budget:
        return standing
    alpha = max(alpha, standing)
    for move in lean.captures(position):
        count.nodes += 1
        lean.push(position, move)
        ended = lean.ended(position)
        if ended is not None:
            score = -ended * (WIN - ply - 1)
        else:
            score = -_quiescence(tactics, position, -beta, -alpha, ply + 1, count)
        lean.pop(position)
        if score > alpha:
            alpha = score
            if alpha >= beta:
                break
    return alpha
