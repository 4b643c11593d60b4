"""Atom 1.0 feeds (RFC 4287) built with ElementTree, which escapes every value: a feed's id,
title, updated, author and links (``self`` and ``alternate``), and its entries, each with an id,
a title, updated, a link to its page and a summary. Characters XML 1.0 cannot hold (most
control characters) are dropped rather than written."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pbmserv.db.times import as_utc

ATOM = "http://www.w3.org/2005/Atom"
MEDIA_TYPE = "application/atom+xml; charset=utf-8"
#: Names this program in each feed's <generator>.
GENERATOR = "pbmserv"

#: What XML 1.0 cannot carry: C0 controls but tab, newline and return; lone surrogates; the
#: two non-characters U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True)
class Entry:
    id: str
    title: str
    updated: datetime
    link: str
    summary: str
    author: str | None = None


@dataclass(frozen=True)
class Feed:
    id: str
    title: str
    updated: datetime
    self_link: str
    alternate: str
    author: str
    author_uri: str
    entries: Sequence[Entry]
    subtitle: str | None = None


def rfc3339(when: datetime) -> str:
    """``when`` (aware, or naive UTC as SQLite gives it) as RFC 3339 in UTC: ``...T12:00:00Z``."""
    return as_utc(when).astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def tag_uri(authority: str, when: datetime, specific: str) -> str:
    """A tag: URI (RFC 4151) ``tag:AUTHORITY,YYYY-MM-DD:SPECIFIC``, stable for what it names
    (``when`` is a date that thing was made, never the time of asking)."""
    return f"tag:{authority},{as_utc(when).date().isoformat()}:{specific}"


def _clean(text: str) -> str:
    return _NOT_XML.sub("", text)


def _add(parent: ET.Element, name: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, name, {k: _clean(v) for k, v in attributes.items()})
    if text is not None:
        element.text = _clean(text)
    return element


def _author(parent: ET.Element, name: str, uri: str | None = None) -> None:
    author = _add(parent, "author")
    _add(author, "name", name)
    if uri is not None:
        _add(author, "uri", uri)


def render(feed: Feed) -> bytes:
    """The feed as a UTF-8 XML document."""
    # Plain names under the one default namespace the root declares.
    root = ET.Element("feed", xmlns=ATOM)
    _add(root, "id", feed.id)
    _add(root, "title", feed.title)
    if feed.subtitle:
        _add(root, "subtitle", feed.subtitle)
    _add(root, "updated", rfc3339(feed.updated))
    _author(root, feed.author, feed.author_uri)
    _add(root, "link", rel="self", type="application/atom+xml", href=feed.self_link)
    _add(root, "link", rel="alternate", type="text/html", href=feed.alternate)
    _add(root, "generator", GENERATOR)
    for item in feed.entries:
        entry = _add(root, "entry")
        _add(entry, "id", item.id)
        _add(entry, "title", item.title)
        _add(entry, "updated", rfc3339(item.updated))
        if item.author:
            _author(entry, item.author)
        _add(entry, "link", rel="alternate", type="text/html", href=item.link)
        _add(entry, "summary", item.summary)
    body = ET.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n").encode("utf-8")
