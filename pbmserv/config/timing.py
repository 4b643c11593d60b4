"""Time in play: idle boards (reminders, forfeits, the maintenance that sends them) and
correspondence clocks, for all games and per game."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pbmserv.config.errors import ConfigError
from pbmserv.time_controls import TimeControl, parse_time_control


@dataclass(frozen=True)
class IdleLimits:
    """Days a board may wait for a move before a reminder, and before it is forfeited."""

    remind_after_days: float
    forfeit_after_days: float


@dataclass(frozen=True)
class TimingSettings:
    # Idle boards: a reminder after this many days without a move, a forfeit after that many.
    remind_after_days: float = 7.0
    forfeit_after_days: float = 28.0
    # A board is forfeited only after a reminder sent at least this many days before (after
    # downtime too: an overdue board gets its reminder first, and this notice).
    forfeit_notice_days: float = 2.0
    # How often `serve` runs the maintenance (reminders, forfeits, digests); 0 turns it off.
    maintenance_interval_seconds: float = 3600.0
    # Correspondence clocks ("help clocks"): the clock of a board challenged without -clock=:
    # "none" (the idle rule above), a preset (fast, normal, slow) or one like 10d+36h/10d.
    clock: str = "none"
    # The clock of a tournament's boards when `admin tournaments create` names none: a round
    # then waits at most this clock plus the players' vacation days.
    tournament_clock: str = "normal"
    # Hours left at which a player whose clock runs is reminded, comma-separated.
    clock_reminder_hours: str = "48,24"
    # Vacation days a user has a year (UTC), taken by `vacation` and, when a clock runs out,
    # automatically while any are left.
    vacation_days_per_year: int = 20
    # How often `serve` looks for clocks due (a reminder, a time run out); 0 turns it off.
    clock_sweep_seconds: float = 60.0
    # Per-game idle limits that replace remind_after_days and forfeit_after_days: game name ->
    # limits.
    game_limits: Mapping[str, IdleLimits] = field(default_factory=dict)
    # Per-game clocks that replace ``clock``: game name -> time control.
    game_clocks: Mapping[str, str] = field(default_factory=dict)

    def time_control(self, game: str) -> TimeControl | None:
        """The clock of a new board of ``game`` when its challenge names none."""
        return parse_time_control(self.game_clocks.get(game, self.clock))

    @property
    def reminder_hours(self) -> tuple[int, ...]:
        """Hours left at which a running clock's player is reminded, most first."""
        return parse_hours(self.clock_reminder_hours)

    def idle_limits(self, game: str) -> IdleLimits:
        """The reminder and forfeit limits for boards of ``game``."""
        return self.game_limits.get(
            game, IdleLimits(self.remind_after_days, self.forfeit_after_days)
        )


def parse_hours(text: str) -> tuple[int, ...]:
    """``clock_reminder_hours`` read: whole hours, most first."""
    try:
        hours = sorted(
            {int(word) for word in text.replace(" ", "").split(",") if word}, reverse=True
        )
    except ValueError:
        raise ConfigError(
            f"clock_reminder_hours must be whole hours like 48,24, not {text!r}"
        ) from None
    if any(h < 1 for h in hours):
        raise ConfigError("clock_reminder_hours must be 1 or more each")
    return tuple(hours)
