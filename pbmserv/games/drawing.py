"""A board drawn as SVG: one helper for square grids, one for rhombuses of hexagons.

A game describes what a viewer may see as a :class:`Grid` (the cells, what stands on each,
the last move's cells, coordinates) and these helpers draw it. Pieces are discs in the
side's colour with a letter on them, so a board reads at a glance on a phone; the picture is
an addition to the text diagram, never the only account of the position. A picture that puts
more beside a board (scores, a second board) takes the board as a :class:`Drawn` from
:func:`square_board`, places it with :func:`placed` and writes with :func:`label` and
:func:`piece`.

What changes from move to move (the pieces, the last move's cells) is drawn as sprites
(:func:`sprite`): small pictures in boxes of their own, the same body wherever they stand, so
that the mail's rasteriser draws each once and pastes it (pbmserv.pictures.raster). Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import NamedTuple
from xml.sax.saxutils import escape

CELL = 40  # pixels a square cell measures (and a hexagon is wide)
MARGIN = 26  # room for the coordinates around the board
LIGHT = "#f0d9b5"
DARK = "#b58863"
LINE = "#5a4632"
HIGHLIGHT = "#f2e45c"
#: The square a moving piece left: the highlight, paler (the square it went to has HIGHLIGHT).
HIGHLIGHT_FROM = "#f7ee9c"
RIVER = "#4a90d9"
EDGE_WIDTH = 6  # the stroke of a hex board's coloured sides


@dataclass(frozen=True)
class Mark:
    """What stands on a cell: a disc of ``fill`` with ``label`` on it in ``ink``. ``hollow``:
    a piece only its owner sees (drawn as a ring)."""

    fill: str
    label: str = ""
    ink: str = "#000000"
    hollow: bool = False


@dataclass(frozen=True)
class Edges:
    """A hex board's sides coloured as on a Hex board, so a player sees which are theirs: the
    top and bottom rows in ``top_bottom``, the left and right sides in ``left_right``. Each
    legend line given is written under the board beside a stroke of its colour."""

    top_bottom: str
    left_right: str
    top_bottom_legend: str = ""
    left_right_legend: str = ""


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
    #: Hex boards: the sides in the colours of the players who join them (Chameleon).
    edges: Edges | None = None
    #: Coordinates on the right and at the bottom too; off, those margins are left empty for
    #: the game to write in (Entropy's row and column scores).
    far_labels: bool = True


class Drawn(NamedTuple):
    """SVG elements with no ``<svg>`` around them, and the width and height they take."""

    body: str
    width: float
    height: float


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
    """A square grid with its coordinates on all four sides, in layers (:func:`layered`)."""
    board, pieces, width, height = _square_layers(grid)
    return layered(board, pieces, width, height)


def square_board(grid: Grid) -> Drawn:
    """A square grid with its coordinates (on two sides or four, as ``grid.far_labels`` says),
    for a picture that puts more beside it; its cells are where :func:`square_centre` says."""
    board, pieces = square_layers(grid)
    return Drawn(board.body + pieces, board.width, board.height)


def square_layers(grid: Grid) -> tuple[Drawn, str]:
    """:func:`square_board` in two layers, for a picture drawn in layers (:func:`layered`):
    the board (cells, rivers, coordinates) and the pieces on it (the last move's cells and
    what stands on the cells, as sprites)."""
    board, pieces, width, height = _square_layers(grid)
    return Drawn(board, width, height), pieces


def _square_layers(grid: Grid) -> tuple[str, str, float, float]:
    """A square grid's board (cells, rivers, coordinates) and pieces (the last move's cells
    and what stands on the cells), and its width and height."""
    gap = len(grid.rivers_below) * (CELL // 2)
    width = 2 * MARGIN + grid.cols * CELL
    height = 2 * MARGIN + grid.rows * CELL + gap
    board, pieces = [], []
    for row in range(grid.rows):
        for col in range(grid.cols):
            fill = grid.dark_fill if (row, col) in grid.dark else LIGHT
            board.append(_square_cell(grid, row, col, fill))
    for row in sorted(grid.rivers_below):
        _x, y = square_centre(grid, row, 0)
        top = y + CELL / 2
        board.append(
            f'<rect x="{MARGIN}" y="{top:g}" width="{grid.cols * CELL}" height="{CELL // 2}" '
            f'fill="{RIVER}"/>'
        )
    for col, name in enumerate(grid.col_labels):
        x, _y = square_centre(grid, 0, col)
        board.append(label(x, MARGIN * 0.62, name))
        if grid.far_labels:
            board.append(label(x, height - MARGIN * 0.3, name))
    for row, name in enumerate(grid.row_labels):
        _x, y = square_centre(grid, row, 0)
        board.append(label(MARGIN * 0.5, y + 5, name))
        if grid.far_labels:
            board.append(label(width - MARGIN * 0.5, y + 5, name))
    pieces += [_square_highlight(grid, row, col) for row, col in sorted(grid.highlight)]
    pieces += _marks(grid, lambda r, c: square_centre(grid, r, c))
    return "".join(board), "".join(pieces), width, height


def _square_cell(grid: Grid, row: int, col: int, fill: str) -> str:
    x, y = square_centre(grid, row, col)
    half = CELL / 2
    return (
        f'<rect x="{x - half:g}" y="{y - half:g}" width="{CELL}" height="{CELL}" '
        f'fill="{fill}" stroke="{LINE}" stroke-width="1"/>'
    )


def _square_highlight(grid: Grid, row: int, col: int) -> str:
    """A cell of the last move, highlighted: a sprite a pixel wider than the cell on each side,
    for the outline's half outside it."""
    x, y = square_centre(grid, row, col)
    outer = CELL / 2 + 1
    cell = (
        f'<rect x="1" y="1" width="{CELL}" height="{CELL}" fill="{HIGHLIGHT}" '
        f'stroke="{LINE}" stroke-width="1"/>'
    )
    return sprite(x - outer, y - outer, CELL + 2, CELL + 2, cell, "last-move")


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
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in _hex_points(row, col))


