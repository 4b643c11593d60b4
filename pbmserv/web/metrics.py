"""The operator's metrics (``/metrics``, views/operator.py), with prometheus_client.

Two kinds, one registry a site:

- **This process's**: the web view's requests by route (the route's template, ``/g/{board}``,
  never the address asked: a private link's token is never a label) and their latency,
  counted by :class:`Measured` around the whole app.
- **The others', from the database at scrape time** (:class:`DatabaseCollector`): what
  `serve`'s listener, processing, delivery and robots did is in the tables they write, so
  each scrape reads it there, in one read-only snapshot (no prometheus_client multi-process
  mode, no file shared between processes): the inbox by status, the outbox (queued, deferred,
  sent, failed) and the age of its oldest waiting mail, bounces, moves played per game, the
  robots' reply times, and each process's heartbeat (runtime/heartbeats.py).

Every query reads an index or a small table (boards, addresses, heartbeats), never the mail's
bytes; the robots' reply times are read incrementally (the new robot moves since the last
scrape). The database not answering is ``pbmserv_database_up 0``, not an error.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from sqlalchemy import Select, case, func, select, text
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, aliased, sessionmaker
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pbmserv.db.models import (
    FAILED_OUTBOX,
    PENDING_OUTBOX,
    SENT_OUTBOX,
    Address,
    GameRow,
    Heartbeat,
    InboxMessage,
    MoveRow,
    OutboxMessage,
    Seat,
    User,
)
from pbmserv.db.times import as_utc, utcnow
from pbmserv.web.database import reading

log = logging.getLogger("pbmserv.web")

#: The inbox's statuses (runtime/handling.py); "refused" counts those never answered.
INBOX_STATUSES = ("pending", "held", "done", "ignored", "failed")
REFUSED = ("ignored", "failed")
#: A heartbeat older than this many of its intervals is stale (as /healthz says).
STALE_INTERVALS = 3
#: The robots' reply times, in seconds (a robot thinks seconds; a queue may hold it minutes).
ROBOT_BUCKETS = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
#: A robot move older than this is no longer looked for again (a transaction that wrote one
#: with a lower id commits long before: PostgreSQL's ids may commit out of order).
SETTLED_SECONDS = 300.0
#: Robot moves read a scrape at most (the first scrape of a large database catches up).
ROBOT_MOVES_A_SCRAPE = 20_000
#: The pages' latency, in seconds.
REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
UNMATCHED = "(none)"


class Metrics:
    """A site's registry: its own requests (:attr:`requests`, :attr:`latency`) and the
    database's collector."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "pbmserv_web_requests",
            "Requests the web view answered, by route, method and status.",
            ["route", "method", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "pbmserv_web_request_seconds",
            "How long the web view took to answer, by route.",
            ["route"],
            buckets=REQUEST_BUCKETS,
            registry=self.registry,
        )
        self.database = DatabaseCollector(sessions)
        self.registry.register(self.database)


