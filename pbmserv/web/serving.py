"""`pbmserv web`: the read-only site (:func:`pbmserv.web.app.make_app`) served by uvicorn, in a
process of its own (`serve` starts one as a child, runtime/child_processes.py).

- The socket is bound here, before uvicorn starts: a port in use (or an address this host does
  not have) is one line on standard error and exit 69, as for `serve`'s listener.
- No reload, no workers: one process, as systemd or `serve` run it.
- Proxy headers (``X-Forwarded-For``, ``X-Forwarded-Proto``) are believed only from the
  loopback, where the TLS proxy in front of it runs (deploy/Caddyfile).
- Logging is pbmserv's (logs.py): uvicorn's lines go through the same handler, and its access
  log is off, since a private link's token must never reach a log. Instead one line every ten
  minutes counts the requests answered by status class, and ``--verbose`` logs each request
  with the token masked.
- SIGTERM and SIGINT stop it gracefully (the requests in hand are answered) with exit 0; so does
  the end of ``parent_fd``'s pipe when `serve`, its parent, is gone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import Any

import uvicorn

from pbmserv.config import Settings
from pbmserv.web.metrics import Answered

log = logging.getLogger("pbmserv.web")

EX_UNAVAILABLE = 69  # sysexits: the port to listen on is taken (as `serve` says it)
EX_CONFIG = 78  # sysexits: a setting is wrong
#: Where a proxy's forwarded headers are believed from: the proxy on this host.
TRUSTED_PROXIES = ["127.0.0.1", "::1"]
#: How often the count of requests answered is logged (when there were any).
COUNT_SECONDS = 600
#: How long a stop waits for the requests in hand before cutting them short.
GRACEFUL_SECONDS = 10
BACKLOG = 1024
_TOKEN = re.compile(r"^/p/[^/.?]+")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def masked(path: str) -> str:
    """``path`` fit for a log: a private link's token replaced (``/p/…/3``)."""
    return _TOKEN.sub("/p/…", path)


class CountedRequests:
    """The app, counting the responses it gives by status class (2xx, 3xx, ...), for the line
    :meth:`report` logs instead of an access log."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.counts: Counter[str] = Counter()
        self.since = time.monotonic()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        seen = Answered()
        try:
            await seen.call(self.app, scope, receive, send)
        finally:
            status = seen.status
            # No status: the client left before the answer began.
            self.counts[f"{status // 100}xx" if status else "unanswered"] += 1
            if log.isEnabledFor(logging.DEBUG):
                client = scope.get("client") or ("-", 0)
                log.debug(
                    "%s %s %s",
                    scope.get("method"),
                    masked(scope.get("path", "")),
                    status,
                    extra={"fields": {"client": client[0]}},
                )

    def report(self, final: bool = False) -> None:
        """Log how many requests were answered since the last report (none: no line, unless
        ``final``), and start counting afresh."""
        total = sum(self.counts.values())
        if total or final:
            minutes = (time.monotonic() - self.since) / 60
            log.info(
                "web view answered %s request%s in %.0f min",
                total,
                "" if total == 1 else "s",
                minutes,
                extra={"fields": {"requests": total, **dict(sorted(self.counts.items()))}},
            )
        self.counts.clear()
        self.since = time.monotonic()

    async def report_now(self) -> None:
        """uvicorn's ``callback_notify``: called every ``COUNT_SECONDS``."""
        self.report()


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn's own, but for raising the signal again once stopped (which would end the
        process by the signal): a stop asked for by SIGTERM or SIGINT is a clean one, exit 0."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {
            sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGTERM, signal.SIGINT)
        }
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` and listening (OSError or OverflowError if not)."""
    family, kind, proto, _name, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart, not a second one
        sock.bind(address)
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


def _stop_when_closed(fd: int, server: uvicorn.Server) -> None:
    """Stop ``server`` once the other end of the pipe ``fd`` is closed (the parent is gone,
    however it ended); what is written to it means nothing here."""

    def watch() -> None:
        while True:
            try:
                data = os.read(fd, 4096)
            except InterruptedError:
                continue
            except OSError:
                data = b""
            if not data:
                log.info("the parent process is gone; stopping")
                server.should_exit = True
                return

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def run_web(settings: Settings, host: str, port: int, *, parent_fd: int | None = None) -> int:
    """Serve the web view on ``host``:``port`` until SIGTERM or SIGINT (or, given
    ``parent_fd``, until its pipe's other end closes); the exit code: 0 after a clean stop, 69
    when it cannot listen there (78: no such port)."""
    where = f"[{host.strip('[]')}]:{port}" if ":" in host else f"{host}:{port}"
    if not 0 <= port <= 65535:  # the system would take it modulo 65536
        print(f"pbmserv: the web view cannot listen on {where}: no such port", file=sys.stderr)
        return EX_CONFIG
    try:
        sock = listening_socket(host, port)
    except (OSError, OverflowError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        print(f"pbmserv: the web view cannot listen on {where}: {reason}", file=sys.stderr)
        return EX_UNAVAILABLE
    from pbmserv.web.app import make_app

    counted = CountedRequests(make_app(settings))
    config = uvicorn.Config(
        counted,
        log_config=None,  # pbmserv's (logs.py), set up already
        # uvicorn's own notices (started, shutting down) only with --verbose; errors always.
        log_level=None if log.isEnabledFor(logging.DEBUG) else logging.WARNING,
        access_log=False,
        proxy_headers=True,
        forwarded_allow_ips=TRUSTED_PROXIES,
        server_header=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
        callback_notify=counted.report_now,
        timeout_notify=COUNT_SECONDS,
    )
    server = _Server(config)
    if parent_fd is not None:
        _stop_when_closed(parent_fd, server)
    log.info("web view listening on http://%s (pid %s)", where, os.getpid())
    try:
        server.run(sockets=[sock])
    except SystemExit as exit_:  # uvicorn gives up so when the app fails to start
        return exit_.code if isinstance(exit_.code, int) and exit_.code else 1
    finally:
        sock.close()
    counted.report(final=True)
    log.info("web view stopped")
    return 0 if server.started else 1
