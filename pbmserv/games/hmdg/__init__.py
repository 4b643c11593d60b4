"""Hidden Move Double Gomoku (hmdg): Gomoku on a 9x9 grid where moves are hidden.

Designed by teucer and Levitating Potato (SF0, 2008). The first player places an opening ``x``;
the second chooses to play X or O, and O moves first. A turn has two stages: the mover names a
point in secret and announces its row or its column (stage ``move``); the opponent may reveal
any of their own hidden pieces on that line (stage ``reveal``, a move written ``reveal C3 C7``).
If anything is revealed, the mover's point is revealed too, and the move fails if it is one of
the revealed points; if nothing is revealed, the piece is placed in secret, even on a point
where the opponent has a hidden piece. The first to make two lines of five that share at most
one piece wins.

Points are named by row letter (``A``-``H``, ``J``; no ``I``) and column number: ``C5``. A point
is a bit of an 81-bit integer (bit ``row * 9 + column``), so each side's pieces and revealed
pieces are two integers and a move is a few bit operations.

The state keeps one record per finished turn: the public log (line announced, points revealed,
whether the move failed, fives, passes) with each mover's point, which is shown only to its
owner until the game ends. ``dump`` stores the opening, the choice of side and these turns,
then what they give; ``load`` reads what they give and the last turn, checked against each other,
and leaves the earlier turns to be read when first needed, so a late position loads as fast as
an early one.

The package, by seam: ``geometry`` (points, lines, windows of five), ``state`` (moves, turn
records, the state), ``rules`` (playing a move), ``notation`` (reading points and lines as
players write them), ``storage`` (the stored form and its check), ``hidden`` (other secrets
with the same public facts, for the no-leak check), ``puzzle`` (what one seat may know of a
position) and ``determinize`` (a whole position drawn from it, for a computer player), and
``game`` (the contract).
"""

from __future__ import annotations

from pbmserv.games.hmdg.game import GAME
from pbmserv.games.hmdg.geometry import HOW_TO_MOVE, point_name, points_of
from pbmserv.games.hmdg.state import HmdgState

__all__ = ["GAME", "HOW_TO_MOVE", "HmdgState", "point_name", "points_of"]
