"""How what happened reads in mail: the template of each kind of reply section and notice,
and each notice's subject. Core says what happened (a kind and its data); this module alone
turns kinds into words, so the admin shell or a web view may word the same results their own
way."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pbmserv.core.results import SECTION_KINDS, Notification, Section

Data = Mapping[str, Any]

#: Reply sections whose template is ``mail/sections/KIND.txt.j2``: all but help's.
PLAIN_SECTIONS = frozenset(kind for kind in SECTION_KINDS if not kind.startswith("help_"))


def _help_page(data: Data) -> str:
    return f"help/{data.get('page') or '_game'}.txt.j2"


#: Reply sections of help, and their templates.
HELP_TEMPLATES: dict[str, Callable[[Data], str]] = {
    "help_index": lambda data: "help/_index.txt.j2",
    "help_commands": lambda data: "help/_commands.txt.j2",
    "help_command": lambda data: "help/_command.txt.j2",
    "help_game": _help_page,
    "help_topic": _help_page,
    "help_topics": lambda data: "help/_topics.txt.j2",
}


def _board_subject(data: Data) -> str:
    view = data["view"]
    return f"{view['game']} board {view['board']}: {view['status']}"


def _reminder_subject(data: Data) -> str:
    view = data["view"]
    doing = "your move" if view["your_turn"] else f"waiting for {', '.join(view['waiting_for'])}"
    return f"{view['game']} board {view['board']}: reminder, {doing}"


def _standings_subject(data: Data) -> str:
    what = "final standings" if data["final"] else f"standings after round {data['round']}"
    return f"tournament {data['tournament']['name']}: {what}"


def _entry_subject(data: Data) -> str:
    what = "you are entered" if data["entered"] else "you are withdrawn"
    return f"tournament {data['tournament']['name']}: {what}"


def _pairings_subject(data: Data) -> str:
    tournament = data["tournament"]
    return f"tournament {tournament['name']} round {tournament['round']}: pairings"


#: Notices: kind -> what the notice tells in a line (its headline). The template of each is
#: ``mail/KIND.txt.j2``; the headline is the Subject, except in a board's thread (below).
NOTICE_SUBJECTS: dict[str, Callable[[Data], str]] = {
    "board": _board_subject,
    "reminder": _reminder_subject,
    "password_guessing": lambda data: "pbmserv: someone is guessing your password",
    "password_reset": lambda data: f"pbmserv: new password for {data['userid']}",
    "address_changed": lambda data: f"pbmserv: address of {data['userid']} changed",
    "confirmation": lambda data: "pbmserv: may we send game mail to this address?",
    "board_deleted": lambda data: f"{data['game']} board {data['board']} was deleted",
    "broadcast": lambda data: f"pbmserv: {data['subject']}",
    "unreachable": lambda data: (
        f"pbmserv: {' and '.join(data['players'])} cannot be reached by mail"
    ),
    "digest": lambda data: (
        f"pbmserv: your move on {len(data['boards'])} board"
        + ("s" if len(data["boards"]) != 1 else "")
        + f", {data['date']}"
    ),
    "chat": lambda data: f"{data['game']} board {data['board']}: {data['from']} says",
    "message": lambda data: f"pbmserv: a message from {data['from']}",
    "proposal": lambda data: (
        f"{data['game']} board {data['board']}: {data['by']} {data['action']} "
        + ("a draw" if data["kind"] == "draw" else "taking back moves")
    ),
    "vacation": lambda data: (
        f"pbmserv: {data['userid']}'s clocks run again"
        if data.get("unreachable")
        else f"pbmserv: {data['userid']} is "
        + ("on vacation" if data["away"] else "back from vacation")
        + (f" (board {data['board']}: the clock ran out)" if data.get("automatic") else "")
    ),
    "tournament_pairings": _pairings_subject,
    "tournament_standings": _standings_subject,
    "tournament_entry": _entry_subject,
}


def section_template(section: Section) -> str:
    """The template a reply section is written with (KeyError: a kind nobody words)."""
    if section.kind in PLAIN_SECTIONS:
        return f"mail/sections/{section.kind}.txt.j2"
    return HELP_TEMPLATES[section.kind](section.data)


def notice_template(notification: Notification) -> str:
    if notification.kind not in NOTICE_SUBJECTS:
        raise KeyError(notification.kind)
    return f"mail/{notification.kind}.txt.j2"


#: Notices that go in a reader's thread of a board, all under one Subject (see
#: :func:`board_thread_subject`); their headline is their first body line instead.
BOARD_THREAD_KINDS = frozenset({"board", "reminder", "chat", "proposal"})


def board_thread_subject(game: str, board: int) -> str:
    """The one Subject of every mail in a reader's thread of a board (board mail, reminders,
    chat lines, proposals): mail programs that thread by subject as well as by References
    (Gmail) would split the thread at each new Subject. What each mail tells (``your
    move``, ``waiting for bob``) is its first body line."""
    return f"{game} board {board}"


def notice_headline(notification: Notification) -> str:
    """What the notice tells, in one line (``owlman board 17: your move``)."""
    return NOTICE_SUBJECTS[notification.kind](notification.data)


def notice_subject(notification: Notification) -> str:
    if notification.kind in BOARD_THREAD_KINDS:
        data = notification.data
        view = data.get("view") or data
        return board_thread_subject(view["game"], view["board"])
    return notice_headline(notification)
