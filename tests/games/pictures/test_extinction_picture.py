"""Extinction's picture shows the whole last move: the square it left in a pale yellow, the
square it reached in yellow; castling both king squares and both rook squares; promotions and en
passant captures too. A state keeps the square the move left, through storage, where the move
and the position do not tell it (``e4`` may come from e2 or e3)."""

from __future__ import annotations

import io
import json
import random
import xml.etree.ElementTree as ET

import chess
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pbmserv.games.base import StateError
from pbmserv.games.drawing import HIGHLIGHT, HIGHLIGHT_FROM
from pbmserv.games.extinction import GAME, ExtinctionState, position
from pbmserv.games.extinction.picture import square_corner
from pbmserv.games.testing import random_playout
from pbmserv.pictures import raster as pictures
from pbmserv.pictures.raster import png_of

RNG = random.Random(0)
SVG = "{http://www.w3.org/2000/svg}"


def play(texts: list[str], state: ExtinctionState | None = None) -> ExtinctionState:
    state = GAME.new_game({}, RNG) if state is None else state
    for text in texts:
        state = GAME.apply(state, GAME.parse_move(state, state.seat_to_move, text), RNG)
    return state


def filled(svg: str) -> dict[str, str]:
    """The squares drawn over in a colour, by name, with the colour: the picture covers a
    square of the last move with a sprite of class "lastmove <square>", a rect of the colour
    over the square's own."""
    found = {}
    for cover in ET.fromstring(svg).iter(f"{SVG}svg"):
        names = cover.get("class", "").split()
        if "lastmove" in names:
            [square] = [n for n in names if n in chess.SQUARE_NAMES]
            [rect] = cover.iter(f"{SVG}rect")
            found[square] = rect.get("fill", "")
    return found


def reloaded(state: ExtinctionState) -> ExtinctionState:
    return GAME.load(json.loads(json.dumps(GAME.dump(state))))


def highlights(state: ExtinctionState, viewer: int = 0) -> dict[str, str]:
    """The filled squares, the same for the state as played and as stored and loaded."""
    drawn = filled(GAME.svg(state, viewer))
    assert filled(GAME.svg(reloaded(state), viewer)) == drawn
    return drawn


def test_a_move_shows_the_square_it_left_and_the_square_it_reached() -> None:
    assert highlights(play(["e4"])) == {"e2": HIGHLIGHT_FROM, "e4": HIGHLIGHT}
    assert highlights(play(["e4", "Nf6"])) == {"g8": HIGHLIGHT_FROM, "f6": HIGHLIGHT}
    assert highlights(play(["e3", "e6", "e4"])) == {"e3": HIGHLIGHT_FROM, "e4": HIGHLIGHT}
    assert filled(GAME.svg(GAME.new_game({}, RNG), 0)) == {}  # no move yet


def test_castling_shows_both_king_squares_and_both_rook_squares() -> None:
    short = play(["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O"])
    assert highlights(short) == {
        "e1": HIGHLIGHT_FROM,
        "h1": HIGHLIGHT_FROM,
        "g1": HIGHLIGHT,
        "f1": HIGHLIGHT,
    }
    long = play(["d4", "d5", "Nc3", "Nc6", "Bf4", "Bf5", "Qd2", "Qd7", "e3", "O-O-O"])
    assert highlights(long, viewer=1) == {
        "e8": HIGHLIGHT_FROM,
        "a8": HIGHLIGHT_FROM,
        "c8": HIGHLIGHT,
        "d8": HIGHLIGHT,
    }


def test_promotion_and_en_passant_show_where_the_pawn_came_from() -> None:
    # White's b-pawn on b7; Black's b-pawn and b8 knight gone (every kind still on the board).
    promoting = position("r1bqkbnr/pPpppppp/8/8/8/8/P1PPPPPP/RNBQKBNR w KQkq - 0 1")
    assert highlights(play(["b8=Q"], promoting)) == {"b7": HIGHLIGHT_FROM, "b8": HIGHLIGHT}
    assert highlights(play(["bxa8=K"], promoting)) == {"b7": HIGHLIGHT_FROM, "a8": HIGHLIGHT}
    passing = play(["e4", "a6", "e5", "d5", "exd6"])
    assert highlights(passing) == {"e5": HIGHLIGHT_FROM, "d6": HIGHLIGHT}


