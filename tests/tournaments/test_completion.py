"""The look-ahead search and the ordered matchings under the Swiss pairing."""

from __future__ import annotations

from itertools import combinations

import pytest

from pbmserv.tournaments.completion import BudgetExhausted, disjoint_perfect_matchings, without
from pbmserv.tournaments.matching import best_matching


def complete(n: int) -> list[int]:
    return [((1 << n) - 1) & ~(1 << v) for v in range(n)]


def two_triangles() -> list[int]:
    """{0, 1, 2} and {3, 4, 5}, each a triangle: what three cross rounds of six leave."""
    allowed = [0] * 6
    for a, b in combinations(range(6), 2):
        if (a < 3) == (b < 3):
            allowed[a] |= 1 << b
            allowed[b] |= 1 << a
    return allowed


@pytest.mark.parametrize("n", [2, 4, 6, 8, 12, 16, 18])
def test_a_complete_graph_splits_into_a_round_robin(n: int) -> None:
    rounds = disjoint_perfect_matchings(complete(n), n - 1)
    assert rounds is not None and len(rounds) == n - 1
    edges = [frozenset(edge) for matching in rounds for edge in matching]
    assert len(edges) == len(set(edges)) == n * (n - 1) // 2
    for matching in rounds:
        assert sorted(v for edge in matching for v in edge) == list(range(n))


def test_two_triangles_cannot_be_paired() -> None:
    assert disjoint_perfect_matchings(two_triangles(), 1) is None
    assert disjoint_perfect_matchings(complete(6), 6) is None  # more rounds than opponents
    assert disjoint_perfect_matchings(two_triangles(), 0) == []


def test_an_odd_vertex_count_is_refused() -> None:
    with pytest.raises(ValueError, match="even number of vertices"):
        disjoint_perfect_matchings(complete(5), 1)


def test_the_budget_bounds_the_search() -> None:
    with pytest.raises(BudgetExhausted):
        disjoint_perfect_matchings(complete(16), 15, budget=5)


def test_without_removes_the_pairs() -> None:
    assert without(complete(4), [(0, 1), (2, 3)]) == (0b1100, 0b1100, 0b0011, 0b0011)


def test_best_matching_goes_down_by_weight_until_accepted() -> None:
    weights = {(0, 1): 10, (2, 3): 10, (0, 2): 6, (1, 3): 6, (0, 3): 1, (1, 2): 1}
    seen = []

    def refuse_the_best_two(matching: frozenset) -> bool:
        seen.append(matching)
        return len(seen) == 3

    found = best_matching(4, weights, refuse_the_best_two)
    assert seen == [
        frozenset({(0, 1), (2, 3)}),
        frozenset({(0, 2), (1, 3)}),
        frozenset({(0, 3), (1, 2)}),
    ]
    assert found == frozenset({(0, 3), (1, 2)})
    assert best_matching(4, weights, lambda m: False) is None
    assert best_matching(4, {(0, 1): 1}, lambda m: True) is None  # no perfect matching
