"""A board mail with a picture: its text part is the text mail's body, byte for byte; the
picture is queued as SVG and drawn as PNG on delivery; one that cannot be drawn stays SVG."""

from __future__ import annotations

import base64
import email
import email.policy
import io
import platform
from datetime import UTC, datetime

import pytest
from PIL import Image

from pbmserv.config import Settings
from pbmserv.games import find_game
from pbmserv.outbound import mime
from pbmserv.outbound.compose import build_message
from pbmserv.outbound.picture_parts import finish_pictures
from pbmserv.pictures import raster as pictures
from pbmserv.pictures.raster import letters_can_be_drawn, png_of
from tests.pictures.drawn import shown

NOW = datetime(2030, 1, 1, tzinfo=UTC)
BODY = "alice (Vert) played c3x.\n\n    a b c\n 1  . . .  1\n\nCafé: it is your move.\n"


def compose(picture: str | None) -> email.message.EmailMessage:
    return parse(composed(picture))


def parse(raw: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def composed(picture: str | None, pictures: tuple[str, ...] = ()) -> bytes:
    return build_message(
        settings=Settings(confirm_addresses=False),
        to="bob@example.org",
        subject="chameleon board 1: your move",
        body=BODY,
        now=NOW,
        auto_submitted="auto-generated",
        picture=picture,
        pictures=pictures,
    ).raw


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


def board_svg() -> str:
    import random

    game = find_game("chameleon")
    assert game is not None
    return game.svg(game.new_game({"size": 3}, random.Random(0)), 0)


def parts(message: email.message.EmailMessage) -> dict[str, email.message.EmailMessage]:
    return {part.get_content_type(): part for part in message.walk()}


def test_delivery_draws_the_queued_svg_as_png() -> None:
    raw = composed(board_svg())
    queued = parts(parse(raw))
    assert "image/svg+xml" in queued and "image/png" not in queued
    sent = parts(parse(finish_pictures(raw)))
    assert "image/svg+xml" not in sent and b"X-Pbmserv-Picture" not in finish_pictures(raw)
    png = sent["image/png"]
    assert png["Content-ID"] == queued["image/svg+xml"]["Content-ID"]
    assert png.get_filename() == "board.png"
    assert Image.open(io.BytesIO(png.get_content())).format == "PNG"
    assert sent["text/plain"].get_content() == BODY


def test_the_png_is_opaque_and_small() -> None:
    png = Image.open(io.BytesIO(png_of(board_svg())))
    # A palette image with no transparency: no mail program shows the board on black.
    assert png.mode == "P" and "transparency" not in png.info
    corner = png.convert("RGB").getpixel((0, 0))
    assert isinstance(corner, tuple) and min(corner) >= 250  # white, give or take the palette
    assert len(png_of(board_svg())) < 40_000


def test_the_fast_rasteriser_draws_where_it_is_installed() -> None:
    # pyproject installs pylunasvg on x86-64 and Apple machines; resvg draws elsewhere.
    if platform.machine() in ("x86_64", "AMD64"):
        assert pictures.lunasvg is not None
    if pictures.lunasvg is not None:
        assert shown(png_of(board_svg())) == shown(pictures.drawn_by_lunasvg(board_svg()))


def test_without_the_fast_rasteriser_resvg_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    # As on Linux on ARM, where pylunasvg has no wheel and is not installed.
    monkeypatch.setattr(pictures, "lunasvg", None)
    pictures.png_of.cache_clear()
    try:
        assert png_of(board_svg()) == pictures.drawn_by_resvg(board_svg())
    finally:
        pictures.png_of.cache_clear()


def test_either_rasteriser_draws_the_board_on_white() -> None:
    svg = board_svg()
    drawers = [pictures.drawn_by_resvg]
    if pictures.lunasvg is not None:
        drawers.append(pictures.drawn_by_lunasvg)
    for draw in drawers:
        image = Image.open(io.BytesIO(draw(svg))).convert("RGBA")
        assert image.width == pictures.width_of(svg)
        corner = image.getpixel((0, 0))
        assert isinstance(corner, tuple) and min(corner) >= 250, draw.__name__
        with pytest.raises(ValueError):
            draw("<svg this is not a picture")


def test_there_is_a_font_for_the_pictures_letters() -> None:
    # Without one `serve` warns at start (a slim container); here .ci/run's packages bring one.
    assert letters_can_be_drawn()


def test_text_mail_goes_untouched() -> None:
    raw = composed(None)
    assert finish_pictures(raw) is raw


def test_a_picture_that_cannot_be_drawn_stays_svg_and_the_text_goes() -> None:
    raw = finish_pictures(composed("<svg this is not a picture"))
    sent = parts(parse(raw))
    assert "image/png" not in sent and b"X-Pbmserv-Picture" not in raw
    assert sent["text/plain"].get_content() == BODY
    # The SVG itself, as it was drawn up (queued deflated, it leaves readable).
    assert sent["image/svg+xml"].get_content() == b"<svg this is not a picture"


def big_board_svg() -> str:
    import random

    game = find_game("chameleon")
    assert game is not None
    state = game.new_game({"size": 11}, random.Random(0))
    for move in ("f6x", "e7o", "g5x", "d8o"):
        state = game.apply(state, game.parse_move(state, state.ply % 2, move), random.Random(0))
    return game.svg(state, 0)


def test_a_queued_board_mail_carries_its_picture_deflated() -> None:
    svg = big_board_svg()
    raw = composed(svg)
    # The database writes and reads every queued mail: the 11x11 board's SVG (20-30 KB, more
    # in base64) goes in at a fifth of that or less; the whole mail, its text and HTML with it,
    # in 10 KB.
    in_base64 = base64.b64encode(svg.encode())
    assert len(svg) > 20_000 and len(mime.deflated(svg)) < len(in_base64) / 5
    assert len(raw) < 10_000
    assert b"X-Pbmserv-Picture: to-png; deflated" in raw
    sent = parts(parse(finish_pictures(raw)))
    assert sent["image/png"].get_content() == png_of(svg)


def test_a_board_mail_queued_before_carries_its_svg_as_it_is_and_is_drawn() -> None:
    svg = board_svg()
    deflated = composed(svg)
    marker, body = b"X-Pbmserv-Picture: to-png; deflated\n\n", mime.deflated(svg)
    assert marker in deflated and body in deflated
    old = deflated.replace(marker, b"X-Pbmserv-Picture: to-png\n\n").replace(
        body, base64.encodebytes(svg.encode()).rstrip(b"\n")
    )
    sent = parts(parse(finish_pictures(old)))
    assert sent["image/png"].get_content() == png_of(svg)


def test_a_digest_carries_each_boards_picture_and_delivery_draws_them_all() -> None:
    first, second = board_svg(), board_svg().replace("#f0d9b5", "#f0d9b6")
    raw = composed(None, (first, second))
    sent = parse(finish_pictures(raw))
    images = [p for p in sent.walk() if p.get_content_maintype() == "image"]
    assert [p.get_content_type() for p in images] == ["image/png", "image/png"]
    html = sent.get_body(("html",))
    assert html is not None
    for image in images:
        assert f"cid:{image['Content-ID'].strip('<>')}" in html.get_content()
        assert Image.open(io.BytesIO(image.get_content())).format == "PNG"
