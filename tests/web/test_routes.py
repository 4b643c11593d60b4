"""Every address of the web view answers as issue 50's URL scheme says: the pages, pictures and
records of a board and its positions, the list of boards and its filters, the rules, the front
page, robots.txt and the static files; and every wrong address is a plain 404 (or 400 for a
query it cannot read), from the site's own error page."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from pbmserv.web.views import games as games_view
from tests.core.client import Client
from tests.core.play.boards_played import challenge, move
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    ADDRESS,
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

HTML = "text/html; charset=utf-8"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def error_page(response, status: int) -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status, (response.status_code, response.text[:300])
    assert response.headers["content-type"] == HTML
    assert "<h1>" in response.text and "Traceback" not in response.text


def test_a_board_page_its_positions_pictures_and_records(people: Client, web: TestClient) -> None:
    board = chameleon_board(people)
    plies = len(CHAMELEON_MOVES)
    answers = {
        f"/g/{board}": HTML,
        f"/g/{board}/0": HTML,
        f"/g/{board}/{plies}": HTML,
        f"/g/{board}/2.svg": "image/svg+xml",
        f"/g/{board}/2.png": "image/png",
        f"/g/{board}.json": "application/json",
        f"/g/{board}.txt": "text/plain; charset=utf-8",
    }
    for path, media_type in answers.items():
        response = web.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-type"] == media_type, path
    assert web.get(f"/g/{board}/2.svg").text.startswith("<svg")
    assert web.get(f"/g/{board}/2.png").content.startswith(PNG_SIGNATURE)
    record = web.get(f"/g/{board}.json").json()
    assert record["board"] == board and [m["text"] for m in record["moves"]] == list(
        CHAMELEON_MOVES
    )
    assert "c3o" in web.get(f"/g/{board}.txt").text
    # The page now is the page of the last position.
    now, last = web.get(f"/g/{board}"), web.get(f"/g/{board}/{plies}")
    assert now.headers["etag"] == last.headers["etag"]


def test_head_answers_like_get_without_a_body(people: Client, web: TestClient) -> None:
    board = chameleon_board(people)
    for path in (f"/g/{board}", f"/g/{board}/1.svg", f"/g/{board}.json", "/", "/games"):
        got, head = web.get(path), web.head(path)
        assert head.status_code == 200 and head.content == b"", path
        assert head.headers.get("etag") == got.headers.get("etag"), path
        assert head.headers["content-type"] == got.headers["content-type"], path


def test_pgn_for_extinction_alone(people: Client, web: TestClient) -> None:
    assert EXTINCTION is not None
    chess = challenge(people, EXTINCTION)
    for ply, text in enumerate(("e4", "e5", "Nf3")):
        move(people, EXTINCTION, chess, ply % 2, text)
    pgn = web.get(f"/g/{chess}.pgn")
    assert pgn.status_code == 200
    assert pgn.headers["content-type"].startswith("application/x-chess-pgn")
    assert '[Variant "Extinction"]' in pgn.text and "Nf3" in pgn.text
    assert f'filename="board-{chess}.pgn"' in pgn.headers["content-disposition"]
    error_page(web.get(f"/g/{chameleon_board(people)}.pgn"), 404)


@pytest.mark.parametrize(
    "position",
    ["-1", "6", "99", str(10**30), "x", "1x", "1.0", "1.", "1.gif", "1.svg.png", "٣", "+1", " 1"],
)
def test_a_position_that_is_not_there_is_no_page(
    people: Client, web: TestClient, position: str
) -> None:
    board = chameleon_board(people)  # 5 moves: positions 0 to 5
    error_page(web.get(f"/g/{board}/{position}"), 404)


@pytest.mark.parametrize(
    "board", ["999", "0", "-1", str(10**30), "abc", "1e3", "1.gif", "1.", "1.json.txt", "%00"]
)
def test_a_board_that_is_not_there_is_no_page(people: Client, web: TestClient, board: str) -> None:
    chameleon_board(people)
    error_page(web.get(f"/g/{board}"), 404)
    error_page(web.get(f"/g/{board}/0"), 404)


@pytest.mark.parametrize("since", ["x", "-1", str(10**30), "1.5"])
def test_a_since_that_is_no_move_number_is_a_bad_request(
    people: Client, web: TestClient, since: str
) -> None:
    board = chameleon_board(people)
    error_page(web.get(f"/g/{board}/2", params={"since": since}), 400)


def test_the_list_of_boards_newest_first_filtered_and_paged(
    people: Client, web: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = chameleon_board(people)
    second = hmdg_board(people)
    assert CHAMELEON is not None
    third = challenge(people, CHAMELEON, "-size=5")
    assert people.run(f"chameleon resign {third} alice secret1").ok
    everything = web.get("/games")
    assert everything.status_code == 200
    order = [everything.text.index(f'href="/g/{n}"') for n in (third, second, first)]
    assert order == sorted(order)  # the newest first
    only_hmdg = web.get("/games", params={"game": "hmdg"}).text
    assert f'href="/g/{second}"' in only_hmdg and f'href="/g/{first}"' not in only_hmdg
    over = web.get("/games", params={"status": "finished"}).text
    assert f'href="/g/{third}"' in over and f'href="/g/{first}"' not in over
    running = web.get("/games", params={"status": "active", "player": "BOB"}).text
    assert f'href="/g/{first}"' in running and f'href="/g/{third}"' not in running
    assert "/g/" not in web.get("/games", params={"player": "carol"}).text.split("<main>")[1]
    monkeypatch.setattr(games_view, "PER_PAGE", 2)
    page_one = web.get("/games").text
    assert 'rel="next" href="/games?page=2"' in page_one
    page_two = web.get("/games", params={"page": "2"}).text
    assert f'href="/g/{first}"' in page_two and 'rel="prev" href="/games"' in page_two
    assert "No boards on this page" in web.get("/games", params={"page": "99"}).text


@pytest.mark.parametrize(
    "query",
    [
        {"game": "nope"},
        {"game": "ché"},
        {"player": "a b"},
        {"player": "x" * 40},
        {"player": "\x00"},
        {"status": "paused"},
        {"page": "0"},
        {"page": "two"},
        {"page": str(10**30)},
        {"board": "seventeen"},
        {"board": str(10**30)},
    ],
)
def test_a_filter_the_list_cannot_read_is_a_bad_request(
    web: TestClient, query: dict[str, str]
) -> None:
    error_page(web.get("/games", params=query), 400)


def test_the_front_page_search_goes_to_the_board(web: TestClient) -> None:
    for asked in ("17", "#17", " 17 "):
        found = web.get("/games", params={"board": asked})
        assert found.status_code == 303 and found.headers["location"] == "/g/17"


def test_the_front_page_names_the_games_their_rules_and_how_to_join(web: TestClient) -> None:
    front = web.get("/")
    assert front.status_code == 200 and front.headers["content-type"] == HTML
    for name in ("chameleon", "hmdg", "extinction", "entropy", "owlman", "buffalo"):
        assert f'href="/rules/{name}"' in front.text
    assert ADDRESS in front.text and "signup USERID PASSWORD" in front.text
    assert '<form class="find" action="/games" method="get">' in front.text


def test_the_rules_are_the_help_text(web: TestClient) -> None:
    rules = web.get("/rules/hmdg")
    assert rules.status_code == 200
    assert "Hidden Move Double Gomoku" in rules.text
    assert "<h2>Rules</h2>" in rules.text and "<pre>hmdg challenge alice bob</pre>" in rules.text
    assert ADDRESS in rules.text  # "send help commands to ..." filled in as in mail
    for name in ("chameleon", "extinction", "entropy", "owlman", "buffalo"):
        assert web.get(f"/rules/{name}").status_code == 200, name
    for wrong in ("nope", "HMDG", "hmdg.txt", "%2e%2e", "x" * 50):
        error_page(web.get(f"/rules/{wrong}"), 404)


def test_robots_keep_off_the_private_links(web: TestClient) -> None:
    robots = web.get("/robots.txt")
    assert robots.status_code == 200 and robots.headers["content-type"].startswith("text/plain")
    assert robots.text.splitlines() == ["User-agent: *", "Disallow: /p/"]


def test_the_static_files(web: TestClient) -> None:
    for name, media_type in (
        ("site.css", "text/css"),
        ("steps.js", "text/javascript"),
        ("favicon.svg", "image/svg+xml"),
    ):
        response = web.get(f"/static/{name}")
        assert response.status_code == 200, name
        assert response.headers["content-type"].startswith(media_type), name
    for missing in ("/static/nope.css", "/static/../web/base.html.j2", "/static/%2e%2e/x"):
        error_page(web.get(missing), 404)


def test_the_site_takes_nothing_sent_to_it(people: Client, web: TestClient) -> None:
    board = chameleon_board(people)
    for path in ("/", f"/g/{board}", f"/g/{board}/1", "/games"):
        error_page(web.post(path, content=b"x"), 405)
        error_page(web.delete(path), 405)


def test_json_record_of_every_position_count(people: Client, web: TestClient) -> None:
    board = chameleon_board(people, CHAMELEON_MOVES[:2])
    record = json.loads(web.get(f"/g/{board}.json").text)
    assert record["plies"] == 2 and record["status"] == "active"
    assert [p["userid"] for p in record["players"]] == ["alice", "Bob"]
