"""The web view's speed (issue 50): pages a second and the web process's CPU per page, and what
serving pages does to the moves the server processes beside it.

Run ``python bench/web.py`` (``--quick`` for a small try of half a minute, ``--with-moves`` for
the moves part too, ``--help`` for the options). Nothing is saved unless ``--record FILE``
(one JSON line a run, appended).

Pages: long games are played into a scratch database (a SQLite file, or a private schema of
``--pg URL``) through the command core, as mail plays them: Chameleon 11x11 and Extinction, each
move a random legal one that does not end the game, until ``--plies`` half-moves or no such
move is left (a Chameleon board of 11x11 has 121 cells: its games stop a little short of 121).
Then ``pbmserv web`` serves them as a process of its own, and a closed-loop client (``--threads``
threads, each with an HTTP/1.1 keep-alive connection) asks, for each game:

  (baseline     /robots.txt, a request that reads no database: the framework's own cost)
  page, cold    the position pages of the middle half of the game, each ply once (nothing
                kept of any of them: the state replayed from the nearest kept, projected, drawn)
  page, warm    one position page in the middle, again and again
  304           the same with its ETag in If-None-Match
  PNG, cold     the PNG of each of those positions once (their views kept from the cold
                pages: the PNG drawn from the SVG is what it costs)
  PNG, warm     one position's PNG again and again

pages/s is requests over the wall time; the web process's CPU comes from /proc/PID/stat
(utime + stime) before and after each row; the client's own CPU is printed too, since client
and server share the machine.

Moves (``--with-moves``): the Chameleon move load of bench/throughput.py (bench/rig/move_load.py:
many games by SMTP, each game's next move once the previous one's reply and board mails are
in) against `pbmserv serve` (on SQLite; with ``--pg``, PostgreSQL), three times in one run: with
no web view, with ``pbmserv web`` on the same database serving ``--page-rate`` pages a second
of those very boards (the position now and past positions, paced from one keep-alive
connection), and with no web view again. The web view runs as `pbmserv web` beside `serve` (as
the deploy kit's pbmserv-web unit runs it), so that "off" is no process at all. The ratio is the
moves a second with the site serving to the mean of the two runs without it.

Goals (issue 50): a page in <= 5 ms of the web process's CPU, a 304 in <= 1 ms, and moves a
second with the site serving 20 pages a second >= 0.9x those with the site off. Then the player
pages, bench/rig/web_players.py (issue 51: a page of 500 rated boards <= 10 ms, its feed <= 5 ms).
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import select  # noqa: E402

from bench.rig import (  # noqa: E402
    DEFAULT_PG,
    ROOT,
    announce,
    cpu_by_part,
    cpu_seconds,
    free_port,
    load_average,
    pbmserv_command,
    percentile,
    scratch_database,
    server_env,
    sign_off,
    wait_listening,
    workdir_for,
)
from bench.rig.move_load import (  # noqa: E402
    BenchGame,
    LoadResult,
    Rig,
    make_players,
    pairings,
    pbmserv_rig,
    plan_moves,
    run_load,
    set_up_by_mail,
)
from bench.rig.web_players import player_rows  # noqa: E402
from pbmserv.config import Settings  # noqa: E402
from pbmserv.core.context import CommandContext  # noqa: E402
from pbmserv.core.dispatch import dispatch_line  # noqa: E402
from pbmserv.db.engine import make_engine, session_factory, transaction  # noqa: E402
from pbmserv.db.models import GameRow  # noqa: E402
from pbmserv.games import find_game  # noqa: E402
from pbmserv.games.base import move_rng  # noqa: E402

GOAL_PAGE_MS, GOAL_304_MS, GOAL_RATIO = 5.0, 1.0, 0.9
#: A request with no database and no game: what uvicorn, Starlette and the headers cost.
BASELINE = "baseline: /robots.txt"
SMTP_THREADS = 8  # the move load's client threads, as bench/throughput.py's default
PLAYERS = (("alice", "secret1", "alice@bench.example"), ("bob", "hunter22", "bob@bench.example"))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="The web view's pages a second and CPU per page, and the moves a second "
        "beside it (issue 50).",
        epilog="Traffic stays on 127.0.0.1. Goals: a page <= 5 ms CPU, a 304 <= 1 ms, moves/s "
        "with the site serving 20 pages/s >= 0.9x the site off.",
    )
    parser.add_argument("--plies", type=int, default=200, help="half-moves a game (default 200)")
    parser.add_argument("--size", type=int, default=11, help="Chameleon board size (default 11)")
    parser.add_argument(
        "--boards", type=int, help="games of each kind (default 2; --quick 1): more cold pages"
    )
    parser.add_argument(
        "--requests", type=int, help="requests a warm row (default 2000; --quick 300)"
    )
    parser.add_argument("--threads", type=int, default=4, help="client threads (default 4)")
    parser.add_argument("--pg", help=f"PostgreSQL URL (e.g. {DEFAULT_PG}); default a SQLite file")
    parser.add_argument(
        "--with-moves", action="store_true", help="also the moves with the site off and on"
    )
    parser.add_argument(
        "--moves", type=int, help="moves a run of --with-moves (default 600; --quick 150)"
    )
    parser.add_argument(
        "--page-rate", type=float, default=20.0, help="pages a second beside the moves (default 20)"
    )
    parser.add_argument("--quick", action="store_true", help="a small try (half a minute)")
    parser.add_argument("--seed", type=int, default=1, help="of the random games (default 1)")
    parser.add_argument(
        "--max-seconds", type=float, default=300.0, help="time limit of each part (default 300)"
    )
    parser.add_argument("--record", type=Path, help="append the figures to FILE as a JSON line")
    args = parser.parse_args(argv)
    args.boards = args.boards or (1 if args.quick else 2)
    args.requests = args.requests or (300 if args.quick else 2000)
    args.moves = args.moves or (150 if args.quick else 600)
    if min(args.plies, args.boards, args.requests, args.threads, args.moves) < 1:
        parser.error("--plies, --boards, --requests, --threads and --moves must be positive")
    if not 3 <= args.size <= 26:
        parser.error("--size must be between 3 and 26")
    return args


# --- the games ---------------------------------------------------------------------------------


@dataclass
class Played:
    game: str
    board: int
    plies: int


def play_games(db_url: str, args: argparse.Namespace) -> list[Played]:
    """Two players, and ``--boards`` long games of each kind played through the command core
    (each command its own transaction, as a message's would be)."""
    engine = make_engine(db_url)
    factory = session_factory(engine)
    settings = Settings(confirm_addresses=False, db_url=db_url)

    def run(line: str, sender: str) -> None:
        with transaction(factory) as session:
            section = dispatch_line(CommandContext(session, settings, sender), line)
        if not section.ok:
            raise RuntimeError(f"{line!r} was refused: {section}")

    for userid, password, address in PLAYERS:
        run(f"signup {userid} {password}", address)
    played = []
    rng = random.Random(args.seed)
    try:
        for _ in range(args.boards):
            for name, options in (("chameleon", f" -size={args.size}"), ("extinction", "")):
                run(f"{name} challenge{options} alice bob", PLAYERS[0][2])
                with factory() as session:
                    newest = select(GameRow).order_by(GameRow.id.desc()).limit(1)
                    row = session.scalars(newest).one()
                    board, seed, stored = row.id, row.seed, row.state
                plies = _play_one(name, board, seed, stored, args.plies, rng, run)
                played.append(Played(name, board, plies))
                print(f"... {name} board {board}: {plies} half-moves", file=sys.stderr)
    finally:
        engine.dispose()
    return played


def _play_one(
    name: str,
    board: int,
    seed: int,
    stored: Any,
    plies: int,
    rng: random.Random,
    run: Callable[[str, str], None],
) -> int:
    """Random legal moves that do not end the game, until ``plies`` or none is left; returns
    the half-moves played."""
    game = find_game(name)
    assert game is not None
    state = game.load(stored)
    for ply in range(plies):
        seat = sorted(game.to_move(state).seats)[0]
        moves = [m for m in game.legal_moves(state, seat) if game.format_move(state, m) != "swap"]
        rng.shuffle(moves)
        chosen = None
        for move in moves[:80]:
            after = game.apply(state, move, move_rng(seed, ply))
            if game.outcome(after) is None:
                chosen = move, after
                break
        if chosen is None:
            return ply
        userid, password, address = PLAYERS[seat]
        run(
            f"{name} move {board} {userid} {password} {game.format_move(state, chosen[0])}", address
        )
        state = chosen[1]
    return plies


# --- the web process and the client -------------------------------------------------------------


class WebProcess:
    """`pbmserv web` on a free port of 127.0.0.1, its log in ``workdir/web.log``."""

    def __init__(self, db_url: str, workdir: Path) -> None:
        self.port = free_port()
        self.log_path = workdir / "web.log"
        command = [*pbmserv_command(), "web", "--db", db_url, "--listen", f"127.0.0.1:{self.port}"]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                command, env=server_env(), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT
            )
        if not wait_listening(self.port, 60, lambda: self.proc.poll() is None):
            self.stop()
            raise RuntimeError(f"pbmserv web did not start:\n{self.log_path.read_text()[-2000:]}")

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def tracebacks(self) -> int:
        return self.log_path.read_bytes().count(b"Traceback (most recent call last)")


