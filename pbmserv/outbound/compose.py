"""Render templates and build the RFC 5322 messages the server sends."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime, make_msgid
from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from pbmserv.config import Settings
from pbmserv.core.results import BulkMail, Notification, Section
from pbmserv.outbound import headers, mime
from pbmserv.outbound.html_layout import layout
from pbmserv.outbound.list_headers import list_fields
from pbmserv.outbound.wording import notice_headline, notice_template, section_template
from pbmserv.pictures.raster import width_of
from pbmserv.resources import templates_dir


@cache
def environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(templates_dir())),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,  # plain-text mail
        auto_reload=False,  # installed with the server: no stat of the file every mail
    )


def render(template: str, context: dict[str, Any]) -> str:
    return environment().get_template(template).render(**context)


def lines_html(lines: Sequence[str], between: str) -> Markup:
    """The lines of a block of the HTML part, escaped, ``between`` them (a ``<br>`` or a
    newline): a line that is a web address alone (the board's page, a player's own view)
    becomes a link, its text the address itself, as the text part shows it. In Python rather
    than a template macro: a macro call a line was most of a board mail's rendering."""
    return Markup(between).join(_line_html(line) for line in lines)


def _line_html(line: str) -> Markup:
    if line.startswith(("https://", "http://")) and " " not in line:
        shown = escape(line)
        return Markup('<a href="{0}" style="color:#1a4f8b">{0}</a>').format(shown)
    return escape(line)


@cache
def html_environment() -> Environment:
    environment = Environment(
        loader=FileSystemLoader(str(templates_dir())),
        undefined=StrictUndefined,
        autoescape=True,  # every value in HTML is escaped
        auto_reload=False,
    )
    environment.globals["lines_html"] = lines_html
    return environment


def render_html(
    subject: str, text: str, pictures: Sequence[tuple[str, str]], server_address: str = ""
) -> str:
    """The HTML alternative of a board mail: the pictures (Content-ID, SVG) above the text,
    which stays whole (for screen readers, and for what the pictures leave out), laid out
    for a phone's width by :func:`pbmserv.outbound.html_layout.layout` (the template escapes it);
    below, a note on the pictures and how to have the text alone (sent to ``server_address``).
    The page is built as mail programs need it (Outlook, Apple Mail, webmail): see the
    template's comments."""
    shown = [{"cid": cid, "width": width_of(svg)} for cid, svg in pictures]
    context = {
        "subject": subject,
        "paragraphs": layout(text),
        "pictures": shown,
        "server_address": server_address,
    }
    return html_environment().get_template("mail/board.html.j2").render(**context)


def render_reply_body(sections: Sequence[Section], settings: Settings) -> str:
    parts = [
        {
            "command": s.command,
            "ok": s.ok,
            "text": render_section(s, settings.address),
        }
        for s in sections
    ]
    return render("mail/reply.txt.j2", {"sections": parts, "server_address": settings.address})


def _domain(address: str) -> str:
    return address.rpartition("@")[2] or "localhost"


@dataclass(frozen=True)
class Composed:
    """An outgoing message: its Message-ID and its bytes (newline line endings)."""

    message_id: str
    raw: bytes


def build_message(
    *,
    settings: Settings,
    to: str,
    subject: str,
    body: str,
    now: datetime,
    auto_submitted: str,
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    message_id: str | None = None,
    reply_to: str | None = None,
    picture: str | None = None,
    pictures: Sequence[str] = (),
    draw: Callable[[str], bytes] | None = None,
    bulk: BulkMail | None = None,
) -> Composed:
    """The message as bytes; every header value goes through :mod:`pbmserv.outbound.headers`.
    ValueError if ``to`` is not an address we can write (see ``headers.safe_address``).
    ``message_id``: one chosen ahead (a board's thread), else a new one; ``reply_to``: the
    address replies should go to (a seat's reply address); ``picture``: an SVG of the board,
    which an HTML alternative of the text shows above it (drawn as PNG on delivery, see
    :func:`pbmserv.pictures.raster.finish_pictures`), or by ``draw`` at once (SVG to PNG);
    ``pictures``: several (a digest); ``bulk``: the list of bulk mail (a digest, a
    broadcast), whose List-* headers it then carries (see :mod:`pbmserv.outbound.list_headers`)."""
    message_id = message_id_for(settings, message_id)
    threading: list[str | None] = []
    if in_reply_to and headers.safe_message_id(in_reply_to):
        threading = [
            headers.ids_field("In-Reply-To", [in_reply_to]),
            headers.ids_field("References", [*references, in_reply_to][-10:]),
        ]
    if reply_to is not None and headers.safe_address(reply_to):
        threading.append(headers.mailbox_field("Reply-To", reply_to, "pbmserv"))
    content, encoded = mime.text_body(body)
    shown = [picture] if picture is not None else list(pictures)
    if shown:
        domain = _domain(settings.address)
        named = [(f"board.{secrets.token_hex(8)}@{domain}", svg) for svg in shown]
        html = render_html(subject, body, named, settings.address)
        content, encoded = mime.picture_body(body, html, named, draw)
    block = headers.header_block(
        [
            headers.mailbox_field("From", settings.address, "pbmserv"),
            headers.mailbox_field("To", to),
            headers.text_field("Subject", subject),
            headers.raw_field("Date", format_datetime(now)),
            headers.raw_field("Message-ID", message_id),
            headers.raw_field("Auto-Submitted", auto_submitted),
            headers.mailbox_field("X-Loop", settings.address),
            *threading,
            *list_fields(settings.address, bulk),
            "MIME-Version: 1.0",
            *content,
        ]
    )
    return Composed(message_id, block + b"\n" + encoded)


def message_id_for(settings: Settings, chosen: str | None) -> str:
    """``chosen`` (a board thread's next Message-ID) if it is safe to write, else a new one."""
    if chosen is None or not headers.safe_message_id(chosen):
        return make_msgid(domain=_domain(settings.address))
    return chosen


def render_notification(notification: Notification, settings: Settings) -> str:
    return render_notice(notification, settings.address)


def render_section(section: Section, server_address: str) -> str:
    """A reply section's text, as :mod:`pbmserv.outbound.wording` words its kind."""
    return render(section_template(section), {"server_address": server_address, **section.data})


def render_notice(notification: Notification, server_address: str) -> str:
    """A notice's body, as :mod:`pbmserv.outbound.wording` words its kind."""
    data = {
        "server_address": server_address,
        "headline": notice_headline(notification),
        **notification.data,
    }
    return render(notice_template(notification), data)
