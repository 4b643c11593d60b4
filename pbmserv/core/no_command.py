"""The answer to a message in which no line is a command: what was read, and, where one word
says what the sender meant, that meaning: a game we do not have (``chess challenge alice
bob``), one of the settings (``digest``) or a help page (``clocks``) written alone."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pbmserv.core.commands.helptext import help_topics
from pbmserv.core.commands.registry import GAME_COMMANDS
from pbmserv.core.commands.settings import SETTINGS
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import Section
from pbmserv.games import all_games

#: A word that may be quoted back as the name of a game we do not have: a name's shape (no
#: digit, no capital after the first letter: what a password has is never quoted back).
_GAME_NAME = re.compile(r"[A-Za-z][a-z-]{1,19}")


def no_command_section(lines: Sequence[str], subject: str) -> Section:
    """The answer's section. The lines read are said as a count: a line that is no command
    may hold a password, never quoted back. Only a word whose meaning is plain is named."""
    seen: dict[str, Any] = {
        "lines": len(lines),
        "from_subject": list(lines) == [" ".join(subject.split())],
    }
    seen.update(what_was_meant(lines))
    return Section("no_command", seen, ok=False, summary="no command")


def what_was_meant(lines: Sequence[str]) -> dict[str, Any]:
    """``game_like``: a line is written like a game's command (``chess challenge ...``,
    ``chess move 3 ...``), with ``unknown_game``, that word where it is
    shaped like a name, and ``games``, the games we have; ``setting``: a setting written as a
    command (``digest``, ``digest=daily``), with ``setting_syntax``; ``page``: the help page
    of that word, if there is one."""
    meant: dict[str, Any] = {"game_like": False, "setting": None, "page": None}
    for line in lines:
        words = CommandLine.parse(line).words
        first = words[0].strip(".,:;!?") if words else ""
        if _game_like(words):
            meant["game_like"] = True
            meant["unknown_game"] = first.lower() if _GAME_NAME.fullmatch(first) else None
            meant["games"] = [g.SPEC.name for g in all_games()]
            return meant
        first = first.lower()
        name = first.partition("=")[0]
        if 0 < len(words) <= 2 and (name in SETTINGS or name in help_topics()):
            if name in SETTINGS:
                values = SETTINGS[name][0]
                meant["setting"] = name
                meant["setting_syntax"] = f"set USERID PASSWORD {name}={'|'.join(values)}"
            meant["page"] = name if name in help_topics() else None
            return meant
    return meant


def _game_like(words: Sequence[str]) -> bool:
    """A game's command, but for the game: ``challenge`` second, or a command of a game and a
    board number (``move 3``), not a sentence that happens to say "move" or "show"."""
    if len(words) < 2 or words[1].lower() not in GAME_COMMANDS:
        return False
    return words[1].lower() == "challenge" or (len(words) > 2 and words[2].isdigit())
