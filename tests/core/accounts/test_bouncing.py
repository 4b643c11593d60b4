"""Bounces that teach (core.accounts.bouncing) on a real database: the bounce addresses and their
key, counting delivery reports, the mark, the mail gate, the paused forfeit clock, the opponents'
notice, clearing, and the operator's view.

The ``players`` fixture (alice, Bob, carol) is in tests/core/conftest.py.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Connection, Engine, select, update

from pbmserv.config import Settings
from pbmserv.core import admin as ops
from pbmserv.core.accounts import bouncing
from pbmserv.core.accounts.delivery_reports import DeliveryReport, RecipientStatus
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.core.maintenance import run_maintenance
from pbmserv.core.results import CommandError
from pbmserv.core.timing.clock_sweep import sweep_clocks
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import Address, GameRow, OutboxMessage, Seat, ServerKey
from pbmserv.outbound.compose import render_notice
from pbmserv.outbound.wording import notice_subject
from tests.core.client import Client

pytestmark = pytest.mark.db

BOB = "bob@example.org"
START = datetime(2030, 1, 1, tzinfo=UTC)
SETTINGS = Settings(confirm_addresses=False, bounce_limit=3)


def dsn(status: str = "5.1.1", action: str = "failed") -> DeliveryReport:
    permanent = action == "failed" and status.startswith("5")
    diagnostic = f"550 {status} <{BOB}>: Recipient address rejected: User unknown"
    return DeliveryReport((RecipientStatus(BOB, action, status, diagnostic, permanent),), "rfc3464")


def sent_to(client: Client, address: str = BOB, kind: str = "board") -> int:
    """An outbox row of mail sent to ``address``; its id."""
    with transaction(client.factory) as session:
        row = OutboxMessage(
            message_id=f"<{datetime.now(UTC).timestamp()}.{id(object())}@test>",
            recipient=address,
            kind=kind,
            raw=b"Subject: x\n\nx\n",
            status="sent",
            attempts=1,
            next_attempt_at=START,
            created_at=START,
            sent_at=START,
        )
        session.add(row)
        session.flush()
        return row.id


def bounce(
    client: Client,
    outbox_id: int,
    report: DeliveryReport | None = None,
    settings: Settings = SETTINGS,
    now: datetime = START,
) -> bouncing.BounceOutcome:
    with transaction(client.factory) as session:
        return bouncing.record_bounce(session, settings, outbox_id, report or dsn(), now)


def address_row(client: Client, address: str = BOB) -> Address | None:
    with client.factory() as session:
        return session.get(Address, address)


def mark_bouncing(client: Client, address: str = BOB) -> list[bouncing.BounceOutcome]:
    return [bounce(client, sent_to(client, address)) for _ in range(SETTINGS.bounce_limit)]


def in_context(client: Client, line: str, sender: str, settings: Settings = SETTINGS):  # type: ignore[no-untyped-def]
    """Run ``line`` as ``sender``; the context after it (its notices, what it withheld)."""
    with transaction(client.factory) as session:
        ctx = CommandContext(session=session, settings=settings, sender=sender)
        assert dispatch_line(ctx, line).ok
        return ctx


def maintain(client: Client, now: datetime):  # type: ignore[no-untyped-def]
    with transaction(client.factory) as session:
        return run_maintenance(CommandContext(session, SETTINGS, None, clock=lambda: now))


# --- the bounce addresses ------------------------------------------------------------------


def test_the_key_is_made_once_and_kept(engine: Engine) -> None:
    first = bouncing.bounce_key(engine)
    assert len(first) == 32
    with transaction(session_factory(engine)) as session:
        assert bouncing.bounce_key(session) == first
        assert session.scalars(select(ServerKey.name)).all() == ["bounce"]
    with engine.connect() as connection:
        assert bouncing.bounce_key(connection) == first


class _MissesFirstLook:
    """A connection whose first look for the key finds nothing: another server stores its key
    between this one's look and its insert."""

    def __init__(self, connection: Connection) -> None:
        self.connection, self.looked = connection, False

    def scalar(self, *args: object) -> object:
        if not self.looked:
            self.looked = True
            return None
        return self.connection.scalar(*args)  # type: ignore[call-overload]

    def __getattr__(self, name: str) -> object:
        return getattr(self.connection, name)


