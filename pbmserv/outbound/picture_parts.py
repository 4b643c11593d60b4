"""The picture parts of a queued mail finished as it goes out: each SVG part marked
``X-Pbmserv-Picture: to-png`` (a reminder's, a digest's) drawn as the PNG mail programs show,
by :func:`pbmserv.pictures.raster.png_of`, under the same Content-ID."""

from __future__ import annotations

import base64
import logging
import re
import zlib

from pbmserv.outbound.mime import TO_PNG, TO_PNG_DEFLATED, base64_lines
from pbmserv.pictures.raster import png_of

log = logging.getLogger("pbmserv.pictures")

#: A queued picture part's marker: TO_PNG, or TO_PNG_DEFLATED (group 1) for a deflated body.
_DEFLATED = re.escape(TO_PNG_DEFLATED[len(TO_PNG) :])
_MARKER = re.compile(re.escape(b"\n" + TO_PNG) + rb"(" + _DEFLATED + rb")?\n")


def finish_pictures(raw: bytes) -> bytes:
    """``raw`` with each marked SVG picture part drawn as a PNG part (the same Content-ID). A
    picture that cannot be drawn goes as SVG, unmarked: the text says it all anyway."""
    while (marker := _MARKER.search(raw)) is not None:
        raw = _finish_one(raw, marker)
    return raw


def _finish_one(raw: bytes, marker: re.Match[bytes]) -> bytes:
    start = raw.rfind(b"\n--", 0, marker.start()) + 1  # the boundary line opening the part
    head_end = marker.end()  # the blank line after the part's headers
    body_end = raw.find(b"\n--", head_end)
    unmarked = raw[: marker.start()] + raw[marker.end() - 1 :]
    if start <= 0 or body_end < 0:
        return unmarked
    head, body = raw[start : marker.start()], raw[head_end + 1 : body_end]
    try:
        svg = base64.b64decode(body)
        if marker.group(1):
            svg = zlib.decompress(svg)
    except (ValueError, zlib.error):
        log.exception("a queued board picture cannot be read; the mail goes without it")
        return raw[:start] + raw[body_end + 1 :]
    try:
        png = png_of(svg.decode("utf-8"))
    except Exception:
        log.exception("could not draw a board's picture; it goes as SVG")
        data = base64_lines(svg)
        return raw[:start] + head + b"\n\n" + data + raw[body_end:]
    head = head.replace(b'image/svg+xml; name="board.svg"', b'image/png; name="board.png"')
    head = head.replace(b'filename="board.svg"', b'filename="board.png"')
    data = base64_lines(png)
    return raw[:start] + head + b"\n\n" + data + raw[body_end:]
