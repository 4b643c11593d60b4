"""Chameleon's moves and state: the board as one byte a cell, and the union-find beside it."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple

from pbmserv.games.base import Outcome

MIN_SIZE: Final = 3
MAX_SIZE: Final = 26
DEFAULT_SIZE: Final = 11

VERT: Final = "Vert"
HORZ: Final = "Horz"

# Cell codes in the board array.
EMPTY: Final = 0
_PIECE_CODES: Final = {"x": 1, "o": 2}
_CELL_CHARS: Final = ".xo"
# bytes.translate tables between cell codes and the characters of dumps and diagrams.
_CODES_TO_CHARS: Final = bytes.maketrans(b"\x00\x01\x02", _CELL_CHARS.encode())
_CHARS_TO_CODES: Final = bytes.maketrans(_CELL_CHARS.encode(), b"\x00\x01\x02")


class Place(NamedTuple):
    """Put ``piece`` ("x" or "o") on the cell at 0-based ``col`` and ``row``."""

    col: int
    row: int
    piece: str


SWAP: Final = "swap"
"""The swap move: the second player takes over the first piece and the role of Vert."""

ChameleonMove = Place | Literal["swap"]


@dataclass(frozen=True, eq=False)
class ChameleonState:
    """One position. Treat it as immutable: ``apply`` builds a new one.

    ``cells`` holds one byte per cell, row by row (0 empty, 1 x, 2 o). ``_links`` is the
    union-find over same-coloured neighbours (see :class:`_Links`), derived from ``cells``:
    None until first needed in a loaded state (:func:`_links_of`), never changed once built.
    """

    size: int
    cells: bytes
    swapped: bool = False
    ply: int = 0
    last_move: str | None = None
    result: Outcome | None = None
    _links: _Links | None = field(default=None, repr=False)

    def piece_at(self, col: int, row: int) -> str | None:
        """The piece ("x" or "o") on a 0-based cell, or None if it is empty."""
        code = self.cells[row * self.size + col]
        return _CELL_CHARS[code] if code else None

    @property
    def vert_seat(self) -> int:
        """The seat playing Vert (top-bottom): seat 0, or seat 1 after a swap."""
        return 1 if self.swapped else 0

    def role(self, seat: int) -> str:
        """The role ("Vert" or "Horz") of ``seat`` in this position."""
        return VERT if seat == self.vert_seat else HORZ

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChameleonState):
            return NotImplemented
        return (self.size, self.cells, self.swapped, self.ply, self.last_move, self.result) == (
            other.size,
            other.cells,
            other.swapped,
            other.ply,
            other.last_move,
            other.result,
        )

    def __hash__(self) -> int:
        return hash((self.size, self.cells, self.swapped, self.ply, self.last_move))


class _Links(NamedTuple):
    """The union-find over same-coloured neighbours: each cell's ``parent``, and per cell the
    ``edges`` byte (touched-edge bits in the low nibble of a root, its rank in the high nibble)."""

    parent: array
    edges: bytes
