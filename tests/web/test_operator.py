"""The operator's side of the web view (issue 51): ``/healthz`` over the heartbeats `serve`
writes (runtime/heartbeats.py), on a real database; who may read it and ``/metrics``
(``web_metrics_from``: the host itself unless the setting opens it, 404 to anyone else); the
heartbeat writer over real child processes; the Caddyfile keeping ``/metrics`` off the public
name. The metrics themselves: test_operator_metrics.py."""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import Engine, select
from starlette.testclient import TestClient

from pbmserv.config import ConfigError, Settings, load_settings
from pbmserv.db.models import Heartbeat
from pbmserv.runtime.child_processes import Children
from pbmserv.runtime.heartbeats import (
    Heartbeats,
    Report,
    clear_reports,
    reports_of,
    role_of,
    write_reports,
)
from pbmserv.web.app import make_app
from tests.web.test_fuzz import check, queries, segments

pytestmark = pytest.mark.db

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
HOST = ("127.0.0.1", 50000)
SERVER = "mail1 127.0.0.1:2525"
EVERY = 5.0


@pytest.fixture
def site_settings(db_url: str) -> Settings:
    return Settings(confirm_addresses=False, db_url=db_url)


def client(settings_: Settings, address: str = "127.0.0.1") -> TestClient:
    app = make_app(settings_)
    return TestClient(app, client=(address, 50000), raise_server_exceptions=True)


@pytest.fixture
def operator(site_settings: Settings) -> Iterator[TestClient]:
    """The site as the host itself asks it."""
    with client(site_settings) as web:
        yield web


def report(role: str, state: str = "up", slot: int = 0, restarts: int = 0) -> Report:
    return Report(role, slot, 4000 + len(role) + slot, state, restarts)


ALL_UP = [report(role) for role in ("listener", "processing", "delivery", "robots", "web")]


def write(engine: Engine, reports: list[Report], ago: float = 0.0, server: str = SERVER) -> None:
    now = datetime.now(UTC) - timedelta(seconds=ago)
    write_reports(engine, server, reports, now, EVERY)


def rows(engine: Engine) -> list[tuple[str, str, int, str]]:
    with engine.connect() as conn:
        found = conn.execute(
            select(Heartbeat.server, Heartbeat.role, Heartbeat.slot, Heartbeat.state).order_by(
                Heartbeat.server, Heartbeat.role, Heartbeat.slot
            )
        )
        return [tuple(row) for row in found]  # type: ignore[misc]


# --- /healthz ----------------------------------------------------------------------------------


def test_no_server_has_reported_is_503_and_says_so(operator: TestClient) -> None:
    response = operator.get("/healthz")
    assert response.status_code == 503
    assert response.headers["content-type"] == "application/json"
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["status"] == "failing" and body["database"] == "ok"
    assert body["failing"] == ["serve"] and body["processes"] == []
    assert "no server has reported" in body["problems"][0]


def test_every_process_up_and_fresh_is_200(engine: Engine, operator: TestClient) -> None:
    write(engine, ALL_UP, ago=EVERY * 2)  # two intervals late: still within three
    response = operator.get("/healthz")
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["status"], body["failing"], body["problems"]) == ("ok", [], [])
    seen = {p["role"]: p for p in body["processes"]}
    assert set(seen) == {"listener", "processing", "delivery", "robots", "web"}
    assert seen["delivery"]["state"] == "up" and seen["delivery"]["stale"] is False
    assert seen["delivery"]["server"] == SERVER and seen["delivery"]["every_seconds"] == EVERY
    assert 9 < seen["delivery"]["seen_seconds_ago"] < 60


def test_a_stale_report_is_503_naming_the_process_and_its_age(
    engine: Engine, operator: TestClient
) -> None:
    write(engine, ALL_UP)
    write(engine, [report("robots")], ago=EVERY * 3 + 5)
    response = operator.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["failing"] == ["robots"]
    (problem,) = body["problems"]
    assert problem.startswith(f"robots on {SERVER}: last reported 2") and "every 5 s" in problem
    stale = [p["role"] for p in body["processes"] if p["stale"]]
    assert stale == ["robots"]


