"""Poly-ludic play (seed 003, "Gestione torneo poli-ludico"): which game each match plays.

A tournament lists several games. Every player keeps a table with a playability value PG per
game, starting from the game's initial PG (say 5). In each match the player with the first move
chooses the game among those whose PG is not negative **in the chooser's own table** (the SPEC's
reading; the opponent's table does not restrict the choice). The chosen game's PG then drops by
PS (say 3) in both players' tables, so with PG 5 and PS 3 a player can choose a game twice
(5, 2, -1) before it is closed to them. After the match each player checks PP, the share of the
listed games whose PG is negative: while PP exceeds the level LP, PC is added to every PG of
that player's table. PS must exceed PC, so choosing a game always costs more than a
compensation gives back.

One choice is made per match: a match of several games plays the chosen game in all of them.
Because PC is at least 1 and LP below 1, the loop always ends with at least one game open, so
the chooser of the next match always has something to choose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple


class PolyludicError(ValueError):
    """Bad tournament parameters, or a choice the rules forbid; the message is for the user."""


@dataclass(frozen=True)
class PolyludicRules:
    """The parameters fixed when the tournament is created. Build with :func:`polyludic_rules`."""

    games: tuple[str, ...]
    initial_pg: tuple[int, ...]
    ps: int
    pc: int
    lp: Fraction

    def find_game(self, name: str) -> str:
        """The listed game called ``name`` (case-insensitive), or PolyludicError."""
        wanted = name.strip().lower()
        for game in self.games:
            if game.lower() == wanted:
                return game
        raise PolyludicError(
            f"{name!r} is not a game of this tournament: the games are {', '.join(self.games)}"
        )


def polyludic_rules(
    initial_pg: Mapping[str, int], ps: int, pc: int, lp: Fraction | float | str
) -> PolyludicRules:
    """Check the parameters: ``initial_pg`` maps each listed game to its starting PG; ``lp`` is
    a share such as 0.25 or "1/4". Raises PolyludicError with a one-line reason."""
    if not initial_pg:
        raise PolyludicError("a poly-ludic tournament lists at least one game")
    seen: set[str] = set()
    for game, pg in initial_pg.items():
        if game.lower() in seen:
            raise PolyludicError(f"{game} is listed twice")
        seen.add(game.lower())
        _whole(f"the PG of {game}", pg)
        if pg < 0:
            raise PolyludicError(f"the PG of {game} ({pg}) must not be negative")
    _whole("PS", ps)
    _whole("PC", pc)
    if pc < 1:
        raise PolyludicError(f"PC ({pc}) must be at least 1, or the compensation never ends")
    if ps <= pc:
        raise PolyludicError(f"PS ({ps}) must be greater than PC ({pc})")
    level = _share(lp)
    if not 0 <= level < 1:
        raise PolyludicError(f"LP ({lp}) must be at least 0 and less than 1")
    return PolyludicRules(tuple(initial_pg), tuple(initial_pg.values()), ps, pc, level)


def _whole(what: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolyludicError(f"{what} ({value}) must be a whole number")


def _share(value: Fraction | float | str) -> Fraction:
    try:
        # Through str, so that 0.1 means one tenth, not the nearest binary fraction.
        return Fraction(str(value).strip())
    except (ValueError, ZeroDivisionError):
        raise PolyludicError(f"LP ({value}) must be a number such as 0.25 or 1/4") from None


class TableRow(NamedTuple):
    """One line of a player's table."""

    game: str
    pg: int
    playable: bool


@dataclass(frozen=True)
class Playability:
    """One player's table: the PG of every listed game, in the listed order."""

    rules: PolyludicRules
    values: tuple[int, ...]

    @classmethod
    def start(cls, rules: PolyludicRules) -> Playability:
        """A new player's table: every game at its initial PG."""
        return cls(rules, rules.initial_pg)

    @classmethod
    def from_mapping(cls, rules: PolyludicRules, pg: Mapping[str, int]) -> Playability:
        """A stored table (see :meth:`as_mapping`); every listed game must have a value."""
        missing = [game for game in rules.games if game not in pg]
        if missing:
            raise PolyludicError(f"the table has no PG for {', '.join(missing)}")
        return cls(rules, tuple(pg[game] for game in rules.games))

    def as_mapping(self) -> dict[str, int]:
        """Game -> PG, in the listed order (JSON-ready; :meth:`from_mapping` reads it back)."""
        return dict(zip(self.rules.games, self.values, strict=True))

    def pg(self, game: str) -> int:
        """The PG of ``game`` (case-insensitive); PolyludicError if it is not listed."""
        return self.values[self.rules.games.index(self.rules.find_game(game))]

    def playable(self) -> tuple[str, ...]:
        """The games this player may choose: those whose PG is not negative."""
        return tuple(g for g, pg in zip(self.rules.games, self.values, strict=True) if pg >= 0)

    @property
    def pp(self) -> Fraction:
        """PP: the share of the listed games whose PG is negative."""
        return Fraction(sum(pg < 0 for pg in self.values), len(self.values))

    def after_choice(self, game: str) -> Playability:
        """The table once ``game`` has been chosen for a match of this player: its PG drops by
        PS. Allowed whatever the PG (the opponent's choice binds this player too)."""
        index = self.rules.games.index(self.rules.find_game(game))
        values = list(self.values)
        values[index] -= self.rules.ps
        return Playability(self.rules, tuple(values))

    def after_match(self) -> Playability:
        """The table after a match: PC added to every PG, again and again while PP > LP."""
        table = self
        while table.pp > self.rules.lp:
            table = Playability(self.rules, tuple(pg + self.rules.pc for pg in table.values))
        return table

    def rows(self) -> tuple[TableRow, ...]:
        """The table as rows, for a player's "my table" reply."""
        return tuple(
            TableRow(game, pg, pg >= 0)
            for game, pg in zip(self.rules.games, self.values, strict=True)
        )


def choose_game(
    chooser: Playability, opponent: Playability, game: str
) -> tuple[str, Playability, Playability]:
    """The player with the first move chooses ``game``: returns its listed name and both
    tables after the choice. PolyludicError if the game is not listed or is closed to the
    chooser (negative PG in the chooser's own table)."""
    name = chooser.rules.find_game(game)
    if chooser.pg(name) < 0:
        raise PolyludicError(
            f"you cannot choose {name}: its PG is {chooser.pg(name)}; "
            f"you may choose {_listing(chooser.playable())}"
        )
    return name, chooser.after_choice(name), opponent.after_choice(name)


def _listing(games: Sequence[str]) -> str:
    return ", ".join(games) if games else "no game (the tables need a compensation first)"
