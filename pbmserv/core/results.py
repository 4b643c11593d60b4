"""What commands produce: sections of the combined reply, and mail to other people.

Both say what happened, as a kind and its data; how that reads (template, subject) is the mail
layer's business (:mod:`pbmserv.outbound.wording`). Keeping results as data lets the admin shell,
the mail front end and a future web view share the same commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: What a command's part of the reply may tell (every kind is worded by the mail layer).
SECTION_KINDS = frozenset(
    {
        "accepted_board",
        "address_added",
        "address_confirmed",
        "board",
        "board_list",
        "board_views",
        "challenged",
        "chatted",
        "declined",
        "deleted",
        "email_changed",
        "email_pending",
        "error",
        "games",
        "help_command",
        "help_commands",
        "help_game",
        "help_index",
        "help_topic",
        "help_topics",
        "history",
        "link_renewed",
        "messaged",
        "moved",
        "no_command",
        "observing",
        "password_changed",
        "previewed",
        "proposal",
        "queued",
        "ratings_table",
        "record",
        "reply_refused",
        "settings_changed",
        "resigned",
        "shown",
        "signed_up",
        "status",
        "submitted",
        "tournament_chosen",
        "tournament_joined",
        "tournament_list",
        "tournament_show",
        "tournament_table",
        "tournament_withdrawn",
        "too_large",
        "unobserved",
        "unsubscribed",
        "user_ratings",
        "vacation",
    }
)

#: What a message to someone may tell.
NOTICE_KINDS = frozenset(
    {
        "address_changed",
        "board",
        "board_deleted",
        "broadcast",
        "chat",
        "confirmation",
        "digest",
        "message",
        "password_guessing",
        "password_reset",
        "proposal",
        "reminder",
        "tournament_entry",
        "tournament_pairings",
        "tournament_standings",
        "unreachable",
        "vacation",
    }
)


@dataclass
class Section:
    """One command's part of the reply to the sender: ``kind`` names what happened (``moved``,
    ``error``, ``help_game``...), ``data`` holds its facts."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    ok: bool = True
    summary: str = ""  # one line for logs
    command: str = ""  # the line as the sender wrote it, passwords masked (set by dispatch)
    #: The line as logged, if it must hide more than ``command`` (a hidden move's secret).
    log_command: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in SECTION_KINDS:
            raise ValueError(f"no such kind of reply section: {self.kind!r}")

    @property
    def board(self) -> int | None:
        """The board the command was about, if any (for the log)."""
        board = self.data.get("board")
        return board if isinstance(board, int) else None

    def log_fields(self) -> dict[str, Any]:
        return {
            "command": self.command if self.log_command is None else self.log_command,
            "board": self.board,
            "ok": self.ok,
            "result": self.summary,
        }


@dataclass(frozen=True)
class MailThread:
    """Where one board mail stands in its recipient's thread of the board (see
    :mod:`pbmserv.core.play.board_mail`)."""

    message_id: str
    in_reply_to: str | None
    #: Earlier ids of the thread before ``in_reply_to`` (its first mail).
    references: tuple[str, ...]
    #: The seat's reply-address tag (``b17-s0-TOKEN``): secret, for this recipient only.
    reply_tag: str | None


@dataclass(frozen=True)
class BulkMail:
    """What makes a notice bulk mail (a digest, a broadcast): the list it belongs to and the
    command, secret code included, that takes its recipient off it (see
    :mod:`pbmserv.core.accounts.unsubscribing`); the mail layer writes them as List-* headers."""

    list_name: str
    unsubscribe_command: str


@dataclass
class Notification:
    """A message to someone because of a command (a board after a move, an address change):
    ``kind`` names what it tells (``board``, ``reminder``, ``password_reset``...), ``data`` its
    facts. ``channel`` is how the outbox treats it: ``board`` mail or a ``notice``."""

    to: str
    channel: str  # board | notice | password_reset | confirmation (the outbox kind)
    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    #: A board's mail: its place in the recipient's thread of the board.
    thread: MailThread | None = None
    #: The board as an SVG picture, for a recipient who takes board mail with pictures.
    picture: str | None = None
    #: A digest's pictures, one a board in the order of ``data["boards"]``.
    pictures: tuple[str, ...] = ()
    #: A reply-address tag for a notice outside a board's thread (a message's): secret, for
    #: this recipient only.
    reply_tag: str | None = None
    #: Bulk mail's list (a digest, a broadcast); None for mail about one's own games.
    bulk: BulkMail | None = None

    def __post_init__(self) -> None:
        if self.kind not in NOTICE_KINDS:
            raise ValueError(f"no such kind of notice: {self.kind!r}")


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
