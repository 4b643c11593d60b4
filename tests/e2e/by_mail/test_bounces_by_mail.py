"""Bounces that teach, over real SMTP with the running listener, relay and database: delivery
reports sent back to the return paths of a player's mail mark the address, the opponent is
told, the operator sees it, nothing answers a report, and the player's own mail clears it.

The reports are the genuine Postfix ones of tests/inbound/data/bounces/, addressed to the return
path the relay saw.
"""

from __future__ import annotations

import json
import re
from email.utils import make_msgid
from pathlib import Path

import pytest
from sqlalchemy import select

from pbmserv.config import Settings
from pbmserv.core.accounts.bouncing import bounce_key, return_path
from pbmserv.db.models import Address, InboxMessage, OutboxMessage
from tests.e2e.processes import environment, run_pbmserv
from tests.support import Received, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

ALICE, BOB = "alice@example.org", "bob@example.org"
BOUNCES = Path(__file__).parents[2] / "inbound" / "data" / "bounces"
#: What the sample reports name: their return path, recipient and Message-ID.
SAMPLE_PATH = "pbmserv+bounce-17-k3mpq7abcdef@games.example.net"
SAMPLE_RECIPIENT = "bob@gone.example.net"
SAMPLE_ID = re.compile(rb"^Message-Id: <[^>]+>", re.M)


def send(server, engine, sink: Sink, sender: str, subject: str) -> list[Received]:  # type: ignore[no-untyped-def]
    before = len(sink.messages)
    assert smtp_send(server.port, make_mail(sender, subject))[0] == 250
    settle(engine)
    return sink.messages[before:]


def bounce_address(engine, settings: Settings, mail: Received) -> str:  # type: ignore[no-untyped-def]
    """The return path of ``mail`` as the relay saw it in MAIL FROM: the bounce address of
    its outbox row."""
    with engine.connect() as conn:
        query = select(OutboxMessage.id).where(
            OutboxMessage.message_id == str(mail.message["Message-ID"])
        )
        outbox_id = conn.scalar(query)
    assert outbox_id is not None
    assert mail.mail_from == return_path(settings.address, bounce_key(engine), outbox_id)
    return mail.mail_from


def report_to(path: str, sample: str = "postfix-5.1.1-remote.eml") -> bytes:
    """A genuine Postfix report, sent back to ``path`` about a mail to bob."""
    raw = (BOUNCES / sample).read_bytes()
    raw = raw.replace(SAMPLE_PATH.encode(), path.encode())
    raw = raw.replace(SAMPLE_RECIPIENT.encode(), BOB.encode())
    fresh = make_msgid(domain="mx.example.org").encode()
    return SAMPLE_ID.sub(b"Message-Id: " + fresh, raw)


def send_report(server, engine, sink: Sink, path: str, **kw: str) -> list[Received]:  # type: ignore[no-untyped-def]
    """Send a report as an MTA does (null return path, to the bounce address); the mail
    that came of it."""
    before = len(sink.messages)
    assert smtp_send(server.port, report_to(path, **kw), mail_from="", to=path)[0] == 250
    settle(engine)
    return sink.messages[before:]


def last_summary(engine) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        query = select(InboxMessage.status, InboxMessage.summary).order_by(InboxMessage.id.desc())
        status, summary = conn.execute(query.limit(1)).one()
    return status, summary


def bouncing_users(db_url: str, tmp_path: Path) -> list[dict[str, object]]:
    env = environment(db_url, tmp_path / "shell-spool")
    result = run_pbmserv(["admin", "users", "list", "--bouncing", "--json"], env)
    assert result.returncode == 0, result.stderr.decode()
    return json.loads(result.stdout)


