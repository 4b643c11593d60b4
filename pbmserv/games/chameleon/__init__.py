"""Chameleon: Hex where either player may place either colour (Bill Taylor, 2003).

The board is an N x N rhombus of hexagons, columns ``a..`` left to right and rows ``1..`` top to
bottom, each row drawn half a cell right of the row above. Vert joins the top and bottom rows,
Horz the left and right columns, with a chain that is all ``x`` or all ``o``. Whoever's chain a
move completes wins; if it completes both at once, the mover wins.

Win detection is incremental: a union-find over same-coloured neighbours whose roots carry a
bitmask of the board edges their chain touches. A state holds the board and the union-find, two
compact arrays that ``apply`` copies (memcpy-cheap) and then changes, so the old state is never
touched and the cost of a move hardly depends on the board size. A loaded state has no
union-find until its first ``apply`` builds it from the board: building it is work in proportion
to the pieces, which a load that only shows the board or asks whose turn it is never needs.

The package, by seam: ``geometry`` (the hex board: neighbours, sides, distances; the robots'
policy reads it too), ``state`` (moves and the state), ``links`` (the union-find of chains),
``notation`` (cells and moves as players write them), ``picture`` (the text diagram and the SVG
picture) and ``game`` (the contract, with who wins).
"""

from __future__ import annotations

from pbmserv.games.chameleon.game import GAME, Chameleon
from pbmserv.games.chameleon.state import SWAP, ChameleonState, Place

__all__ = ["GAME", "SWAP", "Chameleon", "ChameleonState", "Place"]
