"""The addresses of the site (issue 50's URL scheme) and the views they lead to.

``/g/BOARD`` and ``/p/TOKEN`` (a board for the public, and for a private link's seat) lead to
the same views. Each path segment is read here (``17``, ``17.json``, ``12``, ``12.svg``);
anything else is no page (404). A private link's board that is over sends its reader to the
public address of the same thing (301).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from pbmserv.web.boards import (
    MovedToPublic,
    Opened,
    number_in,
    open_private,
    open_public,
    split_kind,
)
from pbmserv.web.database import reading
from pbmserv.web.site import Site, site_of
from pbmserv.web.views import front, games, pictures, position, records, rules, tournaments
from pbmserv.web.views.feeds import board_feed, player_feed
from pbmserv.web.views.operator import healthz, metrics
from pbmserv.web.views.players import player_page, ratings_page, search_page, versus_page

#: How a route finds its board: by number (the public) or by a private link's token.
Opener = Callable[[Site, Session, str], Opened]


def _board(request: Request, opener: Opener, segment: str) -> Response:
    """``/g/17``, ``/g/17.json`` (``/p/TOKEN``...): the position now, or a record."""
    stem, kind = split_kind(segment, ("", *records.KINDS))
    site = site_of(request)
    try:
        with reading(site.sessions) as session:
            opened = opener(site, session, stem)
            if kind == "":
                return position.page(request, opened, None)
            return records.record(request, opened, kind)
    except MovedToPublic as moved:
        return _to_public(request, f"/g/{moved.board}" + (f".{kind}" if kind else ""))


def _position(request: Request, opener: Opener, key: str) -> Response:
    """``/g/17/12``, ``/g/17/12.svg`` (``/p/TOKEN/12``...): a position, or its picture."""
    segment = request.path_params["position"]
    stem, kind = split_kind(segment, ("", *pictures.KINDS))
    ply = number_in(stem)
    if ply is None:
        raise HTTPException(404)
    site = site_of(request)
    try:
        with reading(site.sessions) as session:
            opened = opener(site, session, key)
            if kind == "":
                return position.page(request, opened, ply)
            return pictures.picture(request, opened, ply, kind)
    except MovedToPublic as moved:
        return _to_public(request, f"/g/{moved.board}/{segment}")


def _to_public(request: Request, path: str) -> Response:
    query = request.url.query
    return RedirectResponse(f"{path}?{query}" if query else path, status_code=301)


def public_board(request: Request) -> Response:
    return _board(request, open_public, request.path_params["board"])


def public_position(request: Request) -> Response:
    return _position(request, open_public, request.path_params["board"])


def private_board(request: Request) -> Response:
    return _board(request, open_private, request.path_params["token"])


def private_position(request: Request) -> Response:
    return _position(request, open_private, request.path_params["token"])


def routes(static: Path) -> list[BaseRoute]:
    return [
        Route("/", front.front),
        Route("/robots.txt", front.robots_txt),
        Route("/favicon.ico", front.favicon),
        Route("/games", games.games),
        Route("/rules/{game}", rules.rules),
        Route("/g/{board}", public_board),
        Route("/g/{board}/feed.atom", board_feed),  # issue 51, feeds: before the position
        Route("/g/{board}/{position}", public_position),
        Route("/p/{token}", private_board),
        Route("/p/{token}/{position}", private_position),
        Route("/u/{userid}", player_page),  # issue 51, players
        Route("/u/{userid}/vs/{other}", versus_page),
        Route("/ratings/{game}", ratings_page),
        Route("/search", search_page),
        Route("/tournaments", tournaments.tournaments),
        Route("/t/{tournament}", tournaments.tournament),
        Route("/u/{userid}/feed.atom", player_feed),  # issue 51, feeds
        Route("/healthz", healthz),  # issue 51, operator (web_metrics_from's clients alone)
        Route("/metrics", metrics),
        Mount("/static", StaticFiles(directory=static), name="static"),
    ]
