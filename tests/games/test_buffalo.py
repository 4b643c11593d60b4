"""Buffalo and Rebel Buffalo: the rules of SPEC 4.4 on positions built by hand."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games.base import IllegalMoveError, InvalidMoveError, StateError
from pbmserv.games.buffalo import (
    BLACK,
    COLS,
    GAME,
    WHITE,
    BuffaloState,
    name,
    square,
)
from pbmserv.games.testing import check_garbage

RNG = random.Random(0)


def idx(text: str) -> int:
    return square("abcdefghijk".index(text[0]), int(text[1:]))


def position(
    pieces: dict[str, str], to_move: int = BLACK, variant: str = "standard"
) -> BuffaloState:
    """A board with only ``pieces`` (square -> B, D or C) on it, ``to_move`` to play."""
    cells = ["."] * (COLS * 7)
    for where, piece in pieces.items():
        cells[idx(where)] = piece
    return BuffaloState(cells="".join(cells), variant=variant, ply=to_move)


def play(state: BuffaloState, *texts: str) -> BuffaloState:
    for text in texts:
        state = GAME.apply(state, GAME.parse_move(state, state.to_move, text), RNG)
    return state


def piece_at(state: BuffaloState, where: str) -> str:
    return state.cells[idx(where)]


def test_start_position() -> None:
    state = GAME.new_game({"variant": "standard"}, RNG)
    assert [name(i) for i, p in enumerate(state.cells) if p == "B"] == [
        f"{c}7" for c in "abcdefghijk"
    ]
    assert piece_at(state, "f2") == "C"
    assert [name(i) for i, p in enumerate(state.cells) if p == "D"] == ["d2", "e2", "g2", "h2"]
    assert GAME.to_move(state).seats == {BLACK}
    assert len(GAME.legal_moves(state, BLACK)) == 11 and GAME.legal_moves(state, WHITE) == []
    check_garbage(GAME, state)


def test_first_moves_in_every_notation() -> None:
    state = GAME.new_game({}, RNG)
    for text in ("e7-e6", "e7e6", "E7 e6", "e6"):
        assert GAME.format_move(state, GAME.parse_move(state, BLACK, text)) == "e7-e6"
    state = play(state, "e6", "d2-d5")
    assert piece_at(state, "e6") == "B" and piece_at(state, "d5") == "D"
    assert state.last_move == "d2-d5" and GAME.to_move(state).seats == {BLACK}


def test_chief_captures_a_buffalo_by_replacement() -> None:
    state = position({"f3": "B", "a7": "B", "f2": "C"}, to_move=WHITE)
    move = GAME.parse_move(state, WHITE, "f2xf3")
    assert GAME.format_move(state, move) == "f2xf3"
    after = GAME.apply(state, move, RNG)
    assert piece_at(after, "f3") == "C" and after.cells.count("B") == 1
    assert GAME.format_move(state, GAME.parse_move(state, WHITE, "f2-f3")) == "f2xf3"


def test_dogs_never_capture_and_chief_steps_only_one() -> None:
    state = position({"f3": "B", "a7": "B", "f2": "D", "c2": "C"}, to_move=WHITE)
    with pytest.raises(IllegalMoveError, match="dogs never capture"):
        GAME.parse_move(state, WHITE, "f2-f3")
    with pytest.raises(IllegalMoveError, match="chief steps one square"):
        GAME.parse_move(state, WHITE, "c2-c4")
    with pytest.raises(IllegalMoveError, match="without jumping"):
        GAME.parse_move(state, WHITE, "f2-f5")


def test_a_dog_is_blocked_by_the_rivers() -> None:
    state = position({"a7": "B", "d2": "D", "d6": "D", "k4": "C"}, to_move=WHITE)
    for text in ("d2-d1", "d6-d7"):
        with pytest.raises(IllegalMoveError, match="never crosses a river"):
            GAME.parse_move(state, WHITE, text)
    targets = {GAME.format_move(state, m) for m in GAME.legal_moves(state, WHITE)}
    assert "d2-d1" not in targets and "d6-d7" not in targets and "d2-d5" in targets


def test_a_buffalo_is_blocked_by_a_piece_and_never_moves_back_or_sideways() -> None:
    state = position({"e7": "B", "e6": "D", "c5": "B", "a2": "C"})
    with pytest.raises(IllegalMoveError, match="is taken; buffalo never capture"):
        GAME.parse_move(state, BLACK, "e7-e6")
    with pytest.raises(IllegalMoveError, match="one square straight towards row 1"):
        GAME.parse_move(state, BLACK, "c5-d5")
    with pytest.raises(IllegalMoveError, match="one square straight towards row 1"):
        GAME.parse_move(state, BLACK, "c5-c6")
    with pytest.raises(IllegalMoveError, match="e6 is taken"):
        GAME.parse_move(state, BLACK, "e6")
    with pytest.raises(IllegalMoveError, match="no buffalo can step to d6"):
        GAME.parse_move(state, BLACK, "d6")
    assert [GAME.format_move(state, m) for m in GAME.legal_moves(state, BLACK)] == ["c5-c4"]


def test_black_wins_on_row_one() -> None:
    state = position({"c2": "B", "a4": "B", "k6": "C", "f5": "D"})
    after = play(state, "c1")
    assert GAME.outcome(after).winners == {BLACK}  # type: ignore[union-attr]
    assert "row 1" in GAME.outcome(after).reason  # type: ignore[union-attr]
    assert GAME.to_move(after).seats == frozenset()


def test_white_wins_when_the_last_buffalo_is_captured() -> None:
    state = position({"f3": "B", "f2": "C", "a4": "D"}, to_move=WHITE)
    after = play(state, "f2xf3")
    assert GAME.outcome(after) is not None and GAME.outcome(after).winners == {WHITE}
    assert "every buffalo is captured" in GAME.outcome(after).reason


def test_white_wins_when_every_buffalo_is_blocked() -> None:
    state = position({"c5": "B", "c3": "B", "c2": "C", "a6": "D"}, to_move=WHITE)
    after = play(state, "a6-c4")  # c5 blocked by the dog, c3 by the chief
    assert GAME.outcome(after).winners == {WHITE}  # type: ignore[union-attr]
    assert "no buffalo can move" in GAME.outcome(after).reason  # type: ignore[union-attr]


def test_black_wins_when_white_cannot_move() -> None:
    # The chief on a2 and its dogs on a3, b3, b2 are walled in by buffalo the chief cannot
    # reach; Black's move k3-k2 leaves White without a move.
    pieces = {"a2": "C", "a3": "D", "b3": "D", "b2": "D", "k3": "B", "a7": "B"}
    pieces.update({w: "B" for w in ("a4", "b4", "c4", "c3", "c2")})
    state = position(pieces)
    assert GAME.legal_moves(state, BLACK)
    after = play(state, "k2")
    assert GAME.outcome(after).winners == {BLACK}  # type: ignore[union-attr]
    assert GAME.outcome(after).reason == "White cannot move"  # type: ignore[union-attr]


# --- Rebel Buffalo ---------------------------------------------------------------------------


def rebel(pieces: dict[str, str], to_move: int = BLACK) -> BuffaloState:
    return position(pieces, to_move, variant="rebel")


def test_enclosed_left_and_right_goes_home_to_the_nearest_row_two_square() -> None:
    state = rebel({"c5": "B", "e5": "B", "d5": "D", "e6": "B", "c6": "B", "f2": "C"})
    after = (
        play(state, "c6-c5")
        if False
        else play(rebel({"c5": "B", "e6": "B", "d5": "D", "f2": "C"}), "e5")
    )
    assert piece_at(after, "d5") == "." and piece_at(after, "d2") == "D"
    assert after.last_move == "e6-e5 dog:d2"


def test_enclosed_above_and_below_with_a_named_square() -> None:
    state = rebel({"d4": "B", "d7": "B", "d5": "D", "f2": "C"})
    after = play(state, "d7-d6 dog:a2")
    assert piece_at(after, "a2") == "D" and piece_at(after, "d5") == "."
    assert after.last_move == "d7-d6 dog:a2"


def test_enclosure_by_a_buffalo_arriving_on_either_side() -> None:
    for arriving, other in (("c6", "e5"), ("e6", "c5")):
        state = rebel({arriving: "B", other: "B", "d5": "D", "k2": "C"})
        after = play(state, arriving[0] + "5")
        assert piece_at(after, "d5") == "." and piece_at(after, "d2") == "D"


def test_a_diagonal_flank_does_not_count() -> None:
    state = rebel({"c6": "B", "e4": "B", "d5": "D", "k2": "C"})
    after = play(state, "c5")  # c5 is beside d5, but e4 is diagonal to it: no enclosure
    assert piece_at(after, "d5") == "D"
    with pytest.raises(IllegalMoveError, match="encloses 0 dog"):
        GAME.parse_move(state, BLACK, "c6-c5 dog:a2")


def test_two_dogs_enclosed_by_one_move_are_placed_in_board_order() -> None:
    # The buffalo arriving on e5 closes d5 (c5-e5) and f5 (e5-g5).
    state = rebel({"c5": "B", "g5": "B", "e6": "B", "d5": "D", "f5": "D", "k2": "C"})
    default = play(state, "e5")
    assert piece_at(default, "d2") == "D" and piece_at(default, "f2") == "D"
    assert default.last_move == "e6-e5 dog:d2 dog:f2"
    named = play(state, "e6-e5 dog:a2 dog:b2")
    assert piece_at(named, "a2") == "D" and piece_at(named, "b2") == "D"
    one_named = play(state, "e6-e5 dog:f2")  # the first (d5) goes to f2, the other by default
    assert one_named.last_move == "e6-e5 dog:f2 dog:e2"


def test_default_placement_prefers_the_lower_column_on_a_tie() -> None:
    state = rebel({"c5": "B", "e6": "B", "d5": "D", "d2": "C"})
    after = play(state, "e5")  # d2 is taken: c2 and e2 are as near, c2 wins
    assert piece_at(after, "c2") == "D"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("e6-e5 dog:b3", "goes back to row 2, not row 3"),
        ("e6-e5 dog:k2", "k2 is taken"),
        ("e6-e5 dog:a2 dog:b2", "at most 1 dog"),
        ("e6-e5 dog:zz", "write a dog's new square as dog:b2"),
    ],
)
def test_rebel_placement_mistakes(text: str, problem: str) -> None:
    state = rebel({"c5": "B", "e6": "B", "d5": "D", "k2": "C"})
    with pytest.raises((IllegalMoveError, InvalidMoveError), match=problem):
        GAME.parse_move(state, BLACK, text)


def test_dog_words_are_refused_outside_rebel() -> None:
    state = position({"c5": "B", "e6": "B", "d5": "D", "k2": "C"})
    with pytest.raises(IllegalMoveError, match="Rebel Buffalo only"):
        GAME.parse_move(state, BLACK, "e6-e5 dog:a2")
    assert piece_at(play(state, "e5"), "d5") == "D"  # no enclosure rule in the standard game


def test_load_rejects_bad_states() -> None:
    good = GAME.dump(GAME.new_game({}, RNG))
    assert GAME.dump(GAME.load(good)) == good
    for bad in (
        {**good, "cells": good["cells"][:-1]},
        {**good, "cells": "D" + good["cells"][1:]},  # a fifth dog, on a1
        {**good, "variant": "wild"},
        {**good, "winner": 3},
    ):
        with pytest.raises(StateError):
            GAME.load(bad)


# --- properties over random games ------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), variant=st.sampled_from(["standard", "rebel"]))
def test_random_games_keep_the_invariants(seed: int, variant: str) -> None:
    rng = random.Random(seed)
    state = GAME.new_game({"variant": variant}, rng)
    while GAME.outcome(state) is None:
        seat = state.to_move
        move = rng.choice(GAME.legal_moves(state, seat))
        before = state
        state = GAME.apply(state, move, rng)
        white = [name(i) for i, p in enumerate(state.cells) if p in "DC"]
        assert all(w[1] not in "17" for w in white), white
        assert state.cells.count("B") <= before.cells.count("B")
        if seat == BLACK:
            assert before.cells[move.src] == "B" and move.dst == move.src - COLS
        assert state.cells.count("D") == 4 and state.cells.count("C") == 1
