"""Dispatch: one command line to its handler, inside a savepoint, always giving a Section."""

from __future__ import annotations

import difflib

from pbmserv.core import blast
from pbmserv.core.accounts import logins
from pbmserv.core.commands import GAME_COMMANDS, TOP_LEVEL
from pbmserv.core.commands.play import play_verb
from pbmserv.core.commands.registry import CommandSpec
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import consent
from pbmserv.core.results import CommandError, Section
from pbmserv.core.tournaments.service import settle_finished
from pbmserv.games import all_games, find_game
from pbmserv.games.base import AnyGame

HELP_HINT = 'Send "help" for the list of commands, or "help GAME" for a game\'s rules.'


def is_command(text: str) -> bool:
    """Does this line start with a command word or a game name?"""
    words = text.split()
    if not words:
        return False
    first = words[0].lower()
    return first in TOP_LEVEL or find_game(first) is not None


def looks_like_command(text: str) -> bool:
    """A command, or a line meant as one with its first word mistyped ("chamelon move ..."):
    such a line in a mail is answered with an error, never left out as a greeting would be."""
    if is_command(text):
        return True
    first = text.split(maxsplit=1)[0].lower().strip(".,:;!?") if text.strip() else ""
    if len(first) < 4:
        return False
    known = [*TOP_LEVEL, *(g.SPEC.name for g in all_games())]
    return bool(difflib.get_close_matches(first, known, n=1, cutoff=0.8))


def _error(command: str, error: CommandError, syntax: str | None) -> Section:
    return Section(
        command=command,
        kind="error",
        data={
            "problem": error.problem,
            "syntax": None if error.syntax_was_right else (error.syntax or syntax),
            "hint": error.hint,
        },
        ok=False,
        summary=f"error: {error.problem}",
    )


def _near(word: str, known: list[str]) -> str | None:
    """The known word ``word`` is a slip of (``chamelon``, ``mvoe``), if any: only such a
    word is quoted back, since a word we do not recognise may be a misplaced password."""
    close = difflib.get_close_matches(word.lower(), known, n=1, cutoff=0.75)
    return close[0] if close else None


def _top_words() -> list[str]:
    return [*TOP_LEVEL, *(g.SPEC.name for g in all_games())]


def _game_words(game: AnyGame) -> list[str]:
    """The words that may follow the game's name (``swap`` only in a game that has one)."""
    commands = [w for w in GAME_COMMANDS if w != "swap" or game.SPEC.has_swap]
    return [*commands, *(k.name for k in game.SPEC.move_kinds)]


def _not_known(word: str, known: list[str], what: str) -> str:
    guess = _near(word, known)
    if guess is None:
        return f"the {what} is not one we know"
    return f'"{word}" is not one we know; perhaps you meant "{guess}"'


def _resolve(line: CommandLine) -> tuple[CommandSpec, AnyGame | None]:
    first = line.words[0].lower()
    if first in TOP_LEVEL:
        return TOP_LEVEL[first], None
    game = find_game(first)
    if game is None:
        listed = ", ".join(g.SPEC.name for g in all_games())
        problem = _not_known(line.words[0], _top_words(), "first word (a command or a game)")
        raise CommandError(f"{problem} (games: {listed})", hint=HELP_HINT)
    if len(line.words) < 2:
        raise CommandError(
            f"what should {game.SPEC.name} do? Name a command after the game",
            syntax=f"{game.SPEC.name} challenge|move|{'swap|' if game.SPEC.has_swap else ''}"
            "board|history|resign|observe|unobserve ...",
            hint=HELP_HINT,
        )
    sub = line.words[1].lower()
    spec = GAME_COMMANDS.get(sub) or verb_command(game, sub)
    if spec is None:
        names = _game_words(game)
        raise CommandError(
            _not_known(line.words[1], names, f"word after {game.SPEC.name} (a command)"),
            syntax=f"{game.SPEC.name} " + "|".join(names) + " ...",
            hint=HELP_HINT,
        )
    return spec, game


