"""Entropy: the SPEC's palindrome values, a board scored by hand, the fast scorer against a
brute-force one, chance and replay, the round change and the result, Order's slides and passes,
the Entropy II reserve and supply, notation and errors, the diagram, storage and the help file.

Positions are set up with ``position()`` below, which writes the stored form and goes through
``GAME.load`` (so every position a test uses is one that ``load`` accepts). Boards are written
top row first, as the diagram shows them, one word per row; ``.`` is an empty square.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import find_game
from pbmserv.games.base import (
    OMNISCIENT,
    PUBLIC,
    AmbiguousMoveError,
    IllegalMoveError,
    InvalidMoveError,
    OptionError,
    StateError,
    move_rng,
)
from pbmserv.games.entropy import GAME
from pbmserv.games.entropy.score import board_score, line_score
from pbmserv.games.entropy.state import (
    ENTROPY2,
    PLACE,
    SLIDE,
    STANDARD,
    STOCK,
    EntropyState,
    Pass,
    Place,
    Slide,
    Stock,
)
from pbmserv.games.testing import random_playout, replay

LETTERS = "RGBYPWK"  # colour codes 1..7, as in the module


# --- setting up positions --------------------------------------------------------------------


def cell(name: str, size: int = 5) -> int:
    """The cell index of a square name such as "c3" (row 1 at the bottom)."""
    return (int(name[1:]) - 1) * size + "abcdefg".index(name[0])


def code(letter: str) -> int:
    return LETTERS.index(letter) + 1


def position(
    top_rows: str,
    *,
    variant: str = STANDARD,
    round_: int = 1,
    first: str | None = None,
    stage: str = PLACE,
    drawn: str | None = None,
    reserve: str = "",
) -> EntropyState:
    """Load a position. ``top_rows`` and ``first`` (round 1's board) are the rows top first;
    ``reserve`` is in colour order (RGBYPWK). The ply and a last move that fits are worked out
    here: a round has 2N^2 - 1 moves (N^2 placements, an Order move after all but the last),
    plus Order's stocking under entropy2."""
    rows = top_rows.split()
    size = len(rows)
    area = size * size
    placed = sum(ch != "." for ch in "".join(rows))
    standard = variant == STANDARD
    per_round = 2 * area - 1 if standard else 2 * area
    within = {PLACE: 2 * placed + (not standard), SLIDE: 2 * placed - standard, STOCK: 0}[stage]
    data = {
        "version": 1,
        "size": size,
        "variant": variant,
        "round": round_,
        "stage": stage,
        "board": rows[::-1],
        "first_board": None if first is None else first.split()[::-1],
        "drawn": drawn,
        "reserve": reserve,
        "ply": within + (round_ - 1) * per_round,
        "last_move": None,
        "result": None,
    }
    data["last_move"] = _fitting_last_move(data, placed)
    return GAME.load(data)


def _fitting_last_move(data: dict, placed: int) -> str | None:
    if data["ply"] == 0:
        return None
    if data["stage"] == SLIDE or placed == 0 and data["stage"] == STOCK:
        board = data["board"] if data["stage"] == SLIDE else data["first_board"]
        return _some_placement(board)
    if placed == 0 and data["variant"] == ENTROPY2:
        return f"stock {data['reserve']}"
    if placed == 0:
        return _some_placement(data["first_board"])
    if data["variant"] == STANDARD:
        return "pass"
    size = data["size"]
    board = "".join(data["board"])
    supply = sum(size - board.count(c) - data["reserve"].count(c) for c in LETTERS[:size])
    return f"pass give {data['reserve'][0]}" if supply else "pass"


def _some_placement(rows: list[str]) -> str:
    size = len(rows)
    index, letter = next((i, ch) for i, ch in enumerate("".join(rows)) if ch != ".")
    row, col = divmod(index, size)
    return f"{'abcdefg'[col]}{row + 1} {letter}"


def cells_of(top_rows: str) -> bytes:
    """The stored cells (row 1 first) of a board written top row first."""
    return bytes(0 if ch == "." else code(ch) for ch in "".join(top_rows.split()[::-1]))


def new(size: int = 5, variant: str = STANDARD, seed: int = 0) -> EntropyState:
    options = GAME.validate_options({"size": str(size), "variant": variant}, 2)
    return GAME.new_game(options, random.Random(seed))


def play(state: EntropyState, *texts: str, seed: int = 0) -> EntropyState:
    """Play ``texts`` by whoever is to move, with the server's generator for each ply."""
    for text in texts:
        (seat,) = GAME.to_move(state).seats
        state = GAME.apply(state, GAME.parse_move(state, seat, text), move_rng(seed, state.ply))
    return state


# A 5x5 board with 5 counters of each colour, scored by hand (see the test below).
HAND_BOARD = """
    RRRGB
    GBGBG
    YYBYY
    PRGRP
    PYPBP
"""
# Every row and every column holds five different colours: nothing scores.
LATIN_BOARD = """
    PRGBY
    YPRGB
    BYPRG
    GBYPR
    RGBYP
"""


# --- scoring ---------------------------------------------------------------------------------


def encode(line: str) -> bytes:
    return bytes(0 if ch == "." else code(ch) for ch in line)


@pytest.mark.parametrize(
    ("line", "score"),
    [
        ("RR", 2),
        ("RRR", 7),
        ("RGGR", 6),
        ("RGBGR", 8),
        ("RGRGR", 14),
        ("RRRR", 16),
        # The seed's examples: 5 + 3 for the nested structure, and 4 + 2x3 + 3x2 = 16.
        ("BYKYB", 8),
        ("YYYY", 16),
        ("", 0),
        ("R", 0),
        ("RG", 0),
        ("RGB", 0),
        ("R.R", 0),
        ("RR.RR", 4),
        ("..", 0),
        ("RRRRRRR", 77),
    ],
)
def test_palindrome_values(line: str, score: int) -> None:
    assert line_score(encode(line)) == score


def test_a_full_board_scored_by_hand() -> None:
    # Rows, top to bottom:
    #   5 R R R G B   RR twice + RRR                     = 7
    #   4 G B G B G   GBG twice, BGB, GBGBG               = 14
    #   3 Y Y B Y Y   YY twice, YBY, YYBYY                = 12
    #   2 P R G R P   RGR, PRGRP                          = 8
    #   1 P Y P B P   PYP, PBP                            = 6      rows: 47
    # Columns, bottom to top:
    #   a P P Y G R   PP = 2;  b Y R Y B R   YRY = 3;  c P G B G R   GBG = 3
    #   d B R Y B G   nothing; e P P Y G B   PP = 2                 columns: 10
    score = board_score(cells_of(HAND_BOARD), 5)
    assert score.rows == (6, 8, 12, 14, 7)  # row 1 first
    assert score.columns == (2, 3, 3, 0, 2)
    assert score.total == 57
    # The same board in play, one counter short (on e1, a P: row 1 drops from 6 to 3).
    picture = GAME.render(position(HAND_BOARD.replace("PYPBP", "PYPB."), drawn="P"), PUBLIC)
    assert "   5   R  R  R  G  B  |   7" in picture
    assert "   4   G  B  G  B  G  |  14" in picture
    assert "   1   P  Y  P  B  .  |   3" in picture
    assert "  col  2  3  3  0  0" in picture
    assert "the second player's score as Order so far: 44 in rows + 8 in columns = 52." in picture


def test_striped_boards_score_every_run() -> None:
    # Each column one colour: RRRRR scores 8 + 9 + 8 + 5 = 30 (7 counters: 77); rows nothing.
    assert board_score(cells_of("RGBYP " * 5), 5) == ((0,) * 5, (30,) * 5)
    assert board_score(cells_of("RGBYPWK " * 7), 7).total == 7 * 77
    assert board_score(cells_of(LATIN_BOARD), 5).total == 0


def brute_force_line(line: str) -> int:
    """Every window of two or more counters that reads the same reversed scores its length:
    written independently of the module's scorer."""
    total = 0
    for start in range(len(line)):
        for end in range(start + 2, len(line) + 1):
            window = line[start:end]
            if "." not in window and window == window[::-1]:
                total += len(window)
    return total


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="RGBYPWK.", max_size=9))
def test_fast_scorer_equals_brute_force_on_lines(line: str) -> None:
    assert line_score(encode(line)) == brute_force_line(line)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from([5, 7]).flatmap(lambda n: st.text("RGBYPWK.", min_size=n * n, max_size=n * n))
)
def test_fast_scorer_equals_brute_force_on_boards(text: str) -> None:
    size = 5 if len(text) == 25 else 7
    rows = [text[r * size : (r + 1) * size] for r in range(size)]
    columns = ["".join(row[c] for row in rows) for c in range(size)]
    score = board_score(encode(text), size)
    assert score.rows == tuple(brute_force_line(r) for r in rows)
    assert score.columns == tuple(brute_force_line(c) for c in columns)


