"""A board's SVG picture as the PNG image a mail carries (most mail programs show no SVG).

Board mail is queued with the picture as SVG, in a part marked ``X-Pbmserv-Picture: to-png``;
:func:`finish_pictures` draws it as PNG when the mail goes out, so the milliseconds drawing
takes are never spent while a move is played. Rasterised with LunaSVG (``pylunasvg``) and
encoded by Pillow as a palette PNG: a tenth of resvg's time and half its bytes for our
flat-coloured boards. pylunasvg has wheels for x86-64 and Apple machines only; elsewhere
(Linux on ARM) resvg (``resvg-py``) draws. Both are wheels with no system library. The same
picture often goes to several people (both players and the observers of a game without
secrets): recent pictures are kept, each drawn once.
"""

from __future__ import annotations

import base64
import importlib
import io
import logging
import re
import threading
from functools import lru_cache
from types import ModuleType

import resvg_py
from PIL import Image

from pbmserv.mail.mime import TO_PNG

lunasvg: ModuleType | None
try:
    lunasvg = importlib.import_module("pylunasvg")
except ImportError:  # no wheel for this machine (pyproject installs it where there is one)
    lunasvg = None

log = logging.getLogger("pbmserv.pictures")

_WIDTH = re.compile(r'<svg[^>]*?\swidth="([\d.]+)')
_WHITE = 0xFFFFFFFF  # opaque background: the image has no alpha channel to show through
_COLOURS = 128  # a board has a few flat colours; their anti-aliased edges need the rest
# Mail goes out from worker threads; LunaSVG's font cache is shared, so one drawing at a time.
_DRAWING = threading.Lock()


@lru_cache(maxsize=128)
def png_of(svg: str) -> bytes:
    """The PNG image of an SVG picture (ValueError if it cannot be drawn)."""
    return drawn_by_lunasvg(svg) if lunasvg is not None else drawn_by_resvg(svg)


def drawn_by_lunasvg(svg: str) -> bytes:
    """The picture drawn by LunaSVG, as a palette PNG (ValueError if it cannot be drawn)."""
    assert lunasvg is not None
    with _DRAWING:
        document = lunasvg.Document.loadFromData(svg)
        if document is None:
            raise ValueError("the picture is not SVG that can be read")
        bitmap = document.renderToBitmap(-1, -1, _WHITE)
        if bitmap.isNull():
            raise ValueError("the picture has no size to draw at")
        bitmap.convertToRGBA()
        size = (bitmap.width(), bitmap.height())
        pixels = bytes(memoryview(bitmap))
        stride = bitmap.stride()
    image = Image.frombuffer("RGBA", size, pixels, "raw", "RGBA", stride, 1).convert("RGB")
    palette = image.quantize(colors=_COLOURS, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    palette.save(out, "PNG")
    return out.getvalue()


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


def finish_pictures(raw: bytes) -> bytes:
    """``raw`` with each marked SVG picture part drawn as a PNG part (the same Content-ID). A
    picture that cannot be drawn stays SVG, unmarked: the text says it all anyway."""
    while (marker := raw.find(b"\n" + TO_PNG + b"\n")) >= 0:
        raw = _finish_one(raw, marker)
    return raw


def _finish_one(raw: bytes, marker: int) -> bytes:
    start = raw.rfind(b"\n--", 0, marker) + 1  # the boundary line opening the part
    head_end = marker + len(TO_PNG) + 2  # the blank line after the part's headers
    body_end = raw.find(b"\n--", head_end)
    if start <= 0 or body_end < 0:
        return raw[:marker] + raw[marker + 1 + len(TO_PNG) :]
    head = raw[start:marker]
    try:
        svg = base64.b64decode(raw[head_end + 1 : body_end]).decode("utf-8")
        png = png_of(svg)
    except Exception:
        log.exception("could not draw a board's picture; it goes as SVG")
        return raw[:marker] + raw[marker + 1 + len(TO_PNG) :]
    head = head.replace(b'image/svg+xml; name="board.svg"', b'image/png; name="board.png"')
    head = head.replace(b'filename="board.svg"', b'filename="board.png"')
    data = base64.encodebytes(png).rstrip(b"\n")
    return raw[:start] + head + b"\n\n" + data + raw[body_end:]
