"""The web view's part of the deployment kit agrees with the program and with itself (issue 50).

The Caddyfile sends the public to where the web view listens by default, under the name of the
example's ``web_url``, lets only GET and HEAD through and leaves the site's caching headers
alone; with ``caddy`` installed it parses, and a real Caddy run from it passes a page, its ETag
and Cache-Control through unchanged, answers ``If-None-Match`` with the site's 304 and refuses
a POST (skipped without caddy). The separate unit runs a real `pbmserv web` on that address, as
the same user with the same protections as pbmserv.service, which lets `serve`'s children lower
their priority. The image and the compose file publish the port; the guide and the README name
the settings, and their commands are real.
"""

from __future__ import annotations

import http.client
import json
import re
import shlex
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pbmserv.cli.options import setting_overrides
from pbmserv.config import Settings, load_settings
from tests.deploy.test_deploy_files import (
    BINARY,
    CONFIG,
    DEPLOY,
    accepts,
    example_settings,
    read,
)
from tests.support import free_port

CADDY = shutil.which("caddy")
needs_caddy = pytest.mark.skipif(CADDY is None, reason="caddy is not installed")


# --- the Caddyfile ---------------------------------------------------------------------------


def caddy_upstream(text: str | None = None) -> str:
    found = re.findall(r"^\s*reverse_proxy (\S+)$", text or read("Caddyfile"), re.M)
    assert len(found) == 1, found
    return found[0]


def caddy_site(text: str | None = None) -> str:
    """The site block's name (the global options block has none)."""
    found = re.findall(r"^(\S+) \{$", text or read("Caddyfile"), re.M)
    assert len(found) == 1, found
    return found[0]


def example_web_url() -> str:
    found = re.search(r'^# web_url = "(https://[^"]+)"$', read("pbmserv.toml"), re.M)
    assert found, "the example config shows no web_url"
    return found.group(1)


def test_the_caddyfile_proxies_to_where_the_web_view_listens() -> None:
    assert caddy_upstream() == Settings().web_listen == example_settings().web_listen


def test_the_caddyfile_serves_the_example_web_url() -> None:
    assert f"https://{caddy_site()}" == example_web_url()


def test_the_caddyfile_lets_only_reading_through_and_keeps_the_caching_headers() -> None:
    text = read("Caddyfile")
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    matcher = re.search(r"^\s*@(\w+) not method GET HEAD$", code, re.M)
    assert matcher, "no matcher for the methods other than GET and HEAD"
    assert re.search(rf"^\s*respond @{matcher.group(1)} 405$", code, re.M)
    # Nothing that rewrites ETags (compression) or writes the private links' URLs to a log.
    assert not re.search(r"^\s*(encode|log)\b", code, re.M)
    for touched in re.findall(r"^\s*header\s+(?:@\w+\s+)?(\S+)", code, re.M):
        assert touched.lstrip("-+>").lower() not in {"etag", "cache-control", "last-modified"}


def caddy_json(path: Path) -> dict[str, Any]:
    assert CADDY is not None
    adapted = subprocess.run(
        [CADDY, "adapt", "--config", str(path), "--adapter", "caddyfile"],
        capture_output=True,
        timeout=60,
        env=caddy_environment(path.parent),
    )
    assert adapted.returncode == 0, adapted.stderr.decode()
    assert b"not formatted" not in adapted.stderr, adapted.stderr.decode()  # as `caddy fmt` has it
    loaded: dict[str, Any] = json.loads(adapted.stdout)
    return loaded


def caddy_environment(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
    }


def handlers(node: Any) -> Iterator[dict[str, Any]]:
    """Every handler of an adapted config, at any depth, with the matchers of its route."""
    if isinstance(node, dict):
        for handler in node.get("handle", []):
            yield {**handler, "_match": node.get("match", [])}
        for value in node.values():
            yield from handlers(value)
    elif isinstance(node, list):
        for value in node:
            yield from handlers(value)


@needs_caddy
def test_caddy_reads_the_caddyfile(tmp_path: Path) -> None:
    shutil.copy(DEPLOY / "Caddyfile", tmp_path / "Caddyfile")
    config = caddy_json(tmp_path / "Caddyfile")
    found = list(handlers(config))
    proxies = [h for h in found if h["handler"] == "reverse_proxy"]
    assert [u["dial"] for h in proxies for u in h["upstreams"]] == [Settings().web_listen]
    refusals = [h for h in found if h["handler"] == "static_response"]
    assert [h["status_code"] for h in refusals] == [405]
    assert refusals[0]["_match"] == [{"not": [{"method": ["GET", "HEAD"]}]}]
    assert not [h for h in found if h["handler"] == "encode"]


