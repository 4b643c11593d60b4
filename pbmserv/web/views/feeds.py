"""Atom feeds (``web/atom.py``): a player's (``/u/USERID/feed.atom``: the boards where it is
their move, and their latest finished games) and a board's (``/g/BOARD/feed.atom``: each move,
the newest first, and the result once it is over).

Anyone may read a feed, so it says only what the public may: a board's moves come from the
public projection (``core/play/positions.py``), a running board of a game with hidden
information shows its public moves alone, and a player's feed names no move at all (the board,
its players, how many moves were played, whose move it is, and a finished game's result,
which is all public). Links are absolute: under ``web_url`` where it is set, else under the
address the request came to.

A player's feed costs at most five statements however many games they have: the player;
which boards, with their row versions (the ETag comes from these two, so a 304 reads no board);
those boards' few columns and players; and only for finished boards whose result is not kept
yet, those boards and their seats (a result is worded from the board: its players' roles)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import String, bindparam, cast, literal, or_, select
from sqlalchemy.orm import Session
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from pbmserv.core.commands.accounts import USERID_PATTERN
from pbmserv.core.play import numbering
from pbmserv.core.play.boards import board_of
from pbmserv.core.play.game_service import result_text
from pbmserv.core.play.positions import MoveSeen, PositionView
from pbmserv.db.models import GameRow, MoveRow, Seat, User
from pbmserv.games import find_game
from pbmserv.web import atom
from pbmserv.web.boards import Opened, open_public
from pbmserv.web.database import reading
from pbmserv.web.headers import etag_of, tagged
from pbmserv.web.kept import Kept
from pbmserv.web.site import Site, site_of

#: A player's feed holds every board where it is their move and this many finished games.
FINISHED_SHOWN = 20
#: A board's feed holds this many of its latest moves.
MOVES_SHOWN = 100
#: Who a feed says wrote it.
AUTHOR = "pbmserv"

_NOT_DNS = re.compile(r"[^a-z0-9.-]")


def base_of(request: Request) -> str:
    """Where the site's absolute addresses begin: ``web_url``, else the request's own base."""
    base = site_of(request).settings.web_base
    return base if base is not None else str(request.base_url).rstrip("/")


def authority_of(site: Site) -> str:
    """The tag: URIs' authority: the domain of the server's own address (it stays the same
    whatever address a feed is read at)."""
    domain = _NOT_DNS.sub("", site.settings.address.rpartition("@")[2].lower()).strip(".-")
    return domain or "localhost"


def _digest(*parts: object) -> str:
    """A short digest of what an ETag follows from, beside the projection's tag: the base of
    the feed's links (they change with it) and the rows read."""
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:16]


def _respond(feed: atom.Feed) -> Response:
    return Response(atom.render(feed), media_type=atom.MEDIA_TYPE)


# --- a player's feed -----------------------------------------------------------------------


@dataclass(frozen=True)
class Listed:
    """A board as a feed tells of it: a few columns and its players, no state (nothing of a
    running board's position goes into a player's feed)."""

    board: int
    game: str
    finished: bool
    ply: int
    to_move: str
    version: int
    created_at: datetime
    updated_at: datetime
    players: dict[int, str]  # by seat

    @property
    def acting(self) -> list[str]:
        seats = (int(s) for s in self.to_move.split(",") if s.isdigit())
        return [self.players[seat] for seat in seats if seat in self.players]

    @classmethod
    def of(cls, row: GameRow) -> Listed:
        players = {seat.seat: seat.user.display_id for seat in row.seats}
        return cls(
            row.id,
            row.game,
            row.status != "active",
            row.ply,
            row.to_move,
            row.version,
            row.created_at,
            row.updated_at,
            players,
        )


