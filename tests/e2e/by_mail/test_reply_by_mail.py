"""Replying is playing: a reply to a board mail's Reply-To address, with just the move, over
real SMTP, with the real listener, relay and database."""

from __future__ import annotations

import logging
import re
from dataclasses import replace

import pytest
from sqlalchemy import select

from pbmserv.db.models import GameRow, InboxMessage, MoveRow
from tests.support import Received, RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
TOKEN = re.compile(rb"pbmserv\+b\d+-s\d-([a-z2-7]{16})@localhost")


def send(server, engine, sink: Sink, sender: str, subject: str, body: str = "", **kw):  # type: ignore[no-untyped-def]
    before = len(sink.messages)
    to = kw.pop("to", "pbmserv@localhost")
    message = make_mail(sender, subject, body, to=to, **kw)
    assert smtp_send(server.port, message, to=to)[0] == 250
    settle(engine)
    return message, sink.messages[before:]


def start(server, engine, sink: Sink) -> dict[str, Received]:  # type: ignore[no-untyped-def]
    """alice and bob sign up, carol observes; alice challenges bob to Extinction (White
    moves first): the first board mail of each player, by address."""
    send(server, engine, sink, ALICE, "signup alice secret1")
    send(server, engine, sink, BOB, "signup bob hunter22")
    send(server, engine, sink, CAROL, "signup carol pass3333")
    _, out = send(server, engine, sink, ALICE, "extinction challenge alice bob")
    send(server, engine, sink, CAROL, "extinction observe 1 carol pass3333")
    return {m.to: m for m in out if m.message["Reply-To"]}


def answer(server, engine, sink: Sink, board_mail: Received, body: str, sender: str = ""):  # type: ignore[no-untyped-def]
    """Reply to ``board_mail`` as a mail program does: To its Reply-To, Re: its subject,
    threaded under it, the original quoted below."""
    quoted = "".join(f"> {line}\n" for line in board_mail.body.splitlines())
    text = f"{body}\n\nOn Tue, 24 Nov 2026, pbmserv wrote:\n{quoted}"
    headers = {"In-Reply-To": board_mail.message["Message-ID"]}
    return send(
        server,
        engine,
        sink,
        sender or board_mail.to,
        f"Re: {board_mail.subject}",
        text,
        to=board_mail.message["Reply-To"].addresses[0].addr_spec,
        headers=headers,
    )


def moves(engine) -> list[str]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        query = select(MoveRow.text).where(MoveRow.kind == "move").order_by(MoveRow.id)
        return list(conn.scalars(query))


def newest(out: list[Received], to: str) -> Received:
    """The board mail to ``to`` among ``out`` (chat and proposal notices left aside)."""
    [mail] = [m for m in out if m.to == to and "Moves played" in m.body]
    return mail


