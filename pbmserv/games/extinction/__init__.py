"""Extinction Chess (R. Wayne Schmittberger, 1985), played on python-chess.

All the laws of chess hold except these: you win by capturing every piece of one kind that your
opponent has (the king; the queens; the rooks; the bishops; the knights; the pawns), promoted
pieces counting as their new kind. There is no check: kings may stand and move in attack and be
captured, and castling out of, through or into attack is allowed. A pawn may promote to a king.
Promoting your last pawn makes your pawns extinct and loses; if the same move also makes a kind
of the opponent's extinct, the mover wins (the inventor's ruling; Fairy-Stockfish differs).

The package, by seam: ``board`` (the chess.Board with these rules, registered in
``chess.variant.VARIANTS`` so that python-chess reads our PGN back), ``state`` (the stored
position and how games end), ``notation`` (reading moves as players write them), ``lastmove``
(the squares the last move left and reached, for the picture), ``storage`` (loading a stored
state field by field) and ``game`` (the Game contract on top of them). A move copies one board
and pushes one move, whatever the game's length.
"""

from __future__ import annotations

from pbmserv.games.extinction.board import (
    AUTO_HALFMOVES,
    AUTO_REPETITIONS,
    CLAIM_HALFMOVES,
    CLAIM_REPETITIONS,
    KINDS,
    SEAT_NAMES,
    ExtinctionBoard,
)
from pbmserv.games.extinction.game import (
    GAME,
    ExtinctionChess,
    position,
)
from pbmserv.games.extinction.state import (
    ExtinctionState,
    position_key,
)
from pbmserv.games.extinction.storage import (
    _load_seen,
)

__all__ = [
    "GAME",
    "AUTO_HALFMOVES",
    "AUTO_REPETITIONS",
    "CLAIM_HALFMOVES",
    "CLAIM_REPETITIONS",
    "ExtinctionBoard",
    "ExtinctionChess",
    "ExtinctionState",
    "KINDS",
    "SEAT_NAMES",
    "_load_seen",
    "position",
    "position_key",
]
