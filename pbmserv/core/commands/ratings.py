"""GAME ratings (and GAME standings, pbmserv's other word for it), and ratings [USERID]."""

from __future__ import annotations

from pbmserv.core.commands.listing import sender_user
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.ratings import glicko2
from pbmserv.core.ratings import service as ratings
from pbmserv.core.results import Section
from pbmserv.core.robots.identity import is_robot
from pbmserv.db.models import Rating
from pbmserv.games import find_game
from pbmserv.games.base import AnyGame

_DETAILS = (
    f"Two ratings side by side. Glicko-2: everyone starts at {glicko2.START_RATING:.0f} with a "
    f"deviation (RD) of {glicko2.START_RD:.0f},\n"
    "shown as rating +/- 2 RD (the true strength is very likely within); the RD narrows with\n"
    "every rated board and widens again while a player is away, and a rating is provisional\n"
    f"(marked ?) while its RD is above {glicko2.PROVISIONAL_RD:.0f}. The lists are ordered by "
    "the rating less 2 RD.\n"
    f"Elo, as pbmserv keeps it: everyone starts at {ratings.START:.0f}, K is {ratings.K:.0f}, "
    f"provisional (?) until {ratings.PROVISIONAL_UNDER}\nrated boards are finished. Every board "
    "that ends counts (resignations, forfeits and\nrulings too), except a declined challenge."
)


def _entry(ctx: CommandContext, rating: Rating) -> dict[str, object]:
    game = find_game(rating.game)
    glicko = ratings.glicko_now(rating, ctx.now(), ctx.settings.rating_period_days)
    return {
        "game": rating.game,
        "title": game.SPEC.title if game else rating.game,
        # Robots are rated as anyone, and marked: their strength is no person's.
        "userid": rating.user.display_id + (" (robot)" if is_robot(rating.user) else ""),
        "glicko": round(glicko.rating),
        "glicko_margin": round(2 * glicko.rd),
        "glicko_provisional": glicko.provisional,
        "rating": round(rating.rating),
        "games": rating.games,
        "wins": rating.wins,
        "losses": rating.losses,
        "draws": rating.draws,
        "provisional": rating.games < ratings.PROVISIONAL_UNDER,
    }


@command(
    "ratings",
    "GAME ratings",
    "the rating list of a game, best first",
    game_scoped=True,
    max_words=2,
    details=_DETAILS,
)
@command(
    "standings",
    "GAME standings",
    'the rating list of a game (as "GAME ratings")',
    game_scoped=True,
    max_words=2,
    details=_DETAILS,
)
def game_ratings(ctx: CommandContext, _line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    rows = [_entry(ctx, r) for r in ratings.table(ctx, game.SPEC.name)]
    data = {"game": game.SPEC.name, "title": game.SPEC.title, "rows": rows}
    return Section("ratings_table", data, summary=f"{game.SPEC.name} ratings")


@command(
    "ratings",
    "ratings [USERID]",
    "a user's ratings in every game with a rated board finished (yours without a user id)",
    min_words=1,
    max_words=2,
    details=_DETAILS,
)
def user_ratings(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    word = line.words[1] if len(line.words) > 1 else None
    user = ctx.require_user(word) if word else sender_user(ctx, "ratings")
    rows = [_entry(ctx, r) for r in ratings.of_user(ctx, user.id)]
    return Section("user_ratings", {"userid": user.display_id, "rows": rows}, summary="ratings")
