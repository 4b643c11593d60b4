"""Extinction Chess (R. Wayne Schmittberger, 1985), played on python-chess.

All the laws of chess hold except these: you win by capturing every piece of one kind that your
opponent has (the king; the queens; the rooks; the bishops; the knights; the pawns), promoted
pieces counting as their new kind. There is no check: kings may stand and move in attack and be
captured, and castling out of, through or into attack is allowed. A pawn may promote to a king.
Promoting your last pawn makes your pawns extinct and loses; if the same move also makes a kind
of the opponent's extinct, the mover wins (the inventor's ruling; Fairy-Stockfish differs).

:class:`ExtinctionBoard` is a :class:`chess.Board` with those rules (python-chess already has
non-royal kings and king promotion for antichess); the game module around it keeps a state of
a FEN, the positions since the last irreversible move (for repetitions), the captured pieces and
a standing draw offer. A move copies one board and pushes one move, whatever the game's length.
Importing this module registers the board in ``chess.variant.VARIANTS`` so that python-chess
reads our PGN (``[Variant "Extinction"]``) back.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, NamedTuple

import chess
import chess.pgn
import chess.variant

from pbmserv.games.base import (
    AmbiguousMoveError,
    Game,
    GameSpec,
    IllegalMoveError,
    InvalidMoveError,
    MoveKind,
    Outcome,
    StateError,
    Termination,
    Turn,
    Viewer,
)

SEAT_NAMES: Final = ("White", "Black")

#: Kinds of piece in the order the diagram lists them; a side with none of one kind is extinct.
KINDS: Final = (chess.KING, chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN)
_INITIAL: Final = {chess.KING: 1, chess.QUEEN: 1, chess.ROOK: 2, chess.BISHOP: 2, chess.KNIGHT: 2}

#: Repetitions and quiet moves: claimable at 3 and 100 half-moves, automatic at 5 and 150.
CLAIM_REPETITIONS: Final = 3
AUTO_REPETITIONS: Final = 5
CLAIM_HALFMOVES: Final = 100
AUTO_HALFMOVES: Final = 150

DRAW: Final = "draw"
"""The draw move: claim a draw, accept the opponent's offer, or offer one (in that order)."""

ExtinctionMove = chess.Move | Literal["draw"]

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


# --- the state -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExtinctionState:
    """One position. Treat it as immutable: ``apply`` builds a new one.

    ``seen`` holds the positions (:func:`position_key`) since the last capture, pawn move or
    loss of a castling right, the current one last; no earlier position can come back, so this
    is all that repetitions need, and it never holds more than 151 entries. ``taken`` is what
    White and Black have captured, in order (FEN letters). ``draw_offer`` is the seat whose
    draw offer stands: offered on its turn, it lapses when the opponent moves. ``_board`` is
    the board of ``fen``, shared and never changed.
    """

    fen: str
    seen: tuple[str, ...]
    taken: tuple[str, str] = ("", "")
    last_move: str | None = None
    draw_offer: int | None = None
    result: Outcome | None = None
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
        """Half-moves played since the start (draw offers are not moves)."""
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


# --- reading moves ---------------------------------------------------------------------------

# Matched after the piece letter is upper-cased and the rest lower-cased.
_SAN_RE: Final = re.compile(r"([KQRBN])?([a-h])?([1-8])?[-x:]?([a-h][1-8])(?:=?([qrbnk]))?")
_COORD_RE: Final = re.compile(r"([a-h][1-8])[-x:]?([a-h][1-8])(?:=?([qrbnk]))?")
_CASTLES: Final = {"O-O": True, "OO": True, "O-O-O": False, "OOO": False}
_DRAW_WORDS: Final = {"offer", "offered", "accept", "accepted", "claim", "claimed"}
_DRAW_TEXTS: Final = {"offer": "draw offer", "accept": "draw accepted", "claim": "draw claimed"}


def _quote(text: str) -> str:
    return f'"{text[:40]}..."' if len(text) > 40 else f'"{text}"'


def _is_draw_text(text: str) -> bool:
    """``draw``, ``draw offer``, ``accept draw``, ``draw claimed`` ... (any case)."""
    words = text.lower().split()
    if DRAW not in words or len(words) > 2:
        return False
    return all(w == DRAW or w in _DRAW_WORDS for w in words) and words.count(DRAW) == 1


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


