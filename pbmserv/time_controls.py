"""Correspondence time controls: capped Fischer clocks, written ``10d+36h/10d`` (10 days to
start, 36 hours more after each move, never more than 10 days on the clock), and how a
remaining time reads in a mail.

Pure: no I/O. Times are whole seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MINUTE, HOUR, DAY = 60, 3600, 86400
UNITS = {"d": DAY, "h": HOUR, "m": MINUTE}
#: Named controls a challenge may use instead of writing one out (after Little Golem's 240 h
#: +36 h capped at 240 h, and OGS's correspondence 3 days +1 day capped at 3 days).
PRESETS = {"fast": "3d+1d/3d", "normal": "10d+36h/10d", "slow": "21d+3d/30d"}
#: Words that mean no clock: the board keeps the idle rule (reminder, then forfeit).
NO_CLOCK = ("none", "off", "no")
LONGEST = 365 * DAY

_DURATION = re.compile(r"(?:(\d{1,4})d)?(?:(\d{1,5})h)?(?:(\d{1,6})m)?")


class TimeControlError(ValueError):
    """A time control that cannot be read; the message says why, for the sender."""


@dataclass(frozen=True)
class TimeControl:
    initial: int
    increment: int
    maximum: int

    def __str__(self) -> str:
        return f"{_short(self.initial)}+{_short(self.increment)}/{_short(self.maximum)}"

    def describe(self) -> str:
        """In words, for help and board mail."""
        return (
            f"{format_duration(self.initial)} to start, {format_duration(self.increment)} more "
            f"a move, at most {format_duration(self.maximum)}"
        )

    def after_move(self, left: float) -> float:
        """The time on a clock after its player moves with ``left`` seconds still on it."""
        return float(min(left + self.increment, self.maximum))


def parse_duration(text: str) -> int:
    """``10d``, ``36h``, ``1d12h``, ``90m`` to seconds."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not text.strip() or match is None or not any(match.groups()):
        raise TimeControlError(f'"{text}" is not a time: write it like 10d, 36h, 1d12h or 90m')
    days, hours, minutes = (int(part or 0) for part in match.groups())
    return days * DAY + hours * HOUR + minutes * MINUTE


def parse_time_control(text: str) -> TimeControl | None:
    """A clock as a challenge or the config writes it: a preset's name, ``none``, or
    ``INITIAL[+INCREMENT][/MAXIMUM]`` (no increment: none; no maximum: the initial time)."""
    word = text.strip().lower()
    if word in NO_CLOCK:
        return None
    word = PRESETS.get(word, word)
    start, _, cap = word.partition("/")
    first, _, more = start.partition("+")
    initial = parse_duration(first)
    increment = parse_duration(more) if more else 0
    maximum = parse_duration(cap) if cap else initial
    if not HOUR <= initial <= LONGEST:
        raise TimeControlError("a clock starts with between 1 hour and 365 days")
    if increment > 30 * DAY:
        raise TimeControlError("a clock gains at most 30 days a move")
    if not initial <= maximum <= LONGEST:
        raise TimeControlError("a clock's maximum is at least its starting time, at most 365 days")
    return TimeControl(initial, increment, maximum)


def _short(seconds: int) -> str:
    """A duration as written in a control: whole days, else whole hours, else mixed."""
    if seconds % DAY == 0 and seconds:
        return f"{seconds // DAY}d"
    if seconds % HOUR == 0 and seconds:
        return f"{seconds // HOUR}h"
    days, rest = divmod(seconds, DAY)
    hours, rest = divmod(rest, HOUR)
    minutes = rest // MINUTE
    parts = [f"{n}{u}" for n, u in ((days, "d"), (hours, "h"), (minutes, "m")) if n]
    return "".join(parts) or "0h"


def format_duration(seconds: float) -> str:
    """A time left as a player reads it: the two largest units, rounded down ("9 days 4
    hours", "5 hours 12 minutes", "40 minutes"); "no time" at or below zero."""
    whole = int(seconds)
    if whole < MINUTE:
        return "no time" if whole <= 0 else "less than a minute"
    days, rest = divmod(whole, DAY)
    hours, rest = divmod(rest, HOUR)
    minutes = rest // MINUTE
    named = [(days, "day"), (hours, "hour"), (minutes, "minute")]
    first = next(i for i, (n, _) in enumerate(named) if n)
    shown = [(n, unit) for n, unit in named[first : first + 2] if n]
    return " ".join(f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in shown)
