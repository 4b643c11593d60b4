"""The tournament pages (issue 51): ``/tournaments`` and ``/t/ID``, over tournaments played
through the command core as mail plays them (tests/web/tournaments_rig.py).

A round robin's crosstable links each cell to the boards of the database's matches; Swiss and
knockout rounds list their pairings with links; the standings are the ``tournament show``
reply's, in its order with its numbers; a poly-ludic tournament shows each game; a withdrawal's
walkovers show; the page is read in a fixed number of statements however many matches; a
running HMDG board in a tournament gives nothing of its secret away; drafts and unknown
numbers are 404; pages are tagged (304).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import Engine, event
from starlette.testclient import TestClient

from pbmserv.config import Settings
from pbmserv.core.tournaments import store
from pbmserv.core.tournaments.setup import open_tournament
from pbmserv.web.app import make_app
from pbmserv.web.database import read_engine
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    site_settings_fixture,
    web_fixture,
)
from tests.web.tournaments_rig import (  # noqa: F401 (the fixture club)
    HTML,
    Club,
    check_crosstable,
    club_fixture,
    page_of,
    password,
    seed_wins,
    standings_of,
)

pytestmark = pytest.mark.db

# --- round robin ---------------------------------------------------------------------------


RR_PLAYERS = ["ann", "bob", "cat", "dan"]


def rr_result(seat0: str, seat1: str) -> str | None:
    """ann beats everyone; bob and cat draw; otherwise the better seed wins."""
    if {seat0, seat1} == {"bob", "cat"}:
        return None
    return seed_wins(RR_PLAYERS)(seat0, seat1)


def test_a_round_robin_crosstable_links_each_cell_to_its_boards(
    club: Club, web: TestClient
) -> None:
    club.begin("rr", "roundrobin", ["extinction"], RR_PLAYERS)
    number = club.tournament_id("rr")
    # Round 1 running: its cells lead to the running boards; the others are not paired yet.
    page = page_of(web, f"/t/{number}")
    check_crosstable(page, club.matches("rr"))
    assert "running: round 1 of 3" in web.get(f"/t/{number}").text
    club.play_round("rr", rr_result)
    check_crosstable(page_of(web, f"/t/{number}"), club.matches("rr"))
    club.play_round("rr", rr_result)
    club.play_round("rr", rr_result)
    matches = club.matches("rr")
    assert all(m["status"] == "done" for m in matches) and len(matches) == 6
    page = page_of(web, f"/t/{number}")
    check_crosstable(page, matches)
    # The crosstable in the standings' order, with the standings' score and tie-break.
    standings = club.shown_standings("rr")
    assert standings_of(page) == standings
    assert [row[1]["text"] for row in page.table("crosstable")[1:]] == [s[1] for s in standings]
    assert [row[-2:] for row in page.texts("crosstable")] == [s[2:4] for s in standings]
    assert standings[0][:2] == ["1", "ann"]
    html = web.get(f"/t/{number}").text
    assert "Winner" in html and "Sonneborn-Berger" in html
    # Every round's pairings, each board a link, as in the database.
    for index, round_number in enumerate((1, 2, 3)):
        shown = page.table("pairings", index)[1:]
        wanted = [m for m in matches if m["round"] == round_number]
        assert [(r[0]["hrefs"], r[1]["hrefs"], r[2]["hrefs"]) for r in shown] == [
            ([f"/g/{b}" for b in m["boards"]], [f"/u/{m['first']}"], [f"/u/{m['second']}"])
            for m in wanted
        ]


def test_a_double_round_robin_cell_holds_both_matches(club: Club, web: TestClient) -> None:
    players = ["ann", "bob", "cat"]
    club.begin("drr", "double-roundrobin", ["chameleon:size=3"], players)
    while club.open_boards("drr"):
        club.play_round("drr", seed_wins(players))
    matches = club.matches("drr")
    assert len([m for m in matches if m["second"]]) == 6
    page = page_of(web, f"/t/{club.tournament_id('drr')}")
    check_crosstable(page, matches)
    ann = page.texts("crosstable")[0]
    assert ann[1] == "ann" and ann[3:5] == ["W W", "W W"], ann
    # Three players: a bye each round, named under the round's pairings.
    assert web.get(f"/t/{club.tournament_id('drr')}").text.count("Bye:") == 6


# --- Swiss, knockout, poly-ludic -----------------------------------------------------------


def test_a_swiss_tournament_pairings_page(club: Club, web: TestClient) -> None:
    players = ["ann", "bob", "cat", "dan", "eve"]
    club.begin("sw", "swiss", ["chameleon:size=3"], players, rounds=3)
    club.play_round("sw", seed_wins(players))
    club.play_round("sw", seed_wins(players))
    number = club.tournament_id("sw")
    page = page_of(web, f"/t/{number}")
    matches = club.matches("sw")
    assert page.tables.get("crosstable") is None
    for index, round_number in enumerate((1, 2, 3)):
        shown = page.table("pairings", index)[1:]
        wanted = [m for m in matches if m["round"] == round_number and m["second"]]
        assert [(r[0]["hrefs"], r[1]["hrefs"], r[2]["hrefs"]) for r in shown] == [
            ([f"/g/{b}" for b in m["boards"]], [f"/u/{m['first']}"], [f"/u/{m['second']}"])
            for m in wanted
        ]
        results = [r[-1]["text"] for r in shown]
        assert results == (["playing"] * 2 if round_number == 3 else results)
    [(bye,)] = [(m["first"],) for m in matches if m["round"] == 1 and m["second"] is None]
    html = web.get(f"/t/{number}").text
    assert f'Bye: <a href="/u/{bye}">{bye}</a>' in html
    assert "running: round 3 of 3" in html and "Buchholz" in html
    assert standings_of(page) == club.shown_standings("sw")
    club.play_round("sw", seed_wins(players))
    final = page_of(web, f"/t/{number}")
    assert standings_of(final) == club.shown_standings("sw")
    assert all(r[-1]["text"] != "playing" for r in final.table("pairings", 2)[1:])


def test_a_knockout_with_repechage_shows_its_brackets(club: Club, web: TestClient) -> None:
    players = ["ann", "bob", "cat", "dan"]
    club.begin("ko", "knockout", ["chameleon:size=3"], players, repechage=True)
    number = club.tournament_id("ko")
    club.play_round("ko", seed_wins(players))
    page = page_of(web, f"/t/{number}")
    notes = {row[1]: row[-1] for row in page.texts("standings")}
    assert notes == dict.fromkeys(players, "still in")
    assert page.table("pairings", 1)[0][3]["text"] == "Bracket"
    assert [(r[1], r[2], r[3]) for r in page.texts("pairings", 1)] == [
        ("ann", "bob", "main"),
        ("cat", "dan", "consolation"),
    ]
    while club.open_boards("ko"):
        club.play_round("ko", seed_wins(players))
    page = page_of(web, f"/t/{number}")
    assert standings_of(page) == club.shown_standings("ko")
    assert [cell["text"] for cell in page.table("standings")[0]] == [
        "Rank", "Player", "Score", "Note"
    ]  # fmt: skip
    [final] = page.texts("pairings", 2)
    assert final[1:] == ["cat", "ann", "final", "ann won 0-1"]
    assert 'Winner:\n<a href="/u/ann">ann</a>' in web.get(f"/t/{number}").text


def test_matches_of_several_games_link_each_board(club: Club, web: TestClient) -> None:
    players = ["ann", "bob", "cat"]
    club.begin("duel", "roundrobin", ["chameleon:size=3"], players, match_games=2)
    while club.open_boards("duel"):
        club.play_round("duel", seed_wins(players))
    matches = club.matches("duel")
    assert all(len(m["boards"]) == 2 for m in matches if m["second"])
    page = page_of(web, f"/t/{club.tournament_id('duel')}")
    check_crosstable(page, matches)
    assert page.texts("crosstable")[0][3:5] == ["W(WW)", "W(WW)"]
    assert page.table("pairings")[0][0]["text"] == "Boards"
    assert [len(r[0]["hrefs"]) for r in page.table("pairings")[1:]] == [2]


def test_a_polyludic_tournament_shows_each_game(club: Club, web: TestClient) -> None:
    players = ["ann", "bob", "cat", "dan"]
    club.begin(
        "poly", "swiss", ["small=chameleon:size=3", "large=chameleon:size=4"], players, rounds=2
    )
    number = club.tournament_id("poly")
    page = page_of(web, f"/t/{number}")
    # The first of each match chooses the game: no board yet.
    assert [r[-1] for r in page.texts("pairings")] == [
        "ann chooses the game",
        "bob chooses the game",
    ]
    club.send("ann", f"tournament choose poly ann {password('ann')} small")
    club.send("bob", f"tournament choose poly bob {password('bob')} large")
    page = page_of(web, f"/t/{number}")
    assert [r[3] for r in page.texts("pairings")] == ["small", "large"]
    html = web.get(f"/t/{number}").text
    assert "Poly-ludic" in html and "PG 5, PS 3, PC 1, LP 1/2" in html
    assert re.search(
        r"<strong>small</strong>: <a href=\"/rules/chameleon\">Chameleon</a>"
        r" \(size=3\); 1 match in it",
        html,
    ), html
    assert re.search(r"<strong>large</strong>: .*; 1 match in it", html)
    matches = club.matches("poly")
    assert [r[0]["hrefs"] for r in page.table("pairings")[1:]] == [
        [f"/g/{b}" for b in m["boards"]] for m in matches
    ]


# --- the list, 404s, tags, statements, hidden information ------------------------------------


def test_the_list_and_the_drafts_and_unknown_numbers(club: Club, web: TestClient) -> None:
    assert "There are no tournaments yet." in web.get("/tournaments").text
    club.begin("cup", "knockout", ["chameleon:size=3"], ["ann", "bob"])
    club.create("secret", "swiss", ["chameleon:size=3"])  # a draft: the public never sees it
    listing = page_of(web, "/tournaments")
    cup, draft = club.tournament_id("cup"), club.tournament_id("secret")
    assert f"/t/{cup}" in listing.links and f"/t/{draft}" not in listing.links
    assert "secret" not in web.get("/tournaments").text
    for path in (f"/t/{draft}", "/t/999", "/t/0", "/t/cup", "/t/1x", "/t/-1", "/t/1.json", "/t/"):
        response = web.get(path)
        assert response.status_code == 404, path
        assert response.headers["content-type"] == HTML and "<h1>" in response.text
    opened = club.operate(lambda ctx: open_tournament(ctx, store.find_tournament(ctx, "secret")))
    assert opened is None
    page = web.get(f"/t/{draft}").text
    assert "open for entries" in page and "tournament join secret USERID PASSWORD" in page


def test_pages_are_tagged_and_answer_304_until_a_result(club: Club, web: TestClient) -> None:
    club.begin("cup", "knockout", ["chameleon:size=3"], ["ann", "bob"])
    number = club.tournament_id("cup")
    for path in (f"/t/{number}", "/tournaments"):
        first = web.get(path)
        etag = first.headers["etag"]
        assert etag.startswith('"') and not etag.startswith("W/")
        assert first.headers["cache-control"] == "no-cache"
        again = web.get(path, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        head = web.head(path)
        assert head.status_code == 200 and head.headers["etag"] == etag and head.content == b""
    etag = web.get(f"/t/{number}").headers["etag"]
    club.play_round("cup", seed_wins(["ann", "bob"]))
    after = web.get(f"/t/{number}", headers={"If-None-Match": etag})
    assert after.status_code == 200 and after.headers["etag"] != etag
    assert "finished" in after.text


@contextmanager
def count_statements(engine: Engine) -> Iterator[list[str]]:
    """The statements run on ``engine`` while the block runs."""
    seen: list[str] = []

    def note(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        seen.append(statement)

    event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", note)


def test_a_page_is_read_in_a_fixed_number_of_statements(
    club: Club, site_settings: Settings
) -> None:
    small = ["ann", "bob", "cat"]
    large = [f"p{i}" for i in range(8)]
    club.begin("small", "roundrobin", ["chameleon:size=3"], small)
    club.play_round("small", seed_wins(small))
    club.begin("large", "roundrobin", ["chameleon:size=3"], large)
    for _ in range(3):
        club.play_round("large", seed_wins(large))
    engine = read_engine(site_settings.db_url)
    counts = {}
    try:
        with TestClient(make_app(site_settings, engine)) as web:
            for name in ("small", "large"):
                path = f"/t/{club.tournament_id(name)}"
                web.get(path)  # the site's first page: nothing kept from it
                with count_statements(engine) as statements:
                    assert web.get(path).status_code == 200
                    counts[name] = (
                        len(statements),
                        sum(1 for s in statements if s.lstrip().upper().startswith("SELECT")),
                    )
    finally:
        engine.dispose()
    assert len(club.matches("large")) == 4 * 4  # 4 matches a round: round 4 paired
    # The same statements for 3 players as for 8: the tournament, its entries, its matches,
    # their boards and the boards' seats (and the transaction's beginning, on SQLite).
    assert counts["small"] == counts["large"], counts
    assert counts["large"][1] == 5, counts


def test_a_running_hmdg_board_in_a_tournament_gives_nothing_away(
    club: Club, web: TestClient
) -> None:
    club.begin("hidden", "knockout", ["hmdg"], ["ann", "bob"])
    number = club.tournament_id("hidden")
    [(board, game, first, second)] = club.open_boards("hidden")
    assert game == "hmdg"
    path = f"/t/{number}"
    before = web.get(path)
    club.send(first, f"hmdg move {board} {first} {password(first)} E5")
    club.send(second, f"hmdg move {board} {second} {password(second)} o")
    club.send(second, f"hmdg move {board} {second} {password(second)} C3 row")
    after = web.get(path)
    # Nothing of the moves, secret or not, shows on the tournament's page: it is the same page.
    assert after.text == before.text and after.headers["etag"] == before.headers["etag"]
    for secret in ("C3", "c3", "E5", "e5"):
        assert secret not in after.text
    assert f'href="/g/{board}"' in after.text and "playing" in after.text


def test_a_withdrawal_shows_its_walkovers(club: Club, web: TestClient) -> None:
    players = ["ann", "bob", "cat", "dan"]
    club.begin("rr", "roundrobin", ["chameleon:size=3"], players)
    club.play_round("rr", seed_wins(players))
    club.send("dan", f"tournament withdraw rr dan {password('dan')}")
    while club.open_boards("rr"):
        club.play_round("rr", seed_wins(players))
    matches = club.matches("rr")
    walkovers = [m for m in matches if m["status"] == "done" and m["second"] and not m["boards"]]
    assert walkovers, matches
    number = club.tournament_id("rr")
    page = page_of(web, f"/t/{number}")
    check_crosstable(page, matches)
    html = web.get(f"/t/{number}").text
    assert "(walkover)" in html
    assert [row[1] for row in page.texts("crosstable")][-1] == "dan (withdrawn)"
    assert standings_of(page) == club.shown_standings("rr")