class StandIn(BaseHTTPRequestHandler):
    """The web view's part: a page with an ETag, 304 for If-None-Match; what came, kept."""

    seen: list[tuple[str, dict[str, str]]] = []
    ETAG = '"p1-html-v1"'
    CACHE = "public, max-age=0, must-revalidate"

    def _answer(self, body: bool) -> None:
        self.seen.append((self.command, dict(self.headers.items())))
        if self.headers.get("If-None-Match") == self.ETAG:
            self.send_response(304)
            self.send_header("ETag", self.ETAG)
            self.send_header("Cache-Control", self.CACHE)
            self.end_headers()
            return
        page = b"<!doctype html><title>board 1</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.send_header("ETag", self.ETAG)
        self.send_header("Cache-Control", self.CACHE)
        self.end_headers()
        if body:
            self.wfile.write(page)

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        self._answer(body=True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def do_POST(self) -> None:  # noqa: N802
        self.seen.append((self.command, dict(self.headers.items())))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stand_in() -> Iterator[int]:
    StandIn.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def ask(
    port: int, method: str, path: str = "/g/1", headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(
            method, path, body=b"x=1" if method == "POST" else None, headers=headers or {}
        )
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


@needs_caddy
def test_a_real_caddy_passes_pages_through_and_refuses_writes(
    tmp_path: Path, stand_in: int
) -> None:
    """The kit's Caddyfile as it is, but for plain HTTP on free ports and no admin endpoint."""
    port = free_port()
    text = read("Caddyfile")
    text = text.replace(f"{caddy_site(text)} {{", f"http://127.0.0.1:{port} {{")
    text = text.replace(
        f"reverse_proxy {caddy_upstream(text)}", f"reverse_proxy 127.0.0.1:{stand_in}"
    )
    text = re.sub(r"^\{$", "{\n\tadmin off", text, count=1, flags=re.M)
    (tmp_path / "Caddyfile").write_text(text, encoding="utf-8")
    assert CADDY is not None
    with open(tmp_path / "caddy.log", "ab") as log:
        caddy = subprocess.Popen(
            [CADDY, "run", "--config", str(tmp_path / "Caddyfile"), "--adapter", "caddyfile"],
            env=caddy_environment(tmp_path),
            stdout=log,
            stderr=log,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, (tmp_path / "caddy.log").read_text()
                assert caddy.poll() is None, (tmp_path / "caddy.log").read_text()
                time.sleep(0.05)

        status, headers, body = ask(port, "GET", headers={"X-Forwarded-For": "203.0.113.9"})
        assert (status, body) == (200, b"<!doctype html><title>board 1</title>")
        assert headers["etag"] == StandIn.ETAG and headers["cache-control"] == StandIn.CACHE
        assert "strict-transport-security" in headers
        _method, forwarded = StandIn.seen[-1]
        # The web view believes the proxy's X-Forwarded-For: the client's own is not passed on.
        assert forwarded["X-Forwarded-For"] == "127.0.0.1"
        assert forwarded["X-Forwarded-Proto"] == "http"

        status, headers, body = ask(port, "GET", headers={"If-None-Match": StandIn.ETAG})
        assert (status, body, headers["etag"]) == (304, b"", StandIn.ETAG)
        assert ask(port, "HEAD")[0] == 200

        for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS"):
            status, headers, _body = ask(port, method)
            assert status == 405, method
            assert headers["allow"] == "GET, HEAD"
        assert {method for method, _headers in StandIn.seen} == {"GET", "HEAD"}
    finally:
        caddy.terminate()
        caddy.wait(15)


# --- systemd ---------------------------------------------------------------------------------


def unit(name: str) -> dict[str, list[str]]:
    """A unit file's settings, each with all its values in order."""
    settings: dict[str, list[str]] = {}
    for key, value in re.findall(r"^(\w+)=(.*)$", read(f"systemd/{name}"), re.M):
        settings.setdefault(key, []).append(value)
    return settings


def test_the_web_unit_runs_a_real_pbmserv_web_where_the_proxy_looks() -> None:
    web = unit("pbmserv-web.service")
    assert set(web) & {"ExecStartPre", "ExecStart", "ExecStop"} == {"ExecStart"}
    binary, *argv = shlex.split(web["ExecStart"][0])
    assert binary == BINARY
    args = accepts(argv)
    assert (args.command, args.config_file) == ("web", CONFIG)
    assert setting_overrides(args)["web_listen"] == caddy_upstream()


def test_the_two_units_run_as_one_server() -> None:
    serve, web = unit("pbmserv.service"), unit("pbmserv-web.service")
    for key in (
        "User",
        "Group",
        "WorkingDirectory",
        "Documentation",
        "StateDirectory",
        "Restart",
        "RestartPreventExitStatus",
        "StartLimitIntervalSec",
        "CapabilityBoundingSet",
        "NoNewPrivileges",
        "ProtectSystem",
        "ProtectHome",
        "PrivateTmp",
        "PrivateDevices",
        "RestrictAddressFamilies",
        "MemoryDenyWriteExecute",
        "SystemCallArchitectures",
        "SystemCallErrorNumber",
    ):
        assert web.get(key) == serve.get(key), key
    assert web["RestartPreventExitStatus"] == ["69 78"]  # port taken, bad setting: a person
    assert "ReadWritePaths" not in web  # it writes nothing (the spool is the mail's)
    assert "pbmserv.service" in web["After"][0].split()  # after the migration, when both start
    assert web["SystemCallFilter"] == serve["SystemCallFilter"][:2]


def test_serves_children_may_lower_their_priority() -> None:
    """The robots' child lowers its CPU priority always, the others by child_niceness (the
    web view among them): a unit that refused setpriority would kill them at each start."""
    filters = unit("pbmserv.service")["SystemCallFilter"]
    denied = [i for i, line in enumerate(filters) if line.startswith("~") and "@resources" in line]
    assert denied, filters
    allowed = [line for line in filters[denied[-1] + 1 :] if not line.startswith("~")]
    assert any("setpriority" in line.split() for line in allowed), filters


# --- the container ---------------------------------------------------------------------------


def test_the_image_and_the_compose_file_publish_the_web_view() -> None:
    dockerfile, compose = read("Dockerfile"), read("compose.yaml")
    image_listen = re.search(r"^\s+PBMSERV_WEB_LISTEN=(\S+) \\$", dockerfile, re.M)
    assert image_listen
    host, port = load_settings(
        environ={"PBMSERV_WEB_LISTEN": image_listen.group(1)}
    ).web_host_port or ("", 0)
    assert host == "0.0.0.0"  # reachable through the published port
    assert re.search(rf"^EXPOSE {port}$", dockerfile, re.M)
    composed = re.search(r"^\s+PBMSERV_WEB_LISTEN: \$\{PBMSERV_WEB_LISTEN-(\S+)\}$", compose, re.M)
    assert composed and composed.group(1) == image_listen.group(1)
    # On the host's loopback alone, where the host's proxy (the Caddyfile as it is) looks.
    assert f'"{caddy_upstream()}:{port}"' in compose


# --- documentation ---------------------------------------------------------------------------


def guide_section(title: str) -> str:
    text = read("OPERATIONS.md")
    assert f"\n## {title}\n" in text, f"no section {title!r}"
    return text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def commands_in(text: str, subcommand: str) -> list[list[str]]:
    found = []
    for block in re.findall(r"^```\w*\n(.*?)^```", text, re.M | re.S):
        for line in block.splitlines():
            command = re.search(rf"(?:^|[\s/])pbmserv ({subcommand}\b.*)$", line)
            if command:
                found.append(shlex.split(command.group(1), comments=True))
    return found


def test_the_guide_explains_the_web_view() -> None:
    section = guide_section("The web view")
    for needed in (
        "web_listen",
        "web_url",
        "PBMSERV_WEB_LISTEN",
        "PBMSERV_WEB_URL",
        "Caddyfile",
        "pbmserv-web.service",
        "child_niceness",
        "read-only",
        "no lock",
        Settings().web_listen,
    ):
        assert needed in section, needed
    webs = commands_in(section, "web")
    assert webs
    for argv in webs:
        assert accepts(argv).command == "web"
    (revoke,) = commands_in(section, "admin links")
    args = accepts(revoke)
    assert (args.group, args.action, args.board, args.userid) == ("links", "revoke", "17", "alice")


def test_the_readme_points_to_the_web_view() -> None:
    readme = (DEPLOY.parent / "README.md").read_text(encoding="utf-8")
    assert f"http://{Settings().web_listen}" in readme
    for needed in ("PBMSERV_WEB_LISTEN", "PBMSERV_WEB_URL", "deploy/Caddyfile", "`pbmserv web`"):
        assert needed in readme, needed
    # Its main command is still the one command that gives the site.
    setup = re.search(r"\.venv/bin/pbmserv db upgrade && \.venv/bin/pbmserv serve$", readme, re.M)
    assert setup and accepts(["serve"]).command == "serve"
