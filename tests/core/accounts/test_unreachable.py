"""A player our mail cannot reach (core.accounts.unreachable) on a real database: the pause a bounce
gives is a vacation, charged to the bank; mail from any of the player's addresses, or a move
from anywhere, ends it; with the bank empty the clock runs; a vacation under way is not charged
twice; and the opponent's board mail and notices tell the truth about the clocks.

The attack of issue 48 (self-forged reports, then ``add`` a second address and move from it)
over real SMTP is in tests/e2e/security/test_bounce_clock_attack.py.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from pbmserv.core.accounts import bouncing
from pbmserv.core.context import CommandContext
from pbmserv.core.results import Notification
from pbmserv.core.timing.clock_sweep import sweep_clocks
from pbmserv.db.engine import transaction
from pbmserv.db.models import Seat, User
from pbmserv.outbound.compose import render_notice
from pbmserv.outbound.wording import notice_subject
from tests.core.accounts.test_bouncing import SETTINGS, address_row, bounce, sent_to
from tests.core.client import Client

pytestmark = pytest.mark.db

BOB, BOB2, ALICE = "bob@example.org", "bob2@example.net", "alice@example.org"
T0 = datetime(2030, 3, 1, 9, 0, tzinfo=UTC)
HOUR, DAY = timedelta(hours=1), timedelta(days=1)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def bobs_turn(players: Client) -> None:
    """bob challenges alice on a 3d+1d/3d clock; alice (White) moves 5 hours in: bob's clock
    runs; bob writes from a second address too."""
    players.settings = SETTINGS
    assert players.run("extinction challenge -clock=fast alice Bob", BOB, at=at(0)).ok
    assert players.run("extinction move 1 alice secret1 e4", at=at(5)).ok
    assert players.run(f"add Bob hunter22 {BOB2}", BOB2, at=at(5)).ok


def mark(players: Client, when: datetime) -> list[Notification]:
    """bob's address marked bouncing at ``when``; the notices to his opponents."""
    outcomes = [bounce(players, sent_to(players), now=when) for _ in range(SETTINGS.bounce_limit)]
    assert outcomes[-1].marked
    return outcomes[-1].notices


def bob(players: Client) -> User:
    with players.session() as session:
        found = session.scalars(select(User).where(User.userid == "bob")).one()
        session.expunge(found)
        return found


def bobs_clock(players: Client) -> tuple[float, bool]:
    ((left, since),) = players.query(
        select(Seat.clock_left, Seat.clock_since).where(Seat.game_id == 1, Seat.seat == 1)
    )
    return left, since is not None


def mail_from(players: Client, sender: str, when: datetime) -> tuple[bool, list[Notification]]:
    """What the processor does first with any message from ``sender``; its notices."""
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, sender, clock=lambda: when)
        cleared = bouncing.clear_for_sender(ctx, sender)
        return cleared, list(ctx.notifications)


def test_a_bounce_pauses_as_a_vacation_and_mail_from_another_address_ends_it(
    players: Client,
) -> None:
    bobs_turn(players)
    [told] = mark(players, at(6))
    # bob is on a vacation the bounce began: his clock stopped an hour into his turn.
    away = bob(players)
    assert away.away_since is not None and away.vacation_unreachable and away.vacation_automatic
    assert bobs_clock(players) == (3 * 86400 - 3600, False)
    # alice is told until when at the latest: the 20 days of bob's bank.
    text = render_notice(told, "pbmserv@x")
    assert told.to == ALICE and "Bob's clocks stop until 2030-03-21 15:00 UTC at the latest" in text
    # Her board mail tells the truth: no clock runs.
    shown = players.run("extinction board 1", at=at(48)).text
    assert "Bob has 2 days 23 hours (stopped: our mail cannot reach Bob)" in shown
    assert "no clock runs now" in shown and "the clock of the player to move runs" not in shown

    # Others' mail clears nothing.
    assert mail_from(players, "carol@example.org", at(100)) == (False, [])
    assert mail_from(players, "stranger@example.com", at(100)) == (False, [])
    assert bob(players).away_since is not None

    # Five days and an hour on, bob writes from his second address: he can be reached.
    back = at(6) + 5 * DAY + HOUR
    cleared, notices = mail_from(players, BOB2, back)
    assert cleared
    row = address_row(players, BOB)
    assert row is not None and row.bouncing_since is None and row.hard_bounces == 0
    here = bob(players)
    assert here.away_since is None and not here.vacation_unreachable
    assert here.vacation_days_used == 6  # five days and an hour: six days started
    # No time gained beyond the bank: the pause took no more than the days charged.
    assert (back - at(6)).total_seconds() <= here.vacation_days_used * 86400
    assert bobs_clock(players) == (3 * 86400 - 3600, True)
    [again] = notices
    assert again.to == ALICE and notice_subject(again) == "pbmserv: Bob's clocks run again"
    assert "Bob is back (our mail could not reach Bob for a while)" in render_notice(
        again, "pbmserv@x"
    )
    shown = players.run("extinction board 1", at=back + HOUR).text
    assert "Bob has 2 days 22 hours; the clock of the player to move runs" in shown


def test_a_move_from_anywhere_ends_the_pause_though_the_mark_stays(players: Client) -> None:
    bobs_turn(players)
    mark(players, at(6))
    moved = players.run("extinction move 1 Bob hunter22 e5", "elsewhere@example.com", at=at(30))
    assert moved.ok
    here = bob(players)
    assert here.away_since is None and here.vacation_days_used == 1
    # Charged: the hour before the pause; the increment after the move, capped at 3 days.
    assert bobs_clock(players) == (3 * 86400, False)
    row = address_row(players, BOB)
    assert row is not None and row.bouncing_since is not None  # mail to bob is still withheld


def test_with_the_bank_empty_the_clock_runs_on_and_runs_out(players: Client) -> None:
    bobs_turn(players)
    players.settings = replace(SETTINGS, vacation_days_per_year=0)
    notices = [
        bounce(players, sent_to(players), settings=players.settings, now=at(6))
        for _ in range(SETTINGS.bounce_limit)
    ][-1].notices
    assert bob(players).away_since is None and bobs_clock(players)[1]
    text = render_notice(notices[0], "pbmserv@x")
    assert "Bob has no vacation days left: Bob's clocks keep running" in text
    runs_out = at(5) + 3 * DAY
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, None, clock=lambda: runs_out + HOUR)
        assert sweep_clocks(ctx).lost_on_time == [1]


def test_a_vacation_under_way_is_not_charged_twice(players: Client) -> None:
    bobs_turn(players)
    assert players.run("vacation Bob hunter22 start 3", BOB, at=at(6)).ok
    [told] = mark(players, at(30))
    assert "Bob is on vacation already" in render_notice(told, "pbmserv@x")
    assert not bob(players).vacation_unreachable
    # bob's mail clears the mark, but his own vacation goes on as he asked.
    cleared, notices = mail_from(players, BOB, at(40))
    assert cleared and notices == [] and bob(players).away_since is not None
    planned_end = at(6) + 3 * DAY
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, None, clock=lambda: planned_end)
        assert sweep_clocks(ctx).vacations_ended == ["Bob"]
    assert bob(players).vacation_days_used == 3


def test_the_operator_giving_another_address_ends_the_pause(players: Client) -> None:
    from pbmserv.core import admin as ops

    bobs_turn(players)
    mark(players, at(6))
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, None, clock=lambda: at(30))
        ops.change_address(ctx, "bob", "bob@new.example.org")
    here = bob(players)
    assert here.away_since is None and here.vacation_days_used == 1
    assert bobs_clock(players)[1]
