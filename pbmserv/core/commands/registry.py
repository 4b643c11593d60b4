"""The command registry: every mail command, with its syntax and help, in one table."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import Section
from pbmserv.games.base import AnyGame

Handler = Callable[[CommandContext, CommandLine, AnyGame | None], Section]
#: How many leading words of a line the command takes, known not to be secret (passwords
#: aside): a number, a function of the words, or None when free text may follow.
WordLimit = int | Callable[[tuple[str, ...]], int] | None
#: Indexes of a line's secret words: fixed, or a function of the words (``change address``
#: takes an address where ``change password`` takes a second password).
SecretWords = tuple[int, ...] | Callable[[tuple[str, ...]], tuple[int, ...]]


@dataclass(frozen=True)
class CommandSpec:
    name: str
    syntax: str
    summary: str
    handler: Handler
    #: Commands written after a game name ("chameleon move ...").
    game_scoped: bool = False
    #: Indexes of secret words (passwords; game name counted), masked when quoted.
    secret_words: SecretWords = ()
    #: Fewest words the line must have (command word included).
    min_words: int = 1
    #: Extra paragraphs for "help COMMAND".
    details: str = ""
    #: Words past this are quoted as ******** (a password typed where none belongs).
    max_words: WordLimit = None
    #: Index of the first word that may be part of a move, if the command carries one: in a
    #: game with hidden information such words may hold a secret, and logs leave them out.
    move_from: int | None = None

    def secrets(self, words: tuple[str, ...]) -> tuple[int, ...]:
        """The indexes of this line's secret words."""
        return self.secret_words(words) if callable(self.secret_words) else self.secret_words

    def shown_words(self, words: tuple[str, ...]) -> int | None:
        """How many leading words may be quoted back (secret words still masked)."""
        return self.max_words(words) if callable(self.max_words) else self.max_words

    def syntax_for(self, game: AnyGame | None) -> str:
        return self.syntax.replace("GAME", game.SPEC.name) if game else self.syntax


TOP_LEVEL: dict[str, CommandSpec] = {}
GAME_COMMANDS: dict[str, CommandSpec] = {}


def command(
    name: str,
    syntax: str,
    summary: str,
    *,
    game_scoped: bool = False,
    secret_words: SecretWords = (),
    min_words: int = 1,
    details: str = "",
    max_words: WordLimit = None,
    move_from: int | None = None,
) -> Callable[[Handler], Handler]:
    """Register a command handler under ``name``."""

    def register(handler: Handler) -> Handler:
        spec = CommandSpec(
            name,
            syntax,
            summary,
            handler,
            game_scoped,
            secret_words,
            min_words,
            details,
            max_words,
            move_from,
        )
        (GAME_COMMANDS if game_scoped else TOP_LEVEL)[name] = spec
        return handler

    return register


def all_commands() -> list[CommandSpec]:
    return [*TOP_LEVEL.values(), *GAME_COMMANDS.values()]
