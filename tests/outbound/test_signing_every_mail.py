"""Every kind of mail the server sends, through the real processing and delivery path to the
spool, signed twice (RSA and Ed25519, RFC 8463) as a server with both keys signs: each
signature checks with dkimpy's verifier against the published records, and each header is,
byte for byte, the one dkimpy alone writes for the same message (OpenSSL's RSA PKCS#1 v1.5
and Ed25519 are deterministic, so only the time could differ: dkimpy's clock is stopped at the
signature's ``t=``)."""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbmserv.config import Settings
from pbmserv.core import admin
from pbmserv.core.context import CommandContext
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.times import utcnow
from pbmserv.inbound.inbox import store_message
from pbmserv.outbound.delivery import deliver_all_due
from pbmserv.outbound.outbox_rows import queue_notifications
from pbmserv.outbound.signing import new_ed25519_key, new_key
from pbmserv.runtime.processor import process_pending
from pbmserv.runtime.upkeep import maintain
from tests.outbound.signing_checks import (
    DOMAIN,
    dkimpy_header,
    split_signatures,
    timestamp,
    verified,
)
from tests.support import make_mail

pytestmark = pytest.mark.db

SERVER = f"pbmserv@{DOMAIN}"
ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"


class Post:
    """The server in this process: mail in by the inbox, processed, delivered to the spool
    (signed); each step returns the mail it sent, as the bytes that leave."""

    def __init__(self, engine: Engine, settings: Settings) -> None:
        self.factory, self.settings = session_factory(engine), settings
        self.seen: set[Path] = set()

    def send(self, sender: str, subject: str, confirm: bool = False) -> list[bytes]:
        settings = replace(self.settings, confirm_addresses=confirm)
        raw = make_mail(sender, subject, to=SERVER).as_bytes()
        store_message(self.factory, settings, raw, sender)
        process_pending(self.factory, settings)
        return self.delivered()

    def maintain(self, at: datetime) -> list[bytes]:
        maintain(self.factory, self.settings, clock=lambda: at)
        return self.delivered(at)  # queued as of then: due then

    def broadcast(self, subject: str, text: str) -> list[bytes]:
        with transaction(self.factory) as session:
            ctx = CommandContext(session=session, settings=self.settings, sender=None)
            admin.broadcast(ctx, subject, text, playing_only=False)
            queue_notifications(session, self.settings, ctx.notifications, ctx.now())
        return self.delivered()

    def delivered(self, at: datetime | None = None) -> list[bytes]:
        clock = utcnow if at is None else (lambda: at)
        asyncio.run(deliver_all_due(self.factory, self.settings, clock))
        folder = self.settings.spool / "new"
        fresh = sorted(set(folder.glob("*.eml")) - self.seen) if folder.exists() else []
        self.seen.update(fresh)
        return [path.read_bytes() for path in fresh]


def every_kind_of_mail(post: Post) -> dict[str, list[bytes]]:
    """The mail of a little club's play, by what caused it."""
    mail = {"answers (sign-ups)": post.send(ALICE, "signup alice secret1")}
    mail["answers (sign-ups)"] += post.send(BOB, "signup bob hunter22")
    for game in ("chameleon", "owlman", "hmdg"):  # board mail with pictures, to both
        mail[f"board mail with picture ({game})"] = post.send(ALICE, f"{game} challenge alice bob")
    mail["board mail, small"] = post.send(ALICE, "chameleon challenge -size=3 alice bob")
    found = re.search(rb"Board (\d+) \(Chameleon", mail["board mail, small"][0])
    assert found is not None
    board = found.group(1).decode()
    mail["chat"] = post.send(ALICE, f"chameleon chat {board} alice secret1 Good luck, have fun!")
    mail["a move"] = post.send(ALICE, f"chameleon move {board} alice secret1 a1x")
    mail["message"] = post.send(ALICE, "message alice secret1 bob Shall we play Owlman — später?")
    post.send(BOB, "set bob hunter22 mail=text")
    mail["board mail as text"] = post.send(ALICE, "owlman challenge alice bob")
    later = datetime.now(UTC) + timedelta(days=8)
    mail["reminders"] = post.maintain(later)
    post.send(CAROL, "signup carol pw-carol")
    post.send(CAROL, "set carol pw-carol digest=daily")
    post.send(CAROL, "chameleon challenge -size=3 carol alice")
    digest_time = (later + timedelta(days=1)).replace(hour=post.settings.digest_hour, minute=5)
    mail["digest"] = post.maintain(digest_time)
    mail["broadcast"] = post.broadcast("Downtime on Sunday", "Back soon. Café, Jürgen!")
    mail["confirmation"] = post.send("dora@example.org", "signup dora pw-dora", confirm=True)
    mail["an unknown command"] = post.send(BOB, "frobnicate")
    return mail


def test_every_mail_carries_both_signatures_each_as_dkimpy_writes_it(
    engine: Engine, tmp_path: Path
) -> None:
    keys = {"pbmserv": new_key(), "pbmserv-ed25519": new_ed25519_key()}
    for selector, pem in keys.items():
        (tmp_path / f"{selector}.pem").write_bytes(pem)
    settings = Settings(
        confirm_addresses=False,
        address=SERVER,
        db_url=str(engine.url),
        spool=tmp_path / "spool",
        dkim_selector="pbmserv",
        dkim_key_file=tmp_path / "pbmserv.pem",
        dkim_ed25519_selector="pbmserv-ed25519",
        dkim_ed25519_key_file=tmp_path / "pbmserv-ed25519.pem",
    )
    mail = every_kind_of_mail(Post(engine, settings))
    assert all(mail.values()), [kind for kind, sent in mail.items() if not sent]
    lists = [
        re.findall(rb"\r\nList-Id: pbmserv (\w+)", m) for m in mail["digest"] + mail["broadcast"]
    ]
    assert [b"digest"] in lists and [b"broadcasts"] in lists
    assert any(b"Content-Type: image/png" in m for m in mail["board mail with picture (hmdg)"])
    for kind, sent in mail.items():
        for raw in sent:
            assert verified(raw, keys) == [True, True], kind
            [rsa, ed25519], message = split_signatures(raw)
            assert b"a=rsa-sha256;" in rsa and b"a=ed25519-sha256;" in ed25519, kind
            when = timestamp(rsa)
            assert rsa == dkimpy_header(message, "pbmserv", keys["pbmserv"], when), kind
            expected = dkimpy_header(message, "pbmserv-ed25519", keys["pbmserv-ed25519"], when)
            assert ed25519 == expected, kind
            # Oversigned: the bulk headers are signed once more than they occur.
            if b"\r\nList-Unsubscribe-Post:" in message:
                assert rsa.replace(b"\r\n ", b"").count(b"list-unsubscribe-post") == 2
            # A changed body fails both.
            tampered = raw[:-8] + b"changed\r\n"
            assert verified(tampered, keys) == [False, False], kind
