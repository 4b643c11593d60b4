"""The list of boards: ``/games?game=NAME&player=USERID&status=active|finished&page=N``, the
newest first, a page at a time (``?board=N`` goes to that board's page: the front page's
search form)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from sqlalchemy import Select, select
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from pbmserv.core.commands.accounts import USERID_PATTERN
from pbmserv.db.models import GameRow, Seat, User
from pbmserv.games import all_games, find_game
from pbmserv.web.boards import number_in, page_number
from pbmserv.web.database import reading
from pbmserv.web.site import site_of

PER_PAGE = 50
STATUSES = ("active", "finished")


def games(request: Request) -> Response:
    site = site_of(request)
    if "board" in request.query_params:
        board = number_in(request.query_params["board"].strip().lstrip("#"))
        if board is None:
            raise HTTPException(400, "A board number is a number, like 17.")
        return RedirectResponse(f"/g/{board}", status_code=303)
    chosen = _filters(request)
    page = page_number(request)
    query = _query(chosen).offset((page - 1) * PER_PAGE).limit(PER_PAGE + 1)
    with reading(site.sessions) as session:
        rows = [_row(row) for row in session.scalars(query)]
    more, rows = len(rows) > PER_PAGE, rows[:PER_PAGE]
    context = {
        "rows": rows,
        "chosen": chosen,
        "page": page,
        "previous": _url(chosen, page - 1) if page > 1 else None,
        "next": _url(chosen, page + 1) if more else None,
        "games": [{"name": g.SPEC.name, "title": g.SPEC.title} for g in all_games()],
        "statuses": STATUSES,
    }
    return site.page("games", context)


def _filters(request: Request) -> dict[str, str]:
    """The filters by name (game, player, status; "": any), each checked (400 if it is not
    one)."""
    params = request.query_params
    chosen = {name: params.get(name, "").strip() for name in ("game", "player", "status")}
    game = find_game(chosen["game"]) if chosen["game"].isascii() else None
    if chosen["game"] and game is None:
        raise HTTPException(400, "There is no such game here.")
    if game is not None:
        chosen["game"] = game.SPEC.name
    if chosen["player"] and not USERID_PATTERN.fullmatch(chosen["player"]):
        raise HTTPException(400, "That is not a user id.")
    if chosen["status"] and chosen["status"] not in STATUSES:
        raise HTTPException(400, "A status is active or finished.")
    return chosen


def _query(chosen: dict[str, str]) -> Select[GameRow]:
    query = select(GameRow).order_by(GameRow.id.desc())
    if chosen["game"]:
        query = query.where(GameRow.game == chosen["game"])
    if chosen["status"]:
        query = query.where(GameRow.status == chosen["status"])
    if chosen["player"]:
        seated = (
            select(Seat.game_id)
            .join(User, User.id == Seat.user_id)
            .where(User.userid == chosen["player"].lower())
        )
        query = query.where(GameRow.id.in_(seated))
    return query


def _row(row: GameRow) -> dict[str, Any]:
    game = find_game(row.game)
    players = {seat.seat: seat.user.display_id for seat in row.seats}
    acting = (int(s) for s in row.to_move.split(",") if s.isdigit())
    waiting = [players[seat] for seat in acting if seat in players]
    if row.status != "active":
        status = "over"
    else:
        status = f"waiting for {' and '.join(waiting)}" if waiting else "running"
    return {
        "board": row.id,
        "game": row.game,
        "title": game.SPEC.title if game is not None else row.game,
        "players": list(players.values()),
        "status": status,
        "plies": row.ply,
        "updated": row.updated_at.strftime("%Y-%m-%d"),
    }


def _url(chosen: dict[str, str], page: int) -> str:
    asked = {name: value for name, value in chosen.items() if value}
    query = urlencode({**asked, "page": str(page)} if page > 1 else asked)
    return f"/games?{query}" if query else "/games"
