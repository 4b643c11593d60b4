"""GAME ratings (and GAME standings, pbmserv's other word for it), and ratings [USERID]."""

from __future__ import annotations

from pbmserv.core import ratings
from pbmserv.core.commands.listing import sender_user
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import Section
from pbmserv.core.robot_identity import is_robot
from pbmserv.db.models import Rating
from pbmserv.games import find_game
from pbmserv.games.base import AnyGame

_DETAILS = (
    f"Elo ratings, as pbmserv keeps them: everyone starts at {ratings.START:.0f}, K is "
    f"{ratings.K:.0f}, and a rating\nis provisional (marked ?) until {ratings.PROVISIONAL_UNDER} "
    "rated boards are finished. Every board that\nends counts (resignations, forfeits and "
    "rulings too), except a declined challenge."
)


def _entry(rating: Rating) -> dict[str, object]:
    game = find_game(rating.game)
    return {
        "game": rating.game,
        "title": game.SPEC.title if game else rating.game,
        # Robots are rated as anyone, and marked: their strength is no person's.
        "userid": rating.user.display_id + (" (robot)" if is_robot(rating.user) else ""),
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
    rows = [_entry(r) for r in ratings.table(ctx, game.SPEC.name)]
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
    rows = [_entry(r) for r in ratings.of_user(ctx, user.id)]
    return Section("user_ratings", {"userid": user.display_id, "rows": rows}, summary="ratings")