def test_a_child_restarting_is_503_naming_it_and_200_once_it_is_back(
    engine: Engine, operator: TestClient
) -> None:
    write(engine, ALL_UP)
    write(engine, [report("delivery", "restarting")])
    body = operator.get("/healthz").json()
    assert body["failing"] == ["delivery"]
    assert body["problems"] == [f"delivery on {SERVER}: restarting"]
    write(engine, [report("delivery", restarts=1)])
    response = operator.get("/healthz")
    assert response.status_code == 200
    assert {p["role"]: p["restarts"] for p in response.json()["processes"]}["delivery"] == 1


def test_each_server_answers_for_its_own_processes(engine: Engine, operator: TestClient) -> None:
    write(engine, ALL_UP)
    write(engine, [report("listener"), report("delivery")], server="mail2 127.0.0.1:2525")
    assert operator.get("/healthz").status_code == 200
    write(engine, [report("listener")], server="mail2 127.0.0.1:2525", ago=60)
    body = operator.get("/healthz").json()
    assert body["failing"] == ["listener"]
    assert body["problems"][0].startswith("listener on mail2 127.0.0.1:2525: last reported")


def test_a_database_that_does_not_answer_is_503(site_settings: Settings, tmp_path: Path) -> None:
    gone = replace(site_settings, db_url=f"sqlite:///{tmp_path / 'nowhere' / 'x.db'}")
    with client(gone) as web:
        response = web.get("/healthz")
        assert response.status_code == 503
        assert response.json()["database"] == "unreachable"
        assert response.json()["failing"] == ["database"]
        scraped = web.get("/metrics")
        assert scraped.status_code == 200
        assert "pbmserv_database_up 0.0" in scraped.text


# --- who may ask -------------------------------------------------------------------------------


@pytest.mark.parametrize("address", ["203.0.113.9", "testclient", "10.0.0.1", "::2"])
def test_other_clients_get_the_sites_404(site_settings: Settings, address: str) -> None:
    with client(site_settings, address) as web:
        for path in ("/healthz", "/metrics"):
            response = web.get(path)
            assert response.status_code == 404, (address, path)
            assert response.headers["content-type"].startswith("text/html")
            assert "pbmserv_" not in response.text and "processes" not in response.text


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "::ffff:127.0.0.1"])
def test_the_host_itself_may_ask_by_default(site_settings: Settings, address: str) -> None:
    with client(site_settings, address) as web:
        assert web.get("/metrics").status_code == 200
        assert web.get("/healthz").status_code == 503  # no server reported: but answered


def test_the_setting_opens_them_to_a_network_and_empty_closes_them(
    site_settings: Settings,
) -> None:
    opened = replace(site_settings, web_metrics_from="127.0.0.1, 203.0.113.0/24")
    with client(opened, "203.0.113.9") as web:
        assert web.get("/metrics").status_code == 200
    with client(opened, "198.51.100.1") as web:
        assert web.get("/metrics").status_code == 404
    with client(replace(site_settings, web_metrics_from=""), "127.0.0.1") as web:
        assert web.get("/metrics").status_code == 404
        assert web.get("/healthz").status_code == 404


