"""The body of a message we send: plain text, or text with an HTML alternative that shows a
picture (multipart/related around multipart/alternative, the picture inline by Content-ID).

Everything written here is ours (boundaries, types, encodings); text comes in already
rendered. Returns the content header lines and the body bytes.
"""

from __future__ import annotations

import binascii
import logging
import quopri
import secrets
import zlib
from collections.abc import Callable, Sequence
from functools import lru_cache

log = logging.getLogger("pbmserv.pictures")


def _encoded(text: str) -> tuple[str, bytes]:
    """The transfer encoding and bytes of a text part: plain ASCII stays readable as it is;
    anything else is quoted-printable."""
    if not text.endswith("\n"):
        text += "\n"
    plain = text.isascii() and all(len(line) <= 998 for line in text.splitlines())
    if plain:
        return "7bit", text.encode("ascii")
    return "quoted-printable", quopri.encodestring(text.encode("utf-8"))


def text_body(text: str) -> tuple[list[str], bytes]:
    """A text/plain body."""
    encoding, data = _encoded(text)
    return [
        'Content-Type: text/plain; charset="utf-8"',
        f"Content-Transfer-Encoding: {encoding}",
    ], data


#: Marks the picture part that delivery turns from SVG into PNG (see pictures.raster).
TO_PNG = b"X-Pbmserv-Picture: to-png"
#: ... whose body is the SVG deflated (zlib), then base64: a board's SVG is a seventh of its
#: size so (30 KB to 4 KB for an 11x11 Chameleon board), and every queued board mail is
#: written and read back by the database. Mail queued before has TO_PNG and the SVG itself.
TO_PNG_DEFLATED = TO_PNG + b"; deflated"


def picture_body(
    text: str,
    html: str,
    pictures: Sequence[tuple[str, str]],
    draw: Callable[[str], bytes] | None = None,
) -> tuple[list[str], bytes]:
    """The text, an HTML alternative, and the pictures (Content-ID, SVG) the HTML shows as
    ``cid:ID``: drawn as PNG by ``draw`` (as delivery builds a draft), or else SVG parts
    marked for delivery to draw (drawing is done while the mail goes out, not while the move
    is played). A picture ``draw`` cannot draw goes as SVG: the text says it all anyway."""
    related, alternative = f"=_pbm_r_{secrets.token_hex(8)}", f"=_pbm_a_{secrets.token_hex(8)}"
    text_headers, text_data = text_body(text)
    html_encoding, html_data = _encoded(html)
    if html_encoding == "7bit" and any(len(line) > 76 for line in html.splitlines()):
        html_encoding, html_data = "quoted-printable", quopri.encodestring(html.encode("utf-8"))
    lines: list[bytes] = [
        f"--{related}".encode(),
        f'Content-Type: multipart/alternative; boundary="{alternative}"'.encode(),
        b"",
        f"--{alternative}".encode(),
        *(h.encode() for h in text_headers),
        b"",
        text_data,
        f"--{alternative}".encode(),
        b'Content-Type: text/html; charset="utf-8"',
        f"Content-Transfer-Encoding: {html_encoding}".encode(),
        b"",
        html_data,
        f"--{alternative}--".encode(),
        b"",
    ]
    for cid, svg in pictures:
        lines += [f"--{related}".encode(), *_picture_part(cid, svg, draw)]
    lines += [f"--{related}--".encode(), b""]
    kind = f'multipart/related; boundary="{related}"; type="multipart/alternative"'
    headers = [f"Content-Type: {kind}"]
    return headers, b"\n".join(lines)


def _picture_part(cid: str, svg: str, draw: Callable[[str], bytes] | None) -> list[bytes]:
    """A picture's part: its headers, a blank line and its body."""
    png = None
    marks: list[bytes] = []
    if draw is not None:
        try:
            png = draw(svg)
        except Exception:
            log.exception("could not draw a board's picture; it goes as SVG")
    if png is not None:
        kind, name, data = "image/png", "board.png", base64_lines(png)
    elif draw is not None:
        kind, name, data = "image/svg+xml", "board.svg", base64_lines(svg.encode())
    else:
        kind, name, data = "image/svg+xml", "board.svg", deflated(svg)
        marks.append(TO_PNG_DEFLATED)
    return [
        f'Content-Type: {kind}; name="{name}"'.encode(),
        b"Content-Transfer-Encoding: base64",
        f"Content-ID: <{cid}>".encode(),
        f'Content-Disposition: inline; filename="{name}"'.encode(),
        *marks,
        b"",
        data,
    ]


def base64_lines(data: bytes) -> bytes:
    """Base64 in lines of 76 characters (RFC 2045), no newline at the end: encoded at once and
    cut (base64.encodebytes encodes 57 bytes at a time, a fifth of a ms for a board's PNG)."""
    flat = binascii.b2a_base64(data, newline=False)
    return b"\n".join([flat[start : start + 76] for start in range(0, len(flat), 76)])


@lru_cache(maxsize=16)
def deflated(svg: str) -> bytes:
    """A queued picture part's body: the SVG deflated, in base64 lines of 76 characters (the
    same picture often goes to both players and the observers: deflated once)."""
    return base64_lines(zlib.compress(svg.encode("utf-8"), 1))
