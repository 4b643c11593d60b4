"""The front page (the server's games, their rules, how to join) and ``robots.txt``."""

from __future__ import annotations

from sqlalchemy import func, select
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from pbmserv.db.models import GameRow
from pbmserv.games import all_games
from pbmserv.web.database import reading
from pbmserv.web.site import site_of

#: Crawlers may read the public pages, never a player's private ones.
ROBOTS_TXT = "User-agent: *\nDisallow: /p/\n"


def front(request: Request) -> Response:
    site = site_of(request)
    query = select(GameRow.game, GameRow.status, func.count()).group_by(
        GameRow.game, GameRow.status
    )
    with reading(site.sessions) as session:
        counts = {(game, status): count for game, status, count in session.execute(query)}
    games = [
        {
            "name": game.SPEC.name,
            "title": game.SPEC.title,
            "players": game.SPEC.players,
            "active": counts.get((game.SPEC.name, "active"), 0),
            "finished": counts.get((game.SPEC.name, "finished"), 0),
        }
        for game in all_games()
    ]
    return site.page("front", {"games": games})


def robots_txt(request: Request) -> Response:
    return PlainTextResponse(ROBOTS_TXT)


def favicon(request: Request) -> Response:
    """``/favicon.ico``, which browsers ask of a document naming no icon (a feed): the site's."""
    return RedirectResponse("/static/favicon.svg", status_code=301)
