"""Extinction's picture is drawn in layers (issue 32): its frame, coordinates and squares are
the board, the same for every position seen from one side, drawn once; the last move's squares
and python-chess's pieces are drawn on a copy of it. Its colours are all plain attributes, so
the PNG keeps to the picture's own palette; and the PNG shows each piece where it stands, from
the viewer's side."""

from __future__ import annotations

import io
import random
from collections.abc import Iterator

import chess
import pytest
from PIL import Image, ImageChops, ImageStat

from pbmserv.games.base import OMNISCIENT, PUBLIC, Viewer
from pbmserv.games.drawing import HIGHLIGHT, HIGHLIGHT_FROM
from pbmserv.games.extinction import GAME, ExtinctionState, position
from pbmserv.games.extinction.picture import DARK, LIGHT
from pbmserv.games.testing import random_playout
from pbmserv.pictures import raster as pictures
from pbmserv.pictures.palette import colours_of, palette_for

pytestmark = pytest.mark.skipif(pictures.lunasvg is None, reason="LunaSVG draws the layers")

RNG = random.Random(0)
VIEWERS: tuple[Viewer, ...] = (0, 1, PUBLIC, OMNISCIENT)
# The geometry the picture is drawn in, written out here: 45-pixel squares in a 15-pixel frame.
SQUARE, MARGIN, SIZE = 45, 15, 390


