"""Chameleon: the seed's examples, the swap ruling, move errors, storage, and the incremental
win detection against an independent brute-force search."""

from __future__ import annotations

import json
import random
from collections import deque
from pathlib import Path

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import find_game
from pbmserv.games.base import (
    OMNISCIENT,
    PUBLIC,
    IllegalMoveError,
    InvalidMoveError,
    OptionError,
    StateError,
)
from pbmserv.games.chameleon import GAME, SWAP, ChameleonState, Place
from pbmserv.games.testing import random_playout

LETTERS = "abcdefghijklmnopqrstuvwxyz"
RNG = random.Random(0)  # Chameleon draws nothing; any generator will do


def new(size: int = 7) -> ChameleonState:
    return GAME.new_game(GAME.validate_options({"size": str(size)}, 2), random.Random(0))


def play(texts: list[str], size: int = 7) -> ChameleonState:
    """Play ``texts`` in turn (seat ply % 2 each time) from an empty board."""
    state = new(size)
    for text in texts:
        (seat,) = GAME.to_move(state).seats
        state = GAME.apply(state, GAME.parse_move(state, seat, text), RNG)
    return state


# The seed's three 7x7 examples, as printed in its help text.
SEED_HORZ_WINS = """\
        . . . . . . .
         . . . . . . .
          . . . . . . .
           o o o o o o o
            . . . . . . .
             . . . . . . .
              . . . . . . ."""
SEED_VERT_WINS = """\
        . . . o . . .
         . . . o . . .
          . . . o . . .
           . . . o . . .
            . . . o . . .
             . . . o . . .
              . . . o . . ."""
SEED_LAST_MOVER_WINS = """\
        . . . . . . x
         . . . . . x .
          . . . . x . .
           . . . x . . .
            . . x . . . .
             . x . . . . .
              x . . . . . ."""


def cells_of(diagram: str) -> list[str]:
    return [line.strip() for line in diagram.splitlines()]


def assert_same_picture(state: ChameleonState, diagram: str) -> None:
    """Same pieces as the seed's diagram, each row half a cell right of the one above."""
    lines = GAME.render(state, PUBLIC).splitlines()[1 : state.size + 1]
    drawn = []
    starts = []
    for row, line in enumerate(lines):
        label = str(row + 1)
        body = line[: -len(label)].rstrip()  # drop the right-hand row number
        start = line.index(label) + len(label) + 2
        drawn.append(body[start:])
        starts.append(start)
    assert drawn == cells_of(diagram)
    seed_starts = [len(line) - len(line.lstrip()) for line in diagram.splitlines()]
    assert [s - starts[0] for s in starts] == [s - seed_starts[0] for s in seed_starts]


# --- the seed's examples ---------------------------------------------------------------------


def test_horz_wins_with_a_row_of_o() -> None:
    # Both players place o on row 4; Vert's last o (the middle one) completes Horz's chain.
    state = play(["a4o", "g4o", "b4o", "f4o", "c4o", "e4o", "d4o"])
    assert_same_picture(state, SEED_HORZ_WINS)
    result = GAME.outcome(state)
    assert result is not None and result.winners == frozenset({1})
    assert result.reason == ("Horz wins: an o chain joins left and right, completed by Vert's move")
    assert GAME.to_move(state).seats == frozenset()


def test_horz_wins_with_own_move() -> None:
    state = play(
        ["a1x", "a4o", "c1x", "b4o", "e1x", "c4o", "g1x", "d4o", "b2x", "e4o"]
        + ["d2x", "f4o", "f2x", "g4o"]
    )
    result = GAME.outcome(state)
    assert result is not None and result.winners == frozenset({1})
    assert result.reason == "Horz wins: an o chain joins left and right"


def test_vert_wins_with_a_column_of_o() -> None:
    state = play(["d1o", "d7o", "d2o", "d6o", "d3o", "d5o", "d4o"])
    assert_same_picture(state, SEED_VERT_WINS)
    result = GAME.outcome(state)
    assert result is not None and result.winners == frozenset({0})
    assert result.reason == "Vert wins: an o chain joins top and bottom"


DIAGONAL = ["g1x", "a7x", "f2x", "b6x", "e3x", "c5x", "d4x"]


