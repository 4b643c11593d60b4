"""Nobody can use the server to mail strangers: an address gets one confirmation mail and
nothing else until its owner replies to it. Real SMTP in and out, a real database."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from pbmserv.db.engine import session_factory
from pbmserv.db.models import Address, InboxMessage, User
from pbmserv.runtime.processor import expire_held
from tests.support import PEOPLE, Received, RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

CODE = re.compile(r"pbmserv\+confirm-([a-z2-7]{16})@localhost")


@pytest.fixture
def public(settings, sink: Sink):  # type: ignore[no-untyped-def]
    """The server as it ships: addresses are confirmed before they get mail."""
    running = RunningServer(replace(settings, confirm_addresses=True)).start()
    yield running
    running.stop()


def send(server, engine, sink: Sink, sender: str, body: str, to: str = "pbmserv@localhost"):  # type: ignore[no-untyped-def]
    """Send ``body`` from ``sender``; the mails it caused."""
    before = len(sink.messages)
    message = make_mail(sender, "", body + "\n", to=to)
    assert smtp_send(server.port, message, to=to)[0] == 250
    settle(engine)
    return sink.messages[before:]


def confirm_by_reply(server, engine, sink: Sink, mail: Received) -> list[Received]:  # type: ignore[no-untyped-def]
    """Reply to a confirmation mail as a mail program does."""
    reply_to = mail.message["Reply-To"].addresses[0].addr_spec
    assert CODE.fullmatch(reply_to)
    quoted = "".join(f"> {line}\n" for line in mail.body.splitlines())
    return send(server, engine, sink, mail.to, f"yes, that was me\n\n{quoted}", to=reply_to)


def users(engine) -> list[str]:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return list(conn.scalars(select(User.userid).where(PEOPLE).order_by(User.id)))


def signed_up(server, engine, sink: Sink, userid: str) -> str:  # type: ignore[no-untyped-def]
    """A confirmed user ``userid`` at ``userid@example.org``."""
    address = f"{userid}@example.org"
    [asked] = send(server, engine, sink, address, f"signup {userid} pw-{userid}1")
    out = confirm_by_reply(server, engine, sink, asked)
    assert any("Welcome" in m.body for m in out)
    return address


def test_a_newcomer_confirms_once_and_the_held_message_is_answered(public, engine, sink):  # type: ignore[no-untyped-def]
    out = send(public, engine, sink, "newbie@example.org", "signup newbie pw-newbie1 Nina Newbie")
    [asked] = out
    assert asked.to == "newbie@example.org"
    assert asked.message["Auto-Submitted"] == "auto-generated"
    # Nobody's text is in it: neither the user id nor the name the sender wrote.
    assert "newbie" not in asked.body.replace("newbie@example.org", "")
    assert "Nina" not in asked.body and "Nina" not in asked.subject
    assert users(engine) == []
    # More messages before the reply: held too, and no second mail within the day.
    assert send(public, engine, sink, "newbie@example.org", "help") == []

    out = confirm_by_reply(public, engine, sink, asked)
    bodies = " ".join(m.body for m in out)
    assert "newbie@example.org is confirmed" in bodies
    assert "Welcome, newbie!" in bodies  # the held signup, processed now
    # The reply was a yes to the signup the mail named, not to the "help" sent after it.
    assert len(out) == 2
    assert "1 other request waits" in bodies and "Send it again" in bodies
    assert {m.to for m in out} == {"newbie@example.org"}
    assert users(engine) == ["newbie"]
    [helped] = send(public, engine, sink, "newbie@example.org", "help")  # answered at once now
    assert helped.to == "newbie@example.org"
    # A second reply to the same mail confirms nothing more and holds nothing.
    again = confirm_by_reply(public, engine, sink, asked)
    assert len(again) == 1 and "confirms nothing" in again[0].body


def test_a_flood_in_a_strangers_name_sends_one_mail(public, engine, sink):  # type: ignore[no-untyped-def]
    signups = "\n".join(f"signup sp{n:02d} pw-sp{n:02d}" for n in range(30))
    out = send(public, engine, sink, "target1@victim.test", signups)
    for _ in range(15):  # more of the same, each a message of its own
        out += send(public, engine, sink, "target1@victim.test", signups)
    assert [m.to for m in out] == ["target1@victim.test"]
    assert "sp00" not in out[0].body
    assert users(engine) == []
    with engine.connect() as conn:
        held = conn.scalar(
            select(func.count()).select_from(InboxMessage).where(InboxMessage.status == "held")
        )
    assert held == 10  # the rest were dropped unanswered

    # A day later the address may be asked once more; after a week the held ones are dropped.
    with engine.begin() as conn:
        conn.execute(
            update(Address).values(code_sent_at=datetime.now(UTC) - timedelta(days=1, minutes=1))
        )
    assert len(send(public, engine, sink, "target1@victim.test", "help")) == 0  # held cap
    factory = session_factory(engine)
    assert expire_held(factory, datetime.now(UTC) + timedelta(days=8)) == 10
    [again] = send(public, engine, sink, "target1@victim.test", "help")
    assert again.to == "target1@victim.test" and CODE.search(str(again.message["Reply-To"]))


def test_an_address_change_waits_for_the_new_address(public, engine, sink):  # type: ignore[no-untyped-def]
    bob = signed_up(public, engine, sink, "bob")
    signed_up(public, engine, sink, "alice")
    # Another user's address, in any letter case, is refused like add refuses it.
    [refused] = send(public, engine, sink, bob, "email bob pw-bob1 ALICE@Example.org")
    assert "belongs to another user" in refused.body
    # Not the address the mail goes to already.
    [same] = send(public, engine, sink, bob, "change address bob pw-bob1 bob@example.org")
    assert "already" in same.body and "nothing was changed" in same.body

    out = send(public, engine, sink, bob, "email bob pw-bob1 bob@new.example")
    reply = next(m for m in out if m.to == bob)
    asked = next(m for m in out if m.to == "bob@new.example")
    assert len(out) == 2
    assert "bob@new.example" in reply.body and "once its owner replies" in reply.body
    assert "bob" not in asked.body.replace("bob@new.example", "")
    with engine.connect() as conn:
        assert conn.scalar(select(User.email).where(User.userid == "bob")) == bob

    # The owner of the new address sends the code as a command instead of replying.
    code = CODE.search(str(asked.message["Reply-To"])).group(1)  # type: ignore[union-attr]
    out = send(public, engine, sink, "bob@new.example", f"confirm {code}")
    assert {m.to for m in out} == {"bob@new.example", bob}
    notices = [m for m in out if "address of bob changed" in m.subject]
    assert [m.to for m in notices] == [bob]
    with engine.connect() as conn:
        assert conn.scalar(select(User.email).where(User.userid == "bob")) == "bob@new.example"
    assert code not in str(
        [m.body for m in out if m.to == "bob@new.example"]
    )  # the code is never quoted back


def test_one_address_holds_a_few_user_ids(public, engine, sink):  # type: ignore[no-untyped-def]
    owner = signed_up(public, engine, sink, "ann")
    body = "\n".join(f"signup ann{n} pw-ann{n}x" for n in range(2, 6))
    [reply] = send(public, engine, sink, owner, body)
    assert reply.body.count("Welcome") == 2
    assert "already has 3 user ids" in reply.body
    assert users(engine) == ["ann", "ann2", "ann3"]


def test_an_added_address_is_confirmed_before_it_is_taken(public, engine, sink):  # type: ignore[no-untyped-def]
    carol = signed_up(public, engine, sink, "carol")
    out = send(public, engine, sink, carol, "add carol pw-carol1 carol@work.example")
    asked = next(m for m in out if m.to == "carol@work.example")
    assert "carol" not in asked.body.replace("carol@work.example", "")
    assert "a player asked us to take their commands from this address" in asked.body
    [listed] = [m for m in out if m.to == carol]
    assert "(where the mail goes) only." in listed.body  # not added yet
    # Mail from the added address waits for its confirmation.
    assert send(public, engine, sink, "carol@work.example", "status carol") == []
    out = confirm_by_reply(public, engine, sink, asked)
    [answer] = out
    assert answer.to == "carol@work.example"
    assert "carol may send us commands from carol@work.example" in answer.body
    assert "1 other request waits" in answer.body  # the status sent before: not run
    [status] = send(public, engine, sink, "carol@work.example", "status carol")
    assert "> status carol" in status.body


def test_a_private_server_trusts_every_address(server, engine, sink):  # type: ignore[no-untyped-def]
    [reply] = send(server, engine, sink, "dan@example.org", "signup dan pw-dan1")
    assert "Welcome" in reply.body


def test_address_changes_in_one_message_send_at_most_the_cap(public, engine, sink):  # type: ignore[no-untyped-def]
    mallory = signed_up(public, engine, sink, "mallory")
    lines = "\n".join(f"email mallory pw-mallory1 victim{n:02d}@victim.test" for n in range(30))
    out = send(public, engine, sink, mallory, lines)
    asked = [m for m in out if m.to.endswith("@victim.test")]
    assert len(asked) == 25  # max_mails_per_message: one confirmation each, then refused
    assert len({m.to for m in asked}) == 25
    [reply] = [m for m in out if m.to == mallory]
    assert reply.body.count("more than 25 mails to other people") == 5


def test_a_confirm_line_is_quoted_as_what_it_was(public, engine, sink):  # type: ignore[no-untyped-def]
    """A ``confirm CODE`` line sent to the main address is quoted as that line (its code
    hidden), not as a reply to the confirmation mail; a reply is quoted as a reply."""
    [asked] = send(public, engine, sink, "nina@example.org", "signup nina pw-nina1")
    code = CODE.fullmatch(asked.message["Reply-To"].addresses[0].addr_spec).group(1)
    out = send(public, engine, sink, "nina@example.org", f"confirm {code}")
    [answer] = [m for m in out if "nina@example.org is confirmed" in m.body]
    assert "confirm ********" in answer.body
    assert "a reply to the confirmation mail" not in answer.body and code not in answer.body

    [asked] = send(public, engine, sink, "olga@example.org", "signup olga pw-olga1")
    out = confirm_by_reply(public, engine, sink, asked)
    [answer] = [m for m in out if "olga@example.org is confirmed" in m.body]
    assert "(a reply to the confirmation mail)" in answer.body
