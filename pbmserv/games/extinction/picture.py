"""Extinction's board picture in python-chess's look, drawn in layers (drawing.layered).

python-chess's own ``chess.svg.board`` draws a 390-unit board scaled to the size asked, its
pieces as ``<use>`` of shared definitions and its knights' colours in ``style``: each picture
has to be rasterised whole. Here the same board is drawn one unit a pixel (45-pixel squares, a
15-pixel frame with the coordinates), the frame, squares and coordinates as the board layer
(the same for every position seen from one side, so it is drawn once), and the last move's
squares and the pieces (python-chess's drawings, their colours as plain attributes) as the
layer drawn on it, each a sprite a square in size (drawing.sprite: drawn once, pasted where it
stands). Pure: no I/O.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from functools import cache
from typing import Final

import chess
import chess.svg

from pbmserv.games.drawing import layered, sprite

SQUARE: Final = chess.svg.SQUARE_SIZE  # pixels a square measures (45), a piece's drawing too
MARGIN: Final = 15  # the frame around the squares, the coordinates written in it
SIZE: Final = 2 * MARGIN + 8 * SQUARE  # the picture's width and height in pixels (390)
LIGHT: Final = "#ffce9e"
DARK: Final = "#d18b47"
FRAME: Final = "#212121"
COORD: Final = "#e5e5e5"
_COORD_SCALE: Final = MARGIN / chess.svg.MARGIN  # python-chess's letters are drawn for 20
_COORD_INSET: Final = int(SQUARE - _COORD_SCALE * SQUARE) // 2  # centred along the square


def board_svg(
    pieces: Mapping[chess.Square, chess.Piece],
    orientation: chess.Color,
    last_move: Mapping[chess.Square, str],
) -> str:
    """The board with ``pieces`` on it, seen from ``orientation``'s side, the squares of
    ``last_move`` covered in the colour (``#rrggbb``) each is given, under the pieces; as SVG in
    layers."""
    drawn = [_cover(square, colour, orientation) for square, colour in sorted(last_move.items())]
    drawn += [
        _piece(piece, square, *square_corner(square, orientation))
        for square, piece in sorted(pieces.items())
    ]
    return layered(_board_layer(orientation), "".join(drawn), SIZE, SIZE)


def square_corner(square: chess.Square, orientation: chess.Color) -> tuple[int, int]:
    """The pixel at the top left corner of ``square`` seen from ``orientation``'s side."""
    file, rank = chess.square_file(square), chess.square_rank(square)
    column, row = (file, 7 - rank) if orientation == chess.WHITE else (7 - file, rank)
    return MARGIN + column * SQUARE, MARGIN + row * SQUARE


@cache
def _board_layer(orientation: chess.Color) -> str:
    """The frame, the coordinates on its four sides and the squares in their plain colours."""
    half = MARGIN / 2
    parts = [
        f'<rect x="{half:g}" y="{half:g}" width="{SIZE - MARGIN}" height="{SIZE - MARGIN}" '
        f'fill="none" stroke="{FRAME}" stroke-width="{MARGIN}"/>'
    ]
    far = SIZE - MARGIN
    for file, name in enumerate(chess.FILE_NAMES):
        x, _y = square_corner(chess.square(file, 0), orientation)
        parts += [_coordinate(name, x + _COORD_INSET, 1), _coordinate(name, x + _COORD_INSET, far)]
    for rank, name in enumerate(chess.RANK_NAMES):
        _x, y = square_corner(chess.square(0, rank), orientation)
        parts += [_coordinate(name, 0, y + _COORD_INSET), _coordinate(name, far, y + _COORD_INSET)]
    for square in chess.SQUARES:
        x, y = square_corner(square, orientation)
        light = bool(chess.BB_LIGHT_SQUARES & chess.BB_SQUARES[square])
        shade, colour = ("light", LIGHT) if light else ("dark", DARK)
        parts.append(
            f'<rect x="{x}" y="{y}" width="{SQUARE}" height="{SQUARE}" '
            f'class="square {shade} {chess.SQUARE_NAMES[square]}" fill="{colour}"/>'
        )
    return "".join(parts)


def _cover(square: chess.Square, colour: str, orientation: chess.Color) -> str:
    """A square of the last move covered in ``colour`` (over its plain colour on the board)."""
    x, y = square_corner(square, orientation)
    cover = f'<rect width="{SQUARE}" height="{SQUARE}" fill="{colour}"/>'
    return sprite(x, y, SQUARE, SQUARE, cover, f"lastmove {chess.SQUARE_NAMES[square]}")


def _coordinate(name: str, x: int, y: int) -> str:
    """A file letter or rank digit, python-chess's outline of it, its box's corner at (x, y)."""
    return (
        f'<g transform="translate({x},{y}) scale({_COORD_SCALE:g})" fill="{COORD}" '
        f'stroke="{COORD}">{chess.svg.COORDS[name]}</g>'
    )


def _piece(piece: chess.Piece, square: chess.Square, x: int, y: int) -> str:
    """python-chess's drawing of ``piece`` on the square whose corner is at (x, y) (it keeps
    within its 45 by 45 pixels)."""
    classes = f"{chess.COLOR_NAMES[piece.color]} {chess.PIECE_NAMES[piece.piece_type]}"
    kind = f"{classes} {chess.SQUARE_NAMES[square]}"
    return sprite(x, y, SQUARE, SQUARE, f"<g{_drawing(piece.symbol())}", kind)


_STYLE_PART: Final = re.compile(r"\s*([\w-]+)\s*:\s*([^;]+?)\s*(?:;|$)")


@cache
def _drawing(symbol: str) -> str:
    """python-chess's drawing of a piece (45 by 45) after the ``<g`` that opens it, without
    its id (a piece is drawn many times) or class, and with the colours its ``style``
    attributes gave as attributes of their own: a picture's palette reads those alone
    (pbmserv.pictures.palette)."""
    root = ET.fromstring(chess.svg.PIECES[symbol])
    for element in root.iter():
        style = element.attrib.pop("style", None)
        if style is not None:
            element.attrib.update(_STYLE_PART.findall(style))
    root.attrib.pop("id", None)
    root.attrib.pop("class", None)
    text = ET.tostring(root, encoding="unicode", short_empty_elements=True)
    return text.removeprefix("<g")
