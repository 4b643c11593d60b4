"""End-to-end mail throughput of pbmserv next to bare SMTP sinks (issue 16, "Ten times faster
end to end"), in one table.

Run ``python bench/throughput.py`` (``--quick`` for a run of about 200 moves, ``--help`` for
the options); ``--baseline REV`` compares the work tree with another commit instead (below).
Every row uses the same client: smtplib in N threads sending legal Chameleon moves
(generated with the game module, each with its mover's password) across many concurrent games.

Rows:
  smtp-sink     Postfix's smtp-sink (``--smtp-sink PATH``, default /usr/sbin/smtp-sink), if present
  aiosmtpd      aiosmtpd's bare ``Sink`` handler through a ``Controller``, in its own process
  sqlite        ``pbmserv serve`` on a fresh SQLite file, relaying to a local sink
  postgres      ``pbmserv serve`` on PostgreSQL (``--pg URL``; a private schema, dropped after)
  sqlite-w2     ``pbmserv serve --workers 2`` on a fresh SQLite file (two worker processes)
  postgres-x2   two ``pbmserv serve`` processes on one PostgreSQL schema
  sqlite-paced, postgres-paced
                ``pbmserv serve`` under a sustained load: moves sent evenly at ``--paced-rate``
                a second (not a burst), for the board latency at a rate the server keeps up with
  sqlite-burst, postgres-burst
                an open-loop burst: every move sent as fast as the listener takes it, without
                waiting for any mail (each game's moves in order); "accepted msg/s" is then the
                rate the listener stored messages at while processing ran

For the sinks the client sends without waiting (no board comes back) and the accept rate is
over all messages; a sink's row plays its moves again until it has run 10 seconds at least.
For pbmserv the players sign up and the boards are opened by mail first;
then a game's next move is sent only after the previous move's reply and both board mails
reached the relay, so the load is many games in parallel. "accepted msg/s" is then the opening
burst (the first move of every game, sent back to back); "done/s" counts moves whose reply and
both board mails reached the relay, over the steady window (10% to 90% of completions);
latency runs from the client's 250 to the second board mail reaching the relay. Ratios are to
the aiosmtpd Sink's accept rate. CPU ms per move of each server process comes from
/proc/PID/stat (utime + stime) before and after the moves.

A last line measures the password path: a cold cache, every message from a user never seen
before (the server remembers a verified password for 10 minutes, so a fresh user per message
makes every check pay argon2), next to the same users' second moves with the cache warm.

Before and after in one run (issue 52): ``--baseline REV`` builds REV's server in a venv of its
own (cached in .bench-cache/), then runs the rows production (pictures + DKIM, a key made for
the run), pictures (no DKIM) and text (``PBMSERV_BOARD_PICTURES=false``) for REV and for the
work tree in turn, ``--rounds`` times each (SQLite, closed loop), and prints server CPU per move
by part, moves/s and the ratios new/old beside the issue's goals (bench/rig/baseline.py).

All traffic stays on 127.0.0.1; every phase has a time limit, after which the row prints what it
has, with a note.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rig import (  # noqa: E402
    DEFAULT_PG,
    SinkProcess,
    announce,
    load_average,
    postgres_cpu,
    postgres_cpu_since,
    sign_off,
)
from bench.rig import baseline as side_by_side  # noqa: E402
from bench.rig.basics import workdir_for  # noqa: E402
from bench.rig.move_load import (  # noqa: E402
    BenchGame,
    LoadResult,
    Player,
    make_players,
    merge_results,
    pairings,
    pbmserv_rig,
    plan_moves,
    run_load,
    set_up_by_mail,
)
from pbmserv.games.chameleon import GAME  # noqa: E402

ROWS = (
    "smtp-sink",
    "aiosmtpd",
    "sqlite",
    "sqlite-w2",
    "postgres",
    "postgres-x2",
    "sqlite-paced",
    "postgres-paced",
    "sqlite-burst",
    "postgres-burst",
    "password",
)
TITLES = {
    "smtp-sink": "Postfix smtp-sink",
    "aiosmtpd": "aiosmtpd Sink (bare)",
    "sqlite": "pbmserv serve, SQLite",
    "sqlite-w2": "pbmserv serve --workers 2, SQLite",
    "postgres": "pbmserv serve, PostgreSQL",
    "postgres-x2": "2 x pbmserv serve, one PostgreSQL",
    "sqlite-paced": "pbmserv serve, SQLite, paced",
    "postgres-paced": "pbmserv serve, PostgreSQL, paced",
    "sqlite-burst": "pbmserv serve, SQLite, open-loop burst",
    "postgres-burst": "pbmserv serve, PostgreSQL, open-loop burst",
}
#: A bare sink's row runs at least this long (one pass of the moves takes about a second).
SINK_MIN_SECONDS = 10.0


@dataclass
class Row:
    name: str
    result: LoadResult | None = None
    cpu_ms_per_move: list[float] = field(default_factory=list)
    #: The server's CPU seconds (all its processes) over the run's seconds.
    cores: float | None = None
    notes: list[str] = field(default_factory=list)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="End-to-end mail throughput of pbmserv next to bare SMTP sinks (issue 16).",
        epilog="Rows: "
        + ", ".join(ROWS)
        + "; with --baseline: "
        + ", ".join(side_by_side.ROWS)
        + ". Traffic stays on 127.0.0.1.",
    )
    parser.add_argument("--moves", type=int, help="moves per row (default 2000; --quick 200)")
    parser.add_argument("--threads", type=int, default=8, help="client threads (default 8)")
    parser.add_argument(
        "--games", type=int, help="concurrent games (default moves/20, at least 10)"
    )
    parser.add_argument("--size", type=int, default=11, help="Chameleon board size (default 11)")
    parser.add_argument(
        "--only",
        action="append",
        choices=ROWS + tuple(side_by_side.ROWS),
        help="run only this row (repeat for several); default: all (with --baseline: "
        + ", ".join(side_by_side.ROWS)
        + ")",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="compare the work tree with REV (any git revision): build REV's server in a venv "
        "of its own (cached in .bench-cache/), run each row for both in turn, print the ratios",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=2,
        help="with --baseline: rounds of old then new, each row (default 2, at least 2)",
    )
    parser.add_argument("--quick", action="store_true", help="about 200 moves, for a fast try")
    parser.add_argument(
        "--paced-rate",
        type=float,
        default=30.0,
        help="moves a second of the paced rows (default 30: well within one process's pace)",
    )
    parser.add_argument("--pg", default=DEFAULT_PG, help=f"PostgreSQL URL (default {DEFAULT_PG})")
    parser.add_argument(
        "--smtp-sink",
        default="/usr/sbin/smtp-sink",
        help="Postfix smtp-sink binary (default /usr/sbin/smtp-sink; the row is skipped if absent)",
    )
    parser.add_argument(
        "--cold-users",
        type=int,
        help="messages of the password path, each from a new user (default 100; --quick 40)",
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        help="time limit of each row's moves, and of its set-up (default 900; --quick 240)",
    )
    args = parser.parse_args(argv)
    args.moves = args.moves or (200 if args.quick else 2000)
    args.games = args.games or max(10, args.moves // (10 if args.quick else 20))
    args.games = min(args.games, args.moves)
    args.max_seconds = args.max_seconds or (240.0 if args.quick else 900.0)
    args.cold_users = args.cold_users or (40 if args.quick else 100)
    args.cold_users += args.cold_users % 2
    compared = tuple(side_by_side.ROWS)
    args.only = args.only or list(compared if args.baseline else ROWS)
    wrong = [name for name in args.only if (name in compared) != bool(args.baseline)]
    if wrong:
        with_or_not = "without" if args.baseline else "with"
        parser.error(f"--only {wrong[0]} is a row of the run {with_or_not} --baseline")
    if args.baseline and args.rounds < 2:
        parser.error("--rounds must be 2 or more (old, new, old, new at least)")
    if args.moves < 1 or args.threads < 1 or not 3 <= args.size <= 26:
        parser.error("--moves and --threads must be positive, --size between 3 and 26")
    if args.moves // args.games + 1 >= args.size * args.size // 2:
        parser.error("too many moves per game for the board size: use more --games")
    return args


def player_count(moves: int, games: int) -> int:
    """Enough players to stay well under the server's 300 messages per sender per hour, and
    at most two a game."""
    return max(2, min(2 * games, max(10, math.ceil((moves + games) / 150))))


# --- rows ------------------------------------------------------------------------------------


def local_games(pairs: list[tuple[Player, Player]], size: int) -> list[BenchGame]:
    """Games that exist only in the client (for the sinks): boards 1.., fresh positions."""
    return [
        BenchGame(
            index=i,
            board=i + 1,
            players=pair,
            state=GAME.new_game({"size": size}, random.Random(i)),
            seed=i,
            planned=0,
        )
        for i, pair in enumerate(pairs)
    ]


def sink_row(name: str, args: argparse.Namespace) -> Row:
    row = Row(name)
    if name == "smtp-sink":
        binary = shutil.which(args.smtp_sink) or (
            args.smtp_sink if os.access(args.smtp_sink, os.X_OK) else None
        )
        if binary is None:
            row.notes.append(
                f"skipped: no {args.smtp_sink} (Debian package postfix; or give --smtp-sink PATH)"
            )
            return row
        as_root = ["-u", "nobody"] if os.geteuid() == 0 else []
        # smtp-sink [options] host:port backlog
        command = lambda port: [binary, *as_root, f"127.0.0.1:{port}", "256"]  # noqa: E731
    else:
        here = Path(__file__).resolve().parent / "rig" / "__main__.py"
        command = lambda port: [sys.executable, str(here), "aiosmtpd-sink", str(port)]  # noqa: E731
    pairs = pairings(make_players(player_count(args.moves, args.games)), args.games)
    results: list[LoadResult] = []
    spent = 0.0
    try:
        with SinkProcess(command) as sink:
            # Fresh games each pass, until the row has run SINK_MIN_SECONDS.
            while spent < min(SINK_MIN_SECONDS, args.max_seconds):
                games = local_games(pairs, args.size)
                plan_moves(games, args.moves)
                limit = args.max_seconds - spent
                seed = len(results) + 1
                results.append(run_load([sink.port], games, args.threads, limit, None, seed))
                spent += results[-1].elapsed
                if not results[-1].done:
                    break
    except RuntimeError as error:
        row.notes.append(f"failed: {error}")
    if results:
        row.result = merge_results(results)
        row.notes.append(f"{len(results)} passes of {args.moves} moves, {spent:.1f} s in all")
    return row


def pbmserv_row(name: str, args: argparse.Namespace) -> Row:
    row = Row(name)
    kind = "sqlite" if name.startswith("sqlite") else "postgres"
    pairs = pairings(make_players(player_count(args.moves, args.games)), args.games)
    servers = 2 if name == "postgres-x2" else 1
    workers = 2 if name == "sqlite-w2" else 1
    label = name.replace("-", "")
    try:
        with pbmserv_rig(kind, args.pg, label, servers, workers=workers) as rig:
            games = set_up_by_mail(rig, pairs, args.size, args.threads, args.max_seconds)
            plan_moves(games, args.moves)
            before = [s.cpu_seconds() for s in rig.servers]
            parts_before = rig.servers[0].cpu_by_part()
            others = (postgres_cpu(), rig.client_cpu_seconds())
            rate = args.paced_rate if name.endswith("-paced") else None
            burst = name.endswith("-burst")
            row.result = run_load(
                rig.ports,
                games,
                args.threads,
                args.max_seconds,
                rig.tracker,
                rate=rate,
                open_loop=burst,
            )
            if rate is not None:
                row.notes.append(f"moves sent evenly at {rate:g} a second")
            if burst:
                row.notes.append("open loop: no move waited for any mail")
            after = [s.cpu_seconds() for s in rig.servers]
            parts_after = rig.servers[0].cpu_by_part()
            done = row.result.done
            if row.result.elapsed > 0:
                row.cores = (sum(after) - sum(before)) / row.result.elapsed
            if done:
                row.cpu_ms_per_move = [
                    (b - a) * 1000 / done for a, b in zip(before, after, strict=True)
                ]
                database_ms = postgres_cpu_since(others[0]) * 1000 / done
                client_ms = (rig.client_cpu_seconds() - others[1]) * 1000 / done
                cpu = f"this client and its relay {client_ms:.1f} ms CPU per move"
                if kind != "sqlite":
                    cpu = f"all postgres processes {database_ms:.1f} ms CPU per move; {cpu}"
                row.notes.append(cpu)
                row.notes.append(_by_part(parts_before, parts_after, done, servers))
                row.notes.append(_memory(rig.servers[0].memory_by_part(), done))
            if row.result.notes:
                row.notes.append(f"server log: {rig.servers[0].log_tail(3)}")
    except Exception as error:  # one row's failure must not lose the others' figures
        row.notes.append(f"failed: {type(error).__name__}: {error}")
    return row


def _by_part(before: dict[str, float], after: dict[str, float], done: int, servers: int) -> str:
    """The server's CPU ms a move by the part of the work each of its processes does."""
    spent = {part: (after[part] - before.get(part, 0.0)) * 1000 / done for part in after}
    listed = ", ".join(f"{part} {ms:.1f}" for part, ms in sorted(spent.items()))
    return f"CPU ms per move by process{' (first server)' if servers > 1 else ''}: {listed}"


