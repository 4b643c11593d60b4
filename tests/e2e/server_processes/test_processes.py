"""The real `pbmserv` executable: refusing an old schema, the stdin pipe, two processes racing
on one board, and a server killed in the middle of its work."""

from __future__ import annotations

import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.migrate import head_revision
from pbmserv.db.models import InboxMessage, MoveRow, OutboxMessage
from tests.e2e.processes import (
    PBMSERV,
    environment,
    run_pbmserv,
    seed_game,
    spool_messages,
    start_serve,
)
from tests.support import free_port, make_mail, settle, smtp_send

pytestmark = pytest.mark.db


def test_serve_refuses_a_database_not_at_head(tmp_path: Path) -> None:
    env = environment(
        f"sqlite:///{tmp_path / 'new.db'}",
        tmp_path / "spool",
        PBMSERV_LISTEN=f"127.0.0.1:{free_port()}",
    )
    result = run_pbmserv(["serve"], env)
    assert result.returncode != 0
    assert b"pbmserv db upgrade" in result.stderr
    upgrade = run_pbmserv(["db", "upgrade"], env)
    assert upgrade.returncode == 0, upgrade.stderr
    current = run_pbmserv(["db", "current"], env).stdout.strip().decode()
    assert current == head_revision() and current != "0001"


def test_mail_from_stdin_is_processed_as_over_smtp(db_url: str, tmp_path: Path) -> None:
    env = environment(db_url, tmp_path / "spool")
    message = make_mail("Alice <alice@example.org>", "signup alice secret1")
    result = run_pbmserv(["mail", "-f", "alice@example.org"], env, message.as_bytes())
    assert result.returncode == 0, result.stderr
    [reply] = spool_messages(tmp_path / "spool")
    assert reply["To"] == "alice@example.org"
    assert reply["In-Reply-To"] == message["Message-ID"]
    assert "Welcome, alice" in reply.get_body(("plain",)).get_content()
    again = run_pbmserv(["mail", "-f", "alice@example.org"], env, message.as_bytes())
    assert again.returncode == 0 and len(spool_messages(tmp_path / "spool")) == 1
    big = make_mail("alice@example.org", "signup x y", ("y" * 70 + "\n") * 20_000)
    refused = run_pbmserv(["mail"], env, big.as_bytes())
    assert refused.returncode == 65 and b"larger than" in refused.stderr


def test_two_commands_racing_on_one_board_never_both_apply(engine) -> None:  # type: ignore[no-untyped-def]
    seed_game(engine)
    factory = session_factory(engine)
    first_done = threading.Event()
    results: dict[str, object] = {}

    def attempt(name: str, cell: str, hold: float) -> None:
        try:
            with transaction(factory) as session:
                ctx = CommandContext(
                    session, Settings(confirm_addresses=False), "alice@example.org"
                )
                results[name] = dispatch_line(ctx, f"chameleon move 1 alice secret1 {cell}")
                first_done.set()
                time.sleep(hold)  # keep the transaction open: the other must wait for it
        except Exception as error:  # the test reports it below
            results[name] = error

    first = threading.Thread(target=attempt, args=("first", "a1x", 0.5))
    first.start()
    assert first_done.wait(10)
    second = threading.Thread(target=attempt, args=("second", "b2x", 0.0))
    second.start()
    first.join(20)
    second.join(20)
    assert results["first"].ok  # type: ignore[union-attr]
    assert not results["second"].ok, results["second"]  # type: ignore[union-attr]
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(MoveRow)) == 1