def verb_command(game: AnyGame, name: str) -> CommandSpec | None:
    """The command for one of the game's kinds of move (see MoveKind), if it has one so named:
    ``GAME KIND BOARD USERID PASSWORD REST`` plays the move ``KIND REST``."""
    verb = next((k for k in game.SPEC.move_kinds if k.name == name), None)
    if verb is None:
        return None
    return CommandSpec(
        name=verb.name,
        syntax=f"GAME {verb.name} BOARD USERID PASSWORD {verb.takes}".rstrip(),
        summary=verb.summary,
        handler=play_verb,
        game_scoped=True,
        secret_words=(4,),
        min_words=5,
        move_from=5,  # the verb is public; the words after the password may not be
    )


def quote(text: str) -> str:
    """``text`` as it may be quoted back in mail or written to a log: only words known not to
    be secret. A command's passwords and any words past what it takes are masked; of a line
    that is no command we know, only the first word (and a game's second) is shown."""
    line = CommandLine.parse(text)
    try:
        spec, _game = _resolve(line)
    except CommandError:
        return _unknown_quote(line)
    return line.masked(spec.secrets(line.words), spec.shown_words(line.words))


def _unknown_quote(line: CommandLine) -> str:
    """A line we could not resolve: a game's name, and a word we know it is a slip of;
    anything else as ********."""
    if not line.words:
        return ""
    game = find_game(line.words[0])
    if game is None:
        known = _near(line.words[0], _top_words()) is not None
        shown = [line.words[0] if known else "*" * 8]
    else:
        shown = [line.words[0]]
        if len(line.words) > 1:
            known = _near(line.words[1], _game_words(game)) is not None
            shown.append(line.words[1] if known else "*" * 8)
    return " ".join(shown) + (" ..." if len(line.words) > len(shown) else "")


def login_pairs(text: str) -> list[tuple[str, str]]:
    """The (user id, password) pairs a command line gives: each password and the word
    before it, which every command that takes one puts there."""
    line = CommandLine.parse(text)
    try:
        spec, _game = _resolve(line)
    except CommandError:
        return []
    return [
        (line.words[i - 1], line.words[i])
        for i in spec.secrets(line.words)
        if 0 < i < len(line.words)
    ]


def dispatch_line(ctx: CommandContext, text: str) -> Section:
    """Run one command line. A user's mistake becomes an error Section and changes nothing."""
    line = CommandLine.parse(text)
    if not line.words:
        return _error("", CommandError("the command is empty"), None)
    try:
        spec, game = _resolve(line)
    except CommandError as error:
        return _error(_unknown_quote(line), error, None)
    section = _run(ctx, line, spec, game)
    hides = game is not None and game.SPEC.hidden_information
    if hides and spec.move_from is not None and len(line.words) > spec.move_from:
        # The move may hold a secret: the log keeps only the words before it.
        kept = section.command.split()[: spec.move_from]
        section.log_command = " ".join([*kept, "[hidden]"])
        section.summary = section.summary if section.ok else "error (hidden move)"
    return section


def _run(
    ctx: CommandContext, line: CommandLine, spec: CommandSpec, game: AnyGame | None
) -> Section:
    quoted = line.masked(spec.secrets(line.words), spec.shown_words(line.words))
    syntax = spec.syntax_for(game)
    if len(line.words) < spec.min_words:
        return _error(quoted, CommandError("some words are missing"), syntax)
    if not spec.secret_words and ctx.sender is not None:
        # No password names the user: the From does, and a disabled user's get only that answer.
        try:
            consent.sender_users(ctx)
        except CommandError as error:
            return _error(quoted, error, None)
    notices_before = len(ctx.notifications)
    savepoint = ctx.session.begin_nested()
    try:
        section = spec.handler(ctx, line, game)
        settle_finished(ctx)
        blast.check(ctx, spec.name, notices_before, section)
        ctx.session.flush()
    except CommandError as error:
        savepoint.rollback()
        del ctx.notifications[notices_before:]
        ctx.finished_boards.clear()
        if ctx.failed_logins:
            logins.record_failures(ctx)
        return _error(quoted, error, syntax)
    except BaseException:
        savepoint.rollback()
        del ctx.notifications[notices_before:]
        ctx.finished_boards.clear()
        raise
    savepoint.commit()
    section.command = quoted
    return section
