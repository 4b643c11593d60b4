"""A player's boards as their page lists them, read in two queries whatever their number: each
board's row (not its state: nothing of a position is shown) with all its seats and their users,
and the list items they make (written here rather than in a template loop, for speed, as a
position's move list is).

What a board shows here is what the board list shows of it and a position's projection shows
of its clocks (``core/play/positions.py``'s :class:`ClockSeen`: the time left as of the last
move, and since when it runs): public while the board runs, whatever the game hides.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any, NamedTuple

from markupsafe import Markup, escape
from sqlalchemy import Select, bindparam, select
from sqlalchemy.orm import Session

from pbmserv.core.play.positions import clock_seen
from pbmserv.db.models import GameRow, Seat, User, table_of
from pbmserv.games import find_game
from pbmserv.web.views.position import clock_shown


class PlayerSeen(NamedTuple):
    seat: int
    user_id: int
    userid: str
    name: str
    disabled: bool
    robot: bool


@dataclass(slots=True)
class BoardSeen:
    number: int
    game: str
    title: str
    finished: bool
    plies: int
    result: dict[str, Any] | None
    updated: str
    players: tuple[PlayerSeen, ...]
    acting: tuple[PlayerSeen, ...]
    clocks: tuple[dict[str, Any], ...]

    @property
    def waiting(self) -> str:
        names = " and ".join(p.name for p in self.acting)
        return f"waiting for {names}" if names else "running"

    @property
    def winners(self) -> set[int]:
        return set((self.result or {}).get("winners", []))

    def outcome_for(self, user_id: int) -> str:
        """The result as ``user_id`` had it: won, lost, drawn or declined, and why."""
        result = self.result or {}
        if result.get("declined") or result.get("termination") == "declined":
            head = "declined"
        elif not self.winners:
            head = "drawn"
        else:
            mine = {p.seat for p in self.players if p.user_id == user_id}
            head = "won" if mine & self.winners else "lost"
        reason = result.get("reason")
        return f"{head} ({reason})" if reason else head


_GAMES, _SEATS, _USERS = table_of(GameRow), table_of(Seat), table_of(User)


def _seated(name: str) -> Select[tuple[int]]:
    """The boards the user ``:name`` has a seat on."""
    return select(_SEATS.c.game_id).where(_SEATS.c.user_id == bindparam(name))


#: Boards with all their seats and users (Core statements made once: a page runs them as
#: they are, without building them again).
_BOARDS = (
    select(
        _GAMES.c.id,
        _GAMES.c.game,
        _GAMES.c.status,
        _GAMES.c.ply,
        _GAMES.c.to_move,
        _GAMES.c.result,
        _GAMES.c.time_control,
        _GAMES.c.updated_at,
        _SEATS.c.seat,
        _SEATS.c.user_id,
        _SEATS.c.clock_left,
        _SEATS.c.clock_since,
        _USERS.c.userid,
        _USERS.c.display_id,
        _USERS.c.disabled,
        _USERS.c.robot_level,
    )
    .select_from(
        _GAMES.join(_SEATS, _SEATS.c.game_id == _GAMES.c.id).join(
            _USERS, _USERS.c.id == _SEATS.c.user_id
        )
    )
    .order_by(_GAMES.c.id.desc(), _SEATS.c.seat)
)
_BOTH = (_GAMES.c.id.in_(_seated("user")), _GAMES.c.id.in_(_seated("other")))
_RUNNING = _BOARDS.where(*_BOTH, _GAMES.c.status == "active")
_OVER = (
    select(_GAMES.c.id)
    .where(*_BOTH, _GAMES.c.status != "active")
    .order_by(_GAMES.c.id.desc())
    .limit(bindparam("limit"))
    .offset(bindparam("skip"))
)
_FINISHED = _BOARDS.where(_GAMES.c.id.in_(_OVER))


def boards_of(
    session: Session, user_id: int, other_id: int | None = None, finished: int = 50, skip: int = 0
) -> tuple[list[BoardSeen], list[BoardSeen]]:
    """The boards ``user_id`` has a seat on (and ``other_id`` too, if given): all those
    running, and ``finished`` of those over (the newest first, the first ``skip`` of them
    skipped); two queries whatever their number."""
    users = {"user": user_id, "other": other_id if other_id is not None else user_id}
    running = session.execute(_RUNNING, users).all()
    over = session.execute(_FINISHED, {**users, "limit": finished, "skip": skip}).all()
    return _grouped(running), _grouped(over)


def _grouped(rows: Sequence[Any]) -> list[BoardSeen]:
    return [_board(list(seats)) for _, seats in groupby(rows, key=lambda row: row.id)]


def _board(rows: list[Any]) -> BoardSeen:
    first = rows[0]
    game = find_game(first.game)
    players = tuple(
        PlayerSeen(
            seat=row.seat,
            user_id=row.user_id,
            userid=row.userid,
            name=row.display_id,
            disabled=row.disabled,
            robot=row.robot_level is not None,
        )
        for row in rows
    )
    finished = first.status != "active"
    seats = {p.seat: p for p in players}
    acting = () if finished else _acting(first.to_move, seats)
    clocks: tuple[dict[str, Any], ...] = ()
    if first.time_control is not None and not finished:
        clocks = tuple(_clock(row) for row in rows)
    return BoardSeen(
        number=first.id,
        game=first.game,
        title=game.SPEC.title if game is not None else first.game,
        finished=finished,
        plies=first.ply,
        result=first.result,
        updated=first.updated_at.date().isoformat(),
        players=players,
        acting=acting,
        clocks=clocks,
    )


def _acting(to_move: str, seats: dict[int, PlayerSeen]) -> tuple[PlayerSeen, ...]:
    numbers = (int(s) for s in to_move.split(",") if s.isdigit())
    return tuple(seats[n] for n in numbers if n in seats)


def _clock(row: Any) -> dict[str, Any]:
    """A seat's clock as a position's page shows it."""
    return clock_shown(clock_seen(row.seat, row.display_id, row.clock_left, row.clock_since))


def _names(players: list[PlayerSeen]) -> str:
    """The players' names, each a link to their page (none for a deleted account)."""
    shown = []
    for p in players:
        name = escape(p.name)
        link = name if p.disabled else f'<a href="/u/{p.userid}">{name}</a>'
        shown.append(link + (" (robot)" if p.robot else ""))
    return " and ".join(shown)


