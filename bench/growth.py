"""Does a move cost more when the database is big? (issue 16)

Run ``python bench/growth.py`` (``--quick`` for 10 vs 10,000 games and 50,000 rows, ``--help``
for the options). For SQLite and PostgreSQL it builds two databases: a small one (10 stored
games) and a big one (100,000 stored games, half of them finished, plus 1,000,000 old processed
inbox rows and 1,000,000 old sent outbox rows). The big one is filled with bulk SQL (a recursive
CTE on SQLite, generate_series on PostgreSQL, then ANALYZE, or VACUUM ANALYZE as autovacuum
would), with each board's mail threads and 30 moves of history (3,000,000 rows), not
through the server. Then a real server on each (`pbmserv serve`, relaying to a local sink) gets
the same fixed number of real moves on boards opened by mail, as in throughput.py: many games in
parallel, a game's next move sent once its board mail arrived. The moves are played in rounds
that alternate between the small and the big database, so that both meet the same machine load
(other work on the machine moves the figures a lot). It prints the cost per move for both sizes
(wall time, the server's CPU and on PostgreSQL all postgres processes' CPU, from /proc) and
their ratio.

Then, on the big database of each engine, it captures the SQL of one real move (storing it as
the SMTP listener does, processing it, delivering its mail: the server's own functions, with a
statement listener) and prints the plan of each SELECT, and of each UPDATE or DELETE with a
WHERE (EXPLAIN QUERY PLAN on SQLite, EXPLAIN ANALYZE on PostgreSQL, inside a transaction that
is rolled back) with its time: the inbox claim, the rate-limit count, the board load, the
outbox due-mail claim, ...

All traffic stays on 127.0.0.1; every phase has a time limit.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import random
import re
import sys
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import Engine, event, text  # noqa: E402

from bench.rig import (  # noqa: E402
    DEFAULT_PG,
    announce,
    load_average,
    mail_bytes,
    postgres_cpu,
    postgres_cpu_since,
    sign_off,
)
from bench.rig.move_load import (  # noqa: E402
    BenchGame,
    LoadResult,
    Player,
    make_players,
    pairings,
    pbmserv_rig,
    plan_moves,
    run_load,
    set_up_by_mail,
)
from pbmserv.config import Settings  # noqa: E402
from pbmserv.core.accounts.passwords import hash_password  # noqa: E402
from pbmserv.db.engine import make_engine, session_factory  # noqa: E402
from pbmserv.games.chameleon import GAME  # noqa: E402
from pbmserv.inbound.inbox import store_message  # noqa: E402
from pbmserv.outbound.delivery import deliver_due  # noqa: E402
from pbmserv.runtime.processor import process_one  # noqa: E402

ENGINES = ("sqlite", "postgres")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Cost per move on a small and on a big database, SQLite and PostgreSQL.",
        epilog="Traffic stays on 127.0.0.1; PostgreSQL work happens in a private schema.",
    )
    parser.add_argument(
        "--games", type=int, help="stored games in the big database (default 100000; --quick 10000)"
    )
    parser.add_argument(
        "--small-games", type=int, default=10, help="stored games in the small one (default 10)"
    )
    parser.add_argument(
        "--rows",
        type=int,
        help="old inbox rows and old outbox rows each in the big database "
        "(default 1000000; --quick 50000)",
    )
    parser.add_argument(
        "--raw-bytes",
        type=int,
        default=1200,
        help="size of each stored outbox message (default 1200, about a board mail)",
    )
    parser.add_argument(
        "--moves", type=int, help="real moves timed on each database (default 600; --quick 150)"
    )
    parser.add_argument(
        "--live-games", type=int, help="boards those moves are played on (default 30; --quick 15)"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        help="the moves are played in this many rounds, alternating small and big database "
        "(default 4; --quick 2)",
    )
    parser.add_argument("--threads", type=int, default=8, help="client threads (default 8)")
    parser.add_argument(
        "--only", action="append", choices=ENGINES, help="one engine only (default both)"
    )
    parser.add_argument("--quick", action="store_true", help="a small run, for a fast try")
    parser.add_argument("--pg", default=DEFAULT_PG, help=f"PostgreSQL URL (default {DEFAULT_PG})")
    parser.add_argument(
        "--max-seconds",
        type=float,
        help="time limit of each phase (fill, set-up, moves; default 1200; --quick 300)",
    )
    args = parser.parse_args(argv)
    args.games = args.games or (10_000 if args.quick else 100_000)
    args.rows = args.rows if args.rows is not None else (50_000 if args.quick else 1_000_000)
    args.moves = args.moves or (150 if args.quick else 600)
    args.live_games = args.live_games or (15 if args.quick else 30)
    args.max_seconds = args.max_seconds or (300.0 if args.quick else 1200.0)
    args.only = args.only or list(ENGINES)
    args.rounds = max(1, min(args.rounds or (2 if args.quick else 4), args.moves))
    return args


# --- bulk filling ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Size:
    label: str
    games: int
    rows: int


def _sqlite_series(count: int) -> str:
    return f"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < {count}) "


def _time_sql(engine: Engine, seconds_ago: str) -> str:
    """SQL for the time ``seconds_ago`` (an SQL expression) before :base, in the column's
    own storage format (SQLite keeps naive UTC text with microseconds)."""
    if engine.dialect.name == "sqlite":
        return (
            f"(strftime('%Y-%m-%d %H:%M:%f', :base, '-' || ({seconds_ago}) || ' seconds') || '000')"
        )
    return f"(CAST(:base AS timestamptz) - make_interval(secs => {seconds_ago}))"


#: Entries of each stored board's move history.
HISTORY = 30


def fill(
    engine: Engine, size: Size, players: list[Player], raw_bytes: int, timeout: float
) -> float:
    """Bulk-insert ``size``'s stored games (half finished, two seats each, players from a pool
    of bulk users, each board's mail thread and HISTORY moves of history) and its old inbox and
    outbox rows, then gather statistics; return the seconds it took."""
    started = time.monotonic()
    sqlite = engine.dialect.name == "sqlite"
    users = max(10, size.games // 50)
    state = GAME.dump(GAME.new_game({"size": 11}, random.Random(0)))
    params = {
        "base": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S"),
        "hash": hash_password("bulk password"),
        "options": json.dumps({"size": 11}),
        "state": json.dumps(state),
        "version": GAME.STATE_VERSION,
        "result": json.dumps({"winners": [0], "reason": "bulk", "scores": None}),
        "pad": "x" * raw_bytes,
        "players": len(players),
    }

    def series(count: int) -> tuple[str, str]:
        """(prefix, FROM clause) giving x = 1..count."""
        if sqlite:
            return _sqlite_series(count), "n"
        return "", f"generate_series(1, {count}) AS n(x)"

    def as_json(param: str) -> str:
        return param if sqlite else f"CAST({param} AS json)"

    blob = "CAST({} AS BLOB)" if sqlite else "convert_to({}, 'UTF8')"
    # Recent for active boards (no reminder is due), weeks old for finished ones.
    recent = _time_sql(engine, "(x * 7) % 500000")
    weeks = _time_sql(engine, "3000000 + x * 11")
    old = _time_sql(engine, "100000 + x")
    statements = []
    prefix, source = series(users)
    statements.append(
        f"{prefix}INSERT INTO users (userid, display_id, full_name, email, password_hash, "
        f"disabled, created_at) SELECT 'bulk' || x, 'bulk' || x, '', "
        f"'bulk' || x || '@bulk.example', :hash, {'0' if sqlite else 'false'}, {old} "
        f"FROM {source}"
    )
    if size.games:
        prefix, source = series(size.games)
        statements.append(
            f"{prefix}INSERT INTO games (game, options, seed, status, ply, to_move, state, "
            "state_version, version, result, created_at, updated_at) "
            f"SELECT 'chameleon', {as_json(':options')}, x, "
            "CASE WHEN x % 2 = 0 THEN 'finished' ELSE 'active' END, 0, "
            "CASE WHEN x % 2 = 0 THEN '' ELSE '0' END, "
            f"{as_json(':state')}, :version, 1, "
            f"CASE WHEN x % 2 = 0 THEN {as_json(':result')} ELSE NULL END, "
            f"CASE WHEN x % 2 = 0 THEN {weeks} ELSE {recent} END, "
            f"CASE WHEN x % 2 = 0 THEN {weeks} ELSE {recent} END "
            f"FROM {source}"
        )
        for seat, shift in ((0, 0), (1, 1)):
            statements.append(
                "INSERT INTO seats (game_id, seat, user_id) "
                f"SELECT g.id, {seat}, u0.id + (g.id + {shift}) % {users} FROM games g, "
                "(SELECT min(id) AS id FROM users WHERE userid LIKE 'bulk%') u0"
            )
        # Each seat's board-mail thread (an active board's with its reply-address token),
        # and HISTORY entries of each board's move history.
        statements.append(
            "INSERT INTO board_mail (game_id, user_id, seat, token, first_message_id, "
            "last_message_id) SELECT s.game_id, s.user_id, s.seat, "
            "CASE WHEN g.status = 'active' THEN 'bulk' || s.game_id || 's' || s.seat END, "
            "'<bulk-first-' || s.game_id || '-' || s.seat || '@localhost>', "
            "'<bulk-last-' || s.game_id || '-' || s.seat || '@localhost>' "
            "FROM seats s JOIN games g ON g.id = s.game_id"
        )
        prefix, source = series(HISTORY)
        statements.append(
            f"{prefix}INSERT INTO moves (game_id, ply, seat, kind, text, message_id, created_at) "
            "SELECT g.id, x - 1, (x - 1) % 2, 'move', 'a' || (1 + x % 11), "
            f"'<bulk-move-' || g.id || '-' || x || '@bulk.example>', {old} "
            f"FROM games g, {source}"
        )
    if size.rows:
        # One old message in ten came from one of the benchmark's players.
        address = (
            "CASE WHEN x % 10 = 0 THEN 'p' || ((x / 10) % :players) || '@bench.example' "
            "ELSE 'old' || (x % 5000) || '@bulk.example' END"
        )
        prefix, source = series(size.rows)
        header = (
            "'From: ' || a || char(10) || 'To: pbmserv@localhost' || char(10) || "
            "'Message-ID: <bulk' || x || '@bulk.example>' || char(10) || "
            "'X-Pbmserv-Redacted: subject and body removed once processed' || char(10)"
        )
        if not sqlite:
            header = header.replace("char(10)", "chr(10)")
        statements.append(
            f"{prefix}INSERT INTO inbox (dedupe_key, envelope_from, from_address, raw, "
            "received_at, status, attempts, processed_at, summary) "
            f"SELECT 'mid:<bulk' || x || '@bulk.example>|' || a, a, a, {blob.format(header)}, "
            f"{old}, 'done', 0, {old}, "
            "'message-id=<bulk' || x || '@bulk.example> chameleon move board=' || x "
            f"FROM (SELECT x, {address} AS a FROM {source}) AS m"
        )
        prefix, source = series(size.rows)
        body = "'Subject: chameleon board ' || x || char(10) || :pad"
        if not sqlite:
            body = body.replace("char(10)", "chr(10)")
        statements.append(
            f"{prefix}INSERT INTO outbox (inbox_id, message_id, recipient, kind, raw, status, "
            "attempts, next_attempt_at, created_at, sent_at) "
            "SELECT i0.id + x - 1, '<bulk-out' || x || '@localhost>', "
            "'old' || (x % 5000) || '@bulk.example', "
            "CASE WHEN x % 3 = 0 THEN 'reply' ELSE 'board' END, "
            f"{blob.format(body)}, 'sent', 1, {old}, {old}, {old} "
            f"FROM {source}, (SELECT min(id) AS id FROM inbox) AS i0"
        )
    with engine.begin() as conn:
        if not sqlite:  # bounded in time as well as in rows
            conn.exec_driver_sql(f"SET LOCAL statement_timeout = '{int(timeout)}s'")
        for statement in statements:
            used = {k: v for k, v in params.items() if f":{k}" in statement}
            conn.execute(text(statement), used)
    if sqlite:
        raw = engine.raw_connection()  # outside any transaction (the engine opens one)
        try:
            # Statistics, as `PRAGMA optimize` gathers them on a database in use.
            raw.cursor().execute("ANALYZE")
            raw.cursor().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            raw.close()
    else:
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("VACUUM ANALYZE")
    return time.monotonic() - started


# --- one measurement ---------------------------------------------------------------------------


@dataclass
class Measured:
    """The moves timed on one database, summed over the rounds."""

    engine: str
    size: Size
    fill_seconds: float = 0.0
    planned: int = 0
    done: int = 0
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    postgres_seconds: float = 0.0
    round_ms: list[float] = field(default_factory=list)  # wall ms per move, each round
    plans: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def per_move(self, seconds: float) -> float:
        return seconds * 1000 / self.done if self.done else float("nan")

    def add(self, result: LoadResult, cpu: float, postgres: float) -> None:
        self.planned += result.moves
        self.done += result.done
        self.seconds += result.elapsed
        self.cpu_seconds += cpu
        self.postgres_seconds += postgres
        if result.done:
            self.round_ms.append(result.elapsed * 1000 / result.done)
        self.notes += result.notes


def measure(kind: str, args: argparse.Namespace) -> list[Measured]:
    """Both database sizes of one engine, each with its own server, the moves played in
    alternate rounds (small, big, small, big ...) so that both meet the same machine load."""
    sizes = (Size("small", args.small_games, 0), Size("big", args.games, args.rows))
    measured = [Measured(kind, size) for size in sizes]
    players = make_players(max(10, args.live_games // 2))
    pairs = pairings(players, args.live_games)
    try:
        with ExitStack() as stack:
            rigs, boards = [], []
            for m in measured:

                def prepare(engine: Engine, m: Measured = m) -> None:
                    print(f"... {kind} {m.size.label}: filling", file=sys.stderr, flush=True)
                    m.fill_seconds = fill(engine, m.size, players, args.raw_bytes, args.max_seconds)

                label = f"growth{m.size.label}"
                rigs.append(stack.enter_context(pbmserv_rig(kind, args.pg, label, prepare=prepare)))
                print(f"... {kind} {m.size.label}: set-up by mail", file=sys.stderr, flush=True)
                boards.append(set_up_by_mail(rigs[-1], pairs, 11, args.threads, args.max_seconds))
            for number in range(args.rounds):
                share = args.moves // args.rounds + (number < args.moves % args.rounds)
                print(f"... {kind} round {number + 1}: {share} moves each", file=sys.stderr)
                for m, rig, games in zip(measured, rigs, boards, strict=True):
                    plan_moves(games, share)
                    server = rig.servers[0]
                    before = server.cpu_seconds(), postgres_cpu()
                    result = run_load(rig.ports, games, args.threads, args.max_seconds, rig.tracker)
                    spent = server.cpu_seconds() - before[0], postgres_cpu_since(before[1])
                    m.add(result, *spent)
            rigs[-1].servers[0].stop()
            measured[-1].plans = explain_one_move(rigs[-1].url, rigs[-1].workdir, boards[-1][0])
    except Exception as error:  # one engine's failure must not lose the other's figures
        measured[-1].notes.append(f"failed: {type(error).__name__}: {error}")
    return measured


# --- the hot statements ------------------------------------------------------------------------

_LABELS = (
    ("duplicate check", r"FROM inbox\b.*dedupe_key"),
    ("inbox claim", r"FROM inbox\b.*(FOR UPDATE|LIMIT)"),
    ("inbox marked processed", r"^UPDATE inbox\b"),
    ("rate-limit count", r"count\(\*\).*FROM inbox"),
    ("outbox due-mail claim", r"^UPDATE outbox\b.*status = 'pending'.*LIMIT"),
    ("outbox mail marked sent", r"^UPDATE outbox\b"),
    ("game row written", r"^UPDATE games\b"),
    ("board load", r"FROM games\b.*WHERE games\.id ="),
    ("user lookup", r"FROM users\b.*WHERE users\.userid ="),
    ("failed-login count", r"FROM auth_failures"),
    ("seats of the board", r"FROM seats\b"),
    ("observers", r"FROM users JOIN observers|FROM observers"),
    ("outbox row by id", r"FROM outbox\b.*WHERE outbox\.id ="),
    ("inbox row by id", r"FROM inbox\b.*WHERE inbox\.id ="),
)


def _label(sql: str) -> str:
    flat = " ".join(sql.split())
    return next((name for name, pattern in _LABELS if re.search(pattern, flat, re.I)), "other")


def explain_one_move(url: str, workdir: Path, game: BenchGame) -> list[str]:
    """Store, process and deliver one more real move in this process, capturing its SQL;
    return a report of each distinct SELECT, UPDATE and DELETE: label, SQL, plan and time
    (an UPDATE is timed inside a transaction that is rolled back)."""
    engine = make_engine(url)
    factory = session_factory(engine)
    settings = replace(
        Settings(confirm_addresses=False), db_url=url, relay=None, spool=workdir / "explain-spool"
    )
    captured: list[tuple[str, object]] = []
    kinds: Counter[str] = Counter()

    def note(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        kind = statement.split(None, 1)[0].upper()
        kinds[kind] += 1
        if kind == "SELECT" or (kind in ("UPDATE", "DELETE") and "WHERE" in statement):
            if executemany:  # one set of values shows the plan
                parameters = parameters[0]
            captured.append((statement, parameters))

    def committed(conn) -> None:  # type: ignore[no-untyped-def]
        kinds["(commits)"] += 1

    player, move = game.next_move(random.Random(99))
    _, raw = mail_bytes(player.address, game.line(player, move))
    event.listen(engine, "before_cursor_execute", note)
    event.listen(engine, "commit", committed)
    try:
        store_message(factory, settings, raw, player.address)
        process_one(factory, settings)
        asyncio.run(deliver_due(factory, settings))
    finally:
        event.remove(engine, "before_cursor_execute", note)
        event.remove(engine, "commit", committed)
    seen: dict[str, object] = {}
    for statement, parameters in captured:
        seen.setdefault(statement, parameters)
    order = [name for name, _ in _LABELS] + ["other"]
    commits = kinds.pop("(commits)", 0)
    counted = ", ".join(f"{n} {kind}" for kind, n in kinds.most_common())
    report = [
        f"  one move stored, processed and its mail delivered: {kinds.total()} statements "
        f"({counted}) in {commits} committed transactions"
    ]
    for statement, parameters in sorted(seen.items(), key=lambda s: order.index(_label(s[0]))):
        report.append(_explain(engine, statement, parameters))
    engine.dispose()
    return report


def _explain(engine: Engine, statement: str, parameters: object) -> str:
    sqlite = engine.dialect.name == "sqlite"
    flat = re.sub(r"^SELECT (.+?) FROM ", "SELECT ... FROM ", " ".join(statement.split()))
    flat = re.sub(r"^UPDATE (\w+) SET (.+?) WHERE ", r"UPDATE \1 SET ... WHERE ", flat)
    shown = flat if len(flat) <= 400 else flat[:397] + "..."
    with engine.connect() as conn:
        transaction = conn.begin()
        try:
            prefix = "EXPLAIN QUERY PLAN " if sqlite else "EXPLAIN (ANALYZE, BUFFERS) "
            rows = conn.exec_driver_sql(prefix + statement, parameters).all()  # type: ignore[arg-type]
            if sqlite:
                plan = [f"    {'  ' * _depth(rows, r)}{r[-1]}" for r in rows]
            else:
                plan = [f"    {r[0]}" for r in rows]
            repeats = 20
            started = time.perf_counter()
            for _ in range(repeats):
                result = conn.exec_driver_sql(statement, parameters)  # type: ignore[arg-type]
                if result.returns_rows:
                    result.all()
            each = (time.perf_counter() - started) / repeats * 1000
        finally:
            transaction.rollback()
    return f"  [{_label(statement)}] {each:.3f} ms per run\n    {shown}\n" + "\n".join(plan)


def _depth(rows: list, row: tuple) -> int:  # type: ignore[type-arg]
    """Nesting of an EXPLAIN QUERY PLAN row (id, parent, notused, detail)."""
    parents = {r[0]: r[1] for r in rows}
    depth, parent = 0, row[1]
    while parent in parents:
        depth, parent = depth + 1, parents[parent]
    return depth


# --- the report --------------------------------------------------------------------------------


def _number(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.1f}"


def _ratio(big: Measured, small: Measured, seconds: str) -> str:
    ratio = big.per_move(getattr(big, seconds)) / small.per_move(getattr(small, seconds))
    return f"{ratio:.2f}x"


def report(results: list[Measured], args: argparse.Namespace) -> None:
    print(
        "| database | stored games | old inbox / outbox rows | fill s | moves done "
        "| wall ms per move (each round) | server CPU ms per move | postgres CPU ms per move |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for m in results:
        rounds = ", ".join(f"{ms:.0f}" for ms in m.round_ms)
        postgres = m.per_move(m.postgres_seconds) if m.engine == "postgres" else float("nan")
        print(
            f"| {'SQLite' if m.engine == 'sqlite' else 'PostgreSQL'} | {m.size.games:,} "
            f"| {m.size.rows:,} / {m.size.rows:,} | {m.fill_seconds:.1f} "
            f"| {m.done}/{m.planned} | {_number(m.per_move(m.seconds))} ({rounds}) "
            f"| {_number(m.per_move(m.cpu_seconds))} | {_number(postgres)} |"
        )
    print()
    for kind in args.only:
        pair = [m for m in results if m.engine == kind]
        if len(pair) == 2 and all(m.done for m in pair):
            small, big = pair
            parts = [f"wall {_ratio(big, small, 'seconds')}"]
            parts.append(f"server CPU {_ratio(big, small, 'cpu_seconds')}")
            if kind == "postgres":
                parts.append(f"postgres CPU {_ratio(big, small, 'postgres_seconds')}")
            print(f"{kind}: cost per move, big / small: " + ", ".join(parts))
    for m in results:
        if m.notes:
            print(f"- {m.engine} {m.size.label}: " + "; ".join(dict.fromkeys(m.notes)))
    for m in results:
        if m.plans:
            print(
                f"\nSQL of one move on the big {m.engine} database "
                f"({m.size.games:,} games, {m.size.rows:,} inbox and outbox rows):"
            )
            print("\n".join(m.plans))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.monotonic()
    announce(
        f"pbmserv growth: {args.moves} moves on {args.live_games} live boards, "
        f"{args.small_games:,} vs {args.games:,} stored games (half finished) and "
        f"0 vs {args.rows:,} old inbox and outbox rows; load average {load_average()} at the start",
    )
    results = []
    for kind in ENGINES:
        if kind in args.only:
            results += measure(kind, args)
    print()
    report(results, args)
    sign_off(started)


if __name__ == "__main__":
    main()