class Answered:
    """The status an app answered one request with (0: none yet, the client left before)."""

    def __init__(self) -> None:
        self.status = 0

    async def call(self, app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
        """Run ``app`` on the request, noting its status (500 when it raised before one)."""

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.status = int(message["status"])
            await send(message)

        try:
            await app(scope, receive, sending)
        except Exception:
            self.status = self.status or 500  # what the server answers for the app
            raise


class Measured:
    """ASGI middleware: each HTTP request counted and timed under its route's template (read
    from the scope once the router has matched it)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        seen = Answered()
        try:
            await seen.call(self.app, scope, receive, send)
        finally:
            route = getattr(scope.get("route"), "path", None) or UNMATCHED
            method = scope.get("method", "")
            self.metrics.requests.labels(
                route, method if method in ("GET", "HEAD") else "other", str(seen.status or "none")
            ).inc()
            self.metrics.latency.labels(route).observe(time.perf_counter() - started)


class DatabaseCollector(Collector):
    """What the other processes did, read from the database at each scrape."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self.sessions = sessions
        self.robots = RobotReplies()

    def describe(self) -> Iterable[Metric]:
        return []  # nothing read when registered

    def collect(self) -> Iterable[Metric]:
        now = utcnow()
        try:
            with reading(self.sessions) as session:
                families = list(self.families(session, now))
        except SQLAlchemyError as error:
            log.warning("metrics: the database did not answer (%s)", error.__class__.__name__)
            families = []
        yield GaugeMetricFamily(
            "pbmserv_database_up", "1: the database answered this scrape.", value=bool(families)
        )
        yield from families

    def families(self, session: Session, now: datetime) -> Iterator[Metric]:
        yield from _inbox(session)
        yield from _outbox(session, now)
        yield from _bounces(session, now)
        yield from _boards(session)
        yield self.robots.family(session, now)
        yield from heartbeat_families(session.scalars(select(Heartbeat)).all(), now)


def _inbox(session: Session) -> Iterator[Metric]:
    # GROUP BY status reads the index (status, id) alone, not the messages.
    counts = dict(
        session.execute(
            select(InboxMessage.status, func.count()).group_by(InboxMessage.status)
        ).all()
    )
    by_status = GaugeMetricFamily(
        "pbmserv_inbox_messages", "Messages in the inbox by status.", labels=["status"]
    )
    for status in sorted({*INBOX_STATUSES, *counts}):
        by_status.add_metric([status], counts.get(status, 0))
    yield by_status
    yield CounterMetricFamily(
        "pbmserv_messages_received",
        "Messages received and stored (by SMTP, the mailbox or the MTA's pipe).",
        value=sum(counts.values()),
    )
    yield CounterMetricFamily(
        "pbmserv_messages_refused",
        "Messages stored but never answered (ignored: automatic mail, DMARC failures, held "
        "too long; failed: their processing failed for good).",
        value=sum(counts.get(status, 0) for status in REFUSED),
    )
    yield GaugeMetricFamily(
        "pbmserv_inbox_depth", "Messages waiting to be processed.", value=counts.get("pending", 0)
    )


def _outbox_where(condition: str) -> Select[Any]:
    # The very text of each partial index's condition, so that the count reads the index.
    return select(func.count()).select_from(OutboxMessage).where(text(condition))


def _outbox(session: Session, now: datetime) -> Iterator[Metric]:
    waiting, deferred, oldest = session.execute(
        select(
            func.count(),
            func.coalesce(func.sum(case((OutboxMessage.attempts > 0, 1), else_=0)), 0),
            func.min(OutboxMessage.created_at),
        ).where(text(PENDING_OUTBOX))
    ).one()
    sent = session.scalar(_outbox_where(SENT_OUTBOX)) or 0
    failed = session.scalar(_outbox_where(FAILED_OUTBOX)) or 0
    mails = GaugeMetricFamily(
        "pbmserv_mails",
        "Outgoing mail by state: queued (not tried yet), deferred (tried, to be tried again), "
        "sent (kept for sent_retention_days), failed (given up, or refused for good).",
        labels=["status"],
    )
    for status, count in (
        ("queued", waiting - deferred),
        ("deferred", deferred),
        ("sent", sent),
        ("failed", failed),
    ):
        mails.add_metric([status], count)
    yield mails
    age = max(0.0, (now - as_utc(oldest)).total_seconds()) if oldest is not None else 0.0
    yield GaugeMetricFamily(
        "pbmserv_oldest_pending_mail_age_seconds",
        "How long the oldest mail waiting to leave has waited (0: none waits).",
        value=age,
    )


def _bounces(session: Session, now: datetime) -> Iterator[Metric]:
    bouncing, lately, hard = session.execute(
        select(
            func.count(Address.bouncing_since),
            func.coalesce(
                func.sum(case((Address.last_bounce_at >= now - timedelta(hours=1), 1), else_=0)), 0
            ),
            func.coalesce(func.sum(Address.hard_bounces), 0),
        )
    ).one()
    yield GaugeMetricFamily(
        "pbmserv_addresses_bouncing",
        "Addresses marked bouncing (bounce_limit hard bounces): no mail goes to them.",
        value=bouncing,
    )
    yield GaugeMetricFamily(
        "pbmserv_addresses_bounced_last_hour",
        "Addresses a delivery report (a bounce) came back for in the last hour.",
        value=lately,
    )
    yield GaugeMetricFamily(
        "pbmserv_hard_bounces",
        "Hard bounces counted against addresses now (an address's count ends when mail comes "
        "from it).",
        value=hard,
    )


def _boards(session: Session) -> Iterator[Metric]:
    rows = session.execute(
        select(GameRow.game, GameRow.status, func.count(), func.coalesce(func.sum(GameRow.ply), 0))
        .group_by(GameRow.game, GameRow.status)
        .order_by(GameRow.game, GameRow.status)
    ).all()
    boards = GaugeMetricFamily(
        "pbmserv_boards", "Boards by game and status.", labels=["game", "status"]
    )
    moves = CounterMetricFamily(
        "pbmserv_moves_played",
        "Moves played, by game (each board's moves now on it: a move taken back by the "
        "operator is taken off).",
        labels=["game"],
    )
    played: dict[str, int] = {}
    for game, status, count, plies in rows:
        boards.add_metric([game, status], count)
        played[game] = played.get(game, 0) + int(plies)
    for game, count in played.items():
        moves.add_metric([game], count)
    yield boards
    yield moves


class RobotReplies:
    """The robots' reply times (from the move before to the robot's move, as the moves table
    keeps them: the thinking and any wait for a turn; the CPU a move took is not kept in the
    database), a cumulative histogram read incrementally."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.settled = 0  # every robot move with a lower id is counted
        self.counted: set[int] = set()  # those above it counted already
        self.buckets = [0] * (len(ROBOT_BUCKETS) + 1)
        self.total = 0.0

    def family(self, session: Session, now: datetime) -> Metric:
        with self.lock:
            self._read(session, now)
            cumulative, running = [], 0
            for bound, count in zip((*ROBOT_BUCKETS, float("inf")), self.buckets, strict=True):
                running += count
                cumulative.append((_bound(bound), running))
            return HistogramMetricFamily(
                "pbmserv_robot_reply_seconds",
                "How long the robots took to answer a move: from the move before to theirs "
                "(thinking, and waiting for their turn to think), from the moves table.",
                buckets=cumulative,
                sum_value=self.total,
            )

    def _read(self, session: Session, now: datetime) -> None:
        before = aliased(MoveRow)
        previous = (
            select(func.max(before.created_at))
            .where(before.game_id == MoveRow.game_id, before.ply == MoveRow.ply - 1)
            .scalar_subquery()
        )
        rows = session.execute(
            select(MoveRow.id, MoveRow.created_at, previous)
            .join(Seat, (Seat.game_id == MoveRow.game_id) & (Seat.seat == MoveRow.seat))
            .join(User, User.id == Seat.user_id)
            .where(
                User.robot_level.is_not(None),
                MoveRow.kind == "move",
                MoveRow.id > self.settled,
            )
            .order_by(MoveRow.id)
            .limit(ROBOT_MOVES_A_SCRAPE)
        ).all()
        settling = True
        for move_id, made, answered in rows:
            made = as_utc(made)
            if move_id not in self.counted:
                self.counted.add(move_id)
                if answered is not None:
                    self._observe(max(0.0, (made - as_utc(answered)).total_seconds()))
            settling = settling and (now - made).total_seconds() > SETTLED_SECONDS
            if settling:
                self.settled = move_id
        self.counted = {move_id for move_id in self.counted if move_id > self.settled}

    def _observe(self, seconds: float) -> None:
        self.total += seconds
        for index, bound in enumerate(ROBOT_BUCKETS):
            if seconds <= bound:
                self.buckets[index] += 1
                return
        self.buckets[-1] += 1


def _bound(bound: float) -> str:
    return "+Inf" if bound == float("inf") else repr(bound)


def heartbeat_families(rows: Sequence[Heartbeat], now: datetime) -> Iterator[Metric]:
    """Each reported process: up (and its report fresh) or not, its restarts, its report's
    age."""
    labels = ["server", "role", "slot"]
    up = GaugeMetricFamily(
        "pbmserv_process_up",
        "1: the process runs, as its `serve` reported within three of its intervals.",
        labels=labels,
    )
    restarts = CounterMetricFamily(
        "pbmserv_process_restarts",
        "How often `serve` started the process again since it started itself.",
        labels=labels,
    )
    age = GaugeMetricFamily(
        "pbmserv_process_report_age_seconds",
        "How old the last report on the process is.",
        labels=labels,
    )
    for row in rows:
        named = [row.server, row.role, str(row.slot)]
        seconds = max(0.0, (now - as_utc(row.seen_at)).total_seconds())
        fresh = seconds <= row.every_seconds * STALE_INTERVALS
        up.add_metric(named, 1 if fresh and row.state == "up" else 0)
        restarts.add_metric(named, row.restarts)
        age.add_metric(named, seconds)
    yield up
    yield restarts
    yield age
