"""games and status: what can be played, and one user's boards."""

from __future__ import annotations

from sqlalchemy import func, select

from pbmserv.core import game_service as service
from pbmserv.core.commands.registry import command
from pbmserv.core.commands.settings import settings_of
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import Section
from pbmserv.db.models import GameRow
from pbmserv.games import all_games
from pbmserv.games.base import AnyGame


@command("games", "games", "list the games you can play here", max_words=1)
def games(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    active = dict(
        ctx.session.execute(
            select(GameRow.game, func.count())
            .where(GameRow.status == "active")
            .group_by(GameRow.game)
        ).all()
    )
    rows = [
        {
            "name": g.SPEC.name,
            "title": g.SPEC.title,
            "players": g.SPEC.players,
            "options": [o.describe() for o in g.SPEC.options],
            "active": active.get(g.SPEC.name, 0),
        }
        for g in all_games()
    ]
    return Section("games", {"games": rows}, summary="games")


@command(
    "status",
    "status USERID",
    "list a user's active boards and whose move it is",
    min_words=2,
    max_words=2,
)
def status(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = ctx.require_user(line.words[1])
    boards = []
    for row, my_seat in service.active_seats(ctx, user):
        waiting = [int(s) for s in row.to_move.split(",") if s]
        opponents = [s.user.display_id for s in row.seats if s.user_id != user.id]
        boards.append(
            {
                "game": row.game,
                "board": row.id,
                "opponents": opponents,
                "moves": row.ply,
                "to_move": "your move"
                if my_seat in waiting
                else "waiting for "
                + ", ".join(s.user.display_id for s in row.seats if s.seat in waiting),
            }
        )
    context = {
        "userid": user.display_id,
        "boards": boards,
        "away": user.away_since is not None,
        "settings": settings_of(user),
    }
    return Section("status", context, summary=f"status {user.userid}")
