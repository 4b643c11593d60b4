"""A poly-ludic Swiss of four, created and started from the operator's shell (real subprocesses)
and then played entirely by mail through the running SMTP server to its final standings, with
the server stopped and a new one started on the same database in the middle of a round.

Everyone plays the same way: the player with the first move chooses the small board if it is
still open to them (else the large one) and wins; the other resigns. One board is won by moves.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbmserv.config import Settings
from tests.e2e.processes import environment, run_pbmserv
from tests.support import Received, RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

PLAYERS = ("ann", "bob", "cat", "dan")
NAME = "poly"


def text(message: Received) -> str:
    """A mail's body with plain newlines (mail travels with CRLF)."""
    return message.body.replace("\r\n", "\n")


def address(userid: str) -> str:
    return f"{userid}@example.org"


def password(userid: str) -> str:
    return f"pw-{userid}"


class Club:
    """The players at their mail programs, and the operator at the shell, around one server."""

    def __init__(self, server: RunningServer, engine: Engine, sink: Sink, env: dict) -> None:
        self.server, self.engine, self.sink, self.env = server, engine, sink, env

    def send(self, userid: str, command: str) -> str:
        """Mail one command (as the Subject) and return the body of the server's reply."""
        message = make_mail(address(userid), command)
        assert smtp_send(self.server.port, message)[0] == 250
        settle(self.engine)
        [reply] = [
            m for m in self.sink.messages if m.message["In-Reply-To"] == message["Message-ID"]
        ]
        return text(reply)

    def admin(self, *args: str) -> str:
        result = run_pbmserv(["admin", "tournaments", *args], self.env)
        assert result.returncode == 0, result.stderr.decode()
        settle(self.engine)
        return result.stdout.decode()

    def mail_to(self, userid: str, subject: str) -> list[Received]:
        """The mail to ``userid`` under ``subject``, or (a board's thread keeps one Subject)
        whose first line it is."""
        return [
            m
            for m in self.sink.messages
            if m.to == address(userid) and subject in (m.subject, (m.body.splitlines() or [""])[0])
        ]

    def restart(self, settings: Settings) -> None:
        """Stop the server (nothing of the tournament is in its memory) and start another."""
        old = self.server
        old.stop()
        assert old.thread is not None and not old.thread.is_alive()
        self.server = RunningServer(settings).start()
        assert self.server.port != old.port


def choose_game(club: Club, chooser: str) -> tuple[str, int]:
    """The chooser takes the small board if its PG allows, else the large one."""
    reply = club.send(chooser, f"tournament choose {NAME} {chooser} {password(chooser)} small")
    game = "small"
    if "you cannot choose small" in reply:
        assert "its PG is -1; you may choose large" in reply
        reply = club.send(chooser, f"tournament choose {NAME} {chooser} {password(chooser)} large")
        game = "large"
    board = re.search(r"Board (\d+) has been created", reply)
    assert board is not None, reply
    return game, int(board.group(1))


def pairings(club: Club, round_number: int) -> list[tuple[str, str]]:
    """(first, second) of each match, as every player's pairings mail lists them."""
    subject = f"tournament {NAME} round {round_number}: pairings"
    pattern = re.compile(r"^  (\w+) v (\w+): \1 chooses the game$", re.M)
    bodies = {p: [text(m) for m in club.mail_to(p, subject)] for p in PLAYERS}
    assert all(len(b) == 1 for b in bodies.values()), "one pairings mail per player"
    lines = pattern.findall(bodies["ann"][0])
    assert len(lines) == 2
    assert all(pattern.findall(b[0]) == lines for b in bodies.values())
    for first, second in lines:
        assert f"tournament choose {NAME} {first} PASSWORD GAME" in bodies[first][0]
        assert f"You play {first}, who has the first move" in bodies[second][0]
    return lines


def win_by_moves(club: Club, board: int, vert: str, horz: str) -> None:
    """Vert joins top and bottom down column a of the 3x3 board."""
    for mover, move in ((vert, "a1x"), (horz, "c1o"), (vert, "a2x"), (horz, "c2o"), (vert, "a3x")):
        reply = club.send(mover, f"chameleon move {board} {mover} {password(mover)} {move}")
        assert f"On chameleon board {board} you played {move}." in reply
    assert "The game is over: " + vert in reply