def test_the_setting_is_read_from_the_environment_and_checked() -> None:
    loaded = load_settings(environ={"PBMSERV_WEB_METRICS_FROM": "10.0.0.0/8, ::1"})
    assert [str(n) for n in loaded.web_metrics_networks] == ["10.0.0.0/8", "::1/128"]
    assert load_settings(environ={"PBMSERV_WEB_METRICS_FROM": ""}).web_metrics_networks == ()
    assert [str(n) for n in Settings().web_metrics_networks] == ["127.0.0.1/32", "::1/128"]
    with pytest.raises(ConfigError, match="web_metrics_from"):
        load_settings(environ={"PBMSERV_WEB_METRICS_FROM": "localhost"})


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    prefix=st.sampled_from(["healthz", "metrics"]),
    rest=st.lists(segments, max_size=2),
    query=queries,
)
def test_any_address_under_them_is_a_page_or_a_plain_4xx(
    engine: Engine, operator: TestClient, prefix: str, rest: list[str], query: dict[str, str]
) -> None:
    from urllib.parse import urlencode

    write(engine, ALL_UP)  # healthy: a 5xx would be the site's failure, not the server's
    path = "/".join([prefix, *rest])
    check(operator, f"/{path}?{urlencode(query)}" if query else f"/{path}")


# --- the heartbeat writer ------------------------------------------------------------------------


def test_role_names() -> None:
    assert role_of({"receive"}) == "listener"
    assert role_of({"deliver", "process"}) == "processing+delivery"
    assert role_of({"deliver", "process", "receive"}) == "listener+processing+delivery"
    assert role_of({"web"}) == "web" and role_of({"robots"}) == "robots"


def test_a_first_write_replaces_the_servers_old_rows_and_a_clean_stop_clears_them(
    engine: Engine,
) -> None:
    write(engine, [report("listener"), report("robots")])
    write(engine, [report("listener")], server="other 127.0.0.1:2526")
    # The server starts again without robots: its robots row goes, the other server's stays.
    now = datetime.now(UTC)
    write_reports(engine, SERVER, [report("listener")], now, EVERY, replace_all=True)
    assert rows(engine) == [
        (SERVER, "listener", 0, "up"),
        ("other 127.0.0.1:2526", "listener", 0, "up"),
    ]
    clear_reports(engine, SERVER)
    assert rows(engine) == [("other 127.0.0.1:2526", "listener", 0, "up")]


@pytest.fixture
def sleepers() -> Iterator[Children]:
    """Two real child processes (``sleep``) as `serve` starts its delivery children."""
    group = Children(frozenset({"deliver"}), 2, [shutil.which("sleep") or "sleep", "60"])
    group.start()
    yield group
    for process in group.signal_stop():
        process.wait(10)
    group.close()


def test_the_parent_reports_itself_and_each_child_as_it_sees_them(sleepers: Children) -> None:
    reports = reports_of({"receive"}, [sleepers])
    assert [(r.role, r.slot, r.state) for r in reports] == [
        ("listener", 0, "up"),
        ("delivery", 0, "up"),
        ("delivery", 1, "up"),
    ]
    entry = sleepers.processes[1]
    assert entry is not None and reports[2].pid == entry[0].pid
    entry[0].send_signal(signal.SIGKILL)
    entry[0].wait(10)
    assert [r.state for r in reports_of({"receive"}, [sleepers])] == ["up", "up", "restarting"]


def test_the_heartbeat_writes_at_once_when_a_child_dies_and_when_it_is_back(
    engine: Engine, sleepers: Children
) -> None:
    beats = Heartbeats(engine, SERVER, {"receive"}, [sleepers], every=60.0)
    restarted: list[tuple[str, int, int]] = []

    async def scenario() -> list[list[tuple[str, str, int, str]]]:
        stopping = asyncio.Event()
        supervising = asyncio.create_task(sleepers.supervise(stopping))
        beating = asyncio.create_task(beats.run(stopping))
        seen = [await _rows_when(engine, lambda r: len(r) == 3)]
        entry = sleepers.processes[0]
        assert entry is not None
        entry[0].send_signal(signal.SIGKILL)
        # Written before the next interval (60 s): the parent saw it die.
        seen.append(await _rows_when(engine, lambda r: "restarting" in [x[3] for x in r]))
        seen.append(await _rows_when(engine, lambda r: [x[3] for x in r] == ["up"] * 3))
        restarted.extend(await asyncio.to_thread(_restarts, engine))
        stopping.set()
        await asyncio.gather(supervising, beating)
        seen.append(rows(engine))
        return seen

    first, dead, _back, stopped = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert first == [
        (SERVER, "delivery", 0, "up"),
        (SERVER, "delivery", 1, "up"),
        (SERVER, "listener", 0, "up"),
    ]
    assert (SERVER, "delivery", 0, "restarting") in dead
    assert sleepers.restarts == [1, 0]
    assert restarted == [("delivery", 0, 1), ("delivery", 1, 0), ("listener", 0, 0)]
    assert stopped == []  # a clean stop leaves nothing behind