# The player's finished boards, the latest first ...
_FINISHED = (
    select(GameRow.id)
    .join(Seat, Seat.game_id == GameRow.id)
    .where(Seat.user_id == bindparam("user"), GameRow.status != "active")
    .order_by(GameRow.updated_at.desc(), GameRow.id.desc())
    .limit(FINISHED_SHOWN)
)
# ... and the running ones where one of their seats is to move: to_move is "0" or "0,1", and
# ",0,1," holds ",1,".
_THEIR_MOVE = (GameRow.status == "active") & (
    literal(",") + GameRow.to_move + literal(",")
).contains(literal(",") + cast(Seat.seat, String) + literal(","))
#: The boards of a player's feed with their row versions (statements made once: a feed is
#: asked often, and building a query costs more than running this one).
_SHOWN = (
    select(GameRow.id, GameRow.version)
    .join(Seat, Seat.game_id == GameRow.id)
    .where(Seat.user_id == bindparam("user"))
    .where(or_(_THEIR_MOVE, GameRow.id.in_(_FINISHED.scalar_subquery())))
    .order_by(GameRow.id)
    .distinct()
)
_LISTED = (
    select(
        GameRow.id,
        GameRow.game,
        GameRow.status,
        GameRow.ply,
        GameRow.to_move,
        GameRow.version,
        GameRow.created_at,
        GameRow.updated_at,
        Seat.seat,
        User.display_id,
    )
    .join(Seat, Seat.game_id == GameRow.id)
    .join(User, User.id == Seat.user_id)
    .where(GameRow.id.in_(bindparam("boards", expanding=True)))
    .order_by(GameRow.id, Seat.seat)
)
_ROWS = select(GameRow).where(GameRow.id.in_(bindparam("boards", expanding=True)))
_USER = select(User.id, User.userid, User.display_id, User.created_at).where(
    User.userid == bindparam("userid")
)


def player_feed(request: Request) -> Response:
    """``/u/USERID/feed.atom``: the boards where it is the player's move, and their finished
    games (the latest :data:`FINISHED_SHOWN`)."""
    name = request.path_params["userid"]
    if not USERID_PATTERN.fullmatch(name):
        raise HTTPException(404)
    site, base = site_of(request), base_of(request)
    with reading(site.sessions) as session:
        user = session.execute(_USER, {"userid": name.lower()}).one_or_none()
        if user is None:
            raise HTTPException(404, "There is no such player here.")
        shown = [(board, version) for board, version in session.execute(_SHOWN, {"user": user.id})]
        etag = etag_of(_digest(base, user.display_id, shown), "atom", site.version)

        def make() -> Response:
            listed = _listed(session, [board for board, _version in shown])
            over = [board for board in listed if board.finished]
            results = _results(request, session, over)
            return _respond(_player(site, base, user, listed, results))

        return tagged(request, etag, make)


def _listed(session: Session, boards: Sequence[int]) -> list[Listed]:
    """The boards ``boards`` with their players, in one query."""
    if not boards:
        return []
    found: dict[int, Listed] = {}
    for row in session.execute(_LISTED, {"boards": list(boards)}):
        board, game, status, ply, to_move, version, created, updated, seat, player = row
        if board not in found:
            finished = status != "active"
            found[board] = Listed(
                board, game, finished, ply, to_move, version, created, updated, {}
            )
        found[board].players[seat] = player
    return list(found.values())


def _results(request: Request, session: Session, boards: Sequence[Listed]) -> dict[int, str]:
    """The finished boards' results as the site words them (``result_text``, as on their
    pages), kept by board and row version; "" for a game this server no longer has. Only
    the boards not kept are read (two statements)."""
    kept = _kept_results(request)
    results: dict[int, str] = {}
    missing = []
    for board in boards:
        text = kept.get((board.board, board.version))
        if text is None:
            missing.append(board.board)
        else:
            results[board.board] = text
    if missing:
        for row in session.scalars(_ROWS, {"boards": missing}):
            loaded = board_of(row)
            text = "" if loaded is None else result_text(loaded)
            kept.put((row.id, row.version), text)
            results[row.id] = text
    return results


def _kept_results(request: Request) -> Kept[tuple[int, int], str]:
    """The site's kept results of finished boards, by (board, row version)."""
    return site_of(request).results


def _player(
    site: Site, base: str, user: Any, listed: Sequence[Listed], results: dict[int, str]
) -> atom.Feed:
    authority = authority_of(site)
    entries = []
    for board in listed:
        if not board.finished:
            entries.append(_your_move(authority, base, user, board))
        elif results.get(board.board):
            entries.append(_result_entry(authority, base, board, results[board.board]))
    entries.sort(key=lambda e: (e.updated, e.id), reverse=True)
    name = user.display_id
    return atom.Feed(
        id=atom.tag_uri(authority, user.created_at, f"u/{user.userid}/feed"),
        title=f"{name}: your move, and your games over",
        subtitle=(
            f"The boards where it is {name}'s move, and {name}'s latest finished games, "
            f"at pbmserv ({site.settings.address})."
        ),
        updated=max((e.updated for e in entries), default=user.created_at),
        self_link=f"{base}/u/{name}/feed.atom",
        alternate=f"{base}/u/{name}",
        author=AUTHOR,
        author_uri=f"{base}/",
        entries=entries,
    )


