"""Glicko-2's maths: Glickman's worked example, and what must hold for any board."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pbmserv.core.ratings.glicko2 import (
    START_RD,
    Glicko,
    aged,
    board_ratings,
    expected_score,
    rated,
)


def test_the_papers_example() -> None:
    # Glickman, "Example of the Glicko-2 system" (2013), section 3.
    player = Glicko(1500, 200, 0.06)
    results = [(Glicko(1400, 30), 1.0), (Glicko(1550, 100), 0.0), (Glicko(1700, 300), 0.0)]
    after = rated(player, results, periods=1.0)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


def test_an_absent_player_grows_unsure_up_to_a_newcomers_deviation() -> None:
    veteran = Glicko(1700, 60, 0.06)
    a_year = aged(veteran, 52)
    assert a_year.rating == 1700 and 60 < a_year.rd < START_RD
    assert aged(veteran, 10_000).rd == START_RD
    assert aged(veteran, 0) == veteran


def test_a_conservative_rating_and_provisional_mark() -> None:
    assert Glicko(1800, 300).conservative == 1200
    assert Glicko(1800, 300).provisional and not Glicko(1800, 80).provisional


players = st.builds(
    Glicko,
    st.floats(min_value=800, max_value=2600),
    st.floats(min_value=30, max_value=START_RD),
    st.floats(min_value=0.03, max_value=0.1),
)
idle = st.floats(min_value=0, max_value=100)


@given(players, players, idle, idle)
def test_the_winner_gains_the_loser_loses_and_both_grow_surer(
    a: Glicko, b: Glicko, idle_a: float, idle_b: float
) -> None:
    won, lost = board_ratings([a, b], [1.0, 0.0], [idle_a, idle_b])
    assert won.rating > a.rating and lost.rating < b.rating
    # A board narrows the deviation the player had grown to by now (at the new volatility).
    for before, after, periods in ((a, won, idle_a), (b, lost, idle_b)):
        grown = aged(Glicko(before.rating, before.rd, after.volatility), periods)
        assert after.rd < grown.rd
    assert won.rd > 0 and lost.rd > 0


@given(players, players)
def test_a_draw_moves_both_toward_each_other(a: Glicko, b: Glicko) -> None:
    first, second = board_ratings([a, b], [0.5, 0.5], [0.0, 0.0])
    if a.rating < b.rating:
        assert first.rating >= a.rating and second.rating <= b.rating


@given(players, players)
def test_predictions_are_complementary_and_favour_the_higher_rating(a: Glicko, b: Glicko) -> None:
    assert expected_score(a, b) + expected_score(b, a) == pytest.approx(1.0)
    if a.rating > b.rating:
        assert expected_score(a, b) > 0.5
    # Wider deviations pull the prediction toward an even game.
    wide = Glicko(a.rating, START_RD), Glicko(b.rating, START_RD)
    assert abs(expected_score(*wide) - 0.5) <= abs(expected_score(a, b) - 0.5) + 1e-12


@given(st.lists(players, min_size=3, max_size=4), st.data())
def test_a_board_of_many_seats_rates_every_pair(values: list[Glicko], data) -> None:  # type: ignore[no-untyped-def]
    scores = data.draw(st.permutations([float(i) for i in range(len(values))]))
    after = board_ratings(values, scores, [0.0] * len(values))
    best = scores.index(max(scores))
    worst = scores.index(min(scores))
    assert after[best].rating > values[best].rating
    assert after[worst].rating < values[worst].rating