def test_a_polyludic_swiss_of_four_played_by_mail(
    server: RunningServer,
    engine: Engine,
    sink: Sink,
    settings: Settings,
    db_url: str,
    tmp_path: Path,
) -> None:
    # The shell only queues its mail; the running server sends it through the relay.
    env = environment(db_url, tmp_path / "admin-spool")
    club = Club(server, engine, sink, env)
    try:
        play_the_tournament(club, settings)
    finally:
        club.server.stop()


def play_the_tournament(club: Club, settings: Settings) -> None:
    for userid in PLAYERS:
        assert "Welcome" in club.send(userid, f"signup {userid} {password(userid)}")
    created = club.admin(
        "create", NAME, "--format", "swiss", "--rounds", "3",
        "--game", "small=chameleon:size=3", "--game", "large=chameleon:size=4",
        "--pg", "5", "--ps", "3", "--pc", "1", "--lp", "1/2",
    )  # fmt: skip
    assert "created as a draft; games: small, large" in created
    early = club.send("ann", f"tournament join {NAME} ann {password('ann')}")
    assert "not open for entries yet" in early
    club.admin("open", NAME)
    for seed, userid in enumerate(PLAYERS, start=1):
        joined = club.send(userid, f"tournament join {NAME} {userid} {password(userid)}")
        assert f"{userid} is entered in tournament {NAME} as seed {seed}" in joined
    listing = club.send("cat", "tournament list")
    assert f"1. {NAME}: Swiss, open, 4 entrants; games: small, large" in listing
    assert "round 1" in club.admin("start", NAME)

    chosen: list[str] = []
    for round_number in (1, 2, 3):
        matches = pairings(club, round_number)
        for index, (first, second) in enumerate(matches):
            game, board = choose_game(club, first)
            chosen.append(game)
            [board_mail] = club.mail_to(first, f"chameleon board {board}: your move")
            assert f"Tournament {NAME}, round {round_number}: {game}" in text(board_mail)
            if round_number == 1 and index == 0:
                win_by_moves(club, board, first, second)
            else:
                reply = club.send(second, f"chameleon resign {board} {second} {password(second)}")
                assert f"You resigned on chameleon board {board}" in reply
            if round_number == 2 and index == 0:
                # Half the round played: a new server on the same database takes over.
                club.restart(settings)
        if round_number < 3:
            standings = club.mail_to(
                "dan", f"tournament {NAME}: standings after round {round_number}"
            )
            assert len(standings) == 1 and "Buchholz" in text(standings[0])

    # PG 5, PS 3: small is chosen twice by each player (5, 2, -1), and then, with PP 1/2 not
    # above LP 1/2, it stays closed: round 3 falls back to the large board.
    assert chosen == ["small", "small", "small", "small", "large", "large"]
    table = club.send("cat", f"tournament table {NAME} cat {password('cat')}")
    assert re.search(r"^    small\s+-1  closed$", table, re.M)
    assert re.search(r"^    large\s+2  open$", table, re.M)

    finals = [club.mail_to(p, f"tournament {NAME}: final standings") for p in PLAYERS]
    assert all(len(f) == 1 for f in finals)
    # Each player's last board mail arrives before the final standings (queued in that order,
    # and sent through the one relay connection in id order).
    arrived = club.sink.messages
    for player in PLAYERS:
        mine = [i for i, m in enumerate(arrived) if m.to == address(player)]
        last_board = max(
            i for i in mine if re.fullmatch(r"chameleon board \d+", arrived[i].subject)
        )
        standings = next(i for i in mine if "final standings" in arrived[i].subject)
        assert last_board < standings, [arrived[i].subject for i in mine[-4:]]
    body = text(finals[0][0])
    table_start = body.index("Final standings:")
    rows = [line.split() for line in body[table_start:].splitlines()[1:6]]
    # ann and bob 2 points, cat and dan 1; Buchholz cannot split either pair.
    assert rows == [
        ["rank", "player", "score", "Buchholz"],
        ["1", "ann", "2", "4"],
        ["1", "bob", "2", "4"],
        ["3", "cat", "1", "5"],
        ["3", "dan", "1", "5"],
    ]
    assert "The tournament is over. Winners: ann, bob." in body
    shown = club.send("bob", f"tournament show {NAME}")
    assert "State: finished" in shown and "Winners: ann, bob" in shown
