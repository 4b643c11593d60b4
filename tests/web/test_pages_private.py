"""Private links and hidden information: a seat's private link shows what its own board mail
shows (its secrets), the public pages, pictures and records of a running board do not; a
revoked link is no page; once the board is over, its private link leads to the public page
(301), where everything is shown."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import Engine, select
from starlette.testclient import TestClient

from pbmserv.db.models import GameRow
from pbmserv.games import find_game
from tests.core.client import Client
from tests.core.play.boards_played import challenge, play_random, resign
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    HMDG,
    chameleon_board,
    hmdg_board,
    link_of,
    people_fixture,
    revoke_link,
    site_settings_fixture,
    web_fixture,
)

pytestmark = pytest.mark.db

SECRET = "C3"  # Bob's hidden o (hmdg_board); the public hears "O plays in row C"


def page_text(web: TestClient, path: str, link: str) -> str:
    """A private page's text without its link's token, which is random and may hold "C3"."""
    return web.get(path).text.replace(link, "LINK")


def test_a_private_link_shows_its_seat_s_secret_and_the_public_page_does_not(
    people: Client, web: TestClient, engine: Engine
) -> None:
    board = hmdg_board(people)
    bob = link_of(engine, board, "bob", 1)
    alice = link_of(engine, board, "alice", 0)
    plies = 3
    public_paths = [f"/g/{board}", f"/g/{board}.json", f"/g/{board}.txt"]
    public_paths += [f"/g/{board}/{ply}" for ply in range(plies + 1)]
    for path in public_paths:
        response = web.get(path)
        assert response.status_code == 200, path
        assert not re.search(rf"\b{SECRET}\b", response.text), path  # not inside a hash
    assert "O plays in row C" in web.get(f"/g/{board}").text
    # Bob's own view names his point, in the page, the diagram and the records.
    for path in (f"/p/{bob}", f"/p/{bob}/{plies}", f"/p/{bob}.json", f"/p/{bob}.txt"):
        assert web.get(path).status_code == 200, path
        assert SECRET in page_text(web, path, bob), path
    assert "Your own view, Bob" in web.get(f"/p/{bob}").text
    # Alice's own view is hers: Bob's secret is not in it.
    for path in (f"/p/{alice}", f"/p/{alice}.json", f"/p/{alice}.txt"):
        assert SECRET not in page_text(web, path, alice), path
    # The pictures: Bob's shows his hidden piece, the public one does not.
    public_svg = web.get(f"/g/{board}/{plies}.svg").text
    assert web.get(f"/p/{bob}/{plies}.svg").text != public_svg
    assert web.get(f"/p/{alice}/{plies}.svg").text == public_svg  # alice has no secret yet
    # The private page's links stay private; its link to the public page is public.
    page = web.get(f"/p/{bob}/1").text
    assert f'href="/p/{bob}/0"' in page and f'href="/p/{bob}/2"' in page
    assert f'href="/g/{board}/1"' in page and f'src="/p/{bob}/1.svg"' in page


def test_a_finished_board_shows_everything_and_its_private_link_leads_there(
    people: Client, web: TestClient, engine: Engine
) -> None:
    board = hmdg_board(people)
    bob = link_of(engine, board, "bob", 1)
    assert HMDG is not None
    resign(people, HMDG, board, 0)
    assert SECRET in web.get(f"/g/{board}").text  # over: nothing is hidden any more
    assert SECRET in web.get(f"/g/{board}.json").text
    moved = {
        f"/p/{bob}": f"/g/{board}",
        f"/p/{bob}/2": f"/g/{board}/2",
        f"/p/{bob}/2.svg": f"/g/{board}/2.svg",
        f"/p/{bob}/2.png": f"/g/{board}/2.png",
        f"/p/{bob}.json": f"/g/{board}.json",
        f"/p/{bob}.txt": f"/g/{board}.txt",
        f"/p/{bob}/1?since=1": f"/g/{board}/1?since=1",
    }
    for path, public in moved.items():
        response = web.get(path)
        assert response.status_code == 301, path
        assert response.headers["location"] == public, path
        assert response.headers["cache-control"] == "private, no-store"
        assert response.headers["referrer-policy"] == "no-referrer"
        assert web.get(public).status_code == 200, public


def test_a_revoked_link_is_no_page(people: Client, web: TestClient, engine: Engine) -> None:
    board = chameleon_board(people)
    old = link_of(engine, board, "alice", 0)
    assert web.get(f"/p/{old}").status_code == 200
    revoke_link(engine, board, "alice")
    for path in (f"/p/{old}", f"/p/{old}/1", f"/p/{old}/1.svg", f"/p/{old}.json"):
        gone = web.get(path)
        assert gone.status_code == 404, path
        assert "Traceback" not in gone.text
    new = link_of(engine, board, "alice", 0)
    assert new != old and web.get(f"/p/{new}").status_code == 200


@pytest.mark.parametrize(
    "token", ["A" * 32, "short", "A" * 33, "A" * 31 + "!", "A" * 31 + "%00", "A" * 31 + "."]
)
def test_a_token_that_is_no_link_is_no_page(
    people: Client, web: TestClient, engine: Engine, token: str
) -> None:
    board = chameleon_board(people)
    link_of(engine, board, "alice", 0)
    for path in (f"/p/{token}", f"/p/{token}/1", f"/p/{token}.json"):
        assert web.get(path).status_code == 404, path


def test_entropy_has_no_secret_and_the_seed_stays_in_the_database(
    people: Client, web: TestClient, engine: Engine
) -> None:
    """Entropy hides nothing (the counter drawn is on the board for all): the public and a
    seat see the same diagram; but the board's seed, from which every draw to come follows,
    is in no output (the public's or a seat's)."""
    import random

    entropy = find_game("entropy")
    assert entropy is not None
    board = challenge(people, entropy, "-size=5")
    play_random(people, entropy, board, random.Random(5), 6)
    seed = people.query(select(GameRow.seed).where(GameRow.id == board))[0][0]
    alice = link_of(engine, board, "alice", 0)
    public, private = web.get(f"/g/{board}").text, web.get(f"/p/{alice}").text
    diagram = re.compile(r'<pre id="diagram"[^>]*>(.*?)</pre>', re.S)
    assert diagram.search(public).group(1) == diagram.search(private).group(1)  # type: ignore[union-attr]
    for path in (f"/g/{board}", f"/g/{board}.json", f"/g/{board}.txt", f"/p/{alice}.json"):
        assert str(seed) not in web.get(path).text, path
