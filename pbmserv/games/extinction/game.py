"""Extinction Chess under the game contract: turns, moves, the diagram, storage and the PGN
record, built on the board, state, notation, lastmove and storage modules."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import chess
import chess.pgn

from pbmserv.games.base import (
    Game,
    GameSpec,
    IllegalMoveError,
    InvalidMoveError,
    Outcome,
    StateError,
    Turn,
    Viewer,
)
from pbmserv.games.drawing import HIGHLIGHT, HIGHLIGHT_FROM
from pbmserv.games.extinction.board import (
    _INITIAL,
    _SYNTAX,
    KINDS,
    SEAT_NAMES,
    ExtinctionMove,
)
from pbmserv.games.extinction.lastmove import origins, squares
from pbmserv.games.extinction.notation import (
    _is_draw_text,
    _MoveReader,
    _quote,
)
from pbmserv.games.extinction.picture import board_svg
from pbmserv.games.extinction.state import (
    _CLAIMS,
    ExtinctionState,
    _claim,
    _claim_kind,
    _color,
    _key_of,
    _position_result,
    _seat,
    position_key,
)
from pbmserv.games.extinction.storage import (
    _load_board,
    _load_last_from,
    _load_last_move,
    _load_result,
    _load_seen,
    _load_taken,
)

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


class ExtinctionChess(Game[ExtinctionState, ExtinctionMove]):
    """Extinction Chess: seat 0 plays White and moves first, seat 1 plays Black."""

    SPEC = GameSpec(
        name="extinction",
        title="Extinction Chess",
        numbering="chess",
        seat_names=SEAT_NAMES,
        draw_by_agreement=True,
        record_formats=("pgn",),
    )

    # --- setting up -------------------------------------------------------------------------

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> ExtinctionState:
        """The usual chess position (Extinction Chess takes no options and no randomness)."""
        return position()

    # --- whose turn -------------------------------------------------------------------------

    def to_move(self, state: ExtinctionState) -> Turn:
        """White or Black, by the board; the prompt says when a draw may be claimed."""
        if state.result is not None:
            return Turn(seats=frozenset())
        seat = state.seat_to_move
        example = "Nf3, exd5, O-O or g1f3" if seat == 0 else "Nf6, exd4, O-O or g8f6"
        parts = [f"you play {SEAT_NAMES[seat]}; write moves like {example}"]
        claim = _claim(state)
        if claim is not None:
            parts.append(f"you may claim a draw by {claim}")
        prompt = "; ".join(parts)
        return Turn(seats=frozenset({seat}), prompts={seat: prompt})

    # --- moves ------------------------------------------------------------------------------

    def parse_move(self, state: ExtinctionState, seat: int, text: str) -> ExtinctionMove:
        """Read SAN (``Nf3``, ``exd5``, ``O-O``, ``e8=K``) or coordinates (``g1f3``, ``e7e8k``);
        raise a graded MoveError that quotes ``text`` and says why."""
        raw = text.strip()
        shown = _quote(raw)
        if state.result is not None:
            raise IllegalMoveError(f"{shown}: the game is over ({state.result.reason})")
        if seat != state.seat_to_move:
            raise IllegalMoveError(
                f"{shown}: it is not your turn; {SEAT_NAMES[state.seat_to_move]} is to move"
            )
        if _is_draw_text(raw):
            raise InvalidMoveError(
                f"{shown} is not a chess move: a draw is offered, accepted or claimed apart "
                "from the moves"
            )
        compact = "".join(raw.split())
        if not compact or len(compact) > 12:
            raise InvalidMoveError(f"{shown} is not a chess move: {_SYNTAX}")
        # A copy: explaining a refusal pushes and pops moves (for SAN) on the reader's board.
        return _MoveReader(state.board(), raw).read(compact)

    def format_move(self, state: ExtinctionState, move: ExtinctionMove) -> str:
        """SAN as python-chess writes it (``#`` marks a move that ends the game)."""
        return state._board.copy(stack=False).san(move)

    def legal_moves(self, state: ExtinctionState, seat: int) -> list[ExtinctionMove]:
        """Every chess move of the side to move."""
        if state.result is not None or seat != state.seat_to_move:
            return []
        return list(state._board.generate_legal_moves())

    def claimable_draw(self, state: ExtinctionState, seat: int) -> Outcome | None:
        """A draw by threefold repetition or the fifty-move rule, for the side to move."""
        kind = _claim_kind(state)
        if state.result is not None or seat != state.seat_to_move or kind is None:
            return None
        reason = f"{SEAT_NAMES[seat]} claimed a draw by {_CLAIMS[kind]}"
        return Outcome(frozenset(), reason, termination=kind)

    def apply(
        self, state: ExtinctionState, move: ExtinctionMove, rng: random.Random
    ) -> ExtinctionState:
        """The state after ``move``: one board copy and one push; ``state`` is left as it was."""
        if state.result is not None:
            raise IllegalMoveError("the game is over")
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
            result=_position_result(board, seen),
            last_from=move.from_square,
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

    def outcome(self, state: ExtinctionState) -> Outcome | None:
        """Set by the move that ended the game; None while it goes on."""
        return state.result

    def move_number(self, state: ExtinctionState) -> int:
        """Half-moves played."""
        return state.ply

    # --- the diagram ------------------------------------------------------------------------

    def render(self, state: ExtinctionState, viewer: Viewer, players: Sequence[str] = ()) -> str:
        """The board with White at the bottom (Black's at the bottom for Black, as the picture
        in the same mail shows it), the material of each side, whose move it is and the last
        move; nothing is hidden."""
        del players  # the side names say who is who
        board = state._board
        from_black = viewer == 1
        files = range(7, -1, -1) if from_black else range(8)
        ranks = range(8) if from_black else range(7, -1, -1)
        edge = "    " + " ".join(chess.FILE_NAMES[f] for f in files)
        lines = [edge]
        for rank in ranks:
            row = " ".join(
                (p.symbol() if (p := board.piece_at(chess.square(f, rank))) else ".") for f in files
            )
            lines.append(f" {rank + 1}  {row}  {rank + 1}")
        kinds = "".join(f"{chess.piece_symbol(k).upper():>3}" for k in KINDS)
        lines += [edge, "", f"{'':20}{kinds}   has taken"]
        for seat, name in enumerate(SEAT_NAMES):
            color = _color(seat)
            label = f"{name} ({'capitals' if seat == 0 else 'lower case'})"
            counts = "".join(f"{len(board.pieces(k, color)):>3}" for k in KINDS)
            lines.append(f" {label:<19}{counts}   {' '.join(state.taken[seat]) or '-'}")
        lines.append("")
        lines.append(self._status_line(state))
        return "\n".join(lines)

    def svg(self, state: ExtinctionState, viewer: Viewer) -> str:
        """python-chess's board and pieces, from Black's side for Black, with coordinates; the
        squares the last move left in a pale yellow and those it reached in yellow (castling:
        the king's and the rook's). In layers: the board is drawn once for each side."""
        mover = chess.WHITE if state.seat_to_move == 1 else chess.BLACK
        left, reached = squares(state.last_move, mover, state.last_from)
        fill = dict.fromkeys(left, HIGHLIGHT_FROM)
        fill.update(dict.fromkeys(reached, HIGHLIGHT))
        orientation = chess.BLACK if viewer == 1 else chess.WHITE
        return board_svg(state._board.piece_map(), orientation, fill)

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
        pieces, the last move and the result; and ``last_from``, the square the last move left,
        where the move and the position leave it open (``e4`` from e2 or e3)."""
        result = None
        if state.result is not None:
            result = {
                "winners": sorted(state.result.winners),
                "reason": state.result.reason,
                "termination": state.result.termination.value,
            }
        data = {
            "version": self.STATE_VERSION,
            "fen": state.fen,
            "seen": list(state.seen),
            "taken": list(state.taken),
            "last_move": state.last_move,
            "result": result,
        }
        last, left = state.last_move, state.last_from
        if (
            last is not None
            and left is not None
            and origins(state._board, last, state.seen) != (left,)
        ):
            data["last_from"] = chess.square_name(left)
        return data

    def load(self, data: Mapping[str, Any]) -> ExtinctionState:
        """Check every field against the position and rebuild the board from the FEN."""
        if not isinstance(data, Mapping):
            raise StateError("extinction: the state is not a JSON object")
        self._check_version(data)
        board = _load_board(data.get("fen"))
        seen = _load_seen(data.get("seen"), board)
        taken = _load_taken(data.get("taken"), board)
        last_move = _load_last_move(data.get("last_move"), board, seen)
        # States stored while a draw offer was a move of the game may still hold one.
        offer = data.get("draw_offer")
        if offer is not None and (type(offer) is not int or offer not in (0, 1)):
            raise StateError(f"extinction: bad draw offer {offer!r}")
        last_from = _load_last_from(data.get("last_from"), board, last_move, seen)
        state = ExtinctionState(
            fen=board.fen(),
            seen=seen,
            taken=taken,
            last_move=last_move,
            last_from=last_from,
            _board=board,
        )
        result = _load_result(data.get("result"), state, offered=offer is not None)
        return replace(state, result=result)

    # --- the record -------------------------------------------------------------------------

    def export(
        self,
        fmt: str,
        start: ExtinctionState,
        moves: Sequence[str],
        outcome: Outcome | None,
        headers: Mapping[str, str],
    ) -> str:
        """The game as PGN with ``[Variant "Extinction"]``; the reason for the result is the
        closing comment."""
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


GAME = ExtinctionChess()
