"""Board mail is queued as a draft and built by delivery: the message that goes out is the one
the move would have built (the same headers, the same text, its picture drawn as PNG), a
draft that cannot be built waits for a retry rather than being lost, and the move's
transaction builds nothing. Real MIME parsing, a real database, a real relay."""

from __future__ import annotations

import asyncio
import base64
import email
import email.policy
import io
import random
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image
from sqlalchemy import Engine, select, update

from pbmserv.config import Settings
from pbmserv.db.engine import session_factory
from pbmserv.db.models import OutboxMessage
from pbmserv.games import find_game
from pbmserv.inbound.inbox import store_message
from pbmserv.outbound.compose import build_message
from pbmserv.outbound.delivery import deliver_due
from pbmserv.outbound.drafts import DRAFT_MARK, compose_draft, draft_raw, is_draft
from pbmserv.outbound.mime import TO_PNG, base64_lines
from pbmserv.pictures.raster import png_of
from pbmserv.runtime.processor import process_batch
from tests.e2e.processes import seed_game
from tests.reliability.outbox import Relay, ScriptedHandler, delivery_settings, rows
from tests.support import make_mail

SETTINGS = Settings(confirm_addresses=False, address="pbmserv@games.example.org")
NOW = datetime(2030, 1, 1, 12, 30, tzinfo=UTC)
BODY = "alice (Vert) played c3x.\n\nCafé: it is your move, Jürgen.\n"


def board_svg() -> str:
    game = find_game("chameleon")
    assert game is not None
    return game.svg(game.new_game({"size": 5}, random.Random(0)), 0)


FACTS = {
    "to": "jürgen@example.org",
    "subject": "chameleon board 1: your move — Zug",
    "body": BODY,
    "now": NOW,
    "auto_submitted": "auto-generated",
    "in_reply_to": "<b1.first@games.example.org>",
    "references": ["<b1.root@games.example.org>"],
    "reply_to": "pbmserv+b1-s0-token@games.example.org",
}


