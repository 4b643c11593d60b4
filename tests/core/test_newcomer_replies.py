"""Issue 31, a newcomer's trial of replying: a greeting above the move, mutt's attribution,
chat and message notices' own reply addresses, and new reply addresses mailed at once when a
password changes (over real SMTP in tests/e2e/by_mail/test_newcomer_replies.py)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pbmserv.core.accounts.logins import REPLY_PASSWORD
from pbmserv.core.dispatch import is_command
from pbmserv.core.play.board_mail import (
    CHAT,
    MESSAGE,
    SEAT,
    chat_tag,
    mask_tokens,
    new_token,
    parse_tag,
)
from pbmserv.core.replies import is_greeting, reply_commands
from pbmserv.db.models import BoardMail
from pbmserv.games import find_game
from pbmserv.inbound.reading.reply_text import own_lines

BUFFALO = find_game("buffalo")
assert BUFFALO is not None


def commands(lines: list[str]) -> list[tuple[str, bool]]:
    found = reply_commands(lines, BUFFALO, 4, "bob", is_command)
    return [(line.text.replace(REPLY_PASSWORD, "PW"), line.guessed) for line in found]


@pytest.mark.parametrize("greeting", ["Hi Erin,", "Hello!", "Dear Erin", "Erin,", "Good morning!"])
def test_a_greeting_above_the_move_is_left_out(greeting: str) -> None:
    assert is_greeting(greeting)
    assert commands([greeting, "e4-e5", "Cheers,", "Bob"]) == [
        ("buffalo move 4 bob PW e4-e5", True)
    ]


@pytest.mark.parametrize("move", ["e4-e5", "a1", "Nf3", "resign", "Thanks, you too!", "c3x"])
def test_a_move_or_a_sentence_is_no_greeting(move: str) -> None:
    assert not is_greeting(move)


def test_a_first_line_that_is_no_command_word_is_a_guessed_move() -> None:
    assert commands(["Hi Erin,", "Thanks for the game"]) == [
        ("buffalo move 4 bob PW Thanks for the game", True)
    ]
    assert commands(["move e4-e5"]) == [("buffalo move 4 bob PW e4-e5", False)]
    assert commands(["resign"]) == [("buffalo resign 4 bob PW", False)]
    # Nothing but a greeting: it is what there is to read, and the answer says how it was read.
    assert commands(["Hi Erin,"]) == [("buffalo move 4 bob PW Hi Erin,", True)]


def test_mutts_starred_attribution_is_not_the_move() -> None:
    body = (
        "* pbmserv <pbmserv@localhost> [261126 16:44]:\n"
        "> buffalo board 4: your move\n>\n> It is your move.\n\ne4-e5\n"
    )
    assert own_lines(body) == ["e4-e5"]
    # Still a line of the sender's own when no quote follows it.
    assert own_lines("e4-e5\nmy address is bob@example.org:\nBob\n") == [
        "e4-e5",
        "my address is bob@example.org:",
        "Bob",
    ]


def test_chat_and_message_tags_read_back_and_are_masked() -> None:
    token = new_token()
    chat = chat_tag(17, 1, token)
    assert token not in chat  # the seat's token is not in the chat's address
    parsed = parse_tag(chat)
    assert parsed is not None and (parsed.kind, parsed.board, parsed.seat) == (CHAT, 17, 1)
    assert parse_tag(chat.upper()) == parsed
    message = parse_tag(f"m5-u3-{token}")
    assert message is not None and message.kind == MESSAGE
    assert (message.reader, message.author, message.board) == (5, 3, None)
    seat = parse_tag(f"b17-s1-{token}")
    assert seat is not None and seat.kind == SEAT
    for tag in (chat, f"m5-u3-{token}", f"M5-U3-{token.upper()}"):
        masked = mask_tokens(f"To: pbmserv+{tag}@games.example")
        assert tag.rpartition("-")[2].lower() not in masked.lower()
    assert chat_tag(17, 1, new_token()) != chat  # a new seat token, a new chat address


@pytest.mark.db
def test_a_password_change_mails_each_active_board_with_its_new_reply_address(players) -> None:  # type: ignore[no-untyped-def]
    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert players.run("chameleon challenge -size=3 bob alice", sender="bob@example.org").ok
    assert players.run("chameleon challenge -size=3 alice carol").ok
    assert players.run("chameleon resign 3 alice secret1").ok  # over: nothing to reply to
    before = dict(players.query(select(BoardMail.game_id, BoardMail.token)))
    changed = players.run("password alice secret1 NewAlice-22")
    assert changed.ok and changed.data["boards"] == [
        {"game": "chameleon", "board": 1},
        {"game": "chameleon", "board": 2},
    ]
    assert "chameleon board 1" in changed.text and "chameleon board 2" in changed.text
    mailed = players.notifications
    assert [(n.to, n.kind, n.data["view"]["board"]) for n in mailed] == [
        ("alice@example.org", "board", 1),
        ("alice@example.org", "board", 2),
    ]
    for note in mailed:
        assert note.thread is not None and note.thread.reply_tag is not None
        tag = parse_tag(note.thread.reply_tag)
        assert tag is not None and tag.token != before[tag.board]  # the new one
        assert "reply address has changed" in note.data["event"]


@pytest.mark.db
def test_help_replying_no_longer_sends_the_player_to_a_stale_mail(players) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(players.run("help replying").text.split())
    assert "reply to your latest board mail then" not in text
    assert "mailed to you again at once with its new reply address" in text
    assert "a chat line back" in text and "Hi Erin," in text
