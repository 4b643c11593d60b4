"""Extinction's lean position for the tactics (:mod:`pbmserv.robots.tactics`).

The rule module's own board (python-chess's, with Extinction's moves), pushed and popped in
place rather than copied into a new state a move: a tenth of ``apply``'s cost. Every
pseudo-legal move is legal while the game goes on (no check), the game ends when a side lacks a
kind, and the side to move has lost if it lacks one (the mover wins even when its move made a
kind of each side extinct). Repetitions and the move rules are left to the real game.

The evaluation, in pawns for the side to move: material; each kind down to one piece is a weak
point (the king and queen from the first move), down to two a lesser one; and a side to move
whose last pieces of two kinds are both attacked can save only one of them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import chess

from pbmserv.games.extinction import ExtinctionBoard
from pbmserv.robots.policy import sigmoid
from pbmserv.robots.tactics import Tactics

#: Material, in pawns. A king is an ordinary piece here, a short-range one.
VALUES: dict[chess.PieceType, float] = {
    chess.PAWN: 1.0,
    chess.KNIGHT: 3.0,
    chess.BISHOP: 3.0,
    chess.ROOK: 5.0,
    chess.QUEEN: 9.0,
    chess.KING: 3.5,
}
#: What a kind down to its last piece costs its side (one capture from losing), and down to two.
LAST_OF_KIND = 1.5
TWO_OF_KIND = 0.4
#: The side to move with its last piece of a kind attacked: one tempo to save it; two at once:
#: the other falls next move.
ONE_THREAT = 0.3
TWO_THREATS = 12.0
#: A pawn's worth for each rank it has advanced past its fourth (a promotion makes a spare of a
#: kind: a second king or queen).
ADVANCE = 0.15

_KINDS = (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN, chess.KING)
_KIND_VALUES = tuple(VALUES[kind] for kind in _KINDS)
#: Pawns against results: a lead of four pawns is worth about three wins in four.
SCALE = 4.0


class ExtinctionLean:
    """The :class:`~pbmserv.robots.tactics.LeanGame` of Extinction."""

    def position(self, state: Any, rng: random.Random | None = None) -> ExtinctionBoard:
        board: ExtinctionBoard = state.board()
        return board

    def moves(self, board: ExtinctionBoard) -> list[chess.Move]:
        theirs = board.occupied_co[not board.turn]
        captures, promotions, quiet = [], [], []
        for move in board.generate_pseudo_legal_moves():
            if theirs >> move.to_square & 1:
                captures.append(move)
            elif move.promotion is not None:  # a spare of a kind
                promotions.append(move)
            else:
                quiet.append(move)
        captures.sort(key=lambda m: _capture_order(board, m), reverse=True)
        return captures + promotions + quiet

    def captures(self, board: ExtinctionBoard) -> list[chess.Move]:
        theirs = board.occupied_co[not board.turn]
        found = list(board.generate_pseudo_legal_moves(chess.BB_ALL, theirs))
        found.sort(key=lambda m: _capture_order(board, m), reverse=True)
        return found

    def key(self, board: ExtinctionBoard) -> tuple[int | bool | None, ...]:
        """The pieces, the side to move and the rights: what decides the moves from here."""
        white, black = board.occupied_co
        return (
            board.pawns,
            board.knights,
            board.bishops,
            board.rooks,
            board.queens,
            board.kings,
            white,
            black,
            board.turn,
            board.castling_rights,
            board.ep_square,
        )

    def push(self, board: ExtinctionBoard, move: chess.Move) -> None:
        board.push(move)

    def pop(self, board: ExtinctionBoard) -> None:
        board.pop()

    def ended(self, board: ExtinctionBoard) -> float | None:
        if not board.is_variant_end():
            return None
        return -1.0 if _lacks_a_kind(board, board.turn) else 1.0

    def seat(self, board: ExtinctionBoard) -> int:
        return 0 if board.turn == chess.WHITE else 1

    def tree_moves(self, board: ExtinctionBoard) -> list[chess.Move]:
        """Only the captures of the opponent's last piece of a kind when there are any (each
        wins at once); else every move, captures first."""
        last = last_of_kind(board, not board.turn)
        moves = self.moves(board)
        return [m for m in moves if last >> m.to_square & 1] or moves

    def playout_move(self, board: ExtinctionBoard, rng: random.Random) -> chess.Move | None:
        """A move that takes a last piece of a kind if there is one; else a capture half the
        time, any move otherwise (random chess is long and aimless)."""
        moves = list(board.generate_pseudo_legal_moves())
        return playout_pick(board, moves, rng) if moves else None

    def win_chance(self, board: ExtinctionBoard) -> float:
        return sigmoid(self.evaluate(board) / SCALE)

    def no_moves(self, board: ExtinctionBoard) -> float:
        return 0.0  # stalemate: a draw

    def evaluate(self, board: ExtinctionBoard) -> float:
        me, them = board.turn, not board.turn
        score = _standing(board, me) - _standing(board, them)
        threatened = sum(
            1
            for square in chess.scan_forward(last_of_kind(board, me))
            if board.is_attacked_by(them, square)
        )
        if threatened == 1:
            score -= ONE_THREAT
        elif threatened > 1:
            score -= TWO_THREATS
        return score


def _lacks_a_kind(board: chess.Board, color: chess.Color) -> bool:
    own = board.occupied_co[color]
    return not (
        own & board.kings
        and own & board.queens
        and own & board.rooks
        and own & board.bishops
        and own & board.knights
        and own & board.pawns
    )


def _standing(board: chess.Board, color: chess.Color) -> float:
    """Material less the weak points of ``color``'s kinds, and its pawns' advance."""
    own = board.occupied_co[color]
    total = 0.0
    for kinds, value in zip(_kind_masks(board), _KIND_VALUES, strict=True):
        count = (kinds & own).bit_count()
        total += value * count
        if count == 1:
            total -= LAST_OF_KIND
        elif count == 2:
            total -= TWO_OF_KIND
    pawns = board.pawns & own
    if color == chess.WHITE:
        advanced = (pawns & (chess.BB_RANK_5 | chess.BB_RANK_6 | chess.BB_RANK_7)).bit_count()
        far = (pawns & (chess.BB_RANK_6 | chess.BB_RANK_7)).bit_count()
        close = (pawns & chess.BB_RANK_7).bit_count()
    else:
        advanced = (pawns & (chess.BB_RANK_4 | chess.BB_RANK_3 | chess.BB_RANK_2)).bit_count()
        far = (pawns & (chess.BB_RANK_3 | chess.BB_RANK_2)).bit_count()
        close = (pawns & chess.BB_RANK_2).bit_count()
    return total + ADVANCE * (advanced + far + close)


def playout_pick(board: chess.Board, moves: Sequence[chess.Move], rng: random.Random) -> chess.Move:
    """Among ``moves`` (not none), a capture of the opponent's last piece of a kind (the game
    won); else a capture half the time, any move otherwise."""
    theirs = board.occupied_co[not board.turn]
    last = last_of_kind(board, not board.turn)
    captures = []
    for move in moves:
        if last >> move.to_square & 1:
            return move
        if theirs >> move.to_square & 1:
            captures.append(move)
    if captures and rng.random() < 0.5:
        return captures[rng.randrange(len(captures))]
    return moves[rng.randrange(len(moves))]


def last_of_kind(board: chess.Board, color: chess.Color) -> int:
    """The squares (a mask) of ``color``'s pieces that are the last of their kind."""
    own, mask = board.occupied_co[color], 0
    for kinds in _kind_masks(board):
        pieces = kinds & own
        if pieces and not pieces & (pieces - 1):
            mask |= pieces
    return mask


