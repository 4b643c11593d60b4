"""Issue 31, a newcomer's trial of playing by reply, over real SMTP with the real listener,
relay and database: new reply addresses at once after a password change, a reply to a chat or
a message is a chat or a message back, a greeting above the move, mutt's attribution, and one
Subject for a board's thread."""

from __future__ import annotations

import logging

import pytest
from sqlalchemy import select

from pbmserv.db.models import InboxMessage, MoveRow
from tests.e2e.by_mail.test_reply_by_mail import (
    ALICE,
    BOB,
    CAROL,
    TOKEN,
    answer,
    moves,
    newest,
    send,
    start,
)
from tests.support import Received, Sink

pytestmark = pytest.mark.db


def reply_to(mail: Received) -> str:
    return str(mail.message["Reply-To"].addresses[0].addr_spec)


def chats(engine) -> list[str]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        query = select(MoveRow.text).where(MoveRow.kind == "chat").order_by(MoveRow.id)
        return list(conn.scalars(query))


def test_after_a_password_change_the_player_can_reply_at_once(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    first = start(server, engine, sink)
    _, out = answer(server, engine, sink, first[ALICE], "e4")
    bob_old = newest(out, BOB)
    _, out = send(server, engine, sink, BOB, "password bob hunter22 NewBob-22")
    [told] = [m for m in out if not m.message["Reply-To"]]
    assert "extinction board 1" in told.body and not TOKEN.search(told.message.as_bytes())
    [fresh] = [m for m in out if m.message["Reply-To"]]
    assert fresh.to == BOB and reply_to(fresh) != reply_to(bob_old)
    assert "It is your move" in fresh.body  # his view, with the reply line
    # The old address is refused with advice that is true now.
    _, out = answer(server, engine, sink, bob_old, "e5")
    text = " ".join(out[0].body.split())
    assert moves(engine) == ["e4"] and "latest board mail" not in text
    assert "board BOARD USERID PASSWORD" in text
    # "board" with the new password answers with the seat's reply address, which plays.
    _, out = send(server, engine, sink, BOB, "extinction board 1 bob NewBob-22")
    [shown] = out
    assert reply_to(shown) == reply_to(fresh)
    assert "simply reply to this mail" in " ".join(shown.body.split())
    answer(server, engine, sink, shown, "e5")
    assert moves(engine) == ["e4", "e5"]
    # Shown to someone else's address, a board carries no seat's address.
    _, out = send(server, engine, sink, CAROL, "extinction board 1")
    assert not out[0].message["Reply-To"]
    _, out = send(server, engine, sink, "mallory@evil.example", "extinction board 1 bob NewBob-22")
    assert not out[0].message["Reply-To"] and not TOKEN.search(out[0].message.as_bytes())
    # The same from the player's own address with a public "show": his seat's address.
    _, out = send(server, engine, sink, ALICE, "extinction show 1")
    assert out[0].message["Reply-To"] and out[0].to == ALICE
    assert reply_to(out[0]).startswith("pbmserv+b1-s0-")


def test_a_reply_to_a_chat_line_is_a_chat_line_back(server, engine, sink: Sink, caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG, logger="pbmserv")
    first = start(server, engine, sink)
    _, out = answer(server, engine, sink, first[ALICE], "e4\nchat good luck!")
    [chat] = [m for m in out if m.to == BOB and "alice says" in m.body]
    assert chat.subject == "extinction board 1"  # in bob's thread of the board
    assert reply_to(chat).startswith("pbmserv+c1-s1-") and reply_to(chat) != reply_to(first[BOB])
    assert "reply to this mail" in " ".join(chat.body.split())
    [carol_chat] = [m for m in out if m.to == CAROL and "alice says" in m.body]
    assert not carol_chat.message["Reply-To"]  # an observer has no seat to speak for

    _, out = answer(server, engine, sink, chat, "Thanks, you too!\n\nBob")
    assert moves(engine) == ["e4"], "a chat reply was read as a move"
    assert chats(engine) == ["good luck!", "Thanks, you too! Bob"]
    [answer_mail] = [m for m in out if m.to == BOB]
    assert "not your turn" not in answer_mail.body and "Nothing was changed" not in answer_mail.body
    assert {m.to for m in out if "bob says" in m.body} == {ALICE, CAROL}
    # A reply to it that starts with a command word is that command.
    answer(server, engine, sink, chat, "move e5")
    assert moves(engine) == ["e4", "e5"]
    # From another address it is refused, and no token goes back.
    _, out = answer(server, engine, sink, chat, "hello", sender="mallory@evil.example")
    assert "taken only from that player's own address" in out[0].body
    assert chats(engine) == ["good luck!", "Thanks, you too! Bob"]
    assert not TOKEN.search(out[0].message.as_bytes())
    # The chat address's secret is masked where the message is kept and in the log.
    secret = reply_to(chat).split("@")[0].rpartition("-")[2]
    with engine.connect() as conn:
        kept = b"".join(conn.scalars(select(InboxMessage.raw)))
        kept_to = [t for t in conn.scalars(select(InboxMessage.envelope_to)) if t]
    assert secret.encode() not in kept and not any(secret in t for t in kept_to)
    assert "pbmserv+c1-s1-********@localhost" in kept_to
    logged = "\n".join(r.getMessage() + repr(getattr(r, "fields", "")) for r in caplog.records)
    assert secret not in logged


def test_a_reply_to_a_message_is_a_message_back(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    start(server, engine, sink)
    _, out = send(server, engine, sink, ALICE, "message alice secret1 bob are you around?")
    [note] = [m for m in out if m.to == BOB]
    assert reply_to(note).startswith("pbmserv+m")
    _, out = answer(server, engine, sink, note, "Yes, I am.")
    [back] = [m for m in out if m.to == ALICE]
    assert "bob sends you this message" in back.body and "Yes, I am." in back.body
    assert reply_to(back) != reply_to(note)  # alice's own address to answer bob
    assert moves(engine) == []
    _, out = answer(server, engine, sink, note, "Yes", sender=CAROL)
    assert [m.to for m in out] == [CAROL] and "Nothing was changed" in out[0].body
    # Once bob's password changes, the old message address takes nothing.
    send(server, engine, sink, BOB, "password bob hunter22 NewBob-22")
    _, out = answer(server, engine, sink, note, "Still here")
    assert [m.to for m in out] == [BOB] and "not a reply address" in out[0].body


def test_a_greeting_above_the_move_and_mutts_attribution(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    first = start(server, engine, sink)
    _, out = answer(server, engine, sink, first[ALICE], "Hi Bob,\n\ne4\n\nCheers,\nAlice")
    assert moves(engine) == ["e4"]
    bob_mail = newest(out, BOB)
    # mutt's starred attribution, the quote, then the move below it.
    quoted = "".join(f"> {line}\n" for line in bob_mail.body.splitlines())
    body = f"* pbmserv <pbmserv@localhost> [261126 16:44]:\n{quoted}\ne5\n"
    _, out = send(server, engine, sink, BOB, f"Re: {bob_mail.subject}", body, to=reply_to(bob_mail))
    assert moves(engine) == ["e4", "e5"], out[0].body
    alice_mail = newest(out, ALICE)
    # A first line that is no move: the answer says how a reply is read, not the syntax.
    _, out = answer(server, engine, sink, alice_mail, "Hi Bob,\n\nThanks for the game so far")
    text = " ".join(out[0].body.split())
    assert moves(engine) == ["e4", "e5"]
    assert "The right syntax is" not in text and "PASSWORD" not in text
    assert "The first line of your reply (after a greeting) is read as your move" in text


def test_a_boards_mail_keeps_one_subject_per_reader(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    first = start(server, engine, sink)
    _, out = answer(server, engine, sink, first[ALICE], "e4")
    answer(server, engine, sink, newest(out, BOB), "e5\nchat your move")
    mail = [m for m in sink.messages if m.message["Auto-Submitted"] == "auto-generated"]
    to_alice = [m for m in mail if m.to == ALICE]
    assert len(to_alice) >= 3  # the first board, after e4, after e5 and the chat
    assert {m.subject for m in to_alice} == {"extinction board 1"}
    firsts = [m.body.splitlines()[0] for m in to_alice]
    assert firsts[:3] == [
        "extinction board 1: your move",
        "extinction board 1: waiting for bob",
        "extinction board 1: your move",
    ]
    # Still one thread by References too.
    assert all(m.message["In-Reply-To"] for m in to_alice[1:])
