"""Nothing of a secret reaches the public through any door of the web view (issue 50): two HMDG
boards that differ only in one seat's secrets, each board 1 of a database of its own, give the
public byte-identical answers at every ply (the page, the SVG and PNG pictures, the JSON and
text records, the board's feed) with the same ETags; and the other seat's private pages are the
same too, while the varied seat's own pages differ.

The twins are played through the command core with equal public histories
(tests/core/play/test_positions.py), then split into two copies of the database, the second
board renumbered 1 in its copy, so that nothing but the secrets tells them apart.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine
from starlette.testclient import TestClient

from pbmserv.config import Settings
from pbmserv.core.play.private_links import private_token
from pbmserv.db.engine import make_engine, transaction
from pbmserv.db.models import GameRow
from pbmserv.web.app import make_app
from tests.core.client import Client
from tests.core.play.test_positions import twin_boards
from tests.web.pages_fixtures import HMDG

#: The tables that name a board, besides ``games``.
BOARD_TABLES = ("seats", "moves", "board_mail", "private_links", "observers", "rating_changes")


@pytest.fixture
def sqlite_only(db_url: str) -> str:
    if not db_url.startswith("sqlite"):
        pytest.skip("the twins are split by copying the database file (SQLite)")
    return db_url


def _only_board(source: Path, target: Path, keep: int) -> None:
    """A copy of the database holding board ``keep`` alone, as board 1."""
    shutil.copy(source, target)
    with sqlite3.connect(target) as db:
        db.execute("PRAGMA foreign_keys=OFF")
        for table in BOARD_TABLES:
            db.execute(f"DELETE FROM {table} WHERE game_id != ?", (keep,))  # noqa: S608
            db.execute(f"UPDATE {table} SET game_id = 1 WHERE game_id = ?", (keep,))  # noqa: S608
        db.execute("DELETE FROM games WHERE id != ?", (keep,))
        db.execute("UPDATE games SET id = 1 WHERE id = ?", (keep,))


@pytest.fixture
def twins(sqlite_only: str, engine: Engine, tmp_path: Path) -> Iterator[tuple[Path, Path, int]]:
    players = Client(engine)
    assert players.run("signup alice secret1").ok
    assert players.run("signup Bob hunter22", sender="bob@example.org").ok
    assert HMDG is not None
    varied = 1
    first, second = twin_boards(players, HMDG, varied, seed=0)
    engine.dispose()
    source = Path(sqlite_only.removeprefix("sqlite:///"))
    one, two = tmp_path / "one.db", tmp_path / "two.db"
    _only_board(source, one, first)
    _only_board(source, two, second)
    _same_times(one, two)
    yield one, two, varied


def _same_times(one: Path, two: Path) -> None:
    """The second twin's clock readings and row version made the first's: the twins were
    played a moment apart, and only their secrets may differ."""
    with sqlite3.connect(one) as a, sqlite3.connect(two) as b:
        row = a.execute("SELECT updated_at, version FROM games WHERE id = 1").fetchone()
        b.execute("UPDATE games SET updated_at = ?, version = ? WHERE id = 1", row)
        times = [t for (t,) in a.execute("SELECT created_at FROM moves ORDER BY id")]
        ids = [i for (i,) in b.execute("SELECT id FROM moves ORDER BY id")]
        assert len(times) == len(ids)
        b.executemany("UPDATE moves SET created_at = ? WHERE id = ?", zip(times, ids, strict=True))


def _tokens(path: Path) -> dict[int, str]:
    """Each seat's private link token to board 1 (alice: seat 0, Bob: seat 1)."""
    engine = make_engine(f"sqlite:///{path}")
    try:
        with transaction(Client(engine).factory) as session:
            board = session.get(GameRow, 1)
            assert board is not None
            return {
                s.seat: private_token(session, 1, s.user_id, s.seat, board.created_at)
                for s in board.seats
            }
    finally:
        engine.dispose()


def _site(path: Path) -> TestClient:
    return TestClient(make_app(Settings(db_url=f"sqlite:///{path}")), follow_redirects=False)


def _answers(web: TestClient, base: str, plies: int) -> list[tuple[str, int, bytes, str]]:
    """Every answer of a board's pages: (address, status, body, ETag)."""
    addresses = [f"{base}.json", f"{base}.txt"]
    for ply in range(plies + 1):
        addresses += [f"{base}/{ply}", f"{base}/{ply}.svg", f"{base}/{ply}.png"]
    if base.startswith("/g/"):
        addresses.append(f"{base}/feed.atom")
    found = []
    for address in addresses:
        response = web.get(address)
        found.append(
            (address, response.status_code, response.content, response.headers.get("etag", ""))
        )
    return found


def test_twins_differing_in_a_secret_answer_the_public_byte_for_byte_alike(
    twins: tuple[Path, Path, int],
) -> None:
    one, two, varied = twins
    with _site(one) as first, _site(two) as second:
        plies = len(first.get("/g/1.json").json()["moves"])
        assert plies >= 12
        public_one, public_two = _answers(first, "/g/1", plies), _answers(second, "/g/1", plies)
    assert [a[1] for a in public_one] == [200] * len(public_one)
    for a, b in zip(public_one, public_two, strict=True):
        assert a == b, f"the public's {a[0]} tells the twins apart"
    tokens_one, tokens_two = _tokens(one), _tokens(two)
    other = 1 - varied
    with _site(one) as first, _site(two) as second:
        # The other seat's own view: the same (its link differs: made of each copy's key).
        theirs_one = _answers(first, f"/p/{tokens_one[other]}", plies)
        theirs_two = _answers(second, f"/p/{tokens_two[other]}", plies)
        for a, b in zip(theirs_one, theirs_two, strict=True):
            assert a[1] == b[1] == 200
            body_a = a[2].replace(tokens_one[other].encode(), b"TOKEN")
            body_b = b[2].replace(tokens_two[other].encode(), b"TOKEN")
            assert body_a == body_b, f"seat {other}'s {a[0]} tells the twins apart"
        # The varied seat's own view does show its secrets, which differ.
        own_one = first.get(f"/p/{tokens_one[varied]}.json").json()
        own_two = second.get(f"/p/{tokens_two[varied]}.json").json()
        assert own_one["moves"] != own_two["moves"]