def test_two_servers_making_the_key_at_once_agree(engine: Engine) -> None:
    theirs = bytes(range(32))
    with engine.begin() as connection:
        connection.execute(ServerKey.__table__.insert().values(name="bounce", value=theirs.hex()))  # type: ignore[attr-defined]
        racing = _MissesFirstLook(connection)
        assert bouncing.bounce_key(racing) == theirs  # type: ignore[arg-type]
        assert racing.looked
    assert bouncing.bounce_key(engine) == theirs


def test_return_path_and_its_tag() -> None:
    key = bytes(range(32))
    path = bouncing.return_path("pbmserv@games.example.net", key, 1234)
    local, _at, domain = path.partition("@")
    assert domain == "games.example.net"
    base, _plus, tag = local.partition("+")
    assert base == "pbmserv" and tag.startswith("bounce-1234-")
    assert tag == tag.lower() and len(tag) == len("bounce-1234-") + bouncing.MAC_LENGTH
    assert bouncing.parse_bounce_tag(tag, key) == 1234
    # An MTA that folds the case of the local part changes nothing.
    assert bouncing.parse_bounce_tag(tag.upper(), key) == 1234

    # Another row's id under this MAC, another key, a mangled MAC: nothing.
    assert bouncing.parse_bounce_tag(tag.replace("1234", "1235"), key) is None
    assert bouncing.parse_bounce_tag(tag, bytes(32)) is None
    assert bouncing.parse_bounce_tag(tag[:-1] + ("a" if tag[-1] != "a" else "b"), key) is None
    for junk in ("bounce-", "bounce-x-abc", "b1-s0-abcdefghijklmnop", "", "bounce-1-" + "a" * 40):
        assert bouncing.parse_bounce_tag(junk, key) is None
    assert bouncing.return_path("pbmserv@x", key, 7) != bouncing.return_path("pbmserv@x", key, 8)


def test_a_tag_made_by_an_earlier_server_still_names_its_mail() -> None:
    """Bounces come days after the mail: a tag an earlier release wrote (HMAC-SHA256 of
    "bounce-17", its whole digest in base32, 12 letters) must still be read."""
    key = bytes(range(32))
    assert bouncing.bounce_tag(key, 17) == "bounce-17-5bjidv26h5xv"
    assert bouncing.parse_bounce_tag("bounce-17-5bjidv26h5xv", key) == 17


# --- counting ------------------------------------------------------------------------------


def test_hard_bounces_count_once_a_mail_and_soft_ones_not_at_all(players: Client) -> None:
    first = sent_to(players)
    counted = bounce(players, first)
    assert counted.hard and counted.counted and counted.count == 1 and not counted.marked
    # The same report again (or another report of the same mail): counted once.
    again = bounce(players, first)
    assert again.hard and not again.counted and "counted already" in again.summary
    # A delay, and a report of giving up with a 4.x.x status: nothing changes.
    assert not bounce(players, sent_to(players), dsn("4.4.1", "delayed")).counted
    assert not bounce(players, sent_to(players), dsn("4.4.7", "failed")).counted
    # Nothing readable, or a mail that is gone: nothing.
    with transaction(players.factory) as session:
        nothing = bouncing.record_bounce(session, SETTINGS, sent_to(players), None, START)
    assert not nothing.counted and "no delivery report" in nothing.summary
    assert not bounce(players, 999_999).counted
    row = address_row(players)
    assert row is not None and row.hard_bounces == 1 and row.bouncing_since is None
    assert row.last_bounce == f"outbox {first}: 5.1.1 failed {dsn().diagnostic}"
    # The outbox row says why, for `admin outbox list`, and stays sent (the purge takes it).
    with players.factory() as session:
        mail = session.get(OutboxMessage, first)
        assert mail is not None and mail.status == "sent"
        assert (mail.last_error or "").startswith("bounced: 5.1.1")


