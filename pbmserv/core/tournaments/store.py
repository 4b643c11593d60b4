"""Reading tournaments from the database: the tournament named in a command, its entries, its
matches and their boards, and the rules stored with it.

Every read of a tournament's rows refreshes objects the session already holds
(``populate_existing``): the service locks the tournament row first and must then see what
other transactions committed before it got the lock, not what this session read earlier.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, func, select

from pbmserv.core.context import CommandContext
from pbmserv.core.results import CommandError
from pbmserv.db.models import Entry, GameRow, Match, Tournament, User
from pbmserv.tournaments import Format, PolyludicRules, parse_format, polyludic_rules

LIST_HINT = 'Send "tournament list" for the tournaments.'


def _fresh(query: Select[Any]) -> Select[Any]:
    return query.execution_options(populate_existing=True)


def find_tournament(ctx: CommandContext, text: str, *, for_update: bool = False) -> Tournament:
    """The tournament called ``text`` (its number, or its name in any case)."""
    digits = text.lstrip("#")
    if digits.isdigit() and len(digits) <= 9:
        query = select(Tournament).where(Tournament.id == int(digits))
    else:
        query = select(Tournament).where(func.lower(Tournament.name) == text.lower())
    if for_update:
        # Serialises everything that changes one tournament (board ends, choices, joins,
        # withdrawals) across processes, so a round's end is seen by exactly one of them.
        query = query.with_for_update()
    tournament: Tournament | None = ctx.session.scalar(_fresh(query))
    if tournament is None:
        raise CommandError(f'there is no tournament "{text}"', hint=LIST_HINT)
    return tournament


def lock_tournament(ctx: CommandContext, tournament_id: int) -> Tournament:
    """The tournament row, locked for the rest of the transaction and read afresh."""
    query = select(Tournament).where(Tournament.id == tournament_id).with_for_update()
    tournament: Tournament = ctx.session.scalars(_fresh(query)).one()
    return tournament


def entries(ctx: CommandContext, tournament: Tournament) -> list[Entry]:
    """Every entry, best seed first (withdrawn players included)."""
    query = select(Entry).where(Entry.tournament_id == tournament.id).order_by(Entry.seed)
    return list(ctx.session.scalars(_fresh(query)))


def entry_of(ctx: CommandContext, tournament: Tournament, user: User) -> Entry | None:
    """The user's entry in the tournament, if they entered."""
    return next((e for e in entries(ctx, tournament) if e.user_id == user.id), None)


def matches(
    ctx: CommandContext, tournament: Tournament, round_number: int | None = None
) -> list[Match]:
    """The tournament's matches (of one round, or all), by round and then in board order."""
    query = select(Match).where(Match.tournament_id == tournament.id)
    if round_number is not None:
        query = query.where(Match.round == round_number)
    return list(ctx.session.scalars(_fresh(query.order_by(Match.round, Match.id))))


def match_boards(ctx: CommandContext, match_ids: Sequence[int]) -> dict[int, list[GameRow]]:
    """The boards of each match, oldest first (deciding games come last)."""
    boards: dict[int, list[GameRow]] = {match_id: [] for match_id in match_ids}
    if match_ids:
        query = select(GameRow).where(GameRow.match_id.in_(match_ids)).order_by(GameRow.id)
        for row in ctx.session.scalars(_fresh(query)):
            boards[row.match_id].append(row)
    return boards


def tournament_format(tournament: Tournament) -> Format:
    return parse_format(tournament.format)


def listed_game(tournament: Tournament, label: str) -> dict[str, Any]:
    """The listed game with this label: ``{"label", "name", "options"}``."""
    return next(g for g in tournament.games if g["label"] == label)


def labels(tournament: Tournament) -> list[str]:
    return [g["label"] for g in tournament.games]


def polyludic(tournament: Tournament) -> PolyludicRules | None:
    """The poly-ludic rules, for a tournament that lists more than one game."""
    params = tournament.params.get("polyludic")
    if not params:
        return None
    # The listed order, whatever order the database gives the stored mapping back in.
    initial_pg = {label: params["pg"][label] for label in labels(tournament)}
    return polyludic_rules(initial_pg, params["ps"], params["pc"], params["lp"])
