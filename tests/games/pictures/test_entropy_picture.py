"""Entropy's picture: each row's score at its end and each column's below it, as score.py counts
them, with Order's total; the counter drawn for Chaos to place beside the board (Entropy II:
Chaos's reserve); and once the game is over both rounds' boards side by side, with who was Order
and Chaos in each, each round's scores and who won. Every viewer sees the same picture. Read as
SVG and as the PNG the mail carries."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

from PIL import Image

from pbmserv.games.base import OMNISCIENT, PUBLIC
from pbmserv.games.drawing import CELL, HIGHLIGHT, MARGIN
from pbmserv.games.entropy import GAME
from pbmserv.games.entropy.score import board_score
from pbmserv.games.entropy.state import ENTROPY2, OVER, PLACE, SLIDE, STANDARD, EntropyState
from pbmserv.games.testing import random_playout
from pbmserv.pictures import raster as pictures
from pbmserv.pictures.raster import png_of

SVG = "{http://www.w3.org/2000/svg}"
FILLS = {"R": "#d62728", "G": "#2ca02c", "B": "#1f5fbf", "Y": "#f2d43c", "P": "#f49ac1"}
LETTERS = "RGBYPWK"


def states(size: int = 7, variant: str = STANDARD, seed: int = 7) -> list[EntropyState]:
    playout = random_playout(GAME, {"size": size, "variant": variant}, seed)
    return [playout.start, *(step.after for step in playout.steps)]


def group(root: ET.Element, kind: str) -> ET.Element:
    [found] = [g for g in root.iter(f"{SVG}g") if kind in g.get("class", "").split()]
    return found


def words(element: ET.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}text")]


def numbers(element: ET.Element, across: bool = False) -> list[int]:
    """The numbers written in ``element``, top to bottom (``across``: left to right). Each is
    a sprite (drawing.label_sprite): written where its box is, plus where it is in the box."""
    axis = "x" if across else "y"
    found = [
        (float(box.get(axis, "0")) + float(t.get(axis, "0")), int(t.text))
        for box in element.iter(f"{SVG}svg")
        for t in box.iter(f"{SVG}text")
        if t.text and t.text.isdigit()
    ]
    return [value for _place, value in sorted(found)]


def picture(state: EntropyState) -> str:
    """The picture, the same for both players, the public and the administrator."""
    svg = GAME.svg(state, 0)
    assert all(GAME.svg(state, viewer) == svg for viewer in (1, PUBLIC, OMNISCIENT))
    return svg


def assert_scores_drawn(board: ET.Element, cells: bytes, size: int) -> None:
    score = board_score(cells, size)
    assert numbers(group(board, "row-scores")) == list(score.rows[::-1])  # row N at the top
    assert numbers(group(board, "column-scores"), across=True) == list(score.columns)
    total = words(group(board, "total"))
    assert total[0].endswith(f" {score.total}")
    assert total[1] == f"{sum(score.rows)} in rows + {sum(score.columns)} in columns"


def test_each_rows_and_columns_score_is_drawn_as_score_py_counts_it() -> None:
    played = [s for s in states() if s.stage != OVER and board_score(s.cells, s.size).total]
    for state in played[:: max(1, len(played) // 6)]:
        root = ET.fromstring(picture(state))
        assert_scores_drawn(root, state.cells, state.size)
        assert words(group(root, "total"))[0].startswith("Order's score so far: ")


def test_the_counter_drawn_for_chaos_is_shown_while_chaos_is_to_place() -> None:
    for state in states(size=5)[:12]:
        root = ET.fromstring(picture(state))
        drawn = [g for g in root.iter(f"{SVG}g") if g.get("class") == "next-counter"]
        if state.stage != PLACE:
            assert state.stage == SLIDE and not drawn  # nothing drawn yet while Order moves
            assert "Order to slide or pass" in words(root)
            continue
        letter = LETTERS[state.drawn - 1]
        # The text diagram tells everyone the same counter: it is no secret.
        assert f"({letter})" in GAME.render(state, PUBLIC)
        [counter] = drawn
        [disc] = counter.iter(f"{SVG}circle")
        assert disc.get("fill") == FILLS[letter]
        assert words(counter)[0] == letter and "Chaos to place" in words(root)


def test_entropy2_shows_chaoss_reserve() -> None:
    for state in states(size=5, variant=ENTROPY2)[1:8]:
        root = ET.fromstring(picture(state))
        held = "".join(LETTERS[c] * n for c, n in enumerate(state.reserve))
        discs = [] if not held else list(group(root, "reserve").iter(f"{SVG}circle"))
        assert [d.get("fill") for d in discs] == [FILLS[letter] for letter in held]
        assert not [g for g in root.iter(f"{SVG}g") if g.get("class") == "next-counter"]


def test_round_2_opens_with_nothing_highlighted_and_the_score_to_beat() -> None:
    opening = next(s for s in states() if s.round == 2)
    assert opening.first is not None and not any(opening.cells)
    svg = picture(opening)
    assert f'fill="{HIGHLIGHT}"' not in svg  # round 1's last move is not on this board
    assert f"Score to beat: {board_score(opening.first, 7).total}" in words(ET.fromstring(svg))


def test_a_finished_game_shows_both_rounds_side_by_side() -> None:
    final = states()[-1]
    assert final.stage == OVER and final.first is not None and final.result is not None
    root = ET.fromstring(picture(final))
    first, second = group(root, "round-1"), group(root, "round-2")
    assert_scores_drawn(first, final.first, 7)
    assert_scores_drawn(second, final.cells, 7)
    assert first.get("transform", "").startswith("translate(0,")
    x2 = float(second.get("transform", "")[len("translate(") :].split(",")[0])
    assert x2 >= 2 * MARGIN + 7 * CELL  # beside the first board, not over it
    said = words(root)
    # Standard Entropy: the first player is Chaos in round 1, Order in round 2.
    assert said[:3] == ["Round 1", "Order: the second player", "Chaos: the first player"]
    assert said.index("Round 2") > 0
    assert "Order: the first player" in said and "Chaos: the second player" in said
    one, two = board_score(final.first, 7).total, board_score(final.cells, 7).total
    if one == two:
        assert said[-1] == f"A draw: both scored {one} as Order."
    else:
        winner = "The first player" if 0 in final.result.winners else "The second player"
        assert said[-1] == f"{winner} won, {max(one, two)} to {min(one, two)}."
        assert final.result.scores == {1: one, 0: two}


def test_the_png_the_mail_carries_shows_the_counter_and_both_boards() -> None:
    waiting = next(s for s in states(size=5) if s.stage == PLACE and any(s.cells))
    svg = picture(waiting)
    sprites = group(ET.fromstring(svg), "next-counter").iter(f"{SVG}svg")
    [counter] = [box for box in sprites if box.find(f"{SVG}circle") is not None]
    [disc] = counter.iter(f"{SVG}circle")
    x = float(counter.get("x", "0")) + float(disc.get("cx", "0"))
    y = float(counter.get("y", "0")) + float(disc.get("cy", "0"))
    wanted = FILLS[LETTERS[waiting.drawn - 1]]
    for png in (png_of(svg), pictures.drawn_by_resvg(svg)):
        image = Image.open(io.BytesIO(png)).convert("RGB")
        found = image.getpixel((round(x - CELL * 0.25), round(y)))  # beside its letter
        colour = tuple(int(wanted[i : i + 2], 16) for i in (1, 3, 5))
        assert all(abs(a - b) <= 40 for a, b in zip(found, colour, strict=True))  # type: ignore[arg-type]
    final = states(size=5, seed=3)[-1]
    image = Image.open(io.BytesIO(png_of(picture(final))))
    assert image.format == "PNG" and image.width > 2 * (2 * MARGIN + 5 * CELL)
