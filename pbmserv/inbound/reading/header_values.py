"""Values read from the header of an incoming message: the raw field values, unfolded; the
sender's address; the recipients; the trace (Received and Authentication-Results); Message-IDs
and the ids a message refers to (its thread).

Fields are read before RFC 2047 decoding (addresses and Message-IDs must be), from a parsed
message or from what :func:`pbmserv.inbound.reading.rawheaders.scan_headers` collected.
"""

from __future__ import annotations

import re
from email.message import Message
from email.utils import getaddresses

from pbmserv.inbound.reading.charsets import decode_bytes
from pbmserv.inbound.reading.guard import guard
from pbmserv.inbound.reading.rawheaders import HeaderScan

# Enough ancestors for threading; a References header can grow without bound.
_MAX_REFERENCES = 50

_UNFOLD = re.compile(r"[ \t]*(?:\r\n|\r|\n)[ \t]*")


def header_values(msg: Message, name: str) -> list[str]:
    """All values of header ``name``, unfolded, raw 8-bit bytes decoded (UTF-8, else cp1252).

    RFC 2047 encoded-words are left alone: addresses and Message-IDs must be read before them.
    """
    values = []
    for field, value in msg.raw_items():
        if isinstance(field, str) and field.strip().lower() == name:
            if not isinstance(value, str):
                value = str(value)
            # The parser keeps 8-bit bytes as surrogates; turn them back into bytes to decode.
            values.append(_unfolded(value.encode("utf-8", "surrogateescape")))
    return values


def _scanned(scan: HeaderScan | None, name: str) -> list[str]:
    """The values of header ``name`` that ``scan`` collected, as ``header_values`` gives them."""
    return [_unfolded(value) for value in scan.values.get(name, [])] if scan else []


def _unfolded(value: bytes) -> str:
    return _UNFOLD.sub(" ", decode_bytes(value, None)).strip()


def scanned_from(scan: HeaderScan | None) -> str | None:
    """The first usable From address among the values ``scan`` collected, or None."""
    return guard(lambda: _first_usable(_scanned(scan, "from"))[0], None)


def scanned_message_id(scan: HeaderScan | None) -> str | None:
    """The Message-ID among the values ``scan`` collected, or None."""
    return guard(lambda: message_id(next(iter(_scanned(scan, "message-id")), None)), None)


def first_header(msg: Message, name: str) -> str | None:
    """The first value of header ``name`` as ``header_values`` gives it, or None."""
    return next(iter(guard(lambda: header_values(msg, name), [])), None)


def header_token(value: str) -> str:
    """The first word of a structured header value, comments and parameters removed."""
    value = re.sub(r"\([^()]*\)", " ", value).split(";", 1)[0]
    return value.strip().lower()


# --- addresses ---------------------------------------------------------------------------

# What may not appear in a bare address we answer to (the local part may be quoted, but
# addresses with spaces or brackets in them are not worth the risk of answering).
_ADDRESS_BAD = re.compile(r"[\s<>()\[\],;\\\"\x00-\x1f\x7f]")
_DOMAIN = re.compile(r"[^\s@<>()\[\],;:\\\"\x00-\x1f\x7f]+|\[[^\[\]\s\\]+\]")


def usable_address(text: str) -> str | None:
    """``text`` as a bare address with its domain lower-cased, or None if it is not one."""
    address = text.strip().removeprefix("<").removesuffix(">").strip()
    local, at, domain = address.rpartition("@")
    if not at or not local or len(address) > 254 or _ADDRESS_BAD.search(local):
        return None
    if not _DOMAIN.fullmatch(domain) or domain.startswith(".") or domain.endswith("."):
        return None
    return f"{local}@{domain.lower()}"


def from_address(msg: Message) -> tuple[str | None, str | None]:
    """The first usable From address, and the first address-like token of From even when it
    is not usable (``MAILER-DAEMON`` without a domain is still a mailer daemon)."""
    return _first_usable(header_values(msg, "from"))


def _first_usable(values: list[str]) -> tuple[str | None, str | None]:
    """``from_address`` of the From field values ``values``."""
    if not values:
        return None, None
    pairs = [pair for pair in guard(lambda: getaddresses(values), []) if pair[1]]
    token = pairs[0][1] if pairs else None
    for _name, candidate in pairs:
        address = usable_address(candidate)
        if address:
            return address, token
    # getaddresses gave up (unbalanced quotes and the like): any <user@host> will do.
    for candidate in re.findall(r"<([^<>]*)>", values[0]):
        address = usable_address(candidate)
        if address:
            return address, token or address
    return None, token


_RECIPIENT_HEADERS = ("to", "cc", "delivered-to", "x-original-to")
_MAX_RECIPIENTS = 50
_MAX_AUTH_RESULTS = 10


def recipients(msg: Message) -> tuple[str, ...]:
    """The usable addresses of To, Cc, Delivered-To and X-Original-To, lower-cased, once each."""
    values = [v for name in _RECIPIENT_HEADERS for v in header_values(msg, name)]
    found = []
    for _name, candidate in getaddresses(values)[: _MAX_RECIPIENTS * 2]:
        address = usable_address(candidate)
        if address:
            found.append(address.lower())
    return tuple(dict.fromkeys(found))[:_MAX_RECIPIENTS]


def trace(msg: Message) -> tuple[tuple[str, str], ...]:
    """The Received and Authentication-Results headers in order (see ``IncomingMail.trace``)."""
    found: list[tuple[str, str]] = []
    results = 0
    for field, value in msg.raw_items():
        name = field.strip().lower() if isinstance(field, str) else ""
        if name == "received":
            found.append(("received", ""))
        elif name == "authentication-results":
            raw = str(value).encode("utf-8", "surrogateescape")
            found.append(("authentication-results", _unfolded(raw)))
            results += 1
            if results == _MAX_AUTH_RESULTS:
                break
    return tuple(found)


def local_part(address: str | None) -> str:
    """The part of ``address`` before the "@", lower-cased (all of it when there is no "@")."""
    if not address:
        return ""
    return address.strip().strip("<>").rpartition("@")[0].lower() or address.strip("<> ").lower()


_MSGID = re.compile(r"<([^<>]*)>")


def _message_ids(value: str) -> list[str]:
    ids = []
    for match in _MSGID.finditer(value):
        inner = "".join(match.group(1).split())  # folding may have split a long id
        if inner:
            ids.append(f"<{inner}>")
    return ids


def message_id(value: str | None) -> str | None:
    """The first Message-ID in a header value, with its angle brackets, or None."""
    if not value:
        return None
    ids = _message_ids(value)
    if ids:
        return ids[0]
    # Some mailers leave out the brackets.
    token = value.split()[0].strip("<>") if value.split() else ""
    return f"<{token}>" if token else None


def references(msg: Message) -> tuple[str, ...]:
    """The ids of In-Reply-To and References, nearest ancestor first, without repeats."""
    found: list[str] = []
    for value in header_values(msg, "in-reply-to"):
        found.extend(_message_ids(value))
    # References lists the oldest ancestor first; we want the nearest first.
    for value in header_values(msg, "references"):
        found.extend(reversed(_message_ids(value)))
    return tuple(dict.fromkeys(found))[:_MAX_REFERENCES]
