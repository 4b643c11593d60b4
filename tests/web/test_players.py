"""The player pages (issue 51): a player's boards running and over with their ratings, a game's
rating list as the ``ratings`` mail gives it, two players head to head, the front page's
search; their headers and ETags, what a running hidden-information board shows of itself
there (nothing secret), and who has no page."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine
from starlette.testclient import TestClient

from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import Seat
from pbmserv.web.headers import CONTENT_SECURITY_POLICY
from pbmserv.web.views import players
from tests.core.client import Client
from tests.core.play.boards_played import challenge, move, resign
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    CHAMELEON,
    HMDG,
    chameleon_board,
    hmdg_board,
    link_of,
    people_fixture,
    site_settings_fixture,
    web_fixture,
)

pytestmark = pytest.mark.db

HTML = "text/html; charset=utf-8"
BOB = ("Bob hunter22", "bob@example.org")
CAROL = ("carol pass3333", "carol@example.org")


def finished_board(people: Client, loser_seat: int) -> int:
    """A 5x5 Chameleon board between alice (seat 0) and Bob, resigned by ``loser_seat`` (Bob
    accepts it first, so that it is rated whoever resigns)."""
    assert CHAMELEON is not None
    number = challenge(people, CHAMELEON, "-size=5")
    assert people.run(f"chameleon accept {number} {BOB[0]}", sender=BOB[1]).ok
    resign(people, CHAMELEON, number, loser_seat)
    return number


def public(response, status: int = 200) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["x-content-type-options"] == "nosniff"
    if status == 200:
        assert response.headers["content-type"] == HTML
    assert "style=" not in response.text  # the policy allows no inline style


def test_a_player_page_lists_the_boards_running_and_over(people: Client, web: TestClient) -> None:
    running = chameleon_board(people)  # Bob to move
    won = finished_board(people, loser_seat=1)
    lost = finished_board(people, loser_seat=0)
    page = web.get("/u/alice")
    public(page)
    text = page.text
    assert "<h1>alice</h1>" in text
    running_part = text[text.index('id="running"') : text.index('id="ratings"')]
    assert f'<a href="/g/{running}">Board {running}</a>: Chameleon' in running_part
    assert '<a href="/u/bob">Bob</a>' in running_part and "waiting for Bob" in running_part
    over = text[text.index('id="finished"') :]
    assert f'href="/g/{won}"' in over and f'href="/g/{lost}"' in over
    assert f'href="/g/{running}"' not in over
    assert re.search(rf'Board {won}</a>: Chameleon, against <a href="/u/bob">Bob</a>: won', over)
    assert re.search(rf'Board {lost}</a>: Chameleon, against <a href="/u/bob">Bob</a>: lost', over)
    assert 'href="/u/alice/vs/bob"' in over
    # Bob's page is the same boards from his side; any case of the id finds it.
    bob = web.get("/u/BOB")
    public(bob)
    assert "<h1>Bob</h1>" in bob.text and "<strong>waiting for Bob</strong>" in bob.text
    assert re.search(
        rf"Board {won}</a>: Chameleon, against <a href=\"/u/alice\">alice</a>: lost", bob.text
    )


def test_a_player_page_gives_the_ratings_as_the_mail_does(people: Client, web: TestClient) -> None:
    finished_board(people, loser_seat=1)
    finished_board(people, loser_seat=1)
    mail = people.run("ratings alice")
    (row,) = mail.data["rows"]
    page = web.get("/u/alice").text
    shown = f"Glicko-2 {row['glicko']}{'?' if row['glicko_provisional'] else ''} &plusmn; "
    assert shown + f"{row['glicko_margin']}</strong>" in page
    assert f"Elo {row['rating']}{'?' if row['provisional'] else ''}" in page
    assert "?" in shown  # two boards: provisional, and marked so
    assert "2 rated boards: 2 won, 0 lost, 0 drawn" in page
    assert '<a href="/ratings/chameleon">' in page and "<svg" in page
    # No rated board: no chart, and the page says so.
    carol = web.get("/u/carol")
    public(carol)
    assert "carol has not finished a rated board yet." in carol.text and "<svg" not in carol.text


def test_the_rating_list_is_the_mail_s_with_links(people: Client, web: TestClient) -> None:
    finished_board(people, loser_seat=1)
    assert people.run("chameleon challenge -size=5 alice carol").ok
    assert people.run(f"chameleon resign 2 {CAROL[0]}", sender=CAROL[1]).ok
    mail = people.run("chameleon ratings").data["rows"]
    page = web.get("/ratings/chameleon")
    public(page)
    rows = re.findall(
        r'<tr><td>(\d+)</td><td><a href="(/u/[a-z]+)">(\w+)</a></td><td>(\d+\??) &plusmn; (\d+)'
        r"</td><td>(\d+\??)</td>",
        page.text,
    )
    expected = [
        (
            str(rank),
            f"/u/{r['userid'].lower()}",
            r["userid"],
            f"{r['glicko']}{'?' if r['glicko_provisional'] else ''}",
            str(r["glicko_margin"]),
            f"{r['rating']}{'?' if r['provisional'] else ''}",
        )
        for rank, r in enumerate(mail, start=1)
    ]
    assert rows == expected and len(rows) == 3
    assert rows[0][2] == "alice"  # two boards won
    empty = web.get("/ratings/extinction")
    public(empty)
    assert "Nobody has finished a rated board of Extinction Chess yet." in empty.text
    for wrong in ("nope", "CHAMELEON", "chameleon.json", "%2e%2e", "x" * 50, ""):
        assert web.get(f"/ratings/{wrong}").status_code == 404, wrong


def test_head_to_head_counts_the_score_from_the_first_player_s_side(
    people: Client, web: TestClient
) -> None:
    boards = [finished_board(people, loser_seat=s) for s in (1, 1, 0)]
    running = chameleon_board(people)
    assert people.run("chameleon challenge -size=5 alice carol").ok  # not between them
    page = web.get("/u/alice/vs/bob")
    public(page)
    assert "<strong>2 won, 0 drawn, 1 lost</strong>" in page.text
    for board in [*boards, running]:
        assert f'href="/g/{board}"' in page.text
    assert "carol" not in page.text
    other_side = web.get("/u/bob/vs/ALICE").text
    assert "<strong>1 won, 0 drawn, 2 lost</strong>" in other_side
    for wrong in ("/u/alice/vs/alice", "/u/alice/vs/nobody", "/u/nobody/vs/alice", "/u/alice/vs/"):
        assert web.get(wrong).status_code == 404, wrong


def test_unknown_and_deleted_players_have_no_page(people: Client, web: TestClient) -> None:
    board = finished_board(people, loser_seat=1)
    assert people.run(f"delete {BOB[0]}", sender=BOB[1]).ok
    for path in ("/u/bob", "/u/nobody", "/u/a", "/u/1alice", "/u/" + "a" * 30, "/u/alice%00"):
        gone = web.get(path)
        public(gone, 404)
        assert "Traceback" not in gone.text
    # Her board with him is still listed, his name shown, linking nowhere.
    page = web.get("/u/alice").text
    assert f'href="/g/{board}"' in page and "against Bob: won" in page
    assert 'href="/u/bob' not in page
    assert 'href="/u/bob' not in web.get("/ratings/chameleon").text


def test_a_robot_has_a_page(people: Client, web: TestClient) -> None:
    assert people.run("chameleon challenge -size=5 alice robot1").ok
    page = web.get("/u/robot1")
    public(page)
    assert "robot1 is a robot, level 1" in page.text
    assert '<a href="/u/alice">alice</a>' in page.text
    assert 'against <a href="/u/robot1">robot1</a> (robot)' in web.get("/u/alice").text


def test_a_running_hidden_board_shows_no_secret_on_the_player_pages(
    people: Client, web: TestClient, engine: Engine
) -> None:
    board = hmdg_board(people)  # Bob's o on C3, in secret
    secret = "C3"
    assert secret in web.get(f"/p/{link_of(engine, board, 'bob', 1)}").text  # it is there
    for path in ("/u/alice", "/u/bob", "/u/alice/vs/bob", "/u/bob/vs/alice"):
        page = web.get(path)
        public(page)
        assert f'href="/g/{board}"' in page.text, path
        assert secret not in page.text, path
        assert "row C" not in page.text, path  # not even its public trace: no moves here


def test_pages_carry_an_etag_and_answer_304(people: Client, web: TestClient) -> None:
    board = finished_board(people, loser_seat=1)
    for path in ("/u/alice", "/u/alice/vs/bob", "/ratings/chameleon"):
        first = web.get(path)
        etag = first.headers["etag"]
        assert re.fullmatch(r'"[0-9a-f]{32}-\w+-[0-9a-f]{12}"', etag), etag
        assert first.headers["cache-control"] == "no-cache"
        again = web.get(path, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.headers["etag"] == etag and not again.content
        public(again, 304)
    before = web.get("/u/alice").headers["etag"]
    assert people.run("chameleon challenge -size=5 alice bob").ok
    assert web.get("/u/alice").headers["etag"] != before  # a new board, a new page
    assert board


def test_the_search_finds_boards_and_players(people: Client, web: TestClient) -> None:
    front = web.get("/").text
    assert '<form class="find" action="/search" method="get" role="search">' in front
    assert '<form class="find" action="/games" method="get">' in front
    for asked, where in (("17", "/g/17"), ("#17", "/g/17"), (" alice ", "/u/alice"),
                         ("BOB", "/u/bob"), ("robot2", "/u/robot2")):  # fmt: skip
        found = web.get("/search", params={"q": asked})
        assert found.status_code == 303 and found.headers["location"] == where, asked
        assert found.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    some = web.get("/search", params={"q": "o"})
    public(some)
    assert '<a href="/u/bob">Bob</a>' in some.text and '<a href="/u/carol">carol</a>' in some.text
    assert '<a href="/u/robot1">robot1</a> (robot)' in some.text
    assert 'href="/u/alice"' not in some.text
    none = web.get("/search", params={"q": "zz_%"})
    assert none.status_code == 400
    nobody = web.get("/search", params={"q": "_"})  # no wildcard: nobody's id holds a "_"
    public(nobody)
    assert "No player's id holds" in nobody.text
    empty = web.get("/search")
    public(empty)
    assert 'name="q"' in empty.text
    for bad in ("a b", "x" * 25, "<script>", "é"):
        assert web.get("/search", params={"q": bad}).status_code == 400, bad


def test_long_lists_link_to_the_rest(
    people: Client, web: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(players, "FINISHED", 2)
    boards = [finished_board(people, loser_seat=s % 2) for s in range(5)]  # newest last
    page = web.get("/u/alice").text
    over = page[page.index('id="finished"') :]
    assert [int(n) for n in re.findall(r'<a href="/g/(\d+)">Board', over)] == boards[:-3:-1]
    assert '<a href="/games?player=alice&amp;status=finished">' in over
    # Every rated board is in the chart and its table all the same.
    assert page.count('tabindex="-1"><circle') == 5
    first = web.get("/u/alice/vs/bob").text
    assert "<strong>2 won, 0 drawn, 3 lost</strong>" in first  # the score counts them all
    assert re.findall(r'<a href="/g/(\d+)">Board', first) == [str(b) for b in boards[:-3:-1]]
    assert '<a rel="next" href="/u/alice/vs/bob?page=2">' in first and 'rel="prev"' not in first
    second = web.get("/u/alice/vs/bob?page=2").text
    assert re.findall(r'<a href="/g/(\d+)">Board', second) == [str(b) for b in boards[2:0:-1]]
    assert '<a rel="prev" href="/u/alice/vs/bob">' in second
    third = web.get("/u/alice/vs/bob?page=3").text
    assert re.findall(r'<a href="/g/(\d+)">Board', third) == [str(boards[0])]
    assert 'rel="next"' not in third.split("<main>")[1]
    assert "No more." in web.get("/u/alice/vs/bob?page=9").text
    for bad in ("0", "x", "-1", "9" * 12):
        assert web.get(f"/u/alice/vs/bob?page={bad}").status_code == 400, bad


def test_a_running_board_s_clocks_are_shown_as_on_its_page(
    people: Client, web: TestClient, engine: Engine
) -> None:
    assert CHAMELEON is not None
    board = challenge(people, CHAMELEON, "-size=5 -clock=1d+12h/2d")
    move(people, CHAMELEON, board, 0, "a1x")
    with transaction(session_factory(engine)) as session:
        seat = session.get(Seat, (board, 1))
        assert seat is not None
        seat.clock_since = datetime(2030, 5, 4, 3, 2, 1, tzinfo=UTC)
    since = '<time datetime="2030-05-04T03:02:01+00:00">2030-05-04 03:02 UTC</time>'
    position = web.get(f"/g/{board}").text
    assert f"Bob: 1 day left, running since {since}" in position
    for path in ("/u/alice", "/u/bob/vs/alice"):
        page = web.get(path).text
        running = re.escape(since)
        clocks = rf"Clocks: alice 1 day \d+ hours left; Bob 1 day left, running since {running}\."
        assert re.search(clocks, page), (path, page[page.index("Clocks") :][:300])
