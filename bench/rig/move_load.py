"""The Chameleon move load of throughput.py and growth.py, on the rig (bench/rig/): players
and their games, setting them up by mail, a whole rig (relay, database, servers), and the load.

smtplib in N threads sends legal Chameleon moves, each with its password, across many
concurrent games; a game's next move is sent only once the previous move's reply and both board
mails have reached the relay (bench/rig/noting_relay.py notes them), so the load is many games in
parallel.
"""

from __future__ import annotations

import contextlib
import queue
import random
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from sqlalchemy import Engine, select  # noqa: E402

from bench.rig import (  # noqa: E402
    Outgoing,
    Relayed,
    ScratchDatabase,
    ServerProcess,
    SmtpClient,
    cpu_seconds,
    mail_bytes,
    percentile,
    scratch_database,
    start_threads,
    wait_until,
    workdir_for,
)
from bench.rig.noting_relay import Noted, NotingRelayProcess, noted_of  # noqa: E402
from pbmserv.db.engine import make_engine  # noqa: E402
from pbmserv.db.models import GameRow, Seat, User  # noqa: E402
from pbmserv.games.base import move_rng  # noqa: E402
from pbmserv.games.chameleon import GAME  # noqa: E402

# --- players, games, moves -------------------------------------------------------------------


@dataclass(frozen=True)
class Player:
    userid: str
    password: str
    address: str


def make_players(count: int, prefix: str = "p") -> list[Player]:
    return [
        Player(f"{prefix}{i}", f"pw{i}x{prefix}", f"{prefix}{i}@bench.example")
        for i in range(count)
    ]


