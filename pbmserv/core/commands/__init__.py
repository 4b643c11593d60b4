"""Mail commands. Importing this package registers every command."""

from pbmserv.core.commands import accounts, helptext, listing, play, tournament  # noqa: F401
from pbmserv.core.commands.registry import GAME_COMMANDS, TOP_LEVEL, all_commands

__all__ = ["GAME_COMMANDS", "TOP_LEVEL", "all_commands"]