# --- chance ----------------------------------------------------------------------------------


def placed_colours(texts: list[str]) -> list[str]:
    """The colours of the placements (``c3 R``) in a list of move texts."""
    return [t[-1] for t in texts if len(t.split()) == 2 and t.split()[0] not in ("pass", "stock")]


@pytest.mark.parametrize("size", [5, 7])
def test_the_same_seed_gives_the_same_draws(size: int) -> None:
    options = GAME.validate_options({"size": str(size)}, 2)
    one = random_playout(GAME, options, seed=11)
    two = random_playout(GAME, options, seed=11)
    assert one.record == two.record
    draws = placed_colours([t for _, t in one.record])
    other_seeds = [
        placed_colours([t for _, t in random_playout(GAME, options, seed=s).record])
        for s in (12, 13)
    ]
    assert all(draws != other for other in other_seeds)  # the seed matters
    assert new(size, seed=5).drawn == new(size, seed=5).drawn


def test_the_draw_comes_from_the_generator_passed_to_apply() -> None:
    state = play(new(), "c3")
    drawn = {GAME.apply(state, Pass(), random.Random(s)).drawn for s in range(60)}
    assert drawn == {1, 2, 3, 4, 5}  # any colour may come: only the generator decides
    again = {GAME.apply(state, Pass(), move_rng(9, state.ply)).drawn for _ in range(5)}
    assert len(again) == 1


@pytest.mark.parametrize(
    "options", [{"size": "5"}, {"size": "7"}, {"size": "5", "variant": "entropy2"}]
)
def test_a_stored_game_replays_exactly(options: dict[str, str]) -> None:
    values = GAME.validate_options(options, 2)
    playout = random_playout(GAME, values, seed=4)
    states = replay(GAME, values, 4, playout.record)
    assert [GAME.dump(s) for s in states] == [GAME.dump(s) for s in playout.states]
    # Stored half-way (through JSON) and carried on with the recorded texts: the same game.
    half = len(playout.record) // 2
    state = GAME.load(json.loads(json.dumps(GAME.dump(playout.states[half]))))
    for ply, (seat, text) in enumerate(playout.record[half:], start=half):
        state = GAME.apply(state, GAME.parse_move(state, seat, text), move_rng(4, ply))
    assert GAME.dump(state) == GAME.dump(playout.final)
    assert GAME.outcome(state) == GAME.outcome(playout.final)


