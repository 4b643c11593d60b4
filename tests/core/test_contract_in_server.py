"""The server's side of the game contract's extras, with the Secret Pick toy game registered:
game verbs as commands, public move text in others' mail and the history, exported records."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select

import pbmserv.games
from pbmserv.db.models import MoveRow
from pbmserv.outbound.compose import render_notice
from pbmserv.outbound.wording import notice_subject
from tests.core.client import Client
from tests.games.secret_pick import GAME as SECRET_PICK

pytestmark = pytest.mark.db


@pytest.fixture
def toy(players: Client, monkeypatch: pytest.MonkeyPatch) -> Iterator[Client]:
    monkeypatch.setitem(pbmserv.games._registry(), "secretpick", SECRET_PICK)
    assert players.run("secretpick challenge alice bob").ok
    yield players


def mails(client: Client) -> dict[str, str]:
    """Each notification of the last command, rendered, by recipient."""
    return {n.to: notice_subject(n) + "\n" + render_notice(n, "s@x") for n in client.notifications}


def test_the_hidden_move_reaches_only_its_owner(toy: Client) -> None:
    played = toy.run("secretpick move 1 alice secret1 pick green")
    assert played.ok and "pick green" in played.text
    sent = mails(toy)
    assert "alice (Hider) played pick green." in sent["alice@example.org"]
    assert "Hidden colour: green" in sent["alice@example.org"]
    assert "hides a colour" in sent["bob@example.org"]
    assert "green" not in sent["bob@example.org"]
    public = toy.run("secretpick history 1", sender="carol@example.org")
    assert "hides a colour" in public.text and "green" not in public.text
    assert "green" not in str(played.log_fields())  # the log line
    mistaken = toy.run("secretpick move 1 alice secret1 pick green")  # no longer her turn
    assert not mistaken.ok and "green" in mistaken.command  # quoted back to her alone
    assert "green" not in str(mistaken.log_fields())
    with toy.session() as session:
        row = session.scalars(select(MoveRow)).one()
        assert (row.text, row.public_text) == ("pick green", "hides a colour")


def test_a_game_verb_is_a_command_and_the_board_mail_names_it(toy: Client) -> None:
    toy.run("secretpick move 1 alice secret1 pick blue")
    assert "secretpick guess 1 Bob PASSWORD COLOUR" in mails(toy)["bob@example.org"]
    wrong_stage = toy.run("secretpick move 1 bob hunter22 pick red", sender="bob@example.org")
    assert not wrong_stage.ok and "not your turn to pick" in wrong_stage.text
    missing = toy.run("secretpick guess 1 bob", sender="bob@example.org")
    assert not missing.ok and "secretpick guess BOARD USERID PASSWORD COLOUR" in missing.text
    masked = toy.run("secretpick guess 1 bob WRONG red", sender="bob@example.org")
    assert not masked.ok and "WRONG" not in masked.text and "********" in masked.command
    guessed = toy.run("secretpick guess 1 bob hunter22 blue", sender="bob@example.org")
    assert guessed.ok, guessed.text
    assert "Bob (Seeker) won (found)" in guessed.text
    # Once the game is over the history shows every move as it was played.
    history = toy.run("secretpick history 1", sender="carol@example.org")
    assert "pick blue" in history.text and "guess blue" in history.text


def test_unknown_subcommand_lists_the_verbs(toy: Client) -> None:
    section = toy.run("secretpick shout 1 alice secret1")
    assert not section.ok and "|guess ..." in section.text


def test_history_exports_a_record_format(toy: Client) -> None:
    toy.run("secretpick move 1 alice secret1 pick red")
    early = toy.run("secretpick history 1 txt")
    assert not early.ok and "hides moves until it is over" in early.text
    toy.run("secretpick guess 1 bob hunter22 green", sender="bob@example.org")
    record = toy.run("secretpick history 1 txt")
    assert record.ok
    assert "Hider: alice\nSeeker: Bob\npick red\nguess green\nResult: not found" in record.text
    unknown = toy.run("secretpick history 1 pgn")
    assert not unknown.ok and '"pgn" is not a record format of secretpick (formats: txt)' in (
        unknown.text
    )
    plain = toy.run("chameleon challenge alice bob")
    assert plain.ok
    none = toy.run("chameleon history 2 pgn")
    assert not none.ok and "formats: none" in none.text


def test_a_hidden_game_ended_by_resignation_shows_everything(toy: Client) -> None:
    toy.run("secretpick move 1 alice secret1 pick red")
    assert "Hidden colour: ?" in mails(toy)["bob@example.org"]
    assert toy.run("secretpick resign 1 bob hunter22", sender="bob@example.org").ok
    sent = mails(toy)
    assert "Hidden colour: red" in sent["bob@example.org"]
    observer = toy.run("secretpick board 1", sender="carol@example.org")
    assert "Hidden colour: red" in observer.text
