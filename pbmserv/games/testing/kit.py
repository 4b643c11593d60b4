"""The kit's common parts: what a failure raises, a recorded playout, the viewers and option
sets every game is checked with, and the inputs no game may accept."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from pbmserv.games.base import (
    OMNISCIENT,
    PUBLIC,
    Game,
    Termination,
    Viewer,
)

#: The ends a game's rules may give (the others are the server's: resignation, forfeit...).
RULE_TERMINATIONS: Final = frozenset(
    {
        Termination.GOAL,
        Termination.NO_MOVES,
        Termination.SCORE,
        Termination.REPETITION,
        Termination.MOVE_LIMIT,
        Termination.AGREEMENT,
    }
)

#: A random game that has not ended after this many moves fails the kit.
DEFAULT_MAX_PLIES = 3000

#: Texts that are a move in no game. Each must raise a MoveError quoting it.
GARBAGE_INPUTS: tuple[str, ...] = (
    "",
    "   ",
    "?!",
    "zz9",
    "zq9" * 100,  # 300 characters
    "\u2603 \u00e9\u00df \u4e2d\u6587 \U0001f3b2",  # snowman, accents, CJK, a die
    "move move move",
)


class ConformanceError(AssertionError):
    """A game broke the contract; the message says where."""


@dataclass(frozen=True)
class Step:
    """One move of a playout: ``seat`` turned ``before`` into ``after`` by ``text``."""

    ply: int
    seat: int
    move: Any
    text: str
    before: Any
    after: Any


@dataclass
class Playout:
    """A game from ``new_game`` to its last move, with the options and seed that made it."""

    game: Game
    options: dict[str, Any]
    seed: int
    start: Any
    steps: list[Step] = field(default_factory=list)

    @property
    def final(self) -> Any:
        """The last state reached."""
        return self.steps[-1].after if self.steps else self.start

    @property
    def states(self) -> list[Any]:
        """Every state, the start first."""
        return [self.start, *(step.after for step in self.steps)]

    @property
    def record(self) -> list[tuple[int, str]]:
        """``(seat, text)`` of every move, as the server's move table stores them."""
        return [(step.seat, step.text) for step in self.steps]

    def where(self, ply: int | None = None) -> str:
        """Context for failure messages."""
        at = "" if ply is None else f" at ply {ply}"
        return f"{self.game.SPEC.name} {self.options} seed {self.seed}{at}"


def viewers(game: Game) -> list[Viewer]:
    """Every kind of viewer: each seat, PUBLIC and OMNISCIENT."""
    return [*range(game.SPEC.players), PUBLIC, OMNISCIENT]


def option_sets(game: Game) -> list[dict[str, str]]:
    """Raw option dicts worth playing: the defaults, then each int option at its minimum and
    maximum and each choice of each choice option (the other options left at their defaults)."""
    sets: list[dict[str, str]] = [{}]
    for opt in game.SPEC.options:
        values: list[Any] = []
        if opt.choices:
            values = list(opt.choices)
        elif opt.type is int:
            values = [v for v in (opt.minimum, opt.maximum) if v is not None]
        for value in values:
            if value != opt.default:
                sets.append({opt.name: str(value)})
    return sets


def fail(message: str) -> ConformanceError:
    return ConformanceError(message)


def normal_json(data: Any, where: str) -> Any:
    """``data`` after a trip through JSON text (tuples become lists, and so on)."""
    try:
        return json.loads(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise fail(f"{where}: dump() is not JSON-serialisable: {exc}") from None


def mentions(message: str, text: str) -> bool:
    """Whether ``message`` quotes ``text`` (a long text may be quoted by its start only)."""
    probe = text.strip()
    if not probe:
        return True
    if len(probe) > 40:
        probe = probe[:20]
    return any(f"{quote}{probe}" in message for quote in ('"', "'", "\u201c", "`"))