@settings(max_examples=25, deadline=None)
@given(size=st.sampled_from([5, 7]), seed=st.integers(0, 2**32 - 1))
def test_the_bag_never_yields_more_than_size_counters_of_a_colour(size: int, seed: int) -> None:
    playout = random_playout(GAME, GAME.validate_options({"size": str(size)}, 2), seed)
    for state in playout.states:
        assert min(state.bag()) >= 0
    texts = [t for _, t in playout.record]
    per_round = size * size * 2 - 1
    for round_texts in (texts[:per_round], texts[per_round:]):
        assert Counter(placed_colours(round_texts)) == {ch: size for ch in LETTERS[:size]}


def test_the_last_counters_in_the_bag_are_the_only_ones_drawn() -> None:
    # 23 counters placed; the bag holds one red and one pink.
    state = position("RRRR. GGGGG BBBBB YYYYY PPPP.", stage=SLIDE)
    assert state.bag() == (1, 0, 0, 0, 1)
    drawn = {GAME.apply(state, Pass(), random.Random(s)).drawn for s in range(40)}
    assert drawn == {code("R"), code("P")}
    last = play(state, "pass", "e5")  # whichever came first went to e5
    assert sum(last.bag()) == 1 and last.drawn == 0 and last.stage == SLIDE
    final = GAME.apply(last, Pass(), random.Random(1))  # the bag's last counter
    assert sum(final.bag()) == 0
    assert {final.drawn, last.colour_at(cell("e5"))} == {code("R"), code("P")}


# --- turns, rounds and the result --------------------------------------------------------------


def test_seats_and_roles() -> None:
    state = new()
    assert GAME.to_move(state).seats == frozenset({0})
    assert (GAME.seat_name(state, 0), GAME.seat_name(state, 1)) == ("Chaos", "Order")
    assert GAME.to_move(state).stage == PLACE
    state = play(state, "c3")
    assert GAME.to_move(state).seats == frozenset({1}) and GAME.to_move(state).stage == SLIDE
    # Entropy II opens with Order's stocking, by the first-named player.
    e2 = new(variant=ENTROPY2)
    assert (GAME.seat_name(e2, 0), GAME.seat_name(e2, 1)) == ("Order", "Chaos")
    assert GAME.to_move(e2).seats == frozenset({0}) and GAME.to_move(e2).stage == STOCK


def test_round_change_swaps_roles_and_starts_a_full_bag() -> None:
    state = position(HAND_BOARD.replace("PYPBP", "PYPB."), drawn="P")
    assert GAME.to_move(state).seats == frozenset({0})
    after = GAME.apply(state, GAME.parse_move(state, 0, "e1"), move_rng(3, state.ply))
    assert after.round == 2 and after.stage == PLACE
    assert after.first == cells_of(HAND_BOARD)
    assert after.cells == bytes(25) and sum(after.bag()) == 24 and after.drawn
    assert GAME.to_move(after).seats == frozenset({1})  # last round's Order now places
    assert (GAME.seat_name(after, 0), GAME.seat_name(after, 1)) == ("Order", "Chaos")
    assert after.last_move == "e1 P" and after.ply == state.ply + 1 == 49
    assert GAME.outcome(after) is None
    # The first mail of round 2 shows round 1's full board, which no mail has shown yet.
    picture = GAME.render(after, PUBLIC, ("alice", "bob"))
    assert picture.startswith("Round 1 is over: the last counter has filled the board.\n")
    assert "   4   G  B  G  B  G  |  14" in picture
    assert "\nbob scored as Order: 47 in rows + 10 in columns = 57.\n" in picture
    heading = "Round 2 of 2: alice is Order, bob is Chaos.\nIn round 1, bob scored 57 as Order.\n"
    assert f"\n{heading}" in picture
    later = GAME.render(play(after, "c3"), PUBLIC, ("alice", "bob"))
    assert later.startswith(heading)
    assert "\nalice's score as Order so far: " in later
    assert "G  B  G  B  G" not in later
    # The first draw of round 2 came from the generator of this move.
    assert after.drawn == GAME.apply(state, Place(cell("e1"), 5), move_rng(3, 48)).drawn


def test_entropy2_round_change_starts_with_the_new_orders_stocking() -> None:
    state = position(HAND_BOARD.replace("PYPBP", "PYPB."), variant=ENTROPY2, reserve="P")
    assert GAME.to_move(state).seats == frozenset({1})  # Chaos in round 1 of Entropy II
    after = play(state, "e1")
    assert after.round == 2 and after.stage == STOCK and after.reserve == (0,) * 5
    assert GAME.to_move(after).seats == frozenset({1})
    assert (GAME.seat_name(after, 0), GAME.seat_name(after, 1)) == ("Chaos", "Order")
    assert after.supply() == (5,) * 5


def finish(first: str, second: str, missing: str, variant: str = STANDARD) -> EntropyState:
    """Round 2 with ``second`` but for one counter (on ``missing``), then that placement."""
    size = 5
    rows = second.split()
    index = (size - int(missing[1])) * size + "abcde".index(missing[0])
    flat = list("".join(rows))
    colour, flat[index] = flat[index], "."
    board = " ".join("".join(flat[r * size : (r + 1) * size]) for r in range(size))
    extra = {"drawn": colour} if variant == STANDARD else {"reserve": colour}
    state = position(board, variant=variant, round_=2, first=first, **extra)
    return play(state, missing)


