"""Board mail queued as a draft, composed when it goes out.

A move's transaction (which holds SQLite's one write lock) queues each board mail as the facts
its message is built from: headers' values, the rendered text, the picture's SVG. Delivery,
in a process of its own, builds the message from them (the HTML alternative, the MIME parts,
the picture drawn straight as PNG): about a millisecond a move no longer spent while the lock
is held. The draft is JSON behind a marker line, its text as readable in the outbox as a
built message's (a test can look for a secret there), its pictures deflated as queued picture
parts are.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any

from pbmserv.config import Settings
from pbmserv.outbound.compose import build_message
from pbmserv.outbound.mime import deflated

#: The first line of an outbox row queued as a draft (no built message begins so).
DRAFT_MARK = b"X-Pbmserv-Draft: 1\n"


def draft_raw(
    *,
    to: str,
    subject: str,
    body: str,
    now: datetime,
    auto_submitted: str,
    message_id: str,
    in_reply_to: str | None = None,
    references: Sequence[str] = (),
    reply_to: str | None = None,
    picture: str | None = None,
    pictures: Sequence[str] = (),
) -> bytes:
    """The outbox bytes of a message to build later: the keywords of
    :func:`pbmserv.outbound.compose.build_message` (but ``settings``), its Message-ID chosen now."""
    fields: dict[str, Any] = {
        "to": to,
        "subject": subject,
        "body": body,
        "now": now.isoformat(),
        "auto_submitted": auto_submitted,
        "message_id": message_id,
        "in_reply_to": in_reply_to,
        "references": list(references),
        "reply_to": reply_to,
        # Deflated, as a queued picture part is (a seventh of the SVG's bytes to write).
        "picture": None if picture is None else _packed(picture),
        "pictures": [_packed(svg) for svg in pictures],
    }
    return DRAFT_MARK + json.dumps(fields, ensure_ascii=False).encode("utf-8")


def is_draft(raw: bytes) -> bool:
    return raw.startswith(DRAFT_MARK)


def compose_draft(
    raw: bytes, settings: Settings, draw: Callable[[str], bytes] | None = None
) -> bytes:
    """The message a draft stands for, built as it would have been when queued (its Date the
    queuing time); ``draw``: turns a picture's SVG into PNG (else it stays marked for
    :func:`pbmserv.pictures.raster.finish_pictures`). ValueError if it is no draft of ours."""
    if not is_draft(raw):
        raise ValueError("not a draft")
    fields = json.loads(raw[len(DRAFT_MARK) :].decode("utf-8"))
    if not isinstance(fields, dict):
        raise ValueError("a draft must be a JSON object")
    fields["now"] = datetime.fromisoformat(fields["now"])
    if fields["picture"] is not None:
        fields["picture"] = _unpacked(fields["picture"])
    fields["pictures"] = [_unpacked(packed) for packed in fields["pictures"]]
    return build_message(settings=settings, draw=draw, **fields).raw


def _packed(svg: str) -> str:
    return deflated(svg).decode("ascii")


@lru_cache(maxsize=16)
def _unpacked(packed: str) -> str:
    # Kept: the board mails of one move often share their picture (pictures.raster draws it once).
    return zlib.decompress(base64.b64decode(packed)).decode("utf-8")
