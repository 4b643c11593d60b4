"""The states of a board's past positions, kept a while: stepping through a game of 200 moves
replays a move or a few a request, not the game from its start.

A state is kept under (board, the board row's version, ply): a move, a take-back or any other
change of the row bumps its version, so a state kept before it is never used again (and is
dropped in its turn, least recently used first). States are immutable values (the game
contract: ``apply`` never changes its state), so requests share them.

:meth:`States.state_at` stands in front of :func:`pbmserv.core.play.positions.replayed`: the
same replay as :func:`pbmserv.core.play.game_service.replay_moves` (each stored move read for
the first seat that can play it, with the move's own random generator), begun from the nearest
state kept before the ply instead of the board's start.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pbmserv.core.play.boards import Board
from pbmserv.core.play.game_service import starting_state
from pbmserv.core.play.positions import MoveRecord, StateAt
from pbmserv.games.base import MoveError, move_rng
from pbmserv.web.kept import Kept

#: How many states are kept, over all boards (a few hundred kilobytes at most each).
CAPACITY = 4096
#: Besides the positions asked for, every EVERY-th position on the way is kept.
EVERY = 8

Key = tuple[int, int, int]  # board, row version, ply


class ReplayError(RuntimeError):
    """A stored move does not replay (a damaged history): the page cannot be shown."""


class States:
    """The states of past positions by (board, version, ply), least recently used out."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._kept: Kept[Key, Any] = Kept(capacity)
        self.replayed = 0  # moves replayed in all (for tests and benchmarks)

    def __len__(self) -> int:
        return len(self._kept)

    def state_at(self, board: Board, moves: Sequence[MoveRecord]) -> StateAt:
        """The state at each ply of ``board`` (its own state at the last one)."""
        texts = [row.text for row in moves]

        def state_at(ply: int) -> Any:
            if ply == len(texts):
                return board.state
            return self._state(board, texts, ply)

        return state_at

    def _state(self, board: Board, texts: Sequence[str], ply: int) -> Any:
        version = board.row.version
        at, state = ply, None
        while state is None and at >= 0:  # the nearest position kept, at or before ply
            state = self._kept.get((board.number, version, at))
            at -= 1
        if state is None:
            at, state = 0, starting_state(board)
        else:
            at += 1
        while at < ply:
            state = _replayed(board, state, at, texts[at])
            at += 1
            self.replayed += 1
            if at % EVERY == 0 and at != ply:
                self._kept.put((board.number, version, at), state)
        self._kept.put((board.number, version, ply), state)
        return state


def _replayed(board: Board, state: Any, ply: int, text: str) -> Any:
    """The state after the stored move ``text`` played at ``ply`` in ``state``."""
    game = board.game
    for seat in sorted(game.to_move(state).seats):
        try:
            move = game.parse_move(state, seat, text)
        except MoveError:
            continue
        return game.apply(state, move, move_rng(board.row.seed, ply))
    raise ReplayError(f"board {board.number}: the stored move {ply + 1} replays no more")
