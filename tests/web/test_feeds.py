"""The Atom feeds (issue 51): a player's (``/u/USERID/feed.atom``: the boards where it is their
move, and their finished games) and a board's (``/g/BOARD/feed.atom``: each move, the newest
first, and the result), read as a feed reader reads them (``feedparser``) and checked against
RFC 4287's required elements; each with its ETag and 304, and a 404 for what is not there."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import feedparser
import pytest
from starlette.testclient import TestClient

from pbmserv.config import Settings
from pbmserv.web.app import make_app
from tests.core.client import Client
from tests.core.play.boards_played import move, resign
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    CHAMELEON,
    chameleon_board,
    people_fixture,
    site_settings_fixture,
    web_fixture,
)

pytestmark = pytest.mark.db

ATOM = "{http://www.w3.org/2005/Atom}"
BASE = "http://testserver"
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


def read(web: TestClient, url: str) -> feedparser.FeedParserDict:
    """The feed at ``url``, as a feed reader reads it (checked well-formed and RFC 4287)."""
    response = web.get(url)
    assert response.status_code == 200, (url, response.status_code, response.text[:300])
    assert response.headers["content-type"] == "application/atom+xml; charset=utf-8"
    assert response.headers["etag"].startswith('"') and response.headers["x-content-type-options"]
    check_rfc4287(response.content)
    parsed = feedparser.parse(response.content)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    return parsed


def check_rfc4287(body: bytes) -> None:
    """What RFC 4287 requires of a feed and its entries (no content: a summary and a link)."""
    assert body.startswith(b'<?xml version="1.0" encoding="utf-8"?>')
    root = ET.fromstring(body)
    assert root.tag == f"{ATOM}feed"
    _one_each(root, "id", "title", "updated")
    links = root.findall(f"{ATOM}link")
    assert [link.get("rel") for link in links].count("self") == 1
    assert [link.get("rel") for link in links].count("alternate") == 1
    assert all(link.get("href", "").startswith(("http://", "https://")) for link in links)
    has_author = root.find(f"{ATOM}author/{ATOM}name") is not None
    ids = []
    for entry in root.findall(f"{ATOM}entry"):
        _one_each(entry, "id", "title", "updated", "summary")
        assert has_author or entry.find(f"{ATOM}author/{ATOM}name") is not None
        [link] = [x for x in entry.findall(f"{ATOM}link") if x.get("rel") == "alternate"]
        assert link.get("href", "").startswith(BASE_PREFIXES)
        ids.append(entry.findtext(f"{ATOM}id"))
    for entry_id in [root.findtext(f"{ATOM}id"), *ids]:
        assert entry_id and entry_id.startswith("tag:") and " " not in entry_id
    assert len(set(ids)) == len(ids), "entry ids are unique"
    for updated in root.iter(f"{ATOM}updated"):
        assert RFC3339.fullmatch(updated.text or ""), updated.text


BASE_PREFIXES = (BASE + "/", "https://games.example.org/")


def _one_each(element: ET.Element, *names: str) -> None:
    for name in names:
        found = element.findall(f"{ATOM}{name}")
        assert len(found) == 1 and (found[0].text or "").strip(), (element.tag, name)


def finished_board(people: Client) -> int:
    """A Chameleon board Bob resigned after two moves."""
    number = chameleon_board(people, ("a1x", "e5o"))
    resign(people, CHAMELEON, number, 1)
    return number


# --- a player's feed -----------------------------------------------------------------------


def test_a_players_feed_lists_the_boards_waiting_and_the_games_over(
    people: Client, web: TestClient
) -> None:
    running = chameleon_board(people)  # five moves: Bob's move
    over = finished_board(people)
    fresh = chameleon_board(people, ())  # no move yet: alice's move
    bob = read(web, "/u/bob/feed.atom")
    assert bob.feed.title == "Bob: your move, and your games over"
    assert bob.feed.id.startswith("tag:example.org,")
    links = {link.rel: link.href for link in bob.feed.links}
    assert links == {"self": f"{BASE}/u/Bob/feed.atom", "alternate": f"{BASE}/u/Bob"}
    assert bob.feed.author == "pbmserv"
    titles = [e.title for e in bob.entries]
    assert sorted(titles) == sorted(
        [
            f"chameleon board {running}: your move",
            f"chameleon board {over}: alice (Vert) won (Bob (Horz) resigned)",
        ]
    )
    by_title = {e.title: e for e in bob.entries}
    waiting = by_title[f"chameleon board {running}: your move"]
    assert waiting.link == f"{BASE}/g/{running}/5"
    assert waiting.summary == "alice vs Bob. Moves played: 5. Waiting for Bob."
    result = by_title[f"chameleon board {over}: alice (Vert) won (Bob (Horz) resigned)"]
    assert result.link == f"{BASE}/g/{over}"
    assert "Game over: alice (Vert) won" in result.summary
    # Newest first; each entry's time is its board's last change, in UTC.
    updated = [datetime(*e.updated_parsed[:6], tzinfo=UTC) for e in bob.entries]
    assert updated == sorted(updated, reverse=True)
    assert all(abs((datetime.now(UTC) - when).total_seconds()) < 600 for when in updated)
    assert bob.feed.updated_parsed == bob.entries[0].updated_parsed

    alice = read(web, "/u/ALICE/feed.atom")  # user ids are not case-sensitive
    assert {e.title for e in alice.entries} == {
        f"chameleon board {fresh}: your move",
        f"chameleon board {over}: alice (Vert) won (Bob (Horz) resigned)",
    }
    assert f"{BASE}/g/{fresh}/0" in {e.link for e in alice.entries}
    # The result is the same entry in both feeds (and in the board's).
    ids = {e.title: e.id for e in alice.entries}
    assert ids[result.title] == result.id
    board = read(web, f"/g/{over}/feed.atom")
    assert board.entries[0].id == result.id and board.entries[0].title == result.title

    carol = read(web, "/u/carol/feed.atom")
    assert carol.entries == [] and carol.feed.updated_parsed is not None


def test_a_turn_taken_leaves_the_feed_and_the_next_one_comes(
    people: Client, web: TestClient
) -> None:
    number = chameleon_board(people)
    first = read(web, "/u/bob/feed.atom").entries[0]
    assert CHAMELEON is not None
    move(people, CHAMELEON, number, 1, "a5o")
    assert read(web, "/u/bob/feed.atom").entries == []
    move(people, CHAMELEON, number, 0, "b4x")
    again = read(web, "/u/bob/feed.atom").entries[0]
    assert again.id != first.id and again.link == f"{BASE}/g/{number}/7"


def test_the_player_feed_answers_304_to_its_etag_until_a_board_changes(
    people: Client, web: TestClient
) -> None:
    number = chameleon_board(people)
    response = web.get("/u/bob/feed.atom")
    etag = response.headers["etag"]
    assert response.headers["cache-control"] == "no-cache"
    again = web.get("/u/bob/feed.atom", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    assert CHAMELEON is not None
    move(people, CHAMELEON, number, 1, "a5o")
    changed = web.get("/u/bob/feed.atom", headers={"If-None-Match": etag})
    assert changed.status_code == 200 and changed.headers["etag"] != etag
    # Another address, other links: another tag.
    other = web.get("/u/bob/feed.atom", headers={"host": "elsewhere.example"})
    assert other.headers["etag"] != changed.headers["etag"]
    assert "http://elsewhere.example/g/" not in other.text  # no board waits for Bob now
    assert "http://elsewhere.example/u/Bob/feed.atom" in other.text


def test_links_go_under_web_url_and_ids_stay_whatever_the_address(
    people: Client, site_settings: Settings, web: TestClient
) -> None:
    number = chameleon_board(people)
    settings = Settings(
        confirm_addresses=False,
        db_url=site_settings.db_url,
        address=site_settings.address,
        web_url="https://games.example.org/",
    )
    with TestClient(make_app(settings)) as served:
        feed = read(served, "/u/bob/feed.atom")
        board = read(served, f"/g/{number}/feed.atom")
    assert feed.entries[0].link == f"https://games.example.org/g/{number}/5"
    assert {link.href for link in feed.feed.links} == {
        "https://games.example.org/u/Bob/feed.atom",
        "https://games.example.org/u/Bob",
    }
    assert board.entries[0].link == f"https://games.example.org/g/{number}/5"
    here = read(web, "/u/bob/feed.atom")
    assert here.feed.id == feed.feed.id and here.entries[0].id == feed.entries[0].id


@pytest.mark.parametrize(
    "url",
    [
        "/u/nobody/feed.atom",
        "/u/x/feed.atom",  # no user id is one letter
        "/u/%21%21/feed.atom",
        "/u/bob/feed.rss",
        "/u/bob/feed.atom/1",
        "/g/999/feed.atom",
        "/g/abc/feed.atom",
        "/g/1/feed.atomx",
        "/g/1/feed",
        "/p/nosuchtoken/feed.atom",
    ],
)
def test_what_is_not_there_is_404(people: Client, web: TestClient, url: str) -> None:
    chameleon_board(people)
    response = web.get(url)
    assert response.status_code == 404, url
    assert response.headers["content-type"].startswith("text/html")


# --- a board's feed ------------------------------------------------------------------------


def test_a_boards_feed_has_each_move_newest_first(people: Client, web: TestClient) -> None:
    number = chameleon_board(people)
    feed = read(web, f"/g/{number}/feed.atom")
    assert feed.feed.title == f"chameleon board {number}: alice vs Bob"
    links = {link.rel: link.href for link in feed.feed.links}
    assert links == {
        "self": f"{BASE}/g/{number}/feed.atom",
        "alternate": f"{BASE}/g/{number}",
    }
    assert [e.title for e in feed.entries] == [
        f"chameleon board {number}: {n}. {text}"
        for n, text in reversed(list(enumerate(("a1x", "e5o", "b2x", "d4o", "c3o"), 1)))
    ]
    assert [e.link for e in feed.entries] == [f"{BASE}/g/{number}/{n}" for n in (5, 4, 3, 2, 1)]
    assert [e.author for e in feed.entries] == ["alice", "Bob", "alice", "Bob", "alice"]
    assert feed.entries[0].summary == f"alice played 5. c3o on chameleon board {number}."
    updated = [e.updated_parsed for e in feed.entries]
    assert updated == sorted(updated, reverse=True)
    assert feed.feed.updated_parsed == updated[0]
    # Each link leads to the page of that position.
    for entry in feed.entries[:2]:
        assert web.get(entry.link.removeprefix(BASE)).status_code == 200


def test_a_finished_boards_feed_begins_with_its_result(people: Client, web: TestClient) -> None:
    number = finished_board(people)
    feed = read(web, f"/g/{number}/feed.atom")
    assert [e.title for e in feed.entries] == [
        f"chameleon board {number}: alice (Vert) won (Bob (Horz) resigned)",
        f"chameleon board {number}: 2. e5o",
        f"chameleon board {number}: 1. a1x",
    ]
    assert feed.entries[0].link == f"{BASE}/g/{number}"


def test_a_board_with_no_move_has_an_empty_feed(people: Client, web: TestClient) -> None:
    number = chameleon_board(people, ())
    feed = read(web, f"/g/{number}/feed.atom")
    assert feed.entries == [] and feed.feed.updated_parsed is not None


def test_the_board_feed_answers_304_and_a_move_changes_its_tag(
    people: Client, web: TestClient
) -> None:
    number = chameleon_board(people)
    url = f"/g/{number}/feed.atom"
    etag = web.get(url).headers["etag"]
    assert web.get(url, headers={"If-None-Match": etag}).status_code == 304
    assert web.get(url, headers={"If-None-Match": f"W/{etag}"}).status_code == 304
    assert CHAMELEON is not None
    move(people, CHAMELEON, number, 1, "a5o")
    response = web.get(url, headers={"If-None-Match": etag})
    assert response.status_code == 200 and response.headers["etag"] != etag
    assert read(web, url).entries[0].title == f"chameleon board {number}: 6. a5o"
    # The position page's tag is another (another representation).
    assert web.get(f"/g/{number}").headers["etag"] != response.headers["etag"]


def test_the_position_route_still_takes_its_positions(people: Client, web: TestClient) -> None:
    number = chameleon_board(people)
    assert web.get(f"/g/{number}/3").status_code == 200
    assert web.get(f"/g/{number}/3.svg").status_code == 200
    assert (
        web.get(f"/g/{number}/feed.atom").headers["content-type"].startswith("application/atom+xml")
    )


def test_head_answers_as_get_and_nothing_is_taken(people: Client, web: TestClient) -> None:
    number = chameleon_board(people)
    for path in (f"/g/{number}/feed.atom", "/u/bob/feed.atom"):
        got, head = web.get(path), web.head(path)
        assert head.status_code == 200 and head.content == b"", path
        assert head.headers["etag"] == got.headers["etag"], path
        assert head.headers["content-type"] == got.headers["content-type"], path
        assert web.post(path, content=b"x").status_code == 405, path
