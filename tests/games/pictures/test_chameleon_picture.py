"""Chameleon's picture shows whose sides are whose: the top and bottom rows edged in Vert's
colour, the left and right sides in Horz's, neither the red nor the blue of the pieces, and a
legend naming the player of each (the roles change hands with a swap). Read as SVG and as the
PNG the mail carries."""

from __future__ import annotations

import io
import random
import xml.etree.ElementTree as ET

from PIL import Image

from pbmserv.games.chameleon import GAME, ChameleonState
from pbmserv.games.drawing import CELL, LIGHT, Edges, Grid, hex_centre, hex_svg
from pbmserv.pictures import raster as pictures
from pbmserv.pictures.raster import png_of

RNG = random.Random(0)
SVG = "{http://www.w3.org/2000/svg}"
RED, BLUE = "#d62728", "#1f5fbf"  # the pieces
VERT_EDGE, HORZ_EDGE = "#2b2b2b", "#a8a8a8"
HEX_R = CELL / 3**0.5


def play(size: int, *moves: str) -> ChameleonState:
    state = GAME.new_game({"size": size}, RNG)
    for move in moves:
        state = GAME.apply(state, GAME.parse_move(state, state.ply % 2, move), RNG)
    return state


def edges(svg: str) -> dict[str, ET.Element]:
    """The board's side strokes by side: top, bottom, left, right."""
    root = ET.fromstring(svg)
    found = {}
    for line in root.iter(f"{SVG}polyline"):
        kind = line.get("class", "").split()
        if kind[:1] == ["edge"]:
            found[kind[1]] = line
    return found


def points(line: ET.Element) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (p.split(",") for p in line.get("points", "").split())]


def texts(svg: str) -> list[str]:
    return [t.text or "" for t in ET.fromstring(svg).iter(f"{SVG}text")]


def near(found: tuple[int, ...], wanted: str, tolerance: int = 40) -> bool:
    colour = tuple(int(wanted[i : i + 2], 16) for i in (1, 3, 5))
    return all(abs(a - b) <= tolerance for a, b in zip(found, colour, strict=True))


def test_vert_edges_the_top_and_bottom_and_horz_the_left_and_right() -> None:
    size = 5
    svg = GAME.svg(play(size, "c3x", "b4o"), 0)
    found = edges(svg)
    assert set(found) == {"top", "bottom", "left", "right"}
    assert found["top"].get("stroke") == found["bottom"].get("stroke") == VERT_EDGE
    assert found["left"].get("stroke") == found["right"].get("stroke") == HORZ_EDGE
    grid = Grid(size, size, {}, [], [])
    last = size - 1
    # Each stroke runs along its side: above the top row, below the bottom row, left of the
    # first column, right of the last; the top and bottom across every column.
    top_y = hex_centre(grid, 0, 0)[1]
    bottom_y = hex_centre(grid, last, 0)[1]
    assert all(y <= top_y - HEX_R / 2 + 0.1 for _x, y in points(found["top"]))
    assert all(y >= bottom_y + HEX_R / 2 - 0.1 for _x, y in points(found["bottom"]))
    assert len(points(found["top"])) == len(points(found["bottom"])) == 2 * size + 1
    for row in range(size):
        left_x = hex_centre(grid, row, 0)[0]
        right_x = hex_centre(grid, row, last)[0]
        assert any(abs(x - (left_x - CELL / 2)) < 0.2 for x, _y in points(found["left"]))
        assert any(abs(x - (right_x + CELL / 2)) < 0.2 for x, _y in points(found["right"]))
    assert all(x <= hex_centre(grid, last, 0)[0] for x, _y in points(found["left"]))
    assert all(x >= hex_centre(grid, 0, last)[0] for x, _y in points(found["right"]))


def test_the_edges_are_not_the_colours_of_the_pieces() -> None:
    for colour in (VERT_EDGE, HORZ_EDGE):
        assert colour not in (RED, BLUE)
        assert not near(tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5)), RED, 80)
        assert not near(tuple(int(colour[i : i + 2], 16) for i in (1, 3, 5)), BLUE, 80)


def test_the_legend_names_the_player_of_each_side_and_follows_a_swap() -> None:
    before = texts(GAME.svg(play(5, "c3x"), 1))
    assert "Vert (first player): joins top and bottom" in before
    assert "Horz (second player): joins left and right" in before
    after = texts(GAME.svg(play(5, "c3x", "swap"), 0))
    assert "Vert (second player, by the swap): joins top and bottom" in after
    assert "Horz (first player): joins left and right" in after
    root = ET.fromstring(GAME.svg(play(5), 0))
    samples = {line.get("stroke") for line in root.iter(f"{SVG}line")}
    assert samples == {VERT_EDGE, HORZ_EDGE}  # a stroke of each colour beside its line


def test_the_png_the_mail_carries_shows_the_edges_in_their_colours() -> None:
    size = 7
    svg = GAME.svg(play(size, "d4x", "c5o"), 0)
    grid = Grid(size, size, {}, [], [])
    last = size - 1
    x, y = hex_centre(grid, 0, 3)
    top = (x, y - HEX_R)  # the top corner of d1
    x, y = hex_centre(grid, last, 3)
    bottom = (x, y + HEX_R)  # the bottom corner of d7
    x, y = hex_centre(grid, 3, 0)
    left = (x - CELL / 2, y)  # the left side of a4
    x, y = hex_centre(grid, 3, last)
    right = (x + CELL / 2, y)  # the right side of g4
    centre = hex_centre(grid, 1, 1)  # b2, an empty cell inside: as it always was
    places = {"top": top, "bottom": bottom, "left": left, "right": right, "centre": centre}
    for png in (png_of(svg), pictures.drawn_by_resvg(svg)):
        image = Image.open(io.BytesIO(png)).convert("RGB")
        at = {name: image.getpixel((round(x), round(y))) for name, (x, y) in places.items()}
        assert near(at["top"], VERT_EDGE) and near(at["bottom"], VERT_EDGE)  # type: ignore[arg-type]
        assert near(at["left"], HORZ_EDGE) and near(at["right"], HORZ_EDGE)  # type: ignore[arg-type]
        assert near(at["centre"], LIGHT)  # type: ignore[arg-type]
        assert image.height > hex_centre(grid, last, 0)[1] + HEX_R + 40  # room for the legend


def test_a_hex_board_without_edges_is_drawn_as_before() -> None:
    plain = Grid(3, 3, {}, ["1", "2", "3"], list("abc"))
    svg = hex_svg(plain)
    assert "<polyline" not in svg and "<line" not in svg
    edged = hex_svg(Grid(3, 3, {}, ["1", "2", "3"], list("abc"), edges=Edges("#000000", "#888888")))
    assert len(edges(edged)) == 4 and "<line" not in edged  # no legend lines were given
