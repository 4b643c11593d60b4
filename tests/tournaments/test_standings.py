"""Standings: scores with half points for draws, matches of several games, tie-breaks by hand."""

from __future__ import annotations

import pytest

from pbmserv.tournaments.formats import Format, parse_format
from pbmserv.tournaments.pairing import Pairing
from pbmserv.tournaments.standings import (
    MatchResult,
    Standing,
    Tiebreak,
    buchholz,
    compute_standings,
    game_result,
    match_result,
    scores,
    sonneborn_berger,
)

PLAYERS = ["ann", "bob", "cat", "dan"]
# Six one-game matches (a round robin of four):
#   ann beats bob, cat draws dan, ann draws cat, bob beats dan, ann beats dan, bob draws cat.
RESULTS = [
    game_result(Pairing("ann", "bob"), "ann"),
    game_result(Pairing("cat", "dan"), None),
    game_result(Pairing("ann", "cat"), None),
    game_result(Pairing("dan", "bob"), "bob"),
    game_result(Pairing("dan", "ann"), "ann"),
    game_result(Pairing("bob", "cat"), None),
]


def test_scores_count_draws_as_half() -> None:
    assert scores(PLAYERS, RESULTS) == {"ann": 2.5, "bob": 1.5, "cat": 1.5, "dan": 0.5}


def test_buchholz_by_hand() -> None:
    # ann: bob 1.5 + cat 1.5 + dan 0.5; bob: ann 2.5 + dan 0.5 + cat 1.5;
    # cat: dan 0.5 + ann 2.5 + bob 1.5; dan: cat 1.5 + bob 1.5 + ann 2.5.
    assert buchholz(PLAYERS, RESULTS, scores(PLAYERS, RESULTS)) == {
        "ann": 3.5,
        "bob": 4.5,
        "cat": 4.5,
        "dan": 5.5,
    }


def test_sonneborn_berger_by_hand() -> None:
    # ann: bob 1.5 x 1 + cat 1.5 x 1/2 + dan 0.5 x 1 = 2.75
    # bob: ann 2.5 x 0 + dan 0.5 x 1 + cat 1.5 x 1/2 = 1.25
    # cat: dan 0.5 x 1/2 + ann 2.5 x 1/2 + bob 1.5 x 1/2 = 2.25
    # dan: cat 1.5 x 1/2 = 0.75
    assert sonneborn_berger(PLAYERS, RESULTS, scores(PLAYERS, RESULTS)) == {
        "ann": 2.75,
        "bob": 1.25,
        "cat": 2.25,
        "dan": 0.75,
    }


def test_sonneborn_berger_orders_the_round_robin() -> None:
    table = compute_standings(PLAYERS, RESULTS, tiebreak=Tiebreak.SONNEBORN_BERGER)
    assert table == (
        Standing("ann", 2.5, 2.75, 1),
        Standing("cat", 1.5, 2.25, 2),
        Standing("bob", 1.5, 1.25, 3),
        Standing("dan", 0.5, 0.75, 4),
    )


def test_players_level_on_score_and_tiebreak_share_a_rank_in_seed_order() -> None:
    table = compute_standings(PLAYERS, RESULTS, tiebreak="buchholz")
    assert [(s.player, s.tiebreak, s.rank) for s in table] == [
        ("ann", 3.5, 1),
        ("bob", 4.5, 2),
        ("cat", 4.5, 2),
        ("dan", 5.5, 4),
    ]
    reseeded = compute_standings(["cat", "bob", "ann", "dan"], RESULTS, tiebreak="buchholz")
    assert [s.player for s in reseeded] == ["ann", "cat", "bob", "dan"]
    untied = compute_standings(PLAYERS, RESULTS)
    assert [(s.player, s.rank) for s in untied] == [("ann", 1), ("bob", 2), ("cat", 2), ("dan", 4)]


def test_a_bye_scores_but_adds_no_buchholz() -> None:
    results = [game_result(Pairing("ann", "bob"), "bob")]
    table = compute_standings(["ann", "bob", "cat"], results, byes=["cat"], tiebreak="buchholz")
    assert table == (
        Standing("bob", 1.0, 0.0, 1),
        Standing("cat", 1.0, 0.0, 1),
        Standing("ann", 0.0, 1.0, 3),
    )
    half_bye = compute_standings(["ann", "bob", "cat"], results, byes=["cat"], bye_points=0.5)
    assert half_bye[1] == Standing("cat", 0.5, 0.0, 2)


def test_a_withdrawn_opponent_still_counts_in_the_tiebreak() -> None:
    results = [game_result(Pairing("ann", "zed"), "ann"), game_result(Pairing("zed", "bob"), "zed")]
    table = compute_standings(["ann", "bob"], results, tiebreak="buchholz")
    assert table == (Standing("ann", 1.0, 1.0, 1), Standing("bob", 0.0, 1.0, 2))


def test_a_match_of_several_games_goes_to_more_game_points() -> None:
    pairing = Pairing("ann", "bob")
    assert match_result(pairing, ["ann", None]) == MatchResult("ann", "bob", 1.0)
    assert match_result(pairing, ["ann", "bob"]) == MatchResult("ann", "bob", 0.5)
    assert match_result(pairing, [None, "bob", None]).winner == "bob"
    assert match_result(pairing, [None]).winner is None


def test_bad_results_are_refused() -> None:
    with pytest.raises(ValueError, match="a match scores 1, 1/2 or 0, not 0.7"):
        MatchResult("ann", "bob", 0.7)
    with pytest.raises(ValueError, match="cat did not play ann v bob"):
        match_result(Pairing("ann", "bob"), ["cat"])
    with pytest.raises(ValueError, match="at least one game"):
        match_result(Pairing("ann", "bob"), [])
    with pytest.raises(ValueError, match="unknown tie-break 'median'"):
        compute_standings(PLAYERS, RESULTS, tiebreak="median")


def test_each_format_has_its_tiebreak() -> None:
    assert parse_format("Swiss").tiebreak is Tiebreak.BUCHHOLZ
    assert parse_format("italo").tiebreak is Tiebreak.BUCHHOLZ
    assert Format.ROUND_ROBIN.tiebreak is Tiebreak.SONNEBORN_BERGER
    assert Format.DOUBLE_ROUND_ROBIN.tiebreak is Tiebreak.SONNEBORN_BERGER
    assert Format.KNOCKOUT.tiebreak is Tiebreak.NONE
    with pytest.raises(ValueError, match="unknown tournament format 'league': choose one of"):
        parse_format("league")