@contextmanager
def web_process(db_url: str, workdir: Path) -> Iterator[WebProcess]:
    web = WebProcess(db_url, workdir)
    try:
        yield web
    finally:
        web.stop()


Request = tuple[str, dict[str, str]]  # path, headers


def get(
    connection: http.client.HTTPConnection, path: str, headers: dict[str, str]
) -> tuple[int, str | None, bytes]:
    """GET ``path`` on a keep-alive connection: the status, the ETag and the body."""
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    body = response.read()
    return response.status, response.getheader("ETag"), body


@dataclass
class Row:
    name: str
    requests: int = 0
    seconds: float = 0.0
    web_cpu: float = 0.0
    client_cpu: float = 0.0
    latencies: list[float] = field(default_factory=list, repr=False)
    bad: dict[int, int] = field(default_factory=dict)
    goal_ms: float | None = None

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else float("nan")

    @property
    def cpu_ms(self) -> float:
        return self.web_cpu * 1000 / self.requests if self.requests else float("nan")


def measure(
    name: str,
    web: WebProcess,
    requests: Sequence[Request],
    threads: int,
    expect: int,
    max_seconds: float,
    goal_ms: float | None = None,
) -> Row:
    """Ask ``requests`` (each once, in this order, over ``threads`` keep-alive connections);
    every answer should be ``expect``."""
    row = Row(name, goal_ms=goal_ms)
    lock = threading.Lock()
    following = iter(range(len(requests)))
    deadline = time.monotonic() + max_seconds

    def client(_number: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", web.port, timeout=60)
        mine: list[float] = []
        bad: dict[int, int] = {}
        try:
            while time.monotonic() < deadline:
                with lock:
                    i = next(following, None)
                if i is None:
                    break
                began = time.perf_counter()
                status, _tag, _body = get(connection, *requests[i])
                mine.append(time.perf_counter() - began)
                if status != expect:
                    bad[status] = bad.get(status, 0) + 1
        finally:
            connection.close()
            with lock:
                row.latencies += mine
                for status, count in bad.items():
                    row.bad[status] = row.bad.get(status, 0) + count

    workers = [threading.Thread(target=client, args=(n,)) for n in range(threads)]
    cpu0, own0, start = web.cpu(), time.process_time(), time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    row.seconds = time.monotonic() - start
    row.web_cpu, row.client_cpu = web.cpu() - cpu0, time.process_time() - own0
    row.requests = len(row.latencies)
    return row


def pages_part(played: list[Played], web: WebProcess, args: argparse.Namespace) -> list[Row]:
    """The rows of the pages part, for each kind of game."""
    connection = http.client.HTTPConnection("127.0.0.1", web.port, timeout=60)
    for path in ["/", "/games", "/rules/chameleon"] + [f"/g/{p.board}" for p in played]:
        get(connection, path, {})  # the process warm: imports, templates, the newest positions
    print("... the baseline", file=sys.stderr, flush=True)
    baseline: list[Request] = [("/robots.txt", {})] * args.requests
    rows = [measure(BASELINE, web, baseline, args.threads, 200, args.max_seconds)]
    shuffle = random.Random(args.seed)
    for kind in ("chameleon", "extinction"):
        games = [p for p in played if p.game == kind]
        middle = [
            (p.board, ply) for p in games for ply in range(p.plies // 4, p.plies * 3 // 4 + 1)
        ]
        shuffle.shuffle(middle)
        board, ply = games[0].board, games[0].plies // 2
        status, etag, _ = get(connection, f"/g/{board}/{ply}", {})
        if status != 200 or not etag:
            raise RuntimeError(f"/g/{board}/{ply}: {status}, ETag {etag!r}")
        title = f"{kind} ({', '.join(str(p.plies) for p in games)} half-moves)"
        n = args.requests
        runs: tuple[tuple[str, list[Request], int, float | None], ...] = (
            ("page, cold", [(f"/g/{b}/{y}", {}) for b, y in middle], 200, GOAL_PAGE_MS),
            ("page, warm", [(f"/g/{board}/{ply}", {})] * n, 200, GOAL_PAGE_MS),
            ("304", [(f"/g/{board}/{ply}", {"If-None-Match": etag})] * n, 304, GOAL_304_MS),
            ("PNG, cold", [(f"/g/{b}/{y}.png", {}) for b, y in middle], 200, None),
            ("PNG, warm", [(f"/g/{board}/{ply}.png", {})] * n, 200, None),
        )
        for name, requests, expect, goal in runs:
            print(f"... {kind}: {name}", file=sys.stderr, flush=True)
            rows.append(
                measure(
                    f"{title}: {name}", web, requests, args.threads, expect, args.max_seconds, goal
                )
            )
    connection.close()
    return rows


# --- the moves beside the site -------------------------------------------------------------------


@dataclass
class MovesRun:
    name: str
    result: LoadResult
    serve_cpu_ms: dict[str, float]
    pages: PageLoad | None = None


@dataclass
class PageLoad:
    """Pages of the boards in play, asked at ``rate`` a second from one keep-alive connection
    while the moves run: the position now, or a past one."""

    port: int
    games: Sequence[BenchGame]
    rate: float
    stop: threading.Event = field(default_factory=threading.Event)
    latencies: list[float] = field(default_factory=list, repr=False)
    failed: int = 0
    seconds: float = 0.0
    web_cpu_ms: float = float("nan")  # a page

    def run(self) -> None:
        rng = random.Random(7)
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        start = next_at = time.monotonic()
        try:
            while not self.stop.is_set():
                time.sleep(max(0.0, next_at - time.monotonic()))
                next_at = max(time.monotonic(), next_at + 1.0 / self.rate)
                game = rng.choice(self.games)
                path = f"/g/{game.board}"
                if rng.random() < 0.5:  # a past position
                    path += f"/{rng.randint(0, len(game.done_at))}"
                began = time.perf_counter()
                try:
                    status = get(connection, path, {})[0]
                except (OSError, http.client.HTTPException):
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                    status = 0
                self.latencies.append(time.perf_counter() - began)
                self.failed += status != 200
        finally:
            connection.close()
            self.seconds = time.monotonic() - start


def moves_part(args: argparse.Namespace) -> list[MovesRun]:
    """Three runs of moves on one server: the site off, serving, off again."""
    games_count = max(10, math.ceil(3 * args.moves / 40))
    total = 3 * args.moves + games_count
    players = make_players(max(2, min(2 * games_count, max(10, math.ceil(total / 150)))))
    kind = "postgres" if args.pg else "sqlite"
    with pbmserv_rig(kind, args.pg or DEFAULT_PG, "webmoves") as rig:
        print("... moves: set-up by mail", file=sys.stderr, flush=True)
        pairs = pairings(players, games_count)
        games = set_up_by_mail(rig, pairs, args.size, SMTP_THREADS, args.max_seconds)
        runs = [_moves_run("site off", rig, games, args, serving=False)]
        runs.append(_moves_run("site serving", rig, games, args, serving=True))
        runs.append(_moves_run("site off again", rig, games, args, serving=False))
    return runs


def _moves_run(
    name: str, rig: Rig, games: list[BenchGame], args: argparse.Namespace, serving: bool
) -> MovesRun:
    """``--moves`` more moves of ``games``; with ``serving``, `pbmserv web` on the same
    database serves ``--page-rate`` pages a second of them meanwhile."""
    print(f"... moves: {name}", file=sys.stderr, flush=True)
    server = rig.servers[0]
    with ExitStack() as stack:
        pages = pager = web = None
        if serving:
            web = stack.enter_context(web_process(rig.url, rig.workdir))
            warm = http.client.HTTPConnection("127.0.0.1", web.port, timeout=60)
            get(warm, "/", {})
            warm.close()
            pages = PageLoad(web.port, games, args.page_rate)
            pager = threading.Thread(target=pages.run)
        plan_moves(games, args.moves)
        parts0 = cpu_by_part(server.pid)
        web_cpu0 = web.cpu() if web else 0.0
        if pager is not None:
            pager.start()
        result = run_load(rig.ports, games, SMTP_THREADS, args.max_seconds, rig.tracker)
        parts1 = cpu_by_part(server.pid)
        if pages is not None and pager is not None and web is not None:
            pages.stop.set()
            pager.join()
            if pages.latencies:
                pages.web_cpu_ms = (web.cpu() - web_cpu0) * 1000 / len(pages.latencies)
    done = max(1, result.done)
    spent = {part: (parts1[part] - parts0.get(part, 0.0)) * 1000 / done for part in parts1}
    return MovesRun(name, result, spent, pages)


# --- the report ----------------------------------------------------------------------------------


def _verdict(value: float, goal: float | None, below: bool = True) -> str:
    if goal is None or math.isnan(value):
        return ""
    met = value <= goal if below else value >= goal
    return f"{'<=' if below else '>='} {goal:g}: {'met' if met else 'NOT met'}"


def print_pages(rows: list[Row]) -> None:
    print(
        "| request | requests | pages/s | web CPU ms/page | goal | latency p50 / p99 ms "
        "| client CPU ms/req |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        p50, p99 = percentile(row.latencies, 0.5) * 1000, percentile(row.latencies, 0.99) * 1000
        bad = f" ({row.bad} unexpected statuses)" if row.bad else ""
        print(
            f"| {row.name}{bad} | {row.requests} | {row.rate:,.1f} | {row.cpu_ms:.2f} "
            f"| {_verdict(row.cpu_ms, row.goal_ms)} | {p50:.1f} / {p99:.1f} "
            f"| {row.client_cpu * 1000 / max(1, row.requests):.2f} |"
        )


def print_moves(runs: list[MovesRun], rate: float) -> float:
    print(
        "| moves run | moves done | moves/s | latency p50 / p99 s "
        "| serve CPU ms/move by part | pages beside |"
    )
    print("|---|---|---|---|---|---|")
    for run in runs:
        result = run.result
        parts = ", ".join(f"{p} {ms:.1f}" for p, ms in sorted(run.serve_cpu_ms.items()))
        pages = "none"
        if run.pages is not None and run.pages.latencies:
            shown, count = run.pages, len(run.pages.latencies)
            pages = (
                f"{count} in {shown.seconds:.0f} s ({count / shown.seconds:.1f}/s), "
                f"p50 {percentile(shown.latencies, 0.5) * 1000:.0f} ms, "
                f"p99 {percentile(shown.latencies, 0.99) * 1000:.0f} ms, "
                f"web CPU {shown.web_cpu_ms:.1f} ms/page"
                + (f", {shown.failed} failed" if shown.failed else "")
            )
        notes = f" [{'; '.join(result.notes)}]" if result.notes else ""
        print(
            f"| {run.name}{notes} | {result.done}/{result.moves} | {result.done_rate:.1f} "
            f"| {result.p50:.2f} / {result.p99:.2f} | {parts} | {pages} |"
        )
    off = [r.result.done_rate for r in runs if r.pages is None]
    on = [r.result.done_rate for r in runs if r.pages is not None]
    ratio = on[0] / (sum(off) / len(off)) if on and off and all(off) else float("nan")
    print(
        f"\nmoves/s with the site serving {rate:g} pages/s over the mean of the site off: "
        f"{ratio:.3f}x (goal {_verdict(ratio, GOAL_RATIO, below=False)})"
    )
    return ratio


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.monotonic()
    engine_kind = "PostgreSQL" if args.pg else "SQLite"
    announce(
        f"pbmserv web view: {args.boards} Chameleon {args.size}x{args.size} and "
        f"{args.boards} Extinction game(s) of up to {args.plies} half-moves on {engine_kind}, "
        f"{args.threads} client threads, {args.requests} requests a warm row; "
        f"{os.cpu_count()} CPUs, load average {load_average()} at the start"
    )
    record: dict[str, object] = {"args": {k: str(v) for k, v in vars(args).items()}}
    with workdir_for("pbmbench-web-") as workdir:
        with scratch_database(args.pg, workdir, "web") as db:
            played = play_games(db.url, args)
            with web_process(db.url, workdir) as web:
                rows = pages_part(played, web, args) + player_rows(db.url, web, args, measure, get)
                tracebacks = web.tracebacks()
        print()
        print_pages(rows)
        if tracebacks:
            print(f"\n{tracebacks} tracebacks in the web view's log")
        record["pages"] = [
            {**asdict(r), "latencies": None, "rate": r.rate, "cpu_ms": r.cpu_ms} for r in rows
        ]
        if args.with_moves:
            runs = moves_part(args)
            print()
            record["moves_ratio"] = print_moves(runs, args.page_rate)
            record["moves"] = [
                {
                    "name": r.name,
                    "done_rate": r.result.done_rate,
                    "pages": len(r.pages.latencies) if r.pages else 0,
                    "web_cpu_ms_per_page": r.pages.web_cpu_ms if r.pages else None,
                }
                for r in runs
            ]
    if args.record:
        record["at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        with args.record.open("a") as out:
            out.write(json.dumps(record) + "\n")
        print(f"\nrecorded in {args.record}")
    sign_off(started)


if __name__ == "__main__":
    main()
