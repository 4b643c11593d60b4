"""Correspondence clocks on real boards: chosen at the challenge or by the config, charged
exactly at each move, shown in board mail, reminders as they run down, the vacation bank used
when one runs out, and the loss on time (rated) when the bank is empty."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.maintenance import run_maintenance
from pbmserv.core.ratings import service as ratings
from pbmserv.core.results import Notification
from pbmserv.core.timing.clock_sweep import ClockReport, sweep_clocks
from pbmserv.db.engine import transaction
from pbmserv.db.models import GameRow, MoveRow, OutboxMessage, RatingChange, Seat, User
from pbmserv.outbound.compose import render_notice
from pbmserv.outbound.wording import notice_subject
from pbmserv.runtime.upkeep import sweep as processor_sweep
from tests.core.client import Client

pytestmark = pytest.mark.db

ALICE, BOB = "alice secret1", "Bob hunter22"
T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
HOUR, DAY = timedelta(hours=1), timedelta(days=1)


def mail(notification: Notification) -> tuple[str, str]:
    """The Subject and body the notice is mailed with."""
    return notice_subject(notification), render_notice(notification, "pbmserv@x")


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def sweep(players: Client, when: datetime) -> ClockReport:
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, None, clock=lambda: when)
        report = sweep_clocks(ctx)
        players.notifications = list(ctx.notifications)
        return report


def seconds_left(players: Client, board: int = 1) -> list[tuple[float | None, bool]]:
    rows = players.query(
        select(Seat.clock_left, Seat.clock_since).where(Seat.game_id == board).order_by(Seat.seat)
    )
    return [(left, since is not None) for left, since in rows]


def board_row(players: Client, board: int = 1) -> GameRow:
    with players.session() as session:
        row = session.get_one(GameRow, board)
        session.expunge(row)
        return row


def bob_accepts(players: Client, when: datetime, board: int = 1) -> None:
    """bob accepts the board alice started: from now on it runs his clock (core.play.consent)."""
    assert players.run(f"extinction accept {board} {BOB}", sender="bob@example.org", at=when).ok


def start_fast_game(players: Client) -> None:
    """alice (White) and bob on a 3d+1d/3d clock, accepted by bob; alice moves 5 hours in,
    so bob's runs."""
    made = players.run("extinction challenge -clock=fast alice bob", at=at(0))
    assert made.ok and "3 days to start, 1 day more a move, at most 3 days" in made.text
    bob_accepts(players, at(0))
    assert players.run(f"extinction move 1 {ALICE} e4", at=at(5)).ok


def test_a_move_charges_its_time_and_adds_the_increment_up_to_the_cap(players: Client) -> None:
    assert players.run("extinction challenge -clock=1d+12h/2d alice bob", at=at(0)).ok
    bob_accepts(players, at(0))
    assert seconds_left(players) == [(86400.0, True), (86400.0, False)]
    assert players.run(f"extinction move 1 {ALICE} e4", at=at(3)).ok
    assert seconds_left(players) == [(86400.0 - 3 * 3600 + 12 * 3600, False), (86400.0, True)]
    assert players.run(f"extinction move 1 {BOB} e5", sender="bob@example.org", at=at(4)).ok
    assert players.run(f"extinction move 1 {ALICE} Nf3", at=at(4.5)).ok
    # 33 h - 30 min + 12 h would be 44.5 h: the cap is 2 days, so 44.5 h stands.
    (alice, _), (bob, _) = seconds_left(players)
    assert alice == 33 * 3600 - 1800 + 12 * 3600 and bob == 86400.0 - 3600 + 12 * 3600
    moves = select(MoveRow.clocks).where(MoveRow.kind == "move").order_by(MoveRow.id)
    stored = [m for (m,) in players.query(moves)]
    assert stored[0] == {"0": 33 * 3600.0, "1": 86400.0}
    assert stored[-1] == {"0": alice, "1": bob}


def test_board_mail_shows_both_clocks(players: Client) -> None:
    start_fast_game(players)
    mails = {n.to: mail(n)[1] for n in players.notifications}
    assert "Clocks (3d+1d/3d): you have 3 days; alice has 3 days" in mails["bob@example.org"]
    # alice's 3 days - 5 hours + 1 day, capped at 3 days.
    assert "you have 3 days; Bob has 3 days" in mails["alice@example.org"]
    shown = players.run("extinction board 1", at=at(29)).text
    assert "alice has 3 days; Bob has 2 days" in shown