def _memory(parts: dict[str, tuple[int, int]], done: int) -> str:
    listed = ", ".join(
        f"{part} {now / 1024:.0f} MB (peak {peak / 1024:.0f})"
        for part, (now, peak) in sorted(parts.items())
    )
    return f"resident memory after {done} moves by process: {listed}"


# --- the password path -------------------------------------------------------------------------


def password_path(args: argparse.Namespace) -> str:
    """Cold then warm password checks on one SQLite server: returns the report line."""
    players = make_players(args.cold_users, prefix="c")
    pairs = [(players[i], players[i + 1]) for i in range(0, len(players), 2)]
    try:
        with pbmserv_rig("sqlite", args.pg, "password") as rig:
            server = rig.servers[0]
            games = set_up_by_mail(rig, pairs, args.size, args.threads, args.max_seconds)
            # Each game's first two moves: seat 0, then seat 1, each a user never checked.
            plan_moves(games, 2 * len(games))
            cpu0 = server.cpu_seconds()
            cold = run_load(rig.ports, games, args.threads, args.max_seconds, rig.tracker)
            cpu1 = server.cpu_seconds()
            plan_moves(games, 2 * len(games))  # the same users: their passwords are remembered
            warm = run_load(rig.ports, games, args.threads, args.max_seconds, rig.tracker)
            cpu2 = server.cpu_seconds()
    except Exception as error:
        return f"password path: failed: {type(error).__name__}: {error}"

    def part(result: LoadResult, cpu: float) -> str:
        rate = result.done / result.elapsed if result.elapsed else float("nan")
        cpu_ms = cpu * 1000 / result.done if result.done else float("nan")
        return (
            f"{rate:.1f} msg/s = {1000 / rate:.1f} ms/message, server CPU {cpu_ms:.1f} ms/message"
        )

    notes = "; ".join(cold.notes + warm.notes)
    return (
        f"password path (SQLite, {cold.done} moves, each by a user never checked before): "
        f"cold cache {part(cold, cpu1 - cpu0)}; the same users' next {warm.done} moves, "
        f"cache warm: {part(warm, cpu2 - cpu1)}" + (f" [{notes}]" if notes else "")
    )


