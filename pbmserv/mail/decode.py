"""Turn a raw RFC 5322 message into what the server needs (SPEC section 2).

``parse_message`` gives the sender, the decoded subject, the body as plain text, the threading
ids and, when the message must go unanswered (bounces, auto-replies, mailing lists, our own
mail coming back), the reason why. ``dedupe_key`` names a message so that a second delivery of
it is recognised, and ``header_from_address`` reads its From address cheaply, for the listener.
``command_lines`` picks the command lines out of subject and body.

A message whose header is over the limits of ``rawheaders`` (field count and size, addresses,
MIME parameters) is never given to the stdlib parser, which takes seconds over such headers:
``parse_message`` marks it "headers over the limits", so that it goes unanswered.

Everything here is pure (no database, no network) and total: ``parse_message`` and
``dedupe_key`` return a value for any bytes at all, because a mail server meets every kind of
broken message and one bad message must never stop the inbox.
"""

from __future__ import annotations

import binascii
import codecs
import contextlib
import hashlib
import html
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import Message
from email.parser import BytesParser
from email.policy import compat32
from email.utils import collapse_rfc2231_value, getaddresses, parseaddr
from typing import TypeVar

from pbmserv.mail.rawheaders import HeaderScan, scan_headers

__all__ = [
    "IncomingMail",
    "command_lines",
    "dedupe_key",
    "header_from_address",
    "own_lines",
    "parse_message",
]


@dataclass(frozen=True)
class IncomingMail:
    """What the server needs from one incoming message; see ``parse_message``."""

    #: The bare From address with its domain lower-cased (``Alice@example.org``); the envelope
    #: sender when From is missing or unusable; None when neither gives an address.
    sender: str | None
    #: The From header decoded to a readable string, for logs ("" when there is none).
    sender_display: str
    #: The Subject with RFC 2047 encoded-words decoded and whitespace collapsed.
    subject: str
    #: The body reduced to plain text with ``\n`` line ends (see ``parse_message``).
    text: str
    #: The Message-ID with its angle brackets, or None.
    message_id: str | None
    #: Message-IDs from In-Reply-To and References, nearest ancestor first, without repeats.
    references: tuple[str, ...]
    #: Why this message must not be answered, or None when it may be.
    auto_reason: str | None
    #: The addresses it was sent to (To, Cc, Delivered-To, X-Original-To), lower-cased:
    #: where a reply address's tag is read.
    recipients: tuple[str, ...] = ()
    #: The Authentication-Results and Received headers, top to bottom, as
    #: ``("authentication-results", value)`` and ``("received", "")`` pairs: where each
    #: host's verdict stands among the hops (see :mod:`pbmserv.mail.authentication`). It
    #: ends at the tenth Authentication-Results header.
    trace: tuple[tuple[str, str], ...] = ()


def parse_message(
    raw: bytes, envelope_from: str | None = None, own_address: str | None = None
) -> IncomingMail:
    """Decode ``raw`` (one RFC 5322 message) into an ``IncomingMail``; never raises.

    ``envelope_from`` is the SMTP ``MAIL FROM`` address: ``""`` or ``"<>"`` is the null return
    path of a bounce, None means unknown (a message piped in without its envelope; then a
    ``Return-Path: <>`` header marks the bounce). ``own_address`` is the server's address: a
    message from it, or whose ``X-Loop`` header names it, is our own mail coming back. With None
    those checks are skipped (our own mail is still caught by its ``Auto-Submitted`` header).

    The text is the ``text/plain`` alternative in preference to ``text/html``; in other
    multiparts the first text part that is not an attachment; HTML is reduced to text (quoted
    ``<blockquote>`` lines get a ``> `` prefix and ``<hr>`` a rule, so that reply detection works
    on it). Transfer encodings and charsets are decoded; bytes that do not decode are replaced.
    """
    try:
        return _parse(bytes(raw), envelope_from, own_address)
    except Exception:  # a last resort: every step below is guarded already
        return IncomingMail(
            sender=_guard(lambda: _usable_address(envelope_from or ""), None),
            sender_display="",
            subject="",
            text="",
            message_id=None,
            references=(),
            # Whatever could not be read must not be answered: it might be a bounce.
            auto_reason="unreadable message",
        )


