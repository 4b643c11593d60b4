"""Upkeep run by the server on a timer (and by `pbmserv admin maintain`): reminders and
forfeits of idle boards, the daily digests, held messages that expired, and the clock sweep;
each in chunks of due boards, one transaction a chunk, its mail queued in the same one."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.orm import Session, sessionmaker

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.digest import send_digests
from pbmserv.core.maintenance import MaintenanceReport, run_maintenance
from pbmserv.core.timing.clock_sweep import ClockReport, sweep_clocks
from pbmserv.db.engine import transaction
from pbmserv.db.times import utcnow
from pbmserv.outbound.outbox_rows import queue_notifications
from pbmserv.runtime.processor import expire_held

log = logging.getLogger("pbmserv.process")


MAINTENANCE_CHUNK = 200


def maintain(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    *,
    chunk: int = MAINTENANCE_CHUNK,
) -> MaintenanceReport:
    """Run the idle-board maintenance once and queue the reminders and forfeit mail, ``chunk``
    due boards per transaction."""
    now = clock()
    report = MaintenanceReport()
    after_id = 0
    while True:
        with transaction(factory) as session:
            ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
            part = run_maintenance(ctx, after_id=after_id, limit=chunk)
            queue_notifications(session, settings, ctx.notifications, now)
        report.reminded += part.reminded
        report.forfeited += part.forfeited
        report.examined += part.examined
        report.last_id = part.last_id or report.last_id
        if part.examined < chunk or part.last_id is None:
            break
        after_id = part.last_id
    report.expired = expire_held(factory, now)
    with transaction(factory) as session:
        ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
        report.digested = send_digests(ctx)
        queue_notifications(session, settings, ctx.notifications, now)
    if report.reminded or report.forfeited or report.digested or report.expired:
        fields = {
            "reminded": report.reminded,
            "forfeited": report.forfeited,
            "digests": len(report.digested),
            "unconfirmed_dropped": report.expired,
        }
        log.info("maintenance", extra={"fields": fields})
    return report


def sweep(
    factory: sessionmaker[Session],
    settings: Settings,
    clock: Callable[[], datetime] = utcnow,
    *,
    chunk: int = MAINTENANCE_CHUNK,
) -> ClockReport:
    """Run the clock sweep (core.timing.clock_sweep) and queue its mail, ``chunk`` due boards per
    transaction, until nothing is due."""
    now = clock()
    report = ClockReport()
    while True:
        with transaction(factory) as session:
            ctx = CommandContext(session=session, settings=settings, sender=None, clock=lambda: now)
            part = sweep_clocks(ctx, limit=chunk)
            queue_notifications(session, settings, ctx.notifications, now)
        for name in ("reminded", "lost_on_time", "vacations_begun", "vacations_ended"):
            getattr(report, name).extend(getattr(part, name))
        report.examined += part.examined
        if part.examined < chunk:
            break
    if report.lost_on_time or report.vacations_begun or report.vacations_ended:
        fields = {
            "lost_on_time": report.lost_on_time,
            "vacations_begun": report.vacations_begun,
            "vacations_ended": report.vacations_ended,
        }
        log.info("clocks", extra={"fields": fields})
    return report