def test_last_mover_wins_when_vert_completes_both() -> None:
    state = play(DIAGONAL)  # seven moves: Vert (seat 0) places d4x last
    assert_same_picture(state, SEED_LAST_MOVER_WINS)
    result = GAME.outcome(state)
    assert result is not None and result.winners == frozenset({0})
    assert result.reason.startswith("Vert wins: the x chain joins top and bottom and ")
    assert result.reason.endswith("left and right at once, and the mover wins")


def test_last_mover_wins_when_horz_completes_both() -> None:
    state = play(["a1o", *DIAGONAL])  # one extra piece first: Horz (seat 1) places d4x last
    result = GAME.outcome(state)
    assert result is not None and result.winners == frozenset({1})
    assert result.reason.startswith("Horz wins: the x chain joins")


def test_last_mover_wins_after_a_swap() -> None:
    # g1x, swap, then the other x's: seat 1 (Vert after the swap) places d4x last.
    state = play(["g1x", "swap", "a7x", "f2x", "b6x", "e3x", "c5x", "d4x"])
    result = GAME.outcome(state)
    assert result is not None and result.winners == frozenset({1})
    assert result.reason.startswith("Vert wins: the x chain joins")


def test_a_chain_only_for_the_opponent_makes_the_opponent_win() -> None:
    # Horz (seat 1) completes an x column, which joins top and bottom only: Vert wins.
    state = play(["a1x", "c1o", "a2x", "a3x"], size=3)
    result = GAME.outcome(state)
    assert result is not None and result.winners == frozenset({0})
    assert result.reason == ("Vert wins: an x chain joins top and bottom, completed by Horz's move")


def test_mixed_chains_do_not_count() -> None:
    # x and o alternate down column d: no single-coloured chain, so nobody has won.
    state = play(["d1x", "d2o", "d3x", "d4o", "d5x", "d6o", "d7x"])
    assert GAME.outcome(state) is None
    assert GAME.to_move(state).seats == frozenset({1})


def test_a_chain_of_neighbours_along_the_other_diagonal_is_not_connected() -> None:
    # a1, b2, c3 do not touch on this board ((c+1, r+1) is not a neighbour).
    state = play(["a1x", "a3o", "b2x", "c1o", "c3x"], size=3)
    assert GAME.outcome(state) is None


# --- swap --------------------------------------------------------------------------------------


def test_swap_exchanges_roles_and_seat_0_moves_next() -> None:
    state = play(["c3x"], size=5)
    assert SWAP in GAME.legal_moves(state, 1)
    assert GAME.legal_moves(state, 0) == []
    swapped = GAME.apply(state, GAME.parse_move(state, 1, " Swap "), RNG)
    assert swapped.swapped and swapped.ply == 2 and swapped.last_move == "swap"
    assert swapped.vert_seat == 1 and swapped.role(0) == "Horz" and swapped.role(1) == "Vert"
    turn = GAME.to_move(swapped)
    assert turn.seats == frozenset({0})
    assert turn.prompts[0].startswith("as Horz, place an x or an o")
    assert swapped.piece_at(2, 2) == "x"  # the first piece stays where it was
    assert "Vert joins top and bottom (took the first piece by swap)" in GAME.render(swapped, 0)
    assert GAME.seat_name(swapped, 0) == "Horz" and GAME.seat_name(swapped, 1) == "Vert"
    assert GAME.seat_name(state, 0) == "Vert"
    assert not state.swapped and state.ply == 1  # the old state is untouched


def test_after_a_swap_seat_0_wins_as_horz() -> None:
    state = play(["a2o", "swap", "b2o", "a1x", "c2o"], size=3)
    result = GAME.outcome(state)
    assert result is not None and result.winners == frozenset({0})
    assert result.reason == "Horz wins: an o chain joins left and right"


@pytest.mark.parametrize(
    ("moves", "seat", "message"),
    [
        ([], 0, "you may swap only on the second move of the game, by the second player"),
        (["c3x"], 0, "it is not your turn; Horz is to move"),
        (["c3x", "d3o"], 0, "you may swap only on the second move of the game"),
        (["c3x", "d3o", "e3x"], 1, "you may swap only on the second move of the game"),
        (["c3x", "swap"], 0, "you may swap only on the second move of the game"),
        (["c3x", "swap", "a1x"], 1, "you may swap only on the second move of the game"),
    ],
)
def test_swap_only_on_the_second_move_by_seat_1(moves: list[str], seat: int, message: str) -> None:
    state = play(moves, size=5)
    with pytest.raises(IllegalMoveError) as caught:
        GAME.parse_move(state, seat, "swap")
    assert str(caught.value).startswith('"swap": ')
    assert message in str(caught.value)
    assert SWAP not in GAME.legal_moves(state, seat)


