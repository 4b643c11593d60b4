"""A relay that refused our login holds the outbox, until the operator acts.

A wrong relay password retried with backoff for days is a failed login every few minutes:
providers lock the account, fail2ban bans the host. So a login the relay refuses for good (535,
or another 5xx to AUTH; see pbmserv.outbound.relay.tls) is tried no more. The relay is *held*: a
row in ``relay_holds`` (the relay, the user name, a salted hash of the credentials refused, the
reply, since when), which every server sharing the database sees, and the operator's views
read (``pbmserv admin relay status``, later the web health view). While it is held:

- no delivery claims mail for that relay, so no login is tried; the mail stays queued, as it
  was (never failed, its attempts not counted: the fault is ours, not the mail's);
- the log says so at ERROR once when it happens, and once in each process that meets it.

It is released when the relay's settings change (host, port, user name or password: the new
ones are tried once, at the next delivery after a restart), or by ``pbmserv admin relay
release`` (the provider unlocked the account, or the password was set right at the provider).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import lru_cache
from typing import Any, Protocol

from sqlalchemy import Connection, Engine, bindparam, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from pbmserv.config import Settings
from pbmserv.db.engine import core_transaction
from pbmserv.db.models import OutboxMessage, RelayHold, table_of
from pbmserv.outbound.relay.tls import RelayLoginRefused, note_hold

log = logging.getLogger("pbmserv.delivery")

_holds = table_of(RelayHold)
_outbox = table_of(OutboxMessage)
#: How the outbox's ``last_error`` of the mail held begins.
HELD = "held: "
RELEASE_HINT = (
    "fix relay_username/relay_password and restart (new credentials release it), or run "
    "`pbmserv admin relay release` once the account works again"
)
_ITERATIONS = 100_000
# Hold (since) stamps this process has told the log about: once each, not once a batch.
_announced: set[tuple[str, str]] = set()


def relay_name(settings: Settings) -> str:
    host, port = settings.relay_host_port or ("", 0)
    return f"{host}:{port}"


@lru_cache(maxsize=8)
def _hash(salt: str, credentials: bytes) -> str:
    digest = hashlib.pbkdf2_hmac("sha256", credentials, bytes.fromhex(salt), _ITERATIONS)
    return f"{salt}${digest.hex()}"


def _credentials(settings: Settings) -> bytes:
    parts = (relay_name(settings), settings.relay_username or "", settings.relay_password or "")
    return "\0".join(parts).encode("utf-8", "surrogateescape")


def _fingerprint(settings: Settings, salt: str | None = None) -> str:
    """A salted, slow hash of the relay's credentials: it tells whether they changed, and
    gives nobody who reads the database the password."""
    return _hash(salt or secrets.token_hex(16), _credentials(settings))


def _same_credentials(stored: str, settings: Settings) -> bool:
    salt, _dollar, _digest = stored.partition("$")
    try:
        bytes.fromhex(salt)
    except ValueError:
        return False
    return hmac.compare_digest(stored, _fingerprint(settings, salt))


def current_hold(engine: Engine, settings: Settings) -> dict[str, Any] | None:
    """The hold on the configured relay, or None. A hold on other credentials than the ones
    configured now is released here: those are tried (once)."""
    if settings.relay_username is None:
        return None  # no login, nothing to refuse it: no statement at all
    name = relay_name(settings)
    with engine.connect() as conn:  # a read: no write lock for it
        row = conn.execute(select(_holds).where(_holds.c.relay == name)).mappings().first()
    if row is None:
        return None
    if not _same_credentials(row["credentials"], settings):
        with core_transaction(engine) as conn:
            conn.execute(delete(_holds).where(_holds.c.relay == name))
        log.warning(
            "the relay %s's credentials changed since its login was refused: outgoing mail "
            "is released, the new ones are tried",
            name,
        )
        return None
    hold = dict(row)
    _announce(hold)
    return hold


async def relay_held(engine: Engine, settings: Settings) -> bool:
    """Whether the configured relay holds the outgoing mail (see ``current_hold``)."""
    if settings.relay_username is None:
        return False  # not even a thread's hop: this is asked before every claim
    held = await asyncio.to_thread(current_hold, engine, settings) is not None
    note_hold(held)
    return held


def _announce(hold: dict[str, Any]) -> None:
    key = (hold["relay"], str(hold["held_since"]))
    if key in _announced:
        return
    _announced.add(key)
    log.error(
        "outgoing mail is held: the relay %s refused the login of %r since %s (%s); %s",
        hold["relay"],
        hold["username"],
        hold["held_since"],
        hold["reason"],
        RELEASE_HINT,
    )


_RELEASE_CLAIMED = (
    update(_outbox)
    .where(
        _outbox.c.id.in_(bindparam("row_ids", expanding=True)),
        _outbox.c.lease_owner == bindparam("owner"),
    )
    .values(lease_until=None, lease_owner=None, last_error=bindparam("error"))
)


class DeliveryRun(Protocol):
    """What a delivery run's lease (pbmserv.outbound.delivery.Lease) tells of it."""

    engine: Engine
    settings: Settings
    owner: str
    clock: Callable[[], datetime]


def hold_outbox(lease: DeliveryRun, refused: RelayLoginRefused, claimed: Sequence[int]) -> None:
    """Hold the relay after ``refused``, and put the mail ``lease``'s delivery run claimed
    back in the queue as it was (its lease given up, its attempts and next attempt untouched)."""
    engine, settings = lease.engine, lease.settings
    name = relay_name(settings)
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    values = {
        "relay": name,
        "username": settings.relay_username or "",
        "credentials": _fingerprint(settings),
        "reason": refused.reply,
        "held_since": lease.clock(),
    }
    with core_transaction(engine) as conn:
        # A second server refused at the same moment finds the first one's hold: one row.
        conn.execute(dialect.insert(_holds).values(values).on_conflict_do_nothing())
        hold = conn.execute(select(_holds).where(_holds.c.relay == name)).mappings().one()
        if claimed:
            error = f"{HELD}{refused} ({RELEASE_HINT})"
            conn.execute(
                _RELEASE_CLAIMED, {"row_ids": list(claimed), "owner": lease.owner, "error": error}
            )
    _announce(dict(hold))


def list_holds(conn: Connection) -> list[dict[str, Any]]:
    """Every relay held, for the operator (the credentials' hash left out)."""
    query = select(_holds.c.relay, _holds.c.username, _holds.c.held_since, _holds.c.reason)
    return [dict(row) for row in conn.execute(query.order_by(_holds.c.relay)).mappings()]


def release(conn: Connection) -> int:
    """Release every relay held (the operator's command); how many were."""
    return conn.execute(delete(_holds)).rowcount
