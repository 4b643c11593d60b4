"""Running pbmserv as real subprocesses: its environment, its spool, a seeded board."""

from __future__ import annotations

import email
import email.policy
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.db.engine import session_factory, transaction

PBMSERV = [sys.executable, "-m", "pbmserv"]


def run_pbmserv(
    args: list[str], env: dict[str, str], stdin: bytes = b""
) -> subprocess.CompletedProcess:
    return subprocess.run([*PBMSERV, *args], input=stdin, env=env, capture_output=True, timeout=120)


def environment(db_url: str, spool: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "PBMSERV_DB": db_url,
            "PBMSERV_SPOOL": str(spool),
            # A private server: these tests are not about confirming addresses.
            "PBMSERV_CONFIRM_ADDRESSES": "false",
            # No robots' process unless a test is about robots: the others count children.
            "PBMSERV_ROBOTS": "false",
            # Nor a web view (tests/e2e/server_processes/test_web_process.py gives it a port).
            "PBMSERV_WEB_LISTEN": "",
            **extra,
        }
    )
    env.pop("PBMSERV_RELAY", None)
    return env


def spool_messages(spool: Path) -> list[email.message.EmailMessage]:
    files = sorted((spool / "new").glob("*.eml")) if (spool / "new").exists() else []
    return [email.message_from_bytes(f.read_bytes(), policy=email.policy.default) for f in files]


def seed_game(engine) -> None:  # type: ignore[no-untyped-def]
    """alice and bob with a 5x5 Chameleon board 1, alice to move."""
    factory = session_factory(engine)
    for line, sender in (
        ("signup alice secret1", "alice@example.org"),
        ("signup bob hunter22", "bob@example.org"),
        ("chameleon challenge -size=5 alice bob", "alice@example.org"),
    ):
        with transaction(factory) as session:
            assert dispatch_line(
                CommandContext(session, Settings(confirm_addresses=False), sender), line
            ).ok


def start_serve(env: dict[str, str], port: int, log_path: Path) -> subprocess.Popen:
    """Start `pbmserv serve` listening on ``port``; return once it accepts connections.

    Its log goes to a file: a pipe nobody reads would fill up and block the server.
    """
    with open(log_path, "ab") as log:
        proc = subprocess.Popen([*PBMSERV, "serve"], env=env, stderr=log)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError(log_path.read_text())


def wait_for_child(log_path: Path, work: str = "processing", timeout: float = 30) -> None:
    """Wait until a server's child process doing ``work`` says it runs: the listener is up
    before its children have loaded, and another server may meanwhile do all the work."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if f"{work} process (pid" in log_path.read_text(errors="replace"):
            return
        time.sleep(0.05)
    raise AssertionError(f"no {work} process started:\n{log_path.read_text()}")