# --- notation and errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["f4x", "F4X", "f4 x", "f4-x", "x f4", "xf4", "X F4", "  f4x  ", "f4:x", "f04x"]
)
def test_notations_that_mean_f4x(text: str) -> None:
    state = new(11)
    move = GAME.parse_move(state, 0, text)
    assert move == Place(5, 3, "x")
    assert GAME.format_move(state, move) == "f4x"


def test_column_letters_x_and_o_are_cells_too() -> None:
    state = new(26)
    assert GAME.parse_move(state, 0, "x4o") == Place(23, 3, "o")
    assert GAME.parse_move(state, 0, "o12x") == Place(14, 11, "x")
    assert GAME.parse_move(state, 0, "ox4") == Place(23, 3, "o")
    assert GAME.format_move(state, Place(25, 25, "o")) == "z26o"


@pytest.mark.parametrize(
    ("moves", "seat", "text", "error", "message"),
    [
        (
            [],
            0,
            "zz",
            InvalidMoveError,
            '"zz" is not a Chameleon move: write a cell and a piece, like f4x or f4o, '
            'or "swap" on the second move',
        ),
        (
            [],
            0,
            "",
            InvalidMoveError,
            '"" is not a Chameleon move: write a cell and a piece, like f4x or f4o, '
            'or "swap" on the second move',
        ),
        (
            [],
            0,
            "f4",
            InvalidMoveError,
            '"f4" does not say which piece to place: add x or o, like f4x or f4o',
        ),
        (
            [],
            0,
            "xf4o",
            InvalidMoveError,
            '"xf4o" names two pieces: write one, like f4x or f4o',
        ),
        (
            [],
            0,
            "z9x",
            IllegalMoveError,
            '"z9x": there is no cell z9 on a 11x11 board (columns a-k, rows 1-11)',
        ),
        (
            [],
            0,
            "a0o",
            IllegalMoveError,
            '"a0o": there is no cell a0 on a 11x11 board (columns a-k, rows 1-11)',
        ),
        (
            [],
            0,
            "k12x",
            IllegalMoveError,
            '"k12x": there is no cell k12 on a 11x11 board (columns a-k, rows 1-11)',
        ),
        (
            ["f4x"],
            1,
            "F4O",
            IllegalMoveError,
            '"F4O": f4 is already taken by an x',
        ),
        (
            ["f4x"],
            0,
            "g4x",
            IllegalMoveError,
            '"g4x": it is not your turn; Horz is to move',
        ),
        (
            ["f4x", "swap"],
            1,
            "g4x",
            IllegalMoveError,
            '"g4x": it is not your turn; Horz is to move',
        ),
    ],
)
def test_move_errors(
    moves: list[str], seat: int, text: str, error: type[Exception], message: str
) -> None:
    state = play(moves, size=11)
    with pytest.raises(error) as caught:
        GAME.parse_move(state, seat, text)
    assert type(caught.value) is error
    assert str(caught.value) == message


def test_a_huge_row_number_is_just_off_the_board() -> None:
    text = "a" + "9" * 5000 + "x"
    with pytest.raises(IllegalMoveError, match="there is no cell a9999"):
        GAME.parse_move(new(), 0, text)
    with pytest.raises(StateError):
        GAME.load({**GOOD, "last_move": text})


def test_no_move_after_the_end() -> None:
    state = play(["a1x", "c1o", "a2x", "a3x"], size=3)
    for seat in (0, 1):
        with pytest.raises(IllegalMoveError, match=r'^"b2o": the game is over \(Vert wins'):
            GAME.parse_move(state, seat, "b2o")
        assert GAME.legal_moves(state, seat) == []
    with pytest.raises(IllegalMoveError):
        GAME.apply(state, Place(1, 1, "o"), RNG)


def test_errors_on_a_small_board_give_an_example_that_exists() -> None:
    state = new(3)
    with pytest.raises(IllegalMoveError, match=r"like c3x$"):
        GAME.parse_move(state, 0, "swap")
    assert GAME.to_move(state).prompts[0] == (
        "as Vert, place an x or an o on an empty cell, e.g. c3x"
    )


# --- options, legal moves, turns ------------------------------------------------------------


