"""`pbmserv admin tournaments ...`: create, open, enter players, start, pair, show, withdraw, list.

Each action runs in the shell's one transaction (see :mod:`pbmserv.cli.admin`); the pairings,
standings and boards it causes are mailed like the server's own.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import Any

from pbmserv.cli import tables
from pbmserv.core.context import CommandContext
from pbmserv.core.results import CommandError, Section
from pbmserv.core.tournaments import players, report, service, store
from pbmserv.core.tournaments.mail import mail_entry_notice
from pbmserv.core.tournaments.setup import (
    GAME_SYNTAX,
    PolyludicParams,
    create_tournament,
    enter,
    open_tournament,
)
from pbmserv.outbound.compose import render_section
from pbmserv.tournaments import Format

Handler = Callable[[argparse.Namespace, CommandContext], None]
ActionMaker = Callable[[Any, str, Handler, str], argparse.ArgumentParser]


def add_tournament_parser(groups: Any, action: ActionMaker) -> None:
    """Add the ``tournaments`` group to the admin shell (``action`` makes one subcommand)."""
    actions = groups.add_parser(
        "tournaments", help="create, open, start, pair, show tournaments"
    ).add_subparsers(dest="action", required=True, metavar="ACTION")

    p = action(actions, "create", _create, "create a tournament (a draft: open it for entries)")
    p.add_argument("name", help="its name: a letter, then letters, digits, '_', '.' or '-'")
    p.add_argument(
        "--format", required=True, help=" | ".join(f.value for f in Format), metavar="FORMAT"
    )
    p.add_argument(
        "--game",
        dest="games",
        action="append",
        required=True,
        metavar=GAME_SYNTAX,
        help="a game to play, with options (repeat it: two games or more make it poly-ludic)",
    )
    p.add_argument("--rounds", type=int, help="swiss and italo: the number of rounds")
    p.add_argument("--match-games", type=int, default=1, help="games per match (default 1)")
    p.add_argument("--repechage", action="store_true", help="knockout: a consolation draw")
    p.add_argument(
        "--pg", action="append", default=[], metavar="N|LABEL=N", help="initial PG (default 5)"
    )
    p.add_argument("--ps", type=int, help="PS, taken from a chosen game's PG (default 3)")
    p.add_argument("--pc", type=int, help="PC, the compensation (default 1; less than PS)")
    p.add_argument("--lp", help="LP, the level of PP that brings compensation (default 1/2)")
    p.add_argument(
        "--clock",
        dest="boards_clock",
        help="the boards' clock: 10d+36h/10d, a preset (fast, normal, slow) or none "
        "(default: the config's tournament_clock)",
    )

    for name, handler, text in (
        ("open", _open, "open a draft tournament for entries"),
        ("start", _start, "close the entries and pair round 1"),
        ("pair", _pair, "pair the next round (when it did not happen by itself)"),
        ("show", _show, "a tournament: entrants, rounds, standings"),
    ):
        action(actions, name, handler, text).add_argument("tournament", help="its number or name")
    for name, handler, text in (
        ("add", _add, "enter a player (before the start)"),
        ("withdraw", _withdraw, "withdraw a player: their unfinished boards are forfeited"),
    ):
        p = action(actions, name, handler, text)
        p.add_argument("tournament", help="its number or name")
        p.add_argument("userid")
    action(actions, "list", _list, "list the tournaments")


def _user(ctx: CommandContext, userid: str) -> Any:
    user = ctx.find_user(userid)
    if user is None:
        raise CommandError(f'there is no user "{userid}"')
    return user


def _create(args: argparse.Namespace, ctx: CommandContext) -> None:
    tournament = create_tournament(
        ctx,
        args.name,
        args.format,
        args.games,
        rounds=args.rounds,
        match_games=args.match_games,
        repechage=args.repechage,
        polyludic=PolyludicParams(args.pg, args.ps, args.pc, args.lp),
        clock=args.boards_clock,
    )
    tables.print_message(
        f"tournament {tournament.id} ({tournament.name}) created as a draft; "
        f"games: {', '.join(store.labels(tournament))}",
        args.json,
        id=tournament.id,
        name=tournament.name,
        games=store.labels(tournament),
        params=tournament.params,
    )


def _open(args: argparse.Namespace, ctx: CommandContext) -> None:
    tournament = store.find_tournament(ctx, args.tournament, for_update=True)
    open_tournament(ctx, tournament)
    tables.print_message(f"tournament {tournament.name} is open for entries", args.json)


def _add(args: argparse.Namespace, ctx: CommandContext) -> None:
    tournament = store.find_tournament(ctx, args.tournament, for_update=True)
    entry = enter(ctx, tournament, _user(ctx, args.userid))
    mail_entry_notice(ctx, tournament, entry, entered=True)
    tables.print_message(
        f"{entry.user.display_id} is entered in {tournament.name} as seed {entry.seed}",
        args.json,
        seed=entry.seed,
    )


def _start(args: argparse.Namespace, ctx: CommandContext) -> None:
    tournament = store.find_tournament(ctx, args.tournament)
    service.start(ctx, tournament)
    _print_round(args, ctx, tournament, "started")


def _pair(args: argparse.Namespace, ctx: CommandContext) -> None:
    tournament = store.find_tournament(ctx, args.tournament)
    service.pair_next_round(ctx, tournament)
    _print_round(args, ctx, tournament, "paired")


def _print_round(args: argparse.Namespace, ctx: CommandContext, tournament: Any, verb: str) -> None:
    if tournament.status == "finished":
        tables.print_message(f"tournament {tournament.name} is over", args.json, round=None)
        return
    shown = report.show(ctx, tournament)
    current = next(r for r in shown["rounds_played"] if r["round"] == tournament.round)
    tables.print_message(
        f"tournament {tournament.name} {verb}: round {tournament.round}, "
        f"{len(current['matches'])} match(es) and bye(s); the pairings are mailed",
        args.json,
        round=tournament.round,
        matches=current["matches"],
    )


def _show(args: argparse.Namespace, ctx: CommandContext) -> None:
    shown = report.show(ctx, store.find_tournament(ctx, args.tournament))
    if args.json:
        print(json.dumps(shown, indent=2, default=str))
    else:
        shown_as = Section("tournament_show", {"t": shown})
        print(render_section(shown_as, ctx.settings.address), end="")


def _withdraw(args: argparse.Namespace, ctx: CommandContext) -> None:
    tournament = store.find_tournament(ctx, args.tournament)
    user = _user(ctx, args.userid)
    entry = store.entry_of(ctx, tournament, user)
    message = players.withdraw(ctx, tournament, user)
    if entry is not None:
        mail_entry_notice(ctx, tournament, entry, entered=False)
    tables.print_message(message, args.json)


def _list(args: argparse.Namespace, ctx: CommandContext) -> None:
    tables.print_rows(report.tournament_list(ctx, drafts=True), args.json, "no tournaments")
