"""The game service: load a board, check who may act, apply a move, persist, and tell people.

Everything here runs inside the caller's transaction; a CommandError leaves nothing changed.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session, joinedload

from pbmserv.core.context import CommandContext
from pbmserv.core.parser import article
from pbmserv.core.play import board_mail, consent, numbering
from pbmserv.core.ratings import service as ratings
from pbmserv.core.results import CommandError, MailThread, Notification
from pbmserv.core.robots.identity import is_robot
from pbmserv.core.timing import clocks, vacations
from pbmserv.db.models import GameRow, MoveRow, Observer, Seat, User, table_of
from pbmserv.games.base import (
    OMNISCIENT,
    PUBLIC,
    AnyGame,
    InvalidMoveError,
    MoveError,
    Outcome,
    Termination,
    Viewer,
    move_rng,
)
from pbmserv.time_controls import TimeControl


def new_game_rng(seed: int) -> random.Random:
    return random.Random(seed)


@dataclass
class Board:
    """A loaded board: its row, its game and the live state."""

    row: GameRow
    game: AnyGame
    state: Any

    @property
    def number(self) -> int:
        return self.row.id

    def seat_of(self, user: User) -> int | None:
        for seat in self.row.seats:
            if seat.user_id == user.id:
                return seat.seat
        return None

    def user_at(self, seat: int) -> User:
        return next(s.user for s in self.row.seats if s.seat == seat)

    def seat_label(self, seat: int) -> str:
        return f"{self.user_at(seat).display_id} ({self.game.seat_name(self.state, seat)})"

    def diagram(self, viewer: Viewer, state: Any = None) -> str:
        """The game's text diagram of ``state`` (by default the board's own) for ``viewer``,
        told the users' names so that it can say who is who."""
        players = [s.user.display_id for s in sorted(self.row.seats, key=lambda s: s.seat)]
        return self.game.render(self.state if state is None else state, viewer, players)

    @property
    def finished(self) -> bool:
        return self.row.status != "active"

    def robot_moves_first(self) -> bool:
        """Whether the board's first move is a robot's: its board mail is then the first
        mail of the board, and a mail of the empty board a second before it is one too many."""
        to_move = self.game.to_move(self.state).seats
        return (
            self.game.move_number(self.state) == 0
            and bool(to_move)
            and all(is_robot(self.user_at(seat)) for seat in to_move)
        )


def parse_board_number(text: str) -> int:
    digits = text.lstrip("#")
    if not digits.isdigit() or len(digits) > 9:
        raise CommandError(f'"{text}" is not a board number (board numbers are like 17)')
    return int(digits)


def load_board(ctx: CommandContext, game: AnyGame, board_text: str, *, for_update: bool) -> Board:
    number = parse_board_number(board_text)
    # One query for the board, its seats and their users.
    query = select(GameRow).where(GameRow.id == number).options(joinedload(GameRow.seats))
    if for_update:
        # A row lock on PostgreSQL serialises commands on one board across processes;
        # the version column catches anything that slips past it. FOR NO KEY UPDATE, the
        # lock an UPDATE takes: another transaction's row that only refers to the board (an
        # observer, a move: FOR KEY SHARE) need not wait for it, so it closes no deadlock.
        query = query.with_for_update(of=GameRow, key_share=True)
    row = ctx.session.scalars(query).unique().one_or_none()
    if row is None:
        raise CommandError(f"there is no board {number}", syntax_was_right=True)
    if row.game != game.SPEC.name:
        raise CommandError(
            f"board {number} is {article(row.game)} {row.game} game, not {game.SPEC.name}",
            hint=f"Use: {row.game} ... {number} ...",
        )
    return Board(row=row, game=game, state=game.load(row.state))


def boards_named(lines: Iterable[str]) -> set[int]:
    """The board numbers command lines may name (the third word: ``<game> <verb> <board>``).
    More than the commands will lock, for ``lock_boards``: a word that only looks like a
    board number (a password of digits) costs a lock not needed, nothing else."""
    named = set()
    for line in lines:
        words = line.split()
        digits = words[2].lstrip("#") if len(words) > 2 else ""
        if digits.isdigit() and len(digits) <= 9:
            named.add(int(digits))
    return named


