"""Issue 48, item 1, over real SMTP with the running listener, relay and database: a player who
forges "undeliverable" reports about their own mail, then ``add``s a second address and moves
from it, gains no clock time beyond their vacation bank (the figure, goal 0), their opponent
is told the truth about the clocks all along, and the mark is gone once they write.

The reports are the genuine Postfix ones of tests/inbound/data/bounces/, sent by the player to the
return paths of mail they received (the helpers of test_bounces_by_mail.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from pbmserv.config import Settings
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import Address, Seat, User
from pbmserv.time_controls import DAY
from tests.e2e.by_mail.test_bounces_by_mail import bounce_address, report_to, send
from tests.support import Received, Sink, settle, smtp_send

pytestmark = pytest.mark.db

ALICE, BOB, BOB2 = "alice@example.org", "bob@example.org", "bob2@example.net"
#: How long ago the attacker's pause is made to have begun (the server runs in real time).
PAUSED_DAYS = 5


def forge_report(server, engine, path: str) -> None:  # type: ignore[no-untyped-def]
    """bob, from his own mailbox, sends a made-up "undeliverable" report to ``path``."""
    assert smtp_send(server.port, report_to(path), mail_from=BOB, to=path)[0] == 250
    settle(engine)


def bobs_facts(engine) -> tuple[User, Address, list[Seat]]:  # type: ignore[no-untyped-def]
    """bob's user, his address's row (made by the first report), the seats of board 1."""
    with session_factory(engine)() as session:
        user = session.scalars(select(User).where(User.userid == "bob")).one()
        address = session.get(Address, BOB) or Address(address=BOB, hard_bounces=0)
        seats = list(session.scalars(select(Seat).where(Seat.game_id == 1).order_by(Seat.seat)))
        session.expunge_all()
        return user, address, seats


def clock_line(mail: Received) -> str:
    return next(line for line in mail.body.splitlines() if line.startswith("Clocks ("))


def test_self_forged_bounces_then_a_move_from_a_second_address_gain_nothing(  # type: ignore[no-untyped-def]
    server, engine, sink: Sink, settings: Settings
) -> None:
    send(server, engine, sink, ALICE, "signup alice secret1")
    send(server, engine, sink, BOB, "signup bob hunter22")
    to_bob = send(server, engine, sink, BOB, "extinction challenge -clock=fast alice bob")
    to_bob += send(server, engine, sink, ALICE, "extinction move 1 alice secret1 e4")
    to_bob += send(server, engine, sink, ALICE, "extinction chat 1 alice secret1 your move")
    received = [m for m in to_bob if m.to == BOB]
    assert len(received) >= settings.bounce_limit
    _user, _address, seats = bobs_facts(engine)
    assert seats[1].clock_since is not None  # bob's clock runs

    # The attack: three made-up reports to the return paths of mail bob received.
    paths = [bounce_address(engine, settings, mail) for mail in received]
    before = len(sink.messages)
    for path in paths[: settings.bounce_limit]:
        forge_report(server, engine, path)
    [told] = sink.messages[before:]
    assert told.to == ALICE and told.subject == "pbmserv: bob cannot be reached by mail"
    assert "taken from bob's vacation days" in told.body

    # bob's clock stopped, as on a vacation taken from his bank.
    user, address, seats = bobs_facts(engine)
    assert address.bouncing_since is not None and seats[1].clock_since is None
    assert user.away_since is not None and user.vacation_unreachable
    # As if it were five days ago (the server runs in real time).
    with transaction(session_factory(engine)) as session:
        row = session.get_one(Address, BOB)
        assert row.bouncing_since is not None
        row.bouncing_since -= timedelta(days=PAUSED_DAYS)
        attacker = session.scalars(select(User).where(User.userid == "bob")).one()
        if attacker.away_since is not None:
            attacker.away_since -= timedelta(days=PAUSED_DAYS)
    paused_since = bobs_facts(engine)[1].bouncing_since
    assert paused_since is not None

    # alice's board mail tells the truth: no clock runs.
    [shown] = send(server, engine, sink, ALICE, "extinction board 1")
    line = clock_line(shown)
    assert "(stopped: our mail cannot reach bob)" in line and "no clock runs now" in line

    # bob adds a second address from it, then moves from it.
    [added] = send(server, engine, sink, BOB2, f"add bob hunter22 {BOB2}")
    assert added.to == BOB2
    assert bobs_facts(engine)[0].away_since is not None  # not yet bob's when it came
    out = send(server, engine, sink, BOB2, "extinction move 1 bob hunter22 e5")
    restarted = datetime.now(UTC)

    # bob is reachable: the mark is gone, mail goes to him again, the pause is charged.
    user, address, seats = bobs_facts(engine)
    assert address.bouncing_since is None and address.hard_bounces == 0
    assert user.away_since is None and not user.vacation_unreachable
    assert BOB in [m.to for m in out]  # his board mail comes again
    pause = (restarted - paused_since.replace(tzinfo=UTC)).total_seconds()
    gained = max(pause - user.vacation_days_used * DAY, 0.0)
    assert user.vacation_days_used == PAUSED_DAYS + 1 and gained == 0.0

    # alice is told, and her board mail says her clock runs: it does.
    to_alice = {m.subject: m for m in out if m.to == ALICE}
    assert (
        "bob is back (our mail could not reach bob for a while)"
        in to_alice["pbmserv: bob's clocks run again"].body
    )
    [board] = [m for m in out if m.to == ALICE and m.subject == "extinction board 1"]
    assert "the clock of the player to move runs" in clock_line(board)
    assert seats[0].clock_since is not None and seats[1].clock_since is None
