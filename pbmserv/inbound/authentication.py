"""What the receiving MTA found out about a message's sender, read from the
Authentication-Results headers (RFC 8601) that a trusted host wrote.

Anyone can write an Authentication-Results header into the mail they send, naming any host
at all, so only the headers the receiving MTA added count: the topmost one whose authserv-id
is trusted, and the trusted ones right below it with no Received header between (an MTA and
its milters put theirs together on top; whatever the sender wrote sits below the MTA's
Received). The MTA should still remove such headers arriving from outside (RFC 8601 section
5): where it puts its own below its Received, a forged one could sit right under it.

The counted headers are parsed whole, comments and quoted strings included, by the
``authres`` package, so that ``dmarc=pass`` inside a comment or a quoted local part is never
read as a result. A domain matches the From domain when their organisational domains (DMARC's
relaxed alignment, from the Public Suffix List shipped with ``publicsuffixlist``) are the
same: ``mail.example.co.uk`` for ``example.co.uk``, but never ``co.uk`` itself.

Pure: no I/O, no logging, and ``mta_verdict`` never raises.
"""

from __future__ import annotations

import functools
import re
import types
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import authres  # type: ignore[import-untyped]
import authres.core  # type: ignore[import-untyped]
from publicsuffixlist import PublicSuffixList

from pbmserv.inbound.reading.decode import IncomingMail

__all__ = ["Verdict", "mta_verdict", "trusted_ids"]


class Verdict(StrEnum):
    """The receiving MTA's word on a message's From address."""

    #: No trusted authserv-ids are configured: there is nothing to go on.
    UNCHECKED = "unchecked"
    #: The counted headers say ``dmarc=pass`` for the From domain, or ``dkim=pass`` or
    #: ``spf=pass`` for a domain aligned with it, and none says ``dmarc=fail``.
    PASS = "pass"
    #: A counted header says ``dmarc=fail`` for the From domain.
    FAIL = "fail"
    #: No trusted host wrote a header, or what it wrote does not pass (or cannot be read).
    NONE = "none"


def trusted_ids(setting: str) -> list[str]:
    """The authserv-ids the comma-separated ``setting`` names (``trusted_authserv_ids``),
    lower-cased."""
    return [part.strip().lower() for part in setting.split(",") if part.strip()]


def mta_verdict(mail: IncomingMail, trusted_ids: Sequence[str]) -> Verdict:
    """What the hosts named by ``trusted_ids`` found about ``mail``'s From address."""
    trusted = {host.strip().lower() for host in trusted_ids if host.strip()}
    if not trusted:
        return Verdict.UNCHECKED
    try:
        return _verdict(mail, trusted)
    except Exception:  # whatever went wrong, nothing here vouches for the sender
        return Verdict.NONE


def _verdict(mail: IncomingMail, trusted: set[str]) -> Verdict:
    counted = _counted(mail.trace, trusted)
    if not counted:
        return Verdict.NONE
    domain = _domain((mail.sender or "").rpartition("@")[2])
    readings = [_results(value) for value in counted]
    results = [result for reading in readings if reading is not None for result in reading]
    if any(_dmarc_fails(result, domain) for result in results):
        return Verdict.FAIL
    if domain is None or None in readings:
        # A counted header that cannot be read might be the one that says dmarc=fail.
        return Verdict.NONE
    if any(_passes(result, domain) for result in results):
        return Verdict.PASS
    return Verdict.NONE


def _counted(trace: Sequence[tuple[str, str]], trusted: set[str]) -> list[str]:
    """The values of the headers that count: the topmost trusted Authentication-Results and
    the trusted ones that follow it before the next Received header."""
    counted: list[str] = []
    for kind, value in trace:
        if kind == "received" and counted:
            break
        if kind == "authentication-results" and _authserv_id(value) in trusted:
            counted.append(value)
    return counted


# --- reading one header ---------------------------------------------------------------------

#: Far above a real header (a few hundred bytes; a KB or two with many signatures): the
#: parser copies the rest of the value at every token, so a longer one is not read at all.
MAX_HEADER_CHARS = 4096

_ID_END = re.compile(r"[\s;()\"]")


def _authserv_id(value: str) -> str:
    """The authserv-id ``value`` starts with, lower-cased, read without parsing the rest (a
    comment before it skipped, a quoted one unquoted): a trusted host's header that cannot be
    parsed is still known as the trusted host's, and so still takes its place."""
    pos = _skip_cfws(value, 0)
    if value.startswith('"', pos):
        end = pos + 1
        chars: list[str] = []
        while end < len(value) and value[end] != '"':
            if value[end] == "\\" and end + 1 < len(value):
                end += 1
            chars.append(value[end])
            end += 1
        return "".join(chars).lower()
    match = _ID_END.search(value, pos)
    return value[pos : match.start() if match else len(value)].lower()


