"""Forgeries held for a new address do not run when its real owner confirms (issue 48, item 2).

The attack, over real SMTP to the running listener: a forger holds ten requests in a victim's
name (signups sent with the victim's From, and ``email``/``add`` by the forger's own accounts
naming the victim's address); the victim writes to play and confirms. Before, that one yes ran
them all: accounts with the forger's passwords at the victim's address, the forger's mail moved
there, and the victim's own signup then refused. Now a code runs the one request it was mailed
for. ``bench/security/held_forgeries.py`` runs the same scenario for the figure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, func, select, update

from pbmserv.db.engine import session_factory
from pbmserv.db.models import Address, HeldRequest, User, UserAddress
from pbmserv.runtime.processor import expire_held
from tests.support import PEOPLE, Received, RunningServer, Sink, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

VICTIM = "nina@victim.test"
CODE = re.compile(r"pbmserv\+confirm-([a-z2-7]{16})@localhost")
#: The forger's own accounts (confirmed, as any player's).
FORGERS = ("mallory", "trent")


@pytest.fixture
def public(settings, sink: Sink):  # type: ignore[no-untyped-def]
    """The server as it ships: addresses are confirmed before they get mail."""
    running = RunningServer(replace(settings, confirm_addresses=True)).start()
    yield running
    running.stop()


def send(
    server: RunningServer, engine: Engine, sink: Sink, sender: str, body: str, to: str = ""
) -> list[Received]:
    """Send ``body`` from ``sender`` over SMTP; the mails it caused."""
    to = to or "pbmserv@localhost"
    before = len(sink.messages)
    assert smtp_send(server.port, make_mail(sender, "", body + "\n", to=to), to=to)[0] == 250
    settle(engine)
    return sink.messages[before:]


def flat(text: str) -> str:
    """``text`` with its lines joined (wording checks need not know where lines break)."""
    return " ".join(text.split())


def code_of(mail: Received) -> str:
    match = CODE.fullmatch(mail.message["Reply-To"].addresses[0].addr_spec)
    assert match is not None
    return match.group(1)


def confirm(
    server: RunningServer, engine: Engine, sink: Sink, mail: Received, by_reply: bool
) -> list[Received]:
    """Say yes to a confirmation mail: replying to it, or with its ``confirm CODE`` line."""
    if by_reply:
        reply_to = mail.message["Reply-To"].addresses[0].addr_spec
        return send(server, engine, sink, mail.to, "yes, that was me", to=reply_to)
    return send(server, engine, sink, mail.to, f"confirm {code_of(mail)}")


def a_day_passes(engine: Engine, address: str = VICTIM) -> None:
    """``address`` may be asked again (one confirmation mail a day)."""
    with engine.begin() as conn:
        conn.execute(
            update(Address)
            .where(Address.address == address)
            .values(code_sent_at=datetime.now(UTC) - timedelta(days=1, minutes=1))
        )


def sign_up(server: RunningServer, engine: Engine, sink: Sink, userid: str) -> str:
    """A confirmed account ``userid`` at ``userid@example.org``."""
    address = f"{userid}@example.org"
    [asked] = send(server, engine, sink, address, f"signup {userid} pw-{userid}1")
    assert any("Welcome" in m.body for m in confirm(server, engine, sink, asked, True))
    return address


@dataclass
class Outcome:
    """What the owner's yes did, and the mails along the way."""

    forged: int = 0
    #: Forged requests run: accounts made by the forged signups, forger accounts whose mail
    #: moved to the victim's address or who may write from it.
    forged_run: int = 0
    own_ran: bool = False
    signed_up_again: bool = False
    mails_to_victim: list[Received] = field(default_factory=list)
    answer: str = ""
    forger_replies: list[Received] = field(default_factory=list)


def forged_run(engine: Engine) -> int:
    with engine.connect() as conn:
        made = conn.scalar(select(func.count()).select_from(User).where(User.userid.like("evil%")))
        moved = conn.scalar(
            select(func.count())
            .select_from(User)
            .where(func.lower(User.email) == VICTIM, User.userid.in_(FORGERS))
        )
        added = conn.scalar(
            select(func.count()).select_from(UserAddress).where(UserAddress.address == VICTIM)
        )
    return (made or 0) + (moved or 0) + (added or 0)


def forge_then_confirm(
    server: RunningServer, engine: Engine, sink: Sink, by_reply: bool = True
) -> Outcome:
    """Ten forged requests in the victim's name over two days, the victim's own signup among
    them, then the victim's yes to the mail about their own signup."""
    outcome = Outcome()
    mallory, trent = (sign_up(server, engine, sink, name) for name in FORGERS)
    seen = len(sink.messages)

    def forge_signup(n: int) -> None:
        outcome.forged += 1
        # Held, and no mail: one went to the address within the day.
        assert send(server, engine, sink, VICTIM, f"signup evil{n} pw-evil{n}x Nina") == []

    def forge(sender: str, line: str) -> None:
        outcome.forged += 1
        out = send(server, engine, sink, sender, line)
        outcome.forger_replies += [m for m in out if m.to == sender]

    # Day one: mallory asks to move her mail to the victim's address (the day's mail goes),
    # signups in the victim's name are held, and trent asks to write from the address.
    forge(mallory, f"email mallory pw-mallory1 {VICTIM}")
    for n in range(4):
        forge_signup(n)
    forge(trent, f"add trent pw-trent1 {VICTIM}")
    # Day two: the victim writes to play (the day's mail is about that), more forgeries.
    a_day_passes(engine)
    own = send(server, engine, sink, VICTIM, "signup nina pw-nina1 Nina Victim")
    for n in range(4, 7):
        forge_signup(n)
    forge(trent, f"add trent pw-trent1 {VICTIM}")
    outcome.mails_to_victim = [m for m in sink.messages[seen:] if m.to == VICTIM]
    assert len(own) == 1 and own[0] in outcome.mails_to_victim

    out = confirm(server, engine, sink, own[0], by_reply)
    outcome.answer = " ".join(m.body for m in out)
    outcome.own_ran = "Welcome, nina!" in outcome.answer
    outcome.forged_run = forged_run(engine)
    again = send(server, engine, sink, VICTIM, "signup nina2 pw-nina2")
    outcome.signed_up_again = any("Welcome, nina2!" in m.body for m in again)
    return outcome


