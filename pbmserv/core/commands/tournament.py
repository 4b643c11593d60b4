"""tournament list | show | join | withdraw | choose | table: the players' tournament commands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pbmserv.core.accounts import logins
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import CommandError, Section
from pbmserv.core.tournaments import players, report, store
from pbmserv.core.tournaments.setup import enter
from pbmserv.db.models import Tournament, User
from pbmserv.games.base import AnyGame
from pbmserv.resources import templates_dir

SYNTAX = "tournament list|show|join|withdraw|choose|table ..."


@dataclass(frozen=True)
class Subcommand:
    syntax: str
    words: int  # fewest words, "tournament" included
    run: Callable[[CommandContext, CommandLine], Section]


def _help_topic() -> str:
    # The command's name would hide a help topic of the same name ("help tournament" finds
    # the command first), so the topic's text is the command's own help. It uses no template
    # syntax, so it reads the same raw.
    return (templates_dir() / "help" / "tournament.txt.j2").read_text().strip()


def _tournament_and_player(
    ctx: CommandContext, line: CommandLine, *, for_update: bool = False
) -> tuple[Tournament, User]:
    """The tournament named on the line, and the player whose password it gives."""
    tournament = store.find_tournament(ctx, line.words[2], for_update=for_update)
    return tournament, logins.authenticate(ctx, line.words[3], line.words[4])


def _list(ctx: CommandContext, line: CommandLine) -> Section:
    rows = report.tournament_list(ctx, drafts=False)
    return Section("tournament_list", {"tournaments": rows}, summary="tournament list")


def _show(ctx: CommandContext, line: CommandLine) -> Section:
    tournament = store.find_tournament(ctx, line.words[2])
    if tournament.status == "draft":
        raise CommandError(f'there is no tournament "{line.words[2]}"', hint=store.LIST_HINT)
    context = {"t": report.show(ctx, tournament)}
    return Section("tournament_show", context, summary=f"tournament show {tournament.id}")


def _join(ctx: CommandContext, line: CommandLine) -> Section:
    tournament, user = _tournament_and_player(ctx, line, for_update=True)
    if tournament.status == "draft":
        raise CommandError(f"tournament {tournament.name} is not open for entries yet")
    entry = enter(ctx, tournament, user)
    context = {
        "tournament": report.describe(tournament, len(store.entries(ctx, tournament))),
        "userid": user.display_id,
        "seed": entry.seed,
    }
    return Section(
        "tournament_joined",
        context,
        summary=f"tournament join {tournament.id} {user.display_id}",
    )


def _withdraw(ctx: CommandContext, line: CommandLine) -> Section:
    tournament, user = _tournament_and_player(ctx, line)
    message = players.withdraw(ctx, tournament, user)
    return Section(
        "tournament_withdrawn",
        {"message": message, "name": tournament.name},
        summary=f"tournament withdraw {tournament.id} {user.display_id}",
    )


def _choose(ctx: CommandContext, line: CommandLine) -> Section:
    tournament, user = _tournament_and_player(ctx, line)
    choice = players.choose(ctx, tournament, user, line.words[5])
    context = {
        "name": tournament.name,
        "round": tournament.round,
        "game": choice.game,
        "opponent": choice.opponent,
        "boards": choice.boards,
        "table": [row._asdict() for row in choice.table.rows()],
    }
    return Section(
        "tournament_chosen",
        context,
        summary=f"tournament choose {tournament.id} {user.display_id} {choice.game}",
    )


def _table(ctx: CommandContext, line: CommandLine) -> Section:
    tournament, user = _tournament_and_player(ctx, line)
    table = players.playability_table(ctx, tournament, user)
    rules = table.rules
    context = {
        "name": tournament.name,
        "userid": user.display_id,
        "table": [row._asdict() for row in table.rows()],
        "pp": str(table.pp),
        "ps": rules.ps,
        "pc": rules.pc,
        "lp": str(rules.lp),
    }
    return Section(
        "tournament_table",
        context,
        summary=f"tournament table {tournament.id} {user.display_id}",
    )


SUBCOMMANDS = {
    "list": Subcommand("tournament list", 2, _list),
    "show": Subcommand("tournament show TOURNAMENT", 3, _show),
    "join": Subcommand("tournament join TOURNAMENT USERID PASSWORD", 5, _join),
    "withdraw": Subcommand("tournament withdraw TOURNAMENT USERID PASSWORD", 5, _withdraw),
    "choose": Subcommand("tournament choose TOURNAMENT USERID PASSWORD GAME", 6, _choose),
    "table": Subcommand("tournament table TOURNAMENT USERID PASSWORD", 5, _table),
}


def _tournament_words(words: tuple[str, ...]) -> int:
    """As many words as the subcommand takes (two for one we do not know)."""
    sub = SUBCOMMANDS.get(words[1].lower()) if len(words) > 1 else None
    return sub.words if sub else 2


@command(
    "tournament",
    SYNTAX,
    "tournaments: list them, show one, join, withdraw, choose a game, your playability table",
    secret_words=(4,),
    min_words=2,
    details=_help_topic(),
    max_words=_tournament_words,
)
def tournament(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    sub = SUBCOMMANDS.get(line.words[1].lower())
    if sub is None:
        raise CommandError(
            f'"{line.words[1]}" is not a tournament command',
            syntax="\n    ".join(s.syntax for s in SUBCOMMANDS.values()),
        )
    if len(line.words) < sub.words:
        raise CommandError("some words are missing", syntax=sub.syntax)
    try:
        return sub.run(ctx, line)
    except CommandError as error:
        error.syntax = error.syntax or sub.syntax
        raise
