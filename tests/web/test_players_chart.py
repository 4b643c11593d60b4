"""A player's rating-history chart, parsed as XML and read back against the ratings the player
held after each of 30 rated boards in two games (taken from the database as each board
ended); the table beside it; and a player page that reads as many statements for many boards
as for few (no query a board)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import pytest
from sqlalchemy import Engine, event, select
from starlette.testclient import TestClient

from pbmserv.config import Settings
from pbmserv.db.models import GameRow, Rating, User
from pbmserv.db.times import utcnow
from pbmserv.web.app import make_app
from pbmserv.web.database import read_engine
from tests.core.client import Client
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    chameleon_board,
    people_fixture,
    site_settings_fixture,
    web_fixture,
)

pytestmark = pytest.mark.db

SVG = "{http://www.w3.org/2000/svg}"
ALICE = ("alice secret1", "alice@example.org")
BOB = ("Bob hunter22", "bob@example.org")
GAMES = {"chameleon": "chameleon challenge -size=5 alice bob", "extinction": "extinction "
         "challenge alice bob"}  # fmt: skip


@dataclass(frozen=True)
class Held:
    """alice's ratings right after a rated board, as the database held them then."""

    board: int
    day: str
    result: str
    elo: float
    glicko: float
    rd: float


def rated_board(people: Client, game: str, i: int, at: datetime) -> Held:
    """A board of ``game`` ended at ``at``: alice wins, loses or draws by turns (Chameleon has
    no draw)."""
    assert people.run(GAMES[game], sender=ALICE[1], at=at).ok
    board = people.query(select(GameRow.id).order_by(GameRow.id.desc()).limit(1))[0][0]
    later = at + timedelta(minutes=5)
    results = ("won", "lost", "drawn") if game == "extinction" else ("won", "lost")
    result = results[i % len(results)]
    if result == "won":
        assert people.run(f"{game} resign {board} {BOB[0]}", sender=BOB[1], at=later).ok
    else:
        assert people.run(f"{game} accept {board} {BOB[0]}", sender=BOB[1], at=later).ok
        if result == "lost":
            assert people.run(f"{game} resign {board} {ALICE[0]}", sender=ALICE[1], at=later).ok
        else:
            assert people.run(f"{game} propose {board} {ALICE[0]} draw", at=later).ok
            assert people.run(f"{game} accept {board} {BOB[0]}", sender=BOB[1], at=later).ok
    ((elo, glicko, rd),) = people.query(
        select(Rating.rating, Rating.glicko, Rating.glicko_rd)
        .join(User, User.id == Rating.user_id)
        .where(User.userid == "alice", Rating.game == game)
    )
    return Held(board, later.strftime("%Y-%m-%d"), result, elo, glicko, rd)