def test_reminders_at_48_and_24_hours_left_then_a_vacation_then_back(players: Client) -> None:
    start_fast_game(players)
    bob_runs_out = at(5) + 3 * DAY
    assert sweep(players, bob_runs_out - 49 * HOUR).reminded == []
    assert sweep(players, bob_runs_out - 47 * HOUR).reminded == [1]
    (reminder,) = players.notifications
    subject, body = mail(reminder)
    assert reminder.to == "bob@example.org" and subject == "extinction board 1"
    assert body.startswith("extinction board 1: reminder, your move")
    assert "You have 1 day 23 hours left on your clock" in body and "20 left" in body
    assert sweep(players, bob_runs_out - 30 * HOUR).reminded == []  # nothing new is due
    assert sweep(players, bob_runs_out - 23 * HOUR).reminded == [1]
    # Time runs out with vacation days left: the vacation begins at that moment.
    report = sweep(players, bob_runs_out + 2 * HOUR)
    assert report.vacations_begun == ["Bob"] and report.lost_on_time == []
    told = {n.to: mail(n) for n in players.notifications}
    assert "ran out" in told["bob@example.org"][1]
    assert "Bob is on vacation" in told["alice@example.org"][0]
    assert seconds_left(players)[1] == (pytest.approx(0.0, abs=1e-6), False)
    assert (
        "Vacation days left this year: 19"
        in players.run("status bob", at=bob_runs_out + 2 * HOUR).text
    )
    # Two and a half days later bob moves: the vacation ends, three days are charged, and the
    # move stands with the increment on the clock.
    back = bob_runs_out + 60 * HOUR
    assert players.run(f"extinction move 1 {BOB} e5", sender="bob@example.org", at=back).ok
    with players.session() as session:
        bob = session.scalars(select(User).where(User.userid == "bob")).one()
        assert bob.away_since is None and bob.vacation_days_used == 3
    assert seconds_left(players)[1] == (pytest.approx(86400.0), False)
    assert seconds_left(players)[0][1]  # alice's clock runs


def test_with_the_bank_empty_a_clock_running_out_loses_the_board_rated(players: Client) -> None:
    players.settings = Settings(confirm_addresses=False, vacation_days_per_year=2)
    start_fast_game(players)
    bob_runs_out = at(5) + 3 * DAY
    # The sweep comes by late (after downtime): the vacation days ran out meanwhile.
    report = sweep(players, bob_runs_out + 5 * DAY)
    assert report.vacations_begun == ["Bob"] and report.vacations_ended == ["Bob"]
    assert report.lost_on_time == [1]
    row = board_row(players)
    assert row.status == "finished" and row.result is not None
    assert row.result["termination"] == "time" and row.result["winners"] == [0]
    assert row.result["reason"] == "Bob (Black) lost on time"
    (kind, text, seat), *_ = players.query(
        select(MoveRow.kind, MoveRow.text, MoveRow.seat).where(MoveRow.kind == "time")
    )
    assert (kind, seat) == ("time", 1)
    changes = players.query(select(RatingChange.user_id, RatingChange.score))
    assert sorted(score for _, score in changes) == [0.0, 1.0]
    with players.session() as session:
        bob = session.scalars(select(User).where(User.userid == "bob")).one()
        assert bob.vacation_days_used == 2 and bob.away_since is None
    assert any(
        n.kind == "board" and "lost on time" in n.data["event"] for n in players.notifications
    )
    assert ratings.is_rated(row.result)


def test_a_move_after_time_ran_out_with_no_days_left_is_refused(players: Client) -> None:
    players.settings = Settings(confirm_addresses=False, vacation_days_per_year=0)
    start_fast_game(players)
    late = at(5) + 3 * DAY + HOUR
    refused = players.run(f"extinction move 1 {BOB} e5", sender="bob@example.org", at=late)
    assert not refused.ok and "lost on time" in refused.text
    assert board_row(players).ply == 1  # nothing changed; the sweep ends the board
    assert sweep(players, late).lost_on_time == [1]


def test_a_move_just_late_takes_a_vacation_day_and_stands(players: Client) -> None:
    start_fast_game(players)
    late = at(5) + 3 * DAY + 2 * HOUR  # before the sweep came by
    assert players.run(f"extinction move 1 {BOB} e5", sender="bob@example.org", at=late).ok
    with players.session() as session:
        bob = session.scalars(select(User).where(User.userid == "bob")).one()
        assert bob.vacation_days_used == 1 and bob.away_since is None
    assert board_row(players).ply == 2


