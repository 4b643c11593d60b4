"""What one idle-board maintenance pass costs on a database full of idle boards (issue 16).

Run ``python bench/maintenance_pass.py`` (SQLite in a temporary directory) or with
``--db postgresql+psycopg://postgres@127.0.0.1:5432/test`` (a private schema, dropped after).
It stores ``--boards`` active chameleon boards (default 40,000), idle for ten days and all
already reminded of it, plus ``--due`` boards (default 1,000) idle as long but never reminded,
then times with the server's own ``maintain``:

* the first pass, which reminds the due boards in chunks (one transaction each),
* the passes after it, where nothing is due: they should take milliseconds,
* for comparison, what the pass used to do: read every board idle past the shortest reminder
  limit and load its state (``--no-old`` skips it).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import Engine, event, func, insert, select, text  # noqa: E402

from bench.rig import scratch_database, workdir_for  # noqa: E402
from pbmserv.config import Settings
from pbmserv.core.accounts.passwords import hash_password
from pbmserv.db.engine import make_engine, session_factory
from pbmserv.db.models import GameRow, OutboxMessage, Seat, User
from pbmserv.games.chameleon import GAME
from pbmserv.runtime.upkeep import MAINTENANCE_CHUNK, maintain

NOW = datetime(2030, 6, 1, tzinfo=UTC)
_USERS = 200
_BATCH = 5000


def fill(engine: Engine, reminded: int, due: int) -> float:
    """Store the users and the boards; return the seconds it took."""
    started = time.perf_counter()
    state = GAME.dump(GAME.new_game({"size": 11}, random.Random(0)))
    idle_since = NOW - timedelta(days=10)
    with engine.begin() as conn:
        password = hash_password("bench password")
        conn.execute(
            insert(User),
            [
                {
                    "userid": f"u{i}",
                    "display_id": f"u{i}",
                    "email": f"u{i}@bench.example",
                    "password_hash": password,
                    "created_at": idle_since,
                }
                for i in range(_USERS)
            ],
        )
        user_ids = list(conn.scalars(select(User.id).order_by(User.id)))
        total = reminded + due
        spacing = total // due if due else 0

        def is_due(n: int) -> bool:
            """The due boards are spread evenly among the reminded ones."""
            return bool(spacing) and n % spacing == 0 and n // spacing < due

        for first in range(0, total, _BATCH):
            numbers = range(first, min(total, first + _BATCH))
            rows = [
                {
                    "game": "chameleon",
                    "options": {"size": 11},
                    "seed": n,
                    "status": "active",
                    "ply": 0,
                    "to_move": "0",
                    "state": state,
                    "state_version": GAME.STATE_VERSION,
                    "version": 1,
                    "created_at": idle_since,
                    "updated_at": idle_since,
                    "reminded_at": None if is_due(n) else idle_since + timedelta(days=8),
                }
                for n in numbers
            ]
            ids = conn.scalars(insert(GameRow).returning(GameRow.id), rows).all()
            conn.execute(
                insert(Seat),
                [
                    {"game_id": g, "seat": s, "user_id": user_ids[(g + s) % _USERS]}
                    for g in ids
                    for s in (0, 1)
                ],
            )
    with engine.begin() as conn:
        conn.execute(text("ANALYZE"))
    return time.perf_counter() - started


class Statements:
    """Counts the SQL statements an engine runs."""

    def __init__(self, engine: Engine) -> None:
        self.count = 0
        event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, *args: object) -> None:
        self.count += 1


def old_pass_seconds(engine: Engine) -> tuple[float, int]:
    """What run_maintenance used to do each pass: read every active board idle past the
    shortest reminder limit and load its state (then skip it if already reminded)."""
    factory = session_factory(engine)
    started = time.perf_counter()
    with factory() as session, session.begin():
        rows = session.scalars(
            select(GameRow)
            .where(GameRow.status == "active", GameRow.updated_at < NOW - timedelta(days=7))
            .order_by(GameRow.id)
            .with_for_update(skip_locked=True)
        )
        loaded = sum(1 for row in rows if GAME.load(row.state) is not None)
        session.rollback()
    return time.perf_counter() - started, loaded


def run(url: str, reminded: int, due: int, old: bool) -> None:
    engine = make_engine(url)
    print(f"{engine.dialect.name}: {reminded} boards already reminded, {due} due")
    print(f"  filled in {fill(engine, reminded, due):.1f} s")
    factory = session_factory(engine)
    settings = Settings(confirm_addresses=False)
    statements = Statements(engine)

    chunk_seconds: list[float] = []
    real_transaction_clock = time.perf_counter

    @event.listens_for(engine, "begin")
    def _begin(conn: object) -> None:
        chunk_seconds.append(-real_transaction_clock())

    @event.listens_for(engine, "commit")
    def _commit(conn: object) -> None:
        chunk_seconds[-1] += real_transaction_clock()

    started = time.perf_counter()
    first = maintain(factory, settings, clock=lambda: NOW)
    took = time.perf_counter() - started
    with factory() as session:
        mails = session.scalar(select(func.count()).select_from(OutboxMessage))
    print(
        f"  first pass: {took:.2f} s, {len(first.reminded)} reminded, {mails} mails, "
        f"{len(chunk_seconds)} transactions of up to {MAINTENANCE_CHUNK} boards, "
        f"longest {max(chunk_seconds) * 1000:.0f} ms"
    )

    times = []
    before = statements.count
    for hour in range(1, 21):
        later = NOW + timedelta(hours=hour)
        started = time.perf_counter()
        report = maintain(factory, settings, clock=lambda later=later: later)
        times.append(time.perf_counter() - started)
        assert report.examined == 0, report
    print(
        f"  later passes (nothing due): median {statistics.median(times) * 1000:.1f} ms, "
        f"max {max(times) * 1000:.1f} ms, {(statements.count - before) / len(times):.0f} "
        "statements a pass"
    )
    if old:
        seconds, loaded = old_pass_seconds(engine)
        print(f"  the old pass for comparison: {seconds:.2f} s, {loaded} states loaded")
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="a postgresql+psycopg:// URL (default: SQLite in a tempdir)")
    parser.add_argument("--boards", type=int, default=40_000, help="already reminded boards")
    parser.add_argument("--due", type=int, default=1_000, help="boards due for a reminder")
    parser.add_argument("--no-old", action="store_true", help="skip the old pass")
    args = parser.parse_args()
    with workdir_for("pbmserv-maint-bench-") as workdir, scratch_database(args.db, workdir) as db:
        run(db.url, args.boards, args.due, not args.no_old)


if __name__ == "__main__":
    main()
