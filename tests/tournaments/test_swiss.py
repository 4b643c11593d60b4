"""Swiss and Italo-Swiss: the systems' orders, hard rules, and completion as a round robin.

Set ``CI=true`` for more hypothesis examples.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbmserv.tournaments.pairing import (
    Pairing,
    PairingError,
    PlayerId,
    RoundPairing,
    first_move_balance,
    first_move_histories,
)
from pbmserv.tournaments.standings import (
    MatchResult,
    Standing,
    Tiebreak,
    compute_standings,
    game_result,
)
from pbmserv.tournaments.swiss import ITALO, SWISS, SYSTEMS, swiss_pairings

EXAMPLES = 400 if os.environ.get("CI", "").lower() == "true" else 50


def level(players: Sequence[PlayerId], score: float = 0.0) -> list[Standing]:
    return [Standing(p, score) for p in players]


def met(rounds: Sequence[RoundPairing]) -> Counter:
    return Counter(frozenset(p.players) for r in rounds for p in r.pairings)


def round_robin_length(n: int) -> int:
    return n - 1 if n % 2 == 0 else n


class Tournament:
    """A Swiss run round by round; each match's result comes from ``outcomes`` in turn
    (0: first mover wins, 1: second mover wins, 2: draw)."""

    def __init__(self, players: Sequence[PlayerId], system: str, rounds: int) -> None:
        self.players = list(players)
        self.system = system
        self.rounds = rounds
        self.history: list[RoundPairing] = []
        self.results: list[MatchResult] = []
        self.byes: list[PlayerId] = []

    def standings(self) -> tuple[Standing, ...]:
        return compute_standings(
            self.players, self.results, byes=self.byes, tiebreak=Tiebreak.BUCHHOLZ
        )

    def play_round(self, outcomes: list[int]) -> RoundPairing:
        paired = swiss_pairings(
            self.standings(), self.history, rounds=self.rounds, system=self.system
        )
        self.history.append(paired)
        self.byes.extend(paired.byes)
        for pairing in paired.pairings:
            outcome = outcomes[len(self.results) % len(outcomes)]
            winner = (pairing.first, pairing.second, None)[outcome]
            self.results.append(game_result(pairing, winner))
        return paired

    def play_all(self, outcomes: list[int]) -> None:
        for _ in range(self.rounds):
            self.play_round(outcomes)


# --- the systems' orders -------------------------------------------------------------------


def pairs(paired: RoundPairing) -> list[set[PlayerId]]:
    return [set(p.players) for p in paired.pairings]


def test_swiss_first_round_is_top_half_against_bottom_half() -> None:
    paired = swiss_pairings(level(range(1, 9)))
    assert pairs(paired) == [{1, 5}, {2, 6}, {3, 7}, {4, 8}]
    assert [p.first for p in paired.pairings] == [1, 2, 3, 4]  # level records: the better


def test_italo_first_round_pairs_neighbours() -> None:
    paired = swiss_pairings(level(range(1, 9)), system=ITALO)
    assert pairs(paired) == [{1, 2}, {3, 4}, {5, 6}, {7, 8}]


def test_swiss_pairs_within_score_groups() -> None:
    # Two groups of four; first moves so far leave everyone free.
    standings = level("abcd", 1.0) + level("efgh", 0.0)
    paired = swiss_pairings(standings)
    assert pairs(paired) == [{"a", "c"}, {"b", "d"}, {"e", "g"}, {"f", "h"}]


def test_an_odd_score_group_floats_its_lowest_to_the_top_of_the_next() -> None:
    standings = level("abc", 2.0) + level("defgh", 1.0)
    paired = swiss_pairings(standings)
    assert {"a", "b"} in pairs(paired) and {"c", "d"} in pairs(paired)


def test_first_move_limits_come_before_the_order() -> None:
    # a and c both moved first twice running: they cannot meet (one would do it a third time).
    history = [
        RoundPairing((Pairing("a", "e"), Pairing("c", "g"), Pairing("f", "b"), Pairing("h", "d"))),
        RoundPairing((Pairing("a", "g"), Pairing("c", "e"), Pairing("h", "b"), Pairing("f", "d"))),
    ]
    paired = swiss_pairings(level("abcd", 2.0) + level("efgh", 0.0), history)
    # Dutch: 1 v 3 and 2 v 4 are out, so the bottom half transposes: 1 v 4, 2 v 3.
    assert pairs(paired)[:2] == [{"a", "d"}, {"b", "c"}]
    for pairing in paired.pairings:
        if {"a", "c"} & set(pairing.players):
            assert pairing.second in {"a", "c"}


def test_no_rematch_even_when_it_is_the_ideal_pair() -> None:
    history = [RoundPairing((Pairing(1, 5), Pairing(6, 2), Pairing(3, 7), Pairing(8, 4)))]
    paired = swiss_pairings(level(range(1, 9), 1.0), history)
    assert not set(met([paired])) & set(met(history))


def test_the_bye_goes_to_the_lowest_player_never_twice() -> None:
    standings = [Standing("a", 2), Standing("b", 1), Standing("c", 1), Standing("d", 0)]
    standings.append(Standing("e", 0))
    assert swiss_pairings(standings).byes == ("e",)
    history = [RoundPairing((Pairing("a", "b"), Pairing("c", "d")), byes=("e",))]
    assert swiss_pairings(standings, history).byes == ("d",)


def test_a_player_with_one_half_point_is_between_the_groups() -> None:
    standings = compute_standings(
        ["a", "b", "c", "d"],
        [game_result(Pairing("a", "b"), "a"), game_result(Pairing("d", "c"), None)],
    )
    assert [s.player for s in standings] == ["a", "c", "d", "b"]
    paired = swiss_pairings(standings, [RoundPairing((Pairing("a", "b"), Pairing("d", "c")))])
    assert paired.pairings == (Pairing("c", "a"), Pairing("b", "d"))


# --- never a dead end ----------------------------------------------------------------------


def triangles_history() -> list[RoundPairing]:
    """Two rounds between {1, 2, 3} and {4, 5, 6}: pairing the third cross round now would
    leave two triangles, which no round can pair."""
    return [
        RoundPairing((Pairing(1, 4), Pairing(2, 5), Pairing(3, 6))),
        RoundPairing((Pairing(5, 1), Pairing(6, 2), Pairing(4, 3))),
    ]


def test_without_look_ahead_the_obvious_round_is_a_dead_end() -> None:
    standings = level([1, 6, 2, 4, 3, 5])  # Italo neighbours are exactly the cross pairs
    paired = swiss_pairings(standings, triangles_history(), rounds=3, system=ITALO)
    assert pairs(paired) == [{1, 6}, {2, 4}, {3, 5}]
    with pytest.raises(PairingError, match="the remaining players have all met"):
        swiss_pairings(standings, [*triangles_history(), paired], system=ITALO)


def test_the_look_ahead_keeps_the_round_robin_completable() -> None:
    standings = level([1, 6, 2, 4, 3, 5])
    history = triangles_history()
    for _ in range(3):
        history.append(swiss_pairings(standings, history, rounds=5, system=ITALO))
    assert set(met(history).values()) == {1}
    assert len(met(history)) == 15


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(min_value=3, max_value=16),
    system=st.sampled_from(SYSTEMS),
    outcomes=st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=130),
)
def test_a_full_length_swiss_completes_as_a_round_robin(
    n: int, system: str, outcomes: list[int]
) -> None:
    players = [f"p{i:02}" for i in range(n)]
    tournament = Tournament(players, system, round_robin_length(n))
    tournament.play_all(outcomes)
    meetings = met(tournament.history)
    assert set(meetings) == {frozenset(pair) for pair in combinations(players, 2)}
    assert set(meetings.values()) == {1}
    assert sorted(tournament.byes) == (sorted(players) if n % 2 else [])
    for paired in tournament.history:
        assert sorted(paired.players) == players


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(min_value=3, max_value=16),
    system=st.sampled_from(SYSTEMS),
    outcomes=st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=70),
    data=st.data(),
)
def test_a_shorter_swiss_keeps_first_moves_balanced_and_alternated(
    n: int, system: str, outcomes: list[int], data: st.DataObject
) -> None:
    rounds = data.draw(st.integers(min_value=1, max_value=n // 2), label="rounds")
    tournament = Tournament(range(n), system, rounds)
    tournament.play_all(outcomes)
    assert set(met(tournament.history).values()) <= {1}
    assert len(tournament.byes) == len(set(tournament.byes))
    for record in first_move_histories(r.pairings for r in tournament.history).values():
        assert abs(first_move_balance(record)) <= 2
        assert "FFF" not in record and "SSS" not in record


def test_a_withdrawal_never_breaks_the_hard_rules() -> None:
    tournament = Tournament(range(8), SWISS, 7)
    for _ in range(3):
        tournament.play_round([0, 2, 1])
    tournament.players.remove(3)
    played = 3
    try:
        while played < 7:
            tournament.play_round([0, 2, 1])
            played += 1
    except PairingError:
        pass
    assert played >= 5
    assert set(met(tournament.history).values()) == {1}
    assert len(tournament.byes) == len(set(tournament.byes))
    assert all(3 not in r.players for r in tournament.history[3:])


def test_bad_calls_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown pairing system 'dutch': choose swiss or italo"):
        swiss_pairings(level("ab"), system="dutch")
    with pytest.raises(PairingError, match="at least two players"):
        swiss_pairings(level("a"))
    with pytest.raises(ValueError, match="a is listed twice"):
        swiss_pairings(level("aba"))
    assert SWISS == "swiss"
