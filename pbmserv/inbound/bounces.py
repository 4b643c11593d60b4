"""Delivery reports (bounces): what one says about the mail it reports on. Pure: no database.

A report comes to one of the server's bounce addresses (``pbmserv+bounce-ID-MAC@host``, the
SMTP ``MAIL FROM`` of every mail it sends; see :mod:`pbmserv.core.accounts.bouncing`). Most MTAs
write RFC 3464 reports: a ``multipart/report; report-type=delivery-status`` whose
``message/delivery-status`` part has a block of fields for each recipient (Final-Recipient,
Action, Status, Diagnostic-Code). Those are read here with the standard library; the others
(Exim's classic bounce, qmail's, ...) are left to ``flufl.bounce``'s detectors, which say only
which addresses failed for good and which for now.

A failure is *permanent* (a hard bounce) when the MTA gave up on the recipient with a 5.x.x
status, or said ``Action: failed`` with no status at all, or ``flufl.bounce`` calls it
permanent. A 4.x.x status, or ``Action: delayed``, is temporary, even when the MTA gave up after
days of trying (4.4.7): the address may well work tomorrow.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from email.message import Message
from email.parser import BytesParser
from email.policy import compat32

from flufl.bounce import all_failures

from pbmserv.core.accounts.delivery_reports import MAX_DIAGNOSTIC, DeliveryReport, RecipientStatus
from pbmserv.core.parser import printable

log = logging.getLogger("pbmserv.bounces")
# flufl.bounce names every detector it runs at INFO: seventeen lines a report.
logging.getLogger("flufl.bounce").setLevel(logging.WARNING)

#: The tags of the bounce addresses (``bounce-ID-MAC``) begin so.
TAG_PREFIX = "bounce-"
#: Recipients read of one report at most, and characters of one diagnostic.
MAX_RECIPIENTS = 20

_STATUS = re.compile(r"\b([245])\.(\d{1,3})\.(\d{1,3})\b")
# An SMTP reply in running text: "550 5.1.1 <bob@...>: ..." or "550-5.1.1 The email ...".
_SMTP_REPLY = re.compile(r"\b([45]\d\d)[ -](?:#?([45]\.\d{1,3}\.\d{1,3})\b)?")
_FINAL_ACTIONS = frozenset({"failed", "delayed", "delivered", "relayed", "expanded"})
_REPORT_PARTS = frozenset({"message/delivery-status", "message/global-delivery-status"})


def bounce_tags(recipients: Iterable[str], server_address: str) -> list[str]:
    """The tags (``bounce-ID-MAC``) of the server's bounce addresses among ``recipients``
    (lower-cased addresses, as :class:`pbmserv.inbound.reading.decode.IncomingMail` has them)."""
    local, _at, domain = server_address.lower().rpartition("@")
    tags = []
    for address in recipients:
        their_local, _at, their_domain = address.lower().rpartition("@")
        base, plus, tag = their_local.partition("+")
        if plus and base == local and their_domain == domain and tag.startswith(TAG_PREFIX):
            tags.append(tag)
    return tags


def parse_report(raw: bytes) -> DeliveryReport | None:
    """The delivery report ``raw`` is, or None when it reports no recipient (an auto-reply, a
    person's mail, something unreadable). Never raises."""
    try:
        message = BytesParser(policy=compat32).parsebytes(raw)
    except Exception:  # the parser is lenient; this is a last resort
        log.warning("a message to a bounce address could not be parsed")
        return None
    try:
        found = _rfc3464(message)
    except Exception:
        log.exception("could not read a delivery-status part")
        found = []
    if found:
        return DeliveryReport(tuple(found[:MAX_RECIPIENTS]), "rfc3464")
    return _flufl(message)


# --- RFC 3464 ------------------------------------------------------------------------------


def _parts(message: Message, depth: int = 0) -> Iterator[Message]:
    """The message and its parts, down through multiparts only: a report quoted inside the
    returned message (message/rfc822) is not this report."""
    yield message
    if depth < 5 and message.is_multipart() and message.get_content_maintype() == "multipart":
        for part in message.get_payload():
            if isinstance(part, Message):
                yield from _parts(part, depth + 1)


def _rfc3464(message: Message) -> list[RecipientStatus]:
    found: list[RecipientStatus] = []
    for part in _parts(message):
        if part.get_content_type() in _REPORT_PARTS:
            found += [_recipient(block) for block in _blocks(part) if _is_recipient(block)]
    return found


def _blocks(part: Message) -> list[dict[str, str]]:
    """The field blocks of a delivery-status part, as lower-cased name -> unfolded value."""
    payload = part.get_payload()
    if not isinstance(payload, list):
        data = part.get_payload(decode=True)
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(payload)
        return _text_blocks(text)
    # message/delivery-status: the parser made a message of each block; any other message/*
    # (global-delivery-status, RFC 6533) is one message: the first block, the rest its body.
    blocks = []
    for block in payload:
        if isinstance(block, Message):
            blocks.append({str(k).lower(): _unfold(_utf8(v)) for k, v in block.raw_items()})
            rest = block.get_payload()
            if isinstance(rest, str) and rest.strip():
                blocks += _text_blocks(_utf8(rest))
    return blocks


def _utf8(value: object) -> str:
    """A raw header value as the parser keeps it (bytes beyond ASCII as surrogates) as text."""
    text = str(value)
    try:
        return text.encode("ascii", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # decoded already
        return text


def _text_blocks(text: str) -> list[dict[str, str]]:
    blocks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    name = ""
    for line in text.replace("\r\n", "\n").split("\n"):
        if not line.strip():
            if current:
                blocks.append(current)
            current, name = {}, ""
        elif line[:1] in (" ", "\t") and name:
            current[name] += " " + line.strip()
        elif ":" in line:
            name, _colon, value = line.partition(":")
            name = name.strip().lower()
            current[name] = value.strip()
    if current:
        blocks.append(current)
    return blocks


def _unfold(value: str) -> str:
    return " ".join(value.split())


def _is_recipient(block: dict[str, str]) -> bool:
    return "final-recipient" in block or "action" in block


def _typed_value(value: str) -> str:
    """``rfc822; bob@example.org`` -> ``bob@example.org``; ``smtp; 550 ...`` -> ``550 ...``."""
    kind, semicolon, rest = value.partition(";")
    return rest.strip() if semicolon and " " not in kind.strip() else value.strip()


def _recipient(block: dict[str, str]) -> RecipientStatus:
    action = block.get("action", "").strip().lower().split(" ")[0]
    action = action if action in _FINAL_ACTIONS else ""
    diagnostic = _clean(_typed_value(block.get("diagnostic-code", "")))
    match = _STATUS.search(block.get("status", "")) or _STATUS.search(diagnostic)
    status = match.group(0) if match else ""
    if action == "failed":
        permanent = not status.startswith("4")
    else:
        permanent = action == "" and status.startswith("5")
    address = _typed_value(block.get("final-recipient") or block.get("original-recipient", ""))
    return RecipientStatus(
        recipient=_clean(address.strip("<>")).lower()[:320],
        action=action,
        status=status,
        diagnostic=diagnostic,
        permanent=permanent,
    )


def _clean(text: str) -> str:
    """One printable line, at most MAX_DIAGNOSTIC characters."""
    return " ".join(printable(text).split())[:MAX_DIAGNOSTIC]


# --- other forms: flufl.bounce ---------------------------------------------------------------


def _flufl(message: Message) -> DeliveryReport | None:
    try:
        temporary, permanent = all_failures(message)
    except Exception:  # a detector that trips over an odd message: no report then
        log.warning("flufl.bounce could not read a message to a bounce address")
        return None
    if not temporary and not permanent:
        return None
    reply = _smtp_reply(_first_text(message))
    found = [_flufl_recipient(address, reply, permanent=True) for address in sorted(permanent)] + [
        _flufl_recipient(address, reply, permanent=False) for address in sorted(temporary)
    ]
    return DeliveryReport(tuple(found[:MAX_RECIPIENTS]), "flufl")


def _flufl_recipient(address: bytes, reply: tuple[str, str], *, permanent: bool) -> RecipientStatus:
    status, diagnostic = reply
    if status and status.startswith("5") != permanent:
        status = ""  # the detector's word stands; a status that says otherwise is left out
    return RecipientStatus(
        recipient=_clean(address.decode("ascii", "replace")).lower()[:320],
        action="failed" if permanent else "delayed",
        status=status,
        diagnostic=diagnostic,
        permanent=permanent,
    )


def _first_text(message: Message) -> str:
    """The first text/plain of the report itself (not of the returned message)."""
    for part in _parts(message):
        if part.get_content_type() == "text/plain":
            data = part.get_payload(decode=True)
            if isinstance(data, bytes):
                charset = part.get_content_charset() or "utf-8"
                try:
                    return data.decode(charset, "replace")
                except LookupError:
                    return data.decode("utf-8", "replace")
    return ""


def _smtp_reply(text: str) -> tuple[str, str]:
    """The enhanced status and the line of the first SMTP error reply quoted in ``text``,
    above the copy of the returned message; else of the first line with an enhanced status
    (qmail's "Sorry, no mailbox here by that name. (#5.1.1)")."""
    lines = []
    for line in text.splitlines():
        if line.startswith("---") or "copy of the message" in line.lower():
            break
        lines.append(line)
    for line in lines:
        match = _SMTP_REPLY.search(line)
        if match:
            return match.group(2) or "", _clean(line)
    for line in lines:
        status = _STATUS.search(line)
        if status:
            return status.group(0), _clean(line)
    return "", ""
