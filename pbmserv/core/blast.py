"""The blast radius of one incoming message: how much mail its commands may make us send.

Two bounds, checked after each command (whose savepoint is rolled back when one is over):
- one message may cause at most ``max_mails_per_message`` mails to other people (board mail,
  notices; its own reply and tournament news apart; a confirmation mail to a
  new address counts);
- one address gets at most ``text_mails_per_recipient_per_day`` mails a day (UTC) that carry
  other users' text (``chat``, ``message``, ``challenge``). A chat skips the readers who had
  their fill; a message or challenge to one of them is refused whole.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import date

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from pbmserv.core.context import CommandContext
from pbmserv.core.results import CommandError, Notification, Section
from pbmserv.db.models import TextMailCount

#: Commands whose mail carries what another user wrote (or asks of the recipient).
TEXT_COMMANDS = frozenset({"chat", "message", "challenge"})
#: Notices that never count against a message's mails: the server's own news.
_UNCOUNTED = frozenset({"tournament_pairings", "tournament_standings", "tournament_entry"})


def _to_others(ctx: CommandContext, notes: Sequence[Notification]) -> list[Notification]:
    sender = (ctx.sender or "").lower()
    return [n for n in notes if n.to.lower() != sender and n.kind not in _UNCOUNTED]


def check(ctx: CommandContext, command: str, first: int, section: Section) -> None:
    """Check the mail the command just run caused (``ctx.notifications[first:]``); raise a
    CommandError when it goes over a bound (the caller rolls the command back)."""
    if ctx.sender is None:
        return  # the operator's shell: the operator's own doing
    if command in TEXT_COMMANDS:
        _take_text_quota(ctx, command, first, section)
    caused = len(_to_others(ctx, ctx.notifications[first:]))
    most = ctx.settings.max_mails_per_message
    if ctx.mails_caused + caused > most:
        raise CommandError(
            f"this message would make us send more than {most} mails to other people, "
            "the most one message may; this command and any after it were not run",
            hint="Send the rest in another message.",
            syntax_was_right=True,
        )
    ctx.mails_caused += caused


def _today(ctx: CommandContext) -> date:
    return ctx.now().date()


def _take_text_quota(ctx: CommandContext, command: str, first: int, section: Section) -> None:
    notes = _to_others(ctx, ctx.notifications[first:])
    wanted = Counter(n.to.lower() for n in notes)
    if not wanted:
        return
    day, most = _today(ctx), ctx.settings.text_mails_per_recipient_per_day
    rows = ctx.session.execute(
        select(TextMailCount.address, TextMailCount.count).where(
            TextMailCount.day == day, TextMailCount.address.in_(list(wanted))
        )
    ).all()
    had = {address: count for address, count in rows}
    full = {a for a, n in wanted.items() if had.get(a, 0) + n > most}
    if full and command != "chat":
        raise CommandError(
            f"a player you wrote to has had {most} mails from other players today, the most we "
            "pass on in a day; nothing was sent",
            hint="Try again tomorrow (UTC).",
            syntax_was_right=True,
        )
    if full:
        kept = [n for n in ctx.notifications[first:] if n.to.lower() not in full]
        del ctx.notifications[first:]
        ctx.notifications.extend(kept)
        section.data["withheld"] = len(full)
        if isinstance(section.data.get("readers"), int):
            section.data["readers"] -= len(full)
    for address, count in wanted.items():
        if address not in full:
            _add(ctx, address, day, count, address in had)


def _add(ctx: CommandContext, address: str, day: date, count: int, exists: bool) -> None:
    if exists:
        ctx.session.execute(
            update(TextMailCount)
            .where(TextMailCount.address == address, TextMailCount.day == day)
            .values(count=TextMailCount.count + count)
        )
        return
    try:
        with ctx.session.begin_nested():
            ctx.session.add(TextMailCount(address=address, day=day, count=count))
    except IntegrityError:  # another server counted the first one a moment ago
        _add(ctx, address, day, count, exists=True)
