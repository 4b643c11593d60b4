"""The Extinction Chess board: python-chess's Board with no check, extinction as the end, king
promotion, and its registration as a python-chess variant (``[Variant "Extinction"]``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

import chess
import chess.variant

SEAT_NAMES: Final = ("White", "Black")

#: Kinds of piece in the order the diagram lists them; a side with none of one kind is extinct.
KINDS: Final = (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)
_INITIAL: Final = {chess.KING: 1, chess.QUEEN: 1, chess.ROOK: 2, chess.BISHOP: 2, chess.KNIGHT: 2}

#: Repetitions and quiet moves: claimable at 3 and 100 half-moves, automatic at 5 and 150.
CLAIM_REPETITIONS: Final = 3
AUTO_REPETITIONS: Final = 5
CLAIM_HALFMOVES: Final = 100
AUTO_HALFMOVES: Final = 150

"""The draw move: claim a draw, accept the opponent's offer, or offer one (in that order)."""

ExtinctionMove = chess.Move

_SYNTAX: Final = (
    "write a move in SAN, like e4, Nf3, exd5, O-O or e8=K, or in coordinates, like e2e4"
)


_EMPTY_RUN: Final = re.compile(r"\.+")


class ExtinctionBoard(chess.Board):
    """A python-chess board with the Extinction rules: no check, castling regardless of attacks,
    promotion to king, and the game over as soon as either side lacks a kind of piece.

    Kings are ordinary pieces here, so every pseudo-legal move is legal. Castling rights belong
    to the king on e1/e8 and the rooks in the corners; a promoted king never castles.
    """

    aliases = ["Extinction", "Extinction chess"]
    uci_variant = "extinction"
    xboard_variant = "extinction"
    one_king = False

    # --- no check -----------------------------------------------------------------------------

    def pin_mask(self, color: chess.Color, square: chess.Square) -> chess.Bitboard:
        return chess.BB_ALL

    def _attacked_for_king(self, path: chess.Bitboard, occupied: chess.Bitboard) -> bool:
        return False

    def checkers_mask(self) -> chess.Bitboard:
        return chess.BB_EMPTY

    def gives_check(self, move: chess.Move) -> bool:
        return False

    def is_into_check(self, move: chess.Move) -> bool:
        return False

    def was_into_check(self) -> bool:
        return False

    # --- extinction ---------------------------------------------------------------------------

    def extinct_kinds(self, color: chess.Color) -> list[chess.PieceType]:
        """The kinds of piece ``color`` has none of (empty while the game goes on)."""
        return [kind for kind in KINDS if not self.pieces_mask(kind, color)]

    def is_variant_end(self) -> bool:
        # Asked several times per move: bit tests rather than extinct_kinds().
        for own in self.occupied_co:
            if not (
                own & self.kings
                and own & self.queens
                and own & self.rooks
                and own & self.bishops
                and own & self.knights
                and own & self.pawns
            ):
                return True
        return False

    def is_variant_loss(self) -> bool:
        # The side to move has lost a kind; if the mover has too, the mover still wins.
        return bool(self.extinct_kinds(self.turn))

    def is_variant_win(self) -> bool:
        return bool(self.extinct_kinds(not self.turn)) and not self.extinct_kinds(self.turn)

    def is_variant_draw(self) -> bool:
        return False

    def has_insufficient_material(self, color: chess.Color) -> bool:
        # While every kind is on the board either side can still capture one (kings too).
        return False

    # --- moves --------------------------------------------------------------------------------

    def generate_pseudo_legal_moves(
        self, from_mask: chess.Bitboard = chess.BB_ALL, to_mask: chess.Bitboard = chess.BB_ALL
    ) -> Iterator[chess.Move]:
        for move in super().generate_pseudo_legal_moves(from_mask, to_mask):
            if move.promotion == chess.QUEEN:
                yield chess.Move(move.from_square, move.to_square, chess.KING)
            yield move

    def generate_legal_moves(
        self, from_mask: chess.Bitboard = chess.BB_ALL, to_mask: chess.Bitboard = chess.BB_ALL
    ) -> Iterator[chess.Move]:
        if self.is_variant_end():
            return
        yield from self.generate_pseudo_legal_moves(from_mask, to_mask)

    def generate_castling_moves(
        self, from_mask: chess.Bitboard = chess.BB_ALL, to_mask: chess.Bitboard = chess.BB_ALL
    ) -> Iterator[chess.Move]:
        """Castling with the king on e1/e8: only the squares between king and rook must be
        empty; attacks do not matter. ``to_mask`` filters by the rook's square."""
        if self.is_variant_end():
            return
        backrank = chess.BB_RANK_1 if self.turn == chess.WHITE else chess.BB_RANK_8
        king = self.occupied_co[self.turn] & self.kings & backrank & chess.BB_FILE_E & from_mask
        if not king:
            return
        king_square = chess.msb(king)
        for rook in chess.scan_reversed(self.clean_castling_rights() & backrank & to_mask):
            if not chess.between(king_square, rook) & self.occupied:
                yield self._from_chess960(False, king_square, rook)

    def is_legal(self, move: chess.Move) -> bool:
        return not self.is_variant_end() and self.is_pseudo_legal(move)

    def push(self, move: chess.Move) -> None:
        """Push ``move``; castling rights follow the home king and corner rooks only.

        python-chess drops a side's rights when any non-promoted king moves and forgets which
        kings were promoted once a position goes through a FEN; here a right goes only when the
        king leaves e1/e8 or a piece leaves or lands on the rook's corner, so a board rebuilt from
        a FEN plays on exactly like the one it came from.
        """
        rights = self.clean_castling_rights()
        home = chess.E1 if self.turn == chess.WHITE else chess.E8
        if move.from_square == home and self.kings & chess.BB_SQUARES[home]:
            rights &= ~(chess.BB_RANK_1 if self.turn == chess.WHITE else chess.BB_RANK_8)
        rights &= ~chess.BB_SQUARES[move.from_square] & ~chess.BB_SQUARES[move.to_square]
        super().push(move)
        self.castling_rights = rights
        self.promoted = chess.BB_EMPTY

    def board_fen(self, *, promoted: bool | None = False) -> str:
        """The piece placement part of the FEN, as python-chess writes it, built from the
        bitboards (python-chess looks at all 64 squares one by one, the slowest part of a move).
        Promoted pieces are never marked: they are simply pieces of their new kind."""
        cells = ["."] * 64
        white = self.occupied_co[chess.WHITE]
        for bitboard, symbols in (
            (self.pawns, "Pp"),
            (self.knights, "Nn"),
            (self.bishops, "Bb"),
            (self.rooks, "Rr"),
            (self.queens, "Qq"),
            (self.kings, "Kk"),
        ):
            for square in chess.scan_forward(bitboard):
                cells[square] = symbols[0] if white & (1 << square) else symbols[1]
        rows = ("".join(cells[rank * 8 : rank * 8 + 8]) for rank in range(7, -1, -1))
        return _EMPTY_RUN.sub(lambda run: str(len(run.group())), "/".join(rows))

    def castling_xfen(self) -> str:
        """The FEN castling field: ``K``/``Q``/``k``/``q`` for the corner rooks that keep their
        right. python-chess measures each rook from the side's one king, which after a
        promotion to king may be the new one (``KAk`` for ``KQk``); here rights belong to the
        king on e1/e8 and the corner rooks only."""
        rights = self.clean_castling_rights()
        field = "".join(
            letter
            for letter, corner in (
                ("K", chess.H1),
                ("Q", chess.A1),
                ("k", chess.H8),
                ("q", chess.A8),
            )
            if rights & chess.BB_SQUARES[corner]
        )
        return field or "-"

    def status(self) -> chess.Status:
        """As in chess, except that a side may have no king or several."""
        status = super().status()
        return status & ~(
            chess.STATUS_NO_WHITE_KING
            | chess.STATUS_NO_BLACK_KING
            | chess.STATUS_TOO_MANY_KINGS
            | chess.STATUS_OPPOSITE_CHECK
        )


def _register_variant() -> None:
    """Let python-chess find the board by the PGN tag ``[Variant "Extinction"]``."""
    known = chess.variant.VARIANTS
    if not any(getattr(v, "uci_variant", None) == "extinction" for v in known):
        known.append(ExtinctionBoard)


_register_variant()
