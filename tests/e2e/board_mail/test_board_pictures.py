"""Board mail with a picture, over real SMTP: multipart/alternative text and HTML, the board as
an inline PNG the HTML shows by Content-ID, the text part as before; mail=text for text alone."""

from __future__ import annotations

import io
from email.message import EmailMessage

import pytest
from PIL import Image

from pbmserv.games import all_games
from pbmserv.games.drawing import LIGHT
from tests.support import Received, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

ALICE, BOB = "alice@example.org", "bob@example.org"


def send(server, engine, sink: Sink, sender: str, subject: str) -> list[Received]:  # type: ignore[no-untyped-def]
    before = len(sink.messages)
    assert smtp_send(server.port, make_mail(sender, subject))[0] == 250
    settle(engine)
    return sink.messages[before:]


def parts(message: EmailMessage) -> dict[str, EmailMessage]:
    return {part.get_content_type(): part for part in message.walk()}


@pytest.fixture
def players(server, engine, sink: Sink):  # type: ignore[no-untyped-def]
    send(server, engine, sink, ALICE, "signup alice secret1")
    send(server, engine, sink, BOB, "signup bob hunter22")
    return server


def test_every_games_board_mail_shows_the_board_as_a_picture(players, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    for game in all_games():
        out = send(players, engine, sink, ALICE, f"{game.SPEC.name} challenge alice bob")
        board_mail = [m for m in out if m.message["Reply-To"]]
        assert len(board_mail) == 2, game.SPEC.name
        for mail in board_mail:
            message = mail.message
            raw = message.as_bytes()
            assert message.get_content_type() == "multipart/related"
            found = parts(message)
            assert {"multipart/alternative", "text/plain", "text/html", "image/png"} <= set(found)
            html = found["text/html"].get_content()
            cid = found["image/png"]["Content-ID"].strip("<>")
            assert f'src="cid:{cid}"' in html
            # The text is all there in the HTML too, escaped.
            assert "Reply with:" in mail.body or "Waiting for" in mail.body
            first_line = mail.body.strip().splitlines()[0]
            assert first_line.replace("&", "&amp;").replace("'", "&#39;") in html
            image = Image.open(io.BytesIO(found["image/png"].get_content()))
            assert image.format == "PNG" and image.width > 200
            colours = {c for _n, c in image.convert("RGB").getcolors(1 << 16) or []}
            light = tuple(int(LIGHT[i : i + 2], 16) for i in (1, 3, 5))
            drawn = any(all(abs(a - b) < 8 for a, b in zip(c, light, strict=True)) for c in colours)
            # python-chess draws Extinction's board in its own colours.
            assert drawn or game.SPEC.name == "extinction", "the board's light cells are drawn"
            assert len(raw) < 100_000, f"{game.SPEC.name}: {len(raw)} bytes"


def test_mail_text_sends_the_text_alone_and_status_shows_it(players, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    [answer] = send(players, engine, sink, BOB, "set bob hunter22 mail=text")
    assert "mail=text   (changed)" in answer.body
    out = send(players, engine, sink, ALICE, "chameleon challenge -size=5 alice bob")
    to_bob = next(m for m in out if m.to == BOB)
    to_alice = next(m for m in out if m.to == ALICE and m.message["Reply-To"])
    assert to_bob.message.get_content_type() == "text/plain"
    assert to_alice.message.get_content_type() == "multipart/related"
    [status] = send(players, engine, sink, BOB, "status bob")
    assert "Settings: mail=text" in status.body
    [wrong] = send(players, engine, sink, BOB, "set bob hunter22 mail=pdf")
    assert "mail is one of html, text" in wrong.body and "Nothing was changed" in wrong.body


@pytest.fixture
def text_server(settings):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from tests.support import RunningServer

    running = RunningServer(replace(settings, board_pictures=False)).start()
    yield running
    running.stop()


def test_an_operator_can_turn_pictures_off(text_server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    send(text_server, engine, sink, ALICE, "signup alice secret1")
    send(text_server, engine, sink, BOB, "signup bob hunter22")
    out = send(text_server, engine, sink, ALICE, "chameleon challenge -size=5 alice bob")
    board_mail = [m for m in out if m.message["Reply-To"]]
    assert len(board_mail) == 2
    assert all(m.message.get_content_type() == "text/plain" for m in board_mail)


def test_the_pictures_setting_reads_true_and_false() -> None:
    from pbmserv.config import ConfigError, load_settings

    assert load_settings(environ={"PBMSERV_BOARD_PICTURES": "false"}).board_pictures is False
    assert load_settings(environ={"PBMSERV_BOARD_PICTURES": "on"}).board_pictures is True
    with pytest.raises(ConfigError, match="true or false"):
        load_settings(environ={"PBMSERV_BOARD_PICTURES": "maybe"})