def _played(game_name: str, ply: int) -> str:
    """How many moves a board has had, in its game's numbering (as its text record says)."""
    game = find_game(game_name)
    return numbering.played_so_far(game.SPEC, ply) if game is not None else str(ply)


def _your_move(authority: str, base: str, user: Any, board: Listed) -> atom.Entry:
    """A running board where it is the player's move (nothing of its moves: only how many)."""
    number = board.board
    return atom.Entry(
        id=atom.tag_uri(
            authority, board.created_at, f"u/{user.userid}/board/{number}/turn/{board.ply}"
        ),
        title=f"{board.game} board {number}: your move",
        updated=board.updated_at,
        link=f"{base}/g/{number}/{board.ply}",
        summary=(
            f"{' vs '.join(board.players.values())}. "
            f"Moves played: {_played(board.game, board.ply)}. "
            f"Waiting for {' and '.join(board.acting)}."
        ),
    )


def _result_entry(authority: str, base: str, board: Listed, result: str) -> atom.Entry:
    """A finished board's result (public, as everything on a board that is over): the same
    entry in the player's feed and the board's."""
    number = board.board
    players = " vs ".join(board.players.values())
    return atom.Entry(
        id=atom.tag_uri(authority, board.created_at, f"board/{number}/result"),
        title=f"{board.game} board {number}: {result}",
        updated=board.updated_at,
        link=f"{base}/g/{number}",
        summary=f"{players}. Moves played: {_played(board.game, board.ply)}. Game over: {result}.",
    )


# --- a board's feed ------------------------------------------------------------------------


def board_feed(request: Request) -> Response:
    """``/g/BOARD/feed.atom``: the board's moves as the public sees them, newest first (the
    latest :data:`MOVES_SHOWN`), and its result once it is over."""
    site, base = site_of(request), base_of(request)
    with reading(site.sessions) as session:
        opened = open_public(site, session, request.path_params["board"])
        view = opened.view()
        kind = f"atom{_digest(base, opened.stamp.version)}"
        etag = etag_of(view.etag, kind, site.version)
        return tagged(request, etag, lambda: _respond(_board(opened, view, base)))


def _board(opened: Opened, view: PositionView, base: str) -> atom.Feed:
    row = opened.board.row
    authority = authority_of(opened.site)
    latest = view.moves[-MOVES_SHOWN:]
    times = _move_times(opened.session, row, len(latest))
    entries = [
        _move_entry(authority, base, row, move, when)
        for move, when in zip(reversed(latest), times, strict=True)
    ]
    if view.finished and view.result:
        entries.insert(0, _result_entry(authority, base, Listed.of(row), view.result))
    players = " vs ".join(p.userid for p in view.players)
    return atom.Feed(
        id=atom.tag_uri(authority, row.created_at, f"board/{row.id}/feed"),
        title=f"{view.game} board {view.board}: {players}",
        subtitle=f"{view.title}, board {view.board}: {view.status or 'running'}.",
        updated=max((e.updated for e in entries), default=row.created_at),
        self_link=f"{base}/g/{row.id}/feed.atom",
        alternate=f"{base}/g/{row.id}",
        author=AUTHOR,
        author_uri=f"{base}/",
        entries=entries,
    )


def _move_times(session: Session, row: GameRow, count: int) -> list[datetime]:
    """When each of the board's latest ``count`` moves was played, the newest first (the
    board's last change for any the query does not give: a snapshot read apart)."""
    times = list(
        session.scalars(
            select(MoveRow.created_at)
            .where(MoveRow.game_id == row.id, MoveRow.kind == "move")
            .order_by(MoveRow.id.desc())
            .limit(count)
        )
    )
    return times if len(times) == count else [row.updated_at] * count


def _move_entry(
    authority: str, base: str, row: GameRow, move: MoveSeen, when: datetime
) -> atom.Entry:
    """One move as the public sees it, linking to the position it made."""
    after = move.ply + 1
    who = move.player or "the server"
    return atom.Entry(
        id=atom.tag_uri(authority, row.created_at, f"board/{row.id}/move/{after}"),
        title=f"{row.game} board {row.id}: {move.label} {move.text}",
        updated=when,
        link=f"{base}/g/{row.id}/{after}",
        summary=f"{who} played {move.label} {move.text} on {row.game} board {row.id}.",
        author=move.player or None,
    )