def test_three_hard_bounces_mark_the_address_until_the_player_writes(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, settings: Settings, db_url: str, tmp_path: Path
) -> None:
    assert settings.bounce_limit == 3
    send(server, engine, sink, ALICE, "signup alice secret1")
    send(server, engine, sink, BOB, "signup bob hunter22")
    to_bob = [
        m
        for m in send(server, engine, sink, ALICE, "chameleon challenge -size=5 alice bob")
        if m.to == BOB
    ]
    to_bob += [
        m
        for m in send(server, engine, sink, ALICE, "chameleon move 1 alice secret1 c3x")
        if m.to == BOB
    ]
    to_bob += [
        m
        for m in send(server, engine, sink, ALICE, "chameleon chat 1 alice secret1 hi")
        if m.to == BOB
    ]
    assert len(to_bob) == 3  # a board mail, another after alice's move, a chat line
    paths = [bounce_address(engine, settings, mail) for mail in to_bob]
    assert len(set(paths)) == 3
    assert all(re.fullmatch(r"pbmserv\+bounce-\d+-[a-z2-7]{12}@localhost", p) for p in paths)

    # A delay warning counts for nothing; nothing answers it.
    assert send_report(server, engine, sink, paths[0], sample="postfix-4.4.1-delayed.eml") == []
    assert last_summary(engine)[1].endswith("(temporary: nothing counted)")
    # Two hard bounces: counted, unanswered.
    for path in paths[:2]:
        assert send_report(server, engine, sink, path) == []
        status, summary = last_summary(engine)
        outbox_id = int(path.split("-")[1])
        assert status == "done"
        assert summary.startswith(f"bounce for outbox={outbox_id}: 5.1.1 failed 550 5.1.1")
    # The same mail's report again (a new copy of it): counted once.
    assert send_report(server, engine, sink, paths[1]) == []
    assert "(counted already)" in last_summary(engine)[1]
    # A made-up bounce address: ignored, unanswered.
    forged = re.sub(r"-[a-z2-7]{12}@", "-aaaaaaaaaaaa@", paths[2])
    assert send_report(server, engine, sink, forged) == []
    assert last_summary(engine) == (
        "ignored",
        "ignored: sent to a bounce address whose code is wrong",
    )
    assert bouncing_users(db_url, tmp_path) == []

    # The third: bob's address is marked, and alice, his opponent, is told once.
    [told] = send_report(server, engine, sink, paths[2])
    assert told.to == ALICE and told.subject == "pbmserv: bob cannot be reached by mail"
    assert "chameleon board 1 (with bob)" in told.body
    assert "taken from bob's vacation days" in told.body  # the pause (core.accounts.unreachable)
    assert "the address is now marked bouncing" in last_summary(engine)[1]
    [listed] = bouncing_users(db_url, tmp_path)
    assert listed["userid"] == "bob" and listed["email"] == BOB and listed["bounces"] == 3
    assert listed["bouncing_since"] and "5.1.1" in str(listed["last_bounce"])

    # Mail for bob is withheld now: alice's chat goes to nobody but her own reply.
    out = send(server, engine, sink, ALICE, "chameleon chat 1 alice secret1 are you there?")
    assert [m.to for m in out] == [ALICE]

    # bob writes: the answer reaches him, the mark is gone, and alice is told that his
    # clocks run again (the pause was a vacation, core.accounts.unreachable).
    out = send(server, engine, sink, BOB, "status bob")
    assert sorted(m.to for m in out) == [ALICE, BOB]
    assert "bob" in next(m for m in out if m.to == BOB).body
    assert "pbmserv: bob's clocks run again" in [m.subject for m in out]
    with engine.connect() as conn:
        row = conn.execute(select(Address).where(Address.address == BOB)).one()
    assert row.hard_bounces == 0 and row.bouncing_since is None
    assert bouncing_users(db_url, tmp_path) == []
    # And his board mail comes again.
    out = send(server, engine, sink, BOB, "chameleon move 1 bob hunter22 c2o")
    assert sorted(m.to for m in out).count(BOB) == 2  # the reply and the board mail