def dedupe_key(raw: bytes) -> str:
    """A key (at most 250 characters) that is the same for two deliveries of one message.

    ``mid:<message-id>|<from address>`` when the message has a Message-ID (the sender is part
    of the key so that a stranger reusing someone's Message-ID does not suppress their mail);
    otherwise ``sha256:<hex>`` of the message without the trace headers that each hop adds
    (Received, Return-Path, Delivered-To, DKIM and ARC signatures, spam scores ...), with line
    ends and trailing whitespace normalised. Never raises.
    """
    try:
        data = bytes(raw)
        scan = _guard(lambda: scan_headers(data, _SCANNED), None)
        mid = _scanned_message_id(scan)
        if mid is not None:
            sender = _scanned_from(scan) or ""
            key = f"mid:{mid}|{sender}"
            # PostgreSQL refuses a NUL in text; any control character goes into the hash.
            if len(key) > _MAX_KEY or not key.isprintable():
                key = "mid-sha256:" + _sha256(key.encode("utf-8", "surrogatepass"))
            return key
        return "sha256:" + _sha256(_normalized_for_hash(data))
    except Exception:  # bytes(raw) of something that is not bytes-like; still a stable key
        return "sha256:" + _sha256(repr(raw).encode("utf-8", "replace"))


def header_from_address(raw: bytes) -> str | None:
    """The From address of ``raw``, all lower-case, as ``parse_message`` would choose it but
    read without parsing the message; None when there is none, or when the From field itself
    is over the header limits (such a message is never answered). Never raises."""
    address = _scanned_from(_guard(lambda: scan_headers(bytes(raw), ("from",)), None))
    return address.lower() if address else None


def command_lines(
    subject: str, text: str, is_command: Callable[[str], bool], max_lines: int = 30
) -> list[str]:
    """The command lines of a message (SPEC section 2), at most ``max_lines`` of them.

    The command is the Subject. When the Subject is empty or a reply or forward (``Re:``,
    ``AW:``, ``Sv:``, ``Antw:``, ``Fwd:``, ``Fw:``, stacked or counted like ``Re[2]:``), the
    commands are the body's command lines: stripped, blank lines skipped, quoted lines (``>``)
    and the attribution introducing a quote (``... wrote:``) skipped wherever they stand (the
    commands may come above, below or between quotes), up to a signature separator (``-- ``),
    an Outlook separator (``-----Original Message-----``, a rule of underscores, a ``From:`` /
    ``Sent:`` block), a forwarded-message marker or a mobile signature (``Sent from my ...``).
    Lines that are no command (greetings, sign-offs) are left out when any line is a command;
    with none, they are the lines returned, so that the answer can say what it saw.

    A Subject that ``is_command`` rejects gives way to the body when the body has a line that
    ``is_command`` accepts (someone wrote "hello" in the Subject and the commands below);
    otherwise the Subject is returned alone, so that the server can answer "unknown command".
    """
    if max_lines <= 0:
        return []
    subject = " ".join(subject.split())
    body = _body_lines(text, is_command, max_lines)
    if not subject or REPLY_PREFIX.match(subject):
        return body
    if not is_command(subject) and any(is_command(line) for line in body):
        return body
    return [subject]


# --- parsing -----------------------------------------------------------------------------

# compat32 is the most forgiving policy: it records defects instead of raising and leaves
# header values as they came, which we decode ourselves.
_PARSER = BytesParser(policy=compat32)
_MAX_KEY = 250
# Deeper MIME nesting than this is not a real message; it is not searched for text.
_MAX_DEPTH = 20
# The parser checks every line against each enclosing boundary and recurses per level: a
# message nesting hundreds of multiparts costs it seconds and then a RecursionError. Real
# mail declares a handful of boundaries.
_MAX_BOUNDARIES = 64
# Enough ancestors for threading; a References header can grow without bound.
_MAX_REFERENCES = 50

# The fields ``scan_headers`` collects for us.
_SCANNED = ("from", "message-id")

_T = TypeVar("_T")
_D = TypeVar("_D")