def _restarts(engine: Engine) -> list[tuple[str, int, int]]:
    with engine.connect() as conn:
        found = conn.execute(
            select(Heartbeat.role, Heartbeat.slot, Heartbeat.restarts).order_by(
                Heartbeat.role, Heartbeat.slot
            )
        )
        return [tuple(row) for row in found]  # type: ignore[misc]


async def _rows_when(engine: Engine, wanted, seconds: float = 20.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = await asyncio.to_thread(rows, engine)
        if wanted(found):
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"not seen in {seconds} s: {rows(engine)}")


# --- the deployment kit ----------------------------------------------------------------------


def test_the_caddyfile_keeps_metrics_off_the_public_name() -> None:
    code = [
        line.strip()
        for line in (DEPLOY / "Caddyfile").read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]
    refusal = code.index("error /metrics* 404")
    assert refusal < next(i for i, line in enumerate(code) if line.startswith("reverse_proxy"))


@pytest.mark.skipif(shutil.which("caddy") is None, reason="caddy is not installed")
def test_caddy_reads_the_refusal_before_the_proxy(tmp_path: Path) -> None:
    from tests.deploy.test_web_deploy import caddy_json, handlers

    shutil.copy(DEPLOY / "Caddyfile", tmp_path / "Caddyfile")
    found = list(handlers(caddy_json(tmp_path / "Caddyfile")))
    kinds = [h["handler"] for h in found if h["handler"] in ("error", "reverse_proxy")]
    assert kinds == ["error", "reverse_proxy"]
    (refusal,) = [h for h in found if h["handler"] == "error"]
    assert refusal["status_code"] == 404 and refusal["_match"] == [{"path": ["/metrics*"]}]


def test_the_example_config_names_the_setting_as_its_default() -> None:
    example = load_settings(environ={}, config_file=DEPLOY / "pbmserv.toml")
    assert example.web_metrics_from == Settings().web_metrics_from


def test_the_alert_rules_and_the_scrape_name_what_the_site_exposes(operator: TestClient) -> None:
    scraped = operator.get("/metrics").text
    exposed = set(re.findall(r"^# TYPE (\w+) ", scraped, re.M))
    exposed |= {f"{name}_total" for name in exposed}
    rules = (DEPLOY / "prometheus" / "alerts.yml").read_text()
    alerts = re.findall(r"^\s+- alert: (\w+)$", rules, re.M)
    assert alerts == ["PbmservMailWaiting", "PbmservProcessDown", "PbmservBouncesRising"]
    named = set(re.findall(r"\b(pbmserv_\w+)", rules))
    assert named and named <= exposed, named - exposed
    assert "pbmserv_oldest_pending_mail_age_seconds > 1800" in rules  # 30 minutes
    scrape = (DEPLOY / "prometheus" / "prometheus.yml").read_text()
    assert f'targets: ["{Settings().web_listen}"]' in scrape
    assert "metrics_path: /metrics" in scrape and "pbmserv-alerts.yml" in scrape
    guide = (DEPLOY / "OPERATIONS.md").read_text()
    for alert in alerts:
        assert f"`{alert}`" in guide
    assert "web_metrics_from" in guide and "PBMSERV_WEB_METRICS_FROM" in guide
