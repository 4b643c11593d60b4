"""Owlman: the seed's sample opening and endings, and every rule point of SPEC 4.1."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games.base import IllegalMoveError, InvalidMoveError, StateError
from pbmserv.games.owlman import (
    GAME,
    OWLMAN,
    WHITE,
    OwlmanState,
    index,
    is_light,
    name,
)
from pbmserv.games.testing import check_garbage

RNG = random.Random(0)


def position(
    pieces: dict[str, str], to_move: int = WHITE, variant: str = "nightfall", ply: int | None = None
) -> OwlmanState:
    """Only ``pieces`` (square -> K, H or O) on the board; ``ply`` fixes the move count."""
    cells = ["."] * 64
    for where, piece in pieces.items():
        cells[index(where)] = piece
    return OwlmanState(cells="".join(cells), variant=variant, ply=to_move if ply is None else ply)


def play(state: OwlmanState, *texts: str) -> OwlmanState:
    for text in texts:
        state = GAME.apply(state, GAME.parse_move(state, state.to_move, text), RNG)
    return state


def pieces(state: OwlmanState) -> dict[str, str]:
    return {name(i): p for i, p in enumerate(state.cells) if p != "."}


def test_start_and_notation() -> None:
    state = GAME.new_game({}, RNG)
    assert pieces(state)["h1"] == "K" and pieces(state)["a8"] == "O"
    assert sorted(k for k, v in pieces(state).items() if v == "H") == sorted(
        ["d1", "f1", "e2", "g2", "d3", "f3", "h3", "e4", "g4", "d5", "f5", "h5"]
    )
    for text in ("d3-c4", "d3c4", "d3 c4", "D3-C4"):
        assert GAME.format_move(state, GAME.parse_move(state, WHITE, text)) == "d3-c4"
    check_garbage(GAME, state)


def test_the_seeds_sample_opening() -> None:
    state = GAME.new_game({}, RNG)
    line = [
        ("d3-c4", "a8-b7(xd5)"),
        ("f5-e6", "b7-c6(xd5)"),  # written as in the seed: it captures e4, so it is refused
    ]
    state = play(state, *line[0])
    with pytest.raises(IllegalMoveError, match="b7-c6 captures e4, not d5"):
        GAME.parse_move(play(state, "f5-e6"), OWLMAN, "b7-c6(xd5)")
    moves = [
        "f5-e6", "b7-c6",
        "d1-c2", "c6-d5(xf3)",
        "h5-g6", "d5-c8",
        "e6-d7", "c8-f7",
        "c4-b5", "f7-e4",
        "g2-f3", "e4-d3",
    ]  # fmt: skip
    texts = []
    for move in moves:
        parsed = GAME.parse_move(state, state.to_move, move)
        texts.append(GAME.format_move(state, parsed))
        state = GAME.apply(state, parsed, RNG)
    assert texts == [
        "f5-e6", "b7-c6(xe4)",
        "d1-c2", "c6-d5(xf3)",
        "h5-g6", "d5-c8",
        "e6-d7", "c8-f7",
        "c4-b5", "f7-e4",
        "g2-f3", "e4-d3(xc2)",  # the fork of c2 and g6 the seed mentions, taken
    ]  # fmt: skip
    helpers = ["f1", "e2", "f3", "b5", "h3", "g4", "d7", "g6"]
    expected = {**{h: "H" for h in helpers}, "h1": "K", "d3": "O"}
    assert pieces(state) == expected
    assert GAME.outcome(state) is None and state.white_moves == 7


FIG_6 = {"b7": "K", "c8": "H", "a6": "H"}  # Doc b7, helpers c8 and a6 (our reading of Fig. 6)


def test_ending_i_owlman_on_h1_wins_by_super_swoop() -> None:
    # The only reading of Fig. 6 under which 2.c8-d7 is forced: Doc b7, helpers c8 and a6.
    state = play(position({**FIG_6, "h1": "O"}, to_move=OWLMAN), "h1xa6")
    for move in GAME.legal_moves(state, WHITE):  # anything but c8-d7 loses the c8 helper
        after = GAME.apply(state, move, RNG)
        if GAME.format_move(state, move) != "c8-d7":
            assert GAME.outcome(play(after, "a6-b7")).winners == {OWLMAN}  # type: ignore[union-attr]
    state = play(
        state,
        "c8-d7", "a6-b5", "d7-c6", "b5-e4", "c6-d7",
        "e4-f5", "d7-c6", "f5-g2", "c6-d7", "g2-h1", "d7-c6",
    )  # fmt: skip
    assert [GAME.format_move(state, m) for m in GAME.legal_moves(state, OWLMAN)] == ["h1-c6(xc6)"]
    state = play(state, "h1xc6")
    assert GAME.outcome(state).winners == {OWLMAN}  # type: ignore[union-attr]
    assert GAME.outcome(state).reason == "Owlman scared away every helper"  # type: ignore[union-attr]


def test_ending_i_the_formation_wins_for_white_wherever_owlman_stands() -> None:
    # "wins for White, no matter where Owlman is placed, unless he is already on h1 and has
    # the next turn": with White to move, White forces the win within three moves.
    for square in range(64):
        if is_light(square) and name(square) not in (*FIG_6, "h1"):
            state = position({**FIG_6, name(square): "O"})
            assert _white_wins_within(state, 3), name(square)


def _white_wins_within(state: OwlmanState, white_moves: int) -> bool:
    """Brute force: can White force a win within ``white_moves`` more White moves?"""
    result = GAME.outcome(state)
    if result is not None:
        return result.winners == {WHITE}
    if state.to_move == OWLMAN:
        return all(
            _white_wins_within(GAME.apply(state, m, RNG), white_moves)
            for m in GAME.legal_moves(state, OWLMAN)
        )
    if white_moves == 0:
        return False
    return any(
        _white_wins_within(GAME.apply(state, m, RNG), white_moves - 1)
        for m in GAME.legal_moves(state, WHITE)
    )


def test_ending_ii_with_and_without_the_h3_helper() -> None:
    # Fig. 7: Doc a8, helpers b5 and c4 (and h3); Owlman on h1 to move.
    without = position({"a8": "K", "b5": "H", "c4": "H", "h1": "O"}, to_move=OWLMAN)
    line = play(
        without,
        "h1xb5", "c4-d5", "b5-e4", "d5-c4", "e4-f1", "c4-d5", "f1-g2", "d5-c4", "g2-h1",
    )  # fmt: skip
    assert GAME.legal_moves(line, WHITE)
    line = play(line, "c4-d5", "h1xd5")
    assert GAME.outcome(line).winners == {OWLMAN}  # type: ignore[union-attr]
    # Without h3, were it Owlman's turn again after 1...h1xb5, White would still win.
    after_swoop = play(without, "h1xb5")
    assert _white_wins_within(replace_turn(after_swoop, OWLMAN), 3)
    # With h3, the waiting move 2.h3-g4 gives White exactly that.
    with_h3 = position({"a8": "K", "b5": "H", "c4": "H", "h3": "H", "h1": "O"}, to_move=OWLMAN)
    waited = play(with_h3, "h1xb5", "h3-g4")
    assert _white_wins_within(waited, 3)


def replace_turn(state: OwlmanState, seat: int) -> OwlmanState:
    return OwlmanState(state.cells, state.variant, state.ply + (state.to_move != seat))


def _shuffle_ending(variant: str) -> OwlmanState:
    """Fig. 8 (Doc a8, helper c8, Owlman b7, White to move) played as the seed describes:
    White shuffles c8-d7-c8 and takes b7 when it can; Owlman keeps coming back to b7."""
    state = position({"a8": "K", "c8": "H", "b7": "O"}, variant=variant)
    state = play(state, "c8-d7", "b7-a4", "d7-c8", "a4-b7", "c8-d7", "b7-c6", "d7-c8", "c6-b7")
    while GAME.outcome(state) is None and state.ply < 200:
        legal = GAME.legal_moves(state, state.to_move)
        texts = {GAME.format_move(state, m): m for m in legal}
        if state.to_move == WHITE:
            pick = next((t for t in texts if t.endswith("-b7")), None) or sorted(texts)[0]
        else:
            here = name(state.cells.index("O"))
            pick = next((t for t in texts if t.endswith("-b7")), None) if here != "b7" else None
            pick = pick or sorted(texts)[0]
        state = GAME.apply(state, texts[pick], RNG)
    return state


def test_ending_iii_classic_the_repetition_rule_lets_white_win() -> None:
    state = position({"a8": "K", "c8": "H", "b7": "O"}, variant="classic")
    state = play(state, "c8-d7", "b7-a4", "d7-c8", "a4-b7", "c8-d7")
    with pytest.raises(IllegalMoveError, match="White demands that he vary"):
        GAME.parse_move(state, OWLMAN, "b7-a4")
    ended = _shuffle_ending("classic")
    assert GAME.outcome(ended).winners == {WHITE}  # type: ignore[union-attr]
    # Under nightfall there is no such rule: the same play runs on until night falls.
    dark = _shuffle_ending("nightfall")
    assert GAME.outcome(dark).winners == {OWLMAN}  # type: ignore[union-attr]
    assert GAME.outcome(dark).reason.startswith("night fell")  # type: ignore[union-attr]


def test_nightfall_after_white_move_49() -> None:
    state = GAME.new_game({}, RNG)
    shuffle = ["h5-g6", "a8-d7", "g6-h5", "d7-a8"]
    for k in range(97):
        assert GAME.outcome(state) is None
        state = play(state, shuffle[k % 4])
    assert state.white_moves == 49
    assert GAME.outcome(state).winners == {OWLMAN}  # type: ignore[union-attr]
    assert "49" in GAME.outcome(state).reason  # type: ignore[union-attr]
    assert "left to win" not in GAME.render(state, WHITE)  # the game is over


def test_white_winning_on_move_49_is_a_white_win() -> None:
    state = position({"a8": "K", "c8": "H", "e4": "H", "g2": "O"}, ply=96)
    assert "made 48 of 49 moves; 1 move left to win" in GAME.render(state, WHITE)
    state = play(state, "c8-b7")
    assert GAME.outcome(state).winners == {WHITE}  # type: ignore[union-attr]
    assert GAME.outcome(state).reason == "Doc and a helper reached the lair"  # type: ignore[union-attr]


def test_trapped_owlman_loses() -> None:
    state = position({"a8": "O", "b7": "H", "b5": "H", "e8": "H", "h1": "K"})
    state = play(state, "e8-d7")
    assert GAME.outcome(state).winners == {WHITE}  # type: ignore[union-attr]
    assert GAME.outcome(state).reason == "Owlman is trapped"  # type: ignore[union-attr]


@pytest.mark.parametrize("owlman_on", ["g2", "e2", "g4"])  # a step, then two swoops
def test_doc_is_captured_on_h1_by_step_or_swoop(owlman_on: str) -> None:
    state = position({"h1": "K", owlman_on: "O", "a4": "H"}, to_move=OWLMAN)
    move = GAME.parse_move(state, OWLMAN, f"{owlman_on}-h1")
    assert GAME.format_move(state, move) == f"{owlman_on}-h1(xh1)"
    after = GAME.apply(state, move, RNG)
    assert GAME.outcome(after).winners == {OWLMAN}  # type: ignore[union-attr]
    assert GAME.outcome(after).reason == "Owlman captured Doc on h1"  # type: ignore[union-attr]


def test_doc_elsewhere_is_safe_and_helper_captures_need_a_step_towards_them() -> None:
    state = position({"d5": "O", "b3": "H", "f7": "K", "a6": "H"}, to_move=OWLMAN)
    assert GAME.format_move(state, GAME.parse_move(state, OWLMAN, "d5-e6")) == "d5-e6"  # Doc stops
    with pytest.raises(IllegalMoveError, match="captures b3, not a2"):
        GAME.parse_move(state, OWLMAN, "d5-c4(xa2)")
    with pytest.raises(IllegalMoveError, match="d5-c2 captures nothing, not b1"):
        GAME.parse_move(state, OWLMAN, "d5-c2(xb1)")
    swoop = GAME.parse_move(state, OWLMAN, "d5-c2")
    assert GAME.format_move(state, swoop) == "d5-c2"  # a swoop never captures
    after = play(state, "d5-c4")
    assert GAME.outcome(after) is None and "b3" not in pieces(after)
    last = play(position({"d5": "O", "b3": "H", "f7": "K"}, to_move=OWLMAN), "d5-c4")
    assert GAME.outcome(last).reason == "Owlman scared away every helper"  # type: ignore[union-attr]


def test_the_seeds_figure_2() -> None:
    # Owlman c6, helpers f3, e8 and b5, Doc at home: "advance to d5 and capture f3, or to d7
    # and capture e8. The helper on b5, however, cannot be captured."
    state = position({"c6": "O", "f3": "H", "e8": "H", "b5": "H", "h1": "K"}, to_move=OWLMAN)
    legal = sorted(GAME.format_move(state, m) for m in GAME.legal_moves(state, OWLMAN))
    steps = ["c6-b7", "c6-d5(xf3)", "c6-d7(xe8)"]  # b5 is taken, so no step there
    swoops = ["c6-b3", "c6-d3", "c6-f5", "c6-f7"]
    assert legal == sorted(steps + swoops)


def test_an_adjacent_helper_cannot_be_captured() -> None:
    state = position({"d5": "O", "c4": "H", "f7": "K"}, to_move=OWLMAN)
    with pytest.raises(IllegalMoveError, match="c4 is taken; Owlman scares a helper away"):
        GAME.parse_move(state, OWLMAN, "d5-c4")
    # Stepping away from c4 along the same diagonal scares nothing either.
    assert GAME.format_move(state, GAME.parse_move(state, OWLMAN, "d5-e6")) == "d5-e6"


def test_white_never_captures_and_owlmans_prompt_names_his_square() -> None:
    state = GAME.new_game({}, RNG)
    with pytest.raises(IllegalMoveError, match="only Owlman captures; write just d3-c4"):
        GAME.parse_move(state, WHITE, "d3-c4(xb5)")
    white_example = GAME.to_move(state).prompts[WHITE].rsplit("like ", 1)[1].rstrip(")")
    GAME.parse_move(state, WHITE, white_example)
    state = play(state, "d3-c4")
    prompt = GAME.to_move(state).prompts[OWLMAN]
    assert "from a8" in prompt
    example = prompt.rsplit("like ", 1)[1].rstrip(")")
    GAME.parse_move(state, OWLMAN, example)  # the example in the prompt is a legal move


def test_super_swoop_is_forced_from_h1() -> None:
    state = position({"h1": "O", "a6": "H", "c4": "H", "f7": "K"}, to_move=OWLMAN)
    legal = sorted(GAME.format_move(state, m) for m in GAME.legal_moves(state, OWLMAN))
    assert legal == ["h1-a6(xa6)", "h1-c4(xc4)"]
    with pytest.raises(IllegalMoveError, match="must super swoop"):
        GAME.parse_move(state, OWLMAN, "h1-g2")
    assert GAME.format_move(state, GAME.parse_move(state, OWLMAN, "h1xa6")) == "h1-a6(xa6)"


def test_classic_forgets_positions_that_a_capture_made_unreachable() -> None:
    # Owlman d5 shuffles to c6 and back while White shuffles a helper; then d5-c4 takes b3.
    state = position({"d5": "O", "b3": "H", "h7": "H", "a8": "K"}, OWLMAN, "classic")
    state = play(state, "d5-c6", "h7-g8", "c6-d5", "g8-h7")
    assert len(state.played) == 2
    with pytest.raises(IllegalMoveError, match="White demands that he vary"):
        GAME.parse_move(state, OWLMAN, "d5-c6")
    state = play(state, "d5-c4")
    assert "b3" not in pieces(state) and state.played == frozenset()


def test_nightfall_line_counts_white_moves() -> None:
    state = play(GAME.new_game({}, RNG), "d3-c4")
    assert "White has made 1 of 49 moves; 48 moves left to win." in GAME.render(state, OWLMAN)
    classic = GAME.new_game({"variant": "classic"}, RNG)
    assert "Nightfall" not in GAME.render(classic, WHITE)


def test_white_never_reenters_h1_and_trees_are_refused() -> None:
    state = position({"g2": "K", "a8": "O", "b3": "H"})
    with pytest.raises(IllegalMoveError, match="h1 is closed to White"):
        GAME.parse_move(state, WHITE, "g2-h1")
    at_home = GAME.new_game({}, RNG)
    with pytest.raises(IllegalMoveError, match="Doc's church tower and he is still on it"):
        GAME.parse_move(at_home, WHITE, "g2-h1")
    with pytest.raises(IllegalMoveError, match="is a dark square"):
        GAME.parse_move(state, WHITE, "b3-b4")
    with pytest.raises(InvalidMoveError):
        GAME.parse_move(state, WHITE, "b3-z9")


def test_load_rejects_bad_states() -> None:
    good = GAME.dump(GAME.new_game({}, RNG))
    assert GAME.dump(GAME.load(good)) == good
    for bad in (
        {**good, "cells": good["cells"][:-1]},
        {**good, "cells": "H" + good["cells"][1:]},  # a helper on a1, a tree
        {**good, "variant": "dusk"},
        {**good, "played": "x"},
        {**good, "played": [good["cells"] + "|a8-b7"]},  # nightfall keeps no such record
        {**good, "winner": 1, "reason": "Owlman captured Doc on h1"},  # Doc is still there
        {**good, "winner": True},
        {**good, "ply": 3},  # moves made, yet no last move
        {**good, "last_move": "a8-b7"},  # a last move before any move
        "not a mapping",
    ):
        with pytest.raises(StateError):
            GAME.load(bad)  # type: ignore[arg-type]
    # A finished classic game with its repetition record survives the round trip.
    ended = _shuffle_ending("classic")
    assert GAME.load(GAME.dump(ended)) == ended
    with pytest.raises(StateError, match="does not match"):  # the result was dropped
        GAME.load({**GAME.dump(ended), "winner": None, "reason": ""})


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), variant=st.sampled_from(["nightfall", "classic"]))
def test_random_games_keep_the_invariants(seed: int, variant: str) -> None:
    rng = random.Random(seed)
    state = GAME.new_game({"variant": variant}, rng)
    doc_left = False
    while GAME.outcome(state) is None:
        seat = state.to_move
        move = rng.choice(GAME.legal_moves(state, seat))
        before = state
        state = GAME.apply(state, move, rng)
        assert is_light(move.dst)
        target = before.cells[move.dst]
        assert target == "." or (move.capture == move.dst), (before.cells, move)
        if seat == WHITE:
            assert name(move.dst) != "h1"
        doc_left = doc_left or state.cells[index("h1")] != "K"
        if doc_left:  # h1 is closed to White from then on
            assert state.cells[index("h1")] in ".O"
        fell = sum(p != "." for p in before.cells) - sum(p != "." for p in state.cells)
        assert fell == (move.capture is not None)  # one piece goes exactly when one is taken
        assert all(is_light(i) for i, p in enumerate(state.cells) if p != ".")
