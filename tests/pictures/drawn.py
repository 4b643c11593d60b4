"""What a PNG shows, to compare pictures by: ISA-L's deflate (pbmserv.pictures.png) is not
byte-for-byte repeatable when several threads draw at once (seen: the same rows deflated to
16,720 bytes alone and 16,723 beside other threads, inflating to the same rows), so the same
picture can come as other bytes. Two PNGs show the same picture when their size, mode,
palette and pixels agree."""

from __future__ import annotations

import io

from PIL import Image


def shown(png: bytes) -> tuple[tuple[int, int], str, list[int] | None, bytes]:
    """A PNG's size, mode, palette and pixels."""
    image = Image.open(io.BytesIO(png))
    image.load()
    return image.size, image.mode, image.getpalette(), image.tobytes()
