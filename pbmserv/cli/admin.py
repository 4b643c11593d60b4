"""`pbmserv admin ...`: the operator's shell over users, boards, mail queues and maintenance.

Each action runs in one transaction through the same core as mail commands; the mail it causes
(board changes, new passwords) only goes into the outbox with it. The shell never delivers:
its settings (relay, spool, working folder) need not be the server's, so `pbmserv serve` (or
`pbmserv deliver`, run with the server's settings) sends the mail.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from pbmserv.cli import tables
from pbmserv.cli.admin_links import add_links_parser
from pbmserv.cli.admin_relay import add_relay_parser
from pbmserv.cli.admin_tournaments import add_tournament_parser
from pbmserv.cli.options import add_config_options
from pbmserv.config import Settings, mask_url
from pbmserv.core import admin as ops
from pbmserv.core.context import CommandContext
from pbmserv.core.digest import send_digests
from pbmserv.core.maintenance import run_maintenance
from pbmserv.core.ratings.history import rebuild_glicko
from pbmserv.core.results import CommandError
from pbmserv.core.timing.clock_sweep import sweep_clocks
from pbmserv.core.tournaments.service import settle_finished
from pbmserv.db.engine import make_engine, session_factory, transaction
from pbmserv.db.migrate import is_at_head
from pbmserv.db.times import as_utc, utcnow
from pbmserv.games import all_games

EX_USAGE_ERROR = 1
EX_CONFIG = 78

Action = Callable[[argparse.Namespace, CommandContext], None]


def _when(text: str) -> datetime:
    """An ISO date-time for --now; a naive one is taken as UTC."""
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO date-time") from None
    return as_utc(stamp)


def _positive(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return value


def add_admin_parser(commands: argparse._SubParsersAction) -> None:
    admin = commands.add_parser(
        "admin",
        help="the operator's shell (users, games, mail queues, ...); it queues mail, never sends",
        description="The operator's shell. Mail an action causes is queued; a running "
        "`pbmserv serve`, or `pbmserv deliver` with the server's settings, sends it.",
    )
    add_config_options(admin)
    groups = admin.add_subparsers(dest="group", required=True, metavar="GROUP")

    def action(group: Any, name: str, handler: Action, help_text: str) -> argparse.ArgumentParser:
        parser = group.add_parser(name, help=help_text, description=help_text)
        add_config_options(parser)
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")
        parser.set_defaults(handler=handler)
        return parser

    users = groups.add_parser("users", help="list, show and edit users").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    p = action(users, "list", _users_list, "list the users")
    p.add_argument("--disabled", action="store_true", help="only disabled users")
    p.add_argument(
        "--bouncing",
        action="store_true",
        help="only users whose address is marked bouncing, with its hard bounces, since when "
        "and the last delivery report (their boards wait: no reminders, no forfeits)",
    )
    action(users, "show", _users_show, "one user and their boards").add_argument("userid")
    action(users, "disable", _users_disable, "refuse a user's commands").add_argument("userid")
    action(users, "enable", _users_enable, "accept a user's commands again").add_argument("userid")
    action(
        users, "reset-password", _users_reset, "set a random password and mail it to the user"
    ).add_argument("userid")
    p = action(users, "set-email", _users_email, "change a user's address (both are told)")
    p.add_argument("userid")
    p.add_argument("new_address", metavar="ADDRESS")
    action(
        users,
        "confirm",
        _users_confirm,
        "confirm an address whose confirmation mail was lost: what the player's reply would "
        "have done (the held message it asked about is processed; other users' requests to "
        "use the address still wait for its owner)",
    ).add_argument("player_address", metavar="ADDRESS")

    games = groups.add_parser("games", help="list, show, undo, adjudicate, delete boards")
    games_actions = games.add_subparsers(dest="action", required=True, metavar="ACTION")
    p = action(games_actions, "list", _games_list, "list boards")
    p.add_argument("--game", choices=[g.SPEC.name for g in all_games()], help="only this game")
    p.add_argument("--status", choices=("active", "finished"), help="only boards in this state")
    p.add_argument("--player", help="only boards this user plays on")
    p.add_argument("--idle-days", type=_positive, help="only boards without a move for N days")
    p = action(games_actions, "show", _games_show, "a board as a player, the public or all see it")
    p.add_argument("board")
    p.add_argument(
        "--as",
        dest="viewer",
        default="omniscient",
        help="a player's user id or seat number, 'public', or 'omniscient' (the default)",
    )
    action(games_actions, "undo", _games_undo, "take back a board's last move").add_argument(
        "board"
    )
    p = action(games_actions, "adjudicate", _games_adjudicate, "end a board by your ruling")
    p.add_argument("board")
    who = p.add_mutually_exclusive_group(required=True)
    who.add_argument("--winner", help="the winner's user id")
    who.add_argument("--draw", action="store_true", help="declare a draw")
    p.add_argument("--reason", help="why, for the players and the history")
    p = action(games_actions, "delete", _games_delete, "delete a board (players are told)")
    p.add_argument("board")
    p.add_argument("--yes", action="store_true", help="do it: deleting cannot be undone")

    for box in ("inbox", "outbox"):
        box_actions = groups.add_parser(
            box, help=f"the {box}: what waits, what failed and why"
        ).add_subparsers(dest="action", required=True, metavar="ACTION")
        p = action(box_actions, "list", _box_list, f"messages in the {box}, newest first")
        statuses = ops.INBOX_STATUSES if box == "inbox" else ops.OUTBOX_STATUSES
        p.add_argument("--status", choices=statuses, help="only messages in this state")
        p.add_argument(
            "--limit", type=_count, default=50, help="at most this many, newest first (default 50)"
        )
        p = action(box_actions, "retry", _box_retry, "queue failed messages again")
        target = p.add_mutually_exclusive_group(required=True)
        target.add_argument("id", nargs="?", type=int, help="the message's id")
        target.add_argument("--failed", action="store_true", help="every failed message")
        if box == "outbox":
            p = action(
                box_actions,
                "purge",
                _outbox_purge,
                "delete delivered mail older than N days; empty processed messages as old "
                "(their deduplication keys stay)",
            )
            p.add_argument("--older-than", type=_positive, required=True, metavar="DAYS")

    p = action(
        groups,
        "maintain",
        _maintain,
        "remind idle boards' players, forfeit abandoned boards, send the daily digests due; "
        "the clocks' reminders, vacations and losses on time",
    )
    p.add_argument("--now", type=_when, help="act as if it were this time (ISO; for tests)")
    p = action(groups, "broadcast", _broadcast, "mail a message to every user")
    p.add_argument("--subject", required=True, help="the mail's subject (one line)")
    text = p.add_mutually_exclusive_group(required=True)
    text.add_argument("--text", help="the message")
    text.add_argument("--file", help="the message, from a file (- for stdin)")
    p.add_argument("--playing", action="store_true", help="only users with a board in play")
    ratings = groups.add_parser("ratings", help="the rating lists").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )
    action(
        ratings,
        "rebuild",
        _ratings_rebuild,
        "replay every rated board into Glicko-2 with today's rating period (Elo stays)",
    )
    add_tournament_parser(groups, action)
    add_relay_parser(groups, action)
    add_links_parser(groups, action)


def _quiet_stdout() -> None:
    """Send what is still to be printed nowhere (so that exiting raises nothing either)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def _failed(args: argparse.Namespace, problem: str, code: int) -> int:
    """Say why an action failed: a line on stderr, or with --json a JSON object on stdout
    (``{"ok": false, "error": ...}``, beside the ``{"ok": true, ...}`` of success)."""
    if getattr(args, "json", False):
        print(json.dumps({"ok": False, "error": problem}))
    else:
        print(f"pbmserv admin: {problem}", file=sys.stderr)
    return code