def _hex_points(row: int, col: int) -> list[tuple[float, float]]:
    """The corners of a hexagon, each to a tenth of a pixel."""
    x, y = _hex_centre_at(row, col)
    return [
        (
            round(x + _HEX_R * math.cos(math.radians(60 * k - 30)), 1),
            round(y + _HEX_R * math.sin(math.radians(60 * k - 30)), 1),
        )
        for k in range(6)
    ]


def hex_svg(grid: Grid) -> str:
    """A rhombus of hexagons with its coordinates on all four sides; with ``grid.edges``, its
    sides in the players' colours and the legend saying whose they are under it. In layers
    (:func:`layered`): the cells, coordinates and legend are the board; the last move's cells,
    the coloured sides over them and the pieces are drawn on it."""
    width = 2 * MARGIN + grid.cols * CELL + (grid.rows - 1) * CELL / 2
    height = 2 * MARGIN + 2 * _HEX_R + (grid.rows - 1) * 1.5 * _HEX_R
    legend = _edge_legend(grid.edges, height) if grid.edges else Drawn("", 0, 0)
    board, pieces = [], []
    for row in range(grid.rows):
        for col in range(grid.cols):
            fill = grid.dark_fill if (row, col) in grid.dark else LIGHT
            board.append(_hex_cell(row, col, fill))
    clear = 2 if grid.edges else 0  # the letters a little further out, clear of the strokes
    for col, name in enumerate(grid.col_labels):
        x, y = hex_centre(grid, 0, col)
        board.append(label(x, y - _HEX_R - 6 - clear, name))
        x, y = hex_centre(grid, grid.rows - 1, col)
        board.append(label(x, y + _HEX_R + 16 + clear, name))
    for row, name in enumerate(grid.row_labels):
        x, y = hex_centre(grid, row, 0)
        board.append(label(x - CELL * 0.85, y + 5, name))
        x, y = hex_centre(grid, row, grid.cols - 1)
        board.append(label(x + CELL * 0.85, y + 5, name))
    board.append(legend.body)
    width, height = math.ceil(max(width, legend.width)), math.ceil(height + legend.height)
    pieces += [_hex_highlight(row, col) for row, col in sorted(grid.highlight)]
    edges = "".join(_hex_edges(grid, grid.edges)) if grid.edges else ""
    # A last move on a side would cover the inner half of its stroke: the sides go over it,
    # as one sprite the size of the picture (the same for every move on a side).
    touched = any(r in (0, grid.rows - 1) or c in (0, grid.cols - 1) for r, c in grid.highlight)
    if touched and edges:
        pieces.append(sprite(0, 0, width, height, edges, "edges"))
    else:
        board.append(edges)
    pieces += _marks(grid, lambda r, c: hex_centre(grid, r, c))
    return layered("".join(board), "".join(pieces), width, height)


def _hex_cell(row: int, col: int, fill: str) -> str:
    return f'<polygon points="{_hex_corners(row, col)}" fill="{fill}" stroke="{LINE}"/>'


