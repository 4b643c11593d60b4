"""Idle-board maintenance on a real database: only due boards are read, in chunks that each
commit their reminders together with their mail.

The ``players`` fixture is in tests/core/conftest.py.
"""

from __future__ import annotations

import email
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from pbmserv.config import IdleLimits, Settings
from pbmserv.core import maintenance
from pbmserv.core.context import CommandContext
from pbmserv.core.maintenance import due_condition, run_maintenance
from pbmserv.db.engine import transaction
from pbmserv.db.models import GameRow, OutboxMessage
from pbmserv.games import find_game
from pbmserv.runtime.upkeep import maintain
from tests.core.client import Client

pytestmark = pytest.mark.db

START = datetime(2030, 1, 1, tzinfo=UTC)


def at(days: float) -> datetime:
    return START + timedelta(days=days)


@pytest.fixture
def boards(players: Client) -> Client:
    """Five chameleon boards (ids 1-5) and one owlman board (id 6), all last moved at START."""
    for _ in range(5):
        assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run("owlman challenge alice bob").ok
    set_times(players, range(1, 7), updated=START)
    return players


def set_times(
    client: Client, ids: range | list[int], updated: datetime, reminded: datetime | None = None
) -> None:
    with transaction(client.factory) as session:
        session.execute(
            update(GameRow)
            .where(GameRow.id.in_(list(ids)))
            .values(updated_at=updated, reminded_at=reminded)
        )


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The ply of every state a game's ``load`` builds (chameleon and owlman)."""
    calls: list[int] = []
    for name in ("chameleon", "owlman"):
        game = find_game(name)
        assert game is not None
        real = game.load

        def counting(data, real=real):  # type: ignore[no-untyped-def]
            calls.append(data.get("ply", 0))
            return real(data)

        monkeypatch.setattr(game, "load", counting)
    yield calls


def due_ids(client: Client, settings: Settings, now: datetime) -> list[int]:
    query = select(GameRow.id).where(due_condition(settings, now)).order_by(GameRow.id)
    return [row[0] for row in client.query(query)]


def notices(client: Client) -> Counter[str]:
    """How many notices each board's subject got (``chameleon board 3``: 2)."""
    rows = client.query(select(OutboxMessage.raw).where(OutboxMessage.kind == "notice"))
    subjects = (email.message_from_bytes(raw)["Subject"] for (raw,) in rows)
    return Counter(s.split(":")[0] for s in subjects)


def test_maint_query_gives_only_due_boards(boards: Client) -> None:
    settings = Settings(confirm_addresses=False)  # remind after 7 days, forfeit after 28
    set_times(boards, [2], updated=at(1.5))  # idle 6.5 days: not yet
    set_times(boards, [3], updated=START, reminded=at(7.5))  # reminded of this idle spell
    set_times(boards, [4], updated=at(-30), reminded=at(-10))  # reminded, and forfeit is due
    set_times(boards, [5], updated=at(-2), reminded=at(-3))  # reminded before the last move
    assert due_ids(boards, settings, at(8)) == [1, 4, 5, 6]
    with transaction(boards.factory) as session:
        session.execute(update(GameRow).where(GameRow.id == 6).values(status="finished"))
    assert due_ids(boards, settings, at(8)) == [1, 4, 5]
    assert due_ids(boards, settings, at(4)) == [4]


def test_maint_query_uses_each_games_own_limits(boards: Client) -> None:
    limits = {"owlman": IdleLimits(remind_after_days=2, forfeit_after_days=5)}
    settings = replace(Settings(confirm_addresses=False), game_limits=limits)
    assert due_ids(boards, settings, at(3)) == [6]
    set_times(boards, [6], updated=START, reminded=at(2.5))
    assert due_ids(boards, settings, at(4)) == []
    assert due_ids(boards, settings, at(5)) == [6]  # its forfeit, while chameleon waits
    assert due_ids(boards, settings, at(7)) == [1, 2, 3, 4, 5, 6]


def test_maint_does_not_load_boards_already_reminded(boards: Client, loads: list[int]) -> None:
    settings = Settings(confirm_addresses=False)
    report = maintain(boards.factory, settings, clock=lambda: at(8))
    assert report.reminded == [1, 2, 3, 4, 5, 6] and len(loads) == 6
    loads.clear()
    for day in (9, 15, 27.9):  # hourly passes over the rest of the idle spell
        again = maintain(boards.factory, settings, clock=lambda day=day: at(day))
        assert (again.reminded, again.forfeited, again.examined) == ([], [], 0)
    assert loads == []
    set_times(boards, [3], updated=at(22))  # a move: board 3's new idle spell is not due yet
    assert maintain(boards.factory, settings, clock=lambda: at(28)).forfeited == [1, 2, 4, 5, 6]
    assert len(loads) == 5
    assert maintain(boards.factory, settings, clock=lambda: at(28.1)).examined == 0


