"""A board mail with a picture: its text part is the text mail's body, byte for byte; a
picture that cannot be drawn leaves the text alone."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime

from pbmserv.config import Settings
from pbmserv.games import find_game
from pbmserv.mail.compose import build_message

NOW = datetime(2030, 1, 1, tzinfo=UTC)
BODY = "alice (Vert) played c3x.\n\n    a b c\n 1  . . .  1\n\nCafé: it is your move.\n"


def compose(picture: str | None) -> email.message.EmailMessage:
    raw = build_message(
        settings=Settings(),
        to="bob@example.org",
        subject="chameleon board 1: your move",
        body=BODY,
        now=NOW,
        auto_submitted="auto-generated",
        picture=picture,
    ).raw
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def test_the_text_part_is_the_text_mail() -> None:
    game = find_game("chameleon")
    assert game is not None
    import random

    svg = game.svg(game.new_game({"size": 3}, random.Random(0)), 0)
    with_picture, text_only = compose(svg), compose(None)
    plain = with_picture.get_body(("plain",))
    assert plain is not None and plain.get_content() == text_only.get_content() == BODY
    html = with_picture.get_body(("html",))
    assert html is not None and "Caf\u00e9: it is your move." in html.get_content()


def test_a_picture_that_cannot_be_drawn_leaves_the_text() -> None:
    message = compose("<svg this is not a picture")
    assert message.get_content_type() == "text/plain" and message.get_content() == BODY
