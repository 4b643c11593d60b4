"""Issue 15, item 3: connection limits.

Sessions above ``max_connections`` are answered ``421 4.3.2`` and closed; running out of file
descriptors while accepting is logged once per interval, not as a storm of tracebacks, and the
listener goes on once descriptors are free again.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import smtplib
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbmserv.config import load_settings
from tests.e2e.processes import environment, start_serve
from tests.support import RunningServer, free_port, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def open_session(port: int) -> smtplib.SMTP:
    client = smtplib.SMTP("127.0.0.1", port, timeout=10)
    assert client.noop()[0] == 250
    return client


@contextlib.contextmanager
def sessions(port: int, count: int) -> Iterator[list[smtplib.SMTP]]:
    clients = [open_session(port) for _ in range(count)]
    try:
        yield clients
    finally:
        for client in clients:
            with contextlib.suppress(OSError, smtplib.SMTPException):
                client.close()


def until_accepted(port: int, timeout: float = 5.0) -> smtplib.SMTP:
    deadline = time.monotonic() + timeout
    while True:
        try:
            return open_session(port)
        except smtplib.SMTPConnectError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def test_the_session_above_the_cap_gets_421_and_a_freed_slot_is_reused(with_settings) -> None:  # type: ignore[no-untyped-def]
    running = RunningServer(with_settings(max_connections=3)).start()
    try:
        with sessions(running.port, 3) as clients:
            with pytest.raises(smtplib.SMTPConnectError) as refused:
                smtplib.SMTP("127.0.0.1", running.port, timeout=10)
            assert refused.value.smtp_code == 421
            assert refused.value.smtp_error == b"4.3.2 Too many connections, try again later"
            for client in clients:  # the sessions in progress are not disturbed
                assert client.noop()[0] == 250
            clients[0].quit()
            until_accepted(running.port).quit()
            assert smtp_send(running.port, make_mail("alice@example.org", "help"))[0] == 250
    finally:
        running.stop()


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_running_out_of_file_descriptors_is_logged_once_and_survived(
    db_url: str,
    engine,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    port = free_port()
    env = environment(
        db_url,
        tmp_path / "spool",
        PBMSERV_LISTEN=f"127.0.0.1:{port}",
        PBMSERV_MAX_CONNECTIONS="1000",  # the cap is not what stops it here
        PBMSERV_POLL_SECONDS="60",
        PBMSERV_MAINTENANCE_INTERVAL_SECONDS="0",
    )
    log_path = tmp_path / "serve.log"
    proc = start_serve(env, port, log_path)
    clients: list[socket.socket] = []
    try:
        # Everything the server opens on its first message is opened, and closed, by now.
        assert smtp_send(port, make_mail("alice@example.org", "help"))[0] == 250
        settle(engine)
        # A few descriptors to spare, then far more connections than that.
        spare = open_fds(proc.pid) + 3
        resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (spare, spare))
        clients = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(40)]
        time.sleep(2.0)
        assert proc.poll() is None
        for client in clients:
            client.close()
        clients = []
        time.sleep(1.0)
        # Descriptors are free again: the listener serves, without a restart.
        assert smtp_send(port, make_mail("bob@example.org", "help"))[0] == 250
    finally:
        for client in clients:
            client.close()
        proc.terminate()
        proc.wait(30)
    log = log_path.read_text(errors="replace")
    assert "Traceback" not in log and "out of system resource" not in log
    warnings = re.findall(r"^.*file descriptors.*$", log, re.M)
    assert 1 <= len(warnings) <= 2, log[-3000:]


def test_the_systemd_unit_gives_the_connection_cap_room() -> None:
    unit = (DEPLOY / "systemd/pbmserv.service").read_text(encoding="utf-8")
    limits = re.findall(r"^LimitNOFILE=(\d+)$", unit, re.M)
    settings = load_settings(environ={}, config_file=DEPLOY / "pbmserv.toml")
    assert limits, "no LimitNOFILE= in the unit"
    # Each session is one descriptor; the database pool, the relay and the logs need more.
    assert int(limits[0]) >= 2 * settings.max_connections + 256