def _hex_highlight(row: int, col: int) -> str:
    """A hexagon of the last move, highlighted: a sprite with room for the outline (and its
    pointed joins) around the hexagon. Its corners are the board's own, rounded as the board
    rounds them, so that it covers the board's hexagon exactly."""
    x, y = _hex_centre_at(row, col)
    left, top = _at(x - CELL / 2 - 1), _at(y - _HEX_R - 2)
    corners = " ".join(f"{_at(cx - left):g},{_at(cy - top):g}" for cx, cy in _hex_points(row, col))
    cell = f'<polygon points="{corners}" fill="{HIGHLIGHT}" stroke="{LINE}"/>'
    return sprite(left, top, CELL + 2, math.ceil(2 * _HEX_R + 4), cell, "last-move")


def _hex_corner(row: int, col: int, k: int) -> tuple[float, float]:
    """Corner ``k`` of a hexagon: 0 upper right, 1 lower right, 2 bottom, 3 lower left, 4 upper
    left, 5 top."""
    x, y = _hex_centre_at(row, col)
    angle = math.radians(60 * k - 30)
    return x + _HEX_R * math.cos(angle), y + _HEX_R * math.sin(angle)


def _hex_edges(grid: Grid, edges: Edges) -> list[str]:
    """The board's outline in four strokes, one per side, meeting at the corners."""
    last_row, last_col = grid.rows - 1, grid.cols - 1
    top = [_hex_corner(0, 0, 4)]
    bottom = [_hex_corner(last_row, 0, 3)]
    for col in range(grid.cols):
        top += [_hex_corner(0, col, 5), _hex_corner(0, col, 0)]
        bottom += [_hex_corner(last_row, col, 2), _hex_corner(last_row, col, 1)]
    left, right = [], []
    for row in range(grid.rows):  # a row's lower corner is the upper one of the row below
        left += [_hex_corner(row, 0, 4), _hex_corner(row, 0, 3)]
        right += [_hex_corner(row, last_col, 0), _hex_corner(row, last_col, 1)]
    return [
        _stroke(left, edges.left_right, "left"),
        _stroke(right, edges.left_right, "right"),
        _stroke(top, edges.top_bottom, "top"),
        _stroke(bottom, edges.top_bottom, "bottom"),
    ]


def _stroke(points: list[tuple[float, float]], colour: str, side: str) -> str:
    drawn = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return (
        f'<polyline class="edge {side}" points="{drawn}" fill="none" stroke="{colour}" '
        f'stroke-width="{EDGE_WIDTH}" stroke-linecap="round" stroke-linejoin="round"/>'
    )


def _edge_legend(edges: Edges, top: float) -> Drawn:
    """The legend lines under a board (from ``top`` down): a stroke of each side's colour and
    whose side it is."""
    lines = [
        (colour, text)
        for colour, text in (
            (edges.top_bottom, edges.top_bottom_legend),
            (edges.left_right, edges.left_right_legend),
        )
        if text
    ]
    parts = []
    width = 0.0
    for index, (colour, text) in enumerate(lines):
        y = top + 4 + index * 22 + 14
        parts.append(
            f'<line x1="{MARGIN}" y1="{y - 5:g}" x2="{MARGIN + 26}" y2="{y - 5:g}" '
            f'stroke="{colour}" stroke-width="{EDGE_WIDTH}" stroke-linecap="round"/>'
        )
        parts.append(label(MARGIN + 36, y, text, anchor="start"))
        width = max(width, MARGIN + 36 + text_width(text) + MARGIN)
    return Drawn("".join(parts), width, len(lines) * 22 + 10 if lines else 0)


def picture(drawn: Drawn) -> str:
    """A whole SVG picture of ``drawn``, on white, a whole number of pixels wide and high (as
    the PNG drawn from it is)."""
    width, height = math.ceil(drawn.width), math.ceil(drawn.height)
    return f"{_root(width, height)}{drawn.body}</svg>"


def layered(board: str, pieces: str, width: float, height: float) -> str:
    """A whole SVG picture in two layers: ``board``, what stays the same from move to move (in
    ``<g id="board">``, first, its end marked), then ``pieces``. A layered picture's board is
    drawn once and its pieces on a copy of it (pbmserv.pictures.raster); as SVG it is the same
    as one drawn in one go."""
    width, height = math.ceil(width), math.ceil(height)
    root = _root(width, height)
    split = root.index("<rect")
    return f'{root[:split]}<g id="board">{root[split:]}{board}</g><!--/board-->{pieces}</svg>'