def run_admin(args: argparse.Namespace, settings: Settings) -> int:
    engine = make_engine(settings.db_url)
    if not is_at_head(engine):
        upgrade = f"run `pbmserv db upgrade --db {mask_url(settings.db_url)}` first"
        return _failed(args, upgrade, EX_CONFIG)
    from pbmserv.outbound.outbox_rows import queue_notifications

    factory = session_factory(engine)
    now = getattr(args, "now", None) or utcnow()
    try:
        with transaction(factory) as session:
            ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
            try:
                args.handler(args, ctx)
            except BrokenPipeError:  # `... --json | head`: the reader left; what was done stands
                _quiet_stdout()
            settle_finished(ctx)  # the handlers settle their own; this is a backstop
            # Mail is stamped and sent by the real clock, even when --now acts at another time.
            queue_notifications(session, settings, ctx.notifications, utcnow())
    except CommandError as error:
        return _failed(args, error.problem, EX_USAGE_ERROR)
    if ctx.notifications:
        print(
            f"pbmserv admin: {len(ctx.notifications)} message(s) queued; "
            "`pbmserv serve` or `pbmserv deliver` sends them",
            file=sys.stderr,
        )
    return 0


# --- handlers ------------------------------------------------------------------------------


def _users_list(args: argparse.Namespace, ctx: CommandContext) -> None:
    rows = ops.list_users(ctx, args.disabled, bouncing_only=args.bouncing)
    tables.print_rows(rows, args.json, "no bouncing users" if args.bouncing else "no users")


def _users_show(args: argparse.Namespace, ctx: CommandContext) -> None:
    tables.print_record(ops.show_user(ctx, args.userid), args.json)


def _users_disable(args: argparse.Namespace, ctx: CommandContext) -> None:
    tables.print_message(ops.set_disabled(ctx, args.userid, True), args.json)


def _users_enable(args: argparse.Namespace, ctx: CommandContext) -> None:
    tables.print_message(ops.set_disabled(ctx, args.userid, False), args.json)