def pairings(players: Sequence[Player], games: int) -> list[tuple[Player, Player]]:
    """``games`` pairs of two different players, spread evenly over ``players``."""
    n = len(players)
    pairs = []
    for i in range(games):
        first = i % n
        second = (first + 1 + (i // n) % (n - 1)) % n
        pairs.append((players[first], players[second]))
    return pairs


@dataclass
class BenchGame:
    """One board played by the load: local state, who sits where, and per-move timings."""

    index: int
    board: int
    players: tuple[Player, Player]
    state: object
    seed: int
    planned: int
    sent: int = 0
    sent_at: list[float] = field(default_factory=list)
    done_at: list[float] = field(default_factory=list)
    replies: int = 0
    boards_at_start: int = 0  # board mails counted before this game's first move
    run_from: int = 0  # moves made before the current run_load
    failed: str | None = None

    def next_move(self, rng: random.Random) -> tuple[Player, str]:
        """A legal move for the seat to move that does not end the game (so every game can
        take its planned moves); swap is left out (it is a command of its own)."""
        seat = sorted(GAME.to_move(self.state).seats)[0]
        moves = [m for m in GAME.legal_moves(self.state, seat) if m != "swap"]
        for _ in range(50):
            move = rng.choice(moves)
            after = GAME.apply(self.state, move, move_rng(self.seed, self.state.ply))
            if GAME.outcome(after) is None:
                break
        text_ = GAME.format_move(self.state, move)
        self.state = after
        return self.players[seat], text_

    def line(self, player: Player, move: str) -> str:
        return f"chameleon move {self.board} {player.userid} {player.password} {move}"


def boards_from_database(engine: Engine, players: Sequence[Player]) -> list[BenchGame]:
    """The active boards of ``players`` as read back from the database, by board number (local
    state loaded from the stored state, the seats from the seats table)."""
    by_id = {p.userid: p for p in players}
    with engine.connect() as conn:
        rows = conn.execute(
            select(GameRow.id, GameRow.seed, GameRow.state, Seat.seat, User.userid)
            .join(Seat, Seat.game_id == GameRow.id)
            .join(User, User.id == Seat.user_id)
            .where(User.userid.in_(list(by_id)), GameRow.status == "active")
            .order_by(GameRow.id, Seat.seat)
        ).all()
    boards: dict[int, dict] = {}
    for board, seed, state, seat, userid in rows:
        entry = boards.setdefault(board, {"seed": seed, "state": state, "seats": {}})
        entry["seats"][seat] = by_id[userid]
    result = []
    for i, (board, entry) in enumerate(sorted(boards.items())):
        result.append(
            BenchGame(
                index=i,
                board=board,
                players=(entry["seats"][0], entry["seats"][1]),
                state=GAME.load(entry["state"]),
                seed=entry["seed"],
                planned=0,
            )
        )
    return result


class Tracker:
    """Notes what reaches the relay: board mails counted per board, replies matched to the
    message they answer (In-Reply-To). A move is done when its reply and both board mails
    are in; the game then goes back to its client thread's queue."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.boards: dict[int, int] = {}
        self.replies: dict[str, tuple[float, bool]] = {}  # Message-ID -> (arrival, failed)
        self.by_board: dict[int, BenchGame] = {}
        self.in_flight: dict[str, BenchGame] = {}
        self.queues: list[queue.Queue[BenchGame]] = []
        #: Moves are sent without waiting for the previous ones' mail (run_load open_loop).
        self.open_loop = False

    def on_mail(self, item: Relayed) -> None:
        self.on_noted(noted_of(item))

    def on_noted(self, noted: Noted) -> None:
        with self.lock:
            game: BenchGame | None = None
            if noted.board is not None:
                self.boards[noted.board] = self.boards.get(noted.board, 0) + 1
                game = self.by_board.get(noted.board)
            elif noted.answering:
                self.replies[noted.answering] = (noted.at, noted.failed)
                game = self.in_flight.pop(noted.answering, None)
                if game is not None:
                    game.replies += 1
                    if noted.failed:
                        game.failed = f"move {game.sent} refused (see the server's reply)"
            if game is not None:
                self._check_done(game, noted.at)

    def _check_done(self, game: BenchGame, arrived: float) -> None:
        """A move is done when its reply and its two board mails are in (every move before
        it too): in a closed loop the game's next move may then go; in an open loop (moves
        sent without waiting) several of a game's moves may be on their way."""
        boards = self.boards.get(game.board, 0) - game.boards_at_start
        finished = False
        while len(game.done_at) < game.sent:
            k = len(game.done_at) + 1
            if game.failed or not (game.replies >= k and boards >= 2 * k):
                break
            game.done_at.append(arrived)
            finished = True
        if (finished or game.failed) and self.queues and not self.open_loop:
            self.queues[game.index % len(self.queues)].put(game)

    def replied(self, message_ids: Sequence[str]) -> int:
        with self.lock:
            return sum(m in self.replies for m in message_ids)

    def failures(self, message_ids: Sequence[str]) -> int:
        with self.lock:
            return sum(self.replies[m][1] for m in message_ids if m in self.replies)


def send_all(
    ports: Sequence[int], messages: Sequence[tuple[str, bytes]], threads: int, deadline: float
) -> list[int]:
    """Send ``messages`` ((sender, bytes)) from ``threads`` threads; return the codes."""
    codes = [0] * len(messages)
    work: queue.Queue[int] = queue.Queue()
    for i in range(len(messages)):
        work.put(i)

    def run(number: int) -> None:
        client = SmtpClient(ports[number % len(ports)], reconnects=1)
        try:
            while time.monotonic() < deadline:
                try:
                    i = work.get_nowait()
                except queue.Empty:
                    return
                codes[i] = client.send(Outgoing(*messages[i]))[0]
        finally:
            client.close()

    start_threads(run, threads, deadline)
    return codes


# --- set-up by mail ----------------------------------------------------------------------------


def set_up_by_mail(
    rig: Rig, pairs: Sequence[tuple[Player, Player]], size: int, threads: int, timeout: float
) -> list[BenchGame]:
    """Sign the players up and open one board per pair by mail (``chameleon challenge
    -size=N U1 U2``, sent by U1); wait until every reply and board mail is in; return the
    boards as read back from the database (local state loaded from the stored state)."""
    deadline = time.monotonic() + timeout
    tracker, ports = rig.tracker, rig.ports
    players = list(dict.fromkeys(p for pair in pairs for p in pair))
    for phase in ("signup", "challenge"):
        if phase == "signup":
            lines = [(p.address, f"signup {p.userid} {p.password} Bench Player") for p in players]
        else:
            lines = [
                (a.address, f"chameleon challenge -size={size} {a.userid} {b.userid}")
                for a, b in pairs
            ]
        ids, messages = [], []
        for sender, line in lines:
            message_id, raw = mail_bytes(sender, line)
            ids.append(message_id)
            messages.append((sender, raw))
        codes = send_all(ports, messages, threads, deadline)
        if any(code != 250 for code in codes):
            bad = sorted({c for c in codes if c != 250})
            raise RuntimeError(f"{phase}: the server answered {bad} to some messages")
        if not wait_until(lambda ids=ids: tracker.replied(ids) == len(ids), deadline):
            raise RuntimeError(
                f"{phase}: only {tracker.replied(ids)} of {len(ids)} replies in {timeout:.0f} s"
            )
        if tracker.failures(ids):
            raise RuntimeError(f"{phase}: {tracker.failures(ids)} commands were refused")
    result = boards_from_database(rig.engine, players)
    if len(result) != len(pairs):
        raise RuntimeError(f"set-up: {len(result)} boards in the database, {len(pairs)} challenged")
    ok = wait_until(lambda: all(tracker.boards.get(g.board, 0) >= 2 for g in result), deadline)
    if not ok:
        raise RuntimeError("set-up: not every board mail of the challenges arrived in time")
    return result


# --- a whole rig ------------------------------------------------------------------------------


@dataclass
class Rig:
    """A noting relay, a fresh database and ``pbmserv serve`` processes relaying to it."""

    workdir: Path
    tracker: Tracker
    db: ScratchDatabase
    engine: Engine
    servers: list[ServerProcess]
    #: The relay's process (bench/rig/noting_relay.py).
    relay_pid: int | None = None

    def client_cpu_seconds(self) -> float:
        """This process's CPU time and the relay's: the bench's share of the machine."""
        relay = cpu_seconds(self.relay_pid) if self.relay_pid else 0.0
        return time.process_time() + relay

    @property
    def url(self) -> str:
        return self.db.url

    @property
    def ports(self) -> list[int]:
        return [s.port for s in self.servers]


@contextlib.contextmanager
def pbmserv_rig(
    kind: str,
    pg: str,
    label: str,
    servers: int = 1,
    prepare: Callable[[Engine], None] | None = None,
    workers: int = 1,
    command: Sequence[str] | None = None,
    env: dict[str, str] | None = None,
) -> Iterator[Rig]:
    """Everything a pbmserv measurement runs on; ``prepare`` gets the migrated database
    before the servers start. All of it is stopped, dropped and removed afterwards.
    ``command``: another `pbmserv` (migrating the database and serving); ``env``: the
    servers' settings on top of the bench's (bench/rig/server.py server_env)."""
    with contextlib.ExitStack() as stack:
        workdir = stack.enter_context(workdir_for(f"pbmbench-{label}-"))
        tracker = Tracker()
        sink = stack.enter_context(NotingRelayProcess(tracker.on_noted))
        given = None if kind == "sqlite" else pg
        db = stack.enter_context(scratch_database(given, workdir, label, command, env))
        engine = make_engine(db.url)  # the server's settings: growth's fill writes through it
        stack.callback(engine.dispose)
        if prepare is not None:
            prepare(engine)
        started = []
        for i in range(servers):
            extra = ["--workers", str(workers)] if workers > 1 else []
            server = ServerProcess(
                db.url,
                sink.address,
                workdir,
                f"{label}-{i}",
                extra_args=extra,
                env=env,
                command=command,
            )
            stack.callback(server.stop)
            started.append(server.start())
        yield Rig(workdir, tracker, db, engine, started, sink.pid)


# --- the load ----------------------------------------------------------------------------------


@dataclass
class LoadResult:
    """What one load run measured (times from time.monotonic())."""

    moves: int
    sent: int = 0
    done: int = 0
    refused: int = 0
    elapsed: float = 0.0
    accept_rate: float = float("nan")
    accept_note: str = ""
    done_rate: float = float("nan")
    window: tuple[float, float] = (0.0, 0.0)
    latencies: list[float] = field(default_factory=list)
    smtp_times: list[float] = field(default_factory=list)  # MAIL FROM to the DATA reply
    notes: list[str] = field(default_factory=list)

    @property
    def smtp_p50(self) -> float:
        return percentile(self.smtp_times, 0.50)

    @property
    def smtp_p99(self) -> float:
        return percentile(self.smtp_times, 0.99)

    @property
    def p50(self) -> float:
        return percentile(self.latencies, 0.50)

    @property
    def p99(self) -> float:
        return percentile(self.latencies, 0.99)


def plan_moves(games: Sequence[BenchGame], moves: int) -> None:
    """Share ``moves`` more out over the games (on top of those made), as evenly as possible."""
    for i, game in enumerate(games):
        game.planned = game.sent + moves // len(games) + (1 if i < moves % len(games) else 0)


def run_load(
    ports: Sequence[int],
    games: Sequence[BenchGame],
    threads: int,
    timeout: float,
    tracker: Tracker | None,
    seed: int = 1,
    rate: float | None = None,
    open_loop: bool = False,
) -> LoadResult:
    """Play every game's planned moves from ``threads`` threads (thread t serves games
    t, t+N, ... and talks to server t mod len(ports)). With a tracker a game's next move waits
    for the previous one's reply and board mails; without one (a bare sink: no boards come
    back) it is sent at once. ``rate``: at most that many moves a second in all, evenly
    spaced (a sustained load rather than a burst). ``open_loop``: every move is sent as fast
    as the server takes it, without waiting for the previous one's mail (a game's moves in
    order, from its thread: a real burst). Stops by itself at ``timeout`` seconds."""
    for game in games:
        game.run_from = game.sent
    total = sum(g.planned - g.sent for g in games)
    result = LoadResult(moves=total)
    queues: list[queue.Queue[BenchGame]] = [queue.Queue() for _ in range(threads)]
    for game in games:
        if game.planned > game.sent:
            queues[game.index % threads].put(game)
    if tracker is not None:
        with tracker.lock:
            tracker.queues = queues
            tracker.open_loop = open_loop
            for game in games:
                # Two board mails per move made so far (by an earlier run on these games).
                game.boards_at_start = tracker.boards.get(game.board, 0) - 2 * game.sent
                tracker.by_board[game.board] = game
    accepted: list[tuple[float, float, int]] = []  # (start, 250 time, code)
    accepted_lock = threading.Lock()
    start = time.monotonic()
    deadline = start + timeout
    stop = threading.Event()
    pace_lock = threading.Lock()
    next_slot = [start]

    def wait_for_slot() -> None:
        if rate is None:
            return
        with pace_lock:
            slot = max(time.monotonic(), next_slot[0])
            next_slot[0] = slot + 1.0 / rate
        time.sleep(max(0.0, slot - time.monotonic()))

    def serve_games(number: int) -> None:
        rng = random.Random(seed * 1000 + number)
        mine = [g for g in games if g.index % threads == number and g.planned > g.sent]
        client = SmtpClient(ports[number % len(ports)], reconnects=1)
        try:
            while not stop.is_set() and time.monotonic() < deadline:
                if all(g.failed or g.sent >= g.planned for g in mine):
                    return
                try:
                    wait = min(0.5, max(0.01, deadline - time.monotonic()))
                    game = queues[number].get(timeout=wait)
                except queue.Empty:
                    continue
                if game.failed or game.sent >= game.planned:
                    continue
                player, move = game.next_move(rng)
                message_id, raw = mail_bytes(player.address, game.line(player, move))
                wait_for_slot()
                if tracker is not None:
                    with tracker.lock:
                        game.sent += 1
                        tracker.in_flight[message_id] = game
                else:
                    game.sent += 1
                began = time.monotonic()
                code = client.send(Outgoing(player.address, raw))[0]
                finished = time.monotonic()
                with accepted_lock:
                    accepted.append((began, finished, code))
                game.sent_at.append(finished)
                if code != 250:
                    game.failed = f"SMTP {code} for a move"
                    if tracker is not None:
                        with tracker.lock:
                            tracker.in_flight.pop(message_id, None)
                    continue
                if tracker is None:
                    game.done_at.append(finished)
                if tracker is None or open_loop:
                    queues[number].put(game)
        finally:
            client.close()

    workers = start_threads(serve_games, threads, deadline)
    if tracker is not None:  # the last moves' mail
        wait_until(lambda: all(len(g.done_at) >= g.sent or g.failed for g in games), deadline, 0.02)
    stop.set()
    for worker in workers:
        worker.join(5)
    result.elapsed = time.monotonic() - start
    if tracker is not None:
        with tracker.lock:
            tracker.queues = []
    _summarise(result, games, accepted, start, tracker is not None and not open_loop)
    if result.elapsed >= timeout - 0.5 and result.done < total:
        result.notes.append(
            f"stopped at the {timeout:.0f} s limit with {result.done} of {total} moves done"
        )
    return result


def _summarise(
    result: LoadResult,
    games: Sequence[BenchGame],
    accepted: list[tuple[float, float, int]],
    start: float,
    tracked: bool,
) -> None:
    good = sorted(a for a in accepted if a[2] == 250)
    result.sent = len(accepted)
    result.smtp_times = [a[1] - a[0] for a in good]
    result.refused = len(accepted) - len(good)
    if result.refused:
        codes = sorted({a[2] for a in accepted if a[2] != 250})
        result.notes.append(f"{result.refused} messages refused or failed (SMTP {codes})")
    failed = [g.failed for g in games if g.failed]
    if failed:
        result.notes.append(f"{len(failed)} games stopped early, e.g.: {failed[0]}")
    # Accept rate: for a bare sink every message; for pbmserv the opening burst (the first
    # move of every game, sent back to back before anything is waited for).
    opening = sum(1 for g in games if g.planned > g.run_from)
    burst = len(good) if not tracked else min(len(good), opening)
    if burst:
        ends = sorted(a[1] for a in good)[:burst]
        span = ends[-1] - good[0][0]
        result.accept_rate = burst / span if span > 0 else float("nan")
        result.accept_note = f"{burst} messages"
    done = sorted(t for g in games for t in g.done_at[g.run_from :])
    result.done = len(done)
    if not done:
        return
    # The steady window: from the 10% to the 90% completion (all of them if there are few).
    if len(done) >= 20:
        lo, hi = len(done) // 10, len(done) - 1 - len(done) // 10
        first, last = done[lo], done[hi]
        count = hi - lo
    else:
        first, last, count = start, done[-1], len(done)
    result.window = (first - start, last - start)
    if last > first:
        result.done_rate = count / (last - first)
    for game in games:
        pairs = zip(game.sent_at[game.run_from :], game.done_at[game.run_from :], strict=False)
        for sent, finished in pairs:
            if first <= finished <= last:
                result.latencies.append(finished - sent)


def merge_results(results: Sequence[LoadResult]) -> LoadResult:
    """Several untracked runs (a bare sink's rounds) as one: counts and seconds added up, the
    accept rate over all their messages, the notes of each once."""
    merged = LoadResult(moves=sum(r.moves for r in results))
    spans = messages = 0.0
    for result in results:
        merged.sent += result.sent
        merged.done += result.done
        merged.refused += result.refused
        merged.elapsed += result.elapsed
        merged.smtp_times += result.smtp_times
        merged.latencies += result.latencies
        merged.notes += [note for note in result.notes if note not in merged.notes]
        burst = int(result.accept_note.split()[0]) if result.accept_note else 0
        if burst and result.accept_rate > 0:
            messages += burst
            spans += burst / result.accept_rate
    if spans > 0:
        merged.accept_rate = messages / spans
        merged.accept_note = f"{messages:.0f} messages"
    return merged