def running_items(boards: list[BoardSeen], user_id: int) -> Markup:
    """The ``<li>`` of each running board: its players but ``user_id``, whose move (strong
    when it is ``user_id``'s), its moves, its clocks."""
    items = []
    for board in boards:
        others = _names([p for p in board.players if p.user_id != user_id])
        waiting = escape(board.waiting)
        if any(p.user_id == user_id for p in board.acting):
            waiting = Markup(f"<strong>{waiting}</strong>")
        item = (
            f'<li>\n<a href="/g/{board.number}">Board {board.number}</a>: '
            f"{escape(board.title)}, against {others}.\n"
            f'<span class="meta">{waiting}; {_moves(board.plies)}; last changed '
            f"{board.updated}</span>"
        )
        if board.clocks:
            clocks = "; ".join(_clock_text(clock) for clock in board.clocks)
            item += f'\n<br><span class="meta">Clocks: {clocks}.</span>'
        items.append(item + "\n</li>")
    return Markup("\n".join(items))


def finished_items(boards: list[BoardSeen], user_id: int, userid: str, heads: bool) -> Markup:
    """The ``<li>`` of each finished board: its players but ``user_id``, the result as they had
    it, its moves, and (``heads``) a link to ``userid``'s head to head with each."""
    items = []
    for board in boards:
        others = [p for p in board.players if p.user_id != user_id]
        links = "".join(
            f'; <a href="/u/{userid}/vs/{p.userid}">head to head with {escape(p.name)}</a>'
            for p in others
            if heads and not p.disabled
        )
        items.append(
            f'<li>\n<a href="/g/{board.number}">Board {board.number}</a>: '
            f"{escape(board.title)}, against {_names(others)}: "
            f"{escape(board.outcome_for(user_id))}.\n"
            f'<span class="meta">{_moves(board.plies)}; ended {board.updated}{links}</span>\n</li>'
        )
    return Markup("\n".join(items))


def _moves(plies: int) -> str:
    return f"{plies} move{'s' if plies != 1 else ''}"


def _clock_text(clock: dict[str, Any]) -> str:
    text = f"{escape(clock['userid'])} {clock['left']} left"
    if clock["since"]:
        text += f', running since <time datetime="{clock["since_iso"]}">{clock["since"]}</time>'
    return text