def test_maint_admin_pass_in_one_transaction_reads_only_due_boards(
    boards: Client, loads: list[int]
) -> None:
    set_times(boards, [1, 2, 3], updated=START, reminded=at(7.5))
    with transaction(boards.factory) as session:
        ctx = CommandContext(
            session=session,
            settings=Settings(confirm_addresses=False),
            sender=None,
            clock=lambda: at(8),
        )
        report = run_maintenance(ctx)
    assert report.reminded == [4, 5, 6] and report.examined == 3 and len(loads) == 3


def test_maint_works_in_chunks_that_each_commit_with_their_mail(
    boards: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(confirm_addresses=False)
    real_remind = maintenance._remind
    transactions = []

    def failing_on_board_4(ctx, board, *args):  # type: ignore[no-untyped-def]
        transactions.append(id(ctx.session))
        if board.number == 4:
            raise RuntimeError("crash")
        real_remind(ctx, board, *args)

    monkeypatch.setattr(maintenance, "_remind", failing_on_board_4)
    with pytest.raises(RuntimeError):
        maintain(boards.factory, settings, clock=lambda: at(8), chunk=2)
    # Boards 1 and 2 were one chunk, committed with their mail; 3 and 4 were rolled back.
    assert notices(boards) == {"chameleon board 1": 2, "chameleon board 2": 2}
    reminded = boards.query(select(GameRow.id).where(GameRow.reminded_at.is_not(None)))
    assert [r[0] for r in reminded] == [1, 2]
    assert len(set(transactions[:2])) == 1 and transactions[2] != transactions[1]

    monkeypatch.setattr(maintenance, "_remind", real_remind)
    report = maintain(boards.factory, settings, clock=lambda: at(8.1), chunk=2)
    assert report.reminded == [3, 4, 5, 6] and report.examined == 4 and report.last_id == 6
    # Every board reminded exactly once: nothing lost, nothing sent twice.
    assert notices(boards) == {f"chameleon board {n}": 2 for n in range(1, 6)} | {
        "owlman board 6": 2
    }


def test_maint_chunk_boundary_exactly_full(boards: Client) -> None:
    """Six due boards in chunks of three: a third, empty chunk ends the pass."""
    report = maintain(
        boards.factory, Settings(confirm_addresses=False), clock=lambda: at(8), chunk=3
    )
    assert report.reminded == [1, 2, 3, 4, 5, 6] and report.examined == 6


def test_maint_never_forfeits_without_a_reminder_first(boards: Client) -> None:
    """After downtime (no maintenance for 40 days), an overdue board is reminded first and
    forfeited only once the notice has passed since that reminder."""
    settings = replace(Settings(confirm_addresses=False), forfeit_notice_days=3.0)
    first = maintain(boards.factory, settings, clock=lambda: at(40))
    assert first.forfeited == [] and first.reminded == [1, 2, 3, 4, 5, 6]
    reminder = boards.query(select(OutboxMessage.raw).where(OutboxMessage.kind == "notice"))[0][0]
    assert b"within 3 more days" in reminder
    assert maintain(boards.factory, settings, clock=lambda: at(42.9)).examined == 0
    assert maintain(boards.factory, settings, clock=lambda: at(43)).forfeited == [1, 2, 3, 4, 5, 6]


def test_maint_forfeit_waits_for_the_notice_after_a_late_reminder(boards: Client) -> None:
    settings = replace(Settings(confirm_addresses=False), forfeit_notice_days=2.0)
    set_times(boards, [1], updated=START, reminded=at(27.5))  # reminded late, near the limit
    assert 1 not in due_ids(boards, settings, at(28))
    assert 1 in due_ids(boards, settings, at(29.5))
    report = maintain(boards.factory, settings, clock=lambda: at(29.5))
    assert 1 in report.forfeited


def test_forfeit_notice_setting_is_read_and_checked() -> None:
    from pbmserv.config import ConfigError, load_settings

    assert load_settings(environ={"PBMSERV_FORFEIT_NOTICE_DAYS": "4"}).forfeit_notice_days == 4
    with pytest.raises(ConfigError):
        load_settings(environ={"PBMSERV_FORFEIT_NOTICE_DAYS": "-1"})
