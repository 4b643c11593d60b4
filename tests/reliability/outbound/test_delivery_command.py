"""`pbmserv admin` only queues mail; `pbmserv deliver` (like `serve`) sends it.

Each command runs as a real subprocess on the real database, against a real SMTP relay.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbmserv.config import Settings
from tests.e2e.processes import PBMSERV, environment, run_pbmserv, seed_game, spool_messages
from tests.reliability.outbox import Relay, ScriptedHandler, enqueue, rows
from tests.support import free_port

pytestmark = pytest.mark.db

EX_TEMPFAIL = 75


def test_an_admin_action_queues_its_mail_and_sends_none(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    seed_game(engine)
    # An operator's shell in some folder, without the server's relay or spool settings.
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    env = environment(db_url, tmp_path / "unused")
    del env["PBMSERV_SPOOL"]
    result = subprocess.run(
        [*PBMSERV, "admin", "users", "reset-password", "bob"],
        env=env,
        cwd=elsewhere,
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert list(elsewhere.iterdir()) == []  # no ./spool written by the shell
    # The new password, and bob's board again with its seat's new reply address.
    queued = rows(engine)
    assert [(r.recipient, r.status, r.attempts) for r in queued] == [
        ("bob@example.org", "pending", 0)
    ] * 2
    assert "2 message(s) queued" in result.stderr.decode()


def test_deliver_sends_what_is_due_once_and_summarises(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    seed_game(engine)
    env = environment(db_url, tmp_path / "spool")
    assert run_pbmserv(["admin", "users", "reset-password", "bob"], env).returncode == 0
    enqueue(engine, Settings(confirm_addresses=False), ["jürgen@example.test"])
    with Relay(ScriptedHandler()) as relay:
        first = run_pbmserv(["deliver", "--relay", relay.address], env)
        again = run_pbmserv(["deliver", "--relay", relay.address], env)
        received = relay.messages
    assert first.returncode == 0, first.stderr.decode()
    summary = "pbmserv deliver: 2 sent, 1 failed, 0 deferred, 0 left to another server"
    assert first.stdout.decode().splitlines() == [summary]
    assert again.stdout.decode().startswith("pbmserv deliver: 0 sent, 0 failed, 0 deferred")
    [mail] = [m for m in received if "given you a new password" in m.body]
    assert mail.to == "bob@example.org" and len(received) == 2
    assert [row.status for row in rows(engine)] == ["sent", "sent", "failed"]
    assert not (tmp_path / "spool").exists()


def test_deliver_without_a_relay_writes_the_spool(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    enqueue(engine, Settings(confirm_addresses=False), ["alice@example.org", "bob@example.org"])
    spool = tmp_path / "outgoing"
    result = run_pbmserv(["deliver", "--spool", str(spool)], environment(db_url, tmp_path / "x"))
    assert result.returncode == 0, result.stderr.decode()
    assert "2 sent" in result.stdout.decode()
    spooled = sorted(m["To"] for m in spool_messages(spool))
    assert spooled == ["alice@example.org", "bob@example.org"]


def test_deliver_with_the_relay_down_defers_and_says_so(
    db_url: str, engine: Engine, tmp_path: Path
) -> None:
    enqueue(engine, Settings(confirm_addresses=False), ["alice@example.org"])
    nobody = f"127.0.0.1:{free_port()}"
    result = run_pbmserv(["deliver", "--relay", nobody], environment(db_url, tmp_path / "spool"))
    assert result.returncode == EX_TEMPFAIL
    assert "0 sent, 0 failed, 1 deferred" in result.stdout.decode()
    [row] = rows(engine)
    assert (row.status, row.attempts) == ("pending", 1) and row.last_error
