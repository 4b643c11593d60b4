"""Where the last move went from and to, for the picture: read from its SAN and the position it
led to, so that a stored state keeps the square it left only where those leave it open.

SAN names the square a move reaches but not always the one it left: ``e4`` may come from e2 or
e3, ``Nxf3`` from any empty square a knight on f3 reaches. Where the positions since the last
irreversible move show the one before (``seen``), the move is read there; where they do not
(after a capture, a pawn move or a loss of castling rights), the candidates are the empty
squares the moved piece could have come from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

import chess

from pbmserv.games.extinction.board import ExtinctionBoard
from pbmserv.games.extinction.notation import _MoveReader

# SAN as python-chess writes it (a ``#`` ends the game); castling is read apart.
_SAN: Final = re.compile(r"([KQRBN])?([a-h])?([1-8])?x?([a-h][1-8])(?:=[QRBNK])?[+#]?")


def origins(board: chess.Board, san: str, seen: Sequence[str]) -> tuple[chess.Square, ...]:
    """The squares the move ``san``, which led to ``board``, may have left (the king's square
    for castling), in square order: one where the move and the positions tell, more where they
    leave it open, none if ``san`` is not a move that could have led here."""
    mover = not board.turn
    if san.startswith("O-O"):
        return (chess.E1 if mover == chess.WHITE else chess.E8,)
    match = _SAN.fullmatch(san)
    if match is None:
        return ()
    kind, file, rank, target = match.groups()
    to_square = chess.parse_square(target)
    if kind is None:
        found = _pawn_origins(board, mover, file, to_square)
    else:
        found = _piece_origins(
            board, chess.PIECE_SYMBOLS.index(kind.lower()), file, rank, to_square
        )
    if len(found) > 1 and len(seen) >= 2:  # the position before is known: read the move there
        before = ExtinctionBoard(f"{seen[-2]} 0 1")
        try:
            return (_MoveReader(before, san).read(san).from_square,)
        except ValueError:
            return ()
    return found


def _pawn_origins(
    board: chess.Board, mover: chess.Color, file: str | None, to_square: chess.Square
) -> tuple[chess.Square, ...]:
    """A capture comes from the file it names; a step from the square behind, or from two
    behind if that is the pawn's first rank and empty now."""
    back = -8 if mover == chess.WHITE else 8
    if not 0 <= to_square + back < 64:
        return ()
    if file is not None:
        return (chess.square(chess.FILE_NAMES.index(file), chess.square_rank(to_square + back)),)
    one = to_square + back
    double_rank = 3 if mover == chess.WHITE else 4
    if chess.square_rank(to_square) == double_rank and board.piece_at(one + back) is None:
        return tuple(sorted((one, one + back)))
    return (one,)


def _piece_origins(
    board: chess.Board,
    kind: chess.PieceType,
    file: str | None,
    rank: str | None,
    to_square: chess.Square,
) -> tuple[chess.Square, ...]:
    """The empty squares, on the file and rank the SAN names, from which a piece of ``kind``
    reaches ``to_square``: the squares it reaches from ``to_square`` (moves are symmetric, and
    the squares between are as they were)."""
    occupied = board.occupied
    if kind == chess.KNIGHT:
        reach = chess.BB_KNIGHT_ATTACKS[to_square]
    elif kind == chess.KING:
        reach = chess.BB_KING_ATTACKS[to_square]
    else:
        reach = chess.BB_EMPTY
        if kind in (chess.BISHOP, chess.QUEEN):
            reach |= chess.BB_DIAG_ATTACKS[to_square][chess.BB_DIAG_MASKS[to_square] & occupied]
        if kind in (chess.ROOK, chess.QUEEN):
            reach |= chess.BB_RANK_ATTACKS[to_square][chess.BB_RANK_MASKS[to_square] & occupied]
            reach |= chess.BB_FILE_ATTACKS[to_square][chess.BB_FILE_MASKS[to_square] & occupied]
    reach &= ~occupied
    if file is not None:
        reach &= chess.BB_FILES[chess.FILE_NAMES.index(file)]
    if rank is not None:
        reach &= chess.BB_RANKS[int(rank) - 1]
    return tuple(chess.scan_forward(reach))


def squares(
    san: str | None, mover: chess.Color, left: chess.Square | None
) -> tuple[tuple[chess.Square, ...], tuple[chess.Square, ...]]:
    """The squares the last move (``san``, by ``mover``) left and reached: for castling the
    king's and the rook's; otherwise ``left`` (if known) and the square the SAN names last (a
    promotion's or an en passant capture's too)."""
    if not san:
        return (), ()
    if san.startswith("O-O"):
        rank = 0 if mover == chess.WHITE else 7
        king_to, rook_from, rook_to = (2, 0, 3) if san.startswith("O-O-O") else (6, 7, 5)
        return (
            (chess.square(4, rank), chess.square(rook_from, rank)),
            (chess.square(king_to, rank), chess.square(rook_to, rank)),
        )
    targets = re.findall(r"[a-h][1-8]", san)
    reached = (chess.parse_square(targets[-1]),) if targets else ()
    return (() if left is None else (left,)), reached
