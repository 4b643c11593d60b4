"""Another server's mail leaves at once on PostgreSQL (db.wakes, issue 52): mail the admin
shell queues, which has no pipe to the running server, wakes that server's delivery through
LISTEN/NOTIFY, long before its poll. The real executable, real SMTP, the real database."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pytest

from pbmserv.db.engine import is_postgres
from tests.e2e.processes import PBMSERV, environment, spool_messages, start_serve, wait_for_child
from tests.e2e.server_processes.test_child_processes import answered_within
from tests.support import free_port, make_mail, smtp_send

pytestmark = pytest.mark.db


def test_mail_the_admin_shell_queues_leaves_at_once(  # type: ignore[no-untyped-def]
    db_url: str, engine, tmp_path: Path
) -> None:
    if not is_postgres(engine):
        pytest.skip("SQLite has no notices: another process's mail waits for the next poll")
    spool, port = tmp_path / "spool", free_port()
    # Far longer than any wait below: what leaves at once was woken, not polled.
    env = environment(db_url, spool, PBMSERV_LISTEN=f"127.0.0.1:{port}", PBMSERV_POLL_SECONDS="60")
    server = start_serve(env, port, tmp_path / "serve.log")
    try:
        wait_for_child(tmp_path / "serve.log", "delivery")
        assert smtp_send(port, make_mail("alice@example.org", "signup alice secret1"))[0] == 250
        assert answered_within(spool, 1, 15), (tmp_path / "serve.log").read_text()
        time.sleep(1)  # the delivery child is listening well before this
        shell = subprocess.run(
            [*PBMSERV, "admin", "broadcast", "--subject", "Maintenance", "--text", "At noon."],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert shell.returncode == 0, shell.stderr
        assert answered_within(spool, 2, 10), (tmp_path / "serve.log").read_text()
        assert spool_messages(spool)[-1]["Subject"].endswith("Maintenance")
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(40) == 0
    assert "cannot listen" not in (tmp_path / "serve.log").read_text()
