"""Shared fixtures: a real database (SQLite or PostgreSQL, by PBMSERV_TEST_DB) and real SMTP.

PBMSERV_TEST_DB unset or "sqlite": a fresh SQLite file per test.
PBMSERV_TEST_DB "postgres" or a postgresql+psycopg:// URL: a private schema in that database
for this test run (migrated once), emptied before every test (but for the robots, which
the migration made).
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import Engine, text
from sqlalchemy.exc import OperationalError

from pbmserv.config import Settings
from pbmserv.core.robots.turns import ensure_robots
from pbmserv.db.engine import make_engine, session_factory, transaction
from pbmserv.db.migrate import upgrade
from pbmserv.db.models import Base
from tests.support import RunningServer, Sink

DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _engine_kind() -> str:
    value = os.environ.get("PBMSERV_TEST_DB", "sqlite").strip()
    return "postgres" if value.startswith("postgres") else "sqlite"


def _postgres_base() -> str:
    value = os.environ.get("PBMSERV_TEST_DB", "")
    return value if "://" in value else DEFAULT_POSTGRES


@pytest.fixture(scope="session")
def _postgres_schema() -> Iterator[str]:
    schema = f"pbmtest_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = make_engine(_postgres_base())
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = _schema_url(schema)
    upgrade(make_engine(url))
    yield url
    with admin.begin() as conn:
        conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


def _schema_url(schema: str) -> str:
    base = _postgres_base()
    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}options={quote(f'-csearch_path={schema}')}"


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "template.db"
    engine = make_engine(f"sqlite:///{path}")
    upgrade(engine)
    engine.dispose()
    return path


def _truncate(engine: Engine, tables: str) -> None:
    """Empty the test schema's tables. PostgreSQL's autovacuum may hold one of them while the
    TRUNCATE waits for it, and the deadlock detector may then cancel the TRUNCATE: again."""
    for attempt in range(5):
        try:
            with engine.begin() as conn:
                conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY CASCADE"))
            return
        except OperationalError as error:
            if "deadlock detected" not in str(error) or attempt == 4:
                raise


@pytest.fixture
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated, empty database for one test."""
    if _engine_kind() == "postgres":
        url = request.getfixturevalue("_postgres_schema")
        engine = make_engine(url)
        tables = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
        _truncate(engine, tables)
        with transaction(session_factory(engine)) as session:
            ensure_robots(session, datetime.now(UTC))  # as the migration left them
        engine.dispose()
        return url
    path = tmp_path / "pbmserv.db"
    shutil.copy(request.getfixturevalue("_sqlite_template"), path)
    return f"sqlite:///{path}"


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


# --- real mail: a capturing relay and a running server -----------------------------


@pytest.fixture
def sink() -> Iterator[Sink]:
    relay = Sink().start()
    yield relay
    relay.stop()


@pytest.fixture
def settings(db_url: str, sink: Sink, tmp_path) -> Settings:  # type: ignore[no-untyped-def]
    return Settings(
        # A private server (everyone trusted); tests/e2e/security/test_confirmation.py turns it on.
        confirm_addresses=False,
        db_url=db_url,
        listen="127.0.0.1:0",
        relay=sink.address,
        spool=tmp_path / "spool",
        poll_seconds=0.2,
        retry_base_seconds=0.2,
        retry_max_seconds=1.0,
        max_message_bytes=64 * 1024,
    )


@pytest.fixture
def server(settings: Settings) -> Iterator[RunningServer]:
    running = RunningServer(settings).start()
    yield running
    running.stop()


@pytest.fixture
def with_settings(settings: Settings):  # type: ignore[no-untyped-def]
    return lambda **changes: replace(settings, **changes)


#: The real-world suites, each with a marker of its own and all of them "slow": the quick
#: subset for day-to-day work is `pytest -m "not slow"` (README); `.ci/run` runs them all.
REAL_WORLD_SUITES: dict[str, str] = {
    "tests/deploy/test_real_postfix.py": "postfix",
    "tests/deploy/test_operations_guide.py": "postfix",
    "tests/deploy/test_spamassassin.py": "spamassassin",
    "tests/e2e/by_mail/test_imap_mailbox.py": "dovecot",
    "tests/e2e/board_mail/test_board_pictures_in_a_browser.py": "browser",
    "tests/e2e/board_mail/test_board_html_on_a_phone.py": "browser",
    "tests/web/test_browser.py": "browser",
    "tests/web/test_browser_players.py": "browser",
    "tests/web/test_tournaments_browser.py": "browser",
    "tests/robots/test_strength_bench.py": "strength",
    "tests/games/test_conformance.py": "random_games",
    "tests/games/test_extinction_oracle.py": "random_games",
    "tests/games/test_state_load.py": "random_games",
    "tests/robots/test_levels.py": "strength",
    "tests/e2e/admin/test_admin.py": "processes",
    "tests/e2e/admin/test_admin_tournaments.py": "processes",
    "tests/e2e/admin/test_admin_queues_and_confirm.py": "processes",
    "tests/e2e/server_processes/test_processes.py": "processes",
    "tests/e2e/server_processes/test_child_processes.py": "processes",
    "tests/e2e/server_processes/test_robot_process.py": "processes",
    "tests/e2e/server_processes/test_command_line_edges.py": "processes",
    "tests/e2e/server_processes/test_deployment_paths.py": "processes",
    "tests/e2e/server_processes/test_workers.py": "processes",
    "tests/e2e/server_processes/test_web_process.py": "processes",
    "tests/e2e/server_processes/test_health_and_metrics.py": "processes",
}


ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """A suite named above that is not there (moved or renamed) fails the run: its tests would
    lose their markers silently and run in the quick subset."""
    missing = sorted(path for path in REAL_WORLD_SUITES if not (ROOT / path).is_file())
    if missing:
        raise pytest.UsageError(
            "tests/conftest.py REAL_WORLD_SUITES names files that do not exist: "
            + ", ".join(missing)
        )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        suite = REAL_WORLD_SUITES.get(Path(item.fspath).resolve().relative_to(ROOT).as_posix())
        if suite is not None:
            item.add_marker(getattr(pytest.mark, suite))
            item.add_marker(pytest.mark.slow)
