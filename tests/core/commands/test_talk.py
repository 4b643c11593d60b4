"""GAME chat: a message to the other players and the observers, kept in the history."""

from __future__ import annotations

import pytest

from pbmserv.outbound.compose import render_notice
from pbmserv.outbound.wording import notice_headline, notice_subject
from tests.core.client import Client

pytestmark = pytest.mark.db


def test_chat_reaches_the_opponent_and_observers_and_stays_in_the_history(
    players: Client,
) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run("chameleon observe 1 carol pass3333", sender="carol@example.org").ok
    said = players.run("chameleon chat 1 alice secret1 Good luck, Bob!")
    assert said.ok and "sent to 2 readers" in said.text
    mail = {n.to: n for n in players.notifications}
    assert set(mail) == {"bob@example.org", "carol@example.org"}
    bob = mail["bob@example.org"]
    assert notice_headline(bob) == "chameleon board 1: alice says"
    assert notice_subject(bob) == "chameleon board 1"  # the subject of the board's thread
    assert "Good luck, Bob!" in render_notice(bob, "s@x")
    history = players.run("chameleon history 1")
    assert "alice says: Good luck, Bob!" in history.text
    # A chat is no move: the board is as it was, and bob may still decline it.
    assert players.run("chameleon chat 1 bob hunter22 thanks").ok
    assert players.run("chameleon decline 1 bob hunter22").ok


def test_only_a_player_of_the_board_may_chat_on_it(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    refused = players.run("chameleon chat 1 carol pass3333 hello", sender="carol@example.org")
    assert not refused.ok and "carol is not playing on board 1" in refused.text
    assert players.notifications == []
    wrong = players.run("chameleon chat 1 alice nope hello")
    assert not wrong.ok and "user id or password is wrong" in wrong.text


def test_message_goes_to_the_user_ids_named_before_the_text(players: Client) -> None:
    sent = players.run("message alice secret1 bob carol Shall we play chameleon?")
    assert sent.ok and "sent to Bob, carol" in sent.text
    mail = {n.to: n for n in players.notifications}
    assert set(mail) == {"bob@example.org", "carol@example.org"}
    assert notice_subject(mail["carol@example.org"]) == "pbmserv: a message from alice"
    body = render_notice(mail["carol@example.org"], "s@x")
    assert "Shall we play chameleon?" in body and "bob carol" not in body
    assert "secret1" not in body


def test_a_message_needs_a_user_and_a_text(players: Client) -> None:
    nobody = players.run("message alice secret1 zed hello there")
    assert not nobody.ok and '"zed" is not a user id' in nobody.text
    empty = players.run("message alice secret1 bob carol")
    assert not empty.ok and "no text" in empty.text
    assert players.notifications == []


def test_robots_read_no_messages_and_the_answer_says_so(players: Client) -> None:
    alone = players.run("message alice secret1 robot1 good game?")
    assert alone.ok and "Nobody received your message." in alone.text
    assert "robot1 is a robot: robots read no messages" in alone.text
    assert "sent to" not in alone.text
    mixed = players.run("message alice secret1 robot2 bob hello both")
    assert "sent to Bob." in mixed.text and "robot2 is a robot" in mixed.text
    assert {n.to for n in players.notifications} == {"bob@example.org"}


def test_a_chat_on_a_robot_board_counts_no_robot_reader(players: Client) -> None:
    assert players.run("owlman challenge alice robot1").ok
    said = players.run("owlman chat 1 alice secret1 hello")
    assert said.ok and "sent to 0 readers" in said.text
    assert all(not n.to.endswith("@robots.invalid") for n in players.notifications)