def _guard(step: Callable[[], _T], default: _D) -> _T | _D:
    """Run one decoding step; a broken message makes it give ``default`` instead of raising."""
    try:
        return step()
    except Exception:
        return default


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parse(raw: bytes, envelope_from: str | None, own_address: str | None) -> IncomingMail:
    scan = scan_headers(raw, _SCANNED)
    if scan.problem is not None:
        return _over_limits(scan, envelope_from)
    msg = None
    if raw.lower().count(b"boundary") <= _MAX_BOUNDARIES:
        msg = _guard(lambda: _PARSER.parsebytes(raw), None)
    if msg is None:  # then the body is read as one text, MIME structure and all
        msg = _PARSER.parsebytes(raw, headersonly=True)
    from_raw = _first_header(msg, "from")
    address, from_token = _guard(lambda: _from_address(msg), (None, None))
    envelope = _guard(lambda: _usable_address(envelope_from or ""), None)
    sender = address or envelope
    references = _guard(lambda: _references(msg), ())
    return IncomingMail(
        sender=sender,
        sender_display=_guard(lambda: _one_line(_decode_words(from_raw or "")), ""),
        subject=_guard(lambda: _one_line(_decode_words(_first_header(msg, "subject") or "")), ""),
        text=_guard(lambda: _body_text(msg), ""),
        message_id=_guard(lambda: _message_id(_first_header(msg, "message-id")), None),
        references=references,
        auto_reason=_guard(
            lambda: _auto_reason(msg, sender, from_token, envelope_from, own_address),
            "unreadable headers",
        ),
        recipients=_guard(lambda: _recipients(msg), ()),
        trace=_guard(lambda: _trace(msg), ()),
    )


def _over_limits(scan: HeaderScan, envelope_from: str | None) -> IncomingMail:
    """A message whose header is over the limits: not parsed, and never answered (it is
    hostile or broken; the reason is kept for the operator)."""
    envelope = _guard(lambda: _usable_address(envelope_from or ""), None)
    return IncomingMail(
        sender=_scanned_from(scan) or envelope,
        sender_display="",
        subject="",
        text="",
        message_id=_scanned_message_id(scan),
        references=(),
        auto_reason=f"headers over the limits: {scan.problem}",
    )


# --- headers -----------------------------------------------------------------------------


def _header_values(msg: Message, name: str) -> list[str]:
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
    """The values of header ``name`` that ``scan`` collected, as ``_header_values`` gives them."""
    return [_unfolded(value) for value in scan.values.get(name, [])] if scan else []


def _unfolded(value: bytes) -> str:
    return _UNFOLD.sub(" ", _decode_bytes(value, None)).strip()


def _scanned_from(scan: HeaderScan | None) -> str | None:
    return _guard(lambda: _first_usable(_scanned(scan, "from"))[0], None)


def _scanned_message_id(scan: HeaderScan | None) -> str | None:
    return _guard(lambda: _message_id(next(iter(_scanned(scan, "message-id")), None)), None)


def _first_header(msg: Message, name: str) -> str | None:
    return next(iter(_guard(lambda: _header_values(msg, name), [])), None)