def lock_boards(session: Session, numbers: Iterable[int]) -> None:
    """Lock the boards ``numbers`` (those that exist) in ascending order, as load_board would
    (PostgreSQL; SQLite has one writer at a time anyway).

    A transaction that may lock several boards (a batch of messages, a message with commands on
    two boards) calls this first with all of them: two transactions that each hold one board
    and wait for the other's is a deadlock, and ascending order everywhere rules it out. The
    commands' own locks after it are then already held."""
    wanted = sorted(set(numbers))
    if wanted and session.get_bind().dialect.name != "sqlite":  # SQLite locks it all at BEGIN
        query = (
            select(GameRow.id)
            .where(GameRow.id.in_(wanted))
            .order_by(GameRow.id)
            .with_for_update(key_share=True)
        )
        session.execute(query).all()


#: SQLSTATEs of a transaction the database aborted for its locks: deadlock_detected,
#: serialization_failure. The work itself was fine: it can be done again.
_LOCK_CONFLICTS = frozenset({"40P01", "40001"})


def is_lock_conflict(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is the database aborting a transaction that lost
    a race for locks: the caller redoes the work, with a warning rather than a traceback."""
    seen: BaseException | None = error
    for _depth in range(8):
        if seen is None:
            return False
        for candidate in (seen, getattr(seen, "orig", None)):
            if getattr(candidate, "sqlstate", None) in _LOCK_CONFLICTS:
                return True
        seen = seen.__cause__ or seen.__context__
    return False


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
    record_event(ctx, board, "move", canonical, seat, public, chance, times)
    board.row.ply += 1
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
) -> None:
    """Write one history entry (a move, a resignation, an operator's action), with the
    Message-ID of the mail that caused it, what chance drew in the move and the clocks after
    it (``times``, by seat)."""
    ctx.session.execute(
        insert(table_of(MoveRow)).values(
            game_id=board.row.id,
            ply=board.row.ply,
            seat=seat,
            kind=kind,
            text=text,
            public_text=public_text if public_text != text else None,
            chance=chance,
            clocks=times,
            message_id=ctx.message_id,
            created_at=ctx.now(),
        )
    )


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


def observers(ctx: CommandContext, board: Board) -> list[User]:
    # Most boards have no observer: a cheap look first (Core, no autoflush) spares every move
    # an ORM query.
    anyone = select(Observer.user_id).where(Observer.game_id == board.row.id).limit(1)
    if ctx.session.connection().scalar(anyone) is None:
        return []
    # Nothing a command leaves unflushed changes who observes (each command is flushed).
    with ctx.session.no_autoflush:
        return list(
            ctx.session.scalars(
                select(User)
                .join(Observer, Observer.user_id == User.id)
                .where(Observer.game_id == board.row.id)
                .order_by(User.userid)
            )
        )


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


def _viewer(board: Board, seat: int | None) -> int | str:
    """Who a seat (None: an observer) is to the game's render and svg."""
    if board.finished and board.game.SPEC.hidden_information:
        # However the game ended (even by resignation or a ruling), nothing is secret any more.
        return OMNISCIENT
    return seat if seat is not None else PUBLIC


def board_picture(
    ctx: CommandContext,
    board: Board,
    seat: int | None,
    user: User,
    drawn: dict[Viewer, str] | None = None,
) -> str | None:
    """The board as an SVG picture for the seat (None: an observer), for a user who takes
    board mail with pictures; None for one who takes text alone, or when the operator turned
    pictures off (``board_pictures``). ``drawn`` keeps the pictures of one mailing by viewer:
    each is drawn once, and one for all where the game draws the same for everyone."""
    if user.mail_format != "html" or not ctx.settings.board_pictures:
        return None
    viewer = PUBLIC if board.game.SPEC.one_picture_for_all else _viewer(board, seat)
    pictures = {} if drawn is None else drawn
    if viewer not in pictures:
        pictures[viewer] = board.game.svg(board.state, viewer)
    return pictures[viewer]


def board_view(
    board: Board, seat: int | None, recipient: User | None, *, now: datetime
) -> dict[str, Any]:
    """Everything the board template shows to one viewer (the clocks as they stand at
    ``now``)."""
    game = board.game
    turn = game.to_move(board.state)
    spec = game.SPEC
    viewer = _viewer(board, seat)
    your_turn = seat is not None and seat in turn.seats and not board.finished
    verb = next((k for k in spec.move_kinds if k.name == turn.stage), None)
    return {
        "game": spec.name,
        "title": spec.title,
        "board": board.number,
        "diagram": board.diagram(viewer),
        "players": [
            {
                "seat": s.seat,
                "role": game.seat_name(board.state, s.seat),
                "userid": s.user.display_id,
                "away": s.user.away_since is not None and not board.finished,
            }
            for s in board.row.seats
        ],
        "status": status_for(board, seat),
        "finished": board.finished,
        "result": result_text(board) if board.finished else None,
        "moves": game.move_number(board.state),
        # In the game's own numbering (a chess game numbers both sides' moves as one).
        "moves_played": numbering.played_so_far(spec, game.move_number(board.state)),
        "next_move": numbering.number_of(spec, game.move_number(board.state)),
        "last_move": game.last_move_text(board.state),
        "your_turn": your_turn,
        "prompt": turn.prompts.get(seat) if your_turn and seat is not None else None,
        "waiting_for": [board.user_at(s).display_id for s in sorted(turn.seats)],
        "userid": recipient.display_id if recipient else None,
        "has_swap": spec.has_swap,
        # The command the player replies with: "move", or the game's verb for this stage.
        "reply_verb": verb.name if verb else "move",
        "reply_args": verb.takes if verb else "MOVE",
        "time_control": board.row.time_control,
        "clocks": clocks.view(board.row, now, seat),
        "accepted": consent.is_accepted(board.row, seat) or board.finished,
    }


def notify_board(
    ctx: CommandContext,
    board: Board,
    event: str,
    private_events: Mapping[int, str] | None = None,
    *,
    new_game: bool = False,
) -> None:
    """Mail the board to every player (their own view) and every observer (public view).

    ``event`` is the public account of what happened; ``private_events`` replaces it for the
    seats that may know more (the mover of a hidden move). ``new_game``: this mail is the
    first of the board (a robot's opening move, whose board was not mailed before it).
    """
    private_events = private_events or {}
    recipients: list[tuple[User, int | None]] = [
        (s.user, s.seat) for s in board.row.seats if not s.user.disabled
    ]
    player_ids = {s.user_id for s in board.row.seats}
    recipients += [(u, None) for u in observers(ctx, board) if u.id not in player_ids]
    # A new game and a game's end come at once; other moves wait for a daily digest's users.
    news = new_game or board.finished or board.game.move_number(board.state) == 0
    recipients = [(u, seat) for u, seat in recipients if news or u.digest != "daily"]
    threads = board_mail.threads(ctx, board.row, recipients)
    drawn: dict[Viewer, str] = {}
    for user, seat in recipients:
        seen = event if seat is None else private_events.get(seat, event)
        ctx.notify(board_notification(ctx, board, user, seat, seen, threads[user.id], drawn))


def board_notification(
    ctx: CommandContext,
    board: Board,
    user: User,
    seat: int | None,
    event: str,
    thread: MailThread,
    drawn: dict[Viewer, str] | None = None,
) -> Notification:
    """The board mail of ``board`` to one reader (a seat's player, or an observer), in their
    ``thread`` (which carries the seat's reply address, if any); ``drawn``: the pictures of
    the mailing so far (see :func:`board_picture`)."""
    return Notification(
        to=user.email,
        channel="board",
        kind="board",
        data={
            "view": board_view(board, seat, user, now=ctx.now()),
            "event": event,
            "reply_by_mail": thread.reply_tag is not None,
        },
        thread=thread,
        picture=board_picture(ctx, board, seat, user, drawn),
    )


def board_notice(
    ctx: CommandContext,
    board: Board,
    user: User,
    kind: str,
    data: dict[str, Any],
    *,
    with_picture: bool = False,
) -> None:
    """A notice about ``board`` to ``user`` (a reminder, a chat line, a proposal), in the
    user's thread of the board; ``with_picture``: it shows the board (a reminder)."""
    seat = next((s.seat for s in board.row.seats if s.user_id == user.id), None)
    thread = board_mail.thread(ctx, board.row, user, seat)
    data = {**data, "reply_by_mail": thread.reply_tag is not None}
    picture = board_picture(ctx, board, seat, user) if with_picture else None
    ctx.notify(
        Notification(
            to=user.email, channel="notice", kind=kind, data=data, thread=thread, picture=picture
        )
    )
