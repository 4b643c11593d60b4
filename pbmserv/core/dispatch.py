"""Dispatch: one command line to its handler, inside a savepoint, always giving a Section."""

from __future__ import annotations

from pbmserv.core.commands import GAME_COMMANDS, TOP_LEVEL
from pbmserv.core.commands.play import play_verb
from pbmserv.core.commands.registry import CommandSpec
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import CommandError, Section
from pbmserv.games import all_games, find_game
from pbmserv.games.base import Game

HELP_HINT = 'Send "help" for the list of commands, or "help GAME" for a game\'s rules.'


def is_command(text: str) -> bool:
    """Does this line start with a command word or a game name?"""
    words = text.split()
    if not words:
        return False
    first = words[0].lower()
    return first in TOP_LEVEL or find_game(first) is not None


def _error(command: str, error: CommandError, syntax: str | None) -> Section:
    return Section(
        command=command,
        template="mail/sections/error.txt.j2",
        context={
            "problem": error.problem,
            "syntax": None if error.syntax_was_right else (error.syntax or syntax),
            "hint": error.hint,
        },
        ok=False,
        summary=f"error: {error.problem}",
    )


def _resolve(line: CommandLine) -> tuple[CommandSpec, Game | None]:
    first = line.words[0].lower()
    if first in TOP_LEVEL:
        return TOP_LEVEL[first], None
    game = find_game(first)
    if game is None:
        names = ", ".join(g.SPEC.name for g in all_games())
        raise CommandError(
            f'"{line.words[0]}" is not a command or a game (games: {names})', hint=HELP_HINT
        )
    if len(line.words) < 2:
        raise CommandError(
            f"what should {game.SPEC.name} do? Name a command after the game",
            syntax=f"{game.SPEC.name} challenge|move|swap|board|history|resign|"
            "observe|unobserve ...",
            hint=HELP_HINT,
        )
    sub = line.words[1].lower()
    spec = GAME_COMMANDS.get(sub) or verb_command(game, sub)
    if spec is None:
        names = [*GAME_COMMANDS, *(v.name for v in game.SPEC.verbs)]
        raise CommandError(
            f'"{line.words[1]}" is not a {game.SPEC.name} command',
            syntax=f"{game.SPEC.name} " + "|".join(names) + " ...",
            hint=HELP_HINT,
        )
    return spec, game


def verb_command(game: Game, name: str) -> CommandSpec | None:
    """The command for one of the game's own verbs (see VerbSpec), if it has one so named."""
    verb = next((v for v in game.SPEC.verbs if v.name == name), None)
    if verb is None:
        return None
    return CommandSpec(
        name=verb.name,
        syntax=f"GAME {verb.name} BOARD USERID PASSWORD {verb.args}".rstrip(),
        summary=verb.summary,
        handler=play_verb,
        game_scoped=True,
        secret_words=(4,),
        min_words=5,
    )


def dispatch_line(ctx: CommandContext, text: str) -> Section:
    """Run one command line. A user's mistake becomes an error Section and changes nothing."""
    line = CommandLine.parse(text)
    if not line.words:
        return _error("", CommandError("the command is empty"), None)
    try:
        spec, game = _resolve(line)
    except CommandError as error:
        return _error(line.raw, error, None)
    section = _run(ctx, line, spec, game)
    if game is not None and game.SPEC.hidden_information and len(line.words) > 5:
        # The words after the password may be a secret move: the log keeps only the verb.
        section.log_command = " ".join([*section.command.split()[:5], "[hidden]"])
        section.summary = section.summary if section.ok else "error (hidden move)"
    return section


def _run(ctx: CommandContext, line: CommandLine, spec: CommandSpec, game: Game | None) -> Section:
    quoted = line.masked(spec.secret_words)
    syntax = spec.syntax_for(game)
    if len(line.words) < spec.min_words:
        return _error(quoted, CommandError("some words are missing"), syntax)
    notices_before = len(ctx.notifications)
    savepoint = ctx.session.begin_nested()
    try:
        section = spec.handler(ctx, line, game)
        ctx.session.flush()
    except CommandError as error:
        savepoint.rollback()
        del ctx.notifications[notices_before:]
        return _error(quoted, error, syntax)
    except BaseException:
        savepoint.rollback()
        del ctx.notifications[notices_before:]
        raise
    savepoint.commit()
    section.command = quoted
    return section
