"""The Subject of our answer to a message: the message's own, made safe to quote (no secret
of a command line in it) and prefixed once with ``Re:`` however long the exchange."""

from __future__ import annotations

from collections.abc import Sequence

from pbmserv.core.dispatch import is_command, quote
from pbmserv.core.parser import printable
from pbmserv.inbound.reading.reply_text import REPLY_PREFIX
from pbmserv.outbound import headers


def reply_subject(original: str) -> str:
    """``Re: `` and the subject without the reply and forward prefixes it gathered on its way
    (``Re: AW: Re[2]: x`` becomes ``Re: x``): one prefix, however long the exchange."""
    original = headers.safe_text(printable(original))
    while (prefix := REPLY_PREFIX.match(original)) is not None:
        original = original[prefix.end() :].lstrip()
    return f"Re: {original}" if original else "Re: your message to pbmserv"


def quoted_subject(subject: str, lines: Sequence[str]) -> str:
    """The Subject to answer under, with nothing in it that could be a secret: a command is
    quoted as dispatch quotes it; a reply's subject (most likely one of ours) stays; other
    text shows its first words only."""
    if lines == [subject] or is_command(subject):
        return quote(subject)
    if REPLY_PREFIX.match(subject):
        return subject
    words = subject.split()
    return " ".join(words[:2]) + (" ..." if len(words) > 2 else "")
