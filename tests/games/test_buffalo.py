"""Buffalo and Rebel Buffalo: the rules of SPEC 4.4 on positions built by hand.

Positions are made with ``pbmserv.games.buffalo.position`` (square -> B buffalo, D dog,
C chief); only the pieces a test needs are on the board.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games.base import IllegalMoveError, InvalidMoveError, MoveError, StateError
from pbmserv.games.buffalo import (
    BLACK,
    COLS,
    GAME,
    LETTERS,
    WHITE,
    BuffaloState,
    enclosed_dogs,
    name,
    position,
    room_for,
    square,
)
from pbmserv.games.testing import check_garbage, check_position

RNG = random.Random(0)


def idx(text: str) -> int:
    return square(LETTERS.index(text[0]), int(text[1:]))


def rebel(pieces: dict[str, str], to_move: int = BLACK) -> BuffaloState:
    return position(pieces, to_move, variant="rebel")


def play(state: BuffaloState, *texts: str) -> BuffaloState:
    for text in texts:
        state = GAME.apply(state, GAME.parse_move(state, state.to_move, text), RNG)
    return state


def at(state: BuffaloState, where: str) -> str:
    return state.cells[idx(where)]


def squares_of(state: BuffaloState, piece: str) -> list[str]:
    return sorted(name(i) for i, p in enumerate(state.cells) if p == piece)


def texts(state: BuffaloState, seat: int) -> set[str]:
    return {GAME.format_move(state, m) for m in GAME.legal_moves(state, seat)}


# --- the standard game -----------------------------------------------------------------------


def test_start_position() -> None:
    state = GAME.new_game({"variant": "standard"}, RNG)
    assert squares_of(state, "B") == sorted(f"{c}7" for c in LETTERS)
    assert squares_of(state, "C") == ["f2"]
    assert squares_of(state, "D") == ["d2", "e2", "g2", "h2"]
    assert GAME.to_move(state).seats == {BLACK}
    assert texts(state, BLACK) == {f"{c}7-{c}6" for c in LETTERS}
    assert GAME.legal_moves(state, WHITE) == []
    check_garbage(GAME, state)
    check_position(GAME, state)


def test_the_diagram_shows_rivers_pieces_and_coordinates() -> None:
    lines = GAME.render(GAME.new_game({}, RNG), BLACK).splitlines()
    assert lines[0].split() == list(LETTERS)
    assert lines[1].split()[0] == "7" and lines[1].count("B") == 11
    assert "~" in lines[2] and "river" in lines[2]  # between rows 7 and 6
    row2 = next(line for line in lines if line.split()[:1] == ["2"])
    assert row2.split()[1:-1] == list("...DDCDD...")
    assert "~" in lines[lines.index(row2) + 1]  # between rows 2 and 1
    assert any("C Indian chief" in line for line in lines)


def test_first_moves_in_every_notation() -> None:
    state = GAME.new_game({}, RNG)
    for text in ("e7-e6", "e7e6", "E7 e6", "e6", " e7 - e6 ", "e7\u2013e6", "e7 to e6"):
        assert GAME.format_move(state, GAME.parse_move(state, BLACK, text)) == "e7-e6"
    state = play(state, "e6", "d2-d5")
    assert at(state, "e6") == "B" and at(state, "e7") == "." and at(state, "d5") == "D"
    assert state.last_move == "d2-d5" and GAME.to_move(state).seats == {BLACK}
    assert GAME.move_number(state) == 2


def test_out_of_turn_and_after_the_end() -> None:
    state = GAME.new_game({}, RNG)
    with pytest.raises(IllegalMoveError, match='"d2-d5": it is not your turn; Black is to move'):
        GAME.parse_move(state, WHITE, "d2-d5")
    over = play(position({"c2": "B", "k6": "C", "a3": "D", "b3": "D", "c3": "D", "d3": "D"}), "c1")
    with pytest.raises(IllegalMoveError, match="the game is over"):
        GAME.parse_move(over, WHITE, "k6-k5")
    assert GAME.legal_moves(over, WHITE) == []


def test_chief_captures_a_buffalo_by_replacement() -> None:
    state = position({"f3": "B", "a7": "B", "f2": "C", "a3": "D"}, to_move=WHITE)
    assert "f2xf3" in texts(state, WHITE)
    move = GAME.parse_move(state, WHITE, "f2xf3")
    assert GAME.parse_move(state, WHITE, "F2-F3") == move  # the x is optional
    after = GAME.apply(state, move, RNG)
    assert at(after, "f3") == "C" and at(after, "f2") == "."
    assert squares_of(after, "B") == ["a7"] and after.last_move == "f2xf3"
    assert GAME.outcome(after) is None


def test_dogs_never_capture_nor_jump_and_the_chief_steps_once() -> None:
    state = position({"f3": "B", "a7": "B", "f2": "D", "c2": "C", "f4": "D"}, to_move=WHITE)
    with pytest.raises(IllegalMoveError, match='"f2-f3": f3 is taken by a buffalo, and a dog'):
        GAME.parse_move(state, WHITE, "f2-f3")
    with pytest.raises(IllegalMoveError, match="blocked at f3; a dog never jumps"):
        GAME.parse_move(state, WHITE, "f2-f5")
    with pytest.raises(IllegalMoveError, match="like a queen"):
        GAME.parse_move(state, WHITE, "f2-g4")
    with pytest.raises(IllegalMoveError, match="the chief steps only one square"):
        GAME.parse_move(state, WHITE, "c2-c4")
    with pytest.raises(IllegalMoveError, match="a buffalo of Black's on a7"):
        GAME.parse_move(state, WHITE, "a7-a6")
    assert {"f2-e3", "f2-g3", "c2-b3", "c2-d3"} <= texts(state, WHITE)


def test_a_dog_and_the_chief_are_blocked_by_the_rivers() -> None:
    state = position({"a7": "B", "d2": "D", "d6": "D", "g6": "C", "k4": "D", "k3": "D"}, WHITE)
    for text in ("d2-d1", "d6-d7", "g6-g7", "d2 d1"):
        with pytest.raises(IllegalMoveError, match="never crosses a river"):
            GAME.parse_move(state, WHITE, text)
    rows = {GAME.format_move(state, m)[-1] for m in GAME.legal_moves(state, WHITE)}
    assert rows == {"2", "3", "4", "5", "6"}
    assert "d2-d5" in texts(state, WHITE) and "d6-a3" in texts(state, WHITE)


def test_a_buffalo_is_blocked_by_a_piece_and_never_moves_back_or_sideways() -> None:
    state = position({"e7": "B", "e6": "D", "c5": "B", "g4": "B", "g3": "C", "a2": "D"})
    with pytest.raises(IllegalMoveError, match='"e7-e6": e6 is taken by a dog, and a buffalo'):
        GAME.parse_move(state, BLACK, "e7-e6")
    with pytest.raises(IllegalMoveError, match="taken by the chief"):
        GAME.parse_move(state, BLACK, "g3")
    for text in ("c5-d5", "c5-c6", "c5-c3", "c5-d4"):
        with pytest.raises(IllegalMoveError, match="only one square straight forward"):
            GAME.parse_move(state, BLACK, text)
    with pytest.raises(IllegalMoveError, match="no buffalo can step to d6"):
        GAME.parse_move(state, BLACK, "d6")
    with pytest.raises(IllegalMoveError, match="there is a dog of White's on a2"):
        GAME.parse_move(state, BLACK, "a2-a1")
    assert texts(state, BLACK) == {"c5-c4"}


def example_of(state: BuffaloState) -> str:
    """The example move quoted in the prompt of the side to move."""
    prompt = GAME.to_move(state).prompts[state.to_move]
    return prompt.split("e.g. ")[1].split(" or ")[0].split(";")[0]


def test_prompts_quote_a_move_of_the_position() -> None:
    state = GAME.new_game({}, RNG)
    assert example_of(state) == "f7-f6" and "or just f6" in GAME.to_move(state).prompts[BLACK]
    state = play(state, "f6")
    assert GAME.to_move(state).prompts[WHITE].startswith("as White, move a dog like a queen")
    rng = random.Random(5)
    for _ in range(60):  # along a random game, every example is a legal move
        text = example_of(state)
        assert GAME.parse_move(state, state.to_move, text) in GAME.legal_moves(state, state.to_move)
        state = GAME.apply(state, rng.choice(GAME.legal_moves(state, state.to_move)), rng)
        if GAME.outcome(state) is not None:
            break


def test_rebel_prompt_mentions_dog_only_when_a_move_would_enclose_one() -> None:
    state = rebel({"c5": "B", "e6": "B", "d5": "D", "a2": "C"})
    prompt = GAME.to_move(state).prompts[BLACK]
    assert "if your move encloses a dog, add dog:b2 to send it to b2" in prompt
    assert "dog:" not in GAME.to_move(rebel({"c5": "B", "e7": "B", "d5": "D"})).prompts[BLACK]


@pytest.mark.parametrize(
    ("text", "kind", "words"),
    [
        ("e7-e9", IllegalMoveError, "there is no square e9"),
        ("l7-l6", IllegalMoveError, "there is no square l7"),
        ("e7-e6-e5", InvalidMoveError, "is not a Buffalo move"),
        ("buffalo", InvalidMoveError, "is not a Buffalo move"),
        ("e7-e6 dog", InvalidMoveError, "dog:b2"),
    ],
)
def test_notation_mistakes(text: str, kind: type[MoveError], words: str) -> None:
    with pytest.raises(kind, match=words) as caught:
        GAME.parse_move(GAME.new_game({}, RNG), BLACK, text)
    assert f'"{text}"' in str(caught.value)


def test_black_wins_on_row_one() -> None:
    state = position({"c2": "B", "a4": "B", "k6": "C", "f5": "D", "f4": "D", "f3": "D"})
    after = play(state, "c1")
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.winners == {BLACK}
    assert outcome.reason == "a buffalo crossed the river to row 1, at c1"
    assert GAME.to_move(after).seats == frozenset()


def test_white_wins_when_the_last_buffalo_is_captured() -> None:
    state = position({"f3": "B", "f2": "C", "a4": "D", "b4": "D", "c4": "D", "d4": "D"}, WHITE)
    outcome = GAME.outcome(play(state, "f2xf3"))
    assert outcome is not None and outcome.winners == {WHITE}
    assert outcome.reason == "every buffalo is captured"


def test_white_wins_when_every_buffalo_is_blocked() -> None:
    pieces = {"c5": "B", "c3": "B", "c2": "C", "a6": "D", "j2": "D", "j3": "D", "j4": "D"}
    state = position(pieces, to_move=WHITE)
    before = play(state, "a6-a5")  # c5 can still move: the game goes on
    assert GAME.outcome(before) is None
    outcome = GAME.outcome(play(state, "a6-c4"))  # c5 blocked by the dog, c3 by the chief
    assert outcome is not None and outcome.winners == {WHITE}
    assert outcome.reason == "no buffalo can move"


def test_black_wins_when_white_cannot_move() -> None:
    # The chief on a2 and the dogs on a3, b3, b2 are walled in by buffalo the chief does not
    # touch; the fourth dog on k2 has only k3 left, and k4-k3 shuts it.
    pieces = {"a2": "C", "a3": "D", "b3": "D", "b2": "D", "k2": "D", "j2": "B", "j3": "B"}
    pieces.update({w: "B" for w in ("a4", "b4", "c4", "c3", "c2", "k4")})
    state = position(pieces)
    assert GAME.outcome(state) is None
    after = play(state, "k3")
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.winners == {BLACK}
    assert outcome.reason == "White cannot move"
    assert texts(position(pieces, WHITE), WHITE) == {"k2-k3"}  # the one way out, now shut


# --- Rebel Buffalo ---------------------------------------------------------------------------


def test_enclosed_left_and_right_goes_home_to_the_nearest_row_two_square() -> None:
    state = rebel({"c5": "B", "e6": "B", "d5": "D", "f2": "C"})
    after = play(state, "e5")
    assert at(after, "d5") == "." and at(after, "d2") == "D"
    assert after.last_move == "e6-e5 dog:d2"


def test_enclosed_above_and_below_with_a_named_square() -> None:
    state = rebel({"d4": "B", "d7": "B", "d5": "D", "f2": "C"})
    after = play(state, "d7-d6 dog:a2")
    assert at(after, "a2") == "D" and at(after, "d5") == "." and at(after, "d6") == "B"
    assert after.last_move == "d7-d6 dog:a2"


@pytest.mark.parametrize(("arriving", "other"), [("c6", "e5"), ("e6", "c5"), ("d7", "d4")])
def test_enclosure_by_a_buffalo_arriving_on_either_side(arriving: str, other: str) -> None:
    state = rebel({arriving: "B", other: "B", "d5": "D", "k3": "C"})
    after = play(state, f"{arriving[0]}{int(arriving[1]) - 1}")
    assert at(after, "d5") == "." and at(after, "d2") == "D"
    assert enclosed_dogs(after.cells) == []


def test_a_diagonal_flank_does_not_count() -> None:
    state = rebel({"c6": "B", "e4": "B", "d5": "D", "k2": "C"})
    after = play(state, "c5")  # c5 is beside d5, but e4 is diagonal to it
    assert at(after, "d5") == "D" and after.last_move == "c6-c5"
    with pytest.raises(IllegalMoveError, match='"c6-c5 dog:a2": this move encloses no dog'):
        GAME.parse_move(state, BLACK, "c6-c5 dog:a2")
    corner = rebel({"c6": "B", "d6": "B", "d5": "D", "k2": "C"})  # c5 + d6: an L, not a line
    assert at(play(corner, "c5"), "d5") == "D"


def test_a_buffalo_two_squares_away_does_not_enclose() -> None:
    state = rebel({"b6": "B", "e5": "B", "d5": "D", "k2": "C"})
    assert at(play(state, "b5"), "d5") == "D"


def test_two_dogs_enclosed_by_one_move() -> None:
    # The buffalo arriving on e5 closes d5 (with c5) and f5 (with g5).
    state = rebel({"c5": "B", "g5": "B", "e6": "B", "d5": "D", "f5": "D", "k3": "C"})
    default = play(state, "e5")
    assert squares_of(default, "D") == ["d2", "f2"]
    assert default.last_move == "e6-e5 dog:d5>d2 dog:f5>f2"
    plain = play(state, "e6-e5 dog:a2 dog:b2")  # plain squares go to the dogs in board order
    assert plain.last_move == "e6-e5 dog:d5>a2 dog:f5>b2"
    one = play(state, "e6-e5 dog:f2")  # d5 gets f2, so f5 goes to the nearest other square
    assert one.last_move == "e6-e5 dog:d5>f2 dog:f5>e2"
    by_name = play(state, "e6-e5 dog:f5>a2")  # naming the dog; d5 takes its default
    assert by_name.last_move == "e6-e5 dog:d5>d2 dog:f5>a2"
    assert play(state, "E6E5 Dog: F5 > A2").cells == by_name.cells
    both = play(state, "e6-e5 dog:f5>a2, dog:k2")
    assert both.last_move == "e6-e5 dog:d5>k2 dog:f5>a2"
    assert len([m for m in GAME.legal_moves(state, BLACK) if m.src == idx("e6")]) == 11 * 10


def test_default_placement_prefers_the_lower_column_on_a_tie() -> None:
    state = rebel({"c5": "B", "e6": "B", "d5": "D", "d2": "C"})
    after = play(state, "e5")  # d2 is taken: c2 and e2 are as near, c2 wins
    assert at(after, "c2") == "D" and after.last_move == "e6-e5 dog:c2"


def test_a_dog_enclosed_on_row_two_goes_to_another_row_two_square() -> None:
    # The position (SPEC 4.4): c3-c2 encloses the dog on d2 between c2 and e2.
    state = rebel(
        {"f2": "C", "d2": "D", "h2": "D", "i2": "D", "a5": "D", "c3": "B", "e2": "B", "a7": "B"}
    )
    after = play(state, "c3-c2")
    # b2 is the nearest other empty square of row 2 (two columns away; g2 and a2 are three).
    assert at(after, "d2") == "." and at(after, "b2") == "D"
    assert after.last_move == "c3-c2 dog:b2"
    assert enclosed_dogs(after.cells) == []
    assert GAME.parse_move(state, BLACK, after.last_move) == GAME.parse_move(state, BLACK, "c2")
    # Every legal c3-c2 sends the dog somewhere else on row 2; none keeps it on d2.
    targets = {m.placements for m in GAME.legal_moves(state, BLACK) if m.src == idx("c3")}
    assert targets == {((idx("d2"), idx(sq)),) for sq in ("a2", "b2", "d2", "g2", "j2", "k2")} - {
        ((idx("d2"), idx("d2")),)
    }
    moved = play(state, "c2 dog:k2")
    assert at(moved, "k2") == "D" and at(moved, "d2") == "."
    for text in ("c2 dog:d2", "c2 dog:d2>d2"):
        with pytest.raises(IllegalMoveError, match="must leave|leaves its square") as caught:
            GAME.parse_move(state, BLACK, text)
        assert str(caught.value).startswith(f'"{text}"')
    check_position(GAME, state)


def test_a_dog_enclosed_on_row_two_stays_only_without_another_empty_square() -> None:
    # Row 2 is full but for d2, where the enclosed dog stands: it has nowhere else to go.
    row2 = dict(zip((f"{c}2" for c in LETTERS), "CD.DBBBBBBB", strict=True))
    del row2["c2"]
    state = rebel({**row2, "c3": "B", "a7": "B", "i5": "D", "k5": "D"})
    after = play(state, "c3-c2")
    assert at(after, "d2") == "D" and after.last_move == "c3-c2"
    c3_moves = [m for m in GAME.legal_moves(state, BLACK) if m.src == idx("c3")]
    assert [GAME.format_move(state, m) for m in c3_moves] == ["c3-c2"]
    check_position(GAME, state)


def test_dogs_enclosed_on_row_two_swap_rather_than_stay() -> None:
    # Three dogs enclosed on row 2 with only their own squares free: nearest-first would strand
    # the last one on its own square, so the placement moving all three is used.
    row2 = dict(zip((f"{c}2" for c in LETTERS), "BDBDBDBCBBB", strict=True))
    del row2["e2"]
    state = rebel({**row2, "e3": "B", "a7": "B", "k5": "D"})
    after = play(state, "e3-e2")
    dogs = [idx(sq) for sq in ("b2", "d2", "f2")]
    placements = GAME.parse_move(state, BLACK, "e2").placements
    assert len(placements) == 3 and all(dog != target for dog, target in placements)
    assert sorted(t for _, t in placements) == dogs
    assert squares_of(after, "D") == ["b2", "d2", "f2", "k5"]
    assert GAME.parse_move(state, BLACK, after.last_move).placements == placements
    check_position(GAME, state)


def test_a_dog_walking_between_two_buffalo_goes_home_after_the_next_buffalo_move() -> None:
    state = rebel({"c5": "B", "e5": "B", "a7": "B", "d3": "D", "k3": "C"}, to_move=WHITE)
    walked = play(state, "d3-d5")
    assert at(walked, "d5") == "D"  # safe on its own move: only buffalo moves enclose
    after = play(walked, "a6")
    assert at(after, "d5") == "." and at(after, "d2") == "D"
    assert after.last_move == "a7-a6 dog:d2"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("e6-e5 dog:b3", "goes back to row 2, not to b3"),
        ("e6-e5 dog:k2", "k2 is not free for a dog"),
        ("e6-e5 dog:a2 dog:b2", "encloses one dog, but names more squares"),
        ("e6-e5 dog:c5>a2", "the dog on c5 is not enclosed"),
        ("e6-e5 dog:d5>a2 dog:d5>b2", "named twice"),
        ("e6-e5 dog:a2 dog:a2", "a2 is not free"),
        ("e6-e5 dog:zz", "write where an enclosed dog goes as dog:b2"),
        ("e6-e5 dog:a9", "there is no square a9"),
    ],
)
def test_rebel_placement_mistakes(text: str, problem: str) -> None:
    state = rebel({"c5": "B", "e6": "B", "d5": "D", "k2": "C"})
    with pytest.raises(MoveError, match=problem) as caught:
        GAME.parse_move(state, BLACK, text)
    assert str(caught.value).startswith(f'"{text}"')


def test_dog_words_belong_to_buffalo_moves_of_rebel_games_only() -> None:
    standard = position({"c5": "B", "e6": "B", "d5": "D", "k2": "C"})
    with pytest.raises(IllegalMoveError, match="only in Rebel Buffalo"):
        GAME.parse_move(standard, BLACK, "e6-e5 dog:a2")
    assert at(play(standard, "e5"), "d5") == "D"  # no enclosure rule in the standard game
    white = rebel({"c5": "B", "e6": "B", "d4": "D", "k2": "C"}, to_move=WHITE)
    with pytest.raises(IllegalMoveError, match="only by a buffalo move"):
        GAME.parse_move(white, WHITE, "d4-d3 dog:a2")


def test_when_row_two_is_full_the_dogs_without_room_stay() -> None:
    # Row 2 is crowded: dogs on b2, f2, h2 are enclosed there, and e6-e5 encloses d5 as well.
    # Lifted, they leave three squares for four dogs; each row-2 dog takes the nearest square
    # other than its own, and d5 finds none and stays.
    row2 = dict(zip((f"{c}2" for c in LETTERS), "BDBCBDBDBBB", strict=True))
    state = rebel({**row2, "c5": "B", "e6": "B", "d5": "D"})
    assert not room_for(play_cells(state, "e6", "e5"), enclosed_dogs(play_cells(state, "e6", "e5")))
    after = play(state, "e5")
    assert squares_of(after, "D") == ["b2", "d5", "f2", "h2"]
    assert after.last_move == "e6-e5 dog:b2>f2 dog:f2>h2 dog:h2>b2"
    assert GAME.parse_move(state, BLACK, after.last_move) == GAME.parse_move(state, BLACK, "e5")
    with pytest.raises(IllegalMoveError, match="no room for every enclosed dog"):
        GAME.parse_move(state, BLACK, "e6-e5 dog:d5>b2")
    check_position(GAME, state)


def play_cells(state: BuffaloState, src: str, dst: str) -> str:
    chars = list(state.cells)
    chars[idx(dst)], chars[idx(src)] = chars[idx(src)], "."
    return "".join(chars)


# --- storage ---------------------------------------------------------------------------------


def test_dump_and_load_round_trip_and_reject_bad_states() -> None:
    state = play(GAME.new_game({"variant": "rebel"}, RNG), "e6", "d2-d5")
    good = GAME.dump(state)
    assert GAME.load(good) == state
    board = good["board"]
    bad_boards = [
        board[:-1],
        ["D" + board[0][1:], *board[1:]],  # a fifth dog, on a1 beyond the river
        [*board[:6], "C" + board[6][1:]],  # a second chief
        [board[0], board[1].replace("D", "B", 1), *board[2:]],  # a dog missing
        ["B" + board[0][1:], *board[1:]],  # a buffalo on row 1, yet no winner
    ]
    for bad in (
        *({**good, "board": b} for b in bad_boards),
        {**good, "variant": "wild"},
        {**good, "ply": -1},
        {**good, "winner": 1, "reason": "no buffalo can move"},
        {**good, "last_move": "hello"},
        {**good, "version": 99},
        "not a mapping",
    ):
        with pytest.raises(StateError):
            GAME.load(bad)  # type: ignore[arg-type]


# --- properties ------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
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
        assert state.cells.count("D") == 4 and state.cells.count("C") == 1
        if seat == BLACK:
            assert before.cells[move.src] == "B" and move.dst == move.src - COLS
            gone = {i for i, p in enumerate(before.cells) if p == "B"} - {move.src}
            assert gone | {move.dst} == {i for i, p in enumerate(state.cells) if p == "B"}


_SQUARES = [f"{c}{r}" for c in LETTERS for r in range(3, 7)]


@settings(max_examples=80, deadline=None)
@given(
    spots=st.lists(st.sampled_from(_SQUARES), min_size=10, max_size=10, unique=True),
    crowd=st.integers(3, 5),
)
def test_after_any_rebel_buffalo_move_no_dog_is_left_enclosed(spots: list[str], crowd: int) -> None:
    # Four dogs and up to six buffalo packed on rows 3-6; the chief on k2. Row 2 has room
    # for every dog, so each buffalo move must leave no dog between two buffalo.
    pieces = {spot: "D" for spot in spots[:4]}
    pieces.update({spot: "B" for spot in spots[4 : 4 + crowd + 1]})
    pieces["k2"] = "C"
    state = rebel(pieces)
    for move in GAME.legal_moves(state, BLACK):
        after = GAME.apply(state, move, RNG)
        assert enclosed_dogs(after.cells) == []
        assert after.cells.count("D") == 4
        assert GAME.parse_move(state, BLACK, GAME.format_move(state, move)) == move
