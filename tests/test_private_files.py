"""The quick start's database and spool are the server's alone, whatever the umask: the spool
holds mailed password resets, the database reply tokens and password hashes."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pbmserv.db.engine import make_engine
from pbmserv.db.migrate import upgrade
from pbmserv.outbound.delivery_items import Claimed
from pbmserv.outbound.spool import write_spool


@pytest.fixture
def open_umask() -> Iterator[None]:
    before = os.umask(0)  # the loosest umask: nothing is taken away
    try:
        yield
    finally:
        os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_sqlite_database_is_private(tmp_path: Path, open_umask: None) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'pbmserv.db'}")
    upgrade(engine)
    engine.dispose()
    files = sorted(tmp_path.glob("pbmserv.db*"))
    assert files and all(mode(f) == 0o600 for f in files), {f.name: oct(mode(f)) for f in files}


def test_an_existing_database_keeps_its_mode(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    path.touch()
    os.chmod(path, 0o640)  # the operator's choice
    make_engine(f"sqlite:///{path}").dispose()
    assert mode(path) == 0o640


def test_the_spool_is_private(tmp_path: Path, open_umask: None) -> None:
    spool = tmp_path / "spool"
    item = Claimed(
        1, "bob@example.org", "<1@x>", b"Subject: reset\r\n\r\nsecret\r\n", datetime.now(UTC), 0
    )
    written = write_spool(spool, item)
    assert mode(written) == 0o600
    assert mode(spool) == mode(spool / "new") == mode(spool / "tmp") == 0o700