def test_the_higher_order_total_wins() -> None:
    state = finish(LATIN_BOARD, HAND_BOARD, "c3")
    result = GAME.outcome(state)
    # Standard: seat 0 is Order in round 2 (57 points), seat 1 was Order in round 1 (0).
    assert result is not None and result.winners == frozenset({0})
    assert dict(result.scores) == {0: 57, 1: 0}
    assert result.reason == "57 points as Order in round 2, against 0 in round 1"
    assert GAME.to_move(state).seats == frozenset() and GAME.legal_moves(state, 0) == []
    other_state = finish(HAND_BOARD, LATIN_BOARD, "a1")
    other = GAME.outcome(other_state)
    assert other.winners == frozenset({1}) and dict(other.scores) == {0: 0, 1: 57}
    assert other.reason == "57 points as Order in round 1, against 0 in round 2"
    # After the game a seat is named by both its roles, not by round 2's alone: the winner
    # as Order in round 1 is no "Chaos".
    assert GAME.seat_name(other_state, 1) == "Order, then Chaos"
    assert GAME.seat_name(other_state, 0) == "Chaos, then Order"
    # Entropy II: seat 0 was Order in round 1, seat 1 is Order in round 2.
    e2_state = finish(LATIN_BOARD, HAND_BOARD, "e5", variant=ENTROPY2)
    e2 = GAME.outcome(e2_state)
    assert e2.winners == frozenset({1}) and dict(e2.scores) == {0: 0, 1: 57}
    assert GAME.seat_name(e2_state, 1) == "Chaos, then Order"


def test_equal_totals_draw() -> None:
    # Round 2's board is round 1's turned on its side: rows and columns trade places.
    transposed = " ".join("".join(row[c] for row in HAND_BOARD.split()) for c in range(5))
    state = finish(HAND_BOARD, transposed, "b4")
    result = GAME.outcome(state)
    assert result is not None and result.is_draw and result.winners == frozenset()
    assert dict(result.scores) == {0: 57, 1: 57}
    assert result.reason == "both scored 57 points as Order"
    final = GAME.render(state, PUBLIC, ("alice", "bob"))
    assert final.endswith(
        "A draw: both scored 57 as Order.\nColours: R red, G green, B blue, Y yellow, P pink."
    )
    assert "won by" not in final


def test_the_final_diagram_names_the_winner_of_either_round() -> None:
    # Round 1's Order (bob, seat 1) wins; under Entropy II seat 0 is Order in round 1.
    standard = GAME.render(finish(HAND_BOARD, LATIN_BOARD, "a1"), PUBLIC, ("alice", "bob"))
    assert "Round 1: bob was Order, alice was Chaos." in standard
    assert "bob won by 57 points: 57 as Order, against 0 for alice." in standard
    entropy2 = finish(HAND_BOARD, LATIN_BOARD, "a1", variant=ENTROPY2)
    named = GAME.render(entropy2, PUBLIC, ("alice", "bob"))
    assert "Round 1: alice was Order, bob was Chaos." in named
    assert "alice won by 57 points: 57 as Order, against 0 for bob." in named
    assert GAME.outcome(entropy2).winners == frozenset({0})


def test_the_last_placement_of_a_round_gets_no_order_move() -> None:
    state = position(LATIN_BOARD.replace("RGBYP", "RGBY."), drawn="P")
    after = play(state, "e1")
    assert after.round == 2 and GAME.to_move(after).stage == PLACE


# --- Order's moves ---------------------------------------------------------------------------


def test_order_passes() -> None:
    state = position("..... ..R.. ..... ..... .....", stage=SLIDE)
    after = GAME.apply(state, GAME.parse_move(state, 1, "pass"), random.Random(2))
    assert after.cells == state.cells and after.stage == PLACE and after.drawn
    assert after.last_move == "pass" and after.ply == state.ply + 1
    assert Pass() in GAME.legal_moves(state, 1)


def test_order_slides_like_a_rook() -> None:
    state = position("..... ..R.. ..... ..... .....", stage=SLIDE)
    after = play(state, "c4-c1")
    assert after.colour_at(cell("c1")) == code("R") and not after.colour_at(cell("c4"))
    slides = {GAME.format_move(state, m) for m in GAME.legal_moves(state, 1)} - {"pass"}
    expected = {f"c4-{c}4" for c in "abde"} | {f"c4-c{r}" for r in (1, 2, 3, 5)}
    assert slides == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "c4-c1",
            '"c4-c1": the green (G) counter on c2 is in the way; '
            "counters slide over empty squares only",
        ),
        (
            "c4-e4",
            '"c4-e4": the blue (B) counter on d4 is in the way; '
            "counters slide over empty squares only",
        ),
        ("c4-c2", '"c4-c2": c2 already holds a green (G) counter'),
        ("c4-d3", '"c4-d3": a counter slides like a rook, along its row or column; d3 is neither'),
        ("a1-a2", '"a1-a2": there is no counter on a1 to slide'),
        ("c4-c4", '"c4-c4": c4-c4 does not move the counter; write pass to leave it'),
        ("c4-f4", '"c4-f4": there is no square f4 on a 5x5 board (columns a-e, rows 1-5)'),
        (
            "c4-c3 give R",
            '"c4-c3 give R": in standard Entropy Chaos draws from the bag; '
            "Order hands nothing over",
        ),
        (
            "c4",
            '"c4": only Chaos places counters; as Order, slide a counter like a rook, '
            "e.g. c2-c3, or pass",
        ),
    ],
)
def test_slide_errors(text: str, message: str) -> None:
    state = position("..... ..RB. ..... ..G.. .....", stage=SLIDE)
    with pytest.raises(IllegalMoveError) as caught:
        GAME.parse_move(state, 1, text)
    assert str(caught.value) == message


