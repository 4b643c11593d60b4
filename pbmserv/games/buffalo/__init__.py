"""Buffalo (Alex Randolph, 1975) and Rebel Buffalo, SPEC 4.4.

An 11 x 7 board, columns a-k and rows 1-7; two rivers lie between rows 1-2 and 6-7. Seat 0
is Black (11 buffalo on row 7, moves first), seat 1 is White (the Indian chief on f2 and dogs
on d2 e2 g2 h2). A buffalo steps straight towards row 1 onto an empty square; a dog moves like a
queen without jumping or capturing; the chief moves like a king and captures a buffalo by
moving onto it; neither ever crosses a river (rows 2-6 only). Black wins when a buffalo reaches
row 1, or when White cannot move; White wins when Black cannot move.

Rebel Buffalo (the SPEC's ruling, with the points this package decides):

- After every buffalo move, every dog on the board that stands between two buffalo directly
  next to it on opposite orthogonal sides (left and right, or above and below) is enclosed,
  whichever buffalo moved: a dog that walked in between two buffalo is safe on its own move and
  goes home after Black's next move. A diagonal flank does not count.
- All enclosed dogs are lifted together, then put on row 2: first to the squares the move
  names, ``dog:b2`` (given to the enclosed dogs in board order: by column, then row) or
  ``dog:d5>b2`` (naming the dog); then the others, those already on row 2 first and then in
  board order, each to the empty row-2 square nearest its column (the lower column on a tie).
  "Returned to row 2" means another square: a dog enclosed on row 2 never goes back to its
  own square (SPEC 4.4), so it goes to the nearest other empty one.
- Should that nearest-first rule leave a dog without a square while some placement would
  move every dog, the placement with the least total distance (then the board's order) is
  used instead.
- If no placement moves every dog, no ``dog:`` may be named, and the dogs that find no other
  empty square of row 2 stay where they are.
- The canonical text records every placement made (``e6-e5 dog:d2``; with several dogs
  ``e6-e5 dog:d5>d2 dog:f5>f2``) so a replay is exact.

The package, by seam: ``rules`` (the board, a move and the state, the moves each side has,
sending enclosed dogs home, judging a position), ``notation`` (reading moves as players write
them), ``picture`` (the text diagram and the SVG picture) and ``game`` (the contract, with the
checks that explain an illegal move).
"""

from __future__ import annotations

from pbmserv.games.buffalo.game import GAME
from pbmserv.games.buffalo.rules import (
    BLACK,
    COLS,
    LETTERS,
    WHITE,
    BuffaloState,
    enclosed_dogs,
    name,
    position,
    room_for,
    square,
)

__all__ = [
    "BLACK",
    "COLS",
    "GAME",
    "LETTERS",
    "WHITE",
    "BuffaloState",
    "enclosed_dogs",
    "name",
    "position",
    "room_for",
    "square",
]
