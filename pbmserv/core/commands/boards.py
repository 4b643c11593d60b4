"""Many boards at once: ``GAME games`` and ``list`` list them, ``all show`` and ``GAME showas``
send their diagrams (the public view, or with a password your own)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from pbmserv.core.accounts import logins
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import numbering, queued
from pbmserv.core.play.board_views import board_view
from pbmserv.core.play.boards import load_board
from pbmserv.core.results import CommandError, Section
from pbmserv.db.models import GameRow, Seat, User
from pbmserv.games import find_game
from pbmserv.games.base import AnyGame

#: Which boards: every one, those in play, those over, those waiting for the user(s) named.
FILTERS = ("active", "all", "inactive", "next")
#: Most boards listed in one reply, and most diagrams sent in one.
MAX_LISTED = 200
MAX_SHOWN = 20


def _boards(
    ctx: CommandContext, games: list[str], users: list[User], which: str
) -> tuple[list[GameRow], bool]:
    """The boards of ``games`` (all when empty) that ``users`` play on (anyone's when empty),
    filtered by ``which``; and whether there were more than :data:`MAX_LISTED`."""
    query = select(GameRow).order_by(GameRow.id)
    if games:
        query = query.where(GameRow.game.in_(games))
    if users:
        seats = select(Seat.game_id).where(Seat.user_id.in_([u.id for u in users]))
        query = query.where(GameRow.id.in_(seats))
    if which in ("active", "next"):
        query = query.where(GameRow.status == "active")
    elif which == "inactive":
        query = query.where(GameRow.status != "active")
    if which == "next":
        # Waiting for one of the users: at most their active boards, so filtered here.
        ids = {u.id for u in users}
        rows = [
            row
            for row in ctx.session.scalars(query)
            if any(s.user_id in ids and str(s.seat) in row.to_move.split(",") for s in row.seats)
        ]
        return rows[:MAX_LISTED], len(rows) > MAX_LISTED
    rows = list(ctx.session.scalars(query.limit(MAX_LISTED + 1)))
    return rows[:MAX_LISTED], len(rows) > MAX_LISTED


def _state_of(row: GameRow) -> str:
    """Whose move, or how it ended, from the row alone (no game state to load)."""
    users = {s.seat: s.user.display_id for s in row.seats}
    if row.status == "active":
        waiting = [users[int(s)] for s in row.to_move.split(",") if s]
        return f"{', '.join(waiting)} to move" if waiting else "in play"
    result = row.result or {}
    if result.get("declined"):
        return "declined"
    winners = [users[s] for s in result.get("winners", []) if s in users]
    return f"won by {' and '.join(winners)}" if winners else "drawn"


def _listing(rows: list[GameRow]) -> list[dict[str, Any]]:
    return [
        {
            "game": row.game,
            "board": row.id,
            "players": [s.user.display_id for s in row.seats],
            "moves": numbering.played_on(row.game, row.ply),
            "state": _state_of(row),
        }
        for row in rows
    ]


def _split_filter(words: tuple[str, ...], default: str) -> tuple[list[str], str]:
    """The words before a trailing filter word, and the filter."""
    if words and words[-1].lower() in FILTERS:
        return list(words[:-1]), words[-1].lower()
    return list(words), default


def _users(ctx: CommandContext, names: list[str]) -> list[User]:
    return [ctx.require_user(name) for name in names]


def _list_section(title: str, rows: list[GameRow], more: bool, summary: str, which: str) -> Section:
    data = {"title": title, "boards": _listing(rows), "more": more, "which": which}
    return Section("board_list", data, summary=summary)


@command(
    "games",
    "GAME games [USERID ...] [active|inactive|next|all]",
    "the boards of a game (of the users named), in play unless you say otherwise",
    game_scoped=True,
    min_words=2,
)
def game_boards(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    names, which = _split_filter(line.words[2:], "active")
    users = _users(ctx, names)
    if which == "next" and not users:
        raise CommandError('"next" lists the boards waiting for someone: name the user ids')
    rows, more = _boards(ctx, [game.SPEC.name], users, which)
    who = f" of {', '.join(u.display_id for u in users)}" if users else ""
    title = f"{game.SPEC.title} boards{who} ({which})"
    return _list_section(title, rows, more, f"{game.SPEC.name} games {which}", which)


@command(
    "list",
    "list [GAME ...]",
    "the boards in play, of every game or of the games named",
)
def list_boards(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    names = []
    for word in line.words[1:]:
        found = find_game(word)
        if found is None:
            raise CommandError(f'"{word}" is not a game here (send "games" for the list)')
        names.append(found.SPEC.name)
    rows, more = _boards(ctx, names, [], "active")
    title = f"Boards in play{' of ' + ', '.join(names) if names else ''}"
    return _list_section(title, rows, more, "list", "active")


def _views(ctx: CommandContext, rows: list[GameRow], viewer: User | None) -> list[dict[str, Any]]:
    views = []
    for row in rows[:MAX_SHOWN]:
        game = find_game(row.game)
        if game is None:  # a game no longer offered: its boards cannot be drawn
            continue
        board = load_board(ctx, game, str(row.id), for_update=False)
        seat = board.seat_of(viewer) if viewer is not None else None
        view = board_view(board, seat, viewer if seat is not None else None, now=ctx.now())
        # A player's own queue (GAME queue) is theirs to see.
        texts = queued.pending(ctx, board, seat) if seat is not None else []
        view["queued"] = [f"if {a}, then {b}" for a, b in zip(texts[::2], texts[1::2], strict=True)]
        views.append(view)
    return views


def _views_section(title: str, views: list[dict[str, Any]], total: int, summary: str) -> Section:
    data = {"title": title, "views": views, "left_out": max(0, total - len(views))}
    return Section("board_views", data, summary=summary)


@command(
    "all",
    "all show USERID [next|active]",
    "the diagrams of a user's boards of every game: those in play, or those waiting for them",
    min_words=3,
    max_words=4,
)
def all_show(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    if line.words[1].lower() != "show":
        raise CommandError(f'"all {line.words[1]}" is not a command: all show USERID')
    user = ctx.require_user(line.words[2])
    which = line.words[3].lower() if len(line.words) > 3 else "active"
    if which not in ("active", "next"):
        raise CommandError(f'"{line.words[3]}" is not a choice here: next or active')
    rows, _more = _boards(ctx, [], [user], which)
    title = f"Boards of {user.display_id} ({which})"
    return _views_section(title, _views(ctx, rows, None), len(rows), f"all show {which}")


@command(
    "showas",
    "GAME showas USERID PASSWORD BOARD|active|next|all",
    "your own view of one of your boards of a game, or of all of them in play",
    game_scoped=True,
    secret_words=(3,),
    min_words=5,
    max_words=5,
)
def showas(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    user = logins.authenticate(ctx, line.words[2], line.words[3])
    chosen = line.words[4].lower()
    if chosen.isdigit():
        board = load_board(ctx, game, chosen, for_update=False)
        if board.seat_of(user) is None:
            raise CommandError(f"{user.display_id} is not playing on board {board.number}")
        rows = [board.row]
    elif chosen in FILTERS:
        rows, _more = _boards(ctx, [game.SPEC.name], [user], chosen)
    else:
        raise CommandError(f'"{line.words[4]}" is neither a board number nor a choice')
    title = f"{game.SPEC.title} boards of {user.display_id} as {user.display_id} sees them"
    return _views_section(
        title, _views(ctx, rows, user), len(rows), f"{game.SPEC.name} showas {chosen}"
    )
