"""Knockout: standard seeding, byes only in round 1 for the top seeds, and the repechage."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from pbmserv.tournaments.knockout import (
    Bye,
    Knockout,
    KnockoutRound,
    knockout_bracket,
    standard_seed_order,
)
from pbmserv.tournaments.pairing import Pairing, RoundPairing

FIELD_SIZES = range(2, 34)
Chooser = Callable[[Pairing], object]


def seeds(n: int) -> list[str]:
    return [f"s{i}" for i in range(1, n + 1)]


def seed_number(player: object) -> int:
    return int(str(player)[1:])


def favourites(pairing: Pairing) -> object:
    """The better seed wins."""
    return min(pairing.players, key=seed_number)


def play_out(knockout: Knockout, choose: Chooser) -> tuple[Knockout, list[RoundPairing]]:
    """Play every round, ``choose`` picking each match's winner; return the end and the rounds."""
    rounds = []
    while not knockout.finished:
        pending = knockout.pending
        assert pending.pairings, "a round with nothing to play"
        rounds.append(pending)
        knockout = knockout.record_round({choose(p) for p in pending.pairings})
    return knockout, rounds


def rounds_for(n: int) -> int:
    return (n - 1).bit_length()


def test_standard_order_for_sixteen() -> None:
    assert standard_seed_order(16) == (1, 16, 8, 9, 4, 13, 5, 12, 2, 15, 7, 10, 3, 14, 6, 11)
    assert standard_seed_order(2) == (1, 2)
    with pytest.raises(ValueError, match="power of two places, not 12"):
        standard_seed_order(12)


