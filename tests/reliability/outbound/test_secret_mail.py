"""Mail that carries a secret (a new password, a confirmation code) is kept only until it is
sent: once marked sent (relay or spool) its row keeps the header block and a line saying the
body was removed, never the secret (issue 29).

Real parts: `pbmserv admin` and `pbmserv deliver` as subprocesses, a real SMTP sink, the real
database (SQLite or PostgreSQL), the spool folder.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import json
import re
from pathlib import Path

import pytest
from sqlalchemy import Engine, delete, select, update

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import OutboxMessage
from pbmserv.db.times import utcnow
from pbmserv.outbound.delivery import deliver_all_due
from pbmserv.outbound.delivery_items import PRIVATE_BOARD_KIND, SECRET_KINDS
from pbmserv.outbound.leases import BODY_REMOVED
from pbmserv.outbound.outbox_rows import queue, queue_notifications
from tests.e2e.processes import environment, run_pbmserv, seed_game, spool_messages
from tests.reliability.outbox import Relay, ScriptedHandler, delivery_settings
from tests.support import Sink

pytestmark = pytest.mark.db


def _only_row(engine: Engine) -> OutboxMessage:
    with session_factory(engine)() as session:
        [row] = session.scalars(select(OutboxMessage)).all()
        session.expunge(row)
        return row


def _password_in(raw: bytes) -> str:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    text = message.get_body(("plain",)).get_content()  # type: ignore[union-attr]
    found = re.search(r"^    (\S+)$", text, re.M)
    assert found is not None, text
    return found.group(1)


def _reset_bobs_password(db_url: str, engine: Engine, tmp_path: Path) -> tuple[dict, str]:
    """`pbmserv admin users reset-password bob`; the environment and the new password (read
    from the queued row, before it is sent)."""
    seed_game(engine)
    with engine.begin() as conn:  # the seed's own mail is not what this is about
        conn.execute(delete(OutboxMessage))
    env = environment(db_url, tmp_path / "spool")
    result = run_pbmserv(["admin", "users", "reset-password", "bob"], env)
    assert result.returncode == 0, result.stderr.decode()
    with engine.begin() as conn:  # bob's board again, with its seat's new reply address
        resent = conn.execute(delete(OutboxMessage).where(OutboxMessage.kind == "board"))
    assert resent.rowcount == 1
    row = _only_row(engine)
    assert (row.kind, row.status) == ("password_reset", "pending")
    return env, _password_in(row.raw)


def _check_kept(row: OutboxMessage, password: str) -> None:
    """Sent, the metadata whole, the secret gone, what is kept still a readable message."""
    assert row.status == "sent" and row.sent_at is not None and row.attempts == 1
    assert row.kind == "password_reset" and row.recipient == "bob@example.org"
    assert password.encode() not in row.raw
    assert BODY_REMOVED in row.raw
    kept = email.message_from_bytes(row.raw, policy=email.policy.default)
    assert kept["To"] == "bob@example.org" and kept["Message-ID"] == row.message_id
    assert kept["Subject"] == "pbmserv: new password for bob"


def test_a_new_password_is_relayed_then_gone_from_the_outbox(
    db_url: str, engine: Engine, sink: Sink, tmp_path: Path
) -> None:
    env, password = _reset_bobs_password(db_url, engine, tmp_path)
    env["PBMSERV_RELAY"] = sink.address
    delivered = run_pbmserv(["deliver"], env)
    assert delivered.returncode == 0, delivered.stderr.decode()
    [mail] = sink.wait_count(1)
    assert mail.to == "bob@example.org" and password in mail.body.split()  # it went out whole
    _check_kept(_only_row(engine), password)
    # The operator's listing copes with the row.
    listed = run_pbmserv(["admin", "outbox", "list", "--json"], env)
    assert listed.returncode == 0, listed.stderr.decode()
    [shown] = json.loads(listed.stdout)
    assert (shown["kind"], shown["status"], shown["to"]) == ("password_reset", "sent", mail.to)
    assert password not in listed.stdout.decode()


def test_a_new_password_is_spooled_then_gone_from_the_outbox(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    env, password = _reset_bobs_password(db_url, engine, tmp_path)
    delivered = run_pbmserv(["deliver"], env)
    assert delivered.returncode == 0, delivered.stderr.decode()
    [mail] = spool_messages(tmp_path / "spool")
    assert _password_in(mail.as_bytes()) == password
    _check_kept(_only_row(engine), password)


def test_only_the_secret_kinds_lose_their_body_and_the_reply_tag_is_masked(
    db_url: str, engine: Engine
) -> None:
    with Relay(ScriptedHandler()) as relay:
        settings = delivery_settings(db_url, relay)
        local, _at, domain = settings.address.partition("@")
        tagged = f"{local}+confirm-K7Q2XW@{domain}"
        with transaction(session_factory(engine)) as session:
            for kind in sorted(SECRET_KINDS) + ["notice"]:
                queue(
                    session,
                    settings,
                    to=f"{kind}@example.org",
                    kind=kind,
                    subject=f"your {kind}",
                    body="the secret is K7Q2XW\n",
                    now=utcnow(),
                    inbox_id=None,
                )
        # A reply address that carries the code, as a confirmation's does.
        with engine.begin() as conn:
            for row_id, raw in conn.execute(select(OutboxMessage.id, OutboxMessage.raw)).all():
                conn.execute(
                    update(OutboxMessage)
                    .where(OutboxMessage.id == row_id)
                    .values(raw=f"Reply-To: {tagged}\n".encode() + raw)
                )
        report = asyncio.run(deliver_all_due(session_factory(engine), settings))
        received = relay.messages
    assert report.sent == len(SECRET_KINDS) + 1
    assert all("K7Q2XW" in m.body and m.message["Reply-To"] == tagged for m in received)
    with engine.connect() as conn:
        kept = dict(conn.execute(select(OutboxMessage.kind, OutboxMessage.raw)).all())
    assert b"the secret is K7Q2XW" in kept.pop("notice")
    for kind, raw in kept.items():
        assert b"K7Q2XW" not in raw, kind
        assert f"Reply-To: {local}+********@{domain}".encode() in raw
        assert f"Subject: your {kind}".encode() in raw and BODY_REMOVED in raw


def test_a_board_mail_with_a_private_link_keeps_no_link_once_sent(
    engine: Engine, tmp_path: Path
) -> None:
    """The private link to the web view is a capability the database holds only as a hash:
    the board mail carrying it is kept, once spooled, without its body (issue 50)."""
    settings = Settings(
        confirm_addresses=False,
        web_url="https://games.example.org",
        spool=tmp_path / "spool",
        db_url=str(engine.url),
    )
    factory = session_factory(engine)
    for line, sender in (
        ("signup alice secret1", "alice@example.org"),
        ("signup bob hunter22", "bob@example.org"),
        ("chameleon challenge -size=5 alice bob", "alice@example.org"),
    ):
        with transaction(factory) as session:
            ctx = CommandContext(session, settings, sender)
            assert dispatch_line(ctx, line).ok
            queue_notifications(session, settings, ctx.notifications, utcnow())
    with session_factory(engine)() as session:
        kinds = sorted(session.scalars(select(OutboxMessage.kind)))
    assert kinds.count(PRIVATE_BOARD_KIND) == 2, kinds  # alice's board mail and bob's
    asyncio.run(deliver_all_due(factory, settings))
    spooled = [path.read_text() for path in sorted((tmp_path / "spool" / "new").glob("*.eml"))]
    links = {m.group(0) for text in spooled for m in re.finditer(r"/p/[A-Za-z0-9_-]{32}", text)}
    assert len(links) == 2  # one each, in their own mail
    with session_factory(engine)() as session:
        kept = session.scalars(
            select(OutboxMessage).where(OutboxMessage.kind == PRIVATE_BOARD_KIND)
        ).all()
        assert [row.status for row in kept] == ["sent", "sent"]
        for row in kept:
            assert BODY_REMOVED in row.raw
            assert not any(link.encode() in row.raw for link in links)
