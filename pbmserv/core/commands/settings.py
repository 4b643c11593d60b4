"""``set USERID PASSWORD NAME=VALUE ...``: a user's own settings for the mail they get; and
``unsubscribe digest|broadcasts USERID CODE``, the one mail a bulk mail's List-Unsubscribe
header names, which turns a setting off without a password (see
:mod:`pbmserv.core.accounts.unsubscribing`)."""

from __future__ import annotations

from pbmserv.core.accounts import logins, unsubscribing
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import CommandError, Section
from pbmserv.db.models import User
from pbmserv.games.base import AnyGame

#: Each setting: the values it takes (the first is the default) and the user's column.
SETTINGS: dict[str, tuple[tuple[str, ...], str]] = {
    "mail": (("html", "text"), "mail_format"),
    "digest": (("off", "daily"), "digest"),
    "broadcasts": (("on", "off"), "broadcasts"),
}
SYNTAX = "set USERID PASSWORD " + " ".join(
    f"{name}={'|'.join(values)}" for name, (values, _column) in SETTINGS.items()
)


def settings_of(user: User) -> dict[str, str]:
    """The user's settings, by name."""
    return {name: getattr(user, column) for name, (_values, column) in SETTINGS.items()}


def _parsed(words: tuple[str, ...]) -> dict[str, str]:
    wanted: dict[str, str] = {}
    for word in words:
        name, equals, value = word.lower().partition("=")
        if not equals or name not in SETTINGS:
            known = ", ".join(SETTINGS)
            raise CommandError(f'"{word[:40]}" is not a setting (settings: {known})')
        values = SETTINGS[name][0]
        if value not in values:
            raise CommandError(f'{name} is one of {", ".join(values)}, not "{value[:20]}"')
        wanted[name] = value
    return wanted


@command(
    "set",
    SYNTAX,
    "your settings: board mail with a picture (html) or text alone; a daily digest or not; "
    "the operator's broadcasts or not",
    secret_words=(2,),
    min_words=4,
    details="mail=html (the default): each board mail has the text and, for mail programs\n"
    "that show HTML, a picture of the board above it. mail=text: the text alone.\n"
    "digest=daily: instead of a mail after every move, one mail a day listing the boards\n"
    "where it is your move; new games, game ends and proposals still come at once.\n"
    "broadcasts=off: no more messages from the server's operator (broadcasts=on: again).\n"
    '"status USERID" shows your settings; "help settings" says more.',
)
def set_settings(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = logins.authenticate(ctx, line.words[1], line.words[2])
    wanted = _parsed(line.words[3:])
    for name, value in wanted.items():
        setattr(user, SETTINGS[name][1], value)
    return Section(
        "settings_changed",
        {"userid": user.display_id, "changed": wanted, "settings": settings_of(user)},
        summary="set " + " ".join(f"{k}={v}" for k, v in wanted.items()),
    )


@command(
    "unsubscribe",
    unsubscribing.SYNTAX,
    "stop the daily digest or the operator's broadcasts (the mail's unsubscribe link sends it)",
    secret_words=(3,),
    min_words=4,
    max_words=4,
    details="Every digest and broadcast names this command, with its code, in its\n"
    '"List-Unsubscribe" header: the "unsubscribe" button of your mail program sends it, and\n'
    "that mail alone is enough, with no password. The code works only for the address the\n"
    "mail went to. To get them again: set USERID PASSWORD digest=daily, or\n"
    'set USERID PASSWORD broadcasts=on (see "help settings").',
)
def unsubscribe(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    list_name = unsubscribing.list_named(line.words[1])
    user, was_on = unsubscribing.unsubscribe(ctx, list_name, line.words[2], line.words[3])
    turn_on = f"{list_name}={unsubscribing.TURNED_ON[list_name]}"
    data = {
        "userid": user.display_id,
        "list": list_name,
        "was_on": was_on,
        "turn_on": f"set {user.display_id} PASSWORD {turn_on}",
    }
    return Section("unsubscribed", data, summary=f"unsubscribe {list_name} {user.display_id}")