def _users_reset(args: argparse.Namespace, ctx: CommandContext) -> None:
    tables.print_message(ops.reset_password(ctx, args.userid), args.json)


def _users_email(args: argparse.Namespace, ctx: CommandContext) -> None:
    tables.print_message(ops.change_address(ctx, args.userid, args.new_address), args.json)


def _users_confirm(args: argparse.Namespace, ctx: CommandContext) -> None:
    tables.print_message(ops.confirm_address(ctx, args.player_address), args.json)


def _games_list(args: argparse.Namespace, ctx: CommandContext) -> None:
    rows = ops.list_boards(ctx, args.game, args.status, args.player, args.idle_days)
    filtered = (args.game, args.status, args.player, args.idle_days) != (None,) * 4
    tables.print_rows(rows, args.json, "no boards match the filters" if filtered else "no boards")


def _games_show(args: argparse.Namespace, ctx: CommandContext) -> None:
    text = ops.show_board(ctx, args.board, args.viewer)
    if args.json:
        tables.print_message(text, True, board=args.board, viewer=args.viewer)
    else:
        print(text, end="")


def _games_undo(args: argparse.Namespace, ctx: CommandContext) -> None:
    tables.print_message(ops.undo_last(ctx, args.board), args.json)


def _games_adjudicate(args: argparse.Namespace, ctx: CommandContext) -> None:
    winner = None if args.draw else args.winner
    tables.print_message(ops.adjudicate(ctx, args.board, winner, args.reason), args.json)


def _games_delete(args: argparse.Namespace, ctx: CommandContext) -> None:
    if not args.yes and not _confirmed(f"Delete board {args.board}? It cannot be undone. [y/N] "):
        raise CommandError("nothing deleted: deleting a board cannot be undone; add --yes")
    tables.print_message(ops.delete_board(ctx, args.board), args.json)


def _confirmed(question: str) -> bool:
    """A yes from a person at a terminal; never from a script or a pipe."""
    if not sys.stdin.isatty():
        return False
    return input(question).strip().lower() in ("y", "yes")


def _box_list(args: argparse.Namespace, ctx: CommandContext) -> None:
    lister = ops.list_inbox if args.group == "inbox" else ops.list_outbox
    rows = lister(ctx, args.status, args.limit)
    empty = (
        f"no {args.group} message has status {args.status}"
        if args.status
        else f"{args.group} is empty"
    )
    tables.print_rows(rows, args.json, empty)
    more = ops.count_box(ctx, args.group, args.status) - len(rows)
    if more > 0:  # never stop short silently; with --json the array stays the whole stdout
        note = f"({more} more, older; use --limit {len(rows) + more} to see them all)"
        print(note, file=sys.stderr if args.json else sys.stdout)


def _box_retry(args: argparse.Namespace, ctx: CommandContext) -> None:
    retry = ops.retry_inbox if args.group == "inbox" else ops.retry_outbox
    count = retry(ctx, None if args.failed else args.id)
    if count == 0 and not args.failed:
        raise CommandError(f"{args.group} message {args.id} does not exist or has not failed")
    tables.print_message(f"{count} {args.group} message(s) queued again", args.json, count=count)


def _outbox_purge(args: argparse.Namespace, ctx: CommandContext) -> None:
    counts = ops.purge_delivered(ctx, args.older_than)
    tables.print_message(
        f"deleted {counts['outbox']} delivered message(s) and emptied {counts['inbox']} "
        f"processed one(s) older than {args.older_than:g} days (their keys stay, so a copy "
        "delivered again is still known)",
        args.json,
        **counts,
    )


def _read_text(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read {name}: {error}") from None


def _broadcast(args: argparse.Namespace, ctx: CommandContext) -> None:
    text = args.text if args.text is not None else _read_text(args.file)
    done = ops.broadcast(ctx, args.subject, text, playing_only=args.playing)
    tables.print_message(done, args.json)


def _ratings_rebuild(args: argparse.Namespace, ctx: CommandContext) -> None:
    boards = rebuild_glicko(ctx.session, ctx.settings.rating_period_days)
    tables.print_message(
        f"replayed {boards} rated board(s) into Glicko-2", args.json, boards=boards
    )


def _maintain(args: argparse.Namespace, ctx: CommandContext) -> None:
    clocks = sweep_clocks(ctx)
    report = run_maintenance(ctx)
    digested = send_digests(ctx)
    tables.print_message(
        f"reminded {len(report.reminded)} board(s), forfeited {len(report.forfeited)}, "
        f"sent {len(digested)} digest(s); clocks: reminded {len(clocks.reminded)}, "
        f"lost on time {len(clocks.lost_on_time)}",
        args.json,
        reminded=report.reminded,
        forfeited=report.forfeited,
        digests=digested,
        clock_reminded=clocks.reminded,
        lost_on_time=clocks.lost_on_time,
    )
