"""The feeds and hidden information: a running HMDG board's feed and its players' feeds hold
only what the public may see (not what a seat's private view shows: Bob's secret point), and
once the board is over, the board's feed holds everything; and no address under the feeds
breaks the site (the fuzz of ``test_fuzz.py`` on the feeds' paths)."""

from __future__ import annotations

import json
import re

import feedparser
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine
from starlette.testclient import TestClient

from tests.core.client import Client
from tests.core.play.boards_played import resign
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    HMDG,
    chameleon_board,
    hmdg_board,
    link_of,
    people_fixture,
    site_settings_fixture,
    web_as_served_fixture,
    web_fixture,
)
from tests.web.test_fuzz import check, queries, segments

pytestmark = pytest.mark.db

SECRET = "C3"  # Bob's hidden o (hmdg_board); the public hears "a point in row C"


def secrets_of(web: TestClient, board: int, token: str) -> set[str]:
    """The move texts Bob's private view shows and the public's does not."""
    private = json.loads(web.get(f"/p/{token}.json").text)
    public = json.loads(web.get(f"/g/{board}.json").text)
    hidden = {m["text"] for m in private["moves"]} - {m["text"] for m in public["moves"]}
    assert hidden and any(SECRET in text for text in hidden), hidden
    return hidden


def test_a_running_hidden_board_feeds_only_what_the_public_sees(
    people: Client, web: TestClient, engine: Engine
) -> None:
    board = hmdg_board(people)
    token = link_of(engine, board, "bob", 1)
    hidden = secrets_of(web, board, token)
    public = json.loads(web.get(f"/g/{board}.json").text)
    bodies = {
        url: web.get(url).text
        for url in (f"/g/{board}/feed.atom", "/u/bob/feed.atom", "/u/alice/feed.atom")
    }
    for url, body in bodies.items():
        for text in hidden:
            assert text not in body, (url, text)
        assert not re.search(rf"\b{SECRET}\b", body, re.IGNORECASE), url
        assert token not in body and "/p/" not in body, url
    feed = feedparser.parse(bodies[f"/g/{board}/feed.atom"])
    assert feed.bozo == 0
    # The board's feed has each move as the public sees it.
    shown = [m["text"] for m in reversed(public["moves"])]
    assert [e.title.partition(". ")[2] for e in feed.entries] == shown
    assert "a point in row C" in shown
    # alice's feed: her move on the board, and nothing of the moves themselves.
    [entry] = feedparser.parse(bodies["/u/alice/feed.atom"]).entries
    assert entry.title == f"hmdg board {board}: your move"
    assert entry.summary == "alice vs Bob. Moves played: 3. Waiting for alice."


def test_once_over_the_hidden_board_feeds_everything(
    people: Client, web: TestClient, engine: Engine
) -> None:
    board = hmdg_board(people)
    hidden = secrets_of(web, board, link_of(engine, board, "bob", 1))
    assert HMDG is not None
    resign(people, HMDG, board, 0)
    body = web.get(f"/g/{board}/feed.atom").text
    assert all(text in body for text in hidden)
    entries = feedparser.parse(body).entries
    assert entries[0].title == f"hmdg board {board}: Bob (O) won (alice (X) resigned)"
    assert entries[0].id in web.get("/u/alice/feed.atom").text


# --- no address breaks the site ------------------------------------------------------------

#: The feeds' addresses (the player pages at ``/u/USERID`` are another part's to fuzz).
PREFIXES = [
    "u/bob/feed.atom",
    "u/alice/feed.atom",
    "u/nobody/feed.atom",
    "g/1/feed.atom",
    "g/2/feed.atom",
    "g/9/feed.atom",
]


@pytest.fixture
def boards(people: Client) -> None:
    """Board 1 (Chameleon) and board 2 (HMDG, running, with a secret)."""
    assert chameleon_board(people) == 1
    assert hmdg_board(people) == 2


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    prefix=st.sampled_from(PREFIXES),
    path=st.lists(st.one_of(st.just("feed.atom"), segments), max_size=2),
    query=queries,
)
def test_no_feed_address_breaks_the_site(
    web_as_served: TestClient, boards: None, prefix: str, path: list[str], query: dict[str, str]
) -> None:
    url = "/" + "/".join([prefix, *path]).strip("/")
    check(web_as_served, url, query)


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(user=segments, board=segments)
def test_any_user_or_board_in_a_feed_address_is_a_feed_or_a_404(
    web_as_served: TestClient, boards: None, user: str, board: str
) -> None:
    for url in (f"/u/{user}/feed.atom", f"/g/{board}/feed.atom"):
        response = web_as_served.get(url)
        assert response.status_code in (200, 404), (url, response.status_code)
        if response.status_code == 200:
            assert feedparser.parse(response.content).bozo == 0, url


@pytest.mark.parametrize(
    "url",
    [
        "/u/" + "a" * 400 + "/feed.atom",
        "/u/bob/feed.atom?" + "a=b&" * 200,
        "/u/bob%00/feed.atom",
        "/u/%ff%fe/feed.atom",
        "/u/bob/feed%2eatom",
        "/u//feed.atom",
        "/g//feed.atom",
        "/g/1/feed.atom/",
        "/g/" + "9" * 30 + "/feed.atom",
        "/u/bob/feed.atom?since=abc",
    ],
)
def test_odd_feed_addresses(web_as_served: TestClient, boards: None, url: str) -> None:
    check(web_as_served, url)
