"""Setting a tournament up: creation (games and parameters checked), opening, entries.

A tournament is created as a draft by the operator, opened for entries, and started (see
:mod:`pbmserv.core.tournaments.service`). Every mistake is a CommandError with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from sqlalchemy import func, select

from pbmserv.core.context import CommandContext
from pbmserv.core.results import CommandError
from pbmserv.db.models import Entry, Tournament, User
from pbmserv.games import all_games, find_game
from pbmserv.games.base import OptionError
from pbmserv.time_controls import TimeControlError, parse_time_control
from pbmserv.tournaments import Format, PolyludicError, parse_format, polyludic_rules

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,39}$")
NAME_RULE = '1-40 letters, digits, "_", "." or "-", starting with a letter'
GAME_SYNTAX = "[LABEL=]GAME[:OPTION=VALUE,...]"

#: Poly-ludic defaults: the seed's example values (PG 5, PS 3), one PC, LP one half.
DEFAULT_PG, DEFAULT_PS, DEFAULT_PC, DEFAULT_LP = 5, 3, 1, "1/2"


@dataclass(frozen=True)
class ListedGame:
    """A game of the tournament: the label players choose it by, and its checked options."""

    label: str
    name: str
    options: dict[str, Any]

    def as_json(self) -> dict[str, Any]:
        return {"label": self.label, "name": self.name, "options": self.options}


@dataclass(frozen=True)
class PolyludicParams:
    """The poly-ludic parameters as the operator gave them (None: the default)."""

    pg: Sequence[str] = ()  # "N" for every game, or "LABEL=N" for one
    ps: int | None = None
    pc: int | None = None
    lp: str | None = None

    @property
    def given(self) -> bool:
        return bool(self.pg) or any(v is not None for v in (self.ps, self.pc, self.lp))


def parse_listed_game(text: str) -> tuple[str | None, str, dict[str, str]]:
    """``[LABEL=]GAME[:OPTION=VALUE,...]`` as (label or None, game name, raw options)."""
    head, _, option_text = text.partition(":")
    label, _, name = head.rpartition("=")
    options: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in option_text.split(","))):
        key, sep, value = part.partition("=")
        if not sep or not key or not value:
            raise CommandError(f'"{part}" in "{text}" is not an option: write OPTION=VALUE')
        options[key.strip().lstrip("-")] = value.strip()
    return label or None, name.strip(), options


def listed_games(specs: Sequence[str]) -> list[ListedGame]:
    """The tournament's games, checked: two-player games, valid options, distinct labels."""
    if not specs:
        raise CommandError("a tournament lists at least one game", syntax=f"--game {GAME_SYNTAX}")
    parsed = [parse_listed_game(spec) for spec in specs]
    names = [name.lower() for _, name, _ in parsed]
    games = []
    for spec, (label, name, raw) in zip(specs, parsed, strict=True):
        game = find_game(name)
        if game is None:
            known = ", ".join(g.SPEC.name for g in all_games())
            raise CommandError(f'"{name}" in "{spec}" is not a game (games: {known})')
        if game.SPEC.players != 2:
            raise CommandError(f"{game.SPEC.title} is not a two-player game")
        try:
            options = game.validate_options(raw, 2)
        except OptionError as error:
            raise CommandError(f"{spec}: {error}") from None
        if label is None:
            # The game's name, unless it is listed twice: then its options tell them apart.
            label = game.SPEC.name
            if names.count(name.lower()) > 1:
                label = "-".join([label, *(str(v) for v in raw.values())])
        if not NAME_PATTERN.match(label):
            raise CommandError(f'"{label}" cannot be a game label: use {NAME_RULE}')
        games.append(ListedGame(label, game.SPEC.name, options))
    labels = [g.label.lower() for g in games]
    for label in labels:
        if labels.count(label) > 1:
            raise CommandError(
                f'the label "{label}" is given to two games: name them LABEL=GAME:OPTIONS'
            )
    return games