def test_vacation_stops_every_clock_and_tells_the_opponents(players: Client) -> None:
    start_fast_game(players)
    players.run("extinction challenge -clock=normal bob carol", sender="bob@example.org")
    gone = players.run(f"vacation {BOB} start 5", sender="bob@example.org", at=at(10))
    assert gone.ok and "Bob is on vacation until 2026-12-06 19:00 UTC" in gone.text
    told = sorted(n.to for n in players.notifications if n.kind == "vacation")
    assert told == ["alice@example.org", "carol@example.org"]
    assert seconds_left(players)[1] == (3 * 86400.0 - 5 * 3600, False)
    assert not players.run(f"vacation {BOB} start", sender="bob@example.org", at=at(11)).ok
    # Nothing runs out while away: the sweep has nothing due on board 1.
    assert sweep(players, at(10) + 4 * DAY).lost_on_time == []
    back = players.run(f"vacation {BOB} stop", sender="bob@example.org", at=at(10) + 36 * HOUR)
    assert back.ok and "took 2 days; 18 left" in back.text
    assert seconds_left(players)[1] == (3 * 86400.0 - 5 * 3600, True)
    assert "is back" in mail(players.notifications[0])[0]


def test_a_planned_vacation_ends_by_itself(players: Client) -> None:
    start_fast_game(players)
    assert players.run(f"vacation {BOB} start 2", sender="bob@example.org", at=at(6)).ok
    assert sweep(players, at(6) + 2 * DAY - HOUR).vacations_ended == []
    assert sweep(players, at(6) + 2 * DAY + HOUR).vacations_ended == ["Bob"]
    # The clock started again when the vacation ended, not when the sweep came by.
    with players.session() as session:
        since = session.scalars(select(Seat.clock_since).where(Seat.seat == 1)).one()
    assert since is not None and since.replace(tzinfo=UTC) == at(6) + 2 * DAY


def test_bad_clocks_are_refused_politely_and_change_nothing(players: Client) -> None:
    for word, why in (("-clock=soon", "is not a time"), ("-clock=10d+1d/2d", "at least")):
        reply = players.run(f"extinction challenge {word} alice bob")
        assert not reply.ok and why in reply.text and "help clocks" in reply.text
    assert players.query(select(GameRow.id)) == []
    bad = players.run(f"vacation {BOB} later", sender="bob@example.org")
    assert not bad.ok and "vacation USERID PASSWORD start [DAYS] | stop" in bad.text


def test_the_config_gives_a_game_its_clock_and_boards_without_one_keep_the_idle_rule(
    players: Client,
) -> None:
    players.settings = Settings(confirm_addresses=False, game_clocks={"extinction": "slow"})
    assert players.run("extinction challenge alice bob", at=at(0)).ok
    assert players.run("chameleon challenge -size=5 alice bob", at=at(0)).ok
    assert players.run("extinction challenge -clock=none alice bob", at=at(0)).ok
    rows = players.query(select(GameRow.id, GameRow.time_control).order_by(GameRow.id))
    assert rows == [(1, "21d+3d/30d"), (2, None), (3, None)]
    later = at(0) + 20 * DAY
    with transaction(players.factory) as session:
        ctx = CommandContext(session, players.settings, None, clock=lambda: later)
        assert run_maintenance(ctx).reminded == [2, 3]  # the idle rule: not the clocked board
    assert sweep(players, later).reminded == [1]  # the clock's 48-hour mark instead


def test_the_servers_sweep_queues_the_mail_of_what_the_clocks_did(players: Client) -> None:
    """``serve`` runs runtime.upkeep.sweep every clock_sweep_seconds: reminders and the board
    lost on time reach the outbox, each in its own thread."""
    players.settings = Settings(confirm_addresses=False, vacation_days_per_year=0)
    start_fast_game(players)
    assert players.run("extinction challenge -clock=fast alice carol", at=at(0)).ok
    bob_runs_out = at(5) + 3 * DAY
    report = processor_sweep(players.factory, players.settings, lambda: bob_runs_out + HOUR)
    # Board 1 ran out, and board 2 before it (alice to move since T0, with 3 days).
    assert sorted(report.lost_on_time) == [1, 2] and report.examined == 2
    queued = players.query(select(OutboxMessage.recipient, OutboxMessage.kind))
    assert ("bob@example.org", "board") in queued and ("carol@example.org", "board") in queued
    # Nothing is due any more: the next sweep reads no board.
    again = processor_sweep(players.factory, players.settings, lambda: bob_runs_out + 2 * HOUR)
    assert again.examined == 0
