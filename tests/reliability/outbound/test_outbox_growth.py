"""A growing outbox costs delivery nothing: the claim reads only the pending mail, whatever the
statistics say about the sent rows, and sent mail is purged after ``sent_retention_days``.

The real database of each engine, with real statistics (ANALYZE) and the real statements.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from sqlalchemy import Connection, Engine, Executable, func, insert, select, text

from pbmserv.db.engine import session_factory
from pbmserv.db.models import OutboxMessage
from pbmserv.db.times import utcnow
from pbmserv.outbound.delivery import BATCH, purge_sent, purge_statement
from pbmserv.outbound.leases import claim_statement
from tests.reliability.outbox import Relay, ScriptedHandler, delivery_settings
from tests.support import RunningServer

pytestmark = pytest.mark.db

SENT = 20_000  # enough for SQLite to scan the table rather than trust an index on status


def fill(engine: Engine, sent: int, pending: int, age: timedelta = timedelta(0)) -> None:
    """``sent`` rows sent and ``pending`` rows waiting, queued ``age`` ago."""
    when = utcnow() - age
    start = _count(engine)

    def row(number: int, status: str) -> dict[str, object]:
        return {
            "message_id": f"<{start + number}.{status}@test>",
            "recipient": "player@example.org",
            "kind": "board",
            "raw": b"Subject: x\r\n\r\nx\r\n",
            "status": status,
            "attempts": 1 if status == "sent" else 0,
            "next_attempt_at": when,
            "created_at": when,
            "sent_at": when if status == "sent" else None,
        }

    rows = [row(n, "sent") for n in range(sent)] + [
        row(sent + n, "pending") for n in range(pending)
    ]
    with engine.begin() as conn:
        for offset in range(0, len(rows), 5000):
            conn.execute(insert(OutboxMessage), rows[offset : offset + 5000])


def _count(engine: Engine, status: str | None = None) -> int:
    query = select(func.count()).select_from(OutboxMessage)
    if status is not None:
        query = query.where(OutboxMessage.status == status)
    with engine.connect() as conn:
        return int(conn.scalar(query) or 0)


def plan(conn: Connection, statement: Executable, values: dict[str, object]) -> str:
    """The engine's plan of ``statement`` with ``values``, as one text."""
    compiled = statement.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.construct_params(values)
    if conn.dialect.name == "sqlite":
        args = tuple(params[name] for name in compiled.positiontup or ())
        found = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled.string}", args).all()
        return "\n".join(row[-1] for row in found)
    found = conn.exec_driver_sql(f"EXPLAIN {compiled.string}", params).all()
    return "\n".join(row[0] for row in found)


def analyze(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text("ANALYZE"))


@pytest.mark.parametrize("analyzed", [True, False], ids=["analyzed", "no-statistics"])
def test_the_claim_reads_the_pending_index_among_many_sent_rows(
    engine: Engine, analyzed: bool
) -> None:
    """With or without ANALYZE: a fresh SQLite file has no statistics, and the claim then
    sorted every pending row when an index led with status."""
    fill(engine, SENT, 500)
    if analyzed:
        analyze(engine)
    now = utcnow()
    with engine.connect() as conn:
        claim = plan(conn, claim_statement(BATCH), {"now": now, "until": now, "owner": "x" * 32})
        purge = plan(conn, purge_statement(now - timedelta(days=30), 2000), {})
    assert "SCAN outbox" not in claim and "Seq Scan on outbox" not in claim, claim
    if engine.dialect.name == "sqlite":
        assert "ix_outbox_pending" in claim, claim
        assert "TEMP B-TREE" not in claim, claim  # the index gives the order too
    else:
        # PostgreSQL knows from its statistics how rare pending rows are; it may as well take
        # them from (status, created_at): either way it reads only the pending entries.
        assert "ix_outbox_pending" in claim or "Index Cond: ((status)::text = 'pending'" in claim
    assert "ix_outbox_sent_created" in purge, purge
    assert "SCAN outbox" not in purge and "Seq Scan on outbox" not in purge, purge


def test_sent_mail_is_purged_after_its_retention_in_chunks(db_url: str, engine: Engine) -> None:
    fill(engine, 25, 2, age=timedelta(days=40))  # old: the sent ones go, the pending stay
    fill(engine, 3, 0, age=timedelta(days=10))  # sent, but not old enough
    with engine.begin() as conn:
        conn.execute(
            OutboxMessage.__table__.update()
            .where(OutboxMessage.id == 1)
            .values(status="failed", sent_at=None)  # failed for good: kept for the operator
        )
    settings = delivery_settings(db_url, None, sent_retention_days=30.0)
    factory = session_factory(engine)
    assert purge_sent(factory, settings, chunk=4) == 24
    assert (_count(engine, "sent"), _count(engine, "pending"), _count(engine, "failed")) == (
        3,
        2,
        1,
    )
    assert purge_sent(factory, settings, chunk=4) == 0
    # 0 keeps sent mail forever, however old.
    keep = delivery_settings(db_url, None, sent_retention_days=0.0)
    assert purge_sent(factory, keep, clock=lambda: utcnow() + timedelta(days=999)) == 0
    assert _count(engine, "sent") == 3


def test_a_stopping_server_leaves_the_purge_between_chunks(db_url: str, engine: Engine) -> None:
    fill(engine, 10, 0, age=timedelta(days=40))
    settings = delivery_settings(db_url, None, sent_retention_days=30.0)
    calls: list[int] = []

    def stopping() -> bool:
        calls.append(1)
        return len(calls) > 2  # after two chunks

    assert purge_sent(session_factory(engine), settings, chunk=3, stopping=stopping) == 6
    assert _count(engine, "sent") == 4


def test_serve_purges_old_sent_mail_by_itself(db_url: str, engine: Engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    fill(engine, 7, 0, age=timedelta(days=40))
    fill(engine, 2, 0, age=timedelta(days=1))
    with Relay(ScriptedHandler()) as relay:
        settings = delivery_settings(
            db_url,
            relay,
            listen="127.0.0.1:0",
            spool=tmp_path / "spool",
            poll_seconds=0.2,
            sent_retention_days=30.0,
        )
        running = RunningServer(settings).start()
        try:
            deadline = utcnow() + timedelta(seconds=20)
            while _count(engine, "sent") > 2 and utcnow() < deadline:
                time.sleep(0.05)
        finally:
            running.stop()
    assert _count(engine, "sent") == 2