@pytest.mark.parametrize("by_reply", [True, False], ids=["reply", "confirm-line"])
def test_a_yes_runs_the_owners_request_and_no_forged_one(public, engine, sink, by_reply):  # type: ignore[no-untyped-def]
    outcome = forge_then_confirm(public, engine, sink, by_reply)
    assert outcome.forged == 10
    assert outcome.forged_run == 0
    assert outcome.own_ran and outcome.signed_up_again
    with engine.connect() as conn:
        people = list(conn.scalars(select(User.userid).where(PEOPLE).order_by(User.id)))
        mallory = conn.scalar(select(User.email).where(User.userid == "mallory"))
    assert people == ["mallory", "trent", "nina", "nina2"]
    assert mallory == "mallory@example.org"
    # One mail a day to the victim: day one's names mallory's request, day two's the signup.
    first, second = outcome.mails_to_victim
    assert "a player asked us to send their game mail to this address" in flat(first.body)
    assert "with the command signup" in flat(second.body)
    assert "5 other requests wait" in flat(second.body)  # day one's forged signups, mallory's
    assert "Your reply does not run them" in flat(second.body)
    for mail in (first, second):  # nobody's text: no user id, no name, no password
        text = mail.body.replace(VICTIM, "")
        assert not any(word in text for word in ("nina", "Nina", "evil", "mallory", "trent"))
    # The answer to the yes says the rest wait, not run; mallory's request among them.
    answer = flat(outcome.answer)
    assert "8 other requests wait" in answer and "This does not run them" in answer
    # Trent was told his request could not be asked about today (a mail went): nothing waits.
    assert all(
        "had a mail from us within the last day" in flat(m.body) for m in outcome.forger_replies[1:]
    )


def test_another_users_request_needs_its_own_yes_and_expires(public, engine, sink):  # type: ignore[no-untyped-def]
    """mallory's move to the victim's address waits for a yes to that request; the victim's
    yes to her own does not give it, nor does her address being confirmed; unanswered, it
    expires, and its code then does nothing."""
    outcome = forge_then_confirm(public, engine, sink)
    first = outcome.mails_to_victim[0]
    with engine.connect() as conn:
        waiting = conn.scalar(select(func.count()).select_from(HeldRequest))
    assert waiting == 1  # mallory's (the held signups had no mail of their own: no code)

    # The victim's address is hers now: nobody else may ask for it.
    [refused] = send(public, engine, sink, "trent@example.org", f"add trent pw-trent1 {VICTIM}")
    assert "belongs to another user" in refused.body
    # An address confirmed without an account (its owner asked for help): trent asking to
    # use it still needs its owner's yes to that request.
    quiet = "quiet@victim.test"
    [asked] = send(public, engine, sink, quiet, "help")
    assert len(confirm(public, engine, sink, asked, True)) == 2  # the answer, then the help
    a_day_passes(engine, quiet)
    out = send(public, engine, sink, "trent@example.org", f"add trent pw-trent1 {quiet}")
    [asked] = [m for m in out if m.to == quiet]
    assert "a player asked us to take their commands from this address" in flat(asked.body)
    assert "We do that only if the owner of this address says yes" in flat(asked.body)
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(UserAddress)) == 0

    # A week on, unanswered requests are dropped; their codes confirm nothing.
    factory = session_factory(engine)
    expire_held(factory, datetime.now(UTC) + timedelta(days=8))
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(HeldRequest)) == 0
    for mail in (first, asked):
        [late] = confirm(public, engine, sink, mail, True)
        assert "confirms nothing" in late.body
    assert forged_run(engine) == 0
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(UserAddress)) == 0


def test_a_yes_to_another_users_request_makes_that_one(public, engine, sink):  # type: ignore[no-untyped-def]
    """The way the owner gives the yes: their reply to the mail about that request."""
    sign_up(public, engine, sink, "bob")
    out = send(public, engine, sink, "bob@example.org", "add bob pw-bob1 bob@home.example")
    [asked] = [m for m in out if m.to == "bob@home.example"]
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(UserAddress)) == 0
    [answer] = confirm(public, engine, sink, asked, False)
    assert "bob may send us commands from bob@home.example" in flat(answer.body)
    with engine.connect() as conn:
        assert conn.scalar(select(UserAddress.address)) == "bob@home.example"
