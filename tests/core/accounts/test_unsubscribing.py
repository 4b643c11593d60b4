"""Leaving bulk mail by mail (core.accounts.unsubscribing) on a real database: the digest and the
operator's broadcasts name an ``unsubscribe`` command whose code works only for the user and
address it was made for; the right one turns the list off with no password, a wrong one
changes nothing; ``set`` turns either back on."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from sqlalchemy import select

from pbmserv.core import admin
from pbmserv.core.accounts import unsubscribing
from pbmserv.core.accounts.bouncing import bounce_key
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import quote
from pbmserv.db.engine import transaction
from pbmserv.db.models import OutboxMessage, User
from pbmserv.outbound.outbox_rows import queue_notifications
from pbmserv.runtime.upkeep import maintain
from tests.core.client import Client

pytestmark = pytest.mark.db

BOB = "bob@example.org"
LIST_HEADERS = ("List-Id", "List-Unsubscribe", "List-Unsubscribe-Post", "Precedence")


def outbox(client: Client) -> list[EmailMessage]:
    rows = client.query(select(OutboxMessage.raw).order_by(OutboxMessage.id))
    return [email.message_from_bytes(raw, policy=email.policy.default) for (raw,) in rows]  # type: ignore[misc]


def command_of(message: EmailMessage) -> str:
    """The command a mail's List-Unsubscribe mailto sends (its Subject, and its body)."""
    target = str(message["List-Unsubscribe"]).strip("<>")
    parts = urlsplit(target)
    assert parts.scheme == "mailto" and parts.path == "pbmserv@localhost"
    query = parse_qs(parts.query)
    assert query["subject"] == query["body"]
    return unquote(query["subject"][0])


def digest_for_bob(players: Client, day: int = 1) -> list[EmailMessage]:
    seven = datetime.now(UTC).replace(hour=7, minute=0, second=0, microsecond=0)
    maintain(players.factory, players.settings, clock=lambda: seven + timedelta(day))
    return [m for m in outbox(players) if str(m["Subject"]).startswith("pbmserv: your move")]


def broadcast(client: Client, subject: str) -> str:
    with transaction(client.factory) as session:
        ctx = CommandContext(session=session, settings=client.settings, sender=None)
        done = admin.broadcast(ctx, subject, "Back soon.", playing_only=False)
        queue_notifications(session, client.settings, ctx.notifications, ctx.now())
    return done


def setting(client: Client, userid: str, column: str) -> str:
    [(value,)] = client.query(select(getattr(User, column)).where(User.userid == userid))
    return str(value)


def test_a_digest_names_the_command_that_stops_it_and_that_mail_alone_does(
    players: Client,
) -> None:
    assert players.run("set bob hunter22 digest=daily", sender=BOB).ok
    assert players.run("chameleon challenge -size=5 bob alice", sender=BOB).ok
    [digest] = digest_for_bob(players)
    assert digest["List-Id"] == "pbmserv digest <digest.localhost>"
    assert digest["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert digest["Precedence"] == "bulk"
    command = command_of(digest)
    assert command.startswith("unsubscribe digest bob ")
    code = command.split()[-1]
    # The code is a secret: quoted back and logged masked, like a password.
    assert quote(command) == "unsubscribe digest bob ********"

    # Sent from anywhere (a mail program's unsubscribe button): no password needed.
    done = players.run(command, sender="someone@elsewhere.example")
    assert done.ok and "Bob gets no daily digest from now on" in done.text
    assert "set Bob PASSWORD digest=daily" in done.text and code not in done.text
    assert setting(players, "bob", "digest") == "off"
    assert len(digest_for_bob(players, day=2)) == 1  # no digest the next day
    # Sent twice (a retried button): still no digest, and a calm answer.
    again = players.run(command, sender=BOB)
    assert again.ok and "(none was set)" in again.text
    # The way back, with the password.
    assert players.run("set bob hunter22 digest=daily", sender=BOB).ok
    assert len(digest_for_bob(players, day=3)) == 2


def test_a_code_works_only_for_its_user_list_and_address(players: Client) -> None:
    with transaction(players.factory) as session:  # the key is made, and kept, on first use
        bob = session.scalars(select(User).where(User.userid == "bob")).one()
        key = bounce_key(session)
        code = unsubscribing.unsubscribe_code(key, bob, "digest")
        broadcasts_code = unsubscribing.unsubscribe_code(key, bob, "broadcasts")
    assert code != broadcasts_code
    assert players.run("set bob hunter22 digest=daily", sender=BOB).ok
    for line in (
        f"unsubscribe digest alice {code}",  # bob's code for alice
        f"unsubscribe digest bob {broadcasts_code}",  # the other list's code
        f"unsubscribe digest bob {code[:-1]}{'y' if code[-1] == 'x' else 'x'}",  # a letter changed
        f"unsubscribe digest nobody {code}",  # no such user: the same answer
    ):
        refused = players.run(line, sender=BOB)
        assert not refused.ok and "unsubscribe code is not right" in refused.text, line
        assert code not in refused.text and refused.command.endswith("********")
    assert setting(players, "bob", "digest") == "daily"
    # A list that does not exist: the syntax, nothing changed.
    wrong = players.run(f"unsubscribe chat bob {code}", sender=BOB)
    assert not wrong.ok and "unsubscribe digest|broadcasts USERID CODE" in wrong.text
    # Letter case is no matter (some mail systems change it).
    assert players.run(f"unsubscribe digest BOB {code.upper()}", sender=BOB).ok
    assert setting(players, "bob", "digest") == "off"
    # Once bob's address changes, codes mailed to the old one do nothing.
    assert players.run("set bob hunter22 digest=daily", sender=BOB).ok
    with transaction(players.factory) as session:
        session.scalars(select(User).where(User.userid == "bob")).one().email = "bob@new.example"
    assert not players.run(f"unsubscribe digest bob {code}", sender=BOB).ok
    assert setting(players, "bob", "digest") == "daily"


def test_a_broadcast_skips_those_who_left_and_set_brings_them_back(players: Client) -> None:
    assert broadcast(players, "Downtime") == "broadcast to 3 user(s)"
    mails = {str(m["To"]): m for m in outbox(players)}
    assert all(m["List-Id"] == "pbmserv broadcasts <broadcasts.localhost>" for m in mails.values())
    command = command_of(mails[BOB])
    assert command.startswith("unsubscribe broadcasts bob ")
    done = players.run(command, sender=BOB)
    assert done.ok and "Bob gets no messages from the server's operator" in done.text
    assert "set Bob PASSWORD broadcasts=on" in done.text
    assert broadcast(players, "News") == "broadcast to 2 user(s)"
    assert "broadcasts=off" in players.run("status bob").text
    shown = players.run("set bob hunter22 broadcasts=on", sender=BOB)
    assert shown.ok and "broadcasts=on   (changed)" in shown.text
    assert broadcast(players, "More news") == "broadcast to 3 user(s)"
    # The password way out works as well.
    assert players.run("set bob hunter22 broadcasts=off", sender=BOB).ok
    assert broadcast(players, "Last") == "broadcast to 2 user(s)"


def test_help_tells_how_to_leave_and_come_back(client: Client) -> None:
    text = " ".join(client.run("help unsubscribe").text.split())
    assert "unsubscribe digest|broadcasts USERID CODE" in text
    assert "set USERID PASSWORD broadcasts=on" in text
    assert "set USERID PASSWORD digest=daily" in text
    assert "set USERID PASSWORD broadcasts=off" in client.run("help broadcast").text
    assert '"unsubscribe" button' in client.run("help digest").text
    assert "broadcasts=off" in client.run("help settings").text
