"""Fixtures of the web view's HTTP tests: a real database (SQLite or PostgreSQL, as every
``db`` test), boards played through the command core as mail plays them, private links made
as the board mail makes them, and the site over it all in Starlette's TestClient.

A test module takes them by importing their functions (``..._fixture``; the fixtures' names are
``people``, ``site_settings``, ``web`` and ``web_as_served``), so that other tests of the web
view need not share them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import Engine, select
from starlette.testclient import TestClient

from pbmserv.config import Settings
from pbmserv.core.play.private_links import private_token, revoke
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import User
from pbmserv.games import find_game
from pbmserv.web.app import make_app
from tests.core.client import Client
from tests.core.play.boards_played import challenge, move

ADDRESS = "games@example.org"
CHAMELEON = find_game("chameleon")
HMDG = find_game("hmdg")
EXTINCTION = find_game("extinction")
#: A short Chameleon game (5 x 5): alice (Vert, seat 0) and Bob (Horz, seat 1), not over.
CHAMELEON_MOVES = ("a1x", "e5o", "b2x", "d4o", "c3o")


@pytest.fixture(name="people")
def people_fixture(engine: Engine) -> Client:
    """The command core on the test database, with alice, Bob and carol signed up."""
    client = Client(engine)
    assert client.run("signup alice secret1 Alice A").ok
    assert client.run("signup Bob hunter22", sender="bob@example.org").ok
    assert client.run("signup carol pass3333", sender="carol@example.org").ok
    return client


@pytest.fixture(name="site_settings")
def site_settings_fixture(db_url: str) -> Settings:
    return Settings(confirm_addresses=False, db_url=db_url, address=ADDRESS)


@pytest.fixture(name="web")
def web_fixture(site_settings: Settings) -> Iterator[TestClient]:
    """The site, raising what it fails on (a test then says where)."""
    with TestClient(make_app(site_settings), follow_redirects=False) as client:
        yield client


@pytest.fixture(name="web_as_served")
def web_as_served_fixture(site_settings: Settings) -> Iterator[TestClient]:
    """The site answering as a server would: a failure is a 500 page, not an exception."""
    app = make_app(site_settings)
    with TestClient(app, raise_server_exceptions=False, follow_redirects=False) as client:
        yield client


def chameleon_board(people: Client, moves: tuple[str, ...] = CHAMELEON_MOVES) -> int:
    assert CHAMELEON is not None
    number = challenge(people, CHAMELEON, "-size=5")
    for ply, text in enumerate(moves):
        move(people, CHAMELEON, number, ply % 2, text)
    return number


def hmdg_board(people: Client) -> int:
    """An HMDG board where Bob's o stands on C3 in secret: the public sees "O plays in row C",
    Bob's own view names C3."""
    assert HMDG is not None
    number = challenge(people, HMDG)
    move(people, HMDG, number, 0, "E5")  # alice's opening x
    move(people, HMDG, number, 1, "o")  # Bob plays O and moves first
    move(people, HMDG, number, 1, "C3 row")
    return number


def user_id(engine: Engine, userid: str) -> int:
    with session_factory(engine)() as session:
        found = session.scalar(select(User.id).where(User.userid == userid))
        assert found is not None
        return found


def link_of(engine: Engine, board: int, userid: str, seat: int) -> str:
    """The player's private link token, made as the board mail makes it."""
    with transaction(session_factory(engine)) as session:
        return private_token(session, board, user_id(engine, userid), seat, datetime.now(UTC))


def revoke_link(engine: Engine, board: int, userid: str) -> None:
    with transaction(session_factory(engine)) as session:
        assert revoke(session, board, user_id(engine, userid))
