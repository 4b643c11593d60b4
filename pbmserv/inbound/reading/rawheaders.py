"""Header limits checked on a message's raw bytes, before the stdlib parser sees it.

The stdlib parser and its helpers take far more than linear time on some header shapes that
anyone can mail us: a folded Content-Type with tens of thousands of parameters (each one
copies the rest of the value), a From with thousands of addresses. ``scan_headers`` reads the
header fields with a few regular expressions, in linear time, and names the first limit a
message is over; such a message is not parsed at all (see ``decode.parse_message``). On the
way it collects the raw values of the fields asked for, which is how the listener reads the
From address and the Message-ID of every message it stores without parsing it.

Total, like decode.py: it returns a value for any bytes at all.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass

__all__ = ["LIMITS", "HeaderLimits", "HeaderScan", "scan_headers"]


@dataclass(frozen=True)
class HeaderLimits:
    """Far above real mail (60 Received lines, antispam headers of a few KB, 40 Cc's)."""

    #: Fields in the message's header.
    fields: int = 200
    #: Bytes in any one field, unfolded.
    field_bytes: int = 65_536
    #: Bytes in a field that is parsed as a structure (addresses, MIME parameters) or decoded
    #: and quoted back (Subject), unfolded.
    parsed_field_bytes: int = 8_192
    #: Addresses in one address field.
    addresses: int = 50
    #: Parameters in one Content-Type or Content-Disposition, in the header or in any part.
    mime_parameters: int = 64


LIMITS = HeaderLimits()

_ADDRESS_FIELDS = frozenset({"from", "sender", "reply-to", "to", "cc", "bcc"})
_MIME_FIELDS = frozenset({"content-type", "content-disposition"})
_PARSED_FIELDS = _ADDRESS_FIELDS | _MIME_FIELDS | {"subject"}


@dataclass(frozen=True)
class HeaderScan:
    #: The first limit the message is over ("From field of 400000 bytes (at most 8192)"), or
    #: None when it is within all of them.
    problem: str | None
    #: The raw values (line ends as ``\n``, folding kept) of the fields asked for, by
    #: lower-case name, in order; a field that is itself over the limits is left out.
    values: dict[str, list[bytes]]


def scan_headers(
    raw: bytes, wanted: Collection[str] = (), limits: HeaderLimits = LIMITS
) -> HeaderScan:
    """Check ``raw``'s header fields against ``limits``; collect the ``wanted`` fields."""
    text = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    values: dict[str, list[bytes]] = {name: [] for name in wanted}
    problem: str | None = None
    for count, (name, value) in enumerate(_fields(text), start=1):
        if count > limits.fields:  # this also bounds the time the scan takes
            problem = problem or f"more than {limits.fields} header fields"
            break
        lower = name.lower().decode("ascii")
        if problem is not None and lower not in values:
            continue  # past the first problem, only the wanted fields are still of use
        trouble = _field_problem(name, value, limits)
        problem = problem or trouble
        if lower in values and trouble is None:
            values[lower].append(value)
    return HeaderScan(problem or _mime_parts_problem(text, limits), values)


# A header line as the stdlib's feedparser tells one: a field name (printable ASCII but the
# colon, no space) and a colon; the value runs on over the lines that start with white space.
_FIELD = re.compile(rb"([!-9;-~]*):([^\n]*(?:\n[ \t][^\n]*)*)\n?")
_CONTINUATION = re.compile(rb"[ \t][^\n]*\n?")
# A Content-Type or Content-Disposition field anywhere: in the header or a part's header. A
# body line that looks like one is checked too; it is harmless below the limits. (A leading
# "\n" rather than "^" with re.M: twenty times faster over a long body.)
_MIME_FIELD = re.compile(
    rb"\n(content-(?:type|disposition))[ \t]*:([^\n]*(?:\n[ \t][^\n]*)*)", re.IGNORECASE
)
# Quoted strings and comments, whose commas, semicolons and @ signs are not separators. One
# left open runs to the end, as the parser reads it, and nothing is ever matched twice
# (possessive, and a quoted string cannot fail), so that the time stays linear.
_QUOTED = re.compile(rb'"(?:[^"\\]|\\.?)*+(?:"|$)', re.DOTALL)
_COMMENT = re.compile(rb"\((?:[^()\\]|\\.?)*+(?:\)|$)", re.DOTALL)


def _fields(text: bytes) -> Iterator[tuple[bytes, bytes]]:
    """(name, value) of each field of the header, up to the blank line or the first line
    that is no header line (where the parser, too, starts the body)."""
    pos = text.find(b"\n") + 1 if text.startswith(b"From ") else 0  # an mbox separator
    while (stray := _CONTINUATION.match(text, pos)) is not None:
        pos = stray.end()  # continuation lines before any field: the parser skips them
    while (match := _FIELD.match(text, pos)) is not None:
        yield match.group(1), match.group(2)
        pos = match.end()


def _field_problem(name: bytes, value: bytes, limits: HeaderLimits) -> str | None:
    lower = name.lower().decode("ascii")
    cap = limits.parsed_field_bytes if lower in _PARSED_FIELDS else limits.field_bytes
    size = len(name) + 1 + len(value) - value.count(b"\n")  # unfolded: the line ends go
    if size > cap:
        return f"{_shown(name)} field of {size} bytes (at most {cap})"
    if lower in _ADDRESS_FIELDS:
        count = _COMMENT.sub(b"", _QUOTED.sub(b"", value)).count(b"@")
        if count > limits.addresses:
            return f"{_shown(name)} with {count} addresses (at most {limits.addresses})"
    return None


def _mime_parts_problem(text: bytes, limits: HeaderLimits) -> str | None:
    for match in _MIME_FIELD.finditer(b"\n" + text):
        name, value = match.group(1), match.group(2)
        problem = _field_problem(name, value, limits)
        if problem is not None:
            return problem
        count = _QUOTED.sub(b"", value).count(b";")
        if count > limits.mime_parameters:
            return f"{_shown(name)} with {count} MIME parameters (at most {limits.mime_parameters})"
    return None


def _shown(name: bytes) -> str:
    return name[:60].decode("ascii")
