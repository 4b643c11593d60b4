"""The operator's two addresses: ``/healthz`` (is it healthy? JSON, 200 or 503) and
``/metrics`` (Prometheus text, web/metrics.py). Both answer only the clients
``web_metrics_from`` names (the host itself by default): anyone else gets the site's 404, as
for an address that does not exist.

``/healthz`` is 200 when the database answers and every process a `serve` reports on
(runtime/heartbeats.py: the listener, processing, delivery, robots, the web view) is up as of
a report younger than three of its intervals; else 503, naming what fails. The supervisor's
view is the source, and a stale one beats none: a report too old names its process with its
age; no report at all (no `serve` has run, or all stopped cleanly) is 503 too.
"""

from __future__ import annotations

import ipaddress
import logging
from datetime import datetime
from typing import Any, cast

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from pbmserv.db.models import Heartbeat
from pbmserv.db.times import as_utc, utcnow
from pbmserv.web.database import reading
from pbmserv.web.metrics import STALE_INTERVALS, Metrics
from pbmserv.web.site import Site, site_of

log = logging.getLogger("pbmserv.web")

#: Neither answer may be kept: each says how things are now.
NO_STORE = {"Cache-Control": "no-store"}
NO_SERVER = "no server has reported: is `pbmserv serve` running?"


def _allowed(site: Site, request: Request) -> bool:
    """Whether the client is one ``web_metrics_from`` names (behind the proxy: the client the
    proxy names, which serving.py believes from the loopback alone)."""
    if request.client is None:
        return False
    try:
        address = ipaddress.ip_address(request.client.host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)  # ::ffff:127.0.0.1 on a dual-stack socket
    return any(
        address in network or (mapped is not None and mapped in network)
        for network in site.settings.web_metrics_networks
    )


def _operator_site(request: Request) -> Site:
    site = site_of(request)
    if not _allowed(site, request):
        raise HTTPException(404)
    return site


def metrics(request: Request) -> Response:
    """``/metrics``: this process's counters and the database's, in Prometheus text."""
    _operator_site(request)
    registry = cast(Metrics, request.app.state.metrics).registry
    return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST, headers=NO_STORE)


def healthz(request: Request) -> Response:
    """``/healthz``: 200 or 503, and why, in JSON."""
    site = _operator_site(request)
    now = utcnow()
    try:
        with reading(site.sessions) as session:
            rows = session.scalars(
                select(Heartbeat).order_by(Heartbeat.server, Heartbeat.role, Heartbeat.slot)
            ).all()
    except SQLAlchemyError as error:
        log.warning("healthz: the database did not answer (%s)", error.__class__.__name__)
        body = health(None, now)
    else:
        body = health(list(rows), now)
    status = 200 if body["status"] == "ok" else 503
    return JSONResponse(body, status_code=status, headers=NO_STORE)


def health(rows: list[Heartbeat] | None, now: datetime) -> dict[str, Any]:
    """The answer of ``/healthz`` over the heartbeat ``rows`` (None: the database did not
    answer)."""
    if rows is None:
        return {
            "status": "failing",
            "database": "unreachable",
            "failing": ["database"],
            "problems": ["the database did not answer"],
            "processes": [],
            "checked_at": now.isoformat(),
        }
    failing: list[str] = []
    problems: list[str] = []
    processes = []
    for row in rows:
        age = max(0.0, (now - as_utc(row.seen_at)).total_seconds())
        stale = age > row.every_seconds * STALE_INTERVALS
        name = row.role if row.slot == 0 else f"{row.role} {row.slot}"
        if stale:
            problems.append(
                f"{name} on {row.server}: last reported {age:.0f} s ago "
                f"(every {row.every_seconds:g} s)"
            )
        elif row.state != "up":
            problems.append(f"{name} on {row.server}: {row.state}")
        if (stale or row.state != "up") and row.role not in failing:
            failing.append(row.role)
        processes.append(
            {
                "server": row.server,
                "role": row.role,
                "slot": row.slot,
                "pid": row.pid,
                "state": row.state,
                "stale": stale,
                "seen_seconds_ago": round(age, 1),
                "every_seconds": row.every_seconds,
                "restarts": row.restarts,
            }
        )
    if not rows:
        failing.append("serve")
        problems.append(NO_SERVER)
    return {
        "status": "failing" if failing else "ok",
        "database": "ok",
        "failing": failing,
        "problems": problems,
        "processes": processes,
        "checked_at": now.isoformat(),
    }
