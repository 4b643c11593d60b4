"""The page of a position: the game, its players, status and clocks, the picture with the text
diagram as its long description, the moves (each a link to its position), the steps first /
previous / next / last, and the records."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from markupsafe import Markup, escape
from starlette.requests import Request
from starlette.responses import Response

from pbmserv.core.play.positions import ClockSeen, PositionView
from pbmserv.games import find_game
from pbmserv.time_controls import format_duration
from pbmserv.web.boards import Opened, since_of
from pbmserv.web.headers import etag_of, tagged


@dataclass(frozen=True)
class Step:
    """One of the move controls: where it goes (None: nowhere from here)."""

    name: str  # first, prev, next, last: also the script's key
    text: str
    label: str
    href: str | None
    rel: str | None


def page(request: Request, opened: Opened, ply: int | None) -> Response:
    """The position after ``ply`` moves (None: now) as ``opened``'s reader sees it."""
    since = since_of(request)
    view = opened.view(ply)

    def make() -> Response:
        return opened.site.page("position", _context(opened, view, since))

    if opened.private:
        return make()
    kind = "html" if since is None else f"html{since}"
    return tagged(request, etag_of(view.etag, kind, opened.site.version), make)


def _context(opened: Opened, view: PositionView, since: int | None) -> dict[str, Any]:
    query = "" if since is None else f"?since={since}"

    def at(ply: int) -> str:
        return f"{opened.base}/{ply}{query}"

    game = find_game(view.game)
    acting = set(view.to_move)
    return {
        "view": view,
        "private": opened.private,
        "seat_player": _seat_player(view, opened.seat),
        "public_url": f"/g/{view.board}/{view.ply}{query}",
        "picture": f"{opened.base}/{view.ply}.svg",
        "png": f"{opened.base}/{view.ply}.png",
        "steps": _steps(view, at),
        "moves": _move_list(view, at, since),
        "new_count": 0 if since is None else sum(1 for m in view.moves if m.ply >= since),
        "players": [
            {"seat": p.seat, "role": p.role, "userid": p.userid, "to_move": p.userid in acting}
            for p in view.players
        ],
        "clocks": [clock_shown(clock) for clock in view.clocks or ()],
        "records": _records(opened.base, game is not None and "pgn" in game.SPEC.record_formats),
        "rules": f"/rules/{view.game}",
    }


NEW_ITEM = ' class="new"'
NEW_MARK = ' <span class="new-mark">new</span>'


def _move_list(view: PositionView, at: Callable[[int], str], since: int | None) -> Markup:
    """The moves as list items, each a link to the position it made (the one shown marked
    current, those from ``since`` on marked new). Written here rather than in the template:
    a game of 200 moves would cost a template loop's attribute lookups on every page."""
    items = []
    for move in view.moves:
        new = since is not None and move.ply >= since
        current = ' aria-current="page"' if move.ply + 1 == view.ply else ""
        items.append(
            f'<li{NEW_ITEM if new else ""}><a href="{escape(at(move.ply + 1))}"{current}>'
            f"{escape(move.label)} {escape(move.text)}</a> "
            f'<span class="who">{escape(move.player)}</span>{NEW_MARK if new else ""}</li>'
        )
    return Markup("\n".join(items))


def _seat_player(view: PositionView, seat: int | None) -> str | None:
    return next((p.userid for p in view.players if p.seat == seat), None)


def _steps(view: PositionView, at: Any) -> list[Step]:
    back, forward = view.ply > 0, view.ply < view.plies
    return [
        Step("first", "First", "the start", at(0) if back else None, None),
        Step("prev", "Previous", "the move before", at(view.ply - 1) if back else None, "prev"),
        Step("next", "Next", "the move after", at(view.ply + 1) if forward else None, "next"),
        Step("last", "Last", "the position now", at(view.plies) if forward else None, None),
    ]


def clock_shown(clock: ClockSeen) -> dict[str, Any]:
    """A clock as the pages word it (time left, running since when)."""
    since = None
    if clock.running_since is not None:
        since = datetime.fromisoformat(clock.running_since).strftime("%Y-%m-%d %H:%M UTC")
    return {
        "userid": clock.userid,
        "left": format_duration(clock.seconds_left),
        "since": since,
        "since_iso": clock.running_since,
    }


def _records(base: str, pgn: bool) -> list[dict[str, str]]:
    records = [
        {"href": f"{base}.json", "text": "JSON record"},
        {"href": f"{base}.txt", "text": "text record"},
    ]
    if pgn:
        records.append({"href": f"{base}.pgn", "text": "PGN record"})
    return records
