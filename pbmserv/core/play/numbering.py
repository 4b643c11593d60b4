"""One numbering of a board's moves, the same in board mail, ``MOVE#N``, ``show BOARD#N``,
undo and history.

Most games count every move (``plies``): the first move is move 1, the fifth move 5. A chess
game counts as chess players do (``chess``): White's and Black's replies share a number, so
the board that says "Black to play, move 2" takes ``Nc6#2``, history lists ``2. Nf3`` and
``2... Nc6``, and ``show 7#2`` is the board after both sides' move 2.
"""

from __future__ import annotations

from pbmserv.games import find_game
from pbmserv.games.base import GameSpec

#: ``show``'s ``BOARD#N``: after move N (for a chess game, after both sides' move N), or
#: ``#N.`` for a chess game: after White's move N alone.
SHOW_AT = r"(\d+)(?:#(\d+)(\.{0,3}))?"


def _chess(spec: GameSpec) -> bool:
    return spec.numbering == "chess"


def number_of(spec: GameSpec, ply: int) -> int:
    """The number of the move made at ``ply`` (0 for the board's first move)."""
    return ply // 2 + 1 if _chess(spec) else ply + 1


def label(spec: GameSpec, ply: int) -> str:
    """How history writes the move at ``ply``: ``5.``, or ``3.``/``3...`` in a chess game."""
    if _chess(spec) and ply % 2:
        return f"{number_of(spec, ply)}..."
    return f"{number_of(spec, ply)}."


def named(spec: GameSpec, ply: int, text: str) -> str:
    """The move at ``ply`` named in a sentence: ``move 5 (c4)``, or ``2. Nf3``/``2... Nc6``
    in a chess game."""
    if _chess(spec):
        return f"{label(spec, ply)} {text}"
    return f"move {number_of(spec, ply)} ({text})"


def played_so_far(spec: GameSpec, plies: int) -> str:
    """How many moves have been played, in the game's numbering."""
    if not _chess(spec) or plies == 0:
        return str(plies)
    white, black = (plies + 1) // 2, plies // 2
    return f"{white} by each side" if white == black else f"{white} by White, {black} by Black"


def played_on(game_name: str, plies: int) -> str:
    """:func:`played_so_far` for a board of the game named ``game_name``."""
    game = find_game(game_name)
    return played_so_far(game.SPEC, plies) if game is not None else str(plies)


def guard_problem(spec: GameSpec, plies: int, written: int) -> str | None:
    """Why ``MOVE#written`` may not be played now that ``plies`` moves have been made, or None
    when it is the next move's number. (Whose move it is, is checked as for any move.)"""
    next_number = number_of(spec, plies)
    if written == next_number:
        return None
    return f"the next is move {next_number}"


def plies_after(spec: GameSpec, written: int, dots: str, plies: int) -> int | None:
    """How many moves ``show BOARD#written`` replays (``dots``: the ``.`` of ``#N.`` in a
    chess game), or None when the board has not got that far."""
    wanted = written
    if _chess(spec):
        if dots == ".":  # after White's move N alone
            wanted = 2 * written - 1
        else:  # after both sides' move N; the board now, if Black's move N is still to come
            wanted = 2 * written
            if wanted == plies + 1:
                wanted = plies
    return wanted if 0 <= wanted <= plies else None


def shown_at(spec: GameSpec, plies: int) -> str:
    """What ``show`` says a replay of ``plies`` moves is: ``after move 5``, or ``after 2. Nf3``
    style numbers in a chess game (``after move 2`` once both sides played it)."""
    if _chess(spec) and plies % 2:
        return f"after White's move {number_of(spec, plies - 1)}"
    return f"after move {number_of(spec, plies - 1)}" if plies else "before the first move"
