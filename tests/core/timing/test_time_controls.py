"""Correspondence time controls: how they are written, how a time left reads, and the clock
accounting of a board over many moves (no database: the rows are plain objects here)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.timing import clocks
from pbmserv.db.models import GameRow, Seat, User
from pbmserv.time_controls import (
    DAY,
    HOUR,
    TimeControl,
    TimeControlError,
    format_duration,
    parse_time_control,
)


def test_written_controls_and_presets() -> None:
    assert parse_time_control("10d+36h/10d") == TimeControl(10 * DAY, 36 * HOUR, 10 * DAY)
    assert parse_time_control("normal") == parse_time_control("10d+36h/10d")
    assert parse_time_control("FAST") == TimeControl(3 * DAY, DAY, 3 * DAY)
    assert parse_time_control("3d") == TimeControl(3 * DAY, 0, 3 * DAY)
    assert parse_time_control("1d12h+90m/2d") == TimeControl(36 * HOUR, 90 * 60, 2 * DAY)
    assert parse_time_control("none") is None and parse_time_control("off") is None
    assert str(parse_time_control("1d12h+90m/2d")) == "36h+1h30m/2d"
    assert str(parse_time_control("normal")) == "10d+36h/10d"
    assert parse_time_control(str(parse_time_control("slow"))) == parse_time_control("slow")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "is not a time"),
        ("ten days", "is not a time"),
        ("10x", "is not a time"),
        ("30m", "between 1 hour and 365 days"),
        ("400d", "between 1 hour and 365 days"),
        ("3d+31d", "at most 30 days a move"),
        ("10d+1d/5d", "at least its starting time"),
    ],
)
def test_a_control_that_cannot_be_read_says_why(text: str, why: str) -> None:
    with pytest.raises(TimeControlError, match=why):
        parse_time_control(text)


def test_a_time_left_reads_in_its_two_largest_units() -> None:
    assert format_duration(9 * DAY + 4 * HOUR + 59) == "9 days 4 hours"
    assert format_duration(6 * DAY) == "6 days"
    assert format_duration(DAY + 30 * 60) == "1 day"
    assert format_duration(5 * HOUR + 12 * 60) == "5 hours 12 minutes"
    assert format_duration(40 * 60) == "40 minutes"
    assert format_duration(30) == "less than a minute"
    assert format_duration(0) == format_duration(-5) == "no time"


START = datetime(2026, 3, 1, 12, tzinfo=UTC)


def two_seat_board(control: str) -> GameRow:
    row = GameRow(game="chameleon", status="active", to_move="0")
    # Both players accepted the board (a seat not yet accepted runs no clock: core.play.consent).
    row.seats = [
        Seat(seat=i, user=User(userid=f"p{i}", display_id=f"p{i}"), accepted_at=START)
        for i in (0, 1)
    ]
    clocks.start(row, parse_time_control(control), START, (48, 24))
    return row


@settings(max_examples=200, deadline=None)
@given(
    control=st.sampled_from(["fast", "normal", "slow", "1d+12h/2d", "2d"]),
    thinking=st.lists(st.integers(min_value=0, max_value=12 * DAY), min_size=1, max_size=60),
)
def test_over_many_moves_the_clocks_are_exact(control: str, thinking: list[int]) -> None:
    """Each move charges exactly the time taken, then adds the increment up to the cap; time
    left never goes below zero while the game goes on, and a clock that would is the loss."""
    spec = parse_time_control(control)
    assert spec is not None
    row = two_seat_board(control)
    now = START
    ctx = CommandContext(session=None, settings=Settings(), sender=None, clock=lambda: now)  # type: ignore[arg-type]
    expected = [float(spec.initial)] * 2
    for ply, seconds in enumerate(thinking):
        mover = ply % 2
        seat = row.seats[mover]
        assert clocks.deadline(seat) == now + timedelta(seconds=expected[mover])
        assert row.clock_due_at is not None and row.clock_due_at <= clocks.deadline(seat)
        if seconds > expected[mover]:
            # Time runs out before this move: the sweep would end the board there.
            assert clocks.left_at(seat, clocks.deadline(seat)) == pytest.approx(0.0)
            return
        now = now + timedelta(seconds=seconds)
        assert clocks.left_at(seat, now) >= 0
        row.to_move = str(1 - mover)
        after = clocks.after_move(ctx, row, mover)
        expected[mover] = float(min(expected[mover] - seconds + spec.increment, spec.maximum))
        assert after == {"0": pytest.approx(expected[0]), "1": pytest.approx(expected[1])}
        # Only the player to move has a running clock.
        assert [s.clock_since is not None for s in row.seats] == [mover == 1, mover == 0]


def test_a_player_away_has_no_running_clock_and_loses_no_time() -> None:
    row = two_seat_board("normal")
    row.seats[0].user.away_since = START + timedelta(days=3)
    clocks.run(row, START + timedelta(days=3), (48, 24))  # the clock stops as they go
    assert row.seats[0].clock_since is None and row.clock_due_at is None
    assert clocks.left_at(row.seats[0], START + timedelta(days=30)) == 7 * DAY
