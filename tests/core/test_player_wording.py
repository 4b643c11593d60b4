"""What a club newcomer read wrong (issue 47, item 6): whose move ``status`` means, one count of
vacation days, one orientation of an Extinction board for Black, and no syntax lesson after a
wrong password."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from pbmserv.db.models import GameRow
from pbmserv.games import find_game
from pbmserv.outbound.compose import render_notice
from tests.core.client import Client

pytestmark = pytest.mark.db

ALICE, BOB = "alice secret1", "Bob hunter22"
BOBS, CAROLS = "bob@example.org", "carol@example.org"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def board_line(text: str) -> str:
    [line] = [line for line in text.splitlines() if "board 1 against" in line]
    return line


def test_status_says_whose_move_as_the_asker_reads_it(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok  # alice (White) moves first
    assert "waiting for you" in board_line(players.run("status bob").text)
    assert "your move" in board_line(players.run("status alice").text)
    assert "alice's move" in board_line(players.run("status alice", sender=BOBS).text)
    assert players.run(f"extinction move 1 {ALICE} e4").ok
    asked_by_alice = board_line(players.run("status bob").text)
    assert "Bob's move" in asked_by_alice and "your move" not in asked_by_alice
    assert "your move" in board_line(players.run("status bob", sender=BOBS).text)
    assert "Bob's move" in board_line(players.run("status bob", sender=CAROLS).text)
    assert "waiting for Bob" in board_line(players.run("status alice", sender=CAROLS).text)
    assert "waiting for you" in board_line(players.run("status alice", sender=BOBS).text)


def test_the_vacation_answer_and_status_count_the_same_days(players: Client) -> None:
    gone = players.run(f"vacation {BOB} start", sender=BOBS, at=T0)
    text = " ".join(gone.text.split())
    assert gone.ok and "19 vacation days left this year" in text, text
    assert "counting this one" not in text
    for later in (timedelta(0), timedelta(hours=1), timedelta(hours=23)):
        status = players.run("status bob", sender=BOBS, at=T0 + later).text
        assert "Vacation days left this year: 19" in status
    back = players.run(f"vacation {BOB} stop", sender=BOBS, at=T0 + timedelta(hours=5))
    assert "took 1 day; 19 left" in back.text
    assert "Vacation days left this year: 19" in players.run("status bob", sender=BOBS).text


def test_a_wrong_password_gets_no_syntax_lesson(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    refused = players.run("extinction move 1 alice WRONG e4")
    assert not refused.ok and "password is wrong" in refused.text
    assert "syntax" not in refused.text.lower()
    # A command written wrong still gets the syntax.
    assert "The right syntax is" in players.run("extinction move 1 alice").text


def test_black_reads_the_text_and_the_picture_from_blacks_side(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction move 1 {ALICE} e4").ok
    mails = {n.to: n for n in players.notifications if n.kind == "board"}
    game = find_game("extinction")
    assert game is not None
    [(stored,)] = players.query(select(GameRow.state).where(GameRow.id == 1))
    state = game.load(stored)
    for to, files, seat in (
        ("alice@example.org", "a b c d e f g h", 0),
        (BOBS, "h g f e d c b a", 1),
    ):
        text = render_notice(mails[to], "pbmserv@x")
        diagram = text[text.index(f"    {files}") :]
        first_rank = diagram.splitlines()[1].split()[0]
        assert first_rank == ("8" if seat == 0 else "1"), diagram
        assert mails[to].picture == game.svg(state, seat)
    assert game.svg(state, 0) != game.svg(state, 1)
