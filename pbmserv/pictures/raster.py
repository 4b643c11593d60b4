"""A board's SVG picture as the PNG image a mail carries (most mail programs show no SVG).

A move's board mail is queued as a draft (pbmserv.outbound.drafts) and built on delivery with its
picture drawn by :func:`png_of`; other mail with a picture (a reminder, a digest) is queued with
it as SVG, in a part marked ``X-Pbmserv-Picture: to-png``, which
:func:`pbmserv.outbound.picture_parts.finish_pictures` draws as PNG when the mail goes out. Either
way drawing is never done while a move is played.
Rasterised with LunaSVG (``pylunasvg``) and encoded as a palette PNG: a tenth of resvg's time
and half its bytes for our flat-coloured boards. pylunasvg has wheels for x86-64 and Apple
machines only; elsewhere (Linux on ARM) resvg (``resvg-py``) draws. Both are wheels with no
system library. The same picture often goes to several people (both players and the observers
of a game without secrets): recent pictures are kept, each drawn once.

A board picture in layers (:func:`layers_of`) has its board drawn once and kept. When its
pieces are all sprites (pbmserv.pictures.sprites), each sprite is drawn once too and pasted by
Pillow on the board, already in the palette: no SVG is drawn for a picture made of pieces seen
before. An 11x11 Chameleon board mid-game takes 0.5 ms, not 4 (bench/pictures.py); its PNG is
written by pbmserv.pictures.png, deflated by ISA-L. Other pieces are drawn by LunaSVG on a copy of
the board's pixels.
"""

from __future__ import annotations

import importlib
import io
import logging
import re
import sys
import threading
from functools import lru_cache
from types import ModuleType
from typing import Any

import resvg_py
from PIL import Image

from pbmserv.pictures.palette import colours_of_parts, palette_for, palette_image
from pbmserv.pictures.png import palette_png
from pbmserv.pictures.sprites import Sheet, sprites_of

lunasvg: ModuleType | None
try:
    lunasvg = importlib.import_module("pylunasvg")
except ImportError:  # no wheel for this machine (pyproject installs it where there is one)
    lunasvg = None

log = logging.getLogger("pbmserv.pictures")

_WIDTH = re.compile(r'<svg[^>]*?\swidth="([\d.]+)')
#: How a LunaSVG pixel lies in memory (a 32-bit ARGB word).
_NATIVE_PIXELS = "BGRX" if sys.byteorder == "little" else "XRGB"
_NATIVE_ARGB = "BGRA" if sys.byteorder == "little" else "ARGB"
_WHITE = 0xFFFFFFFF  # opaque background: the image has no alpha channel to show through
_COLOURS = 128  # a board has a few flat colours; their anti-aliased edges need the rest
# Deliveries on several event loops (threads) of one process may draw at once; LunaSVG's font
# cache is shared, so one drawing at a time.
_DRAWING = threading.Lock()


@lru_cache(maxsize=128)
def png_of(svg: str) -> bytes:
    """The PNG image of an SVG picture (ValueError if it cannot be drawn)."""
    return drawn_by_lunasvg(svg) if lunasvg is not None else drawn_by_resvg(svg)


def drawn_by_lunasvg(svg: str) -> bytes:
    """The picture drawn by LunaSVG, as a palette PNG (ValueError if it cannot be drawn)."""
    return palette_png(_in_palette(svg))


def _in_palette(svg: str) -> Image.Image:
    """The picture drawn, in a palette: its own colours and their blends where the SVG names
    them all (pbmserv.pictures.palette), else its pixels' colours reduced. A picture in layers
    (:func:`layers_of`) draws its pieces on its board, drawn once: pasted, if they are all
    sprites."""
    layers = layers_of(svg)
    if layers is None:
        with _DRAWING:
            image = _image_of(_drawn(svg, _WHITE))
        return _reduced(image, palette_for(svg))
    board_svg, pieces_svg = layers
    board = _board_pixels(board_svg)
    sprites = sprites_of(pieces_svg) if board.alone else None
    if sprites is None:
        with _DRAWING:
            image = _image_of(_on_board(board, pieces_svg))
        return _reduced(image, palette_for(svg, layers))
    colours = colours_of_parts(board_svg, [sprite.document for sprite in sprites])
    if colours is None or palette_image(colours) is None:
        return _reduced(_SHEET.pasted(board, sprites), None)
    return _SHEET.pasted_in_palette(board, sprites, colours)


def _reduced(image: Image.Image, palette: Image.Image | None) -> Image.Image:
    """An RGB picture mapped onto ``palette``, or with no palette its colours reduced."""
    if palette is not None:
        return image.quantize(palette=palette, dither=Image.Dither.NONE)
    return image.quantize(colors=_COLOURS, method=Image.Quantize.FASTOCTREE)