def test_a_slide_past_the_blocker_is_fine_and_apply_refuses_a_blocked_one() -> None:
    state = position("..... ..RB. ..... ..G.. .....", stage=SLIDE)
    play(state, "c4-c3")  # up to the blocker is allowed
    with pytest.raises(IllegalMoveError, match="is in the way"):
        GAME.apply(state, Slide(cell("c4"), cell("c1")), random.Random(0))


# --- Chaos's moves ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["c3", "C3", "c3 r", "c3R", "c3 red", "R c3", "red c3", "  c3  ", "c3-r", "c03"]
)
def test_notations_of_a_placement(text: str) -> None:
    state = position("..... ..... ..... ..... .....", drawn="R")
    move = GAME.parse_move(state, 0, text)
    assert move == Place(cell("c3"), code("R"))
    assert GAME.format_move(state, move) == "c3 R"


@pytest.mark.parametrize("text", ["c3-c6", "C3-C6", "c3 c6", "c3c6", "c3 to c6", "c3 - c6"])
def test_notations_of_a_slide(text: str) -> None:
    state = play(new(7), "c3")
    move = GAME.parse_move(state, 1, text)
    assert move == Slide(cell("c3", 7), cell("c6", 7))
    assert GAME.format_move(state, move) == "c3-c6"


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        (
            "c3 g",
            IllegalMoveError,
            '"c3 g": the counter drawn for you is red (R), not green; write c3 or c3 R',
        ),
        (
            "c3 white",
            IllegalMoveError,
            '"c3 white": there is no white on a 5x5 board; its '
            "colours are red (R), green (G), blue (B), yellow (Y), pink (P)",
        ),
        (
            "b2",
            IllegalMoveError,
            '"b2": b2 already holds a blue (B) counter; place on an empty square',
        ),
        ("r c3 r", InvalidMoveError, '"r c3 r" names two colours: write one, like c3 R'),
        (
            "h1",
            IllegalMoveError,
            '"h1": there is no square h1 on a 5x5 board (columns a-e, rows 1-5)',
        ),
        (
            "c0",
            IllegalMoveError,
            '"c0": there is no square c0 on a 5x5 board (columns a-e, rows 1-5)',
        ),
        (
            "pass",
            IllegalMoveError,
            '"pass": only Order slides counters or passes; as Chaos, '
            "place the red (R) counter from the bag, e.g. c3",
        ),
        (
            "b2-b3",
            IllegalMoveError,
            '"b2-b3": only Order slides counters or passes; as Chaos, '
            "place the red (R) counter from the bag, e.g. c3",
        ),
        (
            "stock RGBYP",
            IllegalMoveError,
            '"stock RGBYP": standard Entropy has no reserve to '
            "stock; the counters come from the bag",
        ),
        (
            "put it there",
            InvalidMoveError,
            '"put it there" is not an Entropy move: as Chaos, '
            "place the red (R) counter from the bag, e.g. c3",
        ),
    ],
)
def test_placement_errors(text: str, error: type[Exception], message: str) -> None:
    state = position("..... ..... ..... .B... .....", drawn="R")
    with pytest.raises(error) as caught:
        GAME.parse_move(state, 0, text)
    assert type(caught.value) is error
    assert str(caught.value) == message


def test_moves_out_of_turn_and_after_the_end() -> None:
    state = new()
    with pytest.raises(IllegalMoveError, match=r'^"c3": it is not your turn; Chaos is to move$'):
        GAME.parse_move(state, 1, "c3")
    assert GAME.legal_moves(state, 1) == []
    over = finish(LATIN_BOARD, HAND_BOARD, "c3")
    for seat in (0, 1):
        with pytest.raises(IllegalMoveError, match=r'^"pass": the game is over \(57 points'):
            GAME.parse_move(over, seat, "pass")
    with pytest.raises(IllegalMoveError):
        GAME.apply(over, Pass(), random.Random(0))


def test_prompts_name_the_drawn_counter_and_a_legal_example() -> None:
    state = position("..... ..... ..B.. ..... .....", drawn="Y")
    # The example square is the free one nearest the centre (c3 is taken).
    assert GAME.to_move(state).prompts == {
        0: "as Chaos, place the yellow (Y) counter from the bag, e.g. c2"
    }
    picture = GAME.render(state, 0)
    assert "Drawn from the bag for Chaos to place: yellow (Y)." in picture
    assert "In the bag (23): R 5, G 5, B 4, Y 4, P 5." in picture
    sliding = play(state, "c4")
    assert GAME.to_move(sliding).prompts == {
        1: "as Order, slide a counter like a rook, e.g. c3-c2, or pass"
    }
    assert "Drawn" not in GAME.render(sliding, 1)  # Order moves before the next draw


# --- Entropy II ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "stock RRGBY",
        "stock r r g b y",
        "RRGBY",
        "stock red red green blue yellow",
        "Stock: rrgby",
        "yrbgr",
        "STOCK R,R,G,B,Y",
        "stock stock RRGBY",
    ],
)
def test_notations_of_a_stocking(text: str) -> None:
    state = new(variant=ENTROPY2)
    move = GAME.parse_move(state, 0, text)
    assert move == Stock((2, 1, 1, 1, 0))
    assert GAME.format_move(state, move) == "stock RRGBY"