def polyludic_params(games: Sequence[ListedGame], given: PolyludicParams) -> dict[str, Any]:
    """The stored poly-ludic parameters, checked by the rules (PS must exceed PC...)."""
    pg = dict.fromkeys((g.label for g in games), DEFAULT_PG)
    for value in given.pg:
        label, sep, number = value.rpartition("=")
        target = [g.label for g in games if g.label.lower() == label.lower()] if sep else list(pg)
        if not target:
            raise CommandError(f'--pg {value}: "{label}" is not a label of the listed games')
        pg.update(dict.fromkeys(target, _whole("PG", number)))
    ps = DEFAULT_PS if given.ps is None else given.ps
    pc = DEFAULT_PC if given.pc is None else given.pc
    lp = DEFAULT_LP if given.lp is None else given.lp
    try:
        rules = polyludic_rules(pg, ps, pc, lp)
    except PolyludicError as error:
        raise CommandError(str(error)) from None
    return {"pg": pg, "ps": rules.ps, "pc": rules.pc, "lp": str(Fraction(rules.lp))}


def _whole(what: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CommandError(f'{what} "{text}" is not a whole number') from None


def create_tournament(
    ctx: CommandContext,
    name: str,
    format_name: str,
    game_specs: Sequence[str],
    *,
    rounds: int | None = None,
    match_games: int = 1,
    repechage: bool = False,
    polyludic: PolyludicParams = PolyludicParams(),
    clock: str | None = None,
) -> Tournament:
    """A new tournament, as a draft. More than one game listed makes it poly-ludic. Its boards
    have the clock ``clock`` (None: the config's ``tournament_clock``; "none": no clock)."""
    if not NAME_PATTERN.match(name):
        raise CommandError(f'"{name}" cannot be a tournament name: use {NAME_RULE}')
    if _named(ctx, name) is not None:
        raise CommandError(f'there is already a tournament called "{name}"')
    try:
        format_ = parse_format(format_name)
    except ValueError as error:
        raise CommandError(str(error)) from None
    if rounds is not None and format_ not in (Format.SWISS, Format.ITALO_SWISS):
        raise CommandError("--rounds is for swiss and italo: the other formats set their own")
    if rounds is not None and rounds < 1:
        raise CommandError(f"a tournament has at least one round, not {rounds}")
    if match_games < 1:
        raise CommandError(f"a match has at least one game, not {match_games}")
    if repechage and format_ is not Format.KNOCKOUT:
        raise CommandError("--repechage is for knockout tournaments")
    games = listed_games(game_specs)
    if len(games) == 1 and polyludic.given:
        raise CommandError(
            "--pg, --ps, --pc and --lp are for poly-ludic tournaments (two games or more)"
        )
    try:
        time_control = parse_time_control(clock or ctx.settings.tournament_clock)
    except TimeControlError as error:
        raise CommandError(f"--clock: {error}") from None
    params: dict[str, Any] = {
        "clock": str(time_control) if time_control else None,
        "rounds": rounds,
        "match_games": match_games,
        "repechage": repechage,
        "polyludic": polyludic_params(games, polyludic) if len(games) > 1 else None,
    }
    now = ctx.now()
    tournament = Tournament(
        name=name,
        format=format_.value,
        games=[g.as_json() for g in games],
        params=params,
        status="draft",
        round=0,
        created_at=now,
        updated_at=now,
    )
    ctx.session.add(tournament)
    ctx.session.flush()
    return tournament


def _named(ctx: CommandContext, name: str) -> Tournament | None:
    return ctx.session.scalar(select(Tournament).where(func.lower(Tournament.name) == name.lower()))


def open_tournament(ctx: CommandContext, tournament: Tournament) -> None:
    """Open a draft for entries."""
    if tournament.status != "draft":
        raise CommandError(f"tournament {tournament.name} is {tournament.status}, not a draft")
    tournament.status = "open"
    tournament.updated_at = ctx.now()


def enter(ctx: CommandContext, tournament: Tournament, user: User) -> Entry:
    """Enter ``user`` (before the start), as the next seed."""
    if tournament.status not in ("draft", "open"):
        raise CommandError(f"tournament {tournament.name} has started: entries are closed")
    seeds = ctx.session.scalars(select(Entry).where(Entry.tournament_id == tournament.id)).all()
    if any(e.user_id == user.id for e in seeds):
        raise CommandError(f"{user.display_id} is already entered in {tournament.name}")
    entry = Entry(
        tournament_id=tournament.id,
        user_id=user.id,
        user=user,
        seed=max((e.seed for e in seeds), default=0) + 1,
        withdrawn=False,
        joined_at=ctx.now(),
    )
    ctx.session.add(entry)
    tournament.updated_at = ctx.now()
    ctx.session.flush()
    return entry
