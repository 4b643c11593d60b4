"""Chameleon's text diagram and SVG picture: the rhombus with its coordinates, and in the
picture the sides each role joins."""

from __future__ import annotations

from typing import Final

from pbmserv.games.chameleon.notation import _COLUMNS
from pbmserv.games.chameleon.state import _CODES_TO_CHARS, HORZ, VERT, ChameleonState
from pbmserv.games.drawing import Edges, Grid, Mark, cells_named, hex_svg

# The picture's sides of the board: dark for Vert, light for Horz; neither red nor blue, the
# colours of the pieces, as either player places both.
_VERT_EDGE: Final = "#2b2b2b"
_HORZ_EDGE: Final = "#a8a8a8"
_PLAYERS: Final = ("first player", "second player")


def render_diagram(state: ChameleonState) -> str:
    """The rhombus with coordinates on all sides."""
    size = state.size
    width = len(str(size))
    letters = " ".join(_COLUMNS[:size])
    lines = [" " * (width + 3) + letters]
    for row in range(size):
        cells = state.cells[row * size : (row + 1) * size]
        drawn = " ".join(cells.translate(_CODES_TO_CHARS).decode())
        lines.append(f"{' ' * row} {row + 1:>{width}}  {drawn}  {row + 1}")
    lines.append(" " * (size + width + 3) + letters)
    lines.append("")
    how = "took the first piece by swap" if state.swapped else "moved first"
    lines.append(f"Vert joins top and bottom ({how}); Horz joins left and right.")
    return "\n".join(lines)


def chameleon_svg(state: ChameleonState) -> str:
    """The rhombus of hexagons, x red and o blue, the last piece placed highlighted; the top
    and bottom sides dark for Vert, the left and right light for Horz, and a legend saying
    which player has which."""
    size = state.size
    text = state.cells.translate(_CODES_TO_CHARS).decode()
    pieces = {"x": Mark("#d62728", "x", "#ffffff"), "o": Mark("#1f5fbf", "o", "#ffffff")}
    marks = {divmod(index, size): pieces[char] for index, char in enumerate(text) if char != "."}

    def cell_of(name: str) -> tuple[int, int] | None:
        col, row = _COLUMNS.find(name[0]), int(name[1:]) - 1
        return (row, col) if 0 <= col < size and 0 <= row < size else None

    vert, horz = _PLAYERS[state.vert_seat], _PLAYERS[1 - state.vert_seat]
    if state.swapped:
        vert += ", by the swap"
    grid = Grid(
        rows=size,
        cols=size,
        marks=marks,
        row_labels=[str(r + 1) for r in range(size)],
        col_labels=list(_COLUMNS[:size]),
        highlight=cells_named(state.last_move, r"[a-z]\d+", cell_of),
        edges=Edges(
            top_bottom=_VERT_EDGE,
            left_right=_HORZ_EDGE,
            top_bottom_legend=f"{VERT} ({vert}): joins top and bottom",
            left_right_legend=f"{HORZ} ({horz}): joins left and right",
        ),
    )
    return hex_svg(grid)
