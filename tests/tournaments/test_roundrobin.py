"""Round robin: the FIDE Berger tables, every pair once (twice), balanced first moves."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from pbmserv.tournaments.roundrobin import berger_rounds, berger_table

# FIDE Handbook C.05, Annex 1: the Berger tables for 6 and 8 players (first-named moves first).
FIDE_6 = (
    ((1, 6), (2, 5), (3, 4)),
    ((6, 4), (5, 3), (1, 2)),
    ((2, 6), (3, 1), (4, 5)),
    ((6, 5), (1, 4), (2, 3)),
    ((3, 6), (4, 2), (5, 1)),
)
FIDE_8 = (
    ((1, 8), (2, 7), (3, 6), (4, 5)),
    ((8, 5), (6, 4), (7, 3), (1, 2)),
    ((2, 8), (3, 1), (4, 7), (5, 6)),
    ((8, 6), (7, 5), (1, 4), (2, 3)),
    ((3, 8), (4, 2), (5, 1), (6, 7)),
    ((8, 7), (1, 6), (2, 5), (3, 4)),
    ((4, 8), (5, 3), (6, 2), (7, 1)),
)


def test_berger_tables_are_fides() -> None:
    assert berger_table(6) == FIDE_6
    assert berger_table(8) == FIDE_8
    assert berger_table(2) == (((1, 2),),)


def test_berger_table_needs_an_even_count() -> None:
    with pytest.raises(ValueError, match="even number of players, not 5"):
        berger_table(5)


def first_moves(rounds) -> Counter:
    return Counter(p.first for r in rounds for p in r.pairings)


@pytest.mark.parametrize("n", range(2, 21))
def test_single_round_robin(n: int) -> None:
    players = [f"p{i}" for i in range(n)]
    rounds = berger_rounds(players)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    for r in rounds:
        assert sorted(r.players) == sorted(players)  # everyone once a round
        assert len(r.byes) == n % 2
    met = Counter(frozenset(p.players) for r in rounds for p in r.pairings)
    assert set(met) == {frozenset(pair) for pair in combinations(players, 2)}
    assert set(met.values()) == {1}
    if n % 2:
        assert sorted(b for r in rounds for b in r.byes) == sorted(players)
    counts = first_moves(rounds)
    assert max(counts[p] for p in players) - min(counts[p] for p in players) <= 1


@pytest.mark.parametrize("n", range(2, 13))
def test_double_round_robin_meets_twice_with_first_moves_swapped(n: int) -> None:
    players = list(range(n))
    rounds = berger_rounds(players, double=True)
    single = len(rounds) // 2
    assert len(rounds) == 2 * (n - 1 if n % 2 == 0 else n)
    ordered = Counter(p.players for r in rounds for p in r.pairings)
    assert set(ordered) == {(a, b) for a in players for b in players if a != b}
    assert set(ordered.values()) == {1}
    for first_half, second_half in zip(rounds[:single], rounds[single:], strict=True):
        assert second_half.pairings == tuple(p.reversed() for p in first_half.pairings)
    counts = first_moves(rounds)
    assert {counts[p] for p in players} == {n - 1}


def test_odd_field_gives_the_bye_to_the_dummys_opponent() -> None:
    rounds = berger_rounds(["a", "b", "c"])
    assert [r.byes for r in rounds] == [("a",), ("c",), ("b",)]
    assert [r.pairings[0].players for r in rounds] == [("b", "c"), ("a", "b"), ("c", "a")]


def test_bad_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="at least two players"):
        berger_rounds(["solo"])
    with pytest.raises(ValueError, match="ann is listed twice"):
        berger_rounds(["ann", "bob", "ann"])
