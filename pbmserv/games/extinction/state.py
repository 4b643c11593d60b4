"""The stored position of an Extinction game, and how a position ends it: extinction, stalemate,
the 75-move rule, repetitions, and the draws that may be claimed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import chess

from pbmserv.games.base import (
    Outcome,
    Termination,
)
from pbmserv.games.extinction.board import (
    AUTO_HALFMOVES,
    AUTO_REPETITIONS,
    CLAIM_HALFMOVES,
    CLAIM_REPETITIONS,
    SEAT_NAMES,
    ExtinctionBoard,
)

# --- the state -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExtinctionState:
    """One position. Treat it as immutable: ``apply`` builds a new one.

    ``seen`` holds the positions (:func:`position_key`) since the last capture, pawn move or
    loss of a castling right, the current one last; no earlier position can come back, so this
    is all that repetitions need, and it never holds more than 151 entries. ``taken`` is what
    White and Black have captured, in order (FEN letters). ``last_from`` is the square the last
    move left (the king's, for castling), for the picture; None before the first move, and in a
    state stored before it was kept if the move and the position leave it open. ``_board`` is
    the board of ``fen``, shared and never changed.
    """

    fen: str
    seen: tuple[str, ...]
    taken: tuple[str, str] = ("", "")
    last_move: str | None = None
    result: Outcome | None = None
    last_from: chess.Square | None = None
    _board: ExtinctionBoard = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self._board is None:  # built from the FEN unless the caller has it already
            object.__setattr__(self, "_board", ExtinctionBoard(self.fen))

    @property
    def seat_to_move(self) -> int:
        """0 when White is to play, 1 when Black is."""
        return 0 if self._board.turn == chess.WHITE else 1

    @property
    def ply(self) -> int:
        """Half-moves played since the start."""
        return 2 * (self._board.fullmove_number - 1) + self.seat_to_move

    def board(self) -> ExtinctionBoard:
        """A copy of the position to study or change freely."""
        return self._board.copy(stack=False)


def position_key(board: chess.Board) -> str:
    """What makes positions the same for repetitions: pieces, side to move, castling rights and
    an en passant capture that can really be made."""
    return _key_of(board.fen(en_passant="legal"))


def _key_of(fen: str) -> str:
    """The position key of a FEN written with ``en_passant="legal"`` (python-chess's default)."""
    return fen.rsplit(" ", 2)[0]


def _claim(state: ExtinctionState) -> str | None:
    """The rule by which the player to move may claim a draw now, or None."""
    kind = _claim_kind(state)
    return None if kind is None else _CLAIMS[kind]


def _claim_kind(state: ExtinctionState) -> Termination | None:
    """The kind of draw the player to move may claim now, or None."""
    if state.seen.count(state.seen[-1]) >= CLAIM_REPETITIONS:
        return Termination.REPETITION
    if state._board.halfmove_clock >= CLAIM_HALFMOVES:
        return Termination.MOVE_LIMIT
    return None


_CLAIMS: Final = {
    Termination.REPETITION: "threefold repetition",
    Termination.MOVE_LIMIT: "the fifty-move rule",
}


def _kinds_text(kinds: Sequence[chess.PieceType]) -> str:
    names = [
        chess.piece_name(k) if k in (chess.KING, chess.QUEEN) else chess.piece_name(k) + "s"
        for k in kinds
    ]
    return " and no ".join(names)


def _extinction_result(board: ExtinctionBoard) -> Outcome | None:
    """The win when a side lacks a kind; the player who just moved wins a double extinction."""
    mover = not board.turn
    mover_gone = board.extinct_kinds(mover)
    other_gone = board.extinct_kinds(board.turn)
    mover_name = SEAT_NAMES[_seat(mover)]
    other_name = SEAT_NAMES[_seat(board.turn)]
    if other_gone and mover_gone:
        reason = (
            f"{mover_name} wins: {other_name} has no {_kinds_text(other_gone)} left; "
            f"{mover_name} has no {_kinds_text(mover_gone)} left either, and the player who "
            "moved wins"
        )
        return Outcome(frozenset({_seat(mover)}), reason, termination=Termination.GOAL)
    if other_gone:
        reason = f"{mover_name} wins: {other_name} has no {_kinds_text(other_gone)} left"
        return Outcome(frozenset({_seat(mover)}), reason, termination=Termination.GOAL)
    if mover_gone:
        reason = f"{other_name} wins: {mover_name} has no {_kinds_text(mover_gone)} left"
        if mover_gone == [chess.PAWN]:
            reason += f" ({mover_name} promoted the last one)"
        return Outcome(frozenset({_seat(board.turn)}), reason, termination=Termination.GOAL)
    return None


def _position_result(board: ExtinctionBoard, seen: Sequence[str]) -> Outcome | None:
    """The end the position itself brings: extinction, stalemate, the 75-move rule or a
    fivefold repetition (extinction first, as checkmate comes first in chess)."""
    result = _extinction_result(board)
    if result is not None:
        return result
    if not any(board.generate_legal_moves()):
        name = SEAT_NAMES[_seat(board.turn)]
        return Outcome(
            frozenset(),
            f"stalemate: {name} has no legal move",
            termination=Termination.NO_MOVES,
        )
    if board.halfmove_clock >= AUTO_HALFMOVES:
        return Outcome(
            frozenset(),
            "75-move rule: 75 moves by each side without a capture or a pawn move",
            termination=Termination.MOVE_LIMIT,
        )
    if seen.count(seen[-1]) >= AUTO_REPETITIONS:
        return Outcome(
            frozenset(),
            "fivefold repetition: the same position occurred five times",
            termination=Termination.REPETITION,
        )
    return None


def _seat(color: chess.Color) -> int:
    return 0 if color == chess.WHITE else 1


def _color(seat: int) -> chess.Color:
    return chess.WHITE if seat == 0 else chess.BLACK