def _kind_masks(board: chess.Board) -> tuple[int, ...]:
    """Each kind's squares, both colours, in the order of _KINDS (the board's own masks: its
    pieces_mask call costs a tenth of a search)."""
    return (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)


def _capture_order(board: chess.Board, move: chess.Move) -> float:
    """Most valuable victim first, least valuable attacker first among equal victims; the last
    piece of a kind before anything (taking it wins)."""
    victim = board.piece_type_at(move.to_square)
    attacker = board.piece_type_at(move.from_square)
    if victim is None or attacker is None:
        return 0.0
    pieces = board.pieces_mask(victim, not board.turn)
    last = 100.0 if not pieces & (pieces - 1) else 0.0
    return last + VALUES[victim] * 10 - VALUES[attacker]


#: The top level asks for five plies and reads as deep as 60,000 positions go: with good moves
#: remembered, four plies take 10,000 to 95,000 in the middle game and five 70,000 to 570,000,
#: so most of its reads finish four plies and the best moves' fifth. A pass cut short keeps the
#: last whole pass's scores for the moves it did not finish (without that, the top level's
#: last-read moves were scored a ply or two shallower than its best, and it beat the level below
#: in only half its games).
TACTICS = Tactics(
    lean=ExtinctionLean(),
    margin=1.0,
    scale=SCALE,
    node_budget=60_000,
    keep_last_pass=True,
    remember_moves=True,
)
