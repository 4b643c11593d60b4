"""The listener stores the messages that arrive together in one transaction (a group commit),
and still answers each on its own: a copy is a duplicate, a message that cannot be stored
gets its own temporary failure and holds up no other. A real database, real MIME parsing."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import event, func, select

import pbmserv.inbound.inbox as inbox
from pbmserv.db.engine import session_factory
from pbmserv.db.models import InboxMessage
from pbmserv.inbound.inbox import Stored
from pbmserv.inbound.smtp import GroupStore
from tests.support import make_mail

pytestmark = pytest.mark.db


def raw_mail(k: int) -> bytes:
    return make_mail(f"p{k}@example.org", f"help {k}").as_bytes()


def stored_count(engine) -> int:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return conn.scalar(select(func.count()).select_from(InboxMessage)) or 0


async def store_all(store: GroupStore, messages: list[bytes]) -> list[Stored | BaseException]:
    return await asyncio.gather(
        *(store.store(raw, "sender@example.org") for raw in messages), return_exceptions=True
    )


def test_a_burst_is_stored_in_one_transaction_and_every_message_answered(  # type: ignore[no-untyped-def]
    engine, settings
) -> None:
    commits = []
    event.listen(engine, "commit", lambda _conn: commits.append(1))
    store = GroupStore(session_factory(engine), settings)
    messages = [raw_mail(k) for k in range(30)]
    copy = messages[3]
    outcomes = asyncio.run(store_all(store, [*messages, copy]))
    assert outcomes[:30] == [Stored.ACCEPTED] * 30
    assert outcomes[30] is Stored.DUPLICATE  # the copy, in the same group as its original
    assert stored_count(engine) == 30
    assert len(commits) <= 2, len(commits)


def test_a_message_that_cannot_be_stored_fails_alone(  # type: ignore[no-untyped-def]
    engine, settings, monkeypatch
) -> None:
    real = inbox._store
    bad = raw_mail(99)

    def fail_on_bad(session, settings_, message, now):  # type: ignore[no-untyped-def]
        if message[0] == bad:
            raise RuntimeError("this message breaks the store")
        return real(session, settings_, message, now)

    monkeypatch.setattr(inbox, "_store", fail_on_bad)
    store = GroupStore(session_factory(engine), settings)
    messages = [raw_mail(0), bad, raw_mail(1)]
    outcomes = asyncio.run(store_all(store, messages))
    assert outcomes[0] is Stored.ACCEPTED and outcomes[2] is Stored.ACCEPTED
    assert isinstance(outcomes[1], RuntimeError)
    assert stored_count(engine) == 2
