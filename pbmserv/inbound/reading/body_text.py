"""The body of an incoming message as plain text: the part that holds the text (plain text
in preference to HTML), its transfer encoding and charset decoded, format=flowed undone and
HTML reduced to text."""

from __future__ import annotations

import binascii
import re
from email.message import Message
from email.utils import collapse_rfc2231_value

from pbmserv.inbound.reading.charsets import INVISIBLE, b64decode, decode_bytes
from pbmserv.inbound.reading.guard import guard
from pbmserv.inbound.reading.header_values import first_header, header_token
from pbmserv.inbound.reading.html_text import html_to_text

# Deeper MIME nesting than this is not a real message; it is not searched for text.
_MAX_DEPTH = 20


def body_text(msg: Message) -> str:
    """The readable text of ``msg``; "" when it has none."""
    found = _find_text(msg, 0)
    return found[0] if found else ""


def _find_text(part: Message, depth: int) -> tuple[str, bool] | None:
    """The readable text of ``part`` and whether it came from HTML, or None if it has none."""
    if depth > _MAX_DEPTH:
        return None
    ctype = guard(part.get_content_type, "text/plain")
    if depth and guard(part.get_content_disposition, None) == "attachment":
        return None
    if part.is_multipart():
        if ctype.startswith("message/"):
            return None  # a forwarded or bounced message: not the sender's own words
        children = [c for c in guard(part.get_payload, []) if isinstance(c, Message)]
        first = None
        for child in children:
            found = _find_text(child, depth + 1)
            if found is None or not found[0].strip():
                continue
            # In an alternative keep looking for plain text; elsewhere (mixed, related,
            # signed, unknown multiparts) the first text part is the message.
            if ctype != "multipart/alternative" or not found[1]:
                return found
            first = first or found
        return first
    maintype = ctype.partition("/")[0]
    if ctype == "text/html":
        return html_to_text(_leaf_text(part, html=True)), True
    # A multipart without a usable boundary is not split by the parser: read it as text
    # rather than lose the commands in it. Any text/* will do for a single-part message.
    if ctype == "text/plain" or maintype == "multipart" or (depth == 0 and maintype == "text"):
        text = _leaf_text(part, html=False)
        if _param(part, "format") == "flowed":
            text = _unflow(text, delsp=_param(part, "delsp") == "yes")
        return text, False
    return None


def _param(part: Message, name: str) -> str:
    """A Content-Type parameter, lower-cased, "" when absent or unreadable."""
    value = guard(lambda: part.get_param(name), None)
    if isinstance(value, tuple):  # RFC 2231 (charset, language, value)
        encoded = value
        value = guard(lambda: collapse_rfc2231_value(encoded), None)
    return value.strip().lower() if isinstance(value, str) else ""


_META_CHARSET = re.compile(
    rb"""<meta[^>]{0,200}?charset\s*=\s*["']?([A-Za-z0-9_.:-]{1,40})""", re.IGNORECASE
)


def _leaf_text(part: Message, html: bool) -> str:
    # The parser's undecoded payload: get_payload() would already have decoded 8-bit text in
    # the declared charset, without our fallbacks, and its bytes could not be had back.
    payload = getattr(part, "_payload", None)
    if isinstance(payload, bytes):
        data = payload
    elif isinstance(payload, str):
        data = payload.encode("utf-8", "surrogateescape")
    else:
        return ""
    cte = header_token(first_header(part, "content-transfer-encoding") or "")
    if cte == "base64":
        data = b64decode(data)
    elif cte == "quoted-printable":
        data = binascii.a2b_qp(data)
    charset = guard(part.get_content_charset, None)
    if charset is None and html:
        sniffed = _META_CHARSET.search(data[:4096])
        charset = sniffed.group(1).decode("ascii") if sniffed else None
    return _normalize_text(decode_bytes(data, charset))


def _normalize_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = INVISIBLE.sub("", text)
    return re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", "", text)


def _unflow(text: str, delsp: bool) -> str:
    """Undo RFC 3676 format=flowed: a line ending in a space continues on the next line (so a
    long command wrapped by the mailer is whole again); space-stuffing is removed."""
    out: list[str] = []
    pending: list[str] = []  # the pieces of a flowed line waiting for its continuation
    pending_depth = 0

    def emit() -> None:
        line = "".join(pending)
        out.append(">" * pending_depth + " " + line if pending_depth else line)
        pending.clear()

    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        body = line[depth:]
        if body.startswith(" "):
            body = body[1:]
        if pending and depth != pending_depth:
            emit()  # the quote depth changed: not a continuation
        pending_depth = depth
        flowed = body.endswith(" ") and body != "-- "
        pending.append(body[:-1] if flowed and delsp else body)
        if not flowed:
            emit()
    if pending:
        emit()
    return "\n".join(out)