def test_two_processes_racing_apply_exactly_one_move(db_url: str, engine, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    seed_game(engine)
    env = environment(db_url, tmp_path / "spool")
    messages = [
        make_mail("alice@example.org", f"chameleon move 1 alice secret1 {cell}")
        for cell in ("a1x", "e5o")
    ]
    procs = [
        subprocess.Popen(
            [*PBMSERV, "mail", "-f", "alice@example.org"],
            env=env,
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in messages
    ]
    for proc, message in zip(procs, messages, strict=True):
        proc.stdin.write(message.as_bytes())  # type: ignore[union-attr]
    for proc in procs:
        proc.stdin.close()  # type: ignore[union-attr]
    for proc in procs:
        assert proc.wait(60) == 0, proc.stderr.read()  # type: ignore[union-attr]
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(MoveRow)) == 1
        assert (
            conn.scalar(
                select(func.count()).select_from(InboxMessage).where(InboxMessage.status == "done")
            )
            == 2
        )
    replies = [m for m in spool_messages(tmp_path / "spool") if m["In-Reply-To"]]
    texts = [m.get_body(("plain",)).get_content() for m in replies]
    assert sum(" you played " in t for t in texts) == 1
    assert sum("not your turn" in t for t in texts) == 1, texts


def test_killed_server_answers_every_accepted_message_exactly_once(  # type: ignore[no-untyped-def]
    db_url: str, engine, tmp_path: Path
) -> None:
    spool = tmp_path / "spool"
    port = free_port()
    env = environment(
        db_url,
        spool,
        PBMSERV_LISTEN=f"127.0.0.1:{port}",
        PBMSERV_POLL_SECONDS="0.2",
        # Mail the killed server had taken for sending is taken over after this lease.
        PBMSERV_DELIVERY_LEASE_SECONDS="3",
    )

    log_path = tmp_path / "serve.log"

    def start() -> subprocess.Popen:
        return start_serve(env, port, log_path)

    server = start()
    sent = []
    for i in range(150):
        message = make_mail(f"user{i}@example.org", f"signup user{i} password{i}")
        assert smtp_send(port, message)[0] == 250
        sent.append(message["Message-ID"])
    # Kill it hard while it is still working through the inbox.
    server.send_signal(signal.SIGKILL)
    server.wait(10)
    with engine.connect() as conn:
        pending = conn.scalar(
            select(func.count()).select_from(InboxMessage).where(InboxMessage.status == "pending")
        )
    assert pending > 0, "the server finished before it was killed; the test proved nothing"
    server = start()
    try:
        settle(engine, timeout=120)
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(20) == 0
    replies = [m["In-Reply-To"] for m in spool_messages(spool)]
    assert sorted(replies) == sorted(sent)  # every message answered, none twice
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(OutboxMessage)) == 150


def test_mail_tempfails_when_the_database_or_config_is_broken(tmp_path: Path) -> None:
    message = make_mail("alice@example.org", "signup alice secret1").as_bytes()
    unreachable = environment("postgresql+psycopg://pbm:s3cretpw@127.0.0.1:1/none", tmp_path)
    result = run_pbmserv(["mail", "-f", "alice@example.org"], unreachable, message)
    assert result.returncode == 75, result.stderr  # the MTA keeps the message and retries
    assert b"s3cretpw" not in result.stderr and b"Traceback" not in result.stderr
    bad_config = tmp_path / "bad.toml"
    bad_config.write_text("colour = 1\n")
    env = {
        **environment(f"sqlite:///{tmp_path / 'x.db'}", tmp_path),
        "PBMSERV_CONFIG": str(bad_config),
    }
    assert run_pbmserv(["mail"], env, message).returncode == 75
    assert run_pbmserv(["config", "show"], env).returncode == 78


def test_a_port_in_use_is_one_line_and_an_exit_the_unit_does_not_loop_on(  # type: ignore[no-untyped-def]
    db_url: str, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = environment(db_url, tmp_path / "spool", PBMSERV_LISTEN=f"127.0.0.1:{port}")
        result = run_pbmserv(["serve"], env)
    assert result.returncode == 69, result.stderr
    assert b"Traceback" not in result.stderr
    assert f"cannot listen on 127.0.0.1:{port}".encode() in result.stderr
