"""Talking: ``GAME chat BOARD USERID PASSWORD TEXT`` goes to the other players and the
observers of a board and stays in its history; ``message USERID PASSWORD TOUSER... TEXT`` goes
to other users, board or no board."""

from __future__ import annotations

from pbmserv.core.accounts import logins
from pbmserv.core.commands.play import board_player
from pbmserv.core.commands.registry import command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import board_mail
from pbmserv.core.play import game_service as service
from pbmserv.core.results import CommandError, Notification, Section
from pbmserv.core.robots.identity import is_robot
from pbmserv.db.models import User
from pbmserv.games.base import AnyGame

#: Longer than any chat line, short enough for one history entry.
MAX_CHAT = 1000


@command(
    "chat",
    "GAME chat BOARD USERID PASSWORD TEXT",
    "a message to the other players and the observers of a board, kept in its history",
    game_scoped=True,
    secret_words=(4,),
    min_words=6,
)
def chat(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    assert game is not None
    board, user, seat = board_player(ctx, game, line, for_update=False)
    text = line.rest(5).strip()
    if len(text) > MAX_CHAT:
        raise CommandError(f"a chat message is at most {MAX_CHAT} characters")
    service.record_event(ctx, board, "chat", text, seat)
    told = {user.id}
    readers = [s.user for s in board.row.seats] + list(service.observers(ctx, board))
    data = {"game": game.SPEC.name, "board": board.number, "from": user.display_id, "text": text}
    for reader in readers:
        if reader.id in told or reader.disabled or is_robot(reader):  # robots read nothing
            continue
        told.add(reader.id)
        # In the reader's thread of the board; a player's reply is a chat line back.
        seated = next((s.seat for s in board.row.seats if s.user_id == reader.id), None)
        thread = board_mail.chat_thread(ctx, board.row, reader, seated)
        ctx.notify(
            Notification(
                to=reader.email,
                channel="notice",
                kind="chat",
                data={**data, "reply_by_mail": thread.reply_tag is not None},
                thread=thread,
            )
        )
    return Section(
        "chatted",
        {**data, "readers": len(told) - 1},
        summary=f"{game.SPEC.name} chat board={board.number}",
    )


@command(
    "message",
    "message USERID PASSWORD TOUSER [TOUSER ...] TEXT",
    "a message to other users (the user ids first, then the text)",
    secret_words=(2,),
    min_words=5,
)
def message(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = logins.authenticate(ctx, line.words[1], line.words[2])
    recipients: list[User] = []
    words = line.words[3:]
    # The leading words that are user ids are the recipients; the text starts at the first
    # word that is not one.
    most = ctx.settings.max_message_recipients
    while words:
        found = ctx.find_user(words[0])
        if found is None:
            break
        if found.id != user.id and all(r.id != found.id for r in recipients):
            recipients.append(found)
        words = words[1:]
    if len(recipients) > most:
        raise CommandError(
            f"a message may go to at most {most} users, and this one names {len(recipients)}",
            hint="Send it in several messages, or use a board's chat.",
            syntax_was_right=True,
        )
    if not recipients:
        raise CommandError(f'"{line.words[3]}" is not a user id: name who the message is for')
    text = " ".join(words).strip()
    if not text:
        raise CommandError("the message has no text after the user ids")
    if len(text) > MAX_CHAT:
        raise CommandError(f"a message is at most {MAX_CHAT} characters")
    data = {"from": user.display_id, "text": text}
    sent = [r for r in recipients if not r.disabled and not is_robot(r)]
    for reader in sent:
        # A reply from the reader's own address is a message back (the tag is the reader's).
        tag = board_mail.message_tag(ctx.session, reader, user)
        ctx.notify(
            Notification(
                to=reader.email,
                channel="notice",
                kind="message",
                data={**data, "reply_by_mail": True},
                reply_tag=tag,
            )
        )
    names = [r.display_id for r in sent]
    robots = [r.display_id for r in recipients if is_robot(r)]
    return Section("messaged", {"to": names, "robots": robots}, summary=f"message to {len(names)}")