def test_the_square_left_is_stored_only_where_the_move_and_position_leave_it_open() -> None:
    # e4 from e2 or e3? Stored. exd5 from e4: the SAN says. Nf3 with Ng1 before it: the
    # position before is among those since the last capture or pawn move.
    assert GAME.dump(play(["e4"]))["last_from"] == "e2"
    assert "last_from" not in GAME.dump(play(["e4", "d5", "exd5"]))
    assert "last_from" not in GAME.dump(play(["Nf3"]))
    # Nxd5 from c3, where b4, b6, e3, f4 and f6 are empty too: a capture leaves no position
    # before it to read the move in.
    capture = play(["e4", "d5", "Nc3", "a6", "Nxd5"])
    assert GAME.dump(capture)["last_from"] == "c3"
    assert reloaded(capture) == capture
    assert highlights(capture) == {"c3": HIGHLIGHT_FROM, "d5": HIGHLIGHT}


def test_a_state_stored_without_the_square_left_still_draws_the_square_reached() -> None:
    stored = GAME.dump(play(["e4", "d5", "Nc3", "a6", "Nxd5"]))
    del stored["last_from"]  # as stored before the square was kept
    old = GAME.load(stored)
    assert old.last_from is None
    assert filled(GAME.svg(old, 0)) == {"d5": HIGHLIGHT}


@pytest.mark.parametrize("left", ["a1", "z9", 12, ""])  # a knight on d5 never left a1
def test_load_refuses_a_square_left_that_does_not_fit(left: object) -> None:
    good = GAME.dump(play(["e4", "d5", "Nc3", "a6", "Nxd5"]))
    with pytest.raises(StateError):
        GAME.load({**good, "last_from": left})
    with pytest.raises(StateError):  # no move has been made
        GAME.load({**GAME.dump(position()), "last_from": "e2"})


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_every_move_of_a_game_is_drawn_from_where_it_left(seed: int) -> None:
    playout = random_playout(GAME, {}, seed)
    for step in playout.steps:
        state = step.after
        assert state.last_from == step.move.from_square
        assert reloaded(state).last_from == step.move.from_square
        left = chess.square_name(step.move.from_square)
        assert filled(GAME.svg(state, step.seat)).get(left) == HIGHLIGHT_FROM


def _square_corner(name: str, black_below: bool) -> tuple[int, int]:
    """A point just inside the top left corner of a square (pieces stand in the middle); the
    picture is drawn one unit a pixel."""
    orientation = chess.BLACK if black_below else chess.WHITE
    x, y = square_corner(chess.parse_square(name), orientation)
    return x + 4, y + 4


def near(found: tuple[int, ...], wanted: str, tolerance: int = 12) -> bool:
    colour = tuple(int(wanted[i : i + 2], 16) for i in (1, 3, 5))
    return all(abs(a - b) <= tolerance for a, b in zip(found, colour, strict=True))


def test_the_png_the_mail_carries_shows_both_squares_from_either_side() -> None:
    state = play(["e4", "e5", "Nf3"])
    for viewer in (0, 1):
        svg = GAME.svg(state, viewer)
        for png in (png_of(svg), pictures.drawn_by_resvg(svg)):
            image = Image.open(io.BytesIO(png)).convert("RGB")
            at = {
                name: image.getpixel(_square_corner(name, black_below=viewer == 1))
                for name in ("g1", "f3", "e4")
            }
            assert near(at["g1"], HIGHLIGHT_FROM)  # type: ignore[arg-type]
            assert near(at["f3"], HIGHLIGHT)  # type: ignore[arg-type]
            assert not near(at["e4"], HIGHLIGHT) and not near(at["e4"], HIGHLIGHT_FROM)  # type: ignore[arg-type]
