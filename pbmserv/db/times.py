"""Time as the database keeps it, stated once: every date-time column is timezone-aware and holds
UTC. PostgreSQL hands values back aware; SQLite keeps no zone and hands them back naive, so a
value read from the database goes through :func:`as_utc` before it meets an aware one. "Now" is
:func:`utcnow`, aware."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    """Now, as an aware UTC date-time."""
    return datetime.now(UTC)


def as_utc(stamp: datetime) -> datetime:
    """A date-time read from the database, aware (a naive one was stored as UTC)."""
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)
