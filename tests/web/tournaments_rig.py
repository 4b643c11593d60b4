"""What the tests of the tournament pages stand on (issue 51): tournaments played through the
command core as mail plays them (players' commands, each its own transaction; the operator's
actions as the shell runs them), the database's matches and boards read back, and the pages
read as a browser reads their tables and links.

A test module takes the fixture ``club`` by importing ``club_fixture``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from html.parser import HTMLParser
from typing import Any

import pytest
from sqlalchemy import Engine, select
from starlette.testclient import TestClient

from pbmserv.core.context import CommandContext
from pbmserv.core.results import Section
from pbmserv.core.tournaments import service, store
from pbmserv.core.tournaments.setup import create_tournament, open_tournament
from pbmserv.db.engine import transaction
from pbmserv.db.models import GameRow, Match, Tournament, User
from tests.core.client import Client

HTML = "text/html; charset=utf-8"


# --- players at their mail, the operator at the shell -----------------------------------------


def password(userid: str) -> str:
    return f"pw-{userid}"


class Club:
    """Players sending commands (each one a message, its own transaction) and the operator's
    actions, on the test database."""

    def __init__(self, engine: Engine) -> None:
        self.client = Client(engine)

    def send(self, userid: str, line: str) -> Section:
        section = self.client.run(line, sender=f"{userid}@example.org")
        assert section.ok, section.text
        return section

    def operate(self, action: Callable[[CommandContext], Any]) -> Any:
        with transaction(self.client.factory) as session:
            return action(CommandContext(session, self.client.settings, None))

    def create(self, name: str, format_: str, games: list[str], **kwargs: Any) -> None:
        self.operate(lambda ctx: create_tournament(ctx, name, format_, games, **kwargs))

    def begin(
        self, name: str, format_: str, games: list[str], players: Iterable[str], **kwargs: Any
    ) -> None:
        """Sign up whoever is new, create and open the tournament, join them, start it."""
        known = {userid for (userid,) in self.client.query(select(User.userid))}
        for userid in players:
            if userid not in known:
                self.send(userid, f"signup {userid} {password(userid)}")
        self.create(name, format_, games, **kwargs)
        self.operate(lambda ctx: open_tournament(ctx, store.find_tournament(ctx, name)))
        for userid in players:
            self.send(userid, f"tournament join {name} {userid} {password(userid)}")
        self.operate(lambda ctx: service.start(ctx, store.find_tournament(ctx, name)))

    def open_boards(self, name: str) -> list[tuple[int, str, str, str]]:
        """(board, game, seat 0's user, seat 1's user) of the tournament's running boards."""
        with self.client.session() as session:
            tournament = session.scalars(select(Tournament).where(Tournament.name == name)).one()
            rows = session.scalars(
                select(GameRow)
                .join(Match, Match.id == GameRow.match_id)
                .where(Match.tournament_id == tournament.id, GameRow.status == "active")
                .order_by(GameRow.id)
            ).all()
            return [(r.id, r.game, r.seats[0].user.userid, r.seats[1].user.userid) for r in rows]

    def end_board(self, board: int, game: str, loser: str | None, seat0: str, seat1: str) -> None:
        """``loser`` resigns; None: the two agree a draw."""
        if loser is not None:
            self.send(loser, f"{game} resign {board} {loser} {password(loser)}")
            return
        self.send(seat0, f"{game} propose {board} {seat0} {password(seat0)} draw")
        self.send(seat1, f"{game} accept {board} {seat1} {password(seat1)} draw")

    def play_round(self, name: str, loser: Callable[[str, str], str | None]) -> None:
        """End every running board: ``loser(seat 0, seat 1)`` resigns (None: drawn)."""
        for board, game, seat0, seat1 in self.open_boards(name):
            self.end_board(board, game, loser(seat0, seat1), seat0, seat1)

    def tournament_id(self, name: str) -> int:
        [(number,)] = self.client.query(select(Tournament.id).where(Tournament.name == name))
        return int(number)

    def matches(self, name: str) -> list[dict[str, Any]]:
        """Every match of the tournament with its players' user ids and its boards."""
        users = dict(self.client.query(select(User.id, User.userid)))
        number = self.tournament_id(name)
        with self.client.session() as session:
            rows = session.scalars(
                select(Match).where(Match.tournament_id == number).order_by(Match.round, Match.id)
            ).all()
            boards: dict[int, list[int]] = {}
            for board_id, match_id in session.execute(
                select(GameRow.id, GameRow.match_id)
                .where(GameRow.match_id.in_([m.id for m in rows]))
                .order_by(GameRow.id)
            ):
                boards.setdefault(match_id, []).append(board_id)
            return [
                {
                    "round": m.round,
                    "first": users[m.first_id],
                    "second": users[m.second_id] if m.second_id else None,
                    "points": m.points,
                    "status": m.status,
                    "boards": boards.get(m.id, []),
                }
                for m in rows
            ]

    def shown_standings(self, name: str) -> list[list[str]]:
        """The standings table of the ``tournament show`` reply, a row a list of words."""
        text = self.send("ann", f"tournament show {name}").text or ""
        table = text[text.index("Standings:") :].split("\n\n")[0]
        return [line.split() for line in table.splitlines()[2:] if line.strip()]


