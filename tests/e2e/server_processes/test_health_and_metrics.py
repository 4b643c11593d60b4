"""The operator's side of a real `pbmserv serve` (issue 51): moves played by SMTP move
``/metrics``' counters by the amounts played (moves, messages, mail sent, as many as the spool
got), ``/healthz`` is 200 while every process reports, turns 503 naming the delivery child
when it is killed, and 200 again once `serve` has started it again. The real executable, the
real database, the web view as `serve`'s child."""

from __future__ import annotations

import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Engine

from tests.e2e.processes import seed_game, spool_messages
from tests.e2e.server_processes.test_child_processes import gone, roles
from tests.e2e.server_processes.test_web_process import serve, stop, wait_for_page
from tests.support import make_mail, smtp_send

pytestmark = pytest.mark.db

#: alice and Bob's moves on the seeded 5x5 Chameleon board 1, by turn.
MOVES = (
    ("alice@example.org", "chameleon move 1 alice secret1 a1x"),
    ("bob@example.org", "chameleon move 1 bob hunter22 e5o"),
    ("alice@example.org", "chameleon move 1 alice secret1 b2x"),
)


def get(port: int, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def health(port: int) -> tuple[int, dict[str, Any]]:
    status, body = get(port, "/healthz")
    return status, json.loads(body)


def scrape(port: int) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    status, body = get(port, "/metrics")
    assert status == 200
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def metric(
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def played(port: int) -> float:
    return metric(scrape(port), "pbmserv_moves_played_total", game="chameleon")


def until(check: Any, seconds: float, log_path: Path, every: float = 0.05) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"not within {seconds} s:\n{log_path.read_text()[-3000:]}")


def test_counters_move_by_the_moves_played_and_health_follows_the_delivery_child(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    seed_game(engine)
    server, smtp_port, web_port, spool, log_path = serve(db_url, tmp_path)
    try:
        wait_for_page(web_port, log_path)
        status, body = until(lambda: (h := health(web_port))[0] == 200 and h, 30, log_path)
        assert {p["role"] for p in body["processes"]} == {
            "listener",
            "processing",
            "delivery",
            "web",
        }
        before = scrape(web_port)
        mails_before = len(spool_messages(spool))
        moves = metric(before, "pbmserv_moves_played_total", game="chameleon")
        for sender, command in MOVES:
            assert smtp_send(smtp_port, make_mail(sender, command))[0] == 250
            moves += 1
            until(lambda wanted=moves: played(web_port) == wanted, 30, log_path)

        def delivered() -> dict[Any, float] | None:
            now = scrape(web_port)
            waiting = metric(now, "pbmserv_mails", status="queued") + metric(
                now, "pbmserv_mails", status="deferred"
            )
            return now if waiting == 0 and metric(now, "pbmserv_inbox_depth") == 0 else None

        after = until(delivered, 30, log_path)
        sent = len(spool_messages(spool)) - mails_before
        assert sent >= len(MOVES)  # each move mails the other player, at least

        def moved(name: str, **labels: str) -> float:
            return metric(after, name, **labels) - metric(before, name, **labels)

        assert moved("pbmserv_moves_played_total", game="chameleon") == len(MOVES)
        assert moved("pbmserv_messages_received_total") == len(MOVES)
        assert moved("pbmserv_messages_refused_total") == 0
        assert moved("pbmserv_mails", status="sent") == sent
        assert metric(after, "pbmserv_oldest_pending_mail_age_seconds") == 0
        assert metric(after, "pbmserv_database_up") == 1

        # The delivery child killed: 503 naming it, until `serve` has started another.
        _status, body = health(web_port)
        (delivery,) = [p for p in body["processes"] if p["role"] == "delivery"]
        assert delivery["pid"] == roles(server.pid, 3)["deliver"]
        os.kill(delivery["pid"], signal.SIGKILL)
        assert gone(delivery["pid"], 15)
        _status, failing = until(lambda: (h := health(web_port))[0] == 503 and h, 15, log_path)
        assert failing["failing"] == ["delivery"], failing
        assert any(p.startswith("delivery on ") for p in failing["problems"])
        _status, back = until(lambda: (h := health(web_port))[0] == 200 and h, 30, log_path)
        (again,) = [p for p in back["processes"] if p["role"] == "delivery"]
        assert again["pid"] != delivery["pid"] and again["restarts"] == 1
        samples = scrape(web_port)
        (labels,) = [
            dict(key[1])
            for key in samples
            if key[0] == "pbmserv_process_up" and dict(key[1])["role"] == "delivery"
        ]
        assert metric(samples, "pbmserv_process_up", **labels) == 1
        assert metric(samples, "pbmserv_process_restarts_total", **labels) == 1
    finally:
        stop(server)
    assert "Traceback" not in log_path.read_text()
