"""``unsubscribe digest|broadcasts USERID CODE``: leave bulk mail with the one mail its
List-Unsubscribe header names (see :mod:`pbmserv.core.accounts.unsubscribing`)."""

from __future__ import annotations

from pbmserv.core.accounts import unsubscribing
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.results import Section
from pbmserv.games.base import AnyGame


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
