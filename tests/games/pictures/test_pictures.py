"""Every game draws its board as SVG: checked as a person would look at it, rasterised as the
mail is (LunaSVG) and read pixel by pixel at known cells; resvg, drawing the same pictures on
its own, must see the same."""

from __future__ import annotations

import io
import random
import xml.etree.ElementTree as ET

import pytest
from PIL import Image, ImageChops

from pbmserv.games import all_games, find_game
from pbmserv.games.base import OMNISCIENT, PUBLIC
from pbmserv.games.drawing import (
    CELL,
    HIGHLIGHT,
    LIGHT,
    RIVER,
    Grid,
    Mark,
    hex_centre,
    hex_svg,
    square_centre,
    square_svg,
)
from pbmserv.games.testing import random_playout
from pbmserv.pictures import raster as pictures
from pbmserv.pictures.raster import png_of

RNG = random.Random(0)


def pixels(svg: str) -> Image.Image:
    return Image.open(io.BytesIO(png_of(svg))).convert("RGB")


def drawn_by_resvg(svg: str) -> Image.Image:
    return Image.open(io.BytesIO(pictures.drawn_by_resvg(svg))).convert("RGB")


def rgb(colour: str) -> tuple[int, int, int]:
    return tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]


def near(found: tuple[int, ...], wanted: str, tolerance: int = 40) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(found, rgb(wanted), strict=True))


def at(image: Image.Image, x: float, y: float) -> tuple[int, ...]:
    return image.getpixel((round(x), round(y)))  # type: ignore[return-value]


def disc(image: Image.Image, x: float, y: float) -> tuple[int, ...]:
    """The colour of a piece's disc centred at (x, y), beside its letter."""
    return at(image, x - CELL * 0.25, y)


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.SPEC.name)
def test_every_position_of_a_playout_draws_for_every_viewer(game) -> None:  # type: ignore[no-untyped-def]
    playout = random_playout(game, {}, 3)
    for state in playout.states[:: max(1, len(playout.states) // 8)]:
        for viewer in [*range(game.SPEC.players), PUBLIC, OMNISCIENT]:
            root = ET.fromstring(game.svg(state, viewer))  # well-formed XML
            assert root.tag.endswith("svg") and float(root.get("width", "0")) > 100


def share_far_apart(one: Image.Image, other: Image.Image) -> float:
    """The share of pixels where some colour channel differs by over 96 of 255: edges that
    anti-aliasing draws a little differently stay under it, a missing shape or letter not."""
    channels = ImageChops.difference(one, other).split()
    widest = ImageChops.lighter(ImageChops.lighter(channels[0], channels[1]), channels[2])
    return widest.point(lambda v: 255 if v > 96 else 0).histogram()[255] / (one.width * one.height)


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.SPEC.name)
def test_the_mails_rasteriser_draws_what_resvg_draws(game) -> None:  # type: ignore[no-untyped-def]
    # Two renderers written apart agree on every game's picture, letters and pieces included
    # (without its letters, each game's picture differs on 0.7% to 5% of its pixels). HMDG's
    # dashed rings start their dashes at different points in each, hence its wider margin.
    margin = 0.015 if game.SPEC.name == "hmdg" else 0.003
    playout = random_playout(game, {}, 5)
    for state in (playout.states[len(playout.states) // 2], playout.states[-1]):
        svg = game.svg(state, 0)
        mail, resvg = pixels(svg), drawn_by_resvg(svg)
        assert mail.size == resvg.size
        assert share_far_apart(mail, resvg) < margin


def test_square_grid_cells_marks_rivers_and_highlight_where_they_are_said_to_be() -> None:
    grid = Grid(
        rows=3,
        cols=4,
        marks={(0, 1): Mark("#222222", "B", "#ffffff"), (2, 3): Mark("#d62728", "x")},
        row_labels=["3", "2", "1"],
        col_labels=list("abcd"),
        highlight=frozenset({(1, 2)}),
        rivers_below=frozenset({0}),
    )
    image = pixels(square_svg(grid))
    assert near(disc(image, *square_centre(grid, 0, 1)), "#222222")
    assert near(disc(image, *square_centre(grid, 2, 3)), "#d62728")
    assert near(at(image, *square_centre(grid, 1, 2)), HIGHLIGHT)
    assert near(at(image, *square_centre(grid, 1, 0)), LIGHT)
    x, y = square_centre(grid, 0, 0)
    assert near(at(image, x, y + CELL * 0.75), RIVER)  # between row 0 and row 1


def test_hex_grid_cells_are_where_the_rhombus_puts_them() -> None:
    grid = Grid(
        rows=3,
        cols=3,
        marks={(2, 0): Mark("#1f5fbf", "o")},
        row_labels=["1", "2", "3"],
        col_labels=list("abc"),
        highlight=frozenset({(0, 2)}),
    )
    image = pixels(hex_svg(grid))
    assert near(disc(image, *hex_centre(grid, 2, 0)), "#1f5fbf")
    assert near(at(image, *hex_centre(grid, 0, 2)), HIGHLIGHT)
    assert near(at(image, *hex_centre(grid, 1, 1)), LIGHT)
    # Each row is half a cell to the right of the one above, as in the text diagram.
    assert hex_centre(grid, 1, 0)[0] - hex_centre(grid, 0, 0)[0] == CELL / 2


def test_chameleon_draws_the_last_piece_placed_and_its_colour() -> None:
    game = find_game("chameleon")
    assert game is not None
    state = game.new_game({"size": 5}, RNG)
    state = game.apply(state, game.parse_move(state, 0, "c3x"), RNG)
    svg = game.svg(state, 0)
    assert svg.count("<circle") == 1 and "#d62728" in svg
    grid = Grid(5, 5, {}, [], [])  # only the geometry: where c3 is
    image = pixels(svg)
    x, y = hex_centre(grid, 2, 2)
    assert near(disc(image, x, y), "#d62728")  # the x on c3 ...
    assert near(at(image, x, y + CELL * 0.47), HIGHLIGHT)  # ... on the highlighted cell


def test_hmdg_draws_hidden_pieces_for_their_owner_only() -> None:
    game = find_game("hmdg")
    assert game is not None
    state = game.new_game({}, RNG)
    for seat, move in [(0, "E5"), (1, "o"), (1, "C3 row")]:
        state = game.apply(state, game.parse_move(state, seat, move), RNG)
    bob, alice, public = (game.svg(state, v) for v in (1, 0, PUBLIC))
    assert 'stroke-dasharray="5,3"' in bob  # bob's own o on C3: a ring
    assert "stroke-dasharray" not in alice and "stroke-dasharray" not in public
    assert alice.count("<circle") == public.count("<circle") == 1  # the opening x alone


def test_extinction_is_drawn_by_python_chess_from_each_players_side() -> None:
    game = find_game("extinction")
    assert game is not None
    state = game.new_game({}, RNG)
    state = game.apply(state, game.parse_move(state, 0, "e4"), RNG)
    white, black = game.svg(state, 0), game.svg(state, 1)
    assert "#f2e45c" in white  # the last move's square, e4
    assert white != black  # Black sees the board from its own side