def _root(width: int, height: int) -> str:
    """The ``<svg>`` element's start, one unit a pixel, and its white background."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">'
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>'
    )


def placed(drawn: Drawn, x: float, y: float, kind: str = "") -> str:
    """``drawn`` moved so that its top left corner is at (x, y); ``kind``: a class naming the
    group (what it is, for a reader of the SVG such as a test)."""
    named = f' class="{escape(kind)}"' if kind else ""
    return f'<g{named} transform="translate({x:g},{y:g})">{drawn.body}</g>'


def sprite(x: float, y: float, width: float, height: float, body: str, kind: str = "") -> str:
    """``body`` drawn in a box of its own, ``width`` by ``height``, its top left corner at
    (x, y): a nested ``<svg>``, in whose coordinates ``body`` is drawn (its origin the box's
    corner). Any SVG viewer draws it in place; the mail's rasteriser draws each sprite once
    and pastes it (pbmserv.pictures.raster), so a body that repeats should be the same text
    wherever it stands. The box clips what it holds: it must hold the strokes too. ``kind``:
    a class naming what it is, for a reader of the SVG such as a test. The corner is kept to
    a hundredth of a pixel (a hexagon's centre falls between pixels)."""
    named = f' class="{escape(kind)}"' if kind else ""
    return (
        f'<svg{named} x="{_at(x):g}" y="{_at(y):g}" width="{_at(width):g}" '
        f'height="{_at(height):g}">{body}</svg>'
    )


def _at(value: float) -> float:
    """A position to a hundredth of a pixel (+ 0.0: never written as -0)."""
    return round(value, 2) + 0.0


def _marks(grid: Grid, centre: Callable[[int, int], tuple[float, float]]) -> list[str]:
    return [piece(*centre(row, col), mark) for (row, col), mark in sorted(grid.marks.items())]


def piece(x: float, y: float, mark: Mark) -> str:
    """A piece as it stands on a cell centred at (x, y): a disc (or a ring if hollow) with its
    letter; a sprite (:func:`sprite`) centred there, its body the same on every cell."""
    body, half = _piece_body(mark)
    return sprite(x - half, y - half, 2 * half, 2 * half, body, "piece")


@cache
def _piece_body(mark: Mark) -> tuple[str, int]:
    """A piece drawn in its box, centred, and half the box's side: room for the disc and its
    outline, or a hollow one's ring (18), and for a label longer than a letter."""
    half = max(18, math.ceil(widest(mark.label, 17) / 2) + 2)
    radius = CELL * 0.36
    if mark.hollow:
        disc = (
            f'<circle cx="{half}" cy="{half}" r="{radius:g}" fill="none" '
            f'stroke="{mark.fill}" stroke-width="4" stroke-dasharray="5,3"/>'
        )
    else:
        disc = (
            f'<circle cx="{half}" cy="{half}" r="{radius:g}" fill="{mark.fill}" '
            f'stroke="#333333" stroke-width="1.5"/>'
        )
    if not mark.label:
        return disc, half
    ink = mark.fill if mark.hollow else mark.ink
    return disc + label(half, half + 6, mark.label, ink, size=17, bold=True), half


def label(
    x: float,
    y: float,
    text: str,
    ink: str = "#333333",
    size: int = 14,
    bold: bool = False,
    anchor: str = "middle",
) -> str:
    """``text`` with its baseline at ``y``, centred on ``x`` (``anchor="start"``: from ``x``)."""
    weight = ' font-weight="bold"' if bold else ""
    return (
        f'<text x="{x:g}" y="{y:g}" font-size="{size}" text-anchor="{anchor}" fill="{ink}"'
        f"{weight}>{escape(text)}</text>"
    )


def label_sprite(
    x: float,
    y: float,
    text: str,
    kind: str = "",
    *,
    ink: str = "#333333",
    size: int = 14,
    bold: bool = False,
    anchor: str = "middle",
) -> str:
    """:func:`label` as a sprite (:func:`sprite`, of ``kind``), for words that change from move
    to move on a picture in layers; the label's style is given by name. Its box is
    :func:`widest` and from a font size above the baseline to a third of one below."""
    width, height = widest(text, size) + 4, math.ceil(size * 4 / 3) + 2
    left = {"start": x - 2, "end": x - width + 2}.get(anchor, x - width / 2)
    top = y - size - 1
    words = label(_at(x - _at(left)), _at(y - _at(top)), text, ink, size, bold, anchor)
    return sprite(left, top, width, height, words, kind)


def widest(text: str, size: int = 14) -> int:
    """How wide ``text`` can be drawn at most: a box that must hold it (a sprite's clips)
    gives each letter a font size and a quarter (DejaVu Sans Bold's W is wider than its font
    size)."""
    return math.ceil(len(text) * size * 1.25)


def text_width(text: str, size: int = 14) -> float:
    """About how wide ``text`` is drawn (DejaVu Sans averages 0.6 of the font size a letter):
    enough to make room for it."""
    return len(text) * size * 0.6
