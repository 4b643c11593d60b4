"""``/metrics`` (issue 51) on a real database: Prometheus text made by prometheus_client,
read back with its parser, each value equal to what the tables hold (the inbox, the outbox,
the addresses' bounces, the boards' moves, the robots' replies, the heartbeats), and the web
view's own requests counted by route template, never by the address asked."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine, func, insert, select
from starlette.testclient import TestClient

from pbmserv.config import Settings
from pbmserv.db.models import (
    Address,
    GameRow,
    InboxMessage,
    MoveRow,
    OutboxMessage,
    Seat,
    User,
    table_of,
)
from pbmserv.runtime.heartbeats import Report, write_reports
from pbmserv.web.app import make_app
from pbmserv.web.metrics import ROBOT_BUCKETS
from tests.core.client import Client
from tests.web.pages_fixtures import (  # noqa: F401 (fixtures)
    CHAMELEON_MOVES,
    chameleon_board,
    link_of,
    people_fixture,
)

pytestmark = pytest.mark.db

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


@pytest.fixture
def operator(db_url: str) -> Iterator[TestClient]:
    app = make_app(Settings(confirm_addresses=False, db_url=db_url))
    with TestClient(app, client=("127.0.0.1", 50000), follow_redirects=False) as web:
        yield web


def scrape(web: TestClient) -> Samples:
    response = web.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    assert response.headers["cache-control"] == "no-store"
    found: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, frozenset(labels.items()))]


def now() -> datetime:
    return datetime.now(UTC)


def add(engine: Engine, model: Any, rows: list[dict[str, Any]]) -> None:
    with engine.begin() as conn:
        conn.execute(insert(table_of(model)), rows)


def test_the_mail_counts_are_the_tables(engine: Engine, operator: TestClient) -> None:
    at = now()
    statuses = ["pending", "pending", "done", "done", "done", "ignored", "failed", "held"]
    add(
        engine,
        InboxMessage,
        [
            {"dedupe_key": f"k{i}", "raw": b"x" * 5000, "received_at": at, "status": status}
            for i, status in enumerate(statuses)
        ],
    )
    outbox = [
        ("pending", 0, 10),
        ("pending", 0, 1),
        ("pending", 2, 40),  # tried twice: deferred, and the oldest waiting (40 minutes)
        ("sent", 1, 90),
        ("sent", 1, 80),
        ("sent", 1, 70),
        ("failed", 5, 300),
    ]
    add(
        engine,
        OutboxMessage,
        [
            {
                "message_id": f"<m{i}@x>",
                "recipient": "a@example.org",
                "kind": "reply",
                "raw": b"y" * 5000,
                "status": status,
                "attempts": attempts,
                "next_attempt_at": at,
                "created_at": at - timedelta(minutes=minutes),
            }
            for i, (status, attempts, minutes) in enumerate(outbox)
        ],
    )
    add(
        engine,
        Address,
        [
            {
                "address": "gone@example.org",
                "created_at": at,
                "hard_bounces": 3,
                "bouncing_since": at - timedelta(hours=2),
                "last_bounce_at": at - timedelta(hours=2),
            },
            {
                "address": "full@example.org",
                "created_at": at,
                "hard_bounces": 1,
                "bouncing_since": None,
                "last_bounce_at": at - timedelta(minutes=10),
            },
            {
                "address": "fine@example.org",
                "created_at": at,
                "hard_bounces": 0,
                "bouncing_since": None,
                "last_bounce_at": None,
            },
        ],
    )
    samples = scrape(operator)
    assert value(samples, "pbmserv_database_up") == 1
    for status in ("pending", "done", "ignored", "failed", "held"):
        assert value(samples, "pbmserv_inbox_messages", status=status) == statuses.count(status)
    assert value(samples, "pbmserv_messages_received_total") == len(statuses)
    assert value(samples, "pbmserv_messages_refused_total") == 2  # ignored and failed
    assert value(samples, "pbmserv_inbox_depth") == 2
    assert value(samples, "pbmserv_mails", status="queued") == 2
    assert value(samples, "pbmserv_mails", status="deferred") == 1
    assert value(samples, "pbmserv_mails", status="sent") == 3
    assert value(samples, "pbmserv_mails", status="failed") == 1
    age = value(samples, "pbmserv_oldest_pending_mail_age_seconds")
    assert 40 * 60 <= age < 42 * 60
    with engine.connect() as conn:
        bouncing = conn.scalar(select(func.count()).where(Address.bouncing_since.is_not(None)))
        hard = conn.scalar(select(func.sum(Address.hard_bounces)))
    assert value(samples, "pbmserv_addresses_bouncing") == bouncing == 1
    assert value(samples, "pbmserv_addresses_bounced_last_hour") == 1
    assert value(samples, "pbmserv_hard_bounces") == hard == 4

    with engine.begin() as conn:  # the mail leaves
        conn.execute(table_of(OutboxMessage).update().values(status="sent"))
    samples = scrape(operator)
    assert value(samples, "pbmserv_mails", status="sent") == len(outbox)
    assert value(samples, "pbmserv_oldest_pending_mail_age_seconds") == 0


def test_moves_played_per_game_are_the_moves_on_the_boards(
    engine: Engine, people: Client, operator: TestClient
) -> None:
    assert value(scrape(operator), "pbmserv_database_up") == 1
    chameleon_board(people)
    chameleon_board(people, CHAMELEON_MOVES[:2])
    with engine.connect() as conn:
        stored = dict(
            conn.execute(
                select(GameRow.game, func.count())
                .join(MoveRow, MoveRow.game_id == GameRow.id)
                .where(MoveRow.kind == "move")
                .group_by(GameRow.game)
            ).all()
        )
    assert stored == {"chameleon": len(CHAMELEON_MOVES) + 2}
    samples = scrape(operator)
    assert value(samples, "pbmserv_moves_played_total", game="chameleon") == stored["chameleon"]
    assert value(samples, "pbmserv_boards", game="chameleon", status="active") == 2


def robot_board(engine: Engine, people: Client) -> tuple[int, int, int]:
    """A board of alice (seat 0) against robot1 (seat 1), with no moves: (board, alice, robot)."""
    chameleon_board(people, ())
    with engine.begin() as conn:
        robot = conn.scalar(select(User.id).where(User.userid == "robot1"))
        alice = conn.scalar(select(User.id).where(User.userid == "alice"))
        board = conn.scalar(select(func.max(GameRow.id)))
        conn.execute(
            table_of(Seat)
            .update()
            .where(Seat.game_id == board, Seat.seat == 1)
            .values(user_id=robot)
        )
    return board, alice, robot


def moves(engine: Engine, board: int, entries: list[tuple[int, int, int, datetime]]) -> None:
    """Moves (id, ply, seat, when) on ``board``."""
    add(
        engine,
        MoveRow,
        [
            {"id": i, "game_id": board, "ply": ply, "seat": seat, "kind": "move", "text": "a1x"}
            | {"created_at": when}
            for i, ply, seat, when in entries
        ],
    )


def buckets(samples: Samples) -> dict[str, float]:
    return {
        dict(labels)["le"]: count
        for (name, labels), count in samples.items()
        if name == "pbmserv_robot_reply_seconds_bucket"
    }


def robot_samples(samples: Samples) -> Samples:
    return {k: v for k, v in samples.items() if k[0].startswith("pbmserv_robot_reply_seconds")}


def test_the_robots_reply_times_are_read_once_each_from_the_moves(
    engine: Engine, people: Client, operator: TestClient
) -> None:
    board, _alice, _robot = robot_board(engine, people)
    old, recent = now() - timedelta(hours=2), now() - timedelta(seconds=60)
    moves(
        engine,
        board,
        [
            (100, 0, 0, old),
            (101, 1, 1, old + timedelta(seconds=3)),  # 3 s: the robot's first answer
            (102, 2, 0, recent),
            (200, 3, 1, recent + timedelta(seconds=40)),  # 40 s
        ],
    )
    samples = scrape(operator)
    assert value(samples, "pbmserv_robot_reply_seconds_count") == 2
    assert value(samples, "pbmserv_robot_reply_seconds_sum") == pytest.approx(43)
    counts = buckets(samples)
    assert counts["2.0"] == 0 and counts["5.0"] == 1 and counts["30.0"] == 1
    assert counts["60.0"] == 2 and counts["+Inf"] == 2
    assert len(counts) == len(ROBOT_BUCKETS) + 1
    assert robot_samples(scrape(operator)) == robot_samples(samples), "nothing counted twice"

    # A robot move committed late with a lower id than one counted already (PostgreSQL's ids
    # may commit out of order) is still counted, once.
    moves(engine, board, [(150, 3, 0, recent + timedelta(seconds=41))])
    moves(engine, board, [(199, 4, 1, recent + timedelta(seconds=42))])
    samples = scrape(operator)
    assert value(samples, "pbmserv_robot_reply_seconds_count") == 3
    assert value(samples, "pbmserv_robot_reply_seconds_count") == value(
        scrape(operator), "pbmserv_robot_reply_seconds_count"
    )


def test_the_sites_requests_are_counted_by_route_template(
    engine: Engine, people: Client, operator: TestClient
) -> None:
    board = chameleon_board(people)
    token = link_of(engine, board, "alice", 0)
    for path in (f"/g/{board}", f"/g/{board}", f"/g/{board}/2.svg", f"/p/{token}", "/nowhere"):
        operator.get(path)
    operator.post("/")
    response = operator.get("/metrics")
    assert token not in response.text
    samples = scrape(operator)

    def requests(route: str, status: str, method: str = "GET") -> float:
        return value(
            samples, "pbmserv_web_requests_total", route=route, method=method, status=status
        )

    assert requests("/g/{board}", "200") == 2
    assert requests("/g/{board}/{position}", "200") == 1
    assert requests("/p/{token}", "200") == 1
    assert requests("(none)", "404") == 1
    assert requests("/", "405", method="other") == 1
    assert requests("/metrics", "200") == 1  # the scrape before this one
    assert value(samples, "pbmserv_web_request_seconds_count", route="/g/{board}") == 2
    assert value(samples, "pbmserv_web_request_seconds_bucket", route="/g/{board}", le="+Inf") == 2


def test_each_process_reported_is_up_or_down(engine: Engine, operator: TestClient) -> None:
    at = now()
    server = "mail1 127.0.0.1:2525"
    write_reports(
        engine,
        server,
        [Report("listener", 0, 10, "up", 0), Report("delivery", 0, 11, "restarting", 2)],
        at,
        5.0,
    )
    write_reports(
        engine, server, [Report("robots", 0, 12, "up", 0)], at - timedelta(seconds=60), 5.0
    )
    samples = scrape(operator)
    for role, up in (("listener", 1), ("delivery", 0), ("robots", 0)):
        labels = {"server": server, "role": role, "slot": "0"}
        assert value(samples, "pbmserv_process_up", **labels) == up, role
    labels = {"server": server, "role": "delivery", "slot": "0"}
    assert value(samples, "pbmserv_process_restarts_total", **labels) == 2
    assert value(samples, "pbmserv_process_report_age_seconds", **labels) < 30