# --- the report --------------------------------------------------------------------------------


def _rate(value: float, reference: float | None) -> str:
    if math.isnan(value):
        return "n/a"
    ratio = f" ({value / reference:.3f}x)" if reference else ""
    return f"{value:,.1f}{ratio}"


def print_table(rows: list[Row], args: argparse.Namespace) -> None:
    reference = next(
        (r.result.accept_rate for r in rows if r.name == "aiosmtpd" and r.result), None
    )
    if reference is not None and math.isnan(reference):
        reference = None
    cores = os.cpu_count() or 1
    print(
        "| server | accepted msg/s | moves processed and replies+boards delivered /s "
        f"| server CPU ms/move | cores the server used (of {cores}) "
        "| board delivered latency p50 / p99 |"
    )
    print("|---|---|---|---|---|---|")
    for row in rows:
        result = row.result
        if result is None:
            print(f"| {TITLES[row.name]} | n/a | n/a | n/a | n/a | n/a |")
            continue
        tracked = row.name not in ("smtp-sink", "aiosmtpd")
        latency = (
            f"{result.p50:.2f} s / {result.p99:.2f} s" if tracked and result.latencies else "n/a"
        )
        done = _rate(result.done_rate, reference) if tracked else "n/a (no boards)"
        cpu = f"{sum(row.cpu_ms_per_move):.1f}" if row.cpu_ms_per_move else "n/a"
        used = f"{row.cores:.2f}" if row.cores is not None else "n/a"
        print(
            f"| {TITLES[row.name]} | {_rate(result.accept_rate, reference)} | {done} "
            f"| {cpu} | {used} | {latency} |"
        )
    print()
    for row in rows:
        result = row.result
        details = []
        if result is not None:
            details.append(
                f"{result.done}/{result.moves} moves done in {result.elapsed:.1f} s"
                + (
                    f", steady window {result.window[0]:.1f}-{result.window[1]:.1f} s"
                    if row.name not in ("smtp-sink", "aiosmtpd")
                    else ""
                )
                + f", accept rate over {result.accept_note}"
            )
        if row.cpu_ms_per_move:
            shown = ", ".join(f"{ms:.1f}" for ms in row.cpu_ms_per_move)
            label = " (per process)" if len(row.cpu_ms_per_move) > 1 else ""
            details.append(f"server CPU ms per move{label}: {shown}")
        if result is not None and result.smtp_times:
            details.append(
                f"SMTP transaction under load p50 {result.smtp_p50 * 1000:.0f} ms, "
                f"p99 {result.smtp_p99 * 1000:.0f} ms"
            )
        details += (result.notes if result else []) + row.notes
        if details:
            print(f"- {TITLES[row.name]}: " + "; ".join(details))


