"""Replies to a seat's reply address: what the player wrote, as the commands they mean.

A reply's first line of the player's own is the seat's move (``a8-b7``, ``Nf3``), unless it
starts with one of the board's command words (``resign``, ``propose draw``, ``chat hello``,
``reveal c5``); each later line counts only when it starts with such a word, so a greeting or
sign-off below the move is left out. A full command (``extinction move 17 ...``) stands as
it is. The commands built here name the seat's user and :data:`REPLY_PASSWORD`, which
:func:`pbmserv.core.accounts.logins.authenticate` accepts only while the context vouches for that
user (``CommandContext.reply_login``): the reply address and the sender were checked instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.orm import Session

from pbmserv.core.accounts.addresses import users_of_address
from pbmserv.core.accounts.logins import REPLY_PASSWORD
from pbmserv.core.commands import GAME_COMMANDS
from pbmserv.core.dispatch import is_command
from pbmserv.core.play.board_mail import ReplySeat
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
    """One command of a reply: the line to run, whether it was built from bare words (then it
    runs as the seat's user, with no password), and whether it is the reply's first line
    taken as the move for want of a command word (``guessed``: an error then says so)."""

    text: str
    built: bool
    guessed: bool = False


#: Words a greeting line starts with ("Hi Erin,", "Dear Bob", "Good morning!").
_GREETING_WORDS = frozenset(
    {"hi", "hello", "hey", "heya", "hiya", "howdy", "dear", "greetings", "hallo", "yo", "morning"}
)


def is_greeting(text: str) -> bool:
    """A greeting above the move: a short line that starts with a word of greeting ("Hi
    Erin,", "Good morning!"), or a name and a comma alone ("Erin,")."""
    words = text.lower().replace(",", " , ").replace("!", " ! ").split()
    if not words or len(words) > 6:
        return False
    if words[0] in _GREETING_WORDS or words[:2] in (["good", "morning"], ["good", "evening"]):
        return True
    return words[:2] == ["good", "afternoon"] or (len(words) <= 3 and words[-1] == ",")


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
    # A greeting above the move is left out, as a sign-off below it is.
    start = next((i for i, text in enumerate(lines) if not is_greeting(text)), 0)
    for index, text in enumerate(lines[start:], start):
        if is_command(text):
            found.append(ReplyLine(text, built=False))
            continue
        first = index == start
        built = _built(text, game, board, userid, first=first)
        if built is not None:
            guessed = first and built.startswith(f"{game.SPEC.name} move ") and not _worded(text)
            found.append(ReplyLine(built, built=True, guessed=guessed))
    return found


def _worded(text: str) -> bool:
    """Whether the line starts with the command word ``move`` itself."""
    return text.split()[0].lower() == "move"


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


def starts_with_command(seat: ReplySeat, line: str) -> bool:
    """Whether a reply's line starts with a word the seat's reply would run as a command."""
    game = find_game(seat.row.game)
    assert game is not None
    word = line.split()[0].lower() if line.split() else ""
    kinds = {k.name for k in game.SPEC.move_kinds}
    return is_command(line) or word in PLAYER_WORDS | PUBLIC_WORDS | kinds | {"board"}


def chat_back(seat: ReplySeat, lines: Sequence[str]) -> ReplyLine:
    """A reply to a chat line's notice: the sender's own lines, as one chat line back."""
    text = " ".join(lines)
    return ReplyLine(
        f"{seat.row.game} chat {seat.row.id} {seat.user.userid} {REPLY_PASSWORD} {text}", True
    )


def message_back(reader: User, author: User, lines: Sequence[str]) -> ReplyLine:
    """A reply to a message's notice: the sender's own lines, as a message back to its
    author."""
    text = " ".join(lines)
    return ReplyLine(f"message {reader.userid} {REPLY_PASSWORD} {author.userid} {text}", True)


def writes_from(session: Session, user: User, address: str) -> bool:
    """Is ``address`` the user's registered address, or one they added (``add``)?"""
    return any(found.id == user.id for found in users_of_address(session, address))
