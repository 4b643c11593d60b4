"""Two servers on one PostgreSQL database never deadlock on boards: a batch locks every board its
messages name in ascending order before any command runs, so two batches that name the same
boards in opposite orders wait for each other instead (issue 29). A transaction the database
still aborts for its locks is done again with a warning, never a traceback.

Real parts: the real processor (process_batch) in two threads, as two servers, on the real
database. The interleaving that deadlocked is forced (each batch takes its first board, then
waits for the other's to take one: at most HOLD_SECONDS when the other cannot), not timed.
SQLite has one writer at a time: it cannot deadlock, and these tests skip it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import Engine, select, text

from pbmserv.config import Settings
from pbmserv.core.commands import play as play_commands  # where a move loads its board
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.core.play.boards import is_lock_conflict
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.models import InboxMessage, MoveRow
from pbmserv.inbound.inbox import Stored, store_message
from pbmserv.runtime.processor import process_batch
from tests.support import make_mail

pytestmark = pytest.mark.db

HOLD_SECONDS = 3.0
ALICE = "alice@example.org"


@pytest.fixture
def boards(db_url: str, engine: Engine, settings: Settings) -> Iterator[None]:
    """alice and bob with two Chameleon boards, alice to move on both; alice's password
    already checked (as a server remembers it), so no batch steps out to check it."""
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite has one writer at a time: no deadlock to avoid")
    factory = session_factory(engine)
    for line, sender in (
        ("signup alice secret1", ALICE),
        ("signup bob hunter22", "bob@example.org"),
        ("chameleon challenge -size=5 alice bob", ALICE),
        ("chameleon challenge -size=5 alice bob", ALICE),
        ("chameleon move 1 alice secret1 c3x", ALICE),
        ("chameleon move 1 bob hunter22 c2o", "bob@example.org"),
    ):
        with transaction(factory) as session:
            assert dispatch_line(CommandContext(session, settings, sender), line).ok, line
    yield


def _store(engine: Engine, settings: Settings, subjects: list[str]) -> None:
    factory = session_factory(engine)
    for subject in subjects:
        raw = make_mail(ALICE, subject).as_bytes()
        assert store_message(factory, settings, raw, ALICE) is Stored.ACCEPTED


class FirstLocks:
    """Wraps load_board: the first board a transaction locks for a command, it waits there
    until the other server's transaction has locked one too (HOLD_SECONDS at most)."""

    def __init__(self, original: Callable[..., Any]) -> None:
        self.original = original
        self.barrier = threading.Barrier(2, timeout=HOLD_SECONDS)
        self.first = threading.Event()
        self.seen: set[int] = set()

    def __call__(self, ctx: CommandContext, *args: Any, for_update: bool, **kw: Any) -> Any:
        board = self.original(ctx, *args, for_update=for_update, **kw)
        if for_update and threading.get_ident() not in self.seen:
            self.seen.add(threading.get_ident())
            self.first.set()
            # The other could not lock one (the barrier broke): go on.
            with contextlib.suppress(threading.BrokenBarrierError):
                self.barrier.wait()
        return board


def _race(engine: Engine, settings: Settings) -> list[BaseException]:
    """Server A takes the two oldest messages, and once it holds its first board, server B
    takes the two others."""
    factory = session_factory(engine)
    errors: list[BaseException] = []

    def server() -> None:
        try:
            process_batch(factory, settings, limit=2)
        except BaseException as error:  # reported by the test
            errors.append(error)

    first = threading.Thread(target=server)
    first.start()
    locks = play_commands.load_board
    assert isinstance(locks, FirstLocks)
    assert locks.first.wait(30)
    second = threading.Thread(target=server)
    second.start()
    first.join(60)
    second.join(60)
    return errors


def _problems(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        f"{r.levelname} {r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.levelno >= logging.WARNING or r.exc_info is not None
    ]


def test_two_batches_naming_two_boards_in_opposite_orders_do_not_deadlock(
    boards: None,
    engine: Engine,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(play_commands, "load_board", FirstLocks(play_commands.load_board))
    _store(
        engine,
        settings,
        [
            "chameleon move 1 alice secret1 a1x",  # server A: board 1, then board 2
            "chameleon move 2 alice secret1 a1x",
            "chameleon move 2 alice secret1 b2x",  # server B: board 2, then board 1
            "chameleon move 1 alice secret1 b2x",
        ],
    )
    caplog.set_level(logging.INFO)
    assert _race(engine, settings) == []
    assert _problems(caplog) == []  # no deadlock, so no batch redone
    with engine.connect() as conn:
        statuses = conn.scalars(select(InboxMessage.status).order_by(InboxMessage.id)).all()
        moves = conn.execute(select(MoveRow.game_id, MoveRow.text).order_by(MoveRow.id)).all()
    assert statuses == ["done"] * 4
    # A's moves were played; B's came after them, when it was no longer alice's turn.
    assert [tuple(m) for m in moves] == [(1, "c3x"), (1, "c2o"), (1, "a1x"), (2, "a1x")]


def test_a_batch_the_database_aborts_for_a_deadlock_is_done_again_quietly(
    boards: None,
    db_url: str,
    engine: Engine,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    deadlock = _real_deadlock(engine)
    assert is_lock_conflict(deadlock)
    original = play_commands.load_board
    raised: list[int] = []

    def deadlocked_once(ctx: CommandContext, *args: Any, **kw: Any) -> Any:
        if not raised:  # as when PostgreSQL picks this transaction as the deadlock's victim
            raised.append(1)
            raise deadlock
        return original(ctx, *args, **kw)

    monkeypatch.setattr(play_commands, "load_board", deadlocked_once)
    _store(
        engine,
        settings,
        ["chameleon move 1 alice secret1 a1x", "chameleon move 2 alice secret1 a1x"],
    )
    caplog.set_level(logging.INFO)
    factory = session_factory(engine)
    for _batch in range(5):  # as the server's loop: again at once while there was work
        if not process_batch(factory, settings, limit=2):
            break
    [warning] = _problems(caplog)
    assert warning.startswith("WARNING pbmserv.process") and "DeadlockDetected" in warning
    with engine.connect() as conn:
        rows = conn.execute(select(InboxMessage.status, InboxMessage.attempts)).all()
        played = conn.scalars(select(MoveRow.game_id).where(MoveRow.text == "a1x")).all()
    assert {tuple(r) for r in rows} == {("done", 0)}  # not counted as failed attempts
    assert sorted(played) == [1, 2]


def _real_deadlock(engine: Engine) -> BaseException:
    """The error PostgreSQL raises in one of two transactions that lock two boards in
    opposite orders (the other goes on)."""
    locked = threading.Barrier(2, timeout=30)
    errors: list[BaseException] = []

    def lock(first: int, second: int) -> None:
        try:
            with engine.begin() as conn:
                conn.execute(text("SELECT id FROM games WHERE id = :id FOR UPDATE"), {"id": first})
                locked.wait()
                conn.execute(text("SELECT id FROM games WHERE id = :id FOR UPDATE"), {"id": second})
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=lock, args=pair) for pair in ((1, 2), (2, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    [error] = errors
    return error