def baseline_run(args: argparse.Namespace) -> None:
    """``--baseline REV``: the rows for REV and the work tree in turn, and the ratios."""
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    try:
        baseline = side_by_side.build_baseline(args.baseline, say=say)
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        print(f"throughput.py: cannot build the baseline {args.baseline}: {error}")
        sys.exit(1)
    shape = side_by_side.LoadShape(
        args.moves,
        args.games,
        args.threads,
        args.size,
        player_count(args.moves, args.games),
        args.max_seconds,
    )
    with workdir_for("pbmbench-baseline-") as workdir:
        compared = side_by_side.run_side_by_side(
            baseline, shape, args.only, args.rounds, workdir, say
        )
    side_by_side.print_side_by_side(compared, baseline, side_by_side.work_tree_label())


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.monotonic()
    announce(
        f"pbmserv throughput: {args.moves} moves per row, {args.games} concurrent Chameleon "
        f"{args.size}x{args.size} games, {args.threads} client threads, "
        f"{player_count(args.moves, args.games)} players; "
        f"{os.cpu_count()} CPUs, load average {load_average()} at the start",
    )
    if args.baseline:
        baseline_run(args)
        sign_off(started)
        return
    rows: list[Row] = []
    for name in ROWS[:-1]:
        if name not in args.only:
            continue
        print(f"... {name}", file=sys.stderr, flush=True)
        if name in ("smtp-sink", "aiosmtpd"):
            rows.append(sink_row(name, args))
        else:
            rows.append(pbmserv_row(name, args))
    if rows:
        print()
        print_table(rows, args)
    if "password" in args.only:
        print("... password path", file=sys.stderr, flush=True)
        print()
        print(password_path(args))
    sign_off(started)


if __name__ == "__main__":
    main()
