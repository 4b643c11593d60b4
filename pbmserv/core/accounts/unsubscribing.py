"""Unsubscribing from bulk mail with one mail: the daily digest and the operator's broadcasts.

Bulk mail (a digest, a broadcast) names, in its List-Unsubscribe header, a mail to send back:
``unsubscribe digest USERID CODE``. That mail alone is the action (RFC 8058: no confirmation
step): the user's digest is turned off (board mail comes after every move again), or the
user gets no more broadcasts. The CODE is a keyed hash of the list, the user and the address
the mail went to, so it works without a password and nobody can make one for another user or
address; it stops working when the user's address changes. Like a password it is secret:
the command masks it wherever it is quoted or logged.

Board mail and answers to commands are no bulk mail: they carry no such header.
"""

from __future__ import annotations

import base64
import hmac

from pbmserv.core.accounts.bouncing import bounce_key  # the server's one key of mailed MACs
from pbmserv.core.context import CommandContext
from pbmserv.core.results import BulkMail, CommandError
from pbmserv.db.models import User

#: The lists a user can leave by mail: the name in the command -> the user's column and the
#: value that turns the list off for them.
LISTS: dict[str, tuple[str, str]] = {
    "digest": ("digest", "off"),
    "broadcasts": ("broadcasts", "off"),
}
#: Names a user may also write for a list.
_ALIASES = {"broadcast": "broadcasts", "digests": "digest"}
#: The value that turns each list back on, for the answer that says how.
TURNED_ON = {"digest": "daily", "broadcasts": "on"}
CODE_LENGTH = 16  # 80 bits of base32, lower-case
SYNTAX = "unsubscribe digest|broadcasts USERID CODE"


def unsubscribe_code(key: bytes, user: User, list_name: str) -> str:
    """The secret code of ``user``'s unsubscribe command for ``list_name``, made with the
    server's key (``bouncing.bounce_key``) over the list, the user and their address."""
    text = f"unsubscribe|{list_name}|{user.id}|{user.email.strip().lower()}"
    digest = hmac.digest(key, text.encode(), "sha256")
    return base64.b32encode(digest[:10]).decode("ascii").lower()


def bulk_mail(key: bytes, user: User, list_name: str) -> BulkMail:
    """What makes a mail to ``user`` bulk mail of ``list_name``: the command that leaves it."""
    code = unsubscribe_code(key, user, list_name)
    return BulkMail(list_name, f"unsubscribe {list_name} {user.userid} {code}")


def list_named(word: str) -> str:
    """The list a command's word names; CommandError for none."""
    name = _ALIASES.get(word.lower(), word.lower())
    if name not in LISTS:
        raise CommandError(f'"{word[:20]}" is no list you can leave (digest or broadcasts)')
    return name


def unsubscribe(ctx: CommandContext, list_name: str, userid: str, code: str) -> tuple[User, bool]:
    """Take ``userid`` off ``list_name`` if ``code`` is right for them and their address:
    the user, and whether they were on it. A wrong code (or user) changes nothing and says
    no more than that the code is not right."""
    user = ctx.find_user(userid)
    right = unsubscribe_code(bounce_key(ctx.session), user, list_name) if user is not None else "-"
    if user is None or user.disabled or not hmac.compare_digest(right, code.lower()):
        raise CommandError(
            "this unsubscribe code is not right for that user (or their address has changed "
            "since the mail that gave it)",
            hint=f'Send "set USERID PASSWORD {list_name}=off" with your password instead.',
            syntax_was_right=True,
        )
    column, off = LISTS[list_name]
    was_on = getattr(user, column) != off
    setattr(user, column, off)
    return user, was_on
