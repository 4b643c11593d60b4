"""Looking without moving: ``GAME show BOARD[#MOVE]`` (the public position after move N) and
``GAME preview BOARD USERID PASSWORD MOVE`` (the board a move would give, nothing stored)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pbmserv.core.commands.play import board_player
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import game_service as service
from pbmserv.core.play import numbering
from pbmserv.core.play.boards import Board, load_board
from pbmserv.core.results import CommandError, Section
from pbmserv.games.base import OMNISCIENT, PUBLIC, AnyGame, InvalidMoveError, MoveError, move_rng

_BOARD_AT: re.Pattern[str] = re.compile(numbering.SHOW_AT)


def _moves_played(ctx: CommandContext, board: Board) -> list[str]:
    return [row.text for row in service.history(ctx, board) if row.kind == "move"]


@command(
    "show",
    "GAME show BOARD[#MOVE]",
    "the board as everyone sees it, now or after move MOVE (show 12#5; in chess, after both\n"
    "sides' move 5, or 12#5. after White's alone)",
    game_scoped=True,
    min_words=3,
    max_words=3,
)
def show(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    written = line.words[2]
    match = _BOARD_AT.fullmatch(written)
    if match is None:
        raise CommandError(f'"{written}" is not a board, or a board and a move like 12#5')
    board = load_board(ctx, game, match.group(1), for_update=False)
    played = _moves_played(ctx, board)
    spec = game.SPEC
    wanted: int | None = len(played)
    if match.group(2) is not None:
        wanted = numbering.plies_after(spec, int(match.group(2)), match.group(3), len(played))
    if wanted is None:
        raise CommandError(
            f"board {board.number} has not reached move {match.group(2)}{match.group(3)} "
            f"(moves played: {numbering.played_so_far(spec, len(played))})",
            syntax_was_right=True,
        )
    state = board.state if wanted == len(played) else service.replay_moves(board, played[:wanted])
    # Once the game is over nothing is secret any more (as on the board mail).
    viewer = OMNISCIENT if board.finished and game.SPEC.hidden_information else PUBLIC
    context = {
        "game": game.SPEC.name,
        "board": board.number,
        "move": wanted,
        "moves": len(played),
        "at": numbering.shown_at(spec, wanted),
        "played": numbering.played_so_far(spec, len(played)),
        "diagram": board.diagram(viewer, state),
        "last_move": game.last_move_text(state),
    }
    return Section("shown", context, summary=f"{game.SPEC.name} show {board.number}#{wanted}")


@command(
    "preview",
    "GAME preview BOARD USERID PASSWORD MOVE",
    "the board your move would give, without making it",
    game_scoped=True,
    secret_words=(4,),
    min_words=6,
    move_from=5,
)
def preview(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    if game.SPEC.uses_chance:
        raise CommandError(
            f"{game.SPEC.title} draws by chance after a move: a preview would show the draw "
            "before the move is made, so there is none",
            syntax_was_right=True,
        )
    board, user, seat = board_player(ctx, game, line, for_update=False)
    trial = try_move(board, seat, line.rest(5))
    context = {
        "game": game.SPEC.name,
        "board": board.number,
        "userid": user.display_id,
        "move": trial.text,
        "diagram": board.diagram(seat, trial.after),
        "ends": trial.ends,
    }
    return Section(
        "previewed", context, summary=f"{game.SPEC.name} preview {board.number} {trial.public}"
    )


@dataclass(frozen=True)
class Trial:
    """A move tried on a copy of the position: its texts and the state it gives."""

    text: str
    public: str
    after: Any
    ends: str | None  # how the game would end, if the move ends it


def try_move(board: Board, seat: int, text: str) -> Trial:
    """Read and apply ``text`` for ``seat`` without storing anything (a CommandError when it
    is not a move the player may make now)."""
    game = board.game
    if board.finished:
        raise CommandError(
            f"board {board.number} is over: {service.result_text(board)}", syntax_was_right=True
        )
    if seat not in game.to_move(board.state).seats:
        raise CommandError(f"it is not your turn on board {board.number}", syntax_was_right=True)
    try:
        move = game.parse_move(board.state, seat, text)
        canonical = game.format_move(board.state, move)
        after = game.apply(board.state, move, move_rng(board.row.seed, board.row.ply))
    except InvalidMoveError as error:
        raise CommandError(str(error)) from None
    except MoveError as error:
        raise CommandError(str(error), syntax_was_right=True) from None
    outcome = game.outcome(after)
    public = game.public_move_text(board.state, move)
    return Trial(canonical, public, after, outcome.reason if outcome is not None else None)
