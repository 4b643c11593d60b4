"""What a board picture costs, for every game (issue 32, and the sprites after it).

Run ``python bench/pictures.py``. For each game it plays a random game (the conformance kit's
playout) and times, as medians on one core:

- ``svg``: building the SVG of a mid-game position (``game.svg``);
- ``server``: the server's path to the PNG a mail carries (``png_of`` without its cache of
  whole pictures), the mid-game picture drawn again and again: the board drawn once and kept,
  and, the pieces being sprites, each sprite drawn once and pasted as a tile already in the
  picture's palette (pbmserv.pictures.sprites); the PNG written by pbmserv.pictures.png
(ISA-L deflate);
- ``move``: the same path for each new position of the game in play order from mid-game, what
  a server spends on a move: the positions before it drawn first (untimed), their sprites and
  tiles kept, and only what the move changed drawn anew;
- ``layers``: the path before sprites (issue 32): the board drawn once, the pieces drawn by
  LunaSVG on a copy of it, the pixels mapped onto the palette;
- ``one pass``: the path before that: the whole picture rasterised, octree colour reduction,
  zlib level 6.

It prints the PNGs' bytes too (mail size matters): the server's, the layers path's (the same
picture, its pieces' edges a level or two apart) and the one pass's.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from collections.abc import Callable
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

try:
    import pbmserv  # noqa: F401
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PIL import Image

from pbmserv.games import all_games
from pbmserv.games.base import PUBLIC
from pbmserv.games.testing import random_playout
from pbmserv.pictures import raster as pictures
from pbmserv.pictures import sprites
from pbmserv.pictures.palette import palette_for
from pbmserv.pictures.sprites import sprites_of

_ROUNDS = 9


def _ms(call: Callable[[], Any], repeats: int = 20) -> float:
    rounds = []
    for _ in range(_ROUNDS):
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        rounds.append((time.perf_counter() - start) / repeats * 1e3)
    return statistics.median(rounds)


def _playout(game: Any) -> list[Any]:
    written = {"size": "11"} if game.SPEC.name == "chameleon" else {}
    options = game.validate_options(written, game.SPEC.players)
    return list(random_playout(game, options, 1, require_end=False).states)


def _server(svg: str) -> bytes:
    """The server's path: png_of without its cache of whole pictures."""
    return pictures.png_of.__wrapped__(svg)


def _per_move(svgs: list[str], window: int = 10, rounds: int = 5) -> float:
    """ms the server's path takes for a new position, in play order from mid-game, with what
    the positions before it left in the caches (drawn first, untimed, each round anew)."""
    middle = len(svgs) // 2
    times = []
    for _ in range(rounds):
        pictures._SHEET.clear()
        sprites._sprite.cache_clear()
        for svg in svgs[:middle]:
            _server(svg)
        for svg in svgs[middle : middle + window]:
            start = time.perf_counter()
            _server(svg)
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


@lru_cache(maxsize=32)
def _board_bitmap(board_svg: str) -> tuple[bytes, int, int]:
    """The path before sprites kept each board's pixels as LunaSVG drew them."""
    bitmap = pictures._drawn(board_svg, 0xFFFFFFFF)
    return bytes(memoryview(bitmap).cast("B")), bitmap.width(), bitmap.height()


def _layers(svg: str) -> bytes:
    """The path before sprites: the pieces drawn by LunaSVG on a copy of the board's pixels
    (drawn once), the pixels mapped onto the picture's palette, PNG at zlib level 1."""
    lunasvg = pictures.lunasvg
    assert lunasvg is not None
    layers = pictures.layers_of(svg)
    assert layers is not None
    pixels, width, height = _board_bitmap(layers[0])
    bitmap = lunasvg.Bitmap(width, height)
    memoryview(bitmap).cast("B")[:] = pixels
    lunasvg.Document.loadFromData(layers[1]).render(bitmap, lunasvg.Matrix())
    image = pictures._image_of(bitmap)
    reduced = image.quantize(palette=palette_for(svg, layers), dither=Image.Dither.NONE)
    out = io.BytesIO()
    reduced.save(out, "PNG", compress_level=1)
    return out.getvalue()


def _one_pass(svg: str) -> bytes:
    """The path before issue 32: the whole picture rasterised, its colours reduced by octree,
    PNG at zlib level 6."""
    lunasvg = pictures.lunasvg
    assert lunasvg is not None
    bitmap = lunasvg.Document.loadFromData(svg).renderToBitmap(-1, -1, 0xFFFFFFFF)
    bitmap.convertToRGBA()
    size, stride = (bitmap.width(), bitmap.height()), bitmap.stride()
    image = Image.frombuffer("RGBA", size, bytes(memoryview(bitmap)), "raw", "RGBA", stride, 1)
    reduced = image.convert("RGB").quantize(colors=128, method=Image.Quantize.FASTOCTREE)
    out = io.BytesIO()
    reduced.save(out, "PNG")
    return out.getvalue()


def main() -> None:
    if pictures.lunasvg is None:
        print("LunaSVG (pylunasvg) is not installed here: nothing to compare")
        return
    print("ms a picture (median), public view; bytes of the mid-game PNG")
    print(
        f"{'game':<11}{'svg':>6}{'server':>8}{'move':>7}{'layers':>8}{'one pass':>10}"
        f"{'pieces':>9}{'bytes':>8}{'layers':>8}{'one pass':>10}"
    )
    for game in all_games():
        states = _playout(game)
        state = states[len(states) // 2]
        svg = game.svg(state, PUBLIC)
        svgs = [game.svg(played, PUBLIC) for played in states]
        layers = pictures.layers_of(svg)
        kind = "no layer" if layers is None else "sprites" if sprites_of(layers[1]) else "svg"
        drawing = _ms(partial(game.svg, state, PUBLIC))
        server = _ms(partial(_server, svg))  # the board, sprites and tiles stay cached
        move = _per_move(svgs)
        before = _ms(partial(_layers, svg)) if layers else float("nan")
        one_pass = _ms(partial(_one_pass, svg), repeats=5)
        size, old_size = len(_server(svg)), len(_one_pass(svg))
        layers_size = len(_layers(svg)) if layers else 0
        print(
            f"{game.SPEC.name:<11}{drawing:>6.2f}{server:>8.2f}{move:>7.2f}{before:>8.2f}"
            f"{one_pass:>10.2f}{kind:>9}{size:>8}{layers_size:>8}{old_size:>10}"
        )


if __name__ == "__main__":
    main()