# --- the game --------------------------------------------------------------------------------


def position(fen: str = chess.STARTING_FEN) -> ExtinctionState:
    """A state for the position ``fen`` with no moves behind it (for studies and tests): the
    pieces missing from the usual set count as captured, extra pieces as promoted pawns.
    Raises StateError if ``fen`` is not a valid position."""
    board = _load_board(fen, normal_form=False)
    taken = ["", ""]
    for color in chess.COLORS:
        counts = {kind: len(board.pieces(kind, color)) for kind in KINDS}
        promoted = sum(max(0, counts[kind] - n) for kind, n in _INITIAL.items())
        missing = "".join(
            chess.piece_symbol(kind) * max(0, n - counts[kind]) for kind, n in _INITIAL.items()
        )
        missing += "p" * (8 - counts[chess.PAWN] - promoted)
        taken[_seat(not color)] = missing if color == chess.BLACK else missing.upper()
    state = ExtinctionState(
        fen=board.fen(),
        seen=(position_key(board),),
        taken=(taken[0], taken[1]),
        _board=board,
    )
    _load_taken(list(state.taken), board)
    return replace(state, result=_position_result(board, state.seen))


class ExtinctionChess(Game):
    """Extinction Chess: seat 0 plays White and moves first, seat 1 plays Black."""

    SPEC = GameSpec(
        name="extinction",
        title="Extinction Chess",
        seat_names=SEAT_NAMES,
        move_kinds=(MoveKind(DRAW, "", "offer a draw, accept the one offered, or claim one"),),
        record_formats=("pgn",),
    )

    # --- setting up -------------------------------------------------------------------------

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> ExtinctionState:
        """The usual chess position (Extinction Chess takes no options and no randomness)."""
        return position()

    # --- whose turn -------------------------------------------------------------------------

    def to_move(self, state: ExtinctionState) -> Turn:
        """White or Black, by the board; the prompt mentions draw offers and claims."""
        if state.result is not None:
            return Turn(seats=frozenset())
        seat = state.seat_to_move
        other = SEAT_NAMES[1 - seat]
        example = "Nf3, exd5, O-O or g1f3" if seat == 0 else "Nf6, exd4, O-O or g8f6"
        parts = [f"you play {SEAT_NAMES[seat]}; write moves like {example}"]
        if state.draw_offer == seat:
            parts.append("you have offered a draw, now make your move")
        elif state.draw_offer == 1 - seat:
            parts.append(f"{other} offers a draw: send draw as your move to accept, or move")
        elif _claim(state) is not None:
            parts.append("you may claim a draw by sending draw as your move")
        prompt = "; ".join(parts)
        return Turn(seats=frozenset({seat}), prompts={seat: prompt})

    # --- moves ------------------------------------------------------------------------------

    def parse_move(self, state: ExtinctionState, seat: int, text: str) -> ExtinctionMove:
        """Read SAN (``Nf3``, ``exd5``, ``O-O``, ``e8=K``), coordinates (``g1f3``, ``e7e8k``) or
        ``draw``; raise a graded MoveError that quotes ``text`` and says why."""
        raw = text.strip()
        shown = _quote(raw)
        if state.result is not None:
            raise IllegalMoveError(f"{shown}: the game is over ({state.result.reason})")
        if seat != state.seat_to_move:
            raise IllegalMoveError(
                f"{shown}: it is not your turn; {SEAT_NAMES[state.seat_to_move]} is to move"
            )
        if _is_draw_text(raw):
            if state.draw_offer == seat and _claim(state) is None:
                raise IllegalMoveError(
                    f"{shown}: you have already offered a draw this turn; now make your move"
                )
            return DRAW
        compact = "".join(raw.split())
        if not compact or len(compact) > 12:
            raise InvalidMoveError(f"{shown} is not a chess move: {_SYNTAX}")
        # A copy: explaining a refusal pushes and pops moves (for SAN) on the reader's board.
        return _MoveReader(state.board(), raw).read(compact)

    def format_move(self, state: ExtinctionState, move: ExtinctionMove) -> str:
        """SAN as python-chess writes it (``#`` marks a move that ends the game), or for the draw
        move what it does here: ``draw claimed``, ``draw accepted`` or ``draw offer``."""
        if move == DRAW:
            return _DRAW_TEXTS[self._draw_kind(state)]
        assert isinstance(move, chess.Move)
        return state._board.copy(stack=False).san(move)

    @staticmethod
    def _draw_kind(state: ExtinctionState) -> str:
        if _claim(state) is not None:
            return "claim"
        if state.draw_offer == 1 - state.seat_to_move:
            return "accept"
        return "offer"

    def legal_moves(self, state: ExtinctionState, seat: int) -> list[ExtinctionMove]:
        """Every chess move of the side to move, and ``draw`` unless it was just offered."""
        if state.result is not None or seat != state.seat_to_move:
            return []
        moves: list[ExtinctionMove] = list(state._board.generate_legal_moves())
        if state.draw_offer != seat or _claim(state) is not None:
            moves.append(DRAW)
        return moves

    def apply(
        self, state: ExtinctionState, move: ExtinctionMove, rng: random.Random
    ) -> ExtinctionState:
        """The state after ``move``: one board copy and one push; ``state`` is left as it was."""
        if state.result is not None:
            raise IllegalMoveError("the game is over")
        if move == DRAW:
            return self._apply_draw(state)
        assert isinstance(move, chess.Move)
        board = state._board.copy(stack=False)
        if not board.is_legal(move):
            raise IllegalMoveError(f"{move.uci()} is not a legal move here")
        mover = state.seat_to_move
        captured = self._captured(board, move)
        rights = board.castling_rights
        san = board.san_and_push(move)
        board.clear_stack()
        fen = board.fen()
        key = _key_of(fen)
        irreversible = board.halfmove_clock == 0 or board.castling_rights != rights
        seen = (key,) if irreversible else (*state.seen, key)
        taken = list(state.taken)
        taken[mover] += captured
        return ExtinctionState(
            fen=fen,
            seen=seen,
            taken=(taken[0], taken[1]),
            last_move=san,
            draw_offer=mover if state.draw_offer == mover else None,
            result=_position_result(board, seen),
            _board=board,
        )

    @staticmethod
    def _captured(board: chess.Board, move: chess.Move) -> str:
        """The FEN letter of the piece ``move`` captures, or ''."""
        if board.is_en_passant(move):
            return "p" if board.turn == chess.WHITE else "P"
        piece = board.piece_at(move.to_square)
        if piece is None or piece.color == board.turn:  # castling "captures" nothing
            return ""
        return piece.symbol()

    def _apply_draw(self, state: ExtinctionState) -> ExtinctionState:
        seat = state.seat_to_move
        name = SEAT_NAMES[seat]
        kind = self._draw_kind(state)
        if kind == "claim":
            claimed = _claim_kind(state)
            assert claimed is not None
            reason = f"{name} claimed a draw by {_CLAIMS[claimed]}"
            outcome = Outcome(frozenset(), reason, termination=claimed)
            return replace(state, result=outcome)
        if kind == "accept":
            offer = f"{SEAT_NAMES[1 - seat]}'s offer"
            outcome = Outcome(
                frozenset(),
                f"draw by agreement: {name} accepted {offer}",
                termination=Termination.AGREEMENT,
            )
            return replace(state, result=outcome)
        if state.draw_offer == seat:
            raise IllegalMoveError(f"{name} has already offered a draw this turn")
        return replace(state, draw_offer=seat)

    def outcome(self, state: ExtinctionState) -> Outcome | None:
        """Set by the move that ended the game; None while it goes on."""
        return state.result

    def move_number(self, state: ExtinctionState) -> int:
        """Half-moves played (a draw offer is not a move)."""
        return state.ply

    # --- the diagram ------------------------------------------------------------------------

    def render(self, state: ExtinctionState, viewer: Viewer) -> str:
        """The board with White at the bottom, the material of each side, whose move it is and
        the last move; every viewer sees the same."""
        del viewer  # no hidden information
        board = state._board
        lines = ["    a b c d e f g h"]
        for rank in range(7, -1, -1):
            row = " ".join(
                (p.symbol() if (p := board.piece_at(chess.square(f, rank))) else ".")
                for f in range(8)
            )
            lines.append(f" {rank + 1}  {row}  {rank + 1}")
        kinds = "".join(f"{chess.piece_symbol(k).upper():>3}" for k in KINDS)
        lines += ["    a b c d e f g h", "", f"{'':20}{kinds}   has taken"]
        for seat, name in enumerate(SEAT_NAMES):
            color = _color(seat)
            label = f"{name} ({'capitals' if seat == 0 else 'lower case'})"
            counts = "".join(f"{len(board.pieces(k, color)):>3}" for k in KINDS)
            lines.append(f" {label:<19}{counts}   {' '.join(state.taken[seat]) or '-'}")
        lines.append("")
        lines.append(self._status_line(state))
        if state.result is None and state.draw_offer is not None:
            lines.append(f"{SEAT_NAMES[state.draw_offer]} offers a draw.")
        return "\n".join(lines)

    @staticmethod
    def _status_line(state: ExtinctionState) -> str:
        board = state._board
        parts = []
        if state.last_move is not None:
            number = board.fullmove_number - (1 if board.turn == chess.WHITE else 0)
            dots = "..." if board.turn == chess.WHITE else ". "
            parts.append(f"Last move: {number}{dots}{state.last_move}.")
        if state.result is None:
            to_play = SEAT_NAMES[state.seat_to_move]
            parts.append(f"{to_play} to play, move {board.fullmove_number}.")
        else:
            parts.append("The game is over.")
        return " ".join(parts)

    # --- storage ----------------------------------------------------------------------------

    def dump(self, state: ExtinctionState) -> dict[str, Any]:
        """Versioned JSON: the FEN, the positions since the last irreversible move, the captured
        pieces, the last move, a standing draw offer and the result."""
        result = None
        if state.result is not None:
            result = {
                "winners": sorted(state.result.winners),
                "reason": state.result.reason,
                "termination": state.result.termination.value,
            }
        return {
            "version": self.STATE_VERSION,
            "fen": state.fen,
            "seen": list(state.seen),
            "taken": list(state.taken),
            "last_move": state.last_move,
            "draw_offer": state.draw_offer,
            "result": result,
        }

    def load(self, data: Mapping[str, Any]) -> ExtinctionState:
        """Check every field against the position and rebuild the board from the FEN."""
        if not isinstance(data, Mapping):
            raise StateError("extinction: the state is not a JSON object")
        self._check_version(data)
        board = _load_board(data.get("fen"))
        seen = _load_seen(data.get("seen"), board)
        taken = _load_taken(data.get("taken"), board)
        last_move = _load_last_move(data.get("last_move"), board, seen)
        offer = data.get("draw_offer")
        if offer is not None and (type(offer) is not int or offer not in (0, 1)):
            raise StateError(f"extinction: bad draw offer {offer!r}")
        state = ExtinctionState(
            fen=board.fen(),
            seen=seen,
            taken=taken,
            last_move=last_move,
            draw_offer=offer,
            _board=board,
        )
        return replace(state, result=_load_result(data.get("result"), state))

    # --- the record -------------------------------------------------------------------------

    def export(
        self,
        fmt: str,
        start: ExtinctionState,
        moves: Sequence[str],
        outcome: Outcome | None,
        headers: Mapping[str, str],
    ) -> str:
        """The game as PGN with ``[Variant "Extinction"]``; draw offers are left out, the
        reason for the result is the closing comment."""
        if fmt != "pgn":
            raise ValueError(f"{self.SPEC.name} has no {fmt} record")
        game = chess.pgn.Game()
        board = start.board()
        game.setup(board)
        game.headers["Event"] = f"Extinction Chess, board {headers.get('Board', '?')}"
        game.headers["Site"] = headers.get("Site", "?")
        game.headers["Date"] = headers.get("Date", "????.??.??")
        game.headers["Round"] = "-"
        game.headers["White"] = headers.get("Seat0", "?")
        game.headers["Black"] = headers.get("Seat1", "?")
        game.headers["Result"] = _pgn_result(outcome)
        node: chess.pgn.GameNode = game
        for text in moves:
            if _is_draw_text(text):
                continue
            move = _MoveReader(board, text).read("".join(text.split()))
            board.push(move)
            node = node.add_variation(move)
        if outcome is not None:
            node.comment = outcome.reason
        exporter = chess.pgn.StringExporter(headers=True, variations=False, comments=True)
        return game.accept(exporter)


