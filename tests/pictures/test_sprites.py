"""A layered picture's pieces are sprites (drawing.sprite), each drawn once by LunaSVG and
pasted on the board, already in the picture's palette (pbmserv.pictures.sprites). Pieces that are
not all sprites are drawn as SVG on the board, as before.

The tolerance: pasted, the sprites give the pixels LunaSVG gives drawing the picture whole but
for at most 2 levels of a colour (of 255), a mean under 0.05 a channel; mapped onto the
palette, they are exactly the pixels pasted and mapped (the tiles change nothing). Why not
pixel for pixel: LunaSVG blends a shape's anti-aliased edge into the board in premultiplied
8-bit steps; drawn alone, the sprite's edge pixel is premultiplied, rounded, then un-premultiplied
(convertToRGBA) and blended again by Pillow, a level or so apart (measured over a few hundred
pictures of every game: never more than 2, a mean of at most 0.016). Flat areas, where the
pixels are opaque or untouched, are exact; a sprite misplaced by a pixel, or drawn without its
fraction of one, is dozens of levels apart on hundreds of pixels. Mapped onto the palette, an
edge pixel a level apart can fall to the neighbouring blend: invisible, on an edge."""

from __future__ import annotations

import io
import random
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image, ImageChops, ImageStat

from pbmserv.games import all_games, find_game
from pbmserv.games.base import PUBLIC, Viewer
from pbmserv.games.drawing import Mark, label, label_sprite, layered, piece, sprite
from pbmserv.games.testing import random_playout
from pbmserv.pictures import raster as pictures
from pbmserv.pictures.palette import palette_for
from pbmserv.pictures.sprites import sprites_of
from tests.pictures.drawn import shown

pytestmark = pytest.mark.skipif(pictures.lunasvg is None, reason="LunaSVG draws the sprites")

GAMES = all_games()


