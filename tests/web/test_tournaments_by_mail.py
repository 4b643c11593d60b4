"""A round robin of four played by mail, and its page (issue 51): the players sign up, join,
resign and agree draws by real SMTP to a running server, the operator creates, opens and starts
the tournament at the shell (``pbmserv admin tournaments``, a real subprocess); then the web view
over the same database shows the tournament.

Each crosstable cell links to the boards of the database's matches between its two players, each
letter is the match's result from the row's side, each board link opens that board, and the
standings are the standings mail's, in its order with its numbers (after round 1, and final).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from starlette.testclient import TestClient

from pbmserv.config import Settings
from pbmserv.db.engine import session_factory
from pbmserv.db.models import GameRow, Match, Tournament
from pbmserv.web.app import make_app
from tests.e2e.by_mail.test_tournament_by_mail import Club as MailClub
from tests.e2e.by_mail.test_tournament_by_mail import address, password
from tests.e2e.processes import environment
from tests.support import Received, RunningServer, Sink
from tests.web.tournaments_rig import Club as CoreClub
from tests.web.tournaments_rig import check_crosstable, page_of, standings_of

pytestmark = pytest.mark.db

PLAYERS = ("ann", "bob", "cat", "dan")
NAME = "club-rr"


class Mailers(MailClub):
    """The players at their mail programs and the operator at the shell, around one server:
    every reply must be a success."""

    def send(self, userid: str, command: str) -> str:
        body = super().send(userid, command)
        assert "Sorry" not in body, body
        return body

    def running_boards(self) -> list[tuple[int, str, str]]:
        """(board, seat 0's user, seat 1's user) of the tournament's running boards."""
        with session_factory(self.engine)() as session:
            rows = session.scalars(
                select(GameRow)
                .join(Match, Match.id == GameRow.match_id)
                .join(Tournament, Tournament.id == Match.tournament_id)
                .where(Tournament.name == NAME, GameRow.status == "active")
                .order_by(GameRow.id)
            ).all()
            return [(r.id, r.seats[0].user.userid, r.seats[1].user.userid) for r in rows]

    def play_round(self) -> None:
        """bob and cat agree a draw; otherwise the better seed wins (the other resigns)."""
        for board, seat0, seat1 in self.running_boards():
            if {seat0, seat1} == {"bob", "cat"}:
                self.send(seat0, f"extinction propose {board} {seat0} {password(seat0)} draw")
                reply = self.send(
                    seat1, f"extinction accept {board} {seat1} {password(seat1)} draw"
                )
                assert "draw" in reply, reply
                continue
            loser = max(seat0, seat1, key=PLAYERS.index)
            reply = self.send(loser, f"extinction resign {board} {loser} {password(loser)}")
            assert f"You resigned on extinction board {board}" in reply, reply

    def standings_mail(self, subject: str) -> list[list[str]]:
        """The standings table of the mail to dan under ``subject``, a row a list of words."""
        [mail] = [m for m in self.sink.messages if m.to == address("dan") and m.subject == subject]
        body = mail.body.replace("\r\n", "\n")
        start = body.index("tandings")
        table = body[start:].split("\n\n")[0].splitlines()
        assert table[1].split()[:3] == ["rank", "player", "score"], table
        return [line.split() for line in table[2:] if line.strip()]


def mail_received(sink: Sink, userid: str, subject: str) -> list[Received]:
    return [m for m in sink.messages if m.to == address(userid) and m.subject == subject]


def test_a_round_robin_played_by_mail_and_its_page(
    server: RunningServer,
    engine: Engine,
    sink: Sink,
    settings: Settings,
    db_url: str,
    tmp_path: Path,
) -> None:
    # The shell only queues its mail; the running server sends it through the relay.
    mailers = Mailers(server, engine, sink, environment(db_url, tmp_path / "admin-spool"))
    for userid in PLAYERS:
        assert "Welcome" in mailers.send(userid, f"signup {userid} {password(userid)}")
    created = mailers.admin("create", NAME, "--format", "roundrobin", "--game", "extinction")
    assert "created as a draft" in created
    mailers.admin("open", NAME)
    for seed, userid in enumerate(PLAYERS, start=1):
        joined = mailers.send(userid, f"tournament join {NAME} {userid} {password(userid)}")
        assert f"{userid} is entered in tournament {NAME} as seed {seed}" in joined
    assert "round 1" in mailers.admin("start", NAME)
    core = CoreClub(engine)  # reads the database as the tests of the pages do
    number = core.tournament_id(NAME)

    with TestClient(make_app(settings), follow_redirects=False) as web:
        # Round 1 running: its cells lead to the running boards.
        check_crosstable(page_of(web, f"/t/{number}"), core.matches(NAME))
        mailers.play_round()
        page = page_of(web, f"/t/{number}")
        check_crosstable(page, core.matches(NAME))
        after_one = mailers.standings_mail(f"tournament {NAME}: standings after round 1")
        assert standings_of(page) == after_one
        mailers.play_round()
        mailers.play_round()
        assert mailers.running_boards() == []

        matches = core.matches(NAME)
        assert len(matches) == 6 and all(m["status"] == "done" for m in matches)
        page = page_of(web, f"/t/{number}")
        check_crosstable(page, matches)
        final = mailers.standings_mail(f"tournament {NAME}: final standings")
        assert standings_of(page) == final
        # ann 3, bob and cat 1.5 each (their draw), dan 0; Sonneborn-Berger cannot split bob and
        # cat (0.75 each): they share the rank, as in the mail.
        assert [row[:3] for row in final] == [
            ["1", "ann", "3"],
            ["2", "bob", "1.5"],
            ["2", "cat", "1.5"],
            ["4", "dan", "0"],
        ]
        ann = page.texts("crosstable")[0]
        assert ann[:2] == ["1", "ann"] and ann[2:5] == ["", "W", "W"]
        bob = page.texts("crosstable")[1]
        assert bob[2:6] == ["L", "", "D", "W"]
        # Every board link of the crosstable opens that board, over.
        links = sorted({h for row in page.table("crosstable")[1:] for c in row for h in c["hrefs"]})
        boards = sorted(f"/g/{b}" for m in matches for b in m["boards"])
        assert [h for h in links if h.startswith("/g/")] == boards
        for href in boards:
            shown = web.get(href)
            assert shown.status_code == 200 and re.search(r"Extinction", shown.text)
        assert "Winner" in web.get(f"/t/{number}").text
        listing = page_of(web, "/tournaments")
        assert f"/t/{number}" in listing.links
    assert len(mail_received(sink, "ann", f"tournament {NAME}: final standings")) == 1
