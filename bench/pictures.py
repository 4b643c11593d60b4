"""What a board picture costs, for every game (issue 32).

Run ``python bench/pictures.py``. For each game it plays a random game (the conformance kit's
playout), takes a mid-game position and times, as medians of repeated calls on one core:
building the SVG (``game.svg``); the server's path to the PNG a mail carries (a layered
picture's board drawn once and kept, its pieces drawn on a copy; the colours mapped onto the
picture's own palette; PNG at zlib level 1); and, side by side, the path before it (the whole
picture rasterised, octree colour reduction, zlib level 6). It prints the PNGs' bytes too:
mail size matters.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from collections.abc import Callable
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
from pbmserv.mail import pictures

_ROUNDS = 9


def _ms(call: Callable[[], Any], repeats: int = 20) -> float:
    rounds = []
    for _ in range(_ROUNDS):
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        rounds.append((time.perf_counter() - start) / repeats * 1e3)
    return statistics.median(rounds)


def _mid_game(game: Any) -> Any:
    written = {"size": "11"} if game.SPEC.name == "chameleon" else {}
    options = game.validate_options(written, game.SPEC.players)
    playout = random_playout(game, options, 1, require_end=False)
    states = playout.states
    return states[len(states) // 2]


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
    print("ms a picture (median), mid-game position, public view; bytes of the PNG")
    print(
        f"{'game':<11}{'svg':>8}{'server':>9}{'one pass':>10}{'ratio':>7}{'layered':>9}"
        f"{'bytes':>8}{'one pass':>10}"
    )
    for game in all_games():
        state = _mid_game(game)
        svg = game.svg(state, PUBLIC)
        pictures.png_of.cache_clear()
        server = _ms(lambda s=svg: pictures.drawn_by_lunasvg(s))  # the board layer stays cached
        before = _ms(lambda s=svg: _one_pass(s), repeats=5)
        drawing = _ms(lambda g=game, s=state: g.svg(s, PUBLIC))
        layered = "yes" if pictures.layers_of(svg) else "no"
        size, old_size = len(pictures.drawn_by_lunasvg(svg)), len(_one_pass(svg))
        print(
            f"{game.SPEC.name:<11}{drawing:>8.2f}{server:>9.2f}{before:>10.2f}"
            f"{before / server:>6.1f}x{layered:>9}{size:>8}{old_size:>10}"
        )


if __name__ == "__main__":
    main()
