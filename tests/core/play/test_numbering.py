"""One numbering of moves: what the board mail shows as the next move is what #N, show, undo
and history use, in every game."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbmserv.core.play import numbering
from pbmserv.games import all_games
from pbmserv.games.base import GameSpec

SPECS = {game.SPEC.name: game.SPEC for game in all_games()}
CHESS = SPECS["extinction"]
PLIES = SPECS["owlman"]


@pytest.mark.parametrize("name", sorted(SPECS))
@given(plies=st.integers(min_value=0, max_value=500))
def test_the_next_moves_number_is_the_one_a_guard_takes(name: str, plies: int) -> None:
    spec = SPECS[name]
    shown = numbering.number_of(spec, plies)  # "next is move N" on the board mail
    assert numbering.guard_problem(spec, plies, shown) is None
    assert numbering.guard_problem(spec, plies, shown + 1) == f"the next is move {shown}"
    assert numbering.guard_problem(spec, plies, shown - 1) is not None
    # History labels the move when it is made with the same number.
    assert numbering.label(spec, plies).rstrip(".") == str(shown)


@pytest.mark.parametrize("name", sorted(SPECS))
@given(plies=st.integers(min_value=1, max_value=500), data=st.data())
def test_show_after_a_number_replays_up_to_that_move(
    name: str, plies: int, data: st.DataObject
) -> None:
    spec: GameSpec = SPECS[name]
    made = data.draw(st.integers(min_value=0, max_value=plies - 1))  # a move already made
    number = numbering.number_of(spec, made)
    replayed = numbering.plies_after(spec, number, "", plies)
    assert replayed is not None and made < replayed <= plies
    # The position shown is after that move and before any later-numbered move.
    assert numbering.number_of(spec, replayed - 1) == number
    assert numbering.plies_after(spec, numbering.number_of(spec, plies) + 1, "", plies) is None


def test_a_chess_game_shares_a_number_between_white_and_black() -> None:
    assert [numbering.label(CHESS, p) for p in range(4)] == ["1.", "1...", "2.", "2..."]
    assert numbering.named(CHESS, 3, "Nc6") == "2... Nc6"
    assert numbering.played_so_far(CHESS, 3) == "2 by White, 1 by Black"
    assert numbering.played_so_far(CHESS, 4) == "2 by each side"
    assert numbering.plies_after(CHESS, 2, ".", 4) == 3  # after White's move 2 alone
    assert numbering.plies_after(CHESS, 2, "", 3) == 3  # Black's move 2 still to come
    assert numbering.plies_after(CHESS, 2, ".", 2) is None
    assert numbering.shown_at(CHESS, 3) == "after White's move 2"


def test_other_games_count_every_move() -> None:
    assert [numbering.label(PLIES, p) for p in range(3)] == ["1.", "2.", "3."]
    assert numbering.named(PLIES, 4, "c4") == "move 5 (c4)"
    assert numbering.played_so_far(PLIES, 7) == "7"
    assert numbering.shown_at(PLIES, 0) == "before the first move"
