"""The robots' policy for Extinction Chess.

Random chess is long and aimless; short random playouts that never miss a winning capture, then
material, with the kinds a side has one piece left of counted as its weak points.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import chess

from pbmserv.games.base import AnyGame
from pbmserv.robots.policies.extinction_tactics import TACTICS, last_of_kind, playout_pick
from pbmserv.robots.policy import Policy, Values, for_seat, sigmoid

_PIECE_VALUES = {
    chess.PAWN: 1.0,
    chess.KNIGHT: 3.0,
    chess.BISHOP: 3.0,
    chess.ROOK: 5.0,
    chess.QUEEN: 9.0,
    chess.KING: 4.0,
}


def _extinction_choose(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    return playout_pick(state.board(), moves, rng)


def _extinction_candidates(
    game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """Only the captures of the opponent's last piece of a kind when there are any (each wins
    at once); else every move."""
    board = state.board()
    last = last_of_kind(board, not board.turn)
    return [m for m in moves if last >> m.to_square & 1] or moves


def _extinction_evaluate(game: AnyGame, state: Any) -> Values:
    board = state.board()
    lead = 0.0  # White's material lead
    for color in (chess.WHITE, chess.BLACK):
        sign = 1.0 if color == chess.WHITE else -1.0
        for kind, value in _PIECE_VALUES.items():
            lead += sign * value * len(board.pieces(kind, color))
        for square in chess.scan_forward(last_of_kind(board, color)):
            if board.is_attacked_by(not color, square):
                if board.turn != color:  # the side to move takes it and wins
                    return for_seat(0 if color == chess.WHITE else 1, 0.05)
                lead -= sign * 2.0
    return (v := sigmoid(lead / 4.0), 1.0 - v)


POLICY = Policy(
    choose=_extinction_choose,
    evaluate=_extinction_evaluate,
    cutoff=6,
    candidates=_extinction_candidates,
    minimax_weight=0.8,
    exploration=0.4,
    tactics=TACTICS,
    lean_tree=True,
    # The tactics take a share of each level's time (the lean tree's iterations cost a third of
    # what the rules' did).
    iteration_scale=0.8,
)
