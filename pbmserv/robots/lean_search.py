"""The tree search over a game's lean position, where its policy has one (:class:`LeanPlay`).

The same UCT as :class:`pbmserv.robots.mcts.Search`, but an iteration pushes its moves onto one
mutable position and pops them back at its end, instead of building a new state with
``game.apply`` for every move (Extinction: 81 microseconds a move against a few for a push and
a pop), and its playouts and evaluations read the lean position too. Only for games without
chance or secrets (a move sequence always leads to the same position), and only inside the
search: the move it returns is a move of the real position, which the rules then apply.
"""

from __future__ import annotations

import random
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.robots.mcts import Node, Search
from pbmserv.robots.policy import Policy, Values, for_seat
from pbmserv.robots.tactics import LeanPlay


class LeanSearch(Search):
    """:class:`~pbmserv.robots.mcts.Search` with its iterations on ``lean``."""

    def __init__(
        self,
        game: AnyGame,
        state: Any,
        seat: int,
        policy: Policy,
        rng: random.Random,
        lean: LeanPlay,
    ) -> None:
        super().__init__(game, state, seat, policy, rng)
        self.lean = lean
        self.position = lean.position(state, rng)

    def _iterate(self) -> None:
        lean, position = self.lean, self.position
        node = self.root
        path: list[tuple[Node, int]] = []
        values: Values | None = None
        pushed = 0
        while values is None:
            if lean.ended(position) is not None:
                values = self._lean_value(position)
                break
            actor = lean.seat(position)
            moves = node.moves
            if moves is None:
                listed = lean.tree_moves(position)
                moves = [(move, move) for move in listed]
                if node is self.root and self.root_moves is not None:
                    moves = [(k, m) for k, m in moves if k in self.root_moves] or moves
                node.moves = moves
            if not moves:
                values = self._stuck(position)
                break
            child, move = self._select(node, moves, actor)
            lean.push(position, move)
            pushed += 1
            path.append((child, actor))
            if child.visits == 0:
                values = self._lean_playout(position)
                if self.minimax:
                    # Without playout moves the playout's value is the evaluation already.
                    cutoff = self.policy.cutoff
                    child.bound = self._lean_value(position) if cutoff else values
            node = child
        for _ in range(pushed):
            lean.pop(position)
        self._back_up(path, values)

    def _stuck(self, position: Any) -> Values:
        """The values of a position whose side to move has no move."""
        return for_seat(self.lean.seat(position), (self.lean.no_moves(position) + 1.0) / 2.0)

    def _lean_value(self, position: Any) -> Values:
        """The position's value by the evaluation (its result if it has ended)."""
        lean = self.lean
        ended = lean.ended(position)
        chance = (ended + 1.0) / 2.0 if ended is not None else lean.win_chance(position)
        return for_seat(lean.seat(position), chance)

    def _lean_playout(self, position: Any) -> Values:
        """The policy's cut-off of playout moves, then the evaluation; popped back after."""
        lean, rng = self.lean, self.rng
        limit = self.policy.cutoff or 0
        played = 0
        try:
            for _ in range(limit):
                if lean.ended(position) is not None:
                    break
                move = lean.playout_move(position, rng)
                if move is None:
                    return self._stuck(position)
                lean.push(position, move)
                played += 1
            return self._lean_value(position)
        finally:
            for _ in range(played):
                lean.pop(position)