def states(seeds: int = 3) -> Iterator[ExtinctionState]:
    """A game's start, middle and end, for a few random games."""
    for seed in range(seeds):
        played = random_playout(GAME, {}, seed, require_end=False).states
        yield from (played[0], played[len(played) // 2], played[-1])


def play(texts: list[str], state: ExtinctionState | None = None) -> ExtinctionState:
    state = GAME.new_game({}, RNG) if state is None else state
    for text in texts:
        state = GAME.apply(state, GAME.parse_move(state, state.seat_to_move, text), RNG)
    return state


def image_of(svg: str) -> Image.Image:
    return Image.open(io.BytesIO(pictures.drawn_by_lunasvg(svg))).convert("RGB")


def box(square: chess.Square, black_below: bool) -> tuple[int, int]:
    """The top left pixel of a square: a1 at the bottom left for White, at the top right for
    Black."""
    file, rank = chess.square_file(square), chess.square_rank(square)
    column, row = (7 - file, rank) if black_below else (file, 7 - rank)
    return MARGIN + column * SQUARE, MARGIN + row * SQUARE


def near(found: tuple[int, ...], wanted: str | tuple[int, int, int], tolerance: int = 12) -> bool:
    colour = (
        tuple(int(wanted[i : i + 2], 16) for i in (1, 3, 5)) if isinstance(wanted, str) else wanted
    )
    return all(abs(a - b) <= tolerance for a, b in zip(found, colour, strict=True))


def seen_on(image: Image.Image, square: chess.Square, black_below: bool) -> str:
    """What the picture shows on a square (:func:`seen_at` its top left pixel)."""
    return seen_at(image, *box(square, black_below))


def seen_at(image: Image.Image, x: int, y: int) -> str:
    """What the picture shows on the square whose top left pixel is (x, y): "white" (a white
    piece: much white), "black" (a black piece: much black, little white), "empty" (neither)
    or "?"."""
    counted = image.crop((x + 4, y + 4, x + SQUARE - 4, y + SQUARE - 4)).getcolors(SQUARE**2)
    assert counted is not None
    inside = [(n, colour) for n, colour in counted if isinstance(colour, tuple)]
    white = sum(n for n, colour in inside if near(colour, (255, 255, 255)))
    black = sum(n for n, colour in inside if near(colour, (0, 0, 0)))
    if white + black < 30:
        return "empty"
    if white > 150:
        return "white"
    if black > 300 and white < 100:
        return "black"
    return "?"


def test_every_position_is_drawn_in_layers_from_either_side() -> None:
    for state in states():
        for viewer in VIEWERS:
            svg = GAME.svg(state, viewer)
            assert pictures.layers_of(svg) is not None
            assert f'width="{SIZE}" height="{SIZE}" viewBox="0 0 {SIZE} {SIZE}"' in svg


def test_the_board_layer_is_the_same_for_every_position_seen_from_one_side() -> None:
    boards: dict[Viewer, set[str]] = {viewer: set() for viewer in VIEWERS}
    for state in [*states(), play(["e4", "d5", "exd5"])]:
        for viewer in VIEWERS:
            layers = pictures.layers_of(GAME.svg(state, viewer))
            assert layers is not None
            boards[viewer].add(layers[0])
    assert all(len(found) == 1 for found in boards.values()), "one board a side"
    assert boards[0] == boards[PUBLIC] == boards[OMNISCIENT] != boards[1]
    [board] = boards[0]
    assert "lastmove" not in board and "pawn" not in board  # nothing that changes


def test_its_colours_are_read_from_the_svg_for_the_palette() -> None:
    for state in [*states(seeds=2), play(["e4", "Nf6"])]:
        for viewer in (0, 1):
            svg = GAME.svg(state, viewer)
            colours = colours_of(svg)
            assert colours is not None, "no style=, currentColor or named colour"
            assert palette_for(svg, pictures.layers_of(svg)) is not None
            assert "<use" not in svg and ' id="' not in svg.replace('<g id="board">', "")


def test_the_pieces_stand_where_they_are_from_the_viewers_side() -> None:
    for state in [*states(seeds=2), play(["e4", "d5", "exd5", "Qxd5", "Nc3"])]:
        board = chess.Board(state.fen)
        for viewer, black_below in ((0, False), (1, True), (PUBLIC, False)):
            image = image_of(GAME.svg(state, viewer))
            assert image.size == (SIZE, SIZE)
            for square in chess.SQUARES:
                piece = board.piece_at(square)
                wanted = "empty" if piece is None else chess.COLOR_NAMES[piece.color]
                found = seen_on(image, square, black_below)
                assert found == wanted, (chess.square_name(square), viewer, state.fen)


@pytest.mark.parametrize(("viewer", "own", "other"), [(0, "white", "black"), (1, "black", "white")])
def test_each_side_sees_its_own_king_at_the_bottom(viewer: int, own: str, other: str) -> None:
    image = image_of(GAME.svg(GAME.new_game({}, RNG), viewer))
    # The e-file is the fifth column from the left for White, the fourth for Black.
    column = 4 if viewer == 0 else 3
    x = MARGIN + column * SQUARE
    top, bottom = MARGIN, MARGIN + 7 * SQUARE
    assert (seen_at(image, x, bottom), seen_at(image, x, top)) == (own, other)
    king = image.getpixel((x + SQUARE // 2, bottom + SQUARE // 2))
    assert not near(king, LIGHT) and not near(king, DARK)  # type: ignore[arg-type]
    for row in range(2, 6):  # the middle of the board is empty, its squares in their colours
        middle = image.getpixel((x + SQUARE // 2, MARGIN + row * SQUARE + SQUARE // 2))
        light = (row + column) % 2 == 0  # the top left square is light from either side
        assert near(middle, LIGHT if light else DARK)  # type: ignore[arg-type]


@pytest.mark.parametrize("viewer", [0, 1])
def test_the_last_moves_squares_show_under_the_pieces(viewer: int) -> None:
    capture = play(["e4", "d5", "exd5"])  # from e4 to d5, a pawn on d5 now
    image = image_of(GAME.svg(capture, viewer))
    black_below = viewer == 1
    for square, colour in ((chess.E4, HIGHLIGHT_FROM), (chess.D5, HIGHLIGHT)):
        x, y = box(square, black_below)
        assert near(image.getpixel((x + 3, y + 3)), colour)  # type: ignore[arg-type]
    assert seen_on(image, chess.D5, black_below) == "white"
    assert seen_on(image, chess.E4, black_below) == "empty"
    x, y = box(chess.E2, black_below)  # an earlier move's square: its own colour again
    assert near(image.getpixel((x + 3, y + 3)), LIGHT)  # type: ignore[arg-type]


def test_the_layered_picture_looks_as_the_whole_svg_drawn_in_one_go() -> None:
    for state in [*states(seeds=1), position()]:
        svg = GAME.svg(state, 1)
        fast = image_of(svg)
        bitmap = pictures._drawn(svg, 0xFFFFFFFF)
        bitmap.convertToRGBA()
        size, pixels = (bitmap.width(), bitmap.height()), bytes(memoryview(bitmap))
        whole = Image.frombuffer("RGBA", size, pixels, "raw", "RGBA", bitmap.stride(), 1)
        difference = ImageChops.difference(fast, whole.convert("RGB"))
        assert max(ImageStat.Stat(difference).mean) < 1.5
        assert sum(difference.convert("L").histogram()[40:]) < SIZE * SIZE / 200
