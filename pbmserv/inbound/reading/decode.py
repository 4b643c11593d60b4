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

The pieces live beside it: ``charsets`` (encoded-words and charsets), ``header_values``
(addresses, recipients, trace, Message-IDs), ``automatic`` (when not to answer), ``body_text``
and ``html_text`` (the body as text), ``reply_text`` (a reply's own lines) and ``guard``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import compat32

from pbmserv.inbound.reading.automatic import auto_reason
from pbmserv.inbound.reading.body_text import body_text
from pbmserv.inbound.reading.charsets import decode_words, one_line
from pbmserv.inbound.reading.guard import guard
from pbmserv.inbound.reading.header_values import (
    first_header,
    from_address,
    message_id,
    recipients,
    references,
    scanned_from,
    scanned_message_id,
    trace,
    usable_address,
)
from pbmserv.inbound.reading.rawheaders import HeaderScan, scan_headers
from pbmserv.inbound.reading.reply_text import REPLY_PREFIX, body_lines

__all__ = [
    "IncomingMail",
    "command_lines",
    "dedupe_key",
    "header_from_address",
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
    #: host's verdict stands among the hops (see :mod:`pbmserv.inbound.authentication`). It
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
            sender=guard(lambda: usable_address(envelope_from or ""), None),
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
        scan = guard(lambda: scan_headers(data, _SCANNED), None)
        mid = scanned_message_id(scan)
        if mid is not None:
            sender = scanned_from(scan) or ""
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
    address = scanned_from(guard(lambda: scan_headers(bytes(raw), ("from",)), None))
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
    body = body_lines(text, is_command, max_lines)
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
# The parser checks every line against each enclosing boundary and recurses per level: a
# message nesting hundreds of multiparts costs it seconds and then a RecursionError. Real
# mail declares a handful of boundaries.
_MAX_BOUNDARIES = 64

# The fields ``scan_headers`` collects for us.
_SCANNED = ("from", "message-id")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _parse(raw: bytes, envelope_from: str | None, own_address: str | None) -> IncomingMail:
    scan = scan_headers(raw, _SCANNED)
    if scan.problem is not None:
        return _over_limits(scan, envelope_from)
    msg = None
    if raw.lower().count(b"boundary") <= _MAX_BOUNDARIES:
        msg = guard(lambda: _PARSER.parsebytes(raw), None)
    if msg is None:  # then the body is read as one text, MIME structure and all
        msg = _PARSER.parsebytes(raw, headersonly=True)
    from_raw = first_header(msg, "from")
    address, from_token = guard(lambda: from_address(msg), (None, None))
    envelope = guard(lambda: usable_address(envelope_from or ""), None)
    sender = address or envelope
    return IncomingMail(
        sender=sender,
        sender_display=guard(lambda: one_line(decode_words(from_raw or "")), ""),
        subject=guard(lambda: one_line(decode_words(first_header(msg, "subject") or "")), ""),
        text=guard(lambda: body_text(msg), ""),
        message_id=guard(lambda: message_id(first_header(msg, "message-id")), None),
        references=guard(lambda: references(msg), ()),
        auto_reason=guard(
            lambda: auto_reason(msg, sender, from_token, envelope_from, own_address),
            "unreadable headers",
        ),
        recipients=guard(lambda: recipients(msg), ()),
        trace=guard(lambda: trace(msg), ()),
    )


def _over_limits(scan: HeaderScan, envelope_from: str | None) -> IncomingMail:
    """A message whose header is over the limits: not parsed, and never answered (it is
    hostile or broken; the reason is kept for the operator)."""
    envelope = guard(lambda: usable_address(envelope_from or ""), None)
    return IncomingMail(
        sender=scanned_from(scan) or envelope,
        sender_display="",
        subject="",
        text="",
        message_id=scanned_message_id(scan),
        references=(),
        auto_reason=f"headers over the limits: {scan.problem}",
    )


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