def parse(raw: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def test_a_draft_builds_the_message_the_move_would_have_built() -> None:
    svg = board_svg()
    message_id = "<b1.next@games.example.org>"
    built = parse(build_message(settings=SETTINGS, message_id=message_id, picture=svg, **FACTS).raw)
    raw = draft_raw(message_id=message_id, picture=svg, **FACTS)
    assert is_draft(raw) and not is_draft(build_message(settings=SETTINGS, **FACTS).raw)
    sent = parse(compose_draft(raw, SETTINGS, png_of))
    for name in ("From", "To", "Subject", "Date", "Message-ID", "In-Reply-To", "References"):
        assert sent[name] == built[name], name
    assert sent["Reply-To"] == built["Reply-To"] and sent["Auto-Submitted"] == "auto-generated"
    text = sent.get_body(("plain",))
    assert text is not None and text.get_content() == BODY
    html = sent.get_body(("html",))
    assert html is not None and "Jürgen" in html.get_content()
    [picture] = [part for part in sent.walk() if part.get_content_maintype() == "image"]
    assert picture.get_content_type() == "image/png"
    assert str(picture["Content-ID"]).strip("<>") in html.get_content()
    drawn = Image.open(io.BytesIO(picture.get_content()))
    assert drawn.format == "PNG" and drawn.size[0] > 50
    assert TO_PNG not in compose_draft(raw, SETTINGS, png_of)


def test_a_draft_keeps_its_text_readable_and_its_picture_small() -> None:
    svg = board_svg()
    raw = draft_raw(message_id="<x@games.example.org>", picture=svg, **FACTS)
    assert raw.startswith(DRAFT_MARK)
    assert "Café: it is your move, Jürgen.".encode() in raw  # as greppable as a built body
    assert svg.encode() not in raw and len(raw) < len(svg) // 2


def test_a_picture_that_cannot_be_drawn_goes_as_svg() -> None:
    def broken(_svg: str) -> bytes:
        raise ValueError("no drawing today")

    raw = draft_raw(message_id="<x@games.example.org>", picture=board_svg(), **FACTS)
    sent = parse(compose_draft(raw, SETTINGS, broken))
    [picture] = [part for part in sent.walk() if part.get_content_maintype() == "image"]
    assert picture.get_content_type() == "image/svg+xml"
    assert picture.get_content().startswith(b"<svg")
    text = sent.get_body(("plain",))
    assert text is not None and text.get_content() == BODY


def test_what_is_no_draft_is_refused() -> None:
    with pytest.raises(ValueError):
        compose_draft(b"From: x@example.org\n\nhello\n", SETTINGS)


def _play_a_move(engine: Engine, settings: Settings) -> None:
    """alice plays on board 1 by mail, processed as the server does: her reply, and the board
    to alice and to bob."""
    seed_game(engine)
    raw = make_mail("alice@example.org", "chameleon move 1 alice secret1 c3x").as_bytes()
    store_message(session_factory(engine), settings, raw, "alice@example.org")
    assert process_batch(session_factory(engine), settings) == 1


def _queued(engine: Engine) -> list[tuple[str, str, bytes]]:
    with engine.connect() as conn:
        found = conn.execute(
            select(OutboxMessage.kind, OutboxMessage.recipient, OutboxMessage.raw).order_by(
                OutboxMessage.id
            )
        )
        return [tuple(row) for row in found]  # type: ignore[misc]


@pytest.mark.db
def test_board_mail_is_queued_as_a_draft_and_sent_built(db_url: str, engine: Engine) -> None:
    with Relay(ScriptedHandler()) as relay:
        settings = delivery_settings(db_url, relay)
        _play_a_move(engine, settings)
        queued = _queued(engine)
        assert [(kind, to) for kind, to, _ in queued] == [
            ("reply", "alice@example.org"),
            ("board", "alice@example.org"),
            ("board", "bob@example.org"),
        ]
        # The move's transaction built the reply, and left the board mail to delivery.
        assert [is_draft(raw) for _, _, raw in queued] == [False, True, True]
        asyncio.run(deliver_due(session_factory(engine), settings))
        received = {m.to: m.message for m in relay.messages if "board" in m.message["Subject"]}
    assert sorted(received) == ["alice@example.org", "bob@example.org"]
    for message in received.values():
        kinds = [part.get_content_type() for part in message.walk()]
        assert "image/png" in kinds and "text/html" in kinds, kinds
        text = message.get_body(("plain",))
        assert text is not None and "alice" in text.get_content()
    assert "pbmserv+b1-s1-" in received["bob@example.org"]["Reply-To"]
    assert [row.status for row in rows(engine)] == ["sent"] * 3


@pytest.mark.db
def test_a_draft_that_cannot_be_built_waits_for_a_retry(db_url: str, engine: Engine) -> None:
    with Relay(ScriptedHandler()) as relay:
        settings = delivery_settings(db_url, relay)
        _play_a_move(engine, settings)
        with engine.begin() as conn:  # a draft this release cannot read
            conn.execute(
                update(OutboxMessage)
                .where(OutboxMessage.kind == "board", OutboxMessage.recipient == "bob@example.org")
                .values(raw=DRAFT_MARK + b"{not json")
            )
        asyncio.run(deliver_due(session_factory(engine), settings))
        received = sorted(m.to for m in relay.messages)
    assert received == ["alice@example.org", "alice@example.org"]  # the bad one held up nobody
    reply, alices, bobs = rows(engine)
    assert (reply.status, alices.status) == ("sent", "sent")
    assert (bobs.status, bobs.attempts) == ("pending", 1)  # not lost: tried again later
    assert "could not build" in (bobs.last_error or "")


@given(st.binary(max_size=2000))
def test_base64_lines_are_rfc_2045_lines(data: bytes) -> None:
    """Encoded at once and cut: the lines base64.encodebytes writes, without its last newline."""
    assert base64_lines(data) == base64.encodebytes(data).rstrip(b"\n")
