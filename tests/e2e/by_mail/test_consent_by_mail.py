"""A board someone else started (core.play.consent), over real SMTP with the real listener, relay
and database: its first mail names who started it and how to decline, and a reply of just
"decline" or "accept" to that mail does it."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pbmserv.db.models import GameRow, Seat
from tests.e2e.by_mail.test_reply_by_mail import answer, send
from tests.support import Received, Sink

pytestmark = pytest.mark.db

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"


def carols_board(server, engine, sink: Sink) -> dict[str, Received]:  # type: ignore[no-untyped-def]
    """alice, bob and carol sign up; carol challenges alice and bob (a fast clock): the first
    board mail of each player, by address."""
    for sender, line in (
        (ALICE, "signup alice secret1"),
        (BOB, "signup bob hunter22"),
        (CAROL, "signup carol pass3333"),
    ):
        send(server, engine, sink, sender, line)
    _, out = send(server, engine, sink, CAROL, "extinction challenge -clock=fast alice bob")
    assert sorted(m.to for m in out) == [ALICE, BOB, CAROL]
    return {m.to: m for m in out if m.message["Reply-To"]}


def test_a_reply_of_decline_refuses_the_board(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    first = carols_board(server, engine, sink)
    bob_mail = first[BOB]
    assert "A challenge from the address of carol started it." in bob_mail.body
    assert "extinction decline 1 bob PASSWORD" in bob_mail.body
    assert 'reply to this mail with "accept" or "decline"' in bob_mail.body
    _, out = answer(server, engine, sink, bob_mail, "decline\n\nNo thanks, Bob")
    reply = next(m for m in out if m.to == BOB and not m.message["Reply-To"])
    assert "You declined extinction board 1" in reply.body, reply.body
    with engine.connect() as conn:
        status, result = conn.execute(select(GameRow.status, GameRow.result)).one()
    assert status == "finished" and result["declined"] and result["winners"] == []


def test_a_reply_of_accept_starts_the_players_clock(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    first = carols_board(server, engine, sink)
    send(server, engine, sink, ALICE, "extinction move 1 alice secret1 e4")
    query = select(Seat.accepted_at, Seat.clock_since).where(Seat.seat == 1)
    with engine.connect() as conn:
        assert conn.execute(query).one() == (None, None)  # bob's turn, but no clock of his
    _, out = answer(server, engine, sink, first[BOB], "accept")
    reply = next(m for m in out if m.to == BOB and not m.message["Reply-To"])
    assert "You accepted extinction board 1" in reply.body, reply.body
    with engine.connect() as conn:
        accepted, running = conn.execute(query).one()
    assert accepted is not None and running is not None