def _skip_cfws(value: str, pos: int) -> int:
    """The position after the white space and (nested) comments at ``pos``."""
    depth = 0
    while pos < len(value):
        char = value[pos]
        if char == "\\" and depth:
            pos += 1
        elif char == "(":
            depth += 1
        elif char == ")" and depth:
            depth -= 1
        elif not depth and not char.isspace():
            return pos
        pos += 1
    return pos


@dataclass(frozen=True)
class _Result:
    """One result of a header (``dkim=pass header.d=example.org``), lower-cased; the
    properties by ``ptype.property`` (``header.d``), each with all its values."""

    method: str
    result: str
    properties: dict[str, list[str]]


class _StrictHeader(authres.core.AuthenticationResultsHeader):
    """authres's header, parsed strictly: a property it cannot read fails the whole header
    (by default it skips such a property and reads on from wherever it stopped)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.strict = True


@functools.cache
def _features() -> authres.FeatureContext:
    return authres.FeatureContext(types.SimpleNamespace(AuthenticationResultsHeader=_StrictHeader))


def _results(value: str) -> list[_Result] | None:
    """The results of one header value, or None when it cannot be read (or is not all the
    host it names wrote: its authserv-id must read the same both ways)."""
    # A trailing ";" (some hosts write one) ends nothing: RFC 8601 has no empty result.
    text = value.rstrip().removesuffix(";").rstrip()
    if len(text) > MAX_HEADER_CHARS or not text.isascii():
        return None
    try:
        header = _features().parse_value(text)
        if header.authserv_id != _authserv_id(value):
            return None
        return [
            _Result(result.method.lower(), result.result.lower(), _properties(result))
            for result in header.results
        ]
    except Exception:  # authres's SyntaxError, and RecursionError on nested comments
        return None


def _properties(result: authres.core.AuthenticationResult) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for prop in result.properties:
        key = f"{prop.type}.{prop.name}".lower()
        found.setdefault(key, []).append(str(prop.value or ""))
    return found


# --- what a result says ---------------------------------------------------------------------


def _dmarc_fails(result: _Result, domain: str | None) -> bool:
    """``dmarc=fail``, for the From domain where the header names the domain it checked."""
    if (result.method, result.result) != ("dmarc", "fail"):
        return False
    checked = result.properties.get("header.from")
    return checked is None or domain is None or any(_domain(d) == domain for d in checked)


def _passes(result: _Result, domain: str) -> bool:
    if result.result != "pass":
        return False
    if result.method == "dmarc":
        checked = result.properties.get("header.from")
        return checked is None or all(_domain(d) == domain for d in checked)
    if result.method == "dkim":
        # The signing domain is d=; i= is only read when d= is not given (it is d= or a
        # subdomain of it).
        identities = result.properties.get("header.d") or result.properties.get("header.i")
    elif result.method == "spf":
        identities = result.properties.get("smtp.mailfrom")
    else:
        return False
    return bool(identities) and all(_aligned(found, domain) for found in identities or ())


def _aligned(identity: str, domain: str) -> bool:
    """Whether ``identity`` (``example.org``, ``@example.org``, ``alice@mail.example.org``)
    has the organisational domain of the From ``domain``."""
    theirs = _organisational(_domain(identity.rpartition("@")[2]))
    return theirs is not None and theirs == _organisational(domain)


# --- domains --------------------------------------------------------------------------------

_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")


def _domain(text: str) -> str | None:
    """``text`` as a lower-case ASCII domain name of two labels or more (an internationalised
    one in its xn-- form), or None when it is not one (an IP address literal is not)."""
    name = text.strip().lower().removesuffix(".")
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    labels = name.split(".")
    if len(name) > 253 or len(labels) < 2 or labels[-1].isdigit():
        return None
    return name if all(_LABEL.fullmatch(label) for label in labels) else None


@functools.cache
def _suffixes() -> PublicSuffixList:
    return PublicSuffixList()  # the list shipped with the package: nothing is downloaded


def _organisational(domain: str | None) -> str | None:
    """The registrable domain of ``domain`` (``example.co.uk`` for ``mail.example.co.uk``);
    None for a public suffix (``co.uk``, ``github.io``, or a top-level domain not listed)."""
    if domain is None:
        return None
    found = _suffixes().privatesuffix(domain)
    return found if isinstance(found, str) else None