def test_options() -> None:
    assert find_game("Chameleon") is GAME
    assert GAME.validate_options({}, 2) == {"size": 11}
    assert GAME.validate_options({"size": "3"}, 2) == {"size": 3}
    assert GAME.validate_options({"SIZE": "26"}, 2) == {"size": 26}
    for bad in ({"size": "2"}, {"size": "27"}, {"size": "big"}, {"colour": "x"}):
        with pytest.raises(OptionError):
            GAME.validate_options(bad, 2)
    with pytest.raises(OptionError):
        GAME.validate_options({}, 3)
    with pytest.raises(OptionError):
        GAME.new_game({"size": 27}, RNG)


@pytest.mark.parametrize("size", [3, 26])
def test_extreme_sizes_play_to_the_end(size: int) -> None:
    rng = random.Random(size)
    state = new(size)
    while GAME.outcome(state) is None:
        seat = state.ply % 2
        state = GAME.apply(state, rng.choice(GAME.legal_moves(state, seat)), RNG)
    assert state.ply <= size * size + 1
    assert GAME.load(json.loads(json.dumps(GAME.dump(state)))) == state


def test_legal_moves() -> None:
    start = new(3)
    assert len(GAME.legal_moves(start, 0)) == 18
    assert GAME.legal_moves(start, 1) == []
    after = play(["b2o"], size=3)
    moves = GAME.legal_moves(after, 1)
    assert moves[0] == SWAP and len(moves) == 17
    assert Place(1, 1, "x") not in moves
    assert SWAP not in GAME.legal_moves(play(["b2o", "a1x"], size=3), 0)


def test_turns_and_record_helpers() -> None:
    state = new(11)
    assert GAME.to_move(state).seats == frozenset({0})
    assert GAME.to_move(state).prompts == {
        0: "as Vert, place an x or an o on an empty cell, e.g. f4x"
    }
    state = play(["f4x"], size=11)
    assert GAME.to_move(state).prompts == {
        1: "as Horz, place an x or an o on an empty cell, e.g. f4x, or swap"
    }
    assert GAME.move_number(state) == 1 and GAME.last_move_text(state) == "f4x"
    assert GAME.move_number(new()) == 0 and GAME.last_move_text(new()) is None


def test_apply_never_changes_the_old_state() -> None:
    before = play(["a1x", "a3o", "b2x"], size=5)
    saved = GAME.dump(before)
    for move in GAME.legal_moves(before, 1):
        GAME.apply(before, move, RNG)
    assert GAME.dump(before) == saved
    assert before == GAME.load(saved)


# --- the diagram -------------------------------------------------------------------------------


def test_diagram_of_a_small_board() -> None:
    state = play(["b2x", "c3o"], size=5)
    expected = """\
    a b c d e
 1  . . . . .  1
  2  . x . . .  2
   3  . . o . .  3
    4  . . . . .  4
     5  . . . . .  5
         a b c d e

Vert joins top and bottom (moved first); Horz joins left and right."""
    for viewer in (0, 1, PUBLIC, OMNISCIENT):
        assert GAME.render(state, viewer) == expected


def test_diagram_of_the_largest_board_keeps_its_columns() -> None:
    picture = GAME.render(play(["a1x", "z26o", "j10x"], size=26), PUBLIC).splitlines()
    assert picture[0] == "     " + " ".join(LETTERS)
    assert picture[1].startswith("  1  x . .") and picture[1].endswith(".  1")
    assert picture[10] == " " * 10 + "10  " + ". " * 9 + "x" + " ." * 16 + "  10"
    assert picture[26].startswith(" " * 26 + "26  . .") and picture[26].endswith("o  26")
    assert picture[27] == " " * 31 + " ".join(LETTERS)
    # Each row starts one character further right: the rhombus of the seed's diagrams.
    for row in range(1, 27):
        line = picture[row]
        assert line.startswith(" " * (row - 1) + f" {row:>2}  ")
        assert len(line) == row - 1 + 5 + 51 + 2 + len(str(row))


def test_finished_game_reason_names_the_role() -> None:
    # The server puts the result under the diagram; the reason it shows comes from here.
    state = play(["a1x", "c1o", "a2x", "a3x"], size=3)
    assert GAME.outcome(state).reason == (
        "Vert wins: an x chain joins top and bottom, completed by Horz's move"
    )


# --- storage -------------------------------------------------------------------------------------


