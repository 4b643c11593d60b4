"""Rough edges a new player hits (issue 21), each fixed and kept fixed."""

from __future__ import annotations

import pytest

from pbmserv.config import Settings
from pbmserv.core.results import Notification, Section
from pbmserv.outbound.compose import render_notice, render_reply_body
from tests.core.client import Client

pytestmark = pytest.mark.db


def test_status_without_a_user_id_means_the_senders_own(players: Client) -> None:
    assert players.run("chameleon challenge -size=3 alice bob").ok
    mine = players.run("status", sender="bob@example.org")
    assert mine.ok and "Active boards of Bob" in mine.text and "board 1 against alice" in mine.text
    assert players.run("add bob hunter22 bob@work.example", sender="bob@example.org").ok
    assert "Active boards of Bob" in players.run("status", sender="Bob@work.example").text
    stranger = players.run("status", sender="nobody@example.net")
    assert not stranger.ok and 'Send "status USERID"' in stranger.text


def test_a_wrong_password_says_nothing_was_changed_once(players: Client) -> None:
    assert players.run("chameleon challenge -size=3 alice bob").ok
    refused = players.run("chameleon resign 1 alice WRONG")
    assert not refused.ok and refused.text.count("Nothing was changed.") == 1


def test_the_syntax_hint_offers_swap_only_where_there_is_one(players: Client) -> None:
    owlman = players.run("owlman").text
    chameleon = players.run("chameleon").text
    assert "swap" not in owlman and "owlman challenge|move|board" in owlman
    assert "chameleon challenge|move|swap|board" in chameleon
    assert "swap" not in players.run("owlman frobnicate").text


def test_the_signature_separator_is_dash_dash_space() -> None:
    body = render_reply_body(
        [Section("no_command", {"lines": 0, "from_subject": False})],
        Settings(confirm_addresses=False),
    )
    assert "\n-- \n" in body
    note = Notification("a@x", "notice", "password_reset", {"userid": "a", "password": "p"})
    assert "\n-- \n" in render_notice(note, "s@x")


def test_a_move_reads_as_played_whatever_its_kind(players: Client) -> None:
    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert (
        "On chameleon board 1 you played a1x."
        in players.run("chameleon move 1 alice secret1 a1x").text
    )
    swapped = players.run("chameleon swap 1 bob hunter22", sender="bob@example.org")
    assert "you played swap." in swapped.text and "Your move swap" not in swapped.text
    assert players.run("owlman challenge alice bob").ok
    wrong = players.run("chameleon board 2")
    assert "board 2 is an owlman game, not chameleon" in wrong.text


def test_games_lists_the_games_named(players: Client) -> None:
    one = players.run("games extinction")
    assert one.ok and "extinction" in one.text and "chameleon" not in one.text
    assert one.command == "games extinction"
    every = players.run("games").text
    assert all(name in every for name in ("chameleon", "owlman", "hmdg"))
    wrong = players.run("games secretword")
    assert not wrong.ok and "secretword" not in wrong.text and "games:" in wrong.text


def test_the_help_index_lines_up_its_columns(players: Client) -> None:
    lines = [line for line in players.run("help").text.splitlines() if "(help " in line]
    columns = {line.index("(help ") for line in lines}
    assert len(lines) >= 6 and len(columns) == 1


@pytest.mark.parametrize(
    ("line", "sender", "problem"),
    [
        ("chameleon move 1 bob hunter22 a1x", "bob@example.org", "it is not your turn"),
        ("chameleon move 7 alice secret1 a1x", "alice@example.org", "there is no board 7"),
        ("chameleon move 2 alice secret1 a1x", "alice@example.org", "board 2 is over"),
    ],
)
def test_no_syntax_lesson_where_the_syntax_was_right(
    players: Client, line: str, sender: str, problem: str
) -> None:
    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert players.run("chameleon resign 2 alice secret1").ok
    refused = players.run(line, sender=sender)
    assert not refused.ok and problem in refused.text
    assert "The right syntax is:" not in refused.text
    # A command with its words wrong still gets the syntax.
    assert "The right syntax is:" in players.run("chameleon move 1 alice").text


def test_help_topics_lists_every_word_and_page_and_each_has_help(players: Client) -> None:
    topics = players.run("help topics")
    assert topics.ok and "help replying" in topics.text and "help settings" in topics.text
    words = [
        w.strip()
        for line in topics.text.split("Commands (help WORD for one):")[1]
        .split("\n\n")[0]
        .splitlines()
        for w in line.split(",")
        if w.strip()
    ]
    assert {"move", "draw", "chat", "status", "set"} <= set(words)
    for word in [*words, "reveal"]:
        assert players.run(f"help {word}").ok, word


def test_extinctions_history_numbers_moves_as_chess_players_do(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    for seat, move in [("alice", "e4"), ("bob", "f5"), ("alice", "Qh5")]:
        password = "secret1" if seat == "alice" else "hunter22"
        assert players.run(f"extinction move 1 {seat} {password} {move}", f"{seat}@example.org").ok
    history = players.run("extinction history 1").text
    assert "   1. e4  (alice)" in history and " 1... f5  (Bob)" in history
    assert "   2. Qh5  (alice)" in history
    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert players.run("chameleon move 2 alice secret1 a1x").ok
    assert "   1. a1x  (alice)" in players.run("chameleon history 2").text
