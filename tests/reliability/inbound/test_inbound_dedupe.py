"""Issue 15, item 1: identical messages without a Message-ID.

Scripts send byte-identical moves with neither Message-ID nor Date. A copy that comes within
``dedupe_window_seconds`` is a retransmission (acknowledged, not processed again); the same
bytes after the window are a new message. A message with a Message-ID is deduplicated by it
forever.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select

from pbmserv.config import ConfigError, Settings, load_settings
from pbmserv.db.engine import session_factory
from pbmserv.db.models import InboxMessage
from pbmserv.inbound.inbox import Stored, store_message
from tests.support import RunningServer, Sink, settle, smtp_send

pytestmark = pytest.mark.db

# What a script sends: no Message-ID, no Date, the same bytes every time.
SCRIPTED = (
    b"From: alice@example.org\r\nTo: pbmserv@localhost\r\nSubject: help commands\r\n"
    b"\r\nhelp commands\r\n"
)
WITH_ID = SCRIPTED.replace(b"Subject:", b"Message-ID: <once@example.org>\r\nSubject:")


def store_at(settings: Settings, engine, raw: bytes, when: datetime) -> Stored:  # type: ignore[no-untyped-def]
    return store_message(
        session_factory(engine), settings, raw, "alice@example.org", clock=lambda: when
    )


def inbox_count(engine) -> int:  # type: ignore[no-untyped-def]
    with engine.connect() as conn:
        return conn.scalar(select(func.count()).select_from(InboxMessage))


def test_a_copy_without_message_id_is_a_retransmission_only_within_the_window(
    settings: Settings,
    engine,  # type: ignore[no-untyped-def]
) -> None:
    start = datetime(2026, 1, 5, 12, 0, 0, tzinfo=UTC)
    assert store_at(settings, engine, SCRIPTED, start) is Stored.ACCEPTED
    assert store_at(settings, engine, SCRIPTED, start + timedelta(seconds=299)) is Stored.DUPLICATE
    later = start + timedelta(seconds=301)
    assert store_at(settings, engine, SCRIPTED, later) is Stored.ACCEPTED
    assert store_at(settings, engine, SCRIPTED, later + timedelta(seconds=5)) is Stored.DUPLICATE
    assert inbox_count(engine) == 2


def test_the_window_holds_across_a_bucket_boundary(settings: Settings, engine) -> None:  # type: ignore[no-untyped-def]
    window = settings.dedupe_window_seconds
    # One second before a multiple of the window, then two seconds later: the keys fall in
    # neighbouring buckets, but the copy is still a retransmission.
    edge = datetime.fromtimestamp((1_800_000_000 // window + 1) * window - 1, UTC)
    assert store_at(settings, engine, SCRIPTED, edge) is Stored.ACCEPTED
    assert store_at(settings, engine, SCRIPTED, edge + timedelta(seconds=2)) is Stored.DUPLICATE
    assert inbox_count(engine) == 1


def test_a_message_id_dedupes_forever(settings: Settings, engine) -> None:  # type: ignore[no-untyped-def]
    start = datetime(2026, 1, 5, 12, 0, 0, tzinfo=UTC)
    assert store_at(settings, engine, WITH_ID, start) is Stored.ACCEPTED
    for later in (timedelta(seconds=301), timedelta(days=30)):
        assert store_at(settings, engine, WITH_ID, start + later) is Stored.DUPLICATE
    assert inbox_count(engine) == 1


def test_over_smtp_copies_within_the_window_are_answered_once(
    server: RunningServer,
    engine,
    sink: Sink,  # type: ignore[no-untyped-def]
) -> None:
    first = smtp_send(server.port, SCRIPTED, mail_from="alice@example.org")
    second = smtp_send(server.port, SCRIPTED, mail_from="alice@example.org")
    assert (first[0], second[0]) == (250, 250) and b"already" in second[1]
    settle(engine)
    time.sleep(0.3)
    assert [m.to for m in sink.messages] == ["alice@example.org"]
    assert inbox_count(engine) == 1


def test_over_smtp_the_same_bytes_after_the_window_are_a_new_message(
    with_settings,
    engine,
    sink: Sink,  # type: ignore[no-untyped-def]
) -> None:
    running = RunningServer(with_settings(dedupe_window_seconds=0.5)).start()
    try:
        assert smtp_send(running.port, SCRIPTED, mail_from="alice@example.org")[0] == 250
        settle(engine)
        sink.wait_count(1)
        time.sleep(0.6)  # past the window
        code, text = smtp_send(running.port, SCRIPTED, mail_from="alice@example.org")
        assert code == 250 and b"already" not in text
        settle(engine)
        replies = sink.wait_count(2)
    finally:
        running.stop()
    assert [m.to for m in replies] == ["alice@example.org", "alice@example.org"]
    assert all("help" in m.subject for m in replies)
    with engine.connect() as conn:
        assert sorted(conn.scalars(select(InboxMessage.status))) == ["done", "done"]


def test_the_window_is_a_setting_and_must_be_positive() -> None:
    settings = load_settings(environ={"PBMSERV_DEDUPE_WINDOW_SECONDS": "60"})
    assert settings.dedupe_window_seconds == 60.0
    with pytest.raises(ConfigError, match="dedupe_window_seconds"):
        load_settings(environ={"PBMSERV_DEDUPE_WINDOW_SECONDS": "0"})
