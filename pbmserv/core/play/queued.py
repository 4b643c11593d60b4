"""Conditional moves: "if my opponent plays THEIRS, play MINE at once", in pairs.

A queue is a history entry of kind ``queue`` (never shown to anyone but its owner), written at
the ply it waits at; the server answers the opponent's move from it and writes what is left at
the new ply. Any other move leaves it at an old ply, which is how it is dropped. Games with
hidden information or chance refuse queues: checking a queued pair would need the secret or
the draw to come.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from pbmserv.core.context import CommandContext
from pbmserv.core.play import game_service as service
from pbmserv.core.play.boards import Board
from pbmserv.core.play.game_service import Played
from pbmserv.core.results import CommandError
from pbmserv.db.models import MoveRow
from pbmserv.games.base import InvalidMoveError, MoveError, move_rng

#: Most pairs one queue holds.
MAX_PAIRS = 20
_SEPARATOR = "\n"


def refusal(board: Board) -> str | None:
    """Why this board's game cannot take queued moves, or None."""
    spec = board.game.SPEC
    if spec.hidden_information:
        return f"{spec.title} hides moves: a queued move would need to see the hidden ones"
    if spec.uses_chance:
        return f"{spec.title} draws by chance after moves: a queue cannot know the draws"
    return None


def queue(ctx: CommandContext, board: Board, seat: int, moves: Sequence[str]) -> list[str]:
    """Check the pairs against the position, store them for ``seat``; their canonical texts."""
    why = refusal(board)
    if why is not None:
        raise CommandError(why, syntax_was_right=True)
    if board.finished:
        raise CommandError(
            f"board {board.number} is over: {service.result_text(board)}", syntax_was_right=True
        )
    if not all(moves):
        raise CommandError("each comma must stand between two moves")
    if len(moves) % 2 or not moves:
        raise CommandError("write the moves in pairs: the opponent's move, then yours")
    if len(moves) > 2 * MAX_PAIRS:
        raise CommandError(f"a queue holds at most {MAX_PAIRS} pairs")
    game, state, ply = board.game, board.state, board.row.ply
    texts: list[str] = []
    for index, text in enumerate(moves):
        mover_turn = game.to_move(state).seats
        theirs = index % 2 == 0
        if theirs and (seat in mover_turn or not mover_turn):
            when = f"after {texts[-1]}" if texts else "now"
            raise CommandError(
                f"it is not your opponent's turn {when}: a queue answers their moves",
                syntax_was_right=True,
            )
        if not theirs and seat not in mover_turn:
            raise CommandError(
                f"after {texts[-1]} it is not your turn, so {text} cannot answer it",
                syntax_was_right=True,
            )
        (mover,) = sorted(mover_turn)[:1]
        try:
            move = game.parse_move(state, mover, text)
            texts.append(game.format_move(state, move))
            state = game.apply(state, move, move_rng(board.row.seed, ply))
        except InvalidMoveError as error:
            raise CommandError(f"in the queue: {error}") from None
        except MoveError as error:
            raise CommandError(f"in the queue: {error}", syntax_was_right=True) from None
        ply += 1
        if game.outcome(state) is not None and index < len(moves) - 1:
            raise CommandError(f"the game would be over after {text}: end the queue there")
    service.record_event(ctx, board, "queue", _SEPARATOR.join(texts), seat)
    _queued_on(ctx, board)
    return texts


def clear(ctx: CommandContext, board: Board, seat: int) -> None:
    service.record_event(ctx, board, "queue", "", seat)


def pending(
    ctx: CommandContext, board: Board, seat: int, *, at_ply: int | None = None
) -> list[str]:
    """``seat``'s queued texts waiting at the board's ply (or ``at_ply``): empty if none."""
    row = ctx.session.execute(
        select(MoveRow.text, MoveRow.ply)
        .where(MoveRow.game_id == board.row.id, MoveRow.kind == "queue", MoveRow.seat == seat)
        .order_by(MoveRow.id.desc())
        .limit(1)
    ).first()
    wanted = board.row.ply if at_ply is None else at_ply
    if row is None or row.ply != wanted or not row.text:
        return []
    return str(row.text).split(_SEPARATOR)


def answer(
    ctx: CommandContext, board: Board, mover: int, played: Played
) -> tuple[int, Played] | None:
    """If another player queued an answer to the move just played, play it for them: the
    seat and the move; the rest of that queue then waits at the new ply."""
    if board.finished or refusal(board) is not None:
        return None  # (no query on the move's hot path where no queue can exist)
    if ctx.lookups.queues.get(board.row.id) is False:
        return None  # the batch looked once: this board has no queue
    for seat_row in board.row.seats:
        seat = seat_row.seat
        if seat == mover:
            continue
        queued = pending(ctx, board, seat, at_ply=board.row.ply - 1)
        if len(queued) < 2 or queued[0] != played.text:
            continue
        if seat not in board.game.to_move(board.state).seats:
            continue
        try:
            reply = service.play(ctx, board, seat, queued[1])
        except CommandError:
            return None  # no longer legal: the queue is dropped (it stays at an old ply)
        if len(queued) > 2 and not board.finished:
            service.record_event(ctx, board, "queue", _SEPARATOR.join(queued[2:]), seat)
            _queued_on(ctx, board)
        return seat, reply
    return None


def _queued_on(ctx: CommandContext, board: Board) -> None:
    """The batch's lookup learns the board now has a queue."""
    ctx.lookups.queues[board.row.id] = True


#: Built once (every batch asks): the boards among ``boards`` that have had a queued move.
_QUEUED_ON = (
    select(MoveRow.game_id)
    .where(MoveRow.game_id.in_(bindparam("boards", expanding=True)), MoveRow.kind == "queue")
    .distinct()
)


def queues_on(session: Session, boards: Iterable[int]) -> dict[int, bool]:
    """Whether each of ``boards`` has had a queued move (one query for a batch's boards)."""
    wanted = sorted(set(boards))
    if not wanted:
        return {}
    # Core on the session's connection: asked first in a batch, before anything is written.
    found = set(session.connection().scalars(_QUEUED_ON, {"boards": wanted}))
    return {board: board in found for board in wanted}