def positions(game: Any, seeds: int = 2, every: int = 6) -> Iterator[str]:
    """Pictures of a few random games, from start to end, for a player and the public."""
    written = {"size": "7"} if game.SPEC.name == "chameleon" else {}
    options = game.validate_options(written, game.SPEC.players)
    viewers: tuple[Viewer, ...] = (0, PUBLIC)
    for seed in range(seeds):
        states = random_playout(game, options, seed, require_end=False).states
        for state in states[:: max(1, len(states) // every)]:
            yield from (game.svg(state, viewer) for viewer in viewers)


def after(name: str, moves: list[str]) -> str:
    """A game's picture after ``moves`` (the last one's cells highlighted)."""
    game = find_game(name)
    assert game is not None
    rng = random.Random(0)
    state = game.new_game({"size": 5} if name == "chameleon" else {}, rng)
    for move in moves:
        seat = min(game.to_move(state).seats)
        state = game.apply(state, game.parse_move(state, seat, move), rng)
    return game.svg(state, PUBLIC)


def png(svg: str) -> Image.Image:
    return Image.open(io.BytesIO(pictures.drawn_by_lunasvg(svg))).convert("RGB")


def whole(svg: str) -> Image.Image:
    """The picture drawn whole by LunaSVG (RGB)."""
    return pictures._image_of(pictures._drawn(svg, 0xFFFFFFFF))


def mapped(image: Image.Image, svg: str) -> Image.Image:
    palette = palette_for(svg)
    assert palette is not None
    return image.quantize(palette=palette, dither=Image.Dither.NONE).convert("RGB")


def assert_as_whole(svg: str) -> None:
    """The sprites pasted are the whole picture within the tolerance, and the PNG is them
    mapped onto the palette."""
    board_svg, pieces_svg = pictures.layers_of(svg)  # type: ignore[misc]
    sprites = sprites_of(pieces_svg)
    assert sprites is not None, "the pieces are all sprites"
    pasted = pictures._SHEET.pasted(pictures._board_pixels(board_svg), sprites)
    apart = ImageChops.difference(pasted, whole(svg))
    assert max(high for _low, high in ImageStat.Stat(apart).extrema) <= 2
    assert max(ImageStat.Stat(apart).mean) < 0.05
    assert ImageChops.difference(png(svg), mapped(pasted, svg)).getbbox() is None


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.SPEC.name)
def test_a_picture_of_sprites_is_the_whole_picture_drawn_and_mapped(game: Any) -> None:
    for svg in positions(game):
        layers = pictures.layers_of(svg)
        if layers is None:  # Entropy's end: both rounds' boards, drawn once a game
            assert game.SPEC.name == "entropy" and "round-2" in svg
            continue
        assert_as_whole(svg)


@pytest.mark.parametrize(
    ("name", "moves"),
    [
        ("chameleon", ["a1x"]),  # a corner: the sides go over it, a sprite of the picture's size
        ("chameleon", ["c3x", "e3o"]),  # the right side
        ("chameleon", ["c3x", "c5o", "a3x"]),  # the bottom, then the left
        ("extinction", ["h4", "a5", "h5", "a4"]),  # along the frame
    ],
)
def test_a_last_move_on_a_side_is_drawn_as_the_whole_picture(name: str, moves: list[str]) -> None:
    svg = after(name, moves)
    if name == "chameleon":
        pieces = pictures.layers_of(svg)[1]  # type: ignore[index]
        assert pieces.count('class="edges"') == 1 and pieces.count('class="last-move"') == 1
    assert_as_whole(svg)


def test_a_sprite_between_pixels_is_drawn_where_the_whole_picture_draws_it() -> None:
    body = (
        '<circle cx="18" cy="18" r="14.4" fill="#d62728" stroke="#333333" stroke-width="1.5"/>'
        + label(18, 24, "x", "#ffffff", size=17, bold=True)
    )
    board = '<rect x="10" y="10" width="100" height="60" fill="#f0d9b5" stroke="#5a4632"/>'
    pieces = "".join(
        sprite(x, y, 36, 36, body, "piece") for x, y in ((10.37, 12.5), (50.5, 20.85), (80, 30))
    )
    svg = layered(board, pieces, 130, 80)
    found = sprites_of(pictures.layers_of(svg)[1])  # type: ignore[index]
    assert found is not None
    assert [(s.left, s.top) for s in found] == [(10, 12), (50, 20), (80, 30)]
    assert 'x="0.37" y="0.5"' in found[0].document  # the fraction kept, drawn at the whole part
    assert_as_whole(svg)
    # Drawn at the whole pixel instead, each disc would be a pixel or half one off.
    rounded = svg.replace('x="10.37"', 'x="10"').replace('y="20.85"', 'y="20"')
    assert max(ImageStat.Stat(ImageChops.difference(whole(rounded), whole(svg))).mean) > 0.2


@pytest.mark.parametrize(
    "drawn",
    [
        piece(20, 20, Mark("#d62728", "x", "#ffffff")),
        piece(20.5, 20.85, Mark("#ffffff", "D")),
        piece(20, 20, Mark("#888888", "K", hollow=True)),  # a ring, its stroke 4 wide
        piece(30, 20, Mark("#222222", "WMW")),  # a label longer than a letter
        label_sprite(20, 30, "Order's score so far: 123", bold=True, anchor="start"),
        label_sprite(80, 30, "WWWWMMMM", size=17, bold=True),
        label_sprite(80, 30, "gjpqy, Áj", size=12, anchor="end"),
    ],
)
def test_a_piece_or_words_keep_clear_of_the_box_that_clips_them(drawn: str) -> None:
    layers = pictures.layers_of(layered("", drawn, 200, 60))
    assert layers is not None
    [alone] = sprites_of(layers[1]) or []
    image = pictures._drawn_alone(alone.document)  # the canvas: the box and its fraction
    box = image.getchannel("A").getbbox()
    assert box is not None
    left, top, right, bottom = box
    assert left >= 1 and top >= 1 and right <= image.width - 1 and bottom <= image.height - 1


def test_pieces_that_are_not_all_sprites_are_drawn_as_svg() -> None:
    game = find_game("chameleon")
    assert game is not None
    svg = next(s for s in positions(game, seeds=1) if "piece" in s)
    mark = '<circle cx="60" cy="60" r="12" fill="#1f5fbf"/>'
    mixed = svg.removesuffix("</svg>") + mark + "</svg>"
    layers = pictures.layers_of(mixed)
    assert layers is not None and sprites_of(layers[1]) is None
    fast = png(mixed)
    assert ImageChops.difference(fast, mapped(whole(mixed), mixed)).getbbox() is None
    assert fast.getpixel((60, 60)) == (31, 95, 191)  # the circle that is no sprite is drawn


def test_sprites_are_read_only_when_the_pieces_are_nothing_else() -> None:
    def pieces(markup: str) -> str:
        return f'<svg xmlns="x" width="50" height="50" viewBox="0 0 50 50">{markup}</svg>'

    one = sprite(1, 2, 10, 10, '<rect width="5" height="5" fill="#000000"/>', "a")
    assert sprites_of(pieces("")) == []
    assert sprites_of(pieces(one + one)) is not None
    assert sprites_of(pieces(f'<g class="named">{one}</g>{one}')) is not None  # groups name
    for other in (
        f"{one}<rect/>",  # something that is no sprite
        f"<rect/>{one}",
        f"</g>{one}",  # a group ended that was not started
        f'<g class="open">{one}',
        f'<g transform="scale(2)">{one}</g>',  # a group that changes what it holds
        one.replace("<rect", "<svg><rect").replace("</svg>", "</svg></svg>"),  # svg in svg
        one.replace("<rect", '<use href="#a"/><rect'),  # what is defined elsewhere
        one.replace('fill="#000000"', 'fill="url(#a)"'),
    ):
        assert sprites_of(pieces(other)) is None, other


def test_each_sprite_is_drawn_once() -> None:
    game = find_game("chameleon")
    assert game is not None
    svgs = list(positions(game, seeds=1, every=12))
    sheet = pictures._SHEET
    sheet.clear()
    for svg in svgs:
        pictures.drawn_by_lunasvg(svg)
    documents = {
        s.document
        for svg in svgs
        for s in sprites_of(pictures.layers_of(svg)[1]) or ()  # type: ignore[index]
    }
    drawn, tiles = sheet.drawn.cache_info(), sheet.tile.cache_info()
    assert drawn.misses == len(documents) < sum(svg.count("<svg ") for svg in svgs) / 4
    assert drawn.hits > 0, "a stone is drawn once, and pasted wherever it stands"
    for svg in svgs:  # every tile is kept: nothing is drawn again
        pictures.drawn_by_lunasvg(svg)
    assert sheet.drawn.cache_info().misses == drawn.misses
    assert sheet.tile.cache_info().misses == tiles.misses


def test_pictures_drawn_at_once_by_several_threads_are_the_ones_drawn_alone() -> None:
    svgs = [svg for game in GAMES for svg in positions(game, seeds=1, every=3)]
    alone = [pictures.drawn_by_lunasvg(svg) for svg in svgs]
    pictures._SHEET.clear()
    found: dict[int, bytes] = {}

    def draw(start: int) -> None:
        for index in range(start, len(svgs), 4):
            found[index] = pictures.drawn_by_lunasvg(svgs[index])

    threads = [threading.Thread(target=draw, args=(start,)) for start in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Compared as pictures: the same pixels may deflate to other bytes (tests/pictures/drawn.py).
    assert [shown(found[index]) for index in range(len(svgs))] == [shown(png) for png in alone]