def test_stocking_choices() -> None:
    assert len(GAME.legal_moves(new(5, ENTROPY2), 0)) == 126  # multisets of 5 from 5 colours
    assert len(GAME.legal_moves(new(7, ENTROPY2), 0)) == 462  # ... from 7 colours
    state = play(new(variant=ENTROPY2), "stock PPPPP")  # all five pinks of a 5x5 set
    assert state.reserve == (0, 0, 0, 0, 5) and state.supply() == (5, 5, 5, 5, 0)
    assert GAME.to_move(state).seats == frozenset({1}) and GAME.to_move(state).stage == PLACE


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "stock RGB",
            '"stock RGB": choose exactly 5 counters for the reserve, like stock RGBYP; you named 3',
        ),
        (
            "stock RGBYPR",
            '"stock RGBYPR": choose exactly 5 counters for the reserve, like '
            "stock RGBYP; you named 6",
        ),
        (
            "stock RGBYW",
            '"stock RGBYW": there is no white on a 5x5 board; its colours are '
            "red (R), green (G), blue (B), yellow (Y), pink (P)",
        ),
        (
            "c3 R",
            '"c3 R": a round of Entropy II opens with Order stocking Chaos\'s reserve; '
            "as Order, choose 5 counters for Chaos's reserve, e.g. stock RGBYP",
        ),
        (
            "pass",
            '"pass": a round of Entropy II opens with Order stocking Chaos\'s reserve; '
            "as Order, choose 5 counters for Chaos's reserve, e.g. stock RGBYP",
        ),
    ],
)
def test_stocking_errors(text: str, message: str) -> None:
    with pytest.raises(IllegalMoveError) as caught:
        GAME.parse_move(new(variant=ENTROPY2), 0, text)
    assert str(caught.value) == message


def test_chaos_places_from_its_reserve() -> None:
    state = play(new(variant=ENTROPY2), "stock RRGBY")
    assert GAME.to_move(state).prompts == {
        1: "as Chaos, place a counter of your reserve (R R G B Y), e.g. c3 R"
    }
    placements = GAME.legal_moves(state, 1)
    assert len(placements) == 25 * 4 and {m.colour for m in placements} == {1, 2, 3, 4}
    for text in ("c3 g", "c3G", "green c3", "C3 GREEN"):
        assert GAME.parse_move(state, 1, text) == Place(cell("c3"), code("G"))
    with pytest.raises(AmbiguousMoveError) as caught:
        GAME.parse_move(state, 1, "c3")
    assert str(caught.value) == (
        '"c3": say which counter of your reserve (R R G B Y) to place, like c3 R'
    )
    with pytest.raises(IllegalMoveError) as caught:
        GAME.parse_move(state, 1, "c3 p")
    assert str(caught.value) == '"c3 p": your reserve holds no pink counter; it holds R R G B Y'
    after = play(state, "c3 g")
    assert after.reserve == (2, 0, 1, 1, 0)
    with pytest.raises(IllegalMoveError, match="not in Chaos's reserve"):
        GAME.apply(state, Place(cell("a1"), code("P")), random.Random(0))


def test_a_reserve_of_one_colour_needs_no_colour_letter() -> None:
    state = position("..... ..... ..... ..... .....", variant=ENTROPY2, reserve="RRRRR")
    assert GAME.parse_move(state, 1, "a1") == Place(cell("a1"), code("R"))


def test_order_hands_over_a_counter_from_the_supply() -> None:
    state = play(new(variant=ENTROPY2), "stock RRGBY", "c3 R")
    assert state.reserve == (1, 1, 1, 1, 0) and state.supply() == (3, 4, 4, 4, 5)
    assert GAME.to_move(state).prompts == {
        0: "as Order, slide or pass and give Chaos a counter, e.g. c3-c4 give R"
    }
    moves = GAME.legal_moves(state, 0)
    assert len(moves) == (1 + 8) * 5  # pass or 8 slides, each with 5 colours to give
    for text in ("c3-c5 give p", "c3-c5 P", "c3-c5, give pink", "C3C5 GIVE P"):
        assert GAME.parse_move(state, 0, text) == Slide(cell("c3"), cell("c5"), code("P"))
    assert GAME.parse_move(state, 0, "pass give r") == Pass(code("R"))
    with pytest.raises(AmbiguousMoveError) as caught:
        GAME.parse_move(state, 0, "c3-c5")
    assert str(caught.value) == (
        '"c3-c5": also hand Chaos a counter from the supply (R 3, G 4, B 4, Y 4, P 5), '
        "like c3-c5 give R"
    )
    after = play(state, "c3-c5 give P")
    assert after.reserve == (1, 1, 1, 1, 1) and after.supply() == (3, 4, 4, 4, 4)
    assert after.last_move == "c3-c5 give P"


def test_order_can_only_give_what_the_supply_holds() -> None:
    # 15 counters placed, 5 in the reserve: the supply holds just the five pinks.
    board = "RRRRR GGGGG BBBBB ..... ....."
    state = position(board, variant=ENTROPY2, stage=SLIDE, reserve="YYYY")
    assert state.supply() == (0, 0, 0, 1, 5)
    with pytest.raises(IllegalMoveError) as caught:
        GAME.parse_move(state, 0, "pass give R")
    assert (
        str(caught.value)
        == '"pass give R": the supply has no red counter left (R 0, G 0, B 0, Y 1, P 5)'
    )
    with pytest.raises(AmbiguousMoveError):
        GAME.parse_move(state, 0, "pass")
    only_pink = position(
        "RRRRR GGGGG BBBBB Y.... .....", variant=ENTROPY2, stage=SLIDE, reserve="YYYY"
    )
    assert only_pink.supply() == (0, 0, 0, 0, 5)
    assert GAME.parse_move(only_pink, 0, "pass") == Pass(code("P"))  # the one colour left
    assert GAME.format_move(only_pink, Pass(code("P"))) == "pass give P"


