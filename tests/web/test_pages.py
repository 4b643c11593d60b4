"""What a position's page shows: the game and its players, status and clocks, the picture with
its text alternative and the diagram as its long description, every move a link to its
position, the steps with rel=prev/next, the moves since ``?since=`` marked new, the records;
and nothing inline that the security policy would block."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html.parser import HTMLParser

import pytest
from sqlalchemy import Engine
from starlette.testclient import TestClient

from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import Seat
from tests.core.client import Client
from tests.core.play.boards_played import challenge, move, resign
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    CHAMELEON,
    CHAMELEON_MOVES,
    EXTINCTION,
    chameleon_board,
    hmdg_board,
    people_fixture,
    site_settings_fixture,
    web_fixture,
)

pytestmark = pytest.mark.db


class Tags(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def all(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for name, attrs in self.tags if name == tag]


def no_inline_code(html: str) -> None:
    """Nothing the policy (script-src 'self', style-src 'self') would refuse."""
    tags = Tags(html)
    assert "<style" not in html
    for _tag, attrs in tags.tags:
        assert "style" not in attrs
        assert not [name for name in attrs if name.startswith("on")]
    assert all(script.get("src", "").startswith("/static/") for script in tags.all("script"))
    assert "javascript:" not in html


def test_a_position_page_shows_the_board(people: Client, web: TestClient) -> None:
    board = chameleon_board(people)
    html = web.get(f"/g/{board}/3").text
    tags = Tags(html)
    assert tags.all("html") == [{"lang": "en"}]
    assert f"<title>Chameleon board {board}, after move 3 · pbmserv</title>" in html
    assert '<li><a href="/games?player=alice">alice</a> plays Vert</li>' in html
    assert "Bob</a> plays Horz" in html and "Now waiting for Bob." in html
    [image] = tags.all("img")
    assert image["src"] == f"/g/{board}/3.svg"
    assert image["alt"] == f"Chameleon, board {board}, after move 3; Bob to move."
    assert image["aria-describedby"] == "diagram"
    assert '<pre id="diagram" class="diagram"' in html and "Vert joins top and bottom" in html
    assert "A past position: the board has 5 moves now." in html
    # Every move leads to its position; the position shown is marked.
    links = [a["href"] for a in tags.all("a") if (a.get("href") or "").startswith(f"/g/{board}/")]
    for ply in range(1, len(CHAMELEON_MOVES) + 1):
        assert f"/g/{board}/{ply}" in links
    assert f'<a href="/g/{board}/3" aria-current="page">3. b2x</a>' in html
    # The steps: plain links, prev and next by rel, the script for the keys.
    steps = {a["data-step"]: a for a in tags.all("a") if "data-step" in a}
    assert steps["first"]["href"] == f"/g/{board}/0" and steps["last"]["href"] == f"/g/{board}/5"
    assert steps["prev"]["rel"] == "prev" and steps["prev"]["href"] == f"/g/{board}/2"
    assert steps["next"]["rel"] == "next" and steps["next"]["href"] == f"/g/{board}/4"
    assert {"rel": "prev", "href": f"/g/{board}/2"} in tags.all("link")
    assert tags.all("script") == [{"src": "/static/steps.js", "defer": None}]
    assert f'href="/g/{board}.json"' in html and f'href="/g/{board}.txt"' in html
    assert 'href="/rules/chameleon"' in html
    no_inline_code(html)


def test_the_first_and_the_last_position_step_one_way(people: Client, web: TestClient) -> None:
    board = chameleon_board(people)
    start = Tags(web.get(f"/g/{board}/0").text)
    steps = {a["data-step"] for a in start.all("a") if "data-step" in a}
    assert steps == {"next", "last"}
    now = web.get(f"/g/{board}").text
    steps = {a["data-step"] for a in Tags(now).all("a") if "data-step" in a}
    assert steps == {"first", "prev"} and "A past position" not in now
    assert "No moves yet." in web.get(f"/g/{chameleon_board(people, ())}").text


def test_the_moves_since_are_marked_new_and_the_links_keep_since(
    people: Client, web: TestClient
) -> None:
    board = chameleon_board(people)
    html = web.get(f"/g/{board}/3", params={"since": "3"}).text
    assert html.count('<li class="new">') == 2  # moves 4 and 5
    assert "2 new moves since your last look" in html
    assert f'<li class="new"><a href="/g/{board}/4?since=3">4. d4o</a>' in html
    assert f'href="/g/{board}/2?since=3"' in html and f'href="/g/{board}/0?since=3"' in html
    assert '<li class="new">' not in web.get(f"/g/{board}/3").text
    # A since beyond the moves (after a take-back) marks nothing.
    assert '<li class="new">' not in web.get(f"/g/{board}", params={"since": "9"}).text


def test_clocks_are_shown_as_they_stood_after_the_last_move(
    people: Client, web: TestClient, engine: Engine
) -> None:
    assert CHAMELEON is not None
    board = challenge(people, CHAMELEON, "-size=5 -clock=1d+12h/2d")
    move(people, CHAMELEON, board, 0, "a1x")
    html = web.get(f"/g/{board}").text
    assert "<h2>Clocks</h2>" in html and "Time control: 1d+12h/2d." in html
    assert re.search(r"alice: 1 day \d+ hours left, not running", html), html
    # Bob's clock runs once his board mail is out: the page says since when, not a countdown.
    with transaction(session_factory(engine)) as session:
        seat = session.get(Seat, (board, 1))
        assert seat is not None
        seat.clock_since = datetime(2030, 5, 4, 3, 2, 1, tzinfo=UTC)
    html = web.get(f"/g/{board}").text
    since = '<time datetime="2030-05-04T03:02:01+00:00">2030-05-04 03:02 UTC</time>'
    assert f"Bob: 1 day left, running since {since}" in html
    assert "<h2>Clocks</h2>" not in web.get(f"/g/{board}/0").text  # the latest position only


def test_a_finished_board_says_so(people: Client, web: TestClient) -> None:
    board = chameleon_board(people)
    assert CHAMELEON is not None
    resign(people, CHAMELEON, board, 1)
    html = web.get(f"/g/{board}").text
    assert "Game over: alice (Vert) won (Bob (Horz) resigned)." in html
    assert "(to move)" not in html


def test_an_extinction_page_offers_its_pgn(people: Client, web: TestClient) -> None:
    assert EXTINCTION is not None
    board = challenge(people, EXTINCTION)
    move(people, EXTINCTION, board, 0, "e4")
    html = web.get(f"/g/{board}").text
    assert f'href="/g/{board}.pgn"' in html
    no_inline_code(html)


def test_no_page_has_inline_code(people: Client, web: TestClient) -> None:
    board = hmdg_board(people)
    for path in ("/", "/games", "/rules/hmdg", f"/g/{board}", f"/g/{board}/0", "/nowhere"):
        no_inline_code(web.get(path).text)


def test_values_are_escaped(people: Client, web: TestClient) -> None:
    page = web.get("/games", params={"player": "a<b"})
    assert page.status_code == 400 and "a<b" not in page.text
    board = chameleon_board(people)
    html = web.get(f"/g/{board}", params={"since": "1", "x": "<script>alert(1)</script>"}).text
    assert "<script>alert" not in html