@pytest.fixture(name="club")
def club_fixture(engine: Engine) -> Club:
    return Club(engine)


def seed_wins(players: list[str]) -> Callable[[str, str], str | None]:
    """The better seed wins (the other resigns)."""
    return lambda a, b: b if players.index(a) < players.index(b) else a


# --- reading the page ----------------------------------------------------------------------


class Page(HTMLParser):
    """The page's tables by class (each a list of rows, a row a list of cells: the cell's
    text and its links), and every link's address."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tables: dict[str, list[list[list[dict[str, Any]]]]] = {}
        self.links: list[str] = []
        self._rows: list[list[dict[str, Any]]] | None = None
        self._cell: dict[str, Any] | None = None
        self._hidden = 0
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table":
            self._rows = []
            self.tables.setdefault(found.get("class") or "", []).append(self._rows)
        elif tag == "tr" and self._rows is not None:
            self._rows.append([])
        elif tag in ("td", "th") and self._rows is not None:
            self._cell = {"text": "", "hrefs": []}
            self._rows[-1].append(self._cell)
        elif tag == "a":
            self.links.append(found["href"] or "")
            if self._cell is not None:
                self._cell["hrefs"].append(found["href"])
        elif tag == "span" and found.get("aria-hidden") == "true":
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._rows = None
        elif tag in ("td", "th") and self._cell is not None:
            self._cell["text"] = " ".join(self._cell["text"].split())
            self._cell = None
        elif tag == "span" and self._hidden:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None and not self._hidden:
            self._cell["text"] += data

    def table(self, kind: str, index: int = 0) -> list[list[dict[str, Any]]]:
        return self.tables[kind][index]

    def texts(self, kind: str, index: int = 0) -> list[list[str]]:
        """A table's body rows as the cells' texts."""
        return [[c["text"] for c in row] for row in self.table(kind, index)[1:]]


def page_of(web: TestClient, path: str) -> Page:
    response = web.get(path)
    assert response.status_code == 200, (path, response.status_code, response.text[:300])
    assert response.headers["content-type"] == HTML
    return Page(response.text)


def check_crosstable(page: Page, matches: list[dict[str, Any]]) -> None:
    """Every cell of the crosstable holds the boards of the database's matches between its
    row's player and its column's player, and the letter of each match from the row's side."""
    rows = page.table("crosstable")
    header, body = rows[0], rows[1:]
    players = [row[1]["hrefs"][0].removeprefix("/u/") for row in body]
    columns = [cell["text"] for cell in header[2 : 2 + len(players)]]
    # The columns' names, read out of sight.
    assert columns == [row[1]["text"].removesuffix(" (withdrawn)") for row in body]
    for i, row in enumerate(body):
        for j, cell in enumerate(row[2 : 2 + len(players)]):
            pair = {players[i], players[j]}
            between = [m for m in matches if {m["first"], m["second"]} == pair]
            wanted = [f"/g/{board}" for m in between for board in m["boards"]]
            assert cell["hrefs"] == wanted, (players[i], players[j], cell, between)
            letters = "".join(_letter(m, players[i]) for m in between) or ("·" if i != j else "")
            # Each match's letter, and in brackets each board's when it has several.
            assert "".join(re.sub(r"\([^)]*\)", "", cell["text"]).split()) == letters
            if i == j:
                assert cell["text"] == "" and not between


def _letter(match: dict[str, Any], player: str) -> str:
    if match["status"] != "done":
        return "…" if match["status"] == "playing" else "?"
    points = match["points"] if match["first"] == player else 1 - match["points"]
    return {1.0: "W", 0.5: "D", 0.0: "L"}[points]


def standings_of(page: Page) -> list[list[str]]:
    """The page's standings as the mail's table reads: rank, player, score, tie-break, note."""
    return [[word for cell in row for word in cell.split()] for row in page.texts("standings")]
