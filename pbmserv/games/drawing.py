"""A board drawn as SVG: one helper for square grids, one for rhombuses of hexagons.

A game describes what a viewer may see as a :class:`Grid` (the cells, what stands on each,
the last move's cells, coordinates) and these helpers draw it. Pieces are discs in the
side's colour with a letter on them, so a board reads at a glance on a phone; the picture is
an addition to the text diagram, never the only account of the position. Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from xml.sax.saxutils import escape

CELL = 40  # pixels a square cell measures (and a hexagon is wide)
MARGIN = 26  # room for the coordinates around the board
LIGHT = "#f0d9b5"
DARK = "#b58863"
LINE = "#5a4632"
HIGHLIGHT = "#f2e45c"
RIVER = "#4a90d9"


@dataclass(frozen=True)
class Mark:
    """What stands on a cell: a disc of ``fill`` with ``label`` on it in ``ink``. ``hollow``:
    a piece only its owner sees (drawn as a ring)."""

    fill: str
    label: str = ""
    ink: str = "#000000"
    hollow: bool = False


@dataclass(frozen=True)
class Grid:
    """A board as a viewer may see it; cell (0, 0) is drawn at the top left."""

    rows: int
    cols: int
    marks: Mapping[tuple[int, int], Mark]
    row_labels: Sequence[str]
    col_labels: Sequence[str]
    #: Cells drawn dark (a chequer's dark squares, Owlman's trees).
    dark: frozenset[tuple[int, int]] = frozenset()
    dark_fill: str = DARK
    #: The cells of the last move.
    highlight: frozenset[tuple[int, int]] = frozenset()
    #: A river is drawn below each of these rows (Buffalo).
    rivers_below: frozenset[int] = field(default_factory=frozenset)


def cells_named(
    text: str | None, pattern: str, cell_of: Callable[[str], tuple[int, int] | None]
) -> frozenset[tuple[int, int]]:
    """The cells a last-move text names (``a2-a3``, ``C5 row``): each match of ``pattern``
    that ``cell_of`` turns into a cell."""
    found = (cell_of(match) for match in re.findall(pattern, text or ""))
    return frozenset(cell for cell in found if cell is not None)


def square_centre(grid: Grid, row: int, col: int) -> tuple[float, float]:
    """Where the centre of a cell is drawn, in the picture's own pixels."""
    river_gap = sum(1 for r in grid.rivers_below if r < row) * (CELL // 2)
    return MARGIN + (col + 0.5) * CELL, MARGIN + (row + 0.5) * CELL + river_gap


def square_svg(grid: Grid) -> str:
    """A square grid with its coordinates on all four sides."""
    gap = len(grid.rivers_below) * (CELL // 2)
    width = 2 * MARGIN + grid.cols * CELL
    height = 2 * MARGIN + grid.rows * CELL + gap
    parts = [_open(width, height)]
    for row in range(grid.rows):
        for col in range(grid.cols):
            x, y = square_centre(grid, row, col)
            fill = _cell_fill(grid, row, col)
            half = CELL / 2
            parts.append(
                f'<rect x="{x - half:g}" y="{y - half:g}" width="{CELL}" height="{CELL}" '
                f'fill="{fill}" stroke="{LINE}" stroke-width="1"/>'
            )
    for row in sorted(grid.rivers_below):
        _x, y = square_centre(grid, row, 0)
        top = y + CELL / 2
        parts.append(
            f'<rect x="{MARGIN}" y="{top:g}" width="{grid.cols * CELL}" height="{CELL // 2}" '
            f'fill="{RIVER}"/>'
        )
    parts += _marks(grid, lambda r, c: square_centre(grid, r, c))
    for col, label in enumerate(grid.col_labels):
        x, _y = square_centre(grid, 0, col)
        parts.append(_text(x, MARGIN * 0.62, label))
        parts.append(_text(x, height - MARGIN * 0.3, label))
    for row, label in enumerate(grid.row_labels):
        _x, y = square_centre(grid, row, 0)
        parts.append(_text(MARGIN * 0.5, y + 5, label))
        parts.append(_text(width - MARGIN * 0.5, y + 5, label))
    parts.append("</svg>")
    return "".join(parts)


_HEX_R = CELL / math.sqrt(3)  # a pointy-top hexagon CELL wide


def hex_centre(grid: Grid, row: int, col: int) -> tuple[float, float]:
    """Where the centre of a hexagon of a rhombus board is drawn (each row shifted half a
    cell to the right of the one above, as the text diagram draws it)."""
    del grid  # every rhombus puts its cells at the same places
    return _hex_centre_at(row, col)


def _hex_centre_at(row: int, col: int) -> tuple[float, float]:
    return MARGIN + CELL / 2 + col * CELL + row * CELL / 2, MARGIN + _HEX_R + row * 1.5 * _HEX_R


@cache
def _hex_corners(row: int, col: int) -> str:
    """The corners of a hexagon as SVG points: the same on every board, so worked out once."""
    x, y = _hex_centre_at(row, col)
    return " ".join(
        f"{x + _HEX_R * math.cos(math.radians(60 * k - 30)):.1f},"
        f"{y + _HEX_R * math.sin(math.radians(60 * k - 30)):.1f}"
        for k in range(6)
    )


def hex_svg(grid: Grid) -> str:
    """A rhombus of hexagons with its coordinates on all four sides."""
    width = 2 * MARGIN + grid.cols * CELL + (grid.rows - 1) * CELL / 2
    height = 2 * MARGIN + 2 * _HEX_R + (grid.rows - 1) * 1.5 * _HEX_R
    parts = [_open(width, height)]
    for row in range(grid.rows):
        for col in range(grid.cols):
            fill = _cell_fill(grid, row, col)
            parts.append(
                f'<polygon points="{_hex_corners(row, col)}" fill="{fill}" stroke="{LINE}"/>'
            )
    parts += _marks(grid, lambda r, c: hex_centre(grid, r, c))
    for col, label in enumerate(grid.col_labels):
        x, y = hex_centre(grid, 0, col)
        parts.append(_text(x, y - _HEX_R - 6, label))
        x, y = hex_centre(grid, grid.rows - 1, col)
        parts.append(_text(x, y + _HEX_R + 16, label))
    for row, label in enumerate(grid.row_labels):
        x, y = hex_centre(grid, row, 0)
        parts.append(_text(x - CELL * 0.85, y + 5, label))
        x, y = hex_centre(grid, row, grid.cols - 1)
        parts.append(_text(x + CELL * 0.85, y + 5, label))
    parts.append("</svg>")
    return "".join(parts)


def _open(width: float, height: float) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
        f'viewBox="0 0 {width:g} {height:g}" font-family="DejaVu Sans, Arial, sans-serif">'
        f'<rect width="{width:g}" height="{height:g}" fill="#ffffff"/>'
    )


def _cell_fill(grid: Grid, row: int, col: int) -> str:
    if (row, col) in grid.highlight:
        return HIGHLIGHT
    return grid.dark_fill if (row, col) in grid.dark else LIGHT


def _marks(grid: Grid, centre: Callable[[int, int], tuple[float, float]]) -> list[str]:
    parts = []
    for (row, col), mark in sorted(grid.marks.items()):
        x, y = centre(row, col)
        radius = CELL * 0.36
        if mark.hollow:
            parts.append(
                f'<circle cx="{x:g}" cy="{y:g}" r="{radius:g}" fill="none" '
                f'stroke="{mark.fill}" stroke-width="4" stroke-dasharray="5,3"/>'
            )
        else:
            parts.append(
                f'<circle cx="{x:g}" cy="{y:g}" r="{radius:g}" fill="{mark.fill}" '
                f'stroke="#333333" stroke-width="1.5"/>'
            )
        if mark.label:
            ink = mark.fill if mark.hollow else mark.ink
            parts.append(_text(x, y + 6, mark.label, ink, size=17, bold=True))
    return parts


def _text(
    x: float, y: float, text: str, ink: str = "#333333", size: int = 14, bold: bool = False
) -> str:
    weight = ' font-weight="bold"' if bold else ""
    return (
        f'<text x="{x:g}" y="{y:g}" font-size="{size}" text-anchor="middle" fill="{ink}"'
        f"{weight}>{escape(text)}</text>"
    )
