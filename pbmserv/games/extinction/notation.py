"""Reading Extinction moves as players write them (SAN, coordinates, castling, draw words), and
saying why a move that reads well is not legal."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Final

import chess

from pbmserv.games.base import (
    AmbiguousMoveError,
    IllegalMoveError,
    InvalidMoveError,
)
from pbmserv.games.extinction.board import (
    _SYNTAX,
    SEAT_NAMES,
    ExtinctionBoard,
)
from pbmserv.games.extinction.state import (
    _seat,
)

# --- reading moves ---------------------------------------------------------------------------

# Matched after the piece letter is upper-cased and the rest lower-cased.
_SAN_RE: Final = re.compile(r"([KQRBN])?([a-h])?([1-8])?[-x:]?([a-h][1-8])(?:=?([qrbnk]))?")
_COORD_RE: Final = re.compile(r"([a-h][1-8])[-x:]?([a-h][1-8])(?:=?([qrbnk]))?")
_CASTLES: Final = {"O-O": True, "OO": True, "O-O-O": False, "OOO": False}
_DRAW_WORDS: Final = {"offer", "offered", "accept", "accepted", "claim", "claimed"}


def _quote(text: str) -> str:
    return f'"{text[:40]}..."' if len(text) > 40 else f'"{text}"'


def _is_draw_text(text: str) -> bool:
    """``draw``, ``draw offer``, ``accept draw``, ``draw claimed`` ... (any case)."""
    words = text.lower().split()
    if "draw" not in words or len(words) > 2:
        return False
    return all(w == "draw" or w in _DRAW_WORDS for w in words) and words.count("draw") == 1


def _describe(board: chess.Board, square: chess.Square) -> str:
    """``your bishop`` or ``Black's knight`` for the piece on ``square``."""
    piece = board.piece_at(square)
    assert piece is not None
    owner = "your" if piece.color == board.turn else f"{SEAT_NAMES[_seat(piece.color)]}'s"
    return f"{owner} {chess.piece_name(piece.piece_type)}"


def _reach(piece_type: chess.PieceType, square: chess.Square) -> chess.Bitboard:
    """Where a piece could go from ``square`` on an empty board (not pawns)."""
    if piece_type == chess.KNIGHT:
        return chess.BB_KNIGHT_ATTACKS[square]
    if piece_type == chess.KING:
        return chess.BB_KING_ATTACKS[square]
    straight = chess.BB_RANK_ATTACKS[square][0] | chess.BB_FILE_ATTACKS[square][0]
    diagonal = chess.BB_DIAG_ATTACKS[square][0]
    if piece_type == chess.ROOK:
        return straight
    if piece_type == chess.BISHOP:
        return diagonal
    return straight | diagonal


@dataclass(frozen=True)
class _Wanted:
    """What a move text asks for: a kind of piece, the squares it may come from, where it goes
    and the promotion."""

    piece_type: chess.PieceType
    from_mask: chess.Bitboard
    to_square: chess.Square
    promotion: chess.PieceType | None
    pawn_capture: bool = False  # a pawn move naming its file: it must capture
    origin: str = ""  # the squares the text allows, in words: "on b3", "on the b-file"


def _matches(board: chess.Board, move: chess.Move, wanted: _Wanted) -> bool:
    if (
        move.to_square != wanted.to_square
        or not wanted.from_mask & chess.BB_SQUARES[move.from_square]
    ):
        return False
    if board.piece_type_at(move.from_square) != wanted.piece_type:
        return False
    if wanted.piece_type == chess.PAWN and wanted.pawn_capture != (
        chess.square_file(move.from_square) != chess.square_file(move.to_square)
    ):
        return False
    return move.promotion == wanted.promotion