def _pgn_result(outcome: Outcome | None) -> str:
    if outcome is None:
        return "*"
    if not outcome.winners:
        return "1/2-1/2"
    return "1-0" if 0 in outcome.winners else "0-1"


# --- loading, field by field -----------------------------------------------------------------


def _load_board(fen: object, *, normal_form: bool = True) -> ExtinctionBoard:
    """The board of a valid FEN; a stored one must be written exactly as python-chess would."""
    if not isinstance(fen, str) or len(fen) > 100:
        raise StateError(f"extinction: bad FEN {fen!r}")
    try:
        board = ExtinctionBoard(fen)
    except ValueError as exc:
        raise StateError(f"extinction: bad FEN {fen!r}: {exc}") from None
    if not board.is_valid() or (normal_form and board.fen() != fen):
        raise StateError(f"extinction: {fen!r} is not a valid position in normal form")
    return board


def _load_seen(seen: object, board: ExtinctionBoard) -> tuple[str, ...]:
    """The positions since the last irreversible move: same pieces, alternating sides."""
    if (
        not isinstance(seen, list)
        or not seen
        or len(seen) > board.halfmove_clock + 1
        or not all(isinstance(k, str) for k in seen)
    ):
        raise StateError("extinction: 'seen' must list the positions since the last capture")
    if seen[-1] != position_key(board):
        raise StateError("extinction: the last position seen is not the current one")
    now = _key_facts(seen[-1])  # None just after a pawn's double step (then seen is short)
    for back, key in enumerate(reversed(seen)):
        if back == 0:
            continue
        facts = None if now is None else _key_facts(key)
        if now is None or facts is None:  # not plainly in normal form: python-chess judges
            _check_earlier_board(key, back, board)
        elif (
            facts.pawns != now.pawns
            or facts.material != now.material
            or facts.castling != now.castling
            or (facts.turn == now.turn) != (back % 2 == 0)
        ):
            raise StateError(f"extinction: {key!r} cannot come before the current position")
    counts: dict[str, int] = {}
    for key in seen[:-1]:
        counts[key] = counts.get(key, 0) + 1
        if counts[key] >= AUTO_REPETITIONS:
            raise StateError("extinction: a fivefold repetition should have ended the game")
    return tuple(seen)


