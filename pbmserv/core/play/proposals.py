"""Proposals: a draw, or taking back moves, made by one player and settled by the others'
consent. They live in the board's history (``propose``, ``accept``, ``reject`` entries), so a
board's open proposal is a query, not state a game must carry.

A draw proposal lapses when its maker moves again; an undo proposal at the next move, since the
moves it would take back are then no longer the last."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.core.context import CommandContext
from pbmserv.core.play import consent, numbering
from pbmserv.core.play import game_service as service
from pbmserv.core.play.boards import Board
from pbmserv.core.results import CommandError
from pbmserv.core.timing import clocks
from pbmserv.db.models import MoveRow
from pbmserv.games.base import Outcome, Termination

#: What a proposal is written as in a board's history.
PROPOSALS = {"draw": "proposes a draw", "undo": "proposes to take back moves"}
#: Entries after a proposal that close it whatever it was.
_CLOSING = frozenset(
    {"reject", "undo", "resign", "forfeit", "time", "adjudicate", "decline", "claim"}
)


@dataclass(frozen=True)
class Proposal:
    kind: str  # draw | undo
    seat: int  # who proposed it
    accepted_by: frozenset[int]


def open_proposal(ctx: CommandContext, board: Board) -> Proposal | None:
    """The board's proposal still waiting for an answer, if any."""
    if board.finished:
        return None
    return open_proposal_on(ctx.session, board.row.id)


def open_proposal_on(session: Session, game_id: int) -> Proposal | None:
    """The open proposal of the active board ``game_id``, if any."""
    made = session.execute(
        select(MoveRow.id, MoveRow.text, MoveRow.seat)
        .where(MoveRow.game_id == game_id, MoveRow.kind == "propose")
        .order_by(MoveRow.id.desc())
        .limit(1)
    ).first()
    if made is None or made.seat is None:
        return None
    kind = next((k for k, text in PROPOSALS.items() if text == made.text), None)
    if kind is None:
        return None
    accepted: set[int] = set()
    later = session.execute(
        select(MoveRow.kind, MoveRow.seat).where(MoveRow.game_id == game_id, MoveRow.id > made.id)
    )
    for entry_kind, seat in later:
        if entry_kind in _CLOSING:
            return None
        if entry_kind == "move" and (kind == "undo" or seat == made.seat):
            return None
        if entry_kind == "accept" and seat is not None:
            accepted.add(seat)
    return Proposal(kind, made.seat, frozenset(accepted))


def _undo_count(ctx: CommandContext, board: Board, seat: int) -> int:
    """How many moves an undo for ``seat`` takes back: its last move and every move since."""
    movers = ctx.session.scalars(
        select(MoveRow.seat)
        .where(MoveRow.game_id == board.row.id, MoveRow.kind == "move")
        .order_by(MoveRow.id)
    ).all()
    for count, mover in enumerate(reversed(movers), start=1):
        if mover == seat:
            return count
    return 0


def propose(ctx: CommandContext, board: Board, seat: int, kind: str) -> Proposal:
    """Record ``seat``'s proposal; the caller tells the other players."""
    if board.finished:
        raise CommandError(
            f"board {board.number} is over: {service.result_text(board)}", syntax_was_right=True
        )
    if kind == "draw" and not board.game.SPEC.draw_by_agreement:
        raise CommandError(
            f"{board.game.SPEC.title} has no drawn result, so no draw can be agreed",
            syntax_was_right=True,
        )
    if kind == "undo" and _undo_count(ctx, board, seat) == 0:
        raise CommandError(
            f"you have not moved on board {board.number}: there is nothing to take back",
            syntax_was_right=True,
        )
    standing = open_proposal(ctx, board)
    if standing is not None:
        who = board.seat_label(standing.seat)
        if standing.seat == seat:
            raise CommandError(
                f"your {standing.kind} proposal on board {board.number} is still waiting for "
                "an answer",
                syntax_was_right=True,
            )
        raise CommandError(
            f"{who} has proposed {_what(standing.kind)} on board {board.number}: accept or "
            "reject it first",
            syntax_was_right=True,
        )
    service.record_event(ctx, board, "propose", PROPOSALS[kind], seat)
    return Proposal(kind, seat, frozenset())


def answerable(ctx: CommandContext, board: Board, seat: int, kind: str | None) -> Proposal:
    """The open proposal ``seat`` may accept or reject (of ``kind``, if named)."""
    standing = open_proposal(ctx, board)
    if standing is None or standing.seat == seat or seat in standing.accepted_by:
        raise CommandError(
            f"there is no proposal waiting for your answer on board {board.number}",
            syntax_was_right=True,
        )
    if kind is not None and kind != standing.kind:
        raise CommandError(
            f"the proposal on board {board.number} is {_what(standing.kind)}, not {_what(kind)}",
            syntax_was_right=True,
        )
    return standing


def accept(ctx: CommandContext, board: Board, seat: int, standing: Proposal) -> str | None:
    """Record ``seat``'s consent; once every other player has agreed, carry the proposal out
    and return what happened (None: others must still agree)."""
    if consent.accept(board.row, seat, ctx.now()):  # agreeing accepts the board (core.play.consent)
        clocks.run(board.row, ctx.now(), ctx.settings.reminder_hours)
    service.record_event(ctx, board, "accept", f"accepts the {standing.kind} proposal", seat)
    others = {s.seat for s in board.row.seats} - {standing.seat}
    if not others <= standing.accepted_by | {seat}:
        return None
    proposer = board.seat_label(standing.seat)
    if standing.kind == "draw":
        reason = f"draw agreed: {board.seat_label(seat)} accepted {proposer}'s proposal"
        outcome = Outcome(frozenset(), reason, termination=Termination.AGREEMENT)
        service.conclude(ctx, board, outcome)
        board.row.updated_at = ctx.now()
        return f"Draw agreed: {board.seat_label(seat)} accepted {proposer}'s proposal."
    taken = service.take_back_moves(ctx, board, _undo_count(ctx, board, standing.seat))
    spec = board.game.SPEC
    listed = ", ".join(numbering.named(spec, r.ply, r.public_text or r.text) for r in taken)
    service.record_event(ctx, board, "undo", f"took back {listed} by agreement")
    return f"By agreement, {proposer} took back {listed}."


def reject(ctx: CommandContext, board: Board, seat: int, standing: Proposal) -> None:
    service.record_event(ctx, board, "reject", f"rejects the {standing.kind} proposal", seat)


def claim_draw(ctx: CommandContext, board: Board, seat: int) -> Outcome | None:
    """End the board by the draw ``seat`` may claim now (the game's rules), if there is one."""
    if board.finished:
        return None
    outcome = board.game.claimable_draw(board.state, seat)
    if outcome is None:
        return None
    service.record_event(ctx, board, "claim", f"claims a draw: {outcome.reason}", seat)
    service.conclude(ctx, board, outcome)
    board.row.updated_at = ctx.now()
    return outcome


def _what(kind: str) -> str:
    return "a draw" if kind == "draw" else "taking back moves"