class _MoveReader:
    """Reads one move text against a board; raises graded errors that say why not."""

    def __init__(self, board: ExtinctionBoard, raw: str) -> None:
        self.board = board
        self.raw = raw
        self.shown = _quote(raw)
        self.me = SEAT_NAMES[_seat(board.turn)]

    def read(self, compact: str) -> chess.Move:
        core = compact.rstrip("+#!?")
        if core.upper().replace("0", "O") in _CASTLES:
            return self._castle(_CASTLES[core.upper().replace("0", "O")])
        if core[:1] in "KQRBN" and core:
            # A capital piece letter is SAN, read by python-chess: "B2d5" is the bishop from
            # rank 2 even though it also reads as the coordinates b2-d5.
            try:
                return self.board.parse_san(core)
            except ValueError:
                pass  # coordinates after all, or a mistake to explain below
        lowered = core.lower()
        coords = _COORD_RE.fullmatch(lowered)
        if coords:
            try:
                return self._coordinates(*coords.groups())
            except IllegalMoveError:
                if core[:1] != "b":
                    raise
                # "b2d5" where no piece on b2 goes to d5: the bishop from rank 2, if one does.
                try:
                    return self.board.parse_san("B" + core[1:])
                except ValueError:
                    pass
                raise
        if core[:1] in ("k", "q", "r", "n"):
            core = core[0].upper() + core[1:]
        head, tail = (core[0], core[1:]) if core[:1] in "KQRBN" and core else ("", core)
        san = _SAN_RE.fullmatch(head + tail.lower())
        if san is None:
            raise InvalidMoveError(f"{self.shown} is not a chess move: {_SYNTAX}")
        wanted = self._san_wanted(*san.groups())
        found = self._candidates(wanted)
        if not found and core[:1] == "b":
            # "bc4": pawn notation first, as SAN says; a bishop if no pawn move fits.
            bishop = _SAN_RE.fullmatch("B" + tail[1:].lower())
            if bishop is not None:
                found = self._candidates(self._san_wanted(*bishop.groups()))
            if not found:
                why = self._why_not(wanted)
                raise IllegalMoveError(
                    f"{self.shown}: {why} (a bishop is written with a capital B)"
                )
        return self._one(found, wanted)

    # --- the forms ----------------------------------------------------------------------------

    def _castle(self, kingside: bool) -> chess.Move:
        for move in self.board.generate_castling_moves():
            if self.board.is_kingside_castling(move) == kingside:
                return move
        side = "kingside" if kingside else "queenside"
        back = 0 if self.board.turn == chess.WHITE else 7
        rook = chess.square(7 if kingside else 0, back)
        if not self.board.clean_castling_rights() & chess.BB_SQUARES[rook]:
            raise IllegalMoveError(
                f"{self.shown}: {self.me} can no longer castle {side}: the king or the "
                f"{chess.square_name(rook)} rook has moved, or that rook was captured"
            )
        between = chess.between(chess.square(4, back), rook) & self.board.occupied
        blocker = chess.lsb(between) if kingside else chess.msb(between)  # nearest the king
        raise IllegalMoveError(
            f"{self.shown}: to castle {side} the squares between the king and the rook must be "
            f"empty, but {chess.square_name(blocker)} holds {_describe(self.board, blocker)}"
        )

    def _coordinates(self, origin: str, target: str, promo: str | None) -> chess.Move:
        board = self.board
        from_square = chess.parse_square(origin)
        to_square = chess.parse_square(target)
        piece = board.piece_at(from_square)
        if piece is None:
            raise IllegalMoveError(f"{self.shown}: there is no piece on {origin}")
        if piece.color != board.turn:
            raise IllegalMoveError(
                f"{self.shown}: the piece on {origin} is {_describe(board, from_square)}; "
                f"you play {self.me}"
            )
        if from_square == to_square:
            raise IllegalMoveError(f"{self.shown}: a move must go to another square")
        castling = self._castling_side(piece, from_square, to_square)
        if castling is not None:
            return self._castle(castling)
        wanted = _Wanted(
            piece.piece_type,
            chess.BB_SQUARES[from_square],
            to_square,
            chess.PIECE_SYMBOLS.index(promo) if promo else None,
            pawn_capture=chess.square_file(from_square) != chess.square_file(to_square),
        )
        return self._one(self._candidates(wanted), wanted)

    def _castling_side(
        self, piece: chess.Piece, from_square: chess.Square, to_square: chess.Square
    ) -> bool | None:
        """Kingside (True) or queenside (False) if the king on its home square goes two files
        over or onto a corner (``e1g1``, ``e1h1`` as in Chess960 notation); else None."""
        back = 0 if self.board.turn == chess.WHITE else 7
        if piece.piece_type != chess.KING or from_square != chess.square(4, back):
            return None
        if chess.square_rank(to_square) != back:
            return None
        return {6: True, 7: True, 2: False, 0: False}.get(chess.square_file(to_square))

    def _san_wanted(
        self,
        letter: str | None,
        file: str | None,
        rank: str | None,
        target: str,
        promo: str | None,
    ) -> _Wanted:
        mask = chess.BB_ALL
        if file:
            mask &= chess.BB_FILES[chess.FILE_NAMES.index(file)]
        if rank:
            mask &= chess.BB_RANKS[int(rank) - 1]
        piece_type = chess.PIECE_SYMBOLS.index(letter.lower()) if letter else chess.PAWN
        origin = ""
        if file and rank:
            origin = f"on {file}{rank}"
        elif file:
            origin = f"on the {file}-file"
        elif rank:
            origin = f"on rank {rank}"
        return _Wanted(
            piece_type,
            mask,
            chess.parse_square(target),
            chess.PIECE_SYMBOLS.index(promo) if promo else None,
            pawn_capture=piece_type == chess.PAWN and file is not None and file != target[0],
            origin=origin,
        )

    def _candidates(self, wanted: _Wanted) -> list[chess.Move]:
        return [m for m in self.board.generate_legal_moves() if _matches(self.board, m, wanted)]

    def _one(self, found: list[chess.Move], wanted: _Wanted) -> chess.Move:
        if len(found) == 1:
            return found[0]
        if found:
            options = sorted(self.board.san(m) for m in found)
            listed = ", ".join(options[:-1]) + f" or {options[-1]}"
            raise AmbiguousMoveError(
                f"{self.shown} is ambiguous: it could be {listed}; write the one you mean"
            )
        raise IllegalMoveError(f"{self.shown}: {self._why_not(wanted)}")

    # --- why a move is not legal --------------------------------------------------------------

    def _why_not(self, wanted: _Wanted) -> str:
        board = self.board
        piece_type = wanted.piece_type
        name = chess.piece_name(piece_type)
        to_square = wanted.to_square
        target = chess.square_name(to_square)
        last_rank = chess.square_rank(to_square) == (7 if board.turn == chess.WHITE else 0)
        if wanted.promotion is not None and not (piece_type == chess.PAWN and last_rank):
            return "only a pawn that reaches the last rank is promoted"
        mine = board.pieces_mask(piece_type, board.turn) & wanted.from_mask
        if not mine:
            return f"you have no {name} {wanted.origin}".rstrip()
        if board.occupied_co[board.turn] & chess.BB_SQUARES[to_square]:
            return f"{target} is occupied by {_describe(board, to_square)}"
        if piece_type == chess.PAWN:
            return self._why_not_pawn(wanted, mine, last_rank)
        colour = self.me.lower()
        if piece_type == chess.KING and all(
            chess.square_distance(s, to_square) > 1 for s in chess.scan_forward(mine)
        ):
            return "the king moves one square at a time (castle with O-O or O-O-O)"
        pieces = list(chess.scan_forward(mine))
        reaching = [s for s in pieces if _reach(piece_type, s) & chess.BB_SQUARES[to_square]]
        blocked = [s for s in reaching if chess.between(s, to_square) & board.occupied]
        if not blocked:
            if len(pieces) == 1:
                return f"the {name} on {chess.square_name(pieces[0])} cannot reach {target}"
            return f"no {colour} {name} can reach {target}"
        square = blocked[0]
        between = chess.between(square, to_square) & board.occupied
        # The first piece in the way, seen from the moving piece.
        blocker = chess.lsb(between) if square < to_square else chess.msb(between)
        return (
            f"the {name} on {chess.square_name(square)} is blocked by "
            f"{_describe(board, blocker)} on {chess.square_name(blocker)}"
        )

    def _why_not_pawn(self, wanted: _Wanted, mine: chess.Bitboard, last_rank: bool) -> str:
        board = self.board
        target = chess.square_name(wanted.to_square)
        colour = self.me.lower()
        if wanted.promotion is None and last_rank:
            promoting = [
                m
                for m in board.generate_legal_moves(mine, chess.BB_SQUARES[wanted.to_square])
                if m.promotion
            ]
            if promoting:
                origin = promoting[0].from_square
                base = target
                if chess.square_file(origin) != chess.square_file(wanted.to_square):
                    base = f"{chess.FILE_NAMES[chess.square_file(origin)]}x{target}"
                forms = ", ".join(f"{base}={p}" for p in "QRBN") + f" or {base}=K"
                return f"a pawn that reaches the last rank must be promoted: write {forms}"
        occupant = board.piece_at(wanted.to_square)
        if wanted.pawn_capture:
            if occupant is None and wanted.to_square != board.ep_square:
                return f"there is nothing to capture on {target}"
            return f"no {colour} pawn can capture on {target}"
        captures = [
            m
            for m in board.generate_legal_moves(board.pawns, chess.BB_SQUARES[wanted.to_square])
            if _matches(board, m, replace(wanted, from_mask=chess.BB_ALL, pawn_capture=True))
        ]
        capture = board.san(captures[0]) if captures else ""
        if occupant is not None:
            held = _describe(board, wanted.to_square)
            hint = f"; to take it, write {capture}" if capture else ""
            return f"pawns capture diagonally, and {target} holds {held}{hint}"
        if capture:  # en passant onto an empty square
            straight = f"no {colour} pawn can move straight to {target}"
            return f"{straight}; to take en passant, write {capture}"
        return f"no {colour} pawn can move to {target}{self._pawn_steps(wanted.to_square)}"

    def _pawn_steps(self, to_square: chess.Square) -> str:
        """Where the nearest own pawn behind ``to_square`` on its file can go, as a hint."""
        board = self.board
        file_pawns = (
            board.pieces_mask(chess.PAWN, board.turn) & chess.BB_FILES[chess.square_file(to_square)]
        )
        behind = [
            s
            for s in chess.scan_forward(file_pawns)
            if (s < to_square) == (board.turn == chess.WHITE)
        ]
        if not behind:
            return ""
        pawn = max(behind) if board.turn == chess.WHITE else min(behind)
        steps = [
            chess.square_name(m.to_square)
            for m in board.generate_legal_moves(chess.BB_SQUARES[pawn])
            if chess.square_file(m.to_square) == chess.square_file(pawn) and not m.promotion
        ]
        where = chess.square_name(pawn)
        if not steps:
            return f": the pawn on {where} is blocked"
        return f": the pawn on {where} can go to {' or '.join(sorted(steps))} only"