def _image_of(bitmap: Any) -> Image.Image:
    """A bitmap drawn on white as a Pillow RGB image. LunaSVG's pixels are premultiplied BGRA
    in memory; on an opaque background that is plain BGR and an unused byte, read as RGB in one
    pass. (Under the drawing lock: the bitmap is LunaSVG's.)"""
    size = (bitmap.width(), bitmap.height())
    pixels = bytes(memoryview(bitmap))
    return Image.frombytes("RGB", size, pixels, "raw", _NATIVE_PIXELS, bitmap.stride(), 1)


def _drawn(svg: str, background: int) -> Any:
    assert lunasvg is not None
    document = lunasvg.Document.loadFromData(svg)
    if document is None:
        raise ValueError("the picture is not SVG that can be read")
    bitmap = document.renderToBitmap(-1, -1, background)
    if bitmap.isNull():
        raise ValueError("the picture has no size to draw at")
    return bitmap


class _Board:
    """A layered picture's board, drawn (as a Pillow RGB image); compared by identity, as a
    key (sprites.Board)."""

    __slots__ = ("image", "alone", "_argb")

    def __init__(self, image: Image.Image, alone: bool) -> None:
        self.image = image
        #: Whether its sprites can be drawn without it: no style sheet in it that they miss.
        self.alone = alone
        self._argb: bytes | None = None

    def argb(self) -> bytes:
        """Its pixels as LunaSVG lays them in memory (premultiplied ARGB words, opaque), for
        pieces that are not all sprites; worked out the first time they are asked for."""
        if self._argb is None:
            self._argb = self.image.convert("RGBA").tobytes("raw", _NATIVE_ARGB)
        return self._argb


@lru_cache(maxsize=32)
def _board_pixels(board_svg: str) -> _Board:
    """A layered picture's board, drawn once."""
    with _DRAWING:
        image = _image_of(_drawn(board_svg, _WHITE))
    return _Board(image, "<style" not in board_svg)


def _on_board(board: _Board, pieces_svg: str) -> Any:
    """The pieces drawn by LunaSVG on a copy of the board (under the drawing lock)."""
    assert lunasvg is not None
    width, height = board.image.size
    bitmap = lunasvg.Bitmap(width, height)
    if bitmap.isNull():
        raise ValueError("the picture has no size to draw at")
    memoryview(bitmap).cast("B")[:] = board.argb()
    document = lunasvg.Document.loadFromData(pieces_svg)
    if document is None:
        raise ValueError("the picture is not SVG that can be read")
    document.render(bitmap, lunasvg.Matrix())
    return bitmap


def _drawn_alone(document: str) -> Image.Image:
    """A sprite's document drawn on a transparent background: RGBA, not premultiplied."""
    with _DRAWING:
        bitmap = _drawn(document, 0)
        bitmap.convertToRGBA()
        size, stride = (bitmap.width(), bitmap.height()), bitmap.stride()
        pixels = bytes(memoryview(bitmap))
    return Image.frombuffer("RGBA", size, pixels, "raw", "RGBA", stride, 1)


#: The sprites of layered pictures, each drawn once.
_SHEET: Sheet[_Board] = Sheet(_drawn_alone)


#: A picture in layers: ``<g id="board">`` (what stays the same move after move) first, its
#: end marked, then the rest (the pieces). The root must map its units to pixels one to one.
_ROOT = re.compile(r'<svg [^>]*\bwidth="(\d+)" height="(\d+)" viewBox="0 0 (\d+) (\d+)"[^>]*>')
BOARD_START = '<g id="board">'
BOARD_END = "</g><!--/board-->"


def layers_of(svg: str) -> tuple[str, str] | None:
    """A layered picture's board and pieces, each a whole SVG document; None for a picture
    not in layers."""
    root = _ROOT.match(svg)
    if root is None or root.group(1, 2) != root.group(3, 4):
        return None
    head = root.group(0)
    start, end = svg.find(BOARD_START), svg.find(BOARD_END)
    if start != len(head) or end < 0 or not svg.endswith("</svg>"):
        return None
    board = svg[: end + len(BOARD_END)] + "</svg>"
    return board, head + svg[end + len(BOARD_END) :]


def drawn_by_resvg(svg: str) -> bytes:
    """The picture drawn by resvg, on white (ValueError if it cannot be drawn)."""
    return bytes(resvg_py.svg_to_bytes(svg_string=svg, background="#ffffff"))


_SAMPLE_LETTERS = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20">'
    '<text x="2" y="16" font-size="16" font-family="DejaVu Sans, Arial, sans-serif">Ab</text></svg>'
)


def letters_can_be_drawn() -> bool:
    """Whether a font is there to draw the pictures' letters and coordinates with (a slim
    container has none, and pictures would come without them)."""
    try:
        image = Image.open(io.BytesIO(png_of(_SAMPLE_LETTERS))).convert("L")
    except ValueError:
        return False
    return any(image.histogram()[:128])  # some pixel darker than mid-grey: a letter drawn


def width_of(svg: str) -> int | None:
    """The picture's width in pixels, as its svg element says."""
    match = _WIDTH.search(svg)
    return round(float(match.group(1))) if match else None
