"""Render templates and build the RFC 5322 messages the server sends."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from pbmserv.config import Settings
from pbmserv.core.parser import printable
from pbmserv.core.results import Notification, Section
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
    )


def render(template: str, context: dict[str, Any]) -> str:
    return environment().get_template(template).render(**context)


def render_reply_body(sections: Sequence[Section], settings: Settings) -> str:
    parts = [
        {
            "command": s.command,
            "ok": s.ok,
            "text": render(s.template, _with_server(s.context, settings)),
        }
        for s in sections
    ]
    return render("mail/reply.txt.j2", {"sections": parts, "server_address": settings.address})


def _with_server(context: dict[str, Any], settings: Settings) -> dict[str, Any]:
    return {"server_address": settings.address, **context}


def _domain(address: str) -> str:
    return address.rpartition("@")[2] or "localhost"


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
) -> EmailMessage:
    message = EmailMessage()
    message["From"] = f"pbmserv <{settings.address}>"
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(now)
    message["Message-ID"] = make_msgid(domain=_domain(settings.address))
    message["Auto-Submitted"] = auto_submitted
    message["X-Loop"] = settings.address
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
        message["References"] = " ".join([*references, in_reply_to][-10:])
    # Plain ASCII stays readable as it is; anything else is quoted-printable.
    plain = body.isascii() and all(len(line) <= 998 for line in body.splitlines())
    message.set_content(body, charset="utf-8", cte="7bit" if plain else "quoted-printable")
    return message


def reply_subject(original: str) -> str:
    original = " ".join(printable(original).split())[:200]
    if not original:
        return "Re: your message to pbmserv"
    return original if original.lower().startswith("re:") else f"Re: {original}"


def render_notification(notification: Notification, settings: Settings) -> str:
    return render(notification.template, _with_server(notification.context, settings))
