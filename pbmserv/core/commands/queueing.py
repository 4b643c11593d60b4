"""``GAME queue BOARD USERID PASSWORD THEIRMOVE MYMOVE ...``: moves played for you at once
when your opponent plays what you foresaw (see :mod:`pbmserv.core.play.queued`)."""

from __future__ import annotations

from pbmserv.core.commands.play import board_player
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import queued
from pbmserv.core.results import Section
from pbmserv.games.base import AnyGame


@command(
    "queue",
    "GAME queue BOARD USERID PASSWORD THEIRMOVE MYMOVE [THEIRMOVE MYMOVE ...] | clear",
    "moves played for you at once when your opponent plays the move you foresaw",
    game_scoped=True,
    secret_words=(4,),
    min_words=6,
    move_from=5,
    details="Pairs of moves, checked now: if your opponent plays the first, the second is\n"
    "played for you at once, and the next pair waits for their next move. Any other move\n"
    'drops the queue. Your opponent never sees it. "clear" drops it; "GAME showas" lists it.\n'
    "Games with hidden moves or chance take no queue. A move written with a space in it\n"
    "(Rebel Buffalo's e6-e5 dog:a2) is queued with commas between the moves:\n"
    "    buffalo queue 17 alice PASSWORD f3-f4, e6-e5 dog:a2",
)
def queue(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, _user, seat = board_player(ctx, game, line)
    words = line.words[5:]
    data = {"game": game.SPEC.name, "board": board.number}
    if len(words) == 1 and words[0].lower() == "clear":
        queued.clear(ctx, board, seat)
        return Section("queued", {**data, "pairs": []}, summary=f"{game.SPEC.name} queue clear")
    texts = queued.queue(ctx, board, seat, _moves(line.rest(5)))
    pairs = [{"theirs": texts[i], "mine": texts[i + 1]} for i in range(0, len(texts), 2)]
    # Logged as a count: the queue is its owner's secret.
    return Section(
        "queued",
        {**data, "pairs": pairs},
        summary=f"{game.SPEC.name} queue board={board.number} pairs={len(pairs)}",
    )


def _moves(text: str) -> list[str]:
    """The queued moves: separated by commas where there are any (so that a move may hold a
    space), else one a word."""
    if "," not in text:
        return text.split()
    return [move.strip() for move in text.split(",")]
