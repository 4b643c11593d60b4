"""The body of a message we send: plain text, or text with an HTML alternative that shows a
picture (multipart/related around multipart/alternative, the picture inline by Content-ID).

Everything written here is ours (boundaries, types, encodings); text comes in already
rendered. Returns the content header lines and the body bytes.
"""

from __future__ import annotations

import base64
import quopri
import secrets
import zlib
from collections.abc import Sequence
from functools import lru_cache


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


#: Marks the picture part that delivery turns from SVG into PNG (see mail.pictures).
TO_PNG = b"X-Pbmserv-Picture: to-png"
#: ... whose body is the SVG deflated (zlib), then base64: a board's SVG is a seventh of its
#: size so (30 KB to 4 KB for an 11x11 Chameleon board), and every queued board mail is
#: written and read back by the database. Mail queued before has TO_PNG and the SVG itself.
TO_PNG_DEFLATED = TO_PNG + b"; deflated"


def picture_body(
    text: str, html: str, pictures: Sequence[tuple[str, str]]
) -> tuple[list[str], bytes]:
    """The text, an HTML alternative, and the pictures (Content-ID, SVG) the HTML shows as
    ``cid:ID``: SVG parts marked for delivery to draw as PNG (drawing costs a few
    milliseconds; it is done while the mail goes out, not while the move is played)."""
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
        lines += [
            f"--{related}".encode(),
            b'Content-Type: image/svg+xml; name="board.svg"',
            b"Content-Transfer-Encoding: base64",
            f"Content-ID: <{cid}>".encode(),
            b'Content-Disposition: inline; filename="board.svg"',
            TO_PNG_DEFLATED,
            b"",
            deflated(svg),
        ]
    lines += [f"--{related}--".encode(), b""]
    kind = f'multipart/related; boundary="{related}"; type="multipart/alternative"'
    headers = [f"Content-Type: {kind}"]
    return headers, b"\n".join(lines)


@lru_cache(maxsize=16)
def deflated(svg: str) -> bytes:
    """A queued picture part's body: the SVG deflated, in base64 lines of 76 characters (the
    same picture often goes to both players and the observers: deflated once)."""
    return base64.encodebytes(zlib.compress(svg.encode("utf-8"), 1)).rstrip(b"\n")
