"""help: the index, the command summary, a game's rules, a command's syntax, a topic."""

from __future__ import annotations

import re
from typing import Any

from pbmserv.core.commands.registry import (
    GAME_COMMANDS,
    TOP_LEVEL,
    CommandSpec,
    all_commands,
    command,
)
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import CommandError, Section
from pbmserv.games import all_games, find_game
from pbmserv.games.base import AnyGame
from pbmserv.resources import templates_dir
from pbmserv.time_controls import PRESETS, parse_time_control

TOPIC_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")


def help_topics() -> list[str]:
    """Topics with a help file of their own (games included)."""
    names = (p.name.removesuffix(".txt.j2") for p in (templates_dir() / "help").glob("*.txt.j2"))
    return sorted(name for name in names if not name.startswith("_"))


def _command_rows() -> list[dict[str, str]]:
    return [{"syntax": spec.syntax, "summary": spec.summary} for spec in all_commands()]


def _move_kind_help(word: str) -> CommandSpec | None:
    """Help on a game's own kind of move (``reveal`` of hmdg), written for each game that has
    it."""
    found = [(g, k) for g in all_games() for k in g.SPEC.move_kinds if k.name == word]
    if not found:
        return None
    lines = [f"{g.SPEC.name} {k.name} BOARD USERID PASSWORD {k.takes}".rstrip() for g, k in found]
    games = ", ".join(g.SPEC.title for g, _ in found)
    details = f'A move of {games}: see "help {found[0][0].SPEC.name}" for the rules.'
    return CommandSpec(
        name=word,
        syntax="\n    ".join(lines),
        summary=found[0][1].summary,
        handler=help_command,
        details=details,
    )


@command(
    "help",
    "help [commands | topics | GAME | COMMAND | TOPIC]",
    "this help: the index, the command summary, a game's rules",
    max_words=2,
)
def help_command(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    topic = line.words[1].lower() if len(line.words) > 1 else "index"
    common: dict[str, Any] = {
        "server_address": ctx.settings.address,
        "commands": _command_rows(),
        "digest_hour": ctx.settings.digest_hour,
        "robot_games_per_user": ctx.settings.robot_games_per_user,
        "robot_cpu_seconds": f"{ctx.settings.robot_cpu_seconds:g}",
        "clock_presets": {
            name: parse_time_control(text).describe()  # type: ignore[union-attr]
            for name, text in PRESETS.items()
        },
        "default_clock": ctx.settings.clock,
        "tournament_clock": ctx.settings.tournament_clock,
        "reminder_hours": ctx.settings.reminder_hours,
        "vacation_days_per_year": ctx.settings.vacation_days_per_year,
        "web_url": ctx.settings.web_base,
    }
    if topic == "index":
        games = [{"name": g.SPEC.name, "title": g.SPEC.title} for g in all_games()]
        context = {**common, "games": games, "topics": help_topics()}
        return Section("help_index", context, summary="help")
    if topic == "commands":
        return Section("help_commands", common, summary="help commands")
    if topic == "topics":
        kinds = sorted({k.name for g in all_games() for k in g.SPEC.move_kinds})
        context = {
            **common,
            "pages": help_topics(),
            "words": sorted({*TOP_LEVEL, *GAME_COMMANDS}),
            "kinds": [k for k in kinds if k not in GAME_COMMANDS],
        }
        return Section("help_topics", context, summary="help topics")
    game = find_game(topic)
    if game is not None:
        context = {
            **common,
            "spec": game.SPEC,
            "options": [o.describe() for o in game.SPEC.options],
            # A game without a help page of its own gets the general one.
            "page": game.SPEC.name if game.SPEC.name in help_topics() else None,
        }
        return Section("help_game", context, summary=f"help {topic}")
    spec = TOP_LEVEL.get(topic) or GAME_COMMANDS.get(topic) or _move_kind_help(topic)
    if spec is not None:
        context = {**common, "spec": spec}
        return Section("help_command", context, summary=f"help {topic}")
    if TOPIC_PATTERN.match(topic) and topic in help_topics():
        return Section("help_topic", {**common, "page": topic}, summary=f"help {topic}")
    raise CommandError(
        f'there is no help on "{line.words[1]}"',
        syntax=TOP_LEVEL["help"].syntax,
        hint="Games: "
        + ", ".join(g.SPEC.name for g in all_games())
        + '. Send "help" for the index.',
    )