class _KeyFacts(NamedTuple):
    pawns: str  # the placement with every piece but the pawns (of either side) blanked
    material: str  # the piece letters, sorted
    turn: str
    castling: str


_EXPAND_DIGITS: Final = str.maketrans({str(n): "." * n for n in range(1, 9)})
_ONLY_PAWNS: Final = str.maketrans("NBRQKnbrqkP", "..........p")
_KEY_RE: Final = re.compile(r"(?:[PNBRQKpnbrqk1-8]+/){7}[PNBRQKpnbrqk1-8]+ [wb] (?:K?Q?k?q?|-) -")
_ADJACENT_DIGITS: Final = re.compile(r"[1-8]{2}")
#: Where castling letters need their king and rook, in the expanded placement (rank 8 first,
#: nine characters a rank with the slash): K e1 h1, Q e1 a1, k e8 h8, q e8 a8.
_CASTLING_SQUARES: Final = {"K": (67, "K", 70, "R"), "Q": (67, "K", 63, "R")} | {
    "k": (4, "k", 7, "r"),
    "q": (4, "k", 0, "r"),
}


def _key_facts(key: str) -> _KeyFacts | None:
    """What must stay the same between positions of ``seen``, read from a position key with
    string operations (a python-chess board costs 100 us to build, and ``seen`` may hold 150
    keys); None unless the key is plainly one python-chess would write: no en passant square,
    every rank of eight squares, runs of empty squares in one digit, castling rights that the
    kings and rooks still have."""
    if not _KEY_RE.fullmatch(key) or _ADJACENT_DIGITS.search(key):
        return None
    placement, turn, castling, _ = key.split(" ")
    expanded = placement.translate(_EXPAND_DIGITS)
    if len(expanded) != 71:  # eight ranks of eight, seven slashes
        return None
    if any(expanded[i] != "/" for i in range(8, 71, 9)):
        return None
    for letter in castling.strip("-"):
        king, king_piece, rook, rook_piece = _CASTLING_SQUARES[letter]
        if expanded[king] != king_piece or expanded[rook] != rook_piece:
            return None
    pieces = expanded.replace(".", "").replace("/", "")
    return _KeyFacts(expanded.translate(_ONLY_PAWNS), "".join(sorted(pieces)), turn, castling)


