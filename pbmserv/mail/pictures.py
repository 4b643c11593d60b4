"""A board's SVG picture as the PNG image a mail carries (most mail programs show no SVG).

Rasterised with resvg (a pip wheel, no system library). The same picture is often mailed to
several people (both players and the observers of a game without secrets), so recent
pictures are kept: each is drawn once.
"""

from __future__ import annotations

import re
from functools import lru_cache

import resvg_py

_WIDTH = re.compile(r'<svg[^>]*?\swidth="([\d.]+)')


@lru_cache(maxsize=128)
def png_of(svg: str) -> bytes:
    """The PNG image of an SVG picture (ValueError if it cannot be drawn)."""
    return bytes(resvg_py.svg_to_bytes(svg_string=svg))


def width_of(svg: str) -> int | None:
    """The picture's width in pixels, as its svg element says."""
    match = _WIDTH.search(svg)
    return round(float(match.group(1))) if match else None
