"""Each reader's thread of a board: one mail answers the one before, in the database as in
the session that wrote it, and a command undone (its savepoint rolled back) undoes its step."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.core.context import CommandContext
from pbmserv.core.play import board_mail
from pbmserv.db.engine import transaction
from pbmserv.db.models import BoardMail, GameRow, User
from tests.core.client import Client


def _board(players: Client) -> int:
    section = players.run("chameleon challenge -size=5 alice bob")
    assert section.ok
    return int(section.data["board"])


def _next_threads(ctx: CommandContext, number: int) -> dict[str, board_mail.MailThread]:
    row = ctx.session.get(GameRow, number)
    assert row is not None
    readers = [(seat.user, seat.seat) for seat in row.seats]
    found = board_mail.threads(ctx, row, readers)
    return {user.userid: found[user.id] for user, _seat in readers}


def _rows_kept(session: Session) -> list[BoardMail]:
    """The board's thread rows, loaded and held: as a command that read them (a reply's seat)
    keeps them in the session while the threads advance."""
    return list(session.scalars(select(BoardMail)))


def test_each_mail_answers_the_last_one_mailed_in_the_same_session_and_the_next(
    players: Client,
) -> None:
    number = _board(players)
    with transaction(players.factory) as session:
        ctx = CommandContext(session=session, settings=players.settings, sender=None)
        held = _rows_kept(session)
        first = _next_threads(ctx, number)
        second = _next_threads(ctx, number)
        assert held  # the rows stayed loaded in the session all along
    assert second["alice"].in_reply_to == first["alice"].message_id
    assert second["bob"].in_reply_to == first["bob"].message_id
    with transaction(players.factory) as session:
        ctx = CommandContext(session=session, settings=players.settings, sender=None)
        third = _next_threads(ctx, number)
    assert third["alice"].in_reply_to == second["alice"].message_id
    stored = players.query(select(BoardMail.last_message_id).join(User).where(User.userid == "bob"))
    assert stored == [(third["bob"].message_id,)]


def test_a_step_rolled_back_with_its_command_is_not_answered(players: Client) -> None:
    number = _board(players)
    with transaction(players.factory) as session:
        ctx = CommandContext(session=session, settings=players.settings, sender=None)
        held = _rows_kept(session)
        before = _next_threads(ctx, number)
        savepoint = session.begin_nested()
        undone = _next_threads(ctx, number)
        savepoint.rollback()
        after = _next_threads(ctx, number)
        assert held
    assert undone["alice"].message_id != after["alice"].message_id
    # The mail after the undone one answers the last mail really written, not the undone one.
    assert after["alice"].in_reply_to == before["alice"].message_id
    assert after["bob"].in_reply_to == before["bob"].message_id