def _check_earlier_board(key: str, back: int, board: ExtinctionBoard) -> None:
    """The full check of a position ``back`` moves before ``board``, by python-chess."""
    try:
        earlier = ExtinctionBoard(f"{key} 0 1")
    except ValueError:
        raise StateError(f"extinction: bad position {key!r} in 'seen'") from None
    if (
        position_key(earlier) != key
        or earlier.turn != (board.turn if back % 2 == 0 else not board.turn)
        or earlier.pawns != board.pawns
        or earlier.castling_rights != board.castling_rights
        or _material(earlier) != _material(board)
    ):
        raise StateError(f"extinction: {key!r} cannot come before the current position")


def _material(board: chess.Board) -> list[str]:
    return sorted(piece.symbol() for piece in board.piece_map().values())


def _load_taken(taken: object, board: ExtinctionBoard) -> tuple[str, str]:
    """What each side captured must add up with the board to 16 pieces, 8 of them pawns or
    pieces promoted from them."""
    if (
        not isinstance(taken, list)
        or len(taken) != 2
        or not all(isinstance(t, str) for t in taken)
        or set(taken[0]) - set("kqrbnp")
        or set(taken[1]) - set("KQRBNP")
    ):
        raise StateError("extinction: 'taken' must be the black and the white pieces captured")
    for color, lost in ((chess.BLACK, taken[0]), (chess.WHITE, taken[1])):
        lost = lost.lower()
        pawns = len(board.pieces(chess.PAWN, color)) + lost.count("p")
        extra = 0
        for kind, initial in _INITIAL.items():
            count = len(board.pieces(kind, color)) + lost.count(chess.piece_symbol(kind))
            if count < initial:
                raise StateError("extinction: pieces are missing from the board and 'taken'")
            extra += count - initial
        if pawns > 8 or extra != 8 - pawns:
            raise StateError("extinction: the captured pieces do not add up with the board")
    return taken[0], taken[1]


