"""The shared pairing values and the first-move balancing rule every format uses."""

from __future__ import annotations

import pytest

from pbmserv.tournaments.pairing import (
    Pairing,
    RoundPairing,
    first_move_histories,
    first_mover,
    match_games,
)


def test_a_pairing_knows_its_players() -> None:
    pairing = Pairing("ann", "bob")
    assert pairing.players == ("ann", "bob")
    assert pairing.opponent_of("bob") == "ann"
    assert pairing.reversed() == Pairing("bob", "ann")
    with pytest.raises(ValueError, match="cal does not play in ann v bob"):
        pairing.opponent_of("cal")
    with pytest.raises(ValueError, match="cannot be paired with themselves"):
        Pairing("ann", "ann")


def test_a_round_lists_players_and_finds_a_match() -> None:
    round_ = RoundPairing((Pairing(1, 2), Pairing(3, 4)), byes=(5,))
    assert round_.players == (1, 2, 3, 4, 5)
    assert round_.pairing_of(4) == Pairing(3, 4)
    assert round_.pairing_of(5) is None


def test_match_games_alternate_the_first_move() -> None:
    assert match_games(Pairing("a", "b"), 3) == (
        Pairing("a", "b"),
        Pairing("b", "a"),
        Pairing("a", "b"),
    )
    with pytest.raises(ValueError, match="at least one game"):
        match_games(Pairing("a", "b"), 0)


def test_histories_record_first_and_second_moves_in_order() -> None:
    rounds = [[Pairing("a", "b")], [Pairing("c", "a")], [Pairing("a", "c")]]
    assert first_move_histories(rounds) == {"a": "FSF", "b": "S", "c": "FS"}


def test_fewer_first_moves_moves_first() -> None:
    histories = {"top": "FSF", "low": "SFS"}
    assert first_mover("top", "low", histories) == Pairing("low", "top")


def test_level_records_alternate_from_the_latest_difference() -> None:
    # Same balance and the same last two sides; two games ago "top" moved second.
    histories = {"top": "FSSF", "low": "SFSF"}
    assert first_mover("top", "low", histories) == Pairing("top", "low")
    assert first_mover("low", "top", histories) == Pairing("top", "low")
    histories = {"top": "SF", "low": "FS"}
    assert first_mover("top", "low", histories) == Pairing("low", "top")


def test_identical_records_favour_the_better_player() -> None:
    assert first_mover("top", "low", {}) == Pairing("top", "low")
    assert first_mover("top", "low", {"top": "FS", "low": "FS"}) == Pairing("top", "low")
