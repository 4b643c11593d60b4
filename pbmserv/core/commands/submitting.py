"""Moving safely: ``GAME submit`` shows the board a move would give and keeps the move until
``GAME confirm`` plays it; ``GAME pass`` where the rules let a player pass."""

from __future__ import annotations

from sqlalchemy import select

from pbmserv.core.commands.looking import try_move
from pbmserv.core.commands.play import board_player, play_and_report
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import game_service as service
from pbmserv.core.play.boards import Board
from pbmserv.core.results import CommandError, Section
from pbmserv.db.models import MoveRow
from pbmserv.games.base import AnyGame, InvalidMoveError, MoveError

#: History entries after a submission that make it stale: the position it was made for is gone.
_STALE_AFTER = ("move", "undo", "submit", "resign", "forfeit", "time", "adjudicate")


@command(
    "submit",
    "GAME submit BOARD USERID PASSWORD MOVE",
    "send a move to be played only when you confirm it, after seeing the board it gives",
    game_scoped=True,
    secret_words=(4,),
    min_words=6,
    move_from=5,
    details='The reply shows the board after the move; "GAME confirm BOARD USERID PASSWORD"\n'
    "then plays it. A later submission replaces it; any move on the board first cancels it.",
)
def submit(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, user, seat = board_player(ctx, game, line)
    trial = try_move(board, seat, line.rest(5))
    service.record_event(ctx, board, "submit", trial.text, seat, trial.public)
    # With chance the board after the move shows a draw not made yet: no diagram then.
    diagram = None if game.SPEC.uses_chance else board.diagram(seat, trial.after)
    context = {
        "game": game.SPEC.name,
        "board": board.number,
        "userid": user.display_id,
        "move": trial.text,
        "diagram": diagram,
        "ends": trial.ends,
    }
    return Section(
        "submitted", context, summary=f"{game.SPEC.name} submit {board.number} {trial.public}"
    )


def _submitted(ctx: CommandContext, board: Board, seat: int) -> str | None:
    """The move ``seat`` submitted for the board's current position, if any."""
    entries = ctx.session.execute(
        select(MoveRow.kind, MoveRow.seat, MoveRow.text)
        .where(MoveRow.game_id == board.row.id, MoveRow.kind.in_(_STALE_AFTER))
        .order_by(MoveRow.id.desc())
        .limit(1)
    ).first()
    if entries is None or entries.kind != "submit" or entries.seat != seat:
        return None
    return str(entries.text)


@command(
    "confirm",
    "GAME confirm BOARD USERID PASSWORD",
    "play the move you submitted",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=5,
)
def confirm(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, _user, seat = board_player(ctx, game, line)
    text = _submitted(ctx, board, seat)
    if text is None:
        raise CommandError(
            f"you have no submitted move waiting on board {board.number} (a move made since "
            "cancels one)",
            hint=f"Submit one with: {game.SPEC.name} submit {board.number} USERID PASSWORD MOVE",
            syntax_was_right=True,
        )
    return play_and_report(ctx, game, board, seat, text)


@command(
    "pass",
    "GAME pass BOARD USERID PASSWORD",
    "pass your turn, in games whose rules allow it",
    game_scoped=True,
    secret_words=(4,),
    min_words=5,
    max_words=5,
)
def pass_turn(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, _user, seat = board_player(ctx, game, line)
    if not board.finished and seat in game.to_move(board.state).seats:
        try:
            game.parse_move(board.state, seat, "pass")
        except InvalidMoveError:
            raise CommandError(
                f"there is no passing in {game.SPEC.title}: make a move",
                syntax_was_right=True,
            ) from None
        except MoveError:
            pass  # a pass, but not now: playing it says why
    return play_and_report(ctx, game, board, seat, "pass")