def test_the_limit_marks_the_address_and_the_opponents_are_told_once(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok  # board 1
    assert players.run("chameleon challenge -size=5 carol bob", sender="carol@example.org").ok
    assert players.run("chameleon challenge -size=5 alice carol").ok  # bob not on board 3
    outcomes = mark_bouncing(players)
    assert [o.count for o in outcomes] == [1, 2, 3]
    assert [o.marked for o in outcomes] == [False, False, True]
    notices = outcomes[-1].notices
    assert sorted(n.to for n in notices) == ["alice@example.org", "carol@example.org"]
    to_alice = next(n for n in notices if n.to == "alice@example.org")
    assert to_alice.data["boards"] == [{"game": "chameleon", "board": 1, "players": ["Bob"]}]
    assert notice_subject(to_alice) == "pbmserv: Bob cannot be reached by mail"
    text = render_notice(to_alice, "pbmserv@localhost")
    assert "Hello alice," in text and "Our mail to Bob cannot be delivered" in text
    assert "chameleon board 1 (with Bob)" in text
    # ... and until when Bob's clocks stop: while Bob's vacation days last
    # (core.accounts.unreachable).
    assert "Bob's clocks stop until 2030-01-21 00:00 UTC at the latest" in text
    assert "taken from Bob's vacation days" in text
    assert BOB not in text  # the opponents are not told the address
    row = address_row(players)
    assert row is not None and row.bouncing_since is not None
    # More bounces (mail queued before the mark) count, but nobody is told again.
    later = bounce(players, sent_to(players))
    assert later.counted and later.count == 4 and not later.marked and later.notices == []
    with players.factory() as session:
        assert bouncing.is_bouncing(session, "Bob@Example.ORG")
        assert not bouncing.is_bouncing(session, "alice@example.org")


def test_an_address_with_its_row_keeps_its_confirmation(players: Client) -> None:
    with transaction(players.factory) as session:
        session.add(Address(address=BOB, confirmed_at=START, created_at=START))
    mark_bouncing(players)
    row = address_row(players)
    assert row is not None and row.confirmed_at is not None and row.bouncing_since is not None


def test_the_limit_is_a_setting(players: Client) -> None:
    once = replace(SETTINGS, bounce_limit=1)
    assert bounce(players, sent_to(players), settings=once).marked


# --- the gate ------------------------------------------------------------------------------


def test_no_mail_but_replies_goes_to_a_bouncing_address(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    mark_bouncing(players)
    ctx = in_context(players, "chameleon move 1 alice secret1 c3x", "alice@example.org")
    assert "alice@example.org" in [n.to for n in ctx.notifications]
    assert BOB not in [n.to.lower() for n in ctx.notifications]
    assert ctx.withheld == 1
    chat = in_context(players, "message alice secret1 bob are you there?", "alice@example.org")
    assert chat.notifications == [] and chat.withheld == 1


def test_the_operator_cannot_mail_a_new_password_into_the_void(players: Client) -> None:
    mark_bouncing(players)
    with transaction(players.factory) as session:
        ctx = CommandContext(session=session, settings=SETTINGS, sender=None)
        with pytest.raises(CommandError, match="bounces"):
            ops.reset_password(ctx, "bob")


# --- the forfeit clock ---------------------------------------------------------------------


def test_a_bouncing_players_boards_wait_while_the_bank_lasts_then_go_on(players: Client) -> None:
    """Boards without a clock wait for a player our mail cannot reach as on a vacation, taken
    from their bank (core.accounts.unreachable); then they go on, as for any absence."""
    assert players.run("chameleon challenge -clock=none alice bob").ok  # board 1
    assert players.run("chameleon challenge -clock=none alice carol").ok  # board 2
    with transaction(players.factory) as session:
        session.execute(update(GameRow).values(updated_at=START, reminded_at=None))
    mark_bouncing(players)
    limits = SETTINGS.idle_limits("chameleon")
    assert limits.remind_after_days < SETTINGS.vacation_days_per_year
    report = maintain(players, START + timedelta(days=limits.remind_after_days + 1))
    assert report.reminded == [2]  # board 1 waits: bob is away
    # The bank (20 days) runs out: the vacation ends, and board 1 has its full time from then.
    bank_end = START + timedelta(days=SETTINGS.vacation_days_per_year)
    with transaction(players.factory) as session:
        ctx = CommandContext(session, SETTINGS, None, clock=lambda: bank_end)
        assert sweep_clocks(ctx).vacations_ended == ["Bob"]
    assert (
        maintain(players, bank_end + timedelta(days=limits.remind_after_days - 0.5)).reminded == []
    )
    assert maintain(
        players, bank_end + timedelta(days=limits.remind_after_days + 0.5)
    ).reminded == [1]
    # The mark stays (mail is still withheld) until bob writes.
    assert address_row(players).bouncing_since is not None  # type: ignore[union-attr]


def test_clearing_resets_the_count_below_the_limit_and_is_cheap_when_clean(
    players: Client,
) -> None:
    bounce(players, sent_to(players))
    with transaction(players.factory) as session:
        ctx = CommandContext(session=session, settings=SETTINGS, sender=BOB)
        assert ctx.has_bounced(BOB) and not ctx.is_bouncing(BOB)
        assert bouncing.clear_bouncing(ctx, BOB)
        assert not bouncing.clear_bouncing(ctx, BOB)  # nothing left to clear
        assert not bouncing.clear_bouncing(ctx, "nobody@example.org")
    row = address_row(players)
    assert row is not None and row.hard_bounces == 0


# --- the operator --------------------------------------------------------------------------


def test_the_operator_lists_the_bouncing_users_and_set_email_clears(players: Client) -> None:
    with transaction(players.factory) as session:
        ctx = CommandContext(session=session, settings=SETTINGS, sender=None)
        assert ops.list_users(ctx, bouncing_only=True) == []
    outcomes = mark_bouncing(players)
    with transaction(players.factory) as session:
        ctx = CommandContext(session=session, settings=SETTINGS, sender=None)
        [listed] = ops.list_users(ctx, bouncing_only=True)
        assert listed["userid"] == "Bob" and listed["email"] == BOB
        assert listed["bounces"] == 3 and listed["bouncing_since"].startswith("2030-01-01T00:00")
        assert listed["last_bounce"].startswith(f"outbox {outcomes[-1].outbox_id}: 5.1.1 failed")
        # The everyday list is as it was.
        assert set(ops.list_users(ctx)[0]) == {
            "userid",
            "email",
            "name",
            "disabled",
            "active_boards",
            "since",
            "robot",
        }
        # The operator vouches for the address again (or gives another): cleared.
        ops.change_address(ctx, "bob", BOB)
    with transaction(players.factory) as session:
        ctx = CommandContext(session=session, settings=SETTINGS, sender=None)
        assert ops.list_users(ctx, bouncing_only=True) == []


def test_help_says_what_a_bouncing_address_means(client: Client) -> None:
    page = client.run("help bounces")
    assert page.ok and "a vacation begins for you" in page.text
    assert "your clocks run again" in page.text and "as for any absence" in page.text
    assert "bounces" in client.run("help topics").text
    assert "If our mail to you bounces" in client.run("help clocks").text


def test_a_bouncing_players_clock_stops_while_the_bank_lasts(players: Client) -> None:
    made = players.run("extinction challenge -clock=fast bob alice", BOB, at=START)
    assert made.ok
    half_a_day = START + timedelta(hours=12)
    for _ in range(SETTINGS.bounce_limit):
        bounce(players, sent_to(players), now=half_a_day)
    ((left, since),) = players.query(
        select(Seat.clock_left, Seat.clock_since).where(Seat.game_id == 1, Seat.seat == 0)
    )
    assert (left, since) == (3 * 86400 - 12 * 3600, None)
    # A month on: the 20 days of the bank ended the pause, then the clock ran out.
    sweep = START + timedelta(days=30)
    with transaction(players.factory) as session:
        report = sweep_clocks(CommandContext(session, SETTINGS, None, clock=lambda: sweep))
    assert report.vacations_ended == ["Bob"] and report.lost_on_time == [1]
    ((left, since),) = players.query(
        select(Seat.clock_left, Seat.clock_since).where(Seat.game_id == 1, Seat.seat == 0)
    )
    assert left == 0 and since is None
