"""The game service: load a board, check who may act, apply a move, persist, and tell people.

Everything here runs inside the caller's transaction; a CommandError leaves nothing changed.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, insert, select

from pbmserv.core.context import CommandContext
from pbmserv.core.play import consent, numbering
from pbmserv.core.play.boards import Board, new_game_rng
from pbmserv.core.ratings import service as ratings
from pbmserv.core.results import CommandError
from pbmserv.core.timing import clocks, vacations
from pbmserv.db.models import GameRow, MoveRow, Observer, Seat, User, table_of
from pbmserv.games.base import (
    AnyGame,
    InvalidMoveError,
    MoveError,
    Outcome,
    Termination,
    move_rng,
)
from pbmserv.time_controls import TimeControl


def create_board(
    ctx: CommandContext,
    game: AnyGame,
    options: dict[str, Any],
    players: Sequence[User],
    time_control: TimeControl | None = None,
    accepted: Collection[int] | None = None,
) -> Board:
    """A new board of ``game`` between ``players`` (in seat order), with a clock of
    ``time_control`` (None: none, the idle rule), accepted by the users ``accepted`` (None:
    by all; see core.play.consent)."""
    seed = secrets.randbits(62)
    state = game.new_game(options, new_game_rng(seed))
    now = ctx.now()
    row = GameRow(
        game=game.SPEC.name,
        options=options,
        seed=seed,
        status="active",
        ply=0,
        to_move="",
        state=game.dump(state),
        state_version=game.STATE_VERSION,
        created_at=now,
        updated_at=now,
    )
    row.seats = [Seat(seat=i, user=user, user_id=user.id) for i, user in enumerate(players)]
    board = Board(row=row, game=game, state=state)
    _store_progress(board)
    consent.mark_accepted(row.seats, accepted, now)
    clocks.start(row, time_control, now, ctx.settings.reminder_hours)
    ctx.session.add(row)
    ctx.session.flush()
    return board


def _store_progress(board: Board) -> None:
    turn = board.game.to_move(board.state)
    board.row.to_move = ",".join(str(s) for s in sorted(turn.seats))


@dataclass(frozen=True)
class Played:
    """A move just made: its canonical text (the mover's) and what others may see of it."""

    text: str
    public_text: str


def play(ctx: CommandContext, board: Board, seat: int, text: str) -> Played:
    """Parse and apply ``text`` for ``seat``."""
    return _play(ctx, board, seat, lambda: board.game.parse_move(board.state, seat, text))


def play_swap(ctx: CommandContext, board: Board, seat: int) -> Played:
    """Take the swap for ``seat``, in a game that has one (``SPEC.has_swap``)."""
    return _play(ctx, board, seat, lambda: board.game.swap_move(board.state, seat))


def _play(ctx: CommandContext, board: Board, seat: int, choose: Callable[[], Any]) -> Played:
    """Apply the move ``choose`` gives for ``seat`` (a MoveError if there is none)."""
    if board.finished:
        raise CommandError(
            f"board {board.number} is over: {result_text(board)}", syntax_was_right=True
        )
    turn = board.game.to_move(board.state)
    if seat not in turn.seats:
        waiting = ", ".join(board.user_at(s).display_id for s in sorted(turn.seats))
        raise CommandError(
            f"it is not your turn on board {board.number}: waiting for {waiting}",
            syntax_was_right=True,
        )
    consent.accept(board.row, seat, ctx.now())  # a move accepts the board
    if board.row.time_control is not None:
        vacations.before_move(ctx, board.row, seat)
    try:
        move = choose()
        canonical = board.game.format_move(board.state, move)
        public = board.game.public_move_text(board.state, move)
        new_state = board.game.apply(board.state, move, move_rng(board.row.seed, board.row.ply))
    except InvalidMoveError as error:
        raise CommandError(str(error)) from None
    except MoveError as error:  # well written, but the rules forbid it: no syntax lesson
        raise CommandError(str(error), syntax_was_right=True) from None
    chance = board.game.chance_outcome(new_state) if board.game.SPEC.uses_chance else None
    board.state = new_state
    board.row.state = board.game.dump(new_state)
    board.row.updated_at = ctx.now()
    _store_progress(board)
    outcome = board.game.outcome(new_state)
    if outcome is not None:
        conclude(ctx, board, outcome)
    times = clocks.after_move(ctx, board.row, seat)
    # The ply counted before the history entry is written (which flushes the board): the
    # board's row is then written once a move, not twice.
    board.row.ply += 1
    record_event(ctx, board, "move", canonical, seat, public, chance, times, ply=board.row.ply - 1)
    return Played(canonical, public)


def replay_moves(board: Board, texts: Sequence[str]) -> Any:
    """The state after playing ``texts`` (canonical move texts) from the board's start."""
    game, state = board.game, starting_state(board)
    for ply, text in enumerate(texts):
        seats = sorted(game.to_move(state).seats)
        move = next(
            (m for seat in seats for m in [_try_parse(game, state, seat, text)] if m is not None),
            None,
        )
        if move is None:
            raise CommandError(
                f"board {board.number}: stored "
                f"{numbering.named(board.game.SPEC, ply, text)} replays no more"
            )
        state = game.apply(state, move, move_rng(board.row.seed, ply))
    return state


def take_back_moves(ctx: CommandContext, board: Board, count: int) -> list[MoveRow]:
    """Take the last ``count`` moves out of the history and replay the rest: the moves left
    always replay to the board's state. Returns the moves taken back, oldest first."""
    moves = [row for row in history(ctx, board) if row.kind == "move"]
    kept, taken = moves[: len(moves) - count], moves[len(moves) - count :]
    for row in taken:
        ctx.session.delete(row)
    board.state = replay_moves(board, [row.text for row in kept])
    board.row.ply = len(kept)
    board.row.state = board.game.dump(board.state)
    _store_progress(board)
    board.row.updated_at = ctx.now()
    board.row.reminded_at = None
    clocks.restore(ctx, board.row, kept[-1].clocks if kept else None)
    return taken


def _try_parse(game: AnyGame, state: Any, seat: int, text: str) -> Any:
    try:
        return game.parse_move(state, seat, text)
    except MoveError:
        return None


def record_event(
    ctx: CommandContext,
    board: Board,
    kind: str,
    text: str,
    seat: int | None = None,
    public_text: str | None = None,
    chance: Mapping[str, Any] | None = None,
    times: Mapping[str, float] | None = None,
    ply: int | None = None,
) -> None:
    """Write one history entry (a move, a resignation, an operator's action), with the
    Message-ID of the mail that caused it, what chance drew in the move and the clocks after
    it (``times``, by seat); at ``ply`` (default: the board's ply now)."""
    ctx.session.execute(
        _INSERT_MOVE,
        {
            "game_id": board.row.id,
            "ply": board.row.ply if ply is None else ply,
            "seat": seat,
            "kind": kind,
            "text": text,
            "public_text": public_text if public_text != text else None,
            "chance": chance,
            "clocks": times,
            "message_id": ctx.message_id,
            "created_at": ctx.now(),
        },
    )


#: Built once: every move writes one (building it costs more than running it).
_INSERT_MOVE = insert(table_of(MoveRow))


def conclude(ctx: CommandContext, board: Board, outcome: Outcome) -> None:
    """End the board with ``outcome``, noted on the context for whatever depends on it (its
    tournament), which whoever runs the command tells."""
    finish(board, outcome)
    if unaccepted := consent.unaccepted_seats(board.row):  # rated only once all accepted
        board.row.result = {**(board.row.result or {}), "unaccepted": unaccepted}
    clocks.stop(board.row, ctx.now())
    ratings.rate(ctx, board.row)
    ctx.finished_boards.append(board.row)


def finish(board: Board, outcome: Outcome) -> None:
    """Store ``outcome`` on the board; use :func:`conclude` unless reopening is not final."""
    board.row.status = "finished"
    board.row.to_move = ""
    board.row.result = {
        "winners": sorted(outcome.winners),
        "reason": outcome.reason,
        "scores": dict(outcome.scores) if outcome.scores else None,
        "termination": outcome.termination.value,
    }


def resign(ctx: CommandContext, board: Board, seat: int) -> None:
    if board.finished:
        raise CommandError(f"board {board.number} is already over: {result_text(board)}")
    consent.accept(board.row, seat, ctx.now())  # a resignation is no refusal: it counts
    record_event(ctx, board, "resign", "resigns", seat)
    others = frozenset(s.seat for s in board.row.seats if s.seat != seat)
    reason = f"{board.seat_label(seat)} resigned"
    conclude(ctx, board, Outcome(others, reason, termination=Termination.RESIGNATION))
    board.row.updated_at = ctx.now()


def result_text(board: Board) -> str:
    result = board.row.result or {}
    winners = [board.seat_label(s) for s in result.get("winners", [])]
    if result.get("declined"):
        head = "declined"
    else:
        head = f"{' and '.join(winners)} won{_margin(result)}" if winners else "drawn"
    unaccepted = [board.user_at(s).display_id for s in result.get("unaccepted", [])]
    tail = f"; not rated: {' and '.join(unaccepted)} never accepted it" if unaccepted else ""
    return f"{head} ({result.get('reason', '')}){tail}"


def _margin(result: dict[str, Any]) -> str:
    """Words like " by 3 points" when the game was won on points (Entropy); else nothing."""
    scores = {int(seat): points for seat, points in (result.get("scores") or {}).items()}
    winners = set(result.get("winners", []))
    won = [scores[s] for s in winners if s in scores]
    lost = [points for seat, points in scores.items() if seat not in winners]
    if not won or not lost or min(won) <= max(lost):
        return ""
    margin = min(won) - max(lost)
    return f" by {margin} point{'s' if margin != 1 else ''}"


def history(ctx: CommandContext, board: Board) -> list[MoveRow]:
    return list(
        ctx.session.scalars(
            select(MoveRow).where(MoveRow.game_id == board.row.id).order_by(MoveRow.id)
        )
    )


def starting_state(board: Board) -> Any:
    """The board's first position, rebuilt from its options and seed."""
    return board.game.new_game(board.row.options, new_game_rng(board.row.seed))


def board_outcome(board: Board) -> Outcome | None:
    """The stored result as an Outcome (resignations and adjudications included)."""
    if board.row.result is None:
        return None
    result = board.row.result
    scores = result.get("scores")
    return Outcome(
        winners=frozenset(result.get("winners", [])),
        reason=result.get("reason", ""),
        scores={int(k): v for k, v in scores.items()} if scores else None,
        termination=_termination(result.get("termination")),
    )


def _termination(stored: object) -> Termination:
    """The stored kind of end; UNKNOWN for results stored before kinds were kept."""
    try:
        return Termination(stored)
    except ValueError:
        return Termination.UNKNOWN


def record_headers(board: Board) -> dict[str, str]:
    """Facts about the board for a game record (see AnyGame.export)."""
    headers = {
        "Board": str(board.number),
        "Date": board.row.created_at.strftime("%Y.%m.%d"),
        "Site": "pbmserv",
    }
    for seat in board.row.seats:
        headers[f"Seat{seat.seat}"] = seat.user.display_id
    return headers


#: Does the board have an observer? (Built once, as the statements of every move.)
_ANY_OBSERVER = select(Observer.user_id).where(Observer.game_id == bindparam("board")).limit(1)
_OBSERVERS = (
    select(User)
    .join(Observer, Observer.user_id == User.id)
    .where(Observer.game_id == bindparam("board"))
    .order_by(User.userid)
)


def observers(ctx: CommandContext, board: Board) -> list[User]:
    # Most boards have no observer: a cheap look first (Core, no autoflush) spares every move
    # an ORM query.
    wanted = {"board": board.row.id}
    if ctx.session.connection().scalar(_ANY_OBSERVER, wanted) is None:
        return []
    # Nothing a command leaves unflushed changes who observes (each command is flushed).
    with ctx.session.no_autoflush:
        return list(ctx.session.scalars(_OBSERVERS, wanted))


def status_for(board: Board, seat: int | None) -> str:
    """The short state in a board mail's Subject, as seen by ``seat`` (None: an observer)."""
    if board.finished:
        winners = set((board.row.result or {}).get("winners", []))
        if seat is None:
            return "game over"
        if (board.row.result or {}).get("declined"):
            return "declined"
        if not winners:
            return "draw"
        return "you won" if seat in winners else "you lost"
    turn = board.game.to_move(board.state)
    if seat is not None and seat in turn.seats:
        return "your move"
    waiting = ", ".join(board.user_at(s).display_id for s in sorted(turn.seats))
    return f"waiting for {waiting}" if seat is not None else f"{waiting} to move"


def active_seats(ctx: CommandContext, user: User) -> list[tuple[GameRow, int]]:
    """The user's active boards, in board order, each with the user's seat."""
    rows = ctx.session.scalars(
        select(GameRow)
        .join(Seat, Seat.game_id == GameRow.id)
        .where(Seat.user_id == user.id, GameRow.status == "active")
        .order_by(GameRow.id)
    ).all()
    return [(row, next(s.seat for s in row.seats if s.user_id == user.id)) for row in rows]
