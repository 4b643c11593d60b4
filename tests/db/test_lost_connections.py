"""PostgreSQL connections lost under the server (a restart, an operator's pg_terminate_backend):
one idle for a while is checked before use and replaced, without an error; one in steady use
is not checked (a round trip a transaction), its loss fails one statement and the pool is
renewed, so the next transaction works."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.exc import OperationalError

from pbmserv.db import engine as engines

pytestmark = pytest.mark.db


def _backend(engine: Engine) -> int:
    with engine.begin() as conn:
        return int(conn.scalar(text("SELECT pg_backend_pid()")))


def _terminate(db_url: str, pid: int) -> None:
    killer = create_engine(db_url)
    try:
        with killer.begin() as conn:
            assert conn.scalar(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
    finally:
        killer.dispose()


def test_an_idle_connection_lost_meanwhile_is_replaced_before_use(
    db_url: str, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not engines.is_postgres(engine):
        pytest.skip("SQLite has no connection to lose")
    lost = _backend(engine)
    _terminate(db_url, lost)
    monkeypatch.setattr(engines, "IDLE_PING_SECONDS", 0.0)  # as after a long idle
    replaced = _backend(engine)  # no error: checked, found dead, replaced
    assert replaced != lost


def test_a_connection_lost_in_steady_use_fails_once_and_the_pool_is_renewed(
    db_url: str, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not engines.is_postgres(engine):
        pytest.skip("SQLite has no connection to lose")
    monkeypatch.setattr(engines, "IDLE_PING_SECONDS", 3600.0)  # in use a moment ago: no check
    lost = _backend(engine)
    _terminate(db_url, lost)
    with pytest.raises(OperationalError):
        _backend(engine)
    assert _backend(engine) != lost