_UNFOLD = re.compile(r"[ \t]*(?:\r\n|\r|\n)[ \t]*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# Invisible characters that some clients scatter in text and that would break a command word.
_INVISIBLE = re.compile("[\u200b\u2060\ufeff]")
_ENCODED_WORD = re.compile(r"=\?([^?\s]+)\?([bBqQ])\?([^?\s]*)\?=")


def _one_line(text: str) -> str:
    return " ".join(_INVISIBLE.sub("", _CONTROL.sub(" ", text)).split())


def _decode_words(text: str) -> str:
    """Decode RFC 2047 encoded-words anywhere in ``text``; undecodable ones stay as written.

    Adjacent encoded-words in one charset are joined as bytes before decoding, since some
    mailers split a multi-byte character across two words; the whitespace between adjacent
    encoded-words is dropped, as RFC 2047 says.
    """
    out: list[str] = []
    run_charset: str | None = None
    run = bytearray()
    pos = 0

    def flush() -> None:
        nonlocal run_charset
        if run_charset is not None:
            out.append(_decode_bytes(bytes(run), run_charset))
            run.clear()
            run_charset = None

    for match in _ENCODED_WORD.finditer(text):
        between = text[pos : match.start()]
        if run_charset is None or between.strip():
            flush()
            out.append(between)
        pos = match.end()
        charset = match.group(1).split("*", 1)[0].lower()  # drop an RFC 2231 language tag
        data = _word_bytes(match.group(2).lower(), match.group(3))
        if data is None:
            flush()
            out.append(match.group(0))
            continue
        if charset != run_charset:
            flush()
            run_charset = charset
        run += data
    flush()
    out.append(text[pos:])
    return "".join(out)


def _word_bytes(encoding: str, encoded: str) -> bytes | None:
    try:
        data = encoded.encode("ascii")
    except UnicodeError:
        return None
    if encoding == "q":
        return binascii.a2b_qp(data, header=True)
    return _b64decode(data)


def _b64decode(data: bytes) -> bytes:
    """Decode base64 as forgivingly as mail readers do: junk characters are skipped, missing
    padding is supplied, and blocks that were padded and then concatenated still decode."""
    out = []
    for chunk in re.split(rb"=+", re.sub(rb"[^A-Za-z0-9+/=]", b"", data)):
        if len(chunk) % 4 == 1:  # one stray character carries no whole byte
            chunk = chunk[:-1]
        if chunk:
            with contextlib.suppress(binascii.Error):
                out.append(binascii.a2b_base64(chunk + b"=" * (-len(chunk) % 4)))
    return b"".join(out)


# --- charsets ----------------------------------------------------------------------------

# Labels mail uses that Python does not know, or knows as a narrower charset than the one
# mailers actually send under that label (as the WHATWG encoding standard maps them).
_CHARSET_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "iso_8859-1": "cp1252",
    "windows-874": "cp874",
    "x-mac-roman": "mac-roman",
    "macintosh": "mac-roman",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "ms_kanji": "cp932",
    "windows-31j": "cp932",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "euc-cn": "gb18030",
    "ks_c_5601-1987": "cp949",
    "euc-kr": "cp949",
    "big5": "cp950",
    "iso-8859-8-i": "iso-8859-8",
    "iso-8859-6-i": "iso-8859-6",
}
# Codecs Python knows that are not charsets a message may declare.
_NOT_CHARSETS = frozenset(
    {"idna", "punycode", "raw-unicode-escape", "unicode-escape", "undefined", "mbcs", "oem"}
)
_ASCII = "ascii"


def _codec(charset: str | None) -> str | None:
    """The Python codec for a declared charset, or None when unknown, bogus or not declared."""
    if not charset:
        return None
    label = charset.strip().strip("\"'").lower()
    label = _CHARSET_ALIASES.get(label, label)
    try:
        info = codecs.lookup(label)
    except (LookupError, ValueError, TypeError):  # "utf-9", "x-unknown", a NUL in the name
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in _NOT_CHARSETS:
        return None  # base64, zlib, unicode-escape ...: named like codecs, not text
    return info.name


def _decode_bytes(data: bytes, charset: str | None) -> str:
    """Decode ``data`` in its declared charset; never raises.

    A missing, unknown or ASCII charset is tried as UTF-8 (the usual truth behind 8-bit bytes
    that claim nothing), then as cp1252. A real charset that does not fit has its bad bytes
    replaced.
    """
    codec = _codec(charset)
    if codec is not None:
        try:
            return data.decode(codec)
        except Exception:  # UnicodeError, and whatever an exotic codec raises
            pass
    if codec is None or codec == _ASCII:
        try:
            return data.decode("utf-8")
        except UnicodeError:
            return data.decode("cp1252", "replace")
    try:
        return data.decode(codec, "replace")
    except Exception:
        return data.decode("latin-1")


# --- addresses ---------------------------------------------------------------------------

# What may not appear in a bare address we answer to (the local part may be quoted, but
# addresses with spaces or brackets in them are not worth the risk of answering).
_ADDRESS_BAD = re.compile(r"[\s<>()\[\],;\\\"\x00-\x1f\x7f]")
_DOMAIN = re.compile(r"[^\s@<>()\[\],;:\\\"\x00-\x1f\x7f]+|\[[^\[\]\s\\]+\]")


def _usable_address(text: str) -> str | None:
    """``text`` as a bare address with its domain lower-cased, or None if it is not one."""
    address = text.strip().removeprefix("<").removesuffix(">").strip()
    local, at, domain = address.rpartition("@")
    if not at or not local or len(address) > 254 or _ADDRESS_BAD.search(local):
        return None
    if not _DOMAIN.fullmatch(domain) or domain.startswith(".") or domain.endswith("."):
        return None
    return f"{local}@{domain.lower()}"