def test_once_the_supply_is_empty_nothing_is_handed_over() -> None:
    # 21 counters placed, 4 left in the reserve: the supply is empty.
    board = "RRRRR GGGGG BBBBB YYYYY P...."
    state = position(board, variant=ENTROPY2, stage=SLIDE, reserve="PPPP")
    assert sum(state.supply()) == 0
    assert GAME.legal_moves(state, 0)[0] == Pass()
    with pytest.raises(IllegalMoveError) as caught:
        GAME.parse_move(state, 0, "pass give P")
    assert str(caught.value) == '"pass give P": the supply is empty, so there is nothing to give'
    after = play(state, "pass")
    assert after.reserve == (0, 0, 0, 0, 4) and after.last_move == "pass"
    assert GAME.to_move(after).prompts[1].startswith("as Chaos, place a counter of your reserve")
    assert "Supply, for Order to hand over (0): R 0, G 0, B 0, Y 0, P 0." in GAME.render(after, 1)


@settings(max_examples=10, deadline=None)
@given(size=st.sampled_from([5, 7]), seed=st.integers(0, 2**32 - 1))
def test_the_reserve_holds_five_while_the_supply_lasts(size: int, seed: int) -> None:
    options = GAME.validate_options({"size": str(size), "variant": ENTROPY2}, 2)
    playout = random_playout(GAME, options, seed)
    area = size * size
    assert len(playout.steps) == 4 * area
    gives = 0
    for step in playout.steps:
        before, after = step.before, step.after
        assert sum(after.reserve) <= 5
        if isinstance(step.move, (Slide, Pass)):
            placed = area - after.cells.count(0)
            assert sum(after.reserve) == min(5, area - placed)
            assert (step.move.give != 0) == (sum(before.supply()) > 0)
            gives += step.move.give != 0
        if after.round != before.round or GAME.outcome(after) is not None:
            finished = after.first if after.round != before.round else after.cells
            assert sum(before.reserve) == 1 and 0 not in finished  # last counter placed
            assert sum(after.reserve) == 0
    assert gives == 2 * (area - 5)  # every counter but the 5 stocked, in each round


# --- options, storage, diagram ---------------------------------------------------------------


def test_options() -> None:
    assert find_game("ENTROPY") is GAME
    assert GAME.validate_options({}, 2) == {"size": 7, "variant": "standard"}
    assert GAME.validate_options({"SIZE": "5", "Variant": "Entropy2"}, 2) == {
        "size": 5,
        "variant": "entropy2",
    }
    for bad in ({"size": "6"}, {"size": "x"}, {"variant": "entropy3"}, {"colours": "5"}):
        with pytest.raises(OptionError):
            GAME.validate_options(bad, 2)
    with pytest.raises(OptionError):
        GAME.validate_options({}, 3)
    with pytest.raises(OptionError):
        GAME.new_game({"size": 6}, random.Random(0))
    assert new(7).size == 7 and new(5).cells == bytes(25)
    assert GAME.SPEC.uses_chance and not GAME.SPEC.hidden_information


def test_dump_format() -> None:
    state = play(new(seed=1), "c3", "c3-c1", seed=1)
    placed, drawn = LETTERS[state.colour_at(cell("c1")) - 1], LETTERS[state.drawn - 1]
    data = GAME.dump(state)
    assert data == {
        "version": 1,
        "size": 5,
        "variant": "standard",
        "round": 1,
        "stage": "place",
        "board": [f"..{placed}..", *["....."] * 4],  # row 1 first
        "first_board": None,
        "drawn": drawn,
        "reserve": "",
        "ply": 2,
        "last_move": "c3-c1",
        "result": None,
    }
    assert GAME.load(json.loads(json.dumps(data))) == state
    over = finish(LATIN_BOARD, HAND_BOARD, "c3")
    stored = GAME.dump(over)
    assert stored["result"] == {
        "winners": [0],
        "reason": "57 points as Order in round 2, against 0 in round 1",
        "scores": [57, 0],
    }
    assert stored["first_board"] == LATIN_BOARD.split()[::-1]
    assert GAME.load(stored) == over


GOOD = GAME.dump(position("..... ..... ..R.. ..... .....", stage=SLIDE))


@pytest.mark.parametrize(
    "change",
    [
        {"version": 2},
        {"size": 6},
        {"size": "5"},
        {"variant": "entropy3"},
        {"round": 3},
        {"round": 2},  # round 2 needs round 1's board
        {"first_board": ["RRRRR"] * 5},  # ... and round 1 has none
        {"stage": "stock"},  # standard Entropy has no stocking
        {"stage": "place"},  # then the ply is wrong
        {"stage": "over"},
        {"stage": "dance"},
        {"board": ["....."] * 4},
        {"board": ["..R..", ".....", "..X..", ".....", "....."]},
        {"board": ["RRRRR", "R....", ".....", ".....", "....."]},  # six reds
        {"board": ["WWWWW", ".....", ".....", ".....", "....."]},  # no white on 5x5
        {"ply": 2},
        {"ply": "1"},
        {"drawn": "G"},  # nothing is drawn while Order moves
        {"reserve": "RG"},  # standard Entropy has no reserve
        {"last_move": None},
        {"last_move": "c3 G"},  # c3 holds a red counter
        {"last_move": "c2 R"},
        {"last_move": "pass"},  # the last move was a placement
        {"last_move": 3},
        {"result": {"winners": [0], "reason": "made up", "scores": [1, 0]}},
    ],
)
def test_load_rejects_bad_data(change: dict) -> None:
    with pytest.raises(StateError):
        GAME.load({**GOOD, **change})


