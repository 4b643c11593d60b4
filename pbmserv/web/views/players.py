"""A player's page (``/u/USERID``: boards running and over, ratings now and their history as a
chart and a table), a game's rating list (``/ratings/GAME``, as the ``ratings`` mail gives it),
the boards between two players (``/u/A/vs/B``) and the front page's search (``/search?q=``).

A page reads a fixed number of queries whatever the number of boards: the player's boards
running and the newest over, with all their seats and users, in two (``player_boards.py``);
what every rated board did to the player's ratings in one (``core/ratings/timeline.py``); the
ratings now as the ``ratings`` mail reads them. Of a running board it shows what the board list
shows (its players, whose move, the clocks as a position's projection shows them), never
anything of its position or moves: a hidden-information board keeps its secrets here too.

A user who deleted their account (disabled) has no page (404), and their name links nowhere.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, NamedTuple

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from pbmserv.core.commands.accounts import USERID_PATTERN
from pbmserv.core.commands.ratings import game_ratings, user_ratings
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.ratings.timeline import RatedPoint, head_to_head, timelines_of
from pbmserv.core.robots.turns import LEVEL_NAMES
from pbmserv.db.models import Rating, User, table_of
from pbmserv.games import find_game
from pbmserv.web.boards import number_in, page_number
from pbmserv.web.chart import point_rows, rating_chart
from pbmserv.web.database import reading
from pbmserv.web.headers import REVALIDATE, etag_of, not_modified
from pbmserv.web.site import Site, site_of
from pbmserv.web.views.player_boards import boards_of, finished_items, running_items

#: How many players a search lists at most.
FOUND = 50
#: How many boards over a player's page lists (the newest; the board list has them all), and
#: a page of the boards between two players.
FINISHED = 50
#: How the ``ratings`` mail marks a robot's name (core/commands/ratings.py).
ROBOT = " (robot)"


def player_page(request: Request) -> Response:
    site = site_of(request)
    with reading(site.sessions) as session:
        user = _user(session, request.path_params["userid"])
        running, finished = boards_of(session, user.id, finished=FINISHED + 1)
        ctx = CommandContext(session=session, settings=site.settings, sender=None)
        standings = user_ratings(ctx, CommandLine.parse(f"ratings {user.userid}"), None)
        lines = timelines_of(session, user.id)
    ratings = [
        _rating(entry, lines.get(str(entry["game"]), [])) for entry in standings.data["rows"]
    ]
    context = {
        "user": _person(user),
        "running": running_items(running, user.id),
        "finished": finished_items(finished[:FINISHED], user.id, user.userid, heads=True),
        "shown": min(len(finished), FINISHED),
        "older": f"/games?player={user.userid}&status=finished"
        if len(finished) > FINISHED
        else None,
        "ratings": ratings,
    }
    return _public_page(request, site, "player", context)


def versus_page(request: Request) -> Response:
    site = site_of(request)
    page = page_number(request)
    with reading(site.sessions) as session:
        first = _user(session, request.path_params["userid"])
        second = _user(session, request.path_params["other"])
        if first.id == second.id:
            raise HTTPException(404, "A player plays nobody but others.")
        won, drawn, lost = head_to_head(session, first.id, second.id)
        skip = (page - 1) * FINISHED
        running, finished = boards_of(session, first.id, second.id, FINISHED + 1, skip)
    base = f"/u/{first.userid}/vs/{second.userid}"
    context = {
        "first": _person(first),
        "second": _person(second),
        "score": {"won": won, "drawn": drawn, "lost": lost},
        "running": running_items(running, first.id) if page == 1 else "",
        "finished": finished_items(finished[:FINISHED], first.id, first.userid, heads=False),
        "page": page,
        "previous": (f"{base}?page={page - 1}" if page > 2 else base) if page > 1 else None,
        "next": f"{base}?page={page + 1}" if len(finished) > FINISHED else None,
    }
    return _public_page(request, site, "versus", context)


def ratings_page(request: Request) -> Response:
    """``/ratings/GAME``: the list the ``GAME ratings`` mail gives, each name a link."""
    site = site_of(request)
    name = request.path_params["game"]
    game = find_game(name) if name.isascii() and name.isalnum() else None
    if game is None or name != game.SPEC.name:
        raise HTTPException(404, "There is no such game here.")
    with reading(site.sessions) as session:
        ctx = CommandContext(session=session, settings=site.settings, sender=None)
        section = game_ratings(ctx, CommandLine.parse(f"{name} ratings"), game)
        gone = set(
            session.scalars(
                select(User.userid)
                .join(Rating, Rating.user_id == User.id)
                .where(Rating.game == name, User.disabled.is_(True))
            )
        )
    rows = []
    for rank, entry in enumerate(section.data["rows"], start=1):
        shown = str(entry["userid"])
        robot = shown.endswith(ROBOT)
        userid = shown.removesuffix(ROBOT)
        href = None if userid.lower() in gone else f"/u/{userid.lower()}"
        rows.append({**entry, "rank": rank, "name": userid, "robot": robot, "href": href})
    context = {"game": name, "title": game.SPEC.title, "rows": rows}
    return _public_page(request, site, "ratings", context)


def search_page(request: Request) -> Response:
    """``/search?q=``: a board number goes to its board, a player's id to their page, part of
    one lists the players whose ids hold it."""
    site = site_of(request)
    asked = request.query_params.get("q", "").strip()
    if not asked:
        return site.page("player_search", {"asked": "", "found": None})
    number = number_in(asked.removeprefix("#"))
    if number is not None:
        return RedirectResponse(f"/g/{number}", status_code=303)
    if len(asked) > 24 or not all(c.isascii() and (c.isalnum() or c in "_.-") for c in asked):
        raise HTTPException(400, 'A player\'s id is letters, digits, "_", "." and "-".')
    with reading(site.sessions) as session:
        exact = session.execute(_USER, {"userid": asked.lower()}).one_or_none()
        if exact is not None and not exact.disabled:
            return RedirectResponse(f"/u/{exact.userid}", status_code=303)
        found = session.execute(
            select(User.userid, User.display_id, User.robot_level)
            .where(User.userid.contains(asked.lower(), autoescape=True), User.disabled.is_(False))
            .order_by(User.userid)
            .limit(FOUND + 1)
        ).all()
    people = [
        {"href": f"/u/{row.userid}", "name": row.display_id, "robot": row.robot_level is not None}
        for row in found[:FOUND]
    ]
    return site.page("player_search", {"asked": asked, "found": people, "more": len(found) > FOUND})


#: A user by id, made once.
_USERS = table_of(User)
_USER = select(
    _USERS.c.id, _USERS.c.userid, _USERS.c.display_id, _USERS.c.disabled, _USERS.c.robot_level
).where(_USERS.c.userid == bindparam("userid"))


class Player(NamedTuple):
    id: int
    userid: str
    display_id: str
    disabled: bool
    robot_level: int | None


def _user(session: Session, userid: str) -> Player:
    """The user ``userid`` names (any case); 404 for none, or one who deleted their account."""
    if not USERID_PATTERN.fullmatch(userid):
        raise HTTPException(404)
    row = session.execute(_USER, {"userid": userid.lower()}).one_or_none()
    if row is None or row.disabled:
        raise HTTPException(404, "There is no such player here.")
    return Player(*row)


def _person(user: Player) -> dict[str, Any]:
    level = user.robot_level
    robot = None
    if level is not None:
        robot = f"a robot, level {level}" + (
            f" ({LEVEL_NAMES[level]})" if level in LEVEL_NAMES else ""
        )
    return {"userid": user.userid, "name": user.display_id, "robot": robot}


def _rating(entry: Mapping[str, Any], points: list[RatedPoint]) -> dict[str, Any]:
    """A game's rating now (the mail's row), its chart and the chart's points as table rows."""
    name = str(entry["game"])
    return {
        **entry,
        "chart": rating_chart(points, name) if points else None,
        "points": point_rows(points),
    }


def _public_page(
    request: Request, site: Site, template: str, context: Mapping[str, Any]
) -> Response:
    """The page with a strong ETag of what it shows (it changes with the boards, and with the
    days a rating's deviation grows by), or 304 when the client has that."""
    response = site.page(template, context)
    digest = hashlib.sha256(bytes(response.body)).hexdigest()[:32]
    headers = {"ETag": etag_of(digest, template, site.version), "Cache-Control": REVALIDATE}
    if not_modified(request, headers["ETag"]):
        return Response(status_code=304, headers=headers)
    response.headers.update(headers)
    return response
