"""games and status: what can be played, and one user's boards."""

from __future__ import annotations

from sqlalchemy import func, select

from pbmserv.core.accounts.addresses import users_of_address
from pbmserv.core.commands.registry import command
from pbmserv.core.commands.settings import settings_of
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import game_service as service
from pbmserv.core.play import numbering
from pbmserv.core.results import CommandError, Section
from pbmserv.core.robots.turns import robots
from pbmserv.core.timing import vacations
from pbmserv.db.models import GameRow, User
from pbmserv.games import all_games, find_game
from pbmserv.games.base import AnyGame


def _named_games(words: tuple[str, ...]) -> int:
    """How many leading words of ``games ...`` may be quoted back: the command and the
    game names after it (any other word might be a misplaced password)."""
    shown = 1
    while shown < len(words) and find_game(words[shown]) is not None:
        shown += 1
    return shown


@command(
    "games",
    "games [GAME ...]",
    "list the games you can play here (or only the games named)",
    max_words=_named_games,
)
def games(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    wanted = [find_game(word) for word in line.words[1:]]
    if None in wanted:
        names = ", ".join(g.SPEC.name for g in all_games())
        raise CommandError(f"that is not a game here (games: {names})", syntax="games [GAME ...]")
    chosen = {g.SPEC.name for g in wanted if g is not None}
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
        if not chosen or g.SPEC.name in chosen
    ]
    bots = [{"userid": r.display_id, "level": r.robot_level} for r in robots(ctx.session)]
    data = {"games": rows, "robots": bots if ctx.settings.robots else []}
    return Section("games", data, summary="games")


def sender_user(ctx: CommandContext, word: str = "status") -> User:
    """The user whose address (registered, or added) the command came from (``word``: the
    command, for the hint when there is none)."""
    found = users_of_address(ctx.session, ctx.sender) if ctx.sender else []
    user = found[0] if found else None
    if user is None:
        raise CommandError(
            "no user has the address this came from, so name one",
            hint=f'Send "{word} USERID", or sign up with "signup USERID PASSWORD".',
        )
    return ctx.require_user(user.userid)


@command(
    "status",
    "status [USERID]",
    "list a user's active boards and whose move it is (yours without a user id)",
    min_words=1,
    max_words=2,
)
def status(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = ctx.require_user(line.words[1]) if len(line.words) > 1 else sender_user(ctx)
    # Whose move, as the asker reads it: "your move" only to the user asked about.
    asker = {u.id for u in users_of_address(ctx.session, ctx.sender)} if ctx.sender else set()
    boards = []
    for row, my_seat in service.active_seats(ctx, user):
        waiting = [int(s) for s in row.to_move.split(",") if s]
        opponents = [s.user.display_id for s in row.seats if s.user_id != user.id]
        waited = [s.user for s in row.seats if s.seat in waiting and s.seat != my_seat]
        boards.append(
            {
                "game": row.game,
                "board": row.id,
                "opponents": opponents,
                "moves": numbering.played_on(row.game, row.ply),
                "to_move": _whose_move(user, my_seat in waiting, waited, asker),
            }
        )
    per_year = ctx.settings.vacation_days_per_year
    context = {
        "userid": user.display_id,
        "boards": boards,
        "away": user.away_since is not None,
        "vacation_until": vacations.when_text(vacations.vacation_end(user, per_year)),
        "vacation_days": vacations.days_left(user, ctx.now(), per_year),
        "settings": settings_of(user),
    }
    return Section("status", context, summary=f"status {user.userid}")


def _whose_move(user: User, users_turn: bool, others: list[User], asker: set[int]) -> str:
    """Whose move a board of ``user`` waits for, worded for the asker (whose user ids are
    ``asker``): "your move", "bob's move", "waiting for you" or "waiting for carol"."""
    if users_turn:
        return "your move" if user.id in asker else f"{user.display_id}'s move"
    names = ["you" if u.id in asker else u.display_id for u in others]
    return "waiting for " + ", ".join(names)
