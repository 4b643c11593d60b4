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
from dataclasses import dataclass, field
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


@runtime_checkable
class KeyedLean(LeanGame, Protocol):
    """A lean position that can name itself, for a search that remembers good moves."""

    def key(self, position: Any) -> Hashable:
        """The same key for the same position (pieces, side to move and rights), else another."""


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
    #: Where the budget cuts a deeper pass short, its root moves not finished within it keep
    #: the last full pass's scores (and the read stops there), rather than the shallower read
    #: the budget left them: that read sees fewer of the opponent's replies, so a move
    #: read last could outscore the best read deepest (Extinction's top level cut five plies
    #: short in 110 of its 120 moves).
    keep_last_pass: bool = False
    #: Try first, at each position, the move found best there by the last pass and the moves
    #: that cut the search short at the same ply (killers): the same scores from far fewer
    #: positions (Extinction: half as many at four plies), so the budget reaches deeper. The
    #: lean position must be a :class:`KeyedLean`.
    remember_moves: bool = False

    def __post_init__(self) -> None:
        if self.remember_moves and not isinstance(self.lean, KeyedLean):
            raise TypeError("remember_moves needs a lean position with key()")


@dataclass
class _Count:
    nodes: int = 0
    #: With remember_moves: the best move found at each position (by key), and the last two
    #: moves that cut the search short at each ply.
    best_moves: dict[Hashable, Hashable] | None = None
    killers: dict[int, list[Hashable]] = field(default_factory=dict)


def root_scores(
    tactics: Tactics, state: Any, depth: int
) -> tuple[list[tuple[Hashable, float]], int]:
    """Each root move of ``state`` with its score for the side to move (``depth`` plies, then
    captures); and the positions searched. Deepened one ply at a time, each pass trying the
    moves the last one scored best first: the best found early lets the rest be cut short."""
    lean, count = tactics.lean, _Count()
    if tactics.remember_moves:
        count.best_moves = {}
    position = lean.position(state)
    order = list(lean.moves(position))
    scored: list[tuple[Hashable, float]] = []
    for plies in range(1, max(1, depth) + 1):
        last = dict(scored) if tactics.keep_last_pass and scored else None
        scored = _scored_once(tactics, position, order, plies, count, last)
        ranked = sorted(range(len(scored)), key=lambda i: -scored[i][1])  # stable: ties keep order
        order = [scored[i][0] for i in ranked]
        if scored and max(score for _, score in scored) > DECIDED:
            break  # a forced win: no deeper read can better it
        if last is not None and count.nodes > tactics.node_budget:
            break  # the budget is spent: a deeper pass would finish no move
    return scored, count.nodes


def _scored_once(
    tactics: Tactics,
    position: Any,
    moves: Sequence[Hashable],
    depth: int,
    count: _Count,
    last: dict[Hashable, float] | None = None,
) -> list[tuple[Hashable, float]]:
    """Each of ``moves`` scored ``depth`` plies deep; with ``last`` (the previous pass's
    scores), a move the node budget does not let finish keeps its score there."""
    lean = tactics.lean
    scored: list[tuple[Hashable, float]] = []
    alpha = -2 * WIN
    for move in moves:
        if last is not None and count.nodes > tactics.node_budget:
            score = last[move]
        else:
            lean.push(position, move)
            # A move within the margin of the best so far must be scored exactly; below, a
            # bound is enough (it is left out either way).
            floor = alpha - tactics.margin
            score = -_negamax(tactics, position, depth - 1, -2 * WIN, -floor, 1, count)
            lean.pop(position)
            if last is not None and count.nodes > tactics.node_budget:
                score = last[move]  # cut short within this move: its read is not whole
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
    remembered = count.best_moves
    if remembered is not None:
        key = lean.key(position)  # type: ignore[attr-defined]  # a KeyedLean (__post_init__)
        moves = _remembered_first(moves, remembered.get(key), count.killers.get(ply, ()))
    best, best_move = -2 * WIN, None
    for move in moves:
        lean.push(position, move)
        score = -_negamax(tactics, position, depth - 1, -beta, -alpha, ply + 1, count)
        lean.pop(position)
        if score > best:
            best = score
            if score > alpha:
                alpha, best_move = score, move
                if alpha >= beta:
                    if remembered is not None:
                        _remember_killer(count.killers.setdefault(ply, []), move)
                    break
    if remembered is not None and best_move is not None:
        remembered[key] = best_move
    return best


def _remembered_first(
    moves: Sequence[Hashable], best: Hashable | None, killers: Sequence[Hashable]
) -> Sequence[Hashable]:
    """``moves`` with the remembered best move, then the killers, first (those legal here)."""
    wanted = [best, *killers] if best is not None else list(killers)
    if not wanted:
        return moves
    present = set(moves)
    first = [move for i, move in enumerate(wanted) if move in present and move not in wanted[:i]]
    if not first:
        return moves
    return first + [move for move in moves if move not in first]


def _remember_killer(killers: list[Hashable], move: Hashable) -> None:
    if move not in killers:
        killers.insert(0, move)
        del killers[2:]


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
