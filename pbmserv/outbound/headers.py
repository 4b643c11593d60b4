"""Every value that goes into a header we send is made safe here, and only here.

The header block of an outgoing message is written by :func:`header_block` from
(name, value) pairs: unstructured text (subjects, names) loses its control characters and
is RFC 2047-encoded whenever it is not plain ASCII or could be read as an encoded-word, so a
decoded CR/LF can never start a header of its own; addresses and Message-IDs must pass strict
checks or are left out. Python's email package is not used to build headers: it decodes
encoded-words in values it is given, which is how a Subject once carried a Bcc.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from email.header import Header

# RFC 5322 atext, plus any non-ASCII letter or mark (RFC 6532 addresses, sent with SMTPUTF8).
_ATOM = r"(?:[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]|[^\x00-\x7f])+"
_LOCAL = re.compile(rf"{_ATOM}(?:\.{_ATOM})*")
_LABEL = r"(?:[A-Za-z0-9]|[^\x00-\x7f])(?:[A-Za-z0-9-]|[^\x00-\x7f]){0,62}"
_DOMAIN = re.compile(rf"{_LABEL}(?:\.{_LABEL})*|\[[A-Za-z0-9.:]+\]")
_MSGID = re.compile(r"<[!-;=?-~]{1,250}@[!-;=?-~]{1,250}>")  # printable ASCII without < >
_FIELD_NAME = re.compile(r"[!-9;-~]+")  # RFC 5322 ftext
#: A URL we write between angle brackets (RFC 2369): printable ASCII without space, quote,
#: angle brackets or comma (the list's separator), percent-encoded beyond that.
_URL = re.compile(r"(?:mailto|https):[!#-+\--;=?-~]{1,900}")
#: An RFC 2919 list id: a dot-atom of letters, digits and hyphens, with at least one dot.
_LIST_ID = re.compile(r"[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_MAX_LINE = 78


def safe_text(value: str, limit: int = 200) -> str:
    """``value`` as one line: control, format and separator characters become spaces, runs of
    spaces one space; at most ``limit`` characters."""
    if value.isascii() and value.isprintable():  # in ASCII only Cc is unsafe, and it is not
        cleaned = value
    else:
        cleaned = "".join(
            " " if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") else c for c in value
        )
    return " ".join(cleaned.split())[:limit]


def safe_address(value: str) -> str | None:
    """``value`` if it is a bare address we can write in a header and give to a relay
    (``local@domain``, no display name, no encoded-words), else None."""
    if len(value) > 254 or "=?" in value:
        return None
    local, at, domain = value.rpartition("@")
    if not at or len(local) > 64 or not _LOCAL.fullmatch(local) or not _DOMAIN.fullmatch(domain):
        return None
    # ASCII has passed the patterns above, which let no control character or space through.
    if not value.isascii() and any(
        unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp", "Zs") for c in value
    ):
        return None
    return value


def safe_message_id(value: str) -> str | None:
    """``<id@host>`` in printable ASCII, else None."""
    return value if _MSGID.fullmatch(value) and "=?" not in value else None


def _fold(name: str, value: str) -> str:
    """A plain ASCII header, folded at spaces to about 78 characters a line."""
    lines, current = [], f"{name}:"
    for word in value.split(" "):
        if len(current) + 1 + len(word) > _MAX_LINE and current != f"{name}:":
            lines.append(current)
            current = ""
        current += f" {word}"
    lines.append(current)
    return "\n".join(lines)


def text_field(name: str, value: str) -> str:
    """An unstructured header (Subject, a display name) made safe and encoded as needed."""
    text = safe_text(value, 500)
    if text.isascii() and "=?" not in text and all(len(w) < 900 for w in text.split(" ")):
        return _fold(name, text)
    encoded = Header(text, "utf-8", header_name=name).encode(linesep="\n")
    return f"{name}: {encoded}"


def mailbox_field(name: str, address: str, display_name: str = "") -> str:
    """``Name: Display <address>``; ValueError if the address is not safe (callers check
    :func:`safe_address` first, so this is a bug, never a user's doing)."""
    if safe_address(address) is None:
        raise ValueError("refusing to write an unsafe address into a header")
    if not display_name:
        return f"{name}: {address}"
    shown = safe_text(display_name, 100)
    if re.fullmatch(r"[A-Za-z0-9 !#$%&'*+/=?^_`{|}~.-]+", shown) and "=?" not in shown:
        phrase = shown if "." not in shown else f'"{shown}"'
    else:
        phrase = Header(shown, "utf-8").encode(linesep="\n")
    return f"{name}: {phrase} <{address}>"


def ids_field(name: str, ids: Sequence[str]) -> str | None:
    """In-Reply-To or References from the message ids that pass :func:`safe_message_id`."""
    good = [i for i in ids if safe_message_id(i)]
    return _fold(name, " ".join(good)) if good else None


def urls_field(name: str, urls: Sequence[str]) -> str:
    """``Name: <url>, <url>`` (List-Unsubscribe, RFC 2369); ValueError for a URL that is not
    a mailto or https URL of plain printable ASCII (we make them: a bug, never a user's)."""
    if not urls or any(not _URL.fullmatch(url) or "=?" in url for url in urls):
        raise ValueError(f"refusing to write header {name!r}")
    return _fold(name, ", ".join(f"<{url}>" for url in urls))


def list_id_field(description: str, list_id: str) -> str:
    """``List-Id: description <list.id.domain>`` (RFC 2919); ValueError for an id that is not
    a dot-atom of ASCII labels (an internationalised domain: leave the List-Id out)."""
    if len(list_id) > 255 or not _LIST_ID.fullmatch(list_id):
        raise ValueError("refusing to write a List-Id that is no dot-atom")
    shown = safe_text(description, 100)
    if not re.fullmatch(r"[A-Za-z0-9 -]+", shown):
        raise ValueError("refusing to write a List-Id description that is no plain phrase")
    return _fold("List-Id", f"{shown} <{list_id}>")


def raw_field(name: str, value: str) -> str:
    """A header whose value we made ourselves (Date, Auto-Submitted); checked all the same."""
    if not _FIELD_NAME.fullmatch(name) or safe_text(value, 998) != value or not value.isascii():
        raise ValueError(f"refusing to write header {name!r}")
    return f"{name}: {value}"


def header_block(fields: Sequence[str | None]) -> bytes:
    """The header lines (None entries skipped), each ending in a newline, as UTF-8 bytes."""
    return "".join(f"{field}\n" for field in fields if field is not None).encode("utf-8")
