"""Forged Authentication-Results do not play a move (issue 29), over real SMTP with the real
listener and database: the server trusts mx.games.test, whose verdict sits on top of the
message above its Received header, and the sender writes what they like below it."""

from __future__ import annotations

import email.policy
from dataclasses import replace
from typing import Any

import pytest
from sqlalchemy import Engine, select

from pbmserv.db.models import GameRow
from tests.e2e.by_mail.test_reply_by_mail import moves, newest, send
from tests.support import Received, RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

MX = "mx.games.test"
ALICE, BOB = "alice@ex.test", "bob@ex.test"
THE_MTAS_RECEIVED = (
    f"Received: from mail.ex.test (mail.ex.test [192.0.2.25]) by {MX} (Postfix) with ESMTPS"
    " id 4Xy1; Tue, 24 Nov 2026 10:00:00 +0000"
)


@pytest.fixture
def trusting_server(settings):  # type: ignore[no-untyped-def]
    running = RunningServer(replace(settings, trusted_authserv_ids=f"mx.other.test, {MX}")).start()
    yield running
    running.stop()


def start(server, engine, sink: Sink) -> dict[str, Received]:  # type: ignore[no-untyped-def]
    """alice and bob sign up; alice challenges bob to Extinction (White moves first): the
    first board mail of each, by address."""
    send(server, engine, sink, ALICE, "signup alice secret1")
    send(server, engine, sink, BOB, "signup bob hunter22")
    _, out = send(server, engine, sink, ALICE, "extinction challenge alice bob")
    return {m.to: m for m in out if m.message["Reply-To"]}


def reply(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, board_mail: Received, move: str, mtas=(), senders=()
) -> list[Received]:
    """The player's reply to ``board_mail`` with ``move``, as it reaches pbmserv: the MTA's
    Authentication-Results ``mtas`` on top, its Received, then the sender's own headers with
    their Authentication-Results ``senders``."""
    to = board_mail.message["Reply-To"].addresses[0].addr_spec
    headers = {"In-Reply-To": board_mail.message["Message-ID"]}
    message = make_mail(board_mail.to, f"Re: {board_mail.subject}", move, to=to, headers=headers)
    for value in senders:
        message["Authentication-Results"] = value
    top = [f"Authentication-Results: {value}" for value in mtas] + [THE_MTAS_RECEIVED]
    raw = "".join(f"{line}\r\n" for line in top).encode() + message.as_bytes(
        policy=email.policy.SMTP
    )
    before = len(sink.messages)
    assert smtp_send(server.port, raw, mail_from=board_mail.to, to=to)[0] == 250
    settle(engine)
    return sink.messages[before:]


def board(engine: Engine) -> tuple[int, dict[str, Any]]:
    with engine.connect() as conn:
        row = conn.execute(select(GameRow.ply, GameRow.state)).one()
    return row.ply, row.state


def assert_refused(engine: Engine, out: list[Received], before: tuple[int, dict[str, Any]]) -> None:
    """Nothing was played, and the player was told why."""
    assert moves(engine) == [] and board(engine) == before
    [refusal] = out
    assert refusal.to == ALICE
    assert "could not confirm that this reply came from your address" in refusal.body
    assert "Nothing was changed" in refusal.body


def test_a_forged_verdict_below_the_mtas_received_is_not_played(  # type: ignore[no-untyped-def]
    trusting_server, engine, sink: Sink
) -> None:
    server = trusting_server
    alice_mail = start(server, engine, sink)[ALICE]
    before = board(engine)
    forged = [f"{MX}; dmarc=pass", f"{MX}; dkim=pass header.d=ex.test"]
    theirs = f"{MX}; dkim=none; spf=none smtp.mailfrom=ex.test; dmarc=none header.from=ex.test"
    out = reply(server, engine, sink, alice_mail, "e4", mtas=[theirs], senders=forged)
    assert_refused(engine, out, before)
    # Where the MTA found DMARC failing, the forged pass below does not outweigh it either
    # (the processor may leave such a message unanswered: its From is forged).
    theirs = f"{MX}; dkim=none; spf=fail smtp.mailfrom=ex.test; dmarc=fail header.from=ex.test"
    out = reply(server, engine, sink, alice_mail, "e4", mtas=[theirs], senders=forged)
    assert moves(engine) == [] and board(engine) == before
    assert all(m.to == ALICE and "Nothing was changed" in m.body for m in out)


@pytest.mark.parametrize(
    "mtas",
    [
        # A pass inside a quoted local part, or inside a comment, of the MTA's own header.
        pytest.param(
            [f'{MX}; dkim=none; spf=fail smtp.mailfrom="x;dmarc=pass y"@evil.test'], id="quoted"
        ),
        pytest.param(
            [f"{MX}; dkim=fail (bad signature; dmarc=pass ) header.d=ex.test"], id="comment"
        ),
        # No verdict of the trusted host at all: the From address alone is not enough.
        pytest.param([], id="no-header"),
        pytest.param(
            ["mx.evil.test; dkim=pass header.d=ex.test; dmarc=pass header.from=ex.test"],
            id="untrusted-host",
        ),
        # A public suffix (test is none listed, so the default rule makes it one) signing or
        # sending for ex.test is not aligned with it.
        pytest.param(
            [f"{MX}; dkim=pass header.d=test header.s=s1 header.b=AbCd"], id="dkim-d=test"
        ),
        pytest.param([f"{MX}; spf=pass smtp.mailfrom=bounce@test; dmarc=none"], id="spf-test"),
    ],
)
def test_a_reply_the_trusted_mta_did_not_pass_is_not_played(  # type: ignore[no-untyped-def]
    trusting_server, engine, sink: Sink, mtas: list[str]
) -> None:
    server = trusting_server
    alice_mail = start(server, engine, sink)[ALICE]
    before = board(engine)
    out = reply(server, engine, sink, alice_mail, "e4", mtas=mtas)
    assert_refused(engine, out, before)


def test_genuine_replies_with_the_mtas_verdict_are_played(  # type: ignore[no-untyped-def]
    trusting_server, engine, sink: Sink
) -> None:
    server = trusting_server
    first = start(server, engine, sink)
    # Alice: OpenDKIM's and OpenDMARC's headers, one each, on top; DMARC passes.
    opendkim = (
        f"{MX}; dkim=pass (2048-bit key; unprotected) header.d=ex.test header.i=@ex.test"
        " header.a=rsa-sha256 header.s=mail header.b=AbCdEfGh"
    )
    opendmarc = f"{MX}; dmarc=pass (p=none dis=none) header.from=ex.test"
    out = reply(server, engine, sink, first[ALICE], "e4", mtas=[opendkim, opendmarc])
    assert moves(engine) == ["e4"]
    # Bob: rspamd's one header; his domain has no DMARC policy, but DKIM passes for a
    # subdomain of it (aligned, as DMARC's relaxed mode has it).
    rspamd = (
        f'{MX}; dkim=pass header.d=mail.ex.test header.s=dkim header.b="a/b+c"; dmarc=none;'
        f" spf=none ({MX}: domain of bob@ex.test has no SPF policy) smtp.mailfrom=bob@ex.test"
    )
    reply(server, engine, sink, newest(out, BOB), "e5", mtas=[rspamd])
    assert moves(engine) == ["e4", "e5"]
    assert board(engine)[0] == 2
