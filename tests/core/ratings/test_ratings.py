"""Elo ratings per game: the maths, and boards rated as they end."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from pbmserv.core import admin
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.core.maintenance import run_maintenance
from pbmserv.core.ratings import service as ratings
from pbmserv.core.ratings.history import rebuild_glicko
from pbmserv.core.ratings.service import elo_changes, expected_score
from pbmserv.db.engine import transaction
from pbmserv.db.models import Rating
from tests.core.client import Client

pytestmark = pytest.mark.db

ALICE, BOB = "alice secret1", "Bob hunter22"


def test_elo_of_equal_players_moves_sixteen_points() -> None:
    assert elo_changes([1600, 1600], [1.0, 0.0]) == [16.0, -16.0]
    assert elo_changes([1600, 1600], [0.5, 0.5]) == [0.0, 0.0]
    # The stronger player gains little by winning and loses much by losing.
    win, _ = elo_changes([2000, 1600], [1.0, 0.0])
    loss, _ = elo_changes([2000, 1600], [0.0, 1.0])
    assert 2.5 < win < 3.0 and -29.5 < loss < -29.0
    assert expected_score(1600, 1600) == 0.5


ratings_ = st.floats(min_value=100, max_value=3500)


@given(a=ratings_, b=ratings_, score=st.sampled_from([0.0, 0.5, 1.0]))
def test_elo_is_zero_sum_and_the_winner_never_loses(a: float, b: float, score: float) -> None:
    first, second = elo_changes([a, b], [score, 1.0 - score])
    assert first + second == pytest.approx(0.0, abs=1e-9)
    assert abs(first) <= ratings.K
    if score == 1.0:
        assert first >= 0.0 >= second
    if score == 0.0:
        assert first <= 0.0 <= second


@given(st.lists(ratings_, min_size=3, max_size=4), st.data())
def test_elo_of_many_players_is_zero_sum_and_bounded(values: list[float], data) -> None:  # type: ignore[no-untyped-def]
    scores = data.draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=len(values),
                                max_size=len(values)))  # fmt: skip
    changes = elo_changes(values, scores)
    assert sum(changes) == pytest.approx(0.0, abs=1e-9)
    assert all(abs(c) <= ratings.K + 1e-9 for c in changes)


def table(players: Client, game: str = "chameleon") -> list[tuple[str, int, int]]:
    section = players.run(f"{game} ratings")
    assert section.ok
    return [(r["userid"], r["rating"], r["games"]) for r in section.data["rows"]]


def test_a_resignation_rates_the_board_and_the_lists_show_it(players: Client) -> None:
    assert table(players) == []
    assert "Nobody has finished a rated board" in players.run("chameleon ratings").text
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run(f"chameleon resign 1 {BOB}", sender="bob@example.org").ok
    assert table(players) == [("alice", 1616, 1), ("Bob", 1584, 1)]
    listed = players.run("chameleon standings")
    assert listed.ok and "1616?" in listed.text and "Bob" in listed.text
    mine = players.run("ratings alice")
    assert mine.ok and "Chameleon" in mine.text and "1616?" in mine.text
    assert "1 won, 0 lost, 0 drawn" in mine.text
    assert table(players, "extinction") == []


def test_ratings_without_a_user_id_is_the_senders(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run(f"chameleon resign 1 {BOB}", sender="bob@example.org").ok
    mine = players.run("ratings", sender="bob@example.org")
    assert mine.ok and "Bob" in mine.text and "0 won, 1 lost, 0 drawn" in mine.text
    nobody = players.run("ratings", sender="stranger@example.org")
    assert not nobody.ok and "no user has the address" in nobody.text
    assert 'Send "ratings USERID"' in nobody.text


def test_an_agreed_draw_counts_and_a_declined_board_does_not(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction decline 1 {BOB}", sender="bob@example.org").ok
    assert table(players, "extinction") == []
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction propose 2 {ALICE} draw").ok
    assert players.run(f"extinction accept 2 {BOB}", sender="bob@example.org").ok
    assert table(players, "extinction") == [("alice", 1600, 1), ("Bob", 1600, 1)]
    assert "0 won, 0 lost, 1 drawn" in players.run("ratings bob").text


def test_a_ruling_rates_and_reopening_takes_it_back(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    # A board rates only once both accepted it (core.play.consent): alice started it, bob accepts.
    assert players.run(f"chameleon accept 1 {BOB}", sender="bob@example.org").ok
    with transaction(players.factory) as session:
        admin.adjudicate(CommandContext(session, players.settings, None), "1", "bob")
    assert table(players) == [("Bob", 1616, 1), ("alice", 1584, 1)]
    with transaction(players.factory) as session:
        admin.undo_last(CommandContext(session, players.settings, None), "1")
    assert table(players) == []
    assert players.run(f"chameleon resign 1 {ALICE}").ok
    assert table(players) == [("Bob", 1616, 1), ("alice", 1584, 1)]


def test_reopening_an_agreed_draw_says_so_and_that_the_ratings_are_taken_back(
    players: Client,
) -> None:
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction move 1 {ALICE} e4").ok
    assert players.run(f"extinction move 1 {BOB} e5", sender="bob@example.org").ok
    assert players.run(f"extinction move 1 {ALICE} Bc4").ok
    assert players.run(f"extinction propose 1 {BOB} draw", sender="bob@example.org").ok
    assert players.run(f"extinction accept 1 {ALICE}").ok
    assert table(players, "extinction") == [("alice", 1600, 1), ("Bob", 1600, 1)]
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, None)
        said = admin.undo_last(ctx, "1")
        told = {n.data["event"] for n in ctx.notifications if n.kind == "board"}
    assert "reopened the game (drawn (draw agreed" in said
    assert said.endswith("took back 2. Bc4; the rating change it made is taken back")
    assert told == {f"The operator {said.removeprefix('board 1: ')}."}
    assert table(players, "extinction") == []


def test_a_forfeit_by_maintenance_is_rated(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run(f"chameleon accept 1 {BOB}", sender="bob@example.org").ok
    later = datetime.now(UTC) + timedelta(days=365)
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, None, clock=lambda: later)
        assert run_maintenance(ctx).reminded == [1]
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, None, clock=lambda: later + timedelta(7))
        assert run_maintenance(ctx).forfeited == [1]
    assert table(players) == [("Bob", 1616, 1), ("alice", 1584, 1)]


def test_a_rating_is_provisional_under_twenty_games(players: Client) -> None:
    for board in range(1, 21):
        assert players.run("chameleon challenge -size=3 alice bob").ok
        assert players.run(f"chameleon resign {board} {BOB}", sender="bob@example.org").ok
        provisional = players.run("chameleon ratings").data["rows"][0]["provisional"]
        assert provisional == (board < 20)
    # Elo is settled after 20 boards; Glicko-2 against a player as unknown is still not sure.
    line = players.run("ratings alice").text.splitlines()[-1]
    assert re.search(r"Elo +\d+ ", line) and "?+-" in line.split("Elo")[0]


def glicko_rows(players: Client, game: str = "chameleon") -> dict[int, tuple[float, float, float]]:
    rows = players.query(
        select(Rating.user_id, Rating.glicko, Rating.glicko_rd, Rating.glicko_volatility).where(
            Rating.game == game
        )
    )
    return {uid: (value, rd, volatility) for uid, value, rd, volatility in rows}


def test_glicko2_moves_with_every_board_and_reopening_takes_it_back(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run(f"chameleon resign 1 {BOB}", sender="bob@example.org").ok
    (alice, alice_rd, _), (bob, bob_rd, _) = glicko_rows(players).values()
    assert alice > 1500 > bob and alice_rd == bob_rd < 350
    row = players.run("chameleon ratings").data["rows"][0]
    assert row["glicko"] == round(alice) and row["glicko_margin"] == round(2 * alice_rd)
    assert row["glicko_provisional"] and f"{round(alice)}?+-{round(2 * alice_rd)}" in (
        players.run("chameleon ratings").text
    )
    with transaction(players.factory) as session:
        admin.undo_last(CommandContext(session, players.settings, None), "1")
    for value, rd, volatility in glicko_rows(players).values():
        assert value == pytest.approx(1500) and rd == pytest.approx(350)
        assert volatility == pytest.approx(0.06)


def test_standings_are_ordered_by_the_rating_less_two_deviations(players: Client) -> None:
    # alice and Bob trade 16 wins: Elo and Glicko-2 both near the start, but well known.
    for board in range(1, 17):
        loser = (BOB, "bob@example.org") if board % 2 else (ALICE, "alice@example.org")
        winner = "alice@example.org" if board % 2 else "bob@example.org"
        # The winner's challenge, the loser's resignation: both accepted it (core.play.consent).
        assert players.run("chameleon challenge -size=3 alice bob", sender=winner).ok
        assert players.run(f"chameleon resign {board} {loser[0]}", sender=loser[1]).ok
    assert players.run("signup dave pass4444", sender="dave@example.org").ok
    assert players.run("chameleon challenge -size=3 carol dave", sender="carol@example.org").ok
    assert players.run("chameleon resign 17 dave pass4444", sender="dave@example.org").ok
    rows = players.run("chameleon standings").data["rows"]
    by_elo = sorted(rows, key=lambda r: -r["rating"])
    assert by_elo[0]["userid"] == "carol"  # one win: the best Elo
    assert [r["userid"] for r in rows][:2] in (["alice", "Bob"], ["Bob", "alice"])
    assert [r["userid"] for r in rows][2:] == ["carol", "dave"]
    margins = [r["glicko"] - r["glicko_margin"] for r in rows]
    assert margins == sorted(margins, reverse=True)
    assert rows[2]["glicko_provisional"] and not rows[0]["glicko_provisional"]


def test_a_rating_grows_unsure_while_its_player_is_away(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run(f"chameleon resign 1 {BOB}", sender="bob@example.org").ok

    def margin(days: float) -> int:
        later = datetime.now(UTC) + timedelta(days=days)
        with transaction(players.factory) as session:
            ctx = CommandContext(
                session, players.settings, "alice@example.org", clock=lambda: later
            )
            return int(dispatch_line(ctx, "ratings").data["rows"][0]["glicko_margin"])

    assert margin(0) < margin(70) < margin(700) <= 700


def test_rebuilding_replays_every_board_to_the_same_ratings(players: Client) -> None:
    moves = [("alice", "bob"), ("bob", "carol"), ("alice", "carol"), ("carol", "alice")]
    secret = {"alice": ALICE, "bob": BOB, "carol": "carol pass3333"}
    for board, (winner, loser) in enumerate(moves, start=1):
        assert players.run(f"owlman challenge {winner} {loser}", sender=f"{winner}@example.org").ok
        assert players.run(f"owlman resign {board} {secret[loser]}", sender=f"{loser}@x.org").ok
    kept = glicko_rows(players, "owlman")
    with transaction(players.factory) as session:
        assert rebuild_glicko(session, players.settings.rating_period_days) == len(moves)
    rebuilt = glicko_rows(players, "owlman")
    assert rebuilt.keys() == kept.keys()
    for uid, values in kept.items():
        assert rebuilt[uid] == pytest.approx(values)