@pytest.fixture
def history(people: Client) -> dict[str, list[Held]]:
    """30 rated boards, 15 of each game, one a day over the last 30 days."""
    start = utcnow() - timedelta(days=31)
    held: dict[str, list[Held]] = {"chameleon": [], "extinction": []}
    for i in range(30):
        game = ("chameleon", "extinction")[i % 2]
        held[game].append(rated_board(people, game, i // 2, start + timedelta(days=i)))
    return held


def charts(page: str) -> dict[str, ET.Element]:
    """The page's charts by game, parsed as XML."""
    found = {}
    for game, svg in re.findall(
        r'<h3 id="rating-(\w+)">.*?(<svg .*?</svg>)', page, flags=re.DOTALL
    ):
        found[game] = ET.fromstring(svg)
    return found


def group(svg: ET.Element, name: str) -> ET.Element:
    found = svg.find(f".//{SVG}g[@class='{name}']")
    assert found is not None, name
    return found


def coordinates(text: str) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in (pair.split(",") for pair in text.split())]


def value_scale(svg: ET.Element) -> tuple[float, float]:
    """The value axis's labels as a line: value = a * y + b."""
    ticks = [(float(t.get("y", "")), float(t.text or "")) for t in group(svg, "axis values")
             .iter(f"{SVG}text")]  # fmt: skip
    assert len(ticks) >= 3
    (y0, v0), (y1, v1) = ticks[0], ticks[-1]
    a = (v1 - v0) / (y1 - y0)
    for y, v in ticks:  # evenly spaced, round values
        assert a * (y - y0) + v0 == pytest.approx(v, abs=0.5)
    return a, v0 - a * y0


def test_the_chart_draws_the_rating_after_each_rated_board(
    history: dict[str, list[Held]], people: Client, web: TestClient
) -> None:
    page = web.get("/u/alice")
    assert page.status_code == 200
    found = charts(page.text)
    assert set(found) == {"chameleon", "extinction"}
    for game, held in history.items():
        svg = found[game]
        assert len(held) == 15
        a, b = value_scale(svg)

        def value(y: float, a: float = a, b: float = b) -> float:
            return a * y + b

        tolerance = abs(a) * 0.06 + 0.01  # coordinates are written to 0.1 of a unit
        # One point a rated board, in the order rated, each a link to its board.
        links = list(group(svg, "points").iter(f"{SVG}a"))
        assert [link.get("href") for link in links] == [f"/g/{h.board}" for h in held]
        circles = [link.find(f"{SVG}circle") for link in links]
        xs = [float(c.get("cx", "")) for c in circles if c is not None]
        assert xs == sorted(xs) and len(set(xs)) == len(xs) == 15
        for circle, h in zip(circles, held, strict=True):
            assert circle is not None
            assert value(float(circle.get("cy", ""))) == pytest.approx(h.glicko, abs=tolerance)
            title = circle.find(f"{SVG}title")
            assert title is not None and title.text is not None
            assert title.text == f"{h.day}, board {h.board}: {h.result}"
        # The lines: Glicko-2 through the points, Elo dashed.
        glicko = svg.find(f".//{SVG}polyline[@class='glicko']")
        elo = svg.find(f".//{SVG}polyline[@class='elo']")
        assert glicko is not None and elo is not None
        assert elo.get("stroke-dasharray")
        for (x, y), (ex, ey), cx, h in zip(
            coordinates(glicko.get("points", "")),
            coordinates(elo.get("points", "")),
            xs,
            held,
            strict=True,
        ):
            assert x == ex == cx
            assert value(y) == pytest.approx(h.glicko, abs=tolerance)
            assert value(ey) == pytest.approx(h.elo, abs=tolerance)
        # The band: +-2 RD about the Glicko-2 line, the upper edge forward, the lower back.
        band = svg.find(f".//{SVG}polygon[@class='band']")
        assert band is not None
        edge = coordinates(band.get("points", ""))
        upper, lower = edge[:15], list(reversed(edge[15:]))
        for (ux, uy), (lx, ly), h in zip(upper, lower, held, strict=True):
            assert ux == lx
            assert value(uy) == pytest.approx(h.glicko + 2 * h.rd, abs=tolerance)
            assert value(ly) == pytest.approx(h.glicko - 2 * h.rd, abs=tolerance)
        # Dates beneath: the first and the last board's among them.
        dates = [t.text for t in group(svg, "axis dates").iter(f"{SVG}text")]
        assert dates[0] == held[0].day and dates[-1] == held[-1].day and len(dates) == 4
        # The table beside it: the same points in words.
        table = page.text[page.text.index(f'id="points-{game}"') :]
        rows = re.findall(
            r'<tr><td>([\d-]+)</td><td><a href="/g/(\d+)">\d+</a></td><td>(\w+)</td>'
            r"<td>(\d+) &plusmn; (\d+)</td><td>(\d+)</td></tr>",
            table[: table.index("</table>")],
        )
        assert rows == [
            (h.day, str(h.board), h.result, str(round(h.glicko)), str(round(2 * h.rd)),
             str(round(h.elo)))
            for h in held
        ]  # fmt: skip
    # The page's rating now is the one the player holds after the last board (the RD aged
    # since by the mail's rule).
    mail = {row["game"]: row for row in people.run("ratings alice").data["rows"]}
    for game, held in history.items():
        assert mail[game]["glicko"] == round(held[-1].glicko)
        assert mail[game]["rating"] == round(held[-1].elo)


def test_a_player_page_reads_no_more_statements_for_more_boards(
    people: Client, site_settings: Settings, engine: Engine
) -> None:
    people.settings = replace(people.settings, text_mails_per_recipient_per_day=1000)
    reader = read_engine(site_settings.db_url)
    statements: list[str] = []

    @event.listens_for(reader, "before_cursor_execute")
    def count(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        statements.append(statement)

    def read() -> int:
        statements.clear()
        with TestClient(make_app(site_settings, engine=reader)) as web:
            assert web.get("/u/alice").status_code == 200
            assert web.get("/u/alice/vs/bob").status_code == 200
        return len(statements)

    def boards(count: int) -> None:
        for _ in range(count):
            assert people.run("chameleon challenge -size=5 alice bob").ok
            board = people.query(select(GameRow.id).order_by(GameRow.id.desc()).limit(1))[0][0]
            assert people.run(f"chameleon resign {board} {BOB[0]}", sender=BOB[1]).ok
            assert people.run("extinction challenge alice bob").ok
            chameleon_board(people)

    try:
        boards(2)
        few = read()
        boards(10)
        many = read()
        assert many == few, statements
        assert few <= 16
    finally:
        reader.dispose()
