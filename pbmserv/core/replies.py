"""Replies to a seat's reply address: what the player wrote, as the commands they mean.

A reply's first line of the player's own is the seat's move (``a8-b7``, ``Nf3``), unless it
starts with one of the board's command words (``resign``, ``propose draw``, ``chat hello``,
``reveal c5``); each later line counts only when it starts with such a word, so a greeting or
sign-off below the move is left out. A full command (``extinction move 17 ...``) stands as
it is. The commands built here name the seat's user and :data:`REPLY_PASSWORD`, which
:func:`pbmserv.core.logins.authenticate` accepts only while the context vouches for that user
(``CommandContext.reply_login``): the reply address and the sender were checked instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pbmserv.core.addresses import users_of_address
from pbmserv.core.board_mail import ReplySeat
from pbmserv.core.commands import GAME_COMMANDS
from pbmserv.core.logins import REPLY_PASSWORD
from pbmserv.db.models import User
from pbmserv.games import find_game
from pbmserv.games.base import AnyGame


def _takes_a_player(syntax: str, name: str) -> bool:
    return syntax.startswith(f"GAME {name} BOARD USERID PASSWORD")


#: Command words a player may write bare in a reply, each followed by what the command takes.
PLAYER_WORDS = frozenset(
    name for name, spec in GAME_COMMANDS.items() if _takes_a_player(spec.syntax, name)
)
#: Public command words about the board (``history``): no user id or password follow.
PUBLIC_WORDS = frozenset({"history", "show"})


@dataclass(frozen=True)
class ReplyLine:
    """One command of a reply: the line to run, and whether it was built from bare words
    (then it runs as the seat's user, with no password)."""

    text: str
    built: bool


def seat_commands(
    seat: ReplySeat, lines: Sequence[str], is_command: Callable[[str], bool]
) -> list[ReplyLine]:
    """The commands a reply's own ``lines`` mean for the seat."""
    game = find_game(seat.row.game)
    assert game is not None  # boards are made of known games only
    return reply_commands(lines, game, seat.row.id, seat.user.userid, is_command)


def reply_commands(
    lines: Sequence[str],
    game: AnyGame,
    board: int,
    userid: str,
    is_command: Callable[[str], bool],
) -> list[ReplyLine]:
    """The commands a reply's own ``lines`` mean for ``userid``'s seat on ``board``."""
    found: list[ReplyLine] = []
    for index, text in enumerate(lines):
        if is_command(text):
            found.append(ReplyLine(text, built=False))
            continue
        built = _built(text, game, board, userid, first=index == 0)
        if built is not None:
            found.append(ReplyLine(built, built=True))
    return found


def _built(text: str, game: AnyGame, board: int, userid: str, first: bool) -> str | None:
    words = text.split()
    word = words[0].lower()
    rest = " ".join(words[1:])
    name = game.SPEC.name
    kinds = {k.name for k in game.SPEC.move_kinds}
    if word in PLAYER_WORDS or word in kinds:
        return f"{name} {word} {board} {userid} {REPLY_PASSWORD} {rest}".rstrip()
    if word == "board":
        return f"{name} board {board} {userid} {REPLY_PASSWORD}"
    if word in PUBLIC_WORDS:
        return f"{name} {word} {board} {rest}".rstrip()
    if first:
        return f"{name} move {board} {userid} {REPLY_PASSWORD} {text}"
    return None


def writes_from(session: Session, user: User, address: str) -> bool:
    """Is ``address`` the user's registered address, or one they added (``add``)?"""
    return any(found.id == user.id for found in users_of_address(session, address))