def test_load_checks_results_reserves_and_draws() -> None:
    assert GAME.dump(GAME.load(GOOD)) == GOOD
    over = GAME.dump(finish(LATIN_BOARD, HAND_BOARD, "c3"))
    for bad in (
        {"result": None},
        {"result": {**over["result"], "winners": [1]}},
        {"result": {**over["result"], "scores": [57, 1]}},
    ):
        with pytest.raises(StateError):
            GAME.load({**over, **bad})
    placing = GAME.dump(position("..... ..... ..R.. ..... .....", drawn="G"))
    for bad in ({"drawn": None}, {"drawn": "W"}, {"drawn": "GG"}):
        with pytest.raises(StateError):
            GAME.load({**placing, **bad})
    # All five reds are on the board: a red cannot have been drawn, a green can.
    reds = GAME.dump(position("..... ..... ..... ..... RRRRR", drawn="G"))
    assert GAME.load(reds).drawn == code("G")
    with pytest.raises(StateError, match="the drawn counter does not match"):
        GAME.load({**reds, "drawn": "R"})
    e2 = GAME.dump(play(new(variant=ENTROPY2), "stock RRGBY", "c3 R"))
    for bad in ({"reserve": "RGBYP"}, {"reserve": "GBYR"}, {"reserve": "RGB"}, {"drawn": "R"}):
        with pytest.raises(StateError):
            GAME.load({**e2, **bad})
    with pytest.raises(StateError):
        GAME.load([])  # type: ignore[arg-type]


def test_apply_never_changes_the_old_state() -> None:
    state = play(new(variant=ENTROPY2), "stock RRGBY", "c3 R")
    saved = GAME.dump(state)
    for move in GAME.legal_moves(state, 0):
        GAME.apply(state, move, random.Random(0))
    assert GAME.dump(state) == saved


def test_entropy2_diagram_shows_the_reserve_and_the_supply() -> None:
    state = play(new(variant=ENTROPY2), "stock RRGBY", "c3 R")
    picture = GAME.render(state, 0)
    assert "Chaos's reserve (4): R G B Y." in picture
    assert "Supply, for Order to hand over (20): R 3, G 4, B 4, Y 4, P 5." in picture
    assert "bag" not in picture


FINAL = """\
Round 1: bob was Order, alice was Chaos.

       a  b  c  d  e    row
   5   P  R  G  B  Y  |   0
   4   Y  P  R  G  B  |   0
   3   B  Y  P  R  G  |   0
   2   G  B  Y  P  R  |   0
   1   R  G  B  Y  P  |   0
      ---------------
  col  0  0  0  0  0
bob scored as Order: 0 in rows + 0 in columns = 0.

Round 2: alice was Order, bob was Chaos.

       a  b  c  d  e    row
   5   R  R  R  G  B  |   7
   4   G  B  G  B  G  |  14
   3   Y  Y  B  Y  Y  |  12
   2   P  R  G  R  P  |   8
   1   P  Y  P  B  P  |   6
      ---------------
  col  2  3  3  0  2
alice scored as Order: 47 in rows + 10 in columns = 57.

alice won by 57 points: 57 as Order, against 0 for bob.
Colours: R red, G green, B blue, Y yellow, P pink."""


def test_final_diagram_shows_both_boards_and_every_score() -> None:
    state = finish(LATIN_BOARD, HAND_BOARD, "c3")
    for viewer in (0, 1, PUBLIC, OMNISCIENT):
        assert GAME.render(state, viewer, ("alice", "bob")) == FINAL


# --- the help file ---------------------------------------------------------------------------


def test_help_file_renders_and_its_example_is_what_the_server_draws() -> None:
    path = Path(__file__).resolve().parents[2] / "templates" / "help" / "entropy.txt.j2"
    template = jinja2.Template(path.read_text(), undefined=jinja2.StrictUndefined)
    text = template.render(
        server_address="pbm@example.org",
        spec=GAME.SPEC,
        options=[o.describe() for o in GAME.SPEC.options],
        commands=[],
    )
    assert "pbm@example.org" in text
    assert all(len(line) < 78 for line in text.splitlines())
    for line in (
        "entropy challenge [-size=7|5] [-variant=standard|entropy2] USERID1 USERID2",
        "entropy move BOARD USERID PASSWORD c3",
        "entropy move BOARD USERID PASSWORD c3-c5",
        "entropy stock BOARD USERID PASSWORD RRGBY",
        "entropy move BOARD USERID PASSWORD c3-c5 give R",
    ):
        assert line in text
    # Every palindrome example of the rules scores what the help says.
    for row in (
        text.split("Examples, in one row or column:")[1].split("After round 1")[0].split("\n")
    ):
        if row.strip():
            letters, score = row.split("(")[0].rsplit(maxsplit=1)
            assert line_score(encode(letters.replace(" ", ""))) == int(score), row
    # The example opening: c3 R, c3-c2, b2 G, pass, d2 R leaves this board.
    state = position("..... ..... ..... .GRR. .....", stage=SLIDE)
    assert GAME.to_move(state).seats == frozenset({1})
    shown = GAME.render(state, 1, ("alice", "bob"))
    drawn = "\n".join(f"   {line}" if line else "" for line in shown.splitlines())
    assert drawn in text


def test_a_board_made_when_the_size_was_text_still_starts() -> None:
    # Boards created before -size became an int option have it stored as "5" or "7".
    assert GAME.new_game({"size": "5"}, random.Random(1)).size == 5
    with pytest.raises(OptionError, match="choose one of 5, 7"):
        GAME.validate_options({"size": "six"}, 2)
