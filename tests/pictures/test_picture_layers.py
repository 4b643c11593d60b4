"""A board picture drawn the fast way (issue 32) looks as the whole SVG drawn in one go: a
layered picture's board is drawn once and its pieces (sprites, each drawn once) pasted on it,
and its colours are mapped onto a palette of the picture's own colours and the blends between
them."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from PIL import Image, ImageChops, ImageStat

from pbmserv.games import find_game
from pbmserv.games.base import PUBLIC
from pbmserv.games.testing import random_playout
from pbmserv.pictures import raster as pictures
from pbmserv.pictures.palette import colours_of, palette_for
from pbmserv.pictures.sprites import sprites_of

pytestmark = pytest.mark.skipif(pictures.lunasvg is None, reason="LunaSVG draws the layers")

LAYERED_GAMES = ["buffalo", "chameleon", "entropy", "extinction", "hmdg", "owlman"]


def positions(name: str, seeds: int = 3) -> Iterator[str]:
    """Pictures of a game at its start, middle and end, for a few random games (Entropy's end
    is both rounds' boards, a picture not in layers: its last move instead)."""
    game = find_game(name)
    assert game is not None
    written = {"size": "7"} if name == "chameleon" else {}
    options = game.validate_options(written, game.SPEC.players)
    for seed in range(seeds):
        states = random_playout(game, options, seed, require_end=False).states
        last = states[-2] if name == "entropy" and game.outcome(states[-1]) else states[-1]
        for state in (states[0], states[len(states) // 2], last):
            yield game.svg(state, PUBLIC)


def in_one_go(svg: str) -> Image.Image:
    """The picture drawn whole, its colours kept (no palette)."""
    bitmap = pictures._drawn(svg, 0xFFFFFFFF)
    bitmap.convertToRGBA()
    size = (bitmap.width(), bitmap.height())
    pixels = bytes(memoryview(bitmap))
    return Image.frombuffer("RGBA", size, pixels, "raw", "RGBA", bitmap.stride(), 1).convert("RGB")


def drawn(svg: str) -> Image.Image:
    return Image.open(io.BytesIO(pictures.drawn_by_lunasvg(svg))).convert("RGB")


def pasted_on_board(svg: str) -> Image.Image:
    """A layered picture's sprites pasted on its board, not yet in a palette."""
    board_svg, pieces_svg = pictures.layers_of(svg)  # type: ignore[misc]
    sprites = sprites_of(pieces_svg)
    assert sprites is not None, "the pieces are sprites"
    return pictures._SHEET.pasted(pictures._board_pixels(board_svg), sprites)


@pytest.mark.parametrize("name", LAYERED_GAMES)
def test_a_layered_picture_looks_as_the_whole_svg_drawn_in_one_go(name: str) -> None:
    for svg in positions(name):
        assert pictures.layers_of(svg) is not None, "the board games draw in layers"
        fast, whole = drawn(svg), in_one_go(svg)
        assert fast.size == whole.size
        # The pieces (sprites) pasted on the board are the pixels of the picture drawn whole,
        # but for a level or two at their edges (test_sprites), and mapped onto the palette.
        palette = palette_for(svg)
        assert palette is not None
        pasted = pasted_on_board(svg)
        rgb_apart = ImageChops.difference(pasted, whole)
        assert max(high for _low, high in ImageStat.Stat(rgb_apart).extrema) <= 2
        mapped = pasted.quantize(palette=palette, dither=Image.Dither.NONE).convert("RGB")
        assert ImageChops.difference(fast, mapped).getbbox() is None
        # The palette changes only anti-aliased edges, and by little: flat areas are exact.
        difference = ImageChops.difference(fast, whole)
        assert max(ImageStat.Stat(difference).mean) < 1.5
        assert sum(difference.convert("L").histogram()[40:]) < fast.width * fast.height / 200


def test_the_board_is_drawn_once_for_every_position_of_a_game() -> None:
    svgs = list(positions("chameleon", seeds=1))
    boards = {pictures.layers_of(svg)[0] for svg in svgs}  # type: ignore[index]
    assert len(boards) == 1, "the board layer holds nothing that changes with the moves"
    pictures._board_pixels.cache_clear()
    for svg in svgs:
        pictures.drawn_by_lunasvg(svg)
    info = pictures._board_pixels.cache_info()
    assert (info.misses, info.hits) == (1, len(svgs) - 1)


def test_a_last_move_on_a_side_keeps_the_side_stroke_whole() -> None:
    game = find_game("chameleon")
    assert game is not None
    state = game.new_game({"size": 5}, None)  # type: ignore[arg-type]
    state = game.apply(state, game.parse_move(state, 0, "a1x"), None)  # type: ignore[arg-type]
    svg = game.svg(state, PUBLIC)
    board, pieces = pictures.layers_of(svg)  # type: ignore[misc]
    assert "edge" in pieces and "edge" not in board  # drawn over the highlighted corner cell
    difference = ImageChops.difference(drawn(svg), in_one_go(svg))
    assert max(ImageStat.Stat(difference).mean) < 1.5


def test_the_palette_is_the_pictures_own_colours_and_their_blends() -> None:
    svg = list(positions("chameleon", seeds=1))[1]  # mid-game: red and blue pieces
    colours = colours_of(svg)
    assert colours is not None and (214, 39, 40) in colours  # the red pieces, #d62728
    palette = palette_for(svg)
    assert palette is not None
    entries = palette.getpalette()
    assert entries is not None and len(entries) == 3 * 256
    # A colour the palette cannot know: the pixels' own colours are reduced instead.
    unknown = svg.replace('fill="#ffffff"', 'fill="white"', 1)
    assert colours_of(unknown) is None and palette_for(unknown) is None
    assert Image.open(io.BytesIO(pictures.drawn_by_lunasvg(unknown))).mode == "P"


def test_a_picture_not_in_layers_is_drawn_whole() -> None:
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 40 20">'
        '<rect width="40" height="20" fill="#ffffff"/><circle cx="10" cy="10" r="8" '
        'fill="#d62728"/></svg>'
    )
    assert pictures.layers_of(svg) is None
    image = drawn(svg)
    assert image.getpixel((10, 10)) == (214, 39, 40) and image.getpixel((30, 10)) == (255,) * 3
    scaled = svg.replace('viewBox="0 0 40 20"', 'viewBox="0 0 20 10"')
    assert pictures.layers_of(scaled.replace("<rect", '<g id="board"><rect')) is None
