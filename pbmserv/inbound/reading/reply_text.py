"""What a reply says in its own words: the ``Re:`` / ``Fwd:`` subject prefixes, and the lines
of a body that the sender wrote (not quoted, not an attribution, nothing from a signature or
a forwarded original on)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from pbmserv.inbound.reading.charsets import INVISIBLE

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


# mutt's "* pbmserv <pbmserv@localhost> [261126 16:44]:" and the like: an address, then a colon.
_ATTRIBUTION_ADDRESS = re.compile(r"[^\s<>@]+@[^\s<>@]+")


def _is_attribution(line: str) -> bool:
    """A line that introduces a quote (the caller checks a quote follows): it ends with a
    colon and has a verb of writing, or names an address (no move has an @ in it)."""
    if not line.endswith(":"):
        return False
    return bool(_ATTRIBUTION_VERB.search(line) or _ATTRIBUTION_ADDRESS.search(line))


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
    :func:`pbmserv.inbound.reading.decode.command_lines`)."""
    found: list[str] = []
    for line in _own_lines(text):
        if len(found) >= max_lines:
            break
        found.append(line)
    return found


def _own_lines(text: str) -> Iterator[str]:
    lines = [INVISIBLE.sub("", line).strip() for line in text.splitlines()]
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


def body_lines(text: str, is_command: Callable[[str], bool], max_lines: int) -> list[str]:
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
