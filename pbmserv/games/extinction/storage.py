"""Loading a stored Extinction state field by field: every field is checked against the
position, so a hand-edited or truncated state is refused."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

import chess

from pbmserv.games.base import (
    Outcome,
    StateError,
    Termination,
)
from pbmserv.games.extinction.board import (
    _INITIAL,
    AUTO_REPETITIONS,
    ExtinctionBoard,
)
from pbmserv.games.extinction.lastmove import origins
from pbmserv.games.extinction.notation import (
    _MoveReader,
)
from pbmserv.games.extinction.state import (
    _CLAIMS,
    ExtinctionState,
    _claim,
    _claim_kind,
    _position_result,
    position_key,
)

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


def _load_last_from(
    stored: object, board: ExtinctionBoard, last_move: str | None, seen: tuple[str, ...]
) -> chess.Square | None:
    """The square the last move left: as stored, one it may have left; not stored, the one
    square the move and the position allow, or None (a state stored before it was kept)."""
    if last_move is None:
        if stored is not None:
            raise StateError(f"extinction: bad last_from {stored!r} with no last move")
        return None
    found = origins(board, last_move, seen)
    if stored is None:
        return found[0] if len(found) == 1 else None
    if not isinstance(stored, str) or stored not in chess.SQUARE_NAMES:
        raise StateError(f"extinction: bad last_from {stored!r}")
    square = chess.parse_square(stored)
    if square not in found:
        raise StateError(f"extinction: the last move {last_move!r} did not come from {stored}")
    return square


def _load_result(stored: object, state: ExtinctionState, *, offered: bool) -> Outcome | None:
    """The position decides extinction, stalemate and the automatic draws; a claimed or agreed
    draw must have been possible (``offered``: the state held a draw offer, as states stored
    while the offer was a move of the game could)."""
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
    agreed = offered or stored.get("termination") == Termination.AGREEMENT.value
    if stored["winners"] or (_claim(state) is None and not agreed):
        raise StateError(f"extinction: nothing on the board explains the result {stored!r}")
    termination = _stored_draw_kind(stored, state, offered=offered)
    return Outcome(frozenset(), stored["reason"], termination=termination)


def _stored_draw_kind(
    stored: Mapping[str, Any], state: ExtinctionState, *, offered: bool
) -> Termination:
    """A claimed or agreed draw's kind; states stored before it was kept give it from the
    position (an offer standing: agreed; otherwise the claim the position allowed)."""
    raw = stored.get("termination")
    if raw is None:
        claimed = _claim_kind(state)
        return Termination.AGREEMENT if offered or not claimed else claimed
    allowed = (Termination.AGREEMENT, *_CLAIMS)
    if raw not in [kind.value for kind in allowed]:
        raise StateError(f"extinction: bad draw kind {raw!r}")
    return Termination(raw)
