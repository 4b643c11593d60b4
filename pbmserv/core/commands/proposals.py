"""propose, accept, reject and draw: a draw or taking back moves, by the players' consent;
accept also takes a board someone else started (core.play.consent)."""

from __future__ import annotations

from pbmserv.core.commands.play import board_player
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import consent, proposals
from pbmserv.core.play import game_service as service
from pbmserv.core.play.board_views import board_notice, notify_board
from pbmserv.core.play.boards import Board
from pbmserv.core.results import CommandError, Section
from pbmserv.core.timing import clocks
from pbmserv.games.base import AnyGame

_KIND_WORDS = {"draw": "draw", "undo": "undo", "takeback": "undo", "take-back": "undo"}


def _kind(word: str) -> str:
    kind = _KIND_WORDS.get(word.lower())
    if kind is None:
        raise CommandError(f'"{word}" cannot be proposed: propose draw or undo')
    return kind


def _tell_others(ctx: CommandContext, board: Board, seat: int, data: dict[str, object]) -> None:
    for seat_row in board.row.seats:
        if seat_row.seat != seat and not seat_row.user.disabled:
            board_notice(ctx, board, seat_row.user, "proposal", data)


def _section(game: AnyGame, board: Board, action: str, kind: str, **more: object) -> Section:
    data = {"game": game.SPEC.name, "board": board.number, "action": action, "kind": kind}
    data.update({"waiting": False, "happened": None, "result": None}, **more)
    return Section(
        "proposal",
        data,
        summary=f"{game.SPEC.name} {action} {kind} board={board.number}",
    )


@command(
    "propose",
    "GAME propose BOARD USERID PASSWORD draw|undo",
    "propose a draw, or to take back your last move, to your opponent",
    game_scoped=True,
    secret_words=(4,),
    min_words=6,
    max_words=6,
    details="A draw proposal stands until it is accepted or rejected, or you move again.\n"
    "undo takes back your last move, and your opponent's reply if it is your turn; it lapses\n"
    "at the next move. Games whose rules know no drawn result refuse draw.",
)
def propose(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    kind = _kind(line.words[5])
    board, _user, seat = board_player(ctx, game, line)
    return _propose(ctx, game, board, seat, kind)


def _propose(ctx: CommandContext, game: AnyGame, board: Board, seat: int, kind: str) -> Section:
    standing = proposals.open_proposal(ctx, board)
    if standing is not None and standing.kind == kind and standing.seat != seat:
        # Proposing what is proposed: agreed.
        return accept_and_tell(ctx, game, board, seat, standing)
    proposals.propose(ctx, board, seat, kind)
    proposer = board.seat_label(seat)
    _tell_others(
        ctx,
        board,
        seat,
        {
            "game": game.SPEC.name,
            "board": board.number,
            "action": "proposed",
            "kind": kind,
            "by": proposer,
        },
    )
    return _section(game, board, "proposed", kind)


def _answer_kind(line: CommandLine) -> str | None:
    return _kind(line.words[5]) if len(line.words) > 5 else None


@command(
    "accept",
    "GAME accept BOARD USERID PASSWORD [draw|undo]",
    "accept a board someone else started, or your opponent's proposal (a draw, an undo)",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=6,
    details="A board you did not start runs no clock of yours and is not rated until you\n"
    "accept it (or move on it); until then you may decline it instead:\n"
    "GAME decline BOARD USERID PASSWORD.",
)
def accept(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    word = line.words[5].lower() if len(line.words) > 5 else None
    board, _user, seat = board_player(ctx, game, line)
    # Bare, it accepts the board if the seat has not, unless a proposal waits for its answer.
    if word in ("board", "challenge") or (word is None and _board_to_accept(ctx, board, seat)):
        return _accept_board(ctx, game, board, seat)
    kind = _answer_kind(line)
    standing = proposals.answerable(ctx, board, seat, kind)
    return accept_and_tell(ctx, game, board, seat, standing)


def _board_to_accept(ctx: CommandContext, board: Board, seat: int) -> bool:
    if consent.is_accepted(board.row, seat):
        return False
    standing = proposals.open_proposal(ctx, board)
    return standing is None or standing.seat == seat or seat in standing.accepted_by


def _accept_board(ctx: CommandContext, game: AnyGame, board: Board, seat: int) -> Section:
    """The seat's player accepts the board: from now on it runs their clock and is rated."""
    if board.finished:
        raise CommandError(
            f"board {board.number} is over: {service.result_text(board)}", syntax_was_right=True
        )
    if consent.is_accepted(board.row, seat):
        raise CommandError(f"you have accepted board {board.number} already", syntax_was_right=True)
    consent.accept(board.row, seat, ctx.now())
    clocks.run(board.row, ctx.now(), ctx.settings.reminder_hours)
    service.record_event(ctx, board, "agree", "accepts the board", seat)
    notify_board(ctx, board, f"{board.seat_label(seat)} accepted the board.")
    data = {"game": game.SPEC.name, "board": board.number, "clock": board.row.time_control}
    return Section("accepted_board", data, summary=f"{game.SPEC.name} accept board={board.number}")


def accept_and_tell(
    ctx: CommandContext, game: AnyGame, board: Board, seat: int, standing: proposals.Proposal
) -> Section:
    happened = proposals.accept(ctx, board, seat, standing)
    if happened is None:
        return _section(game, board, "accepted", standing.kind, waiting=True)
    notify_board(ctx, board, happened)
    result = service.result_text(board) if board.finished else None
    return _section(game, board, "accepted", standing.kind, happened=happened, result=result)


@command(
    "reject",
    "GAME reject BOARD USERID PASSWORD [draw|undo]",
    "refuse your opponent's proposal; the game goes on",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=6,
)
def reject(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    kind = _answer_kind(line)
    board, _user, seat = board_player(ctx, game, line)
    standing = proposals.answerable(ctx, board, seat, kind)
    return reject_and_tell(ctx, game, board, seat, standing)


def reject_and_tell(
    ctx: CommandContext, game: AnyGame, board: Board, seat: int, standing: proposals.Proposal
) -> Section:
    """Record ``seat``'s refusal of ``standing`` and tell its proposer."""
    proposals.reject(ctx, board, seat, standing)
    proposer = board.user_at(standing.seat)
    if not proposer.disabled:
        data = {
            "game": game.SPEC.name,
            "board": board.number,
            "action": "rejected",
            "kind": standing.kind,
            "by": board.seat_label(seat),
        }
        board_notice(ctx, board, proposer, "proposal", data)
    return _section(game, board, "rejected", standing.kind)


@command(
    "draw",
    "GAME draw BOARD USERID PASSWORD",
    "claim a draw the rules allow now, accept the draw proposed, or propose one",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=5,
    details="In that order: a draw the rules let you claim on your turn (Extinction Chess:\n"
    "threefold repetition, the fifty-move rule) ends the game at once; otherwise a draw your\n"
    'opponent proposed is agreed; otherwise this is "GAME propose BOARD USERID PASSWORD draw".',
)
def draw(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, _user, seat = board_player(ctx, game, line)
    claimed = proposals.claim_draw(ctx, board, seat)
    if claimed is not None:
        happened = f"{board.seat_label(seat)} claimed a draw: {claimed.reason}."
        notify_board(ctx, board, happened)
        result = service.result_text(board)
        return _section(game, board, "claimed", "draw", happened=happened, result=result)
    if board.finished:
        raise CommandError(
            f"board {board.number} is over: {service.result_text(board)}", syntax_was_right=True
        )
    return _propose(ctx, game, board, seat, "draw")
