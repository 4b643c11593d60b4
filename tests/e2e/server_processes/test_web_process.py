"""The web view as real processes (issue 50): `serve` starts it as a child on ``web_listen``,
at the children's CPU priority, starts it again when it dies and takes it along when it goes;
an empty ``web_listen`` starts none; `pbmserv web` serves alone and stops cleanly on SIGTERM;
a port in use is one line, not a traceback. The real executable, the real database."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.processes import PBMSERV, environment, run_pbmserv, start_serve
from tests.e2e.server_processes.test_child_processes import answered_within, gone, roles
from tests.e2e.server_processes.test_workers import children
from tests.support import free_port, make_mail, smtp_send

pytestmark = pytest.mark.db

#: A child process starts in a few seconds on a quiet machine; these run beside other tests.
START_SECONDS = 60


def two_ports() -> tuple[int, int]:
    first = free_port()
    while (second := free_port()) == first:
        pass
    return first, second


def status_of(port: int, path: str = "/") -> int | None:
    """The HTTP status GET ``path`` gets on ``port``; None: nobody answers there."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return None


def wait_for_page(port: int, log_path: Path, seconds: float = START_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if status_of(port) == 200:
            return
        time.sleep(0.1)
    raise AssertionError(f"no front page on port {port}:\n{log_path.read_text()}")


def serve(
    db_url: str, tmp_path: Path, **extra: str
) -> tuple[subprocess.Popen, int, int, Path, Path]:
    """`pbmserv serve` with its web view on a port of its own: (process, SMTP port, web port,
    spool, log)."""
    smtp_port, web_port = two_ports()
    spool, log_path = tmp_path / "spool", tmp_path / "serve.log"
    given = {
        "PBMSERV_LISTEN": f"127.0.0.1:{smtp_port}",
        "PBMSERV_WEB_LISTEN": f"127.0.0.1:{web_port}",
        **extra,
    }
    env = environment(db_url, spool, **given)
    return start_serve(env, smtp_port, log_path), smtp_port, web_port, spool, log_path


def stop(server: subprocess.Popen) -> None:
    server.send_signal(signal.SIGTERM)
    assert server.wait(60) == 0
    assert children(server.pid) == set()


def test_serve_answers_mail_and_pages_and_starts_a_dead_web_view_again(
    db_url: str, tmp_path: Path
) -> None:
    server, smtp_port, web_port, spool, log_path = serve(
        db_url, tmp_path, PBMSERV_CHILD_NICENESS="5"
    )
    try:
        wait_for_page(web_port, log_path)
        assert smtp_send(smtp_port, make_mail("alice@example.org", "help"))[0] == 250
        assert answered_within(spool, 1, 30), log_path.read_text()
        by_role = roles(server.pid, 3)
        assert set(by_role) == {"process", "deliver", "web"}
        # Pages wait for the moves: the web view runs at the children's lower priority.
        listener = os.getpriority(os.PRIO_PROCESS, server.pid)
        assert os.getpriority(os.PRIO_PROCESS, by_role["web"]) == listener + 5

        os.kill(by_role["web"], signal.SIGKILL)
        assert gone(by_role["web"], 15)
        deadline = time.monotonic() + START_SECONDS
        while (again := roles(server.pid, 3, START_SECONDS)["web"]) == by_role["web"]:
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.2)
        wait_for_page(web_port, log_path)
        assert os.getpriority(os.PRIO_PROCESS, again) == listener + 5
        assert f"web view process 0 (pid {by_role['web']}) exited with -9" in log_path.read_text()
        assert smtp_send(smtp_port, make_mail("bob@example.org", "help"))[0] == 250
        assert answered_within(spool, 2, 30), log_path.read_text()
    finally:
        stop(server)
    assert status_of(web_port) is None
    assert "Traceback" not in log_path.read_text()


def test_the_web_view_stops_when_serve_is_killed(db_url: str, tmp_path: Path) -> None:
    server, _smtp_port, web_port, _spool, log_path = serve(
        db_url, tmp_path, PBMSERV_PROCESSING_PROCESS="false", PBMSERV_DELIVERY_PROCESSES="0"
    )
    wait_for_page(web_port, log_path)
    (web,) = roles(server.pid, 1).values()
    server.send_signal(signal.SIGKILL)
    server.wait(10)
    # Nobody holds the other end of its pipe now: it sees it close and stops.
    assert gone(web, 15), "the web view outlived its killed parent"
    assert status_of(web_port) is None


def test_an_empty_web_listen_starts_no_web_view(db_url: str, tmp_path: Path) -> None:
    server, smtp_port, _web_port, spool, log_path = serve(db_url, tmp_path, PBMSERV_WEB_LISTEN="")
    try:
        assert set(roles(server.pid, 2, START_SECONDS)) == {"process", "deliver"}
        assert smtp_send(smtp_port, make_mail("alice@example.org", "help"))[0] == 250
        assert answered_within(spool, 1, 30), log_path.read_text()
        assert len(children(server.pid)) == 2
        assert "web view" not in log_path.read_text()
    finally:
        stop(server)


def test_pbmserv_web_serves_alone_and_stops_cleanly_on_sigterm(db_url: str, tmp_path: Path) -> None:
    port, log_path = free_port(), tmp_path / "web.log"
    env = environment(db_url, tmp_path / "spool")
    with open(log_path, "ab") as log:
        web = subprocess.Popen(
            [*PBMSERV, "web", "--listen", f"127.0.0.1:{port}"], env=env, stderr=log
        )
    try:
        wait_for_page(port, log_path)
        assert status_of(port, "/no/such/page") == 404
    finally:
        web.send_signal(signal.SIGTERM)
        assert web.wait(30) == 0, log_path.read_text()
    said = log_path.read_text()
    assert f"web view listening on http://127.0.0.1:{port}" in said
    assert "web view stopped" in said and "Traceback" not in said


def test_a_port_in_use_is_one_line_and_exit_69(db_url: str, tmp_path: Path) -> None:
    env = environment(db_url, tmp_path / "spool")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_pbmserv(["web", "--listen", f"127.0.0.1:{port}"], env)
    assert result.returncode == 69, result.stderr
    assert result.stderr.decode().splitlines() == [
        f"pbmserv: the web view cannot listen on 127.0.0.1:{port}: Address already in use"
    ]


def test_no_address_to_listen_on_is_said_and_exit_2(db_url: str, tmp_path: Path) -> None:
    result = run_pbmserv(["web"], environment(db_url, tmp_path / "spool", PBMSERV_WEB_LISTEN=""))
    assert result.returncode == 2
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1 and "--listen" in lines[0], lines
