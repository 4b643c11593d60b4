"""A board's SVG picture as the PNG image a mail carries (most mail programs show no SVG).

Board mail is queued with the picture as SVG, in a part marked ``X-Pbmserv-Picture: to-png``;
:func:`finish_pictures` draws it as PNG when the mail goes out, so the tens of milliseconds
drawing takes are never spent while a move is played. Rasterised with resvg (a pip wheel, no
system library). The same picture often goes to several people (both players and the
observers of a game without secrets): recent pictures are kept, each drawn once.
"""

from __future__ import annotations

import base64
import logging
import re
from functools import lru_cache

import resvg_py

from pbmserv.mail.mime import TO_PNG

log = logging.getLogger("pbmserv.pictures")

_WIDTH = re.compile(r'<svg[^>]*?\swidth="([\d.]+)')


@lru_cache(maxsize=128)
def png_of(svg: str) -> bytes:
    """The PNG image of an SVG picture (ValueError if it cannot be drawn)."""
    return bytes(resvg_py.svg_to_bytes(svg_string=svg))


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