def _from_address(msg: Message) -> tuple[str | None, str | None]:
    """The first usable From address, and the first address-like token of From even when it
    is not usable (``MAILER-DAEMON`` without a domain is still a mailer daemon)."""
    return _first_usable(_header_values(msg, "from"))


def _first_usable(values: list[str]) -> tuple[str | None, str | None]:
    """``_from_address`` of the From field values ``values``."""
    if not values:
        return None, None
    pairs = [pair for pair in _guard(lambda: getaddresses(values), []) if pair[1]]
    token = pairs[0][1] if pairs else None
    for _name, candidate in pairs:
        address = _usable_address(candidate)
        if address:
            return address, token
    # getaddresses gave up (unbalanced quotes and the like): any <user@host> will do.
    for candidate in re.findall(r"<([^<>]*)>", values[0]):
        address = _usable_address(candidate)
        if address:
            return address, token or address
    return None, token


_RECIPIENT_HEADERS = ("to", "cc", "delivered-to", "x-original-to")
_MAX_RECIPIENTS = 50
_MAX_AUTH_RESULTS = 10


def _recipients(msg: Message) -> tuple[str, ...]:
    values = [v for name in _RECIPIENT_HEADERS for v in _header_values(msg, name)]
    found = []
    for _name, candidate in getaddresses(values)[: _MAX_RECIPIENTS * 2]:
        address = _usable_address(candidate)
        if address:
            found.append(address.lower())
    return tuple(dict.fromkeys(found))[:_MAX_RECIPIENTS]


def _trace(msg: Message) -> tuple[tuple[str, str], ...]:
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


def _local_part(address: str | None) -> str:
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


def _message_id(value: str | None) -> str | None:
    if not value:
        return None
    ids = _message_ids(value)
    if ids:
        return ids[0]
    # Some mailers leave out the brackets.
    token = value.split()[0].strip("<>") if value.split() else ""
    return f"<{token}>" if token else None


def _references(msg: Message) -> tuple[str, ...]:
    found: list[str] = []
    for value in _header_values(msg, "in-reply-to"):
        found.extend(_message_ids(value))
    # References lists the oldest ancestor first; we want the nearest first.
    for value in _header_values(msg, "references"):
        found.extend(reversed(_message_ids(value)))
    return tuple(dict.fromkeys(found))[:_MAX_REFERENCES]


# --- when not to answer ------------------------------------------------------------------

_DAEMONS = frozenset({"mailer-daemon", "postmaster"})
# bulk, junk, list: SPEC 2; auto_reply: what some old vacation programs set.
_PRECEDENCE_AUTO = frozenset({"bulk", "junk", "list", "auto_reply"})
# X-Auto-Response-Suppress is deliberately absent: Outlook sets it on ordinary mail.
_AUTORESPONDER_HEADERS = ("x-autoreply", "x-autorespond", "x-autogenerated", "x-mail-autoreply")
_REPORT_TYPES = frozenset({"multipart/report", "message/delivery-status"})


def _token(value: str) -> str:
    """The first word of a structured header value, comments and parameters removed."""
    value = re.sub(r"\([^()]*\)", " ", value).split(";", 1)[0]
    return value.strip().lower()


def _auto_reason(
    msg: Message,
    sender: str | None,
    from_token: str | None,
    envelope_from: str | None,
    own_address: str | None,
) -> str | None:
    if envelope_from is not None:
        if "".join(envelope_from.split()) in ("", "<>"):
            return "null return path"
    else:
        return_path = _first_header(msg, "return-path")
        if return_path is not None and "".join(return_path.split()) in ("", "<>"):
            return "null return path (Return-Path: <>)"
    for who in (from_token, envelope_from):
        if _local_part(who) in _DAEMONS:
            return f"from {_local_part(who)}"
    ctype = _guard(msg.get_content_type, "text/plain")
    if ctype in _REPORT_TYPES:
        return f"delivery report ({ctype})"
    for value in _header_values(msg, "auto-submitted"):
        if _token(value) != "no":
            return f"Auto-Submitted: {_token(value) or 'present'}"
    for value in _header_values(msg, "precedence"):
        if _token(value) in _PRECEDENCE_AUTO:
            return f"Precedence: {_token(value)}"
    own = _guard(lambda: _usable_address(parseaddr(own_address or "")[1]), None)
    if own:
        if sender is not None and sender.lower() == own.lower():
            return "from our own address"
        for value in _header_values(msg, "x-loop"):
            if own.lower() in value.lower():
                return f"X-Loop: {own}"
    for name in _AUTORESPONDER_HEADERS:
        if _header_values(msg, name):
            return f"auto-responder ({name})"
    if sender is None:
        return "no sender address"
    return None