def _load_last_move(last: object, board: ExtinctionBoard, seen: tuple[str, ...]) -> str | None:
    """None at the start or in a position set up without its moves; where the previous position
    is known, the move must lead here."""
    if last is None:
        return None
    start = board.fullmove_number == 1 and board.turn == chess.WHITE
    if not isinstance(last, str) or start or not last or len(last) > 12:
        raise StateError(f"extinction: bad last move {last!r}")
    if len(seen) >= 2:
        before = ExtinctionBoard(f"{seen[-2]} 0 1")
        try:
            move = _MoveReader(before, last).read(last)
        except ValueError:
            raise StateError(f"extinction: the last move {last!r} was not legal") from None
        if before.san_and_push(move) != last or position_key(before) != seen[-1]:
            raise StateError(f"extinction: the last move {last!r} does not lead here")
    return last


def _load_result(stored: object, state: ExtinctionState) -> Outcome | None:
    """The position decides extinction, stalemate and the automatic draws; a claimed or agreed
    draw must have been possible."""
    computed = _position_result(state._board, state.seen)
    if stored is None:
        if computed is not None:
            raise StateError("extinction: the game is over but no result is stored")
        return None
    if (
        not isinstance(stored, Mapping)
        or not isinstance(stored.get("winners"), list)
        or not isinstance(stored.get("reason"), str)
    ):
        raise StateError(f"extinction: bad result {stored!r}")
    if computed is not None:
        if stored["winners"] != sorted(computed.winners) or stored.get("termination") not in (
            None,
            computed.termination.value,
        ):
            raise StateError(f"extinction: the stored result does not match the board: {stored!r}")
        return computed
    if stored["winners"] or (_claim(state) is None and state.draw_offer is None):
        raise StateError(f"extinction: nothing on the board explains the result {stored!r}")
    termination = _stored_draw_kind(stored, state)
    return Outcome(frozenset(), stored["reason"], termination=termination)


def _stored_draw_kind(stored: Mapping[str, Any], state: ExtinctionState) -> Termination:
    """A claimed or agreed draw's kind; states stored before it was kept give it from the
    position (an offer standing: agreed; otherwise the claim the position allowed)."""
    raw = stored.get("termination")
    if raw is None:
        claimed = _claim_kind(state)
        return Termination.AGREEMENT if state.draw_offer is not None or not claimed else claimed
    allowed = (Termination.AGREEMENT, *_CLAIMS)
    if raw not in [kind.value for kind in allowed]:
        raise StateError(f"extinction: bad draw kind {raw!r}")
    return Termination(raw)


GAME = ExtinctionChess()
