"""change password|address (pbmserv's forms) and delete: closing an account."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pbmserv.config import Settings
from pbmserv.core.dispatch import login_pairs, quote
from pbmserv.db.models import User
from tests.core.client import Client

pytestmark = pytest.mark.db


def test_change_password_and_address_are_the_password_and_email_commands(
    players: Client,
) -> None:
    changed = players.run("change password alice secret1 newpass9")
    assert changed.ok and changed.command == "change password alice ******** ********"
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert not players.run("chameleon chat 1 alice secret1 hi").ok
    assert players.run("chameleon chat 1 alice newpass9 hi").ok
    moved = players.run("change address alice newpass9 alice@new.example.org")
    assert moved.ok and "alice@new.example.org" in moved.text
    (email,) = players.query(select(User.email).where(User.userid == "alice"))[0]
    assert email == "alice@new.example.org"
    wrong = players.run("change colour alice newpass9 blue")
    assert not wrong.ok and "change password or address" in wrong.text


def test_change_address_quotes_the_address_and_masks_only_the_password(players: Client) -> None:
    line = "change address bob hunter22 bob@new.example"
    assert quote(line) == "change address bob ******** bob@new.example"
    assert login_pairs(line) == [("bob", "hunter22")]
    moved = players.run(line, sender="bob@example.org")
    assert moved.ok and moved.command == "change address bob ******** bob@new.example"
    assert quote("change password bob a b") == "change password bob ******** ********"


def test_email_to_the_address_it_has_changes_nothing(players: Client) -> None:
    same = players.run("email bob hunter22 Bob@Example.org", sender="bob@example.org")
    assert not same.ok and "goes to bob@example.org already" in same.text
    assert "now goes to" not in same.text and not players.notifications


def test_email_back_to_the_address_it_has_calls_off_a_waiting_move(players: Client) -> None:
    players.settings = Settings(confirm_addresses=True)
    waiting = players.run("change address bob hunter22 bob@new.example", sender="bob@example.org")
    assert waiting.ok and "once its owner replies" in waiting.text
    kept = players.run("email bob hunter22 bob@example.org", sender="bob@example.org")
    assert kept.ok and "goes to bob@example.org already" in kept.text
    assert "the move to bob@new.example" in kept.text and "now goes to" not in kept.text
    ((email, pending),) = players.query(
        select(User.email, User.pending_email).where(User.userid == "bob")
    )
    assert (email, pending) == ("bob@example.org", None)


def test_delete_closes_an_account_with_no_board_in_play(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    busy = players.run("delete alice secret1")
    assert not busy.ok and "still plays on board(s) 1" in busy.text
    assert players.run("chameleon resign 1 alice secret1").ok
    closed = players.run("delete alice secret1")
    assert closed.ok and "The account alice is closed" in closed.text
    assert "secret1" not in closed.text
    ((email, disabled, name),) = players.query(
        select(User.email, User.disabled, User.full_name).where(User.userid == "alice")
    )
    assert (email, disabled, name) == ("", True, "")
    # Nobody can sign in as it, challenge it, or take its user id.
    assert not players.run("delete alice secret1").ok
    assert not players.run("chameleon challenge -size=5 bob alice", sender="bob@example.org").ok
    assert not players.run("signup alice other123", sender="x@example.org").ok
    # Its finished board still reads.
    assert "alice" in players.run("chameleon history 1").text


def test_add_registers_more_addresses_of_ones_own(players: Client) -> None:
    added = players.run("add alice secret1 Alice@Home.example.org")
    assert added.ok and "alice@home.example.org" in added.text
    assert "alice@example.org (where the mail goes)" in added.text
    taken = players.run("add bob hunter22 alice@home.example.org", sender="bob@example.org")
    assert not taken.ok and "belongs to another user" in taken.text
    primary = players.run("add bob hunter22 carol@example.org", sender="bob@example.org")
    assert not primary.ok and "belongs to another user" in primary.text
    assert not players.run("add alice secret1 not-an-address").ok


@pytest.mark.parametrize("word", ["delete", "ratings", "signoff", "list", "message"])
def test_command_words_cannot_be_user_ids(players: Client, word: str) -> None:
    refused = players.run(f"signup {word} secret99", sender="new@example.org")
    assert not refused.ok and "is a command or game name" in refused.text