# --- body --------------------------------------------------------------------------------


def _body_text(msg: Message) -> str:
    found = _find_text(msg, 0)
    return found[0] if found else ""


def _find_text(part: Message, depth: int) -> tuple[str, bool] | None:
    """The readable text of ``part`` and whether it came from HTML, or None if it has none."""
    if depth > _MAX_DEPTH:
        return None
    ctype = _guard(part.get_content_type, "text/plain")
    if depth and _guard(part.get_content_disposition, None) == "attachment":
        return None
    if part.is_multipart():
        if ctype.startswith("message/"):
            return None  # a forwarded or bounced message: not the sender's own words
        children = [c for c in _guard(part.get_payload, []) if isinstance(c, Message)]
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
        return _html_to_text(_leaf_text(part, html=True)), True
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
    value = _guard(lambda: part.get_param(name), None)
    if isinstance(value, tuple):  # RFC 2231 (charset, language, value)
        encoded = value
        value = _guard(lambda: collapse_rfc2231_value(encoded), None)
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
    cte = _token(_first_header(part, "content-transfer-encoding") or "")
    if cte == "base64":
        data = _b64decode(data)
    elif cte == "quoted-printable":
        data = binascii.a2b_qp(data)
    charset = _guard(part.get_content_charset, None)
    if charset is None and html:
        sniffed = _META_CHARSET.search(data[:4096])
        charset = sniffed.group(1).decode("ascii") if sniffed else None
    return _normalize_text(_decode_bytes(data, charset))