def test_dump_format() -> None:
    state = play(["b2x", "swap", "c3o"], size=3)
    assert GAME.dump(state) == {
        "version": 1,
        "size": 3,
        "board": ["...", ".x.", "..o"],
        "swapped": True,
        "ply": 3,
        "last_move": "c3o",
        "result": None,
    }
    finished = play(["a1x", "c1o", "a2x", "a3x"], size=3)
    data = GAME.dump(finished)
    assert data["result"] == {
        "winners": [0],
        "reason": "Vert wins: an x chain joins top and bottom, completed by Horz's move",
    }
    restored = GAME.load(json.loads(json.dumps(data)))
    assert restored == finished and GAME.outcome(restored) == GAME.outcome(finished)
    # The rebuilt union-find carries on correctly from a loaded state.
    mid = GAME.load(GAME.dump(play(["a1x", "c1o", "a2x"], size=3)))
    assert GAME.outcome(GAME.apply(mid, Place(0, 2, "x"), RNG)) == GAME.outcome(finished)


GOOD = {
    "version": 1,
    "size": 3,
    "board": ["x..", "x.o", "..."],
    "swapped": False,
    "ply": 3,
    "last_move": "a2x",
    "result": None,
}


@pytest.mark.parametrize(
    "change",
    [
        {"version": 2},
        {"size": 2},
        {"size": "3"},
        {"size": True},
        {"board": ["x..", "x.o"]},
        {"board": ["x..", "x.o", "...."]},
        {"board": "x..x.o..."},
        {"board": ["x..", "x.o", "..#"]},
        {"swapped": 1},
        {"ply": 4},
        {"ply": "3"},
        {"swapped": True},
        {"last_move": "b1x"},
        {"last_move": "a2o"},
        {"last_move": "A2X"},
        {"last_move": "xa2"},
        {"last_move": "d2x"},
        {"last_move": None},
        {"last_move": 7},
        # A result is one winner and a reason, and only after a move that placed a piece.
        {"result": {"winners": [0, 1], "reason": "?"}},
        {"result": {"winners": [], "reason": "?"}},
        {"result": {"winners": [2], "reason": "?"}},
        {"result": {"winners": [True], "reason": "?"}},
        {"result": {"winners": [0]}},
        {"result": "Vert wins"},
        {"board": ["...", ".x.", "..."], "ply": 2, "swapped": True, "last_move": "swap"}
        | {"result": {"winners": [1], "reason": "?"}},
        {"board": ["...", "...", "..."], "ply": 0, "last_move": "a1x"},
        {"board": ["x..", "...", "..."], "ply": 2, "swapped": True, "last_move": "a1x"},
    ],
)
def test_load_rejects_bad_data(change: dict) -> None:
    with pytest.raises(StateError):
        GAME.load({**GOOD, **change})


@pytest.mark.parametrize(
    ("change", "winners"),
    [
        ({"result": {"winners": [0], "reason": "made up"}}, {0}),
        # A finished board without its result, or with the wrong winner.
        ({"board": ["x..", "x.o", "x.."], "ply": 4, "last_move": "a3x"}, None),
        (
            {
                "board": ["x..", "x.o", "x.."],
                "ply": 4,
                "last_move": "a3x",
                "result": {"winners": [1], "reason": "?"},
            },
            {1},
        ),
        # The chain was complete before the last move: the game should have ended then.
        ({"board": ["x..", "x.o", "x.o"], "ply": 5, "last_move": "c3o"}, None),
    ],
)
def test_load_takes_the_result_as_stored_without_searching_the_board(
    change: dict, winners: set[int] | None
) -> None:
    """Whether the stored result is what the chains give needs a search of the board, in
    proportion to the pieces, which load no longer makes (issue 16): the states play makes
    always agree with the chains (test_incremental_result_matches_brute_force), and only dump
    writes states. What such a state says is what was stored."""
    data = {**GOOD, **change}
    state = GAME.load(data)
    outcome = GAME.outcome(state)
    assert (None if outcome is None else set(outcome.winners)) == winners
    assert GAME.dump(state) == data


def test_load_accepts_good_data() -> None:
    assert GAME.dump(GAME.load(GOOD)) == GOOD
    ended = {
        **GOOD,
        "board": ["x..", "x.o", "x.."],
        "ply": 4,
        "last_move": "a3x",
        "result": {"winners": [0], "reason": "anything"},
    }
    assert GAME.outcome(GAME.load(ended)).winners == frozenset({0})
    with pytest.raises(StateError):
        GAME.load([])  # type: ignore[arg-type]


# --- the incremental union-find against brute force ---------------------------------------


