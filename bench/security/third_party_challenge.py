"""The third-party challenge attack of issue 48 (item 3), measured: what a board a player never
accepted costs them.

An attacker (carol) sends, from her own address and with no password, ``--boards`` challenges
with a 1-hour clock between her accomplice (alice, who moves on each at once) and a victim
(bob), then time runs for ``--days`` days with the clock sweep and the idle rule every six
hours, as ``pbmserv admin maintain`` would run them. Printed: the vacation days the victim
spent and the rated games he lost, with his Elo and Glicko-2 changes. Goal: 0 and 0.

Runs on a scratch SQLite database (or ``--db`` PostgreSQL), migrated as the server's.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import select  # noqa: E402

from bench.rig import scratch_database, workdir_for  # noqa: E402
from pbmserv.config import Settings  # noqa: E402
from pbmserv.core.context import CommandContext  # noqa: E402
from pbmserv.core.dispatch import dispatch_line  # noqa: E402
from pbmserv.core.maintenance import run_maintenance  # noqa: E402
from pbmserv.core.ratings import glicko2  # noqa: E402
from pbmserv.core.ratings import service as ratings  # noqa: E402
from pbmserv.core.timing.clock_sweep import sweep_clocks  # noqa: E402
from pbmserv.db.engine import make_engine, session_factory, transaction  # noqa: E402
from pbmserv.db.models import GameRow, Rating, RatingChange, User  # noqa: E402

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def attack(url: str, boards: int, days: int) -> dict[str, float]:
    """Run the attack; what it cost the victim."""
    factory = session_factory(make_engine(url))
    settings = Settings(confirm_addresses=False)

    def run(line: str, sender: str, when: datetime) -> bool:
        with transaction(factory) as session:
            ctx = CommandContext(session, settings, sender, clock=lambda: when)
            return dispatch_line(ctx, line).ok

    for userid, password, sender in (
        ("alice", "secret1", "alice@example.org"),
        ("bob", "hunter22", "bob@example.org"),
        ("carol", "pass3333", "carol@example.org"),
    ):
        assert run(f"signup {userid} {password}", sender, T0)
    for board in range(1, boards + 1):
        assert run("extinction challenge -clock=1h alice bob", "carol@example.org", T0)
        run(f"extinction move {board} alice secret1 e4", "alice@example.org", T0)
    for step in range(1, days * 4 + 1):
        when = T0 + timedelta(hours=6 * step)
        with transaction(factory) as session:
            ctx = CommandContext(session, settings, None, clock=lambda when=when: when)
            sweep_clocks(ctx)
            run_maintenance(ctx)
    with factory() as session:
        bob = session.scalars(select(User).where(User.userid == "bob")).one()
        rating = session.get(Rating, ("extinction", bob.id))
        lost = session.scalars(
            select(RatingChange).where(RatingChange.user_id == bob.id, RatingChange.score == 0)
        ).all()
        open_boards = session.scalars(select(GameRow.id).where(GameRow.status == "active")).all()
        return {
            "vacation_days": bob.vacation_days_used,
            "rated_losses": len(lost),
            "elo_change": (rating.rating - ratings.START) if rating else 0.0,
            "glicko_change": (rating.glicko - glicko2.START_RATING) if rating else 0.0,
            "boards_still_open": len(open_boards),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="a postgresql+psycopg:// URL (default: SQLite in a tempdir)")
    parser.add_argument("--boards", type=int, default=5, help="the attacker's boards")
    parser.add_argument("--days", type=int, default=40, help="days the clocks run")
    args = parser.parse_args()
    with workdir_for("pbmserv-consent-bench-") as workdir, scratch_database(args.db, workdir) as db:
        cost = attack(db.url, args.boards, args.days)
    print(
        f"{args.boards} third-party 1-hour boards, {args.days} days of sweeps and maintenance: "
        f"the victim spent {cost['vacation_days']:g} vacation days and lost "
        f"{cost['rated_losses']:g} rated games (Elo {cost['elo_change']:+.0f}, Glicko-2 "
        f"{cost['glicko_change']:+.0f}); boards still open: {cost['boards_still_open']:g} "
        "(goal: 0 days, 0 games)"
    )


if __name__ == "__main__":
    main()