def _normalize_text(text: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _INVISIBLE.sub("", text)
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


class _HtmlText:
    """Reduces HTML to its visible text, as lines.

    A small scanner of its own rather than ``html.parser``: that one takes quadratic time on
    markup like ``<a <a <a ...`` (minutes for a 100 kB body), which anyone could mail us.
    Every step below moves forward through the markup, so the time is linear.
    """

    _HIDDEN = frozenset({"head", "title", "template"})
    _HEAD_CONTENT = frozenset({"title", "meta", "link", "base", "template", "html", "head"})
    _RAW = frozenset({"script", "style"})  # their content is not markup: skip to the end tag
    _BLOCKS = frozenset(
        {
            *("address", "article", "aside", "blockquote", "caption", "center", "dd", "div"),
            *("dl", "dt", "fieldset", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5"),
            *("h6", "header", "li", "main", "nav", "ol", "p", "pre", "section", "table"),
            *("tbody", "tfoot", "thead", "tr", "ul"),
        }
    )
    # Outlook puts a rule above the quoted message; as text it becomes Outlook's separator.
    RULE = "_" * 32
    _TAG = re.compile(r"(/?)([A-Za-z][A-Za-z0-9:-]*)")

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._current: list[str] = []
        self._hidden: list[str] = []
        self._quote = 0
        self._pre = 0

    def feed(self, markup: str) -> None:
        pos, size = 0, len(markup)
        next_gt = -1  # the first ">" at or after the current "<", found once per stretch
        while pos < size:
            lt = markup.find("<", pos)
            if lt < 0:
                self._data(markup[pos:])
                return
            self._data(markup[pos:lt])
            if markup.startswith("<!--", lt):
                end = markup.find("-->", lt + 4)
                if end < 0:
                    return  # an unclosed comment runs to the end
                pos = end + 3
                continue
            after = markup[lt + 1 : lt + 2]
            if not (after.isascii() and (after.isalpha() or after in "/!?")):
                self._data("<")  # "a < b", "<3": a plain "<", as browsers show it
                pos = lt + 1
                continue
            if next_gt < lt:
                next_gt = markup.find(">", lt)
                if next_gt < 0:
                    return  # a tag cut off at the end: browsers show nothing of it
            pos = next_gt + 1
            tag = self._TAG.match(markup, lt + 1, next_gt)
            if tag is None:
                continue  # <!DOCTYPE>, <?xml?>, "< " ...: nothing to show
            name = tag.group(2).lower()
            if tag.group(1):
                self._end(name)
            elif name in self._RAW:
                if markup[next_gt - 1] == "/":
                    continue  # <script/> has no content
                close = re.compile(rf"</{name}\b", re.IGNORECASE).search(markup, pos)
                if close is None:
                    return
                pos = close.start()
            else:
                self._start(name)

    def _start(self, tag: str) -> None:
        if "head" in self._hidden and tag not in self._HEAD_CONTENT:
            self._hidden.clear()  # body content closes an unclosed <head>, as in browsers
        if tag in self._HIDDEN:
            self._hidden.append(tag)
        elif tag == "br":
            self._line_break()
        elif tag == "hr":
            self._flush()
            self.lines.append(self.RULE)
        elif tag in ("td", "th"):
            self._current.append(" ")
        elif tag in self._BLOCKS:
            self._flush()
            self._quote += tag == "blockquote"
            self._pre += tag == "pre"

    def _end(self, tag: str) -> None:
        if tag in self._hidden:
            while self._hidden and self._hidden.pop() != tag:
                pass
        elif tag in self._BLOCKS:
            self._flush()
            if tag == "blockquote":
                self._quote = max(0, self._quote - 1)
            elif tag == "pre":
                self._pre = max(0, self._pre - 1)
            elif tag == "p":
                self.lines.append("")

    def _data(self, data: str) -> None:
        if self._hidden or not data:
            return
        data = html.unescape(data)
        if not self._pre:
            self._current.append(data)
            return
        first, *rest = data.split("\n")
        self._current.append(first)
        for piece in rest:
            self._line_break()
            self._current.append(piece)

    def _line_break(self) -> None:
        if not self._flush():
            self.lines.append("> " * self._quote)

    def _flush(self) -> bool:
        text = "".join(self._current)
        self._current = []
        text = text.rstrip() if self._pre else " ".join(text.split())
        if not text.strip():
            return False
        self.lines.append("> " * self._quote + text)
        return True

    def text(self) -> str:
        self._flush()
        joined = "\n".join(line.rstrip() for line in self.lines)
        return re.sub(r"\n{3,}", "\n\n", joined).strip("\n")


def _html_to_text(markup: str) -> str:
    parser = _HtmlText()
    parser.feed(markup)
    return parser.text()


# --- command lines -----------------------------------------------------------------------

REPLY_PREFIX = re.compile(
    r"(?:re|aw|sv|vs|antw|odp|fwd?|wg|tr|rv)\s*(?:\[\d+\]|\(\d+\))?\s*:", re.IGNORECASE
)
# "On <date>, <name> wrote:", "Am <date> schrieb <name>:", "Le <date>, <name> a écrit :" ...:
# the verb may stand anywhere in a line that ends with a colon.
_ATTRIBUTION_VERB = re.compile(
    r"\b(?:wrote|writes|schrieb|a\s+écrit|escribió|escreveu|ha\s+scritto|skrev|schreef"
    r"|napisał|kirjoitti|написал|написала)\b",
    re.IGNORECASE,
)
_UNDERSCORE_RULE = re.compile(r"_{10,}")
_OUTLOOK_FROM = re.compile(r"(?:from|von|de|fra|van|od|da)\s*:\s*\S", re.IGNORECASE)
_OUTLOOK_SENT = re.compile(
    r"(?:sent|date|gesendet|datum|envoyé|enviado|sendt|verzonden|inviato|data|wysłano)\s*:",
    re.IGNORECASE,
)
# Signatures phones add below what was typed; they are never commands.
_MOBILE_SIGNATURE = re.compile(
    r"(?:sent from my|get outlook for|von meinem\s.*\sgesendet|envoyé de mon)\b.*", re.IGNORECASE
)
_PGP_SIGNED = "-----BEGIN PGP SIGNED MESSAGE-----"


def _is_attribution(line: str) -> bool:
    return line.endswith(":") and _ATTRIBUTION_VERB.search(line) is not None


def _next_text(lines: list[str], start: int) -> str | None:
    return next((line for line in lines[start:] if line), None)


def _ends_commands(lines: list[str], index: int) -> bool:
    """Whether nothing from ``lines[index]`` on is the sender's own writing: a signature, or
    an original or forwarded message below its separator (lines are stripped)."""
    line = lines[index]
    if _UNDERSCORE_RULE.fullmatch(line):
        return True
    # "-- " (stripped to "--"), rules of dashes, "-----Original Message-----",
    # "---------- Forwarded message ---------", "-----BEGIN PGP SIGNATURE-----"
    if line.startswith("--") and line.endswith("--"):
        return True
    if _MOBILE_SIGNATURE.fullmatch(line) or line.lower() == "begin forwarded message:":
        return True
    after = _next_text(lines, index + 1)
    return bool(_OUTLOOK_FROM.match(line) and after and _OUTLOOK_SENT.match(after))


def _is_quoted(lines: list[str], index: int) -> bool:
    """A quoted line, or the attribution that introduces a quote: someone else's words, which
    the sender may write above, below or between (top, bottom and inline posting)."""
    line = lines[index]
    if line.startswith(">"):
        return True
    after = _next_text(lines, index + 1)
    return _is_attribution(line) and (after is None or after.startswith(">"))


def own_lines(text: str, max_lines: int = 30) -> list[str]:
    """The sender's own non-blank lines of a body, stripped, in order, at most ``max_lines``:
    not quoted, not an attribution, nothing from a signature or forwarded original on (see
    :func:`command_lines`)."""
    found: list[str] = []
    for line in _own_lines(text):
        if len(found) >= max_lines:
            break
        found.append(line)
    return found


def _own_lines(text: str) -> Iterator[str]:
    lines = [_INVISIBLE.sub("", line).strip() for line in text.splitlines()]
    in_pgp = armor_headers = False
    for index, line in enumerate(lines):
        if not line:
            armor_headers = False
            continue
        if armor_headers:  # "Hash: SHA256" between the PGP header and the blank line
            continue
        if line == _PGP_SIGNED:
            in_pgp = armor_headers = True
            continue
        if in_pgp and line.startswith("- "):
            line = line[2:]  # PGP dash-escaping
        if _ends_commands(lines, index):
            return
        if not _is_quoted(lines, index):
            yield line


def _body_lines(text: str, is_command: Callable[[str], bool], max_lines: int) -> list[str]:
    """The sender's command lines: every line of their own that is a command. Their other
    lines (a greeting, a sign-off) count only when there is no command at all, so that the
    answer can say what it saw."""
    commands: list[str] = []
    others: list[str] = []
    for line in _own_lines(text):
        if len(commands) >= max_lines:
            break
        if is_command(line):
            commands.append(line)
        elif len(others) < max_lines:
            others.append(line)
    return commands or others


# --- content hash ------------------------------------------------------------------------

# Headers each hop adds or rewrites on the way (and mbox bookkeeping): not part of the message.
_TRACE_HEADER = re.compile(
    rb"received|x-received|return-path|(?:x-)?delivered-to|x-original-to|envelope-to"
    rb"|x-envelope-(?:from|to)|x-rcpt-to|(?:x-google-)?dkim-signature|domainkey-signature"
    rb"|(?:x-original-)?authentication-results|received-spf|(?:x-)?status|x-uid|x-keywords"
    rb"|lines|content-length|(?:arc-|x-spam|x-virus|x-ms-exchange-|x-forefront-"
    rb"|x-microsoft-antispam|x-rspamd).*",
    re.IGNORECASE,
)
_FIELD = re.compile(rb"([!-9;-~]+)[ \t]*:(.*)", re.DOTALL)


def _normalized_for_hash(raw: bytes) -> bytes:
    """The message without what delivery changes: trace headers, the mbox ``From `` line,
    header order and folding, line ends and trailing whitespace."""
    lines = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    if lines and lines[0].startswith(b"From "):
        lines = lines[1:]
    end = lines.index(b"") if b"" in lines else len(lines)
    fields: list[list[bytes]] = []
    for line in lines[:end]:
        if line[:1] in (b" ", b"\t") and fields:
            fields[-1].append(line.strip())
        else:
            fields.append([line.strip()])
    kept = []
    for field in (b" ".join(pieces) for pieces in fields):
        match = _FIELD.fullmatch(field)
        if match is None:
            kept.append(field)
        elif not _TRACE_HEADER.fullmatch(match.group(1)):
            kept.append(match.group(1).lower() + b":" + b" ".join(match.group(2).split()))
    body = [line.rstrip() for line in lines[end + 1 :]]
    while body and not body[-1]:
        body.pop()
    return b"\n".join(sorted(kept)) + b"\n\n" + b"\n".join(body)