@pytest.mark.parametrize("size", [2, 4, 8, 16, 32, 64])
def test_standard_order_properties(size: int) -> None:
    order = standard_seed_order(size)
    assert sorted(order) == list(range(1, size + 1))
    assert all(a + b == size + 1 for a, b in zip(order[::2], order[1::2], strict=True))
    # Seeds 1..k are spread one to each of the k equal sections of the bracket.
    k = 2
    while k <= size:
        sections = [order[i : i + size // k] for i in range(0, size, size // k)]
        assert sorted(min(section) for section in sections) == list(range(1, k + 1))
        k *= 2


@pytest.mark.parametrize("n", FIELD_SIZES)
def test_byes_go_to_the_top_seeds_and_only_in_round_one(n: int) -> None:
    knockout = knockout_bracket(seeds(n))
    first = knockout.main[0]
    size = 1 << rounds_for(n)
    assert len(first.matches) == size // 2
    assert sorted(first.byes, key=seed_number) == seeds(n)[: size - n]
    end, _ = play_out(knockout, lambda p: random.Random(str(p)).choice(p.players))
    assert all(not r.byes for r in end.main[1:])
    # No holes: each later round holds half the matches of the one before.
    assert [len(r.matches) for r in end.main] == [size >> k for k in range(1, rounds_for(n) + 1)]


@pytest.mark.parametrize("n", FIELD_SIZES)
def test_seeds_one_and_two_meet_only_in_the_final(n: int) -> None:
    knockout = knockout_bracket(seeds(n))
    matches = knockout.main[0].matches
    half = len(matches) // 2
    if n > 2:
        assert "s1" in KnockoutRound(matches[:half]).players
        assert "s2" in KnockoutRound(matches[half:]).players
    end, rounds = play_out(knockout, favourites)
    assert set(rounds[-1].pairings[0].players) == {"s1", "s2"}
    assert end.champion == "s1"
    if n >= 4:
        assert {p for pairing in rounds[-2].pairings for p in pairing.players} == {
            "s1",
            "s2",
            "s3",
            "s4",
        }


@pytest.mark.parametrize("n", FIELD_SIZES)
def test_without_repechage_the_main_winner_is_champion(n: int) -> None:
    end, rounds = play_out(knockout_bracket(seeds(n)), lambda p: max(p.players, key=seed_number))
    assert len(rounds) == rounds_for(n)
    assert end.champion == end.main_winner
    assert end.consolation == () and end.grand_final is None


@pytest.mark.parametrize("n", FIELD_SIZES)
def test_repechage_winner_meets_the_main_winner(n: int) -> None:
    rng = random.Random(n)
    knockout = knockout_bracket(seeds(n), repechage=True)
    first = knockout.main[0]
    end, rounds = play_out(knockout, lambda p: rng.choice(p.players))
    went_on = set(end.main[1].players) if len(end.main) > 1 else {end.main_winner}
    first_round_losers = {p for pairing in first.pairings for p in pairing.players} - went_on
    in_consolation = {p for r in end.consolation for pairing in r.pairings for p in pairing.players}
    if len(first_round_losers) > 1:
        assert in_consolation == first_round_losers
        assert all(not r.byes for r in end.consolation[1:])
    else:
        assert end.consolation == () and end.consolation_winner in first_round_losers
    assert end.grand_final is not None
    assert set(end.grand_final.players) == {end.main_winner, end.consolation_winner}
    assert rounds[-1].pairings == (end.grand_final,)
    assert end.champion in end.grand_final.players
    # The consolation runs alongside the main rounds: only the grand final is added.
    assert len(rounds) == rounds_for(n) + 1
    for r in rounds:
        assert len(r.players) == len(set(r.players))  # nobody plays twice in a round


def test_repechage_step_by_step_with_six() -> None:
    knockout = knockout_bracket(seeds(6), repechage=True)
    assert knockout.pending == RoundPairing(
        (Pairing("s4", "s5"), Pairing("s3", "s6")), byes=("s1", "s2")
    )
    knockout = knockout.record_round({"s5", "s3"})
    # Main round 2 (the movers-second of round 1 move first), and the losers s4, s6.
    assert knockout.pending.pairings == (
        Pairing("s5", "s1"),
        Pairing("s2", "s3"),
        Pairing("s6", "s4"),
    )
    knockout = knockout.record_round({"s1", "s3", "s4"})
    assert knockout.consolation_winner == "s4"
    assert knockout.pending.pairings == (Pairing("s1", "s3"),)
    knockout = knockout.record_round({"s3"})
    assert knockout.main_winner == "s3" and not knockout.finished
    assert knockout.pending.pairings == (Pairing("s3", "s4"),)
    knockout = knockout.record_round({"s4"})
    assert knockout.champion == "s4" and knockout.pending == RoundPairing(())


def test_two_players_with_repechage_play_a_rematch() -> None:
    end, rounds = play_out(knockout_bracket(["a", "b"], repechage=True), lambda p: "a")
    assert [r.pairings for r in rounds] == [(Pairing("a", "b"),), (Pairing("b", "a"),)]
    assert end.champion == "a"


def test_a_single_first_round_loser_is_the_repechage_winner() -> None:
    knockout = knockout_bracket(seeds(5), repechage=True)
    assert knockout.main[0].matches == (
        Bye("s1"),
        Pairing("s4", "s5"),
        Bye("s2"),
        Bye("s3"),
    )
    knockout = knockout.record_round({"s4"})
    assert knockout.consolation_winner == "s5" and knockout.consolation == ()


def test_wrong_winners_are_refused() -> None:
    knockout = knockout_bracket(seeds(4))
    with pytest.raises(ValueError, match="s1 v s4 needs exactly one winner, not 0"):
        knockout.record_round({"s2"})
    with pytest.raises(ValueError, match="s1 v s4 needs exactly one winner, not 2"):
        knockout.record_round({"s1", "s4", "s2"})
    with pytest.raises(ValueError, match="s9 plays no match in this round"):
        knockout.record_round({"s1", "s2", "s9"})
    end, _ = play_out(knockout, favourites)
    with pytest.raises(ValueError, match="the knockout is over"):
        end.record_round(set())


def test_bad_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="at least two players"):
        knockout_bracket(["solo"])
    with pytest.raises(ValueError, match="x is listed twice"):
        knockout_bracket(["x", "y", "x"])
