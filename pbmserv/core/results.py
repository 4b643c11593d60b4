"""What commands produce: sections of the combined reply, and mail to other people.

Both name a template and its context; the mail layer renders them. Keeping results as data
lets the admin shell and the mail front end share the same commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Section:
    """One command's part of the reply to the sender."""

    template: str
    context: dict[str, Any] = field(default_factory=dict)
    ok: bool = True
    summary: str = ""  # one line for logs
    command: str = ""  # the line as the sender wrote it, passwords masked (set by dispatch)
    #: The line as logged, if it must hide more than ``command`` (a hidden move's secret).
    log_command: str | None = None

    @property
    def board(self) -> int | None:
        """The board the command was about, if any (for the log)."""
        board = self.context.get("board")
        return board if isinstance(board, int) else None

    def log_fields(self) -> dict[str, Any]:
        return {
            "command": self.command if self.log_command is None else self.log_command,
            "board": self.board,
            "ok": self.ok,
            "result": self.summary,
        }


@dataclass
class Notification:
    """A message to someone because of a command (a board after a move, an address change)."""

    to: str
    kind: str  # board | notice
    subject: str
    template: str
    context: dict[str, Any] = field(default_factory=dict)


class CommandError(Exception):
    """A user's mistake: becomes a polite error section, and the command changes nothing."""

    def __init__(
        self,
        problem: str,
        syntax: str | None = None,
        hint: str | None = None,
        *,
        syntax_was_right: bool = False,
    ) -> None:
        super().__init__(problem)
        self.problem = problem
        self.syntax = syntax
        self.hint = hint
        #: The command was written correctly (a move the rules forbid): quote no syntax.
        self.syntax_was_right = syntax_was_right