def brute_force_joins(rows: list[str]) -> tuple[bool, bool]:
    """(top-bottom, left-right): whether a one-coloured chain joins those edges, found by a
    breadth-first search written independently of the game module."""
    n = len(rows)
    steps = ((-1, 0), (1, 0), (0, -1), (1, -1), (0, 1), (-1, 1))

    def joins(piece: str, starts: list[tuple[int, int]], done) -> bool:
        seen = {s for s in starts if rows[s[1]][s[0]] == piece}
        queue = deque(seen)
        while queue:
            c, r = queue.popleft()
            if done(c, r):
                return True
            for dc, dr in steps:
                nc, nr = c + dc, r + dr
                if 0 <= nc < n and 0 <= nr < n and (nc, nr) not in seen and rows[nr][nc] == piece:
                    seen.add((nc, nr))
                    queue.append((nc, nr))
        return False

    top = [(c, 0) for c in range(n)]
    left = [(0, r) for r in range(n)]
    vert = any(joins(p, top, lambda c, r: r == n - 1) for p in "xo")
    horz = any(joins(p, left, lambda c, r: c == n - 1) for p in "xo")
    return vert, horz


def check_random_game(size: int, seed: int, swap: bool) -> None:
    rng = random.Random(seed)
    cells = [f"{LETTERS[c]}{r + 1}" for c in range(size) for r in range(size)]
    rng.shuffle(cells)
    state = new(size)
    while True:
        seat = state.ply % 2
        text = "swap" if swap and state.ply == 1 else cells.pop() + rng.choice("xo")
        saved = GAME.dump(state)
        after = GAME.apply(state, GAME.parse_move(state, seat, text), RNG)
        assert GAME.dump(state) == saved  # apply left the old state alone
        vert, horz = brute_force_joins(GAME.dump(after)["board"])
        vert_seat = 1 if after.swapped else 0
        if vert and horz:
            expected = {seat}
        elif vert:
            expected = {vert_seat}
        elif horz:
            expected = {1 - vert_seat}
        else:
            expected = None
        result = GAME.outcome(after)
        assert (None if result is None else set(result.winners)) == expected, (text, after.ply)
        if result is not None:
            return
        state = after


@settings(max_examples=60, deadline=None)
@given(size=st.integers(3, 12), seed=st.integers(0, 2**32 - 1), swap=st.booleans())
def test_incremental_result_matches_brute_force(size: int, seed: int, swap: bool) -> None:
    check_random_game(size, seed, swap)


@pytest.mark.parametrize("seed", [1, 2])
def test_incremental_result_matches_brute_force_on_the_largest_board(seed: int) -> None:
    check_random_game(26, seed, swap=seed == 2)


# --- the help file ---------------------------------------------------------------------------


def test_help_file_renders_and_its_example_board_is_what_the_server_draws() -> None:
    path = Path(__file__).resolve().parents[2] / "templates" / "help" / "chameleon.txt.j2"
    text = jinja2.Template(path.read_text()).render(server_address="pbm@example.org")
    assert "pbm@example.org" in text
    for line in (
        "chameleon challenge [-size=N] USERID1 USERID2",
        "chameleon move BOARD USERID PASSWORD f4x",
        "chameleon move BOARD USERID PASSWORD swap",
        "chameleon swap BOARD USERID PASSWORD",
    ):
        assert line in text
    board = play(["d2o", "b5x", "e6o", "f3x"])
    drawn = "\n".join(f"   {line}" if line else "" for line in GAME.render(board, 0).splitlines())
    assert drawn in text
    for diagram in (SEED_HORZ_WINS, SEED_VERT_WINS, SEED_LAST_MOVER_WINS):
        assert cells_of(diagram)[3] in text


def test_load_late_in_long_games_rebuilds_a_union_find_that_plays_on_alike() -> None:
    """Every position of random 11x11 games survives dump and load, and the next move played
    on the loaded state gives what it gave on the played one (the rebuilt union-find)."""
    for seed in range(4):
        playout = random_playout(GAME, {"size": 11}, seed)
        assert len(playout.steps) > 40
        for step in playout.steps:
            data = json.loads(json.dumps(GAME.dump(step.before)))
            loaded = GAME.load(data)
            assert loaded == step.before and GAME.dump(loaded) == data
            after = GAME.apply(loaded, step.move, RNG)
            assert after == step.after and GAME.outcome(after) == GAME.outcome(step.after)
