"""GAME show BOARD[#MOVE] and GAME preview: looking at a board without changing it."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from pbmserv.db.models import GameRow, MoveRow
from tests.core.client import Client

pytestmark = pytest.mark.db


def _moves(client: Client) -> int:
    return client.query(select(func.count()).select_from(MoveRow))[0][0]


def test_show_gives_the_position_after_any_move(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    for line in ("chameleon move 1 alice secret1 a1x", "chameleon move 1 bob hunter22 e5o"):
        assert players.run(line).ok
    now = players.run("chameleon show 1")
    assert now.ok and "now (moves played: 2)" in now.text and "Last move: e5o" in now.text
    first = players.run("chameleon show 1#1")
    assert first.ok and "after move 1 (moves played now: 2)" in first.text
    assert "Last move: a1x" in first.text
    start = players.run("chameleon show 1#0")
    assert start.ok and "Last move" not in start.text
    too_far = players.run("chameleon show 1#3")
    assert not too_far.ok and "board 1 has not reached move 3 (moves played: 2)" in too_far.text
    assert not players.run("chameleon show 1#x").ok


def test_show_never_reveals_a_hidden_move(players: Client) -> None:
    assert players.run("hmdg challenge alice bob").ok
    assert players.run("hmdg move 1 alice secret1 E5").ok
    assert players.run("hmdg move 1 bob hunter22 o").ok  # bob plays O and announces first
    assert players.run("hmdg move 1 bob hunter22 C3 row").ok
    shown = players.run("hmdg show 1")
    assert shown.ok and "O plays in row C" in shown.text and "C3" not in shown.text
    # bob's own view names the point: the difference is the secret.
    assert "(C3)" in players.run("hmdg board 1 bob hunter22").text


def test_preview_shows_the_move_and_stores_nothing(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    with players.session() as session:
        before = dict(session.get(GameRow, 1).state)
    seen = players.run("chameleon preview 1 alice secret1 c3x")
    assert seen.ok, seen.text
    assert "Preview of your move c3x" in seen.text and "nothing was played" in seen.text
    assert "chameleon move 1 alice PASSWORD c3x" in seen.text
    with players.session() as session:
        row = session.get(GameRow, 1)
        assert row.state == before and row.ply == 0
    assert _moves(players) == 0 and players.notifications == []
    assert not players.run("chameleon preview 1 bob hunter22 c3x").ok  # not bob's turn
    bad = players.run("chameleon preview 1 alice secret1 zz9")
    assert not bad.ok and "zz9" in bad.text


def test_preview_is_refused_where_chance_would_show_the_next_draw(players: Client) -> None:
    assert players.run("entropy challenge alice bob").ok
    refused = players.run("entropy preview 1 alice secret1 c3")
    assert not refused.ok and "draws by chance" in refused.text


def test_a_move_written_for_move_n_is_played_only_as_move_n(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run("chameleon move 1 alice secret1 a1x#1").ok
    # The same mail again (or one that arrives late) changes nothing.
    again = players.run("chameleon move 1 alice secret1 a1x#1")
    assert not again.ok and "written for move 1 of board 1, but the next is move 2" in again.text
    early = players.run("chameleon move 1 bob hunter22 e5o#3")
    assert not early.ok and "written for move 3" in early.text
    assert _moves(players) == 1
    played = players.run("chameleon move 1 bob hunter22 e5o #2")
    assert played.ok and "you played e5o." in played.text
    assert _moves(players) == 2


def test_a_chess_game_numbers_both_sides_moves_alike_everywhere(players: Client) -> None:
    """The board that says "Black to play, move 2" takes Nc6#2; show, history and the board
    mail count the same way."""
    assert players.run("extinction challenge alice bob").ok
    bob = "bob@example.org"
    assert players.run("extinction move 1 alice secret1 e4#1").ok
    assert players.run("extinction move 1 bob hunter22 e5#1", sender=bob).ok
    white = players.run("extinction move 1 alice secret1 Nf3#2")
    assert white.ok, white.text
    board = players.run("extinction board 1 bob hunter22", sender=bob)
    assert "Black to play, move 2." in board.text
    assert "Moves played: 2 by White, 1 by Black" in board.text
    assert "next is move 2" in board.text
    late = players.run("extinction move 1 bob hunter22 Nc6#3", sender=bob)
    assert not late.ok and "written for move 3 of board 1, but the next is move 2" in late.text
    assert players.run("extinction move 1 bob hunter22 Nc6#2", sender=bob).ok
    history = players.run("extinction history 1")
    assert "2. " in history.text and "2... " in history.text and "3." not in history.text
    after_one = players.run("extinction show 1#1")
    assert "after move 1 (moves played now: 2 by each side)" in after_one.text
    assert "Last move: 1...e5." in after_one.text
    whites_two = players.run("extinction show 1#2.")
    assert "after White's move 2" in whites_two.text and "Last move: 2. Nf3." in whites_two.text
    assert not players.run("extinction show 1#3").ok
