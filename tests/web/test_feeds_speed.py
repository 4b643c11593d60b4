"""The feeds' cost (issue 51: no query per board in a loop): the statements a player's feed runs
do not grow with their games, and a 304 reads no board. Its CPU is measured by bench/web.py,
not here (no timed assertion in a test)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import feedparser
import pytest
from sqlalchemy import Engine, event
from starlette.testclient import TestClient

from pbmserv.config import Settings
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import GameRow, Seat
from pbmserv.web.app import make_app
from pbmserv.web.database import read_engine
from pbmserv.web.views.feeds import FINISHED_SHOWN
from tests.core.client import Client
from tests.core.play.boards_played import resign
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    CHAMELEON,
    chameleon_board,
    people_fixture,
    site_settings_fixture,
)

pytestmark = pytest.mark.db


class Statements:
    """The queries an engine runs, counted (SELECTs: not SQLite's BEGIN)."""

    def __init__(self, engine: Engine) -> None:
        self.count = 0
        event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            self.count += 1

    @contextmanager
    def counting(self) -> Iterator[list[int]]:
        before = self.count
        counted: list[int] = []
        yield counted
        counted.append(self.count - before)


def clone(engine: Engine, source: int, copies: int) -> None:
    """``copies`` more boards like board ``source`` (its row and seats; no moves), each a
    minute older than the one before."""
    with transaction(session_factory(engine)) as session:
        row = session.get(GameRow, source)
        assert row is not None
        for n in range(copies):
            copy = GameRow(
                game=row.game,
                options=row.options,
                seed=row.seed,
                status=row.status,
                ply=row.ply,
                to_move=row.to_move,
                state=row.state,
                state_version=row.state_version,
                result=row.result,
                created_at=row.created_at,
                updated_at=row.updated_at - timedelta(minutes=n + 1),
                time_control=row.time_control,
            )
            copy.seats = [
                Seat(seat=s.seat, user_id=s.user_id, accepted_at=s.accepted_at) for s in row.seats
            ]
            session.add(copy)


@pytest.fixture
def counted(site_settings: Settings) -> Iterator[tuple[TestClient, Statements]]:
    engine = read_engine(site_settings.db_url)
    statements = Statements(engine)
    with TestClient(make_app(site_settings, engine)) as client:
        yield client, statements
    engine.dispose()


def boards_for_bob(people: Client) -> tuple[int, int]:
    """A board waiting for Bob and one he lost."""
    waiting = chameleon_board(people)
    lost = chameleon_board(people, ("a1x", "e5o"))
    assert CHAMELEON is not None
    resign(people, CHAMELEON, lost, 1)
    return waiting, lost


def test_the_player_feed_runs_as_many_statements_for_many_games_as_for_two(
    people: Client, engine: Engine, counted: tuple[TestClient, Statements]
) -> None:
    web, statements = counted
    waiting, lost = boards_for_bob(people)
    with statements.counting() as few:
        response = web.get("/u/bob/feed.atom")
    assert len(feedparser.parse(response.content).entries) == 2
    clone(engine, waiting, 20)
    clone(engine, lost, 80)
    with statements.counting() as many:
        response = web.get("/u/bob/feed.atom")
    assert len(feedparser.parse(response.content).entries) == 21 + FINISHED_SHOWN
    assert many == few == [5], (few, many)
    # The results are kept: asked again, the feed reads no board of its own.
    with statements.counting() as warm:
        assert web.get("/u/bob/feed.atom").content == response.content
    assert warm == [3], warm
    # A 304 reads the player and which boards, no board.
    with statements.counting() as again:
        cached = web.get("/u/bob/feed.atom", headers={"If-None-Match": response.headers["etag"]})
    assert cached.status_code == 304 and again == [2], again


def test_the_board_feed_runs_a_few_statements_however_long_the_game(
    people: Client, counted: tuple[TestClient, Statements]
) -> None:
    web, statements = counted
    short = chameleon_board(people, ("a1x", "e5o"))
    long = chameleon_board(people)
    with statements.counting() as few:
        assert web.get(f"/g/{short}/feed.atom").status_code == 200
    with statements.counting() as more:
        assert web.get(f"/g/{long}/feed.atom").status_code == 200
    assert few == more and few[0] <= 7, (few, more)
