"""What a club newcomer met by real mail (issue 47, item 6): a proposal mail says that replying
``accept`` works, and it does; ``chess challenge ...`` and a bare ``digest`` are answered with
what was meant instead of "I found no command". Real SMTP, listener, relay and database."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pbmserv.db.models import GameRow
from tests.e2e.by_mail.test_reply_by_mail import ALICE, BOB, answer, newest, send, start
from tests.support import Sink

pytestmark = pytest.mark.db


def test_replying_accept_to_a_proposal_mail_agrees(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    first = start(server, engine, sink)
    _, out = answer(server, engine, sink, first[ALICE], "e4")
    _, out = answer(server, engine, sink, newest(out, BOB), "e5")
    _, out = send(server, engine, sink, ALICE, "extinction propose 1 alice secret1 draw")
    [proposal] = [m for m in out if m.to == BOB and "proposes a draw" in m.body]
    said = " ".join(proposal.body.split())
    assert 'reply to this mail with "accept" or "reject" alone on the first line' in said
    assert proposal.message["Reply-To"]  # the seat's reply address: what makes it true
    _, out = answer(server, engine, sink, proposal, "accept")
    reply = next(m for m in out if m.to == BOB and not m.message["Reply-To"])
    assert "> extinction accept 1 bob ********" in reply.body and "Draw agreed" in reply.body
    with engine.connect() as conn:
        assert conn.scalar(select(GameRow.status).where(GameRow.id == 1)) == "finished"


def test_a_game_we_do_not_have_is_named_and_the_games_listed(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    send(server, engine, sink, ALICE, "signup alice secret1")
    _, [reply] = send(server, engine, sink, ALICE, "chess challenge alice bob")
    text = " ".join(reply.body.split())
    assert 'there is no game "chess" here' in text
    assert "The games are: buffalo, chameleon, entropy, extinction, hmdg, owlman." in text
    assert "I found no command" not in text
    # A first word shaped like a password is never quoted back.
    _, [reply] = send(server, engine, sink, ALICE, "Zq8secretPW move 1 alice")
    text = " ".join(reply.body.split())
    assert "there is no game by the first word of your line here" in text
    assert b"Zq8secretPW" not in reply.message.as_bytes()
    # A sentence that says "move" is no game's command.
    _, [reply] = send(server, engine, sink, ALICE, "", "we move on friday")
    assert "I found no command" in reply.body


def test_a_bare_digest_says_what_it_is_and_how_to_set_it(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    _, [reply] = send(server, engine, sink, ALICE, "digest")
    text = " ".join(reply.body.split())
    assert '"digest" is one of your settings, not a command' in text
    assert "one mail a day" in text and "set USERID PASSWORD digest=off|daily" in text
    assert "I found no command" not in text
    # A help page written alone points to itself.
    _, [reply] = send(server, engine, sink, ALICE, "clocks")
    assert '"clocks" is a help page' in reply.body and "help clocks" in reply.body
