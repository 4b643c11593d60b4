"""Mail commands. Importing this package registers every command."""

from pbmserv.core.commands import (  # noqa: F401
    accounts,
    boards,
    helptext,
    listing,
    looking,
    play,
    proposals,
    ratings,
    settings,
    submitting,
    talk,
    tournament,
    vacation,
)
from pbmserv.core.commands.registry import GAME_COMMANDS, TOP_LEVEL, all_commands

__all__ = ["GAME_COMMANDS", "TOP_LEVEL", "all_commands"]