def test_a_game_played_by_replying_with_just_the_moves(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    first = start(server, engine, sink)
    alice_mail, bob_mail = first[ALICE], first[BOB]
    reply_to = alice_mail.message["Reply-To"].addresses[0].addr_spec
    assert re.fullmatch(r"pbmserv\+b1-s0-[a-z2-7]{16}@localhost", reply_to)
    assert "reply to this mail with your move alone" in alice_mail.body.replace("\n", " ")

    # The move, then a sign-off: the sign-off is left out silently.
    _, out = answer(server, engine, sink, alice_mail, "e4\n\nCheers,\nAlice\nSent from my phone")
    reply = next(m for m in out if m.to == ALICE and not m.message["Reply-To"])
    assert "> extinction move 1 alice ******** e4" in reply.body
    assert "error" not in reply.body.lower() and "Cheers" not in reply.body
    assert reply.subject == f"Re: {alice_mail.subject}"  # one Re:, however long the exchange
    bob_next = newest(out, BOB)
    # Each player's board mails form one thread: each answers the one before.
    assert bob_next.message["In-Reply-To"] == bob_mail.message["Message-ID"]
    assert bob_mail.message["Message-ID"] in bob_next.message["References"]
    carol_next = next(m for m in out if m.to == CAROL)
    assert not carol_next.message["Reply-To"]  # an observer has no seat to reply for

    # Bob bottom-posts (the quote first, then the move) from an address he added.
    send(server, engine, sink, BOB, "add bob hunter22 bob@work.example")
    quoted = "".join(f"> {line}\n" for line in bob_next.body.splitlines())
    _, out = send(
        server,
        engine,
        sink,
        "Bob <bob@work.example>",
        f"Re: Re: {bob_next.subject}",
        f"pbmserv wrote:\n{quoted}\nd5\n",
        to=bob_next.message["Reply-To"].addresses[0].addr_spec,
    )
    assert moves(engine) == ["e4", "d5"]
    alice_next = newest(out, ALICE)
    carol_after = next(m for m in out if m.to == CAROL)
    assert carol_after.message["In-Reply-To"] == carol_next.message["Message-ID"]

    # Commands without their board words: a chat line and a draw proposal.
    _, out = answer(server, engine, sink, alice_next, "exd5\nchat your move, Bob\npropose draw")
    assert moves(engine)[-1] == "exd5"
    chat = next(m for m in out if m.to == BOB and "alice says" in m.body)
    assert "your move, Bob" in chat.body and chat.subject == "extinction board 1"
    assert any("proposes a draw" in m.body for m in out if m.to == BOB)
    bob_next = newest(out, BOB)

    # A wrong move is answered with the error; nothing changes.
    _, out = answer(server, engine, sink, bob_next, "Ke9")
    assert moves(engine)[-1] == "exd5"
    assert "Ke9" in out[0].body and "Nothing was changed" in out[0].body, out[0].body

    _, out = answer(server, engine, sink, bob_next, "resign")
    with engine.connect() as conn:
        assert conn.scalar(select(GameRow.status)) == "finished"
    # Once the board is over its reply addresses take nothing more.
    _, out = answer(server, engine, sink, alice_next, "Nf3")
    assert "is over" in out[0].body and "Nothing was changed" in out[0].body


def test_a_reply_from_another_address_is_refused(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    alice_mail = start(server, engine, sink)[ALICE]
    _, out = answer(server, engine, sink, alice_mail, "e4", sender="mallory@evil.example")
    assert moves(engine) == []
    [refusal] = out
    assert refusal.to == "mallory@evil.example"
    assert "taken only from that player's own address" in refusal.body
    assert not TOKEN.search(refusal.message.as_bytes()), "the token went back to a stranger"
    # The password path keeps working for everyone.
    send(server, engine, sink, ALICE, "extinction move 1 alice secret1 e4")
    assert moves(engine) == ["e4"]


def test_another_players_reply_is_told_whose_seat_it_is(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    alice_mail = start(server, engine, sink)[ALICE]
    _, out = answer(server, engine, sink, alice_mail, "e4", sender=BOB)
    assert moves(engine) == []
    [refusal] = out
    text = " ".join(refusal.body.split())
    assert "the reply address of alice's seat on extinction board 1, not of yours (bob)" in text
    assert "Reply to a board mail sent to you" in text
    assert "add USERID PASSWORD ADDRESS" not in text  # his address is his already
    assert not TOKEN.search(refusal.message.as_bytes())


def test_tokens_rotate_when_the_password_changes(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    first = start(server, engine, sink)
    _, out = send(server, engine, sink, ALICE, "change password alice secret1 secret2")
    # At once: the answer names the board, and the board comes again with its new address.
    [answer_mail] = [m for m in out if not m.message["Reply-To"]]
    assert "extinction board 1" in answer_mail.body and not TOKEN.search(answer_mail.body.encode())
    [fresh] = [m for m in out if m.message["Reply-To"]]
    assert fresh.to == ALICE and fresh.subject == first[ALICE].subject
    assert fresh.message["Reply-To"] != first[ALICE].message["Reply-To"]
    assert fresh.message["In-Reply-To"] == first[ALICE].message["Message-ID"]  # same thread
    assert "reply address has changed" in fresh.body
    _, out = answer(server, engine, sink, first[ALICE], "e4")
    assert moves(engine) == [] and "not a reply address of any board now" in out[0].body
    assert "latest board mail" not in out[0].body  # which was the old one: no longer said
    answer(server, engine, sink, fresh, "e4")
    assert moves(engine) == ["e4"]


def test_tokens_reach_only_their_owner_and_no_log(server, engine, sink: Sink, caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.INFO)  # as serve logs (aiosmtpd's DEBUG lines are never on)
    caplog.set_level(logging.DEBUG, logger="pbmserv")
    first = start(server, engine, sink)
    _, out = answer(server, engine, sink, first[ALICE], "e4")
    answer(server, engine, sink, newest(out, BOB), "e5")
    owners: dict[bytes, str] = {}
    for mail in (first[ALICE], first[BOB]):
        [token] = TOKEN.findall(mail.message.as_bytes())
        owners[token] = mail.to
    assert len(owners) == 2
    for mail in sink.messages:
        raw = mail.message.as_bytes()
        for token, owner in owners.items():
            if token in raw:
                assert mail.to == owner, f"{owner}'s reply token was mailed to {mail.to}"
    logged = "\n".join(r.getMessage() + repr(getattr(r, "fields", "")) for r in caplog.records)
    leaks = [line for line in logged.splitlines() if any(t.decode() in line for t in owners)]
    assert not leaks
    with engine.connect() as conn:
        kept = b"".join(conn.scalars(select(InboxMessage.raw)))
    assert not any(token in kept for token in owners), "a processed message kept its token"


def test_a_token_in_capitals_is_played_and_masked_where_kept(
    server, engine, sink: Sink, caplog
) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG, logger="pbmserv")
    first = start(server, engine, sink)
    reply_to = first[ALICE].message["Reply-To"].addresses[0].addr_spec
    shouted = reply_to.split("@")[0].upper() + "@localhost"  # PBMSERV+B1-S0-TOKEN
    token = shouted.split("-")[-1].split("@")[0]
    send(server, engine, sink, ALICE, "Re: your move", "e4\n", to=shouted)
    assert moves(engine) == ["e4"]
    with engine.connect() as conn:
        kept = b"".join(conn.scalars(select(InboxMessage.raw)))
    assert token.encode() not in kept.upper(), "the capital token was kept unmasked"
    logged = "\n".join(r.getMessage() + repr(getattr(r, "fields", "")) for r in caplog.records)
    assert token not in logged.upper()


@pytest.fixture
def trusting_server(settings):  # type: ignore[no-untyped-def]
    running = RunningServer(replace(settings, trusted_authserv_ids="mx.example.net")).start()
    yield running
    running.stop()


def test_a_trusted_mta_verdict_is_required_to_pass(trusting_server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    server = trusting_server
    alice_mail = start(server, engine, sink)[ALICE]
    failed = "mx.example.net; dkim=fail header.d=example.org; spf=softfail smtp.mailfrom=x.example"
    _, out = answer_with(server, engine, sink, alice_mail, failed)
    assert moves(engine) == [] and "could not confirm" in out[0].body
    # A verdict from a host not trusted counts for nothing either way.
    forged = "mx.attacker.example; dkim=pass header.d=example.org"
    answer_with(server, engine, sink, alice_mail, f"{failed}\n{forged}")
    assert moves(engine) == []
    answer_with(server, engine, sink, alice_mail, "mx.example.net; dkim=pass header.d=example.org")
    assert moves(engine) == ["e4"]


def answer_with(server, engine, sink: Sink, board_mail: Received, results: str):  # type: ignore[no-untyped-def]
    to = board_mail.message["Reply-To"].addresses[0].addr_spec
    message = make_mail(ALICE, f"Re: {board_mail.subject}", "e4", to=to)
    for value in results.split("\n"):
        message["Authentication-Results"] = value
    before = len(sink.messages)
    assert smtp_send(server.port, message, to=to)[0] == 250
    settle(engine)
    return message, sink.messages[before:]


def test_a_reply_address_in_the_envelope_alone_is_the_seats(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    """A reply Bcc'd, redirected or sent through an alias names the seat's address only in
    RCPT TO: the listener reads the envelope too (its headers name another address)."""
    first = start(server, engine, sink)
    seat_address = first[ALICE].message["Reply-To"].addresses[0].addr_spec
    message = make_mail(ALICE, "Re: my move", "e4\n", to="friends@lists.example.org")
    assert smtp_send(server.port, message, to=seat_address)[0] == 250
    settle(engine)
    assert moves(engine) == ["e4"]
    with engine.connect() as conn:
        kept = conn.scalar(select(InboxMessage.envelope_to).order_by(InboxMessage.id.desc()))
    # Kept for the operator, with the seat's token masked as everywhere else it is kept.
    assert kept == "pbmserv+b1-s0-********@localhost"
