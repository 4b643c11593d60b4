"""The robots' policy for Owlman.

Random White never wins; White's playout moves walk Doc towards a8 half the time, and the
evaluation weighs the helpers left, Doc's distance to a8 and the moves left before nightfall.
The game's one-move tactics are not left to chance: the tree and the playouts take a win at once
(Owlman onto Doc on h1, or Doc and a helper into the lair), and White's tree answers a threat on
Doc still on h1 only by moving Doc off it (measured: with 50 iterations the search let Owlman
swoop onto h1). White's defence loses to one lesser move, so only the weakest level draws its
moves at a temperature (measured, L2 White against L1: 9 of 20 won at L2's usual 0.3, 20 of 20
at 0).

The search runs on a lean position (:mod:`pbmserv.robots.policies.owlman_lean`: the same rules,
candidates, chooser and evaluation, pushed and popped in place), whose iterations cost a sixth
of the rules' (measured: 70 to 90 microseconds against 520): each level does 5.5 times the
iterations in no more time. Its tactics first read the next plies exactly (Doc left on h1 to a
swoop, a helper left to be scared away, Doc and a helper reaching the lair).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.games.owlman import A8, B7, DOC, H1, HELPER, owlman_moves
from pbmserv.robots.policies.owlman_lean import OwlmanLean
from pbmserv.robots.policy import Policy, Values, sigmoid
from pbmserv.robots.tactics import Tactics

_OWL_WHITE = 0


def _doc_distance(square: int) -> int:
    return max(square % 8, 7 - square // 8)


def _winning_moves(state: Any, seat: int, moves: Sequence[Any]) -> list[Any]:
    """The moves of ``seat`` that win at once: Owlman onto Doc on h1, or White completing Doc
    on a8 with a helper on b7."""
    if seat != _OWL_WHITE:
        return [m for m in moves if m.capture == H1]
    cells = state.cells
    if cells[A8] == DOC:
        return [m for m in moves if m.dst == B7 and cells[m.src] == HELPER]
    if cells[B7] == HELPER:
        return [m for m in moves if m.dst == A8 and cells[m.src] == DOC]
    return []


def _doc_threatened(cells: str) -> bool:
    """Doc still on h1 and Owlman able to land on it next move."""
    return cells[H1] == DOC and any(m.capture == H1 for m in owlman_moves(cells))


def _owlman_candidates(
    game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """A win at once if there is one; else, for White with Doc threatened on h1, Doc's moves
    off it (nothing can stand in a swoop's way); else every move."""
    wins = _winning_moves(state, seat, moves)
    if wins:
        return wins
    if seat == _OWL_WHITE and _doc_threatened(state.cells):
        escapes = [m for m in moves if m.src == H1]
        if escapes:
            return escapes
    return moves


def _owlman_choose(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    wins = _winning_moves(state, seat, moves)
    if wins:
        return wins[0]
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


POLICY = Policy(
    choose=_owlman_choose,
    evaluate=_owlman_evaluate,
    cutoff=16,
    candidates=_owlman_candidates,
    temperatures=(1.0, 0.0, 0.0),
    # Scores are the evaluation's logistic argument (a helper 0.3, a step of Doc's 0.4), so the
    # levels keep moves within 1.75, 0.53 and 0.26 of the best: L3 lets no helper slip, L2 no
    # more than one, L1 only what loses Doc or more. Not a multiple of 0.1: equal trades of
    # helpers against steps must not sit on the margin's edge.
    tactics=Tactics(lean=OwlmanLean(), margin=1.75, scale=1.0),
    lean_tree=True,
    # The lean tree's iterations cost 70 us (L1) to 90 us (L3, deeper trees), the rules' 520 us:
    # 5.5 times the iterations keeps every level's CPU a move at or below what it was.
    iteration_scale=5.5,
)
