"""Before and after in one run (issue 52): another commit's server built in a venv of its own,
and the same rows run for it and for the work tree in turn (``bench/throughput.py --baseline
REV``).

The baseline is REV's tree (``git archive``) with a venv (``python -m venv``, ``pip install
-e``), cached in ``.bench-cache/baseline-SHA/`` at the top of the checkout (git-ignored; a
second run reuses it; delete the folder to rebuild). The work tree runs from a venv built the
same way (``.bench-cache/work-tree/``, editable, so built once): the same kind of environment on
both sides, whatever this Python has installed. Each side's own `pbmserv` migrates its scratch
database and serves; both sides get the same environment (bench/rig/server.py server_env, the
row's settings, no PYTHONPATH).

Each round runs every row for the baseline ("old"), then for the work tree ("new"), on a fresh
SQLite file each time, with the closed-loop move load of throughput.py. The figures of a side
are the median over the rounds; the ratio is new / old, printed beside the issue's goals.
"""

from __future__ import annotations

import fcntl
import hashlib
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bench.rig.move_load import (
    make_players,
    pairings,
    pbmserv_rig,
    plan_moves,
    run_load,
    set_up_by_mail,
)
from bench.rig.server import DEFAULT_PG, ROOT

CACHE = ROOT / ".bench-cache"
#: Every side's servers: no PYTHONPATH (an empty one counts as unset), so that each `pbmserv`
#: imports its own tree.
SIDE_ENV = {"PYTHONPATH": ""}
_DKIM_OFF = {
    "PBMSERV_DKIM_SELECTOR": "",
    "PBMSERV_DKIM_KEY_FILE": "",
    "PBMSERV_DKIM_ED25519_SELECTOR": "",
    "PBMSERV_DKIM_ED25519_KEY_FILE": "",
}


@dataclass(frozen=True)
class BaselineRow:
    title: str
    pictures: bool
    dkim: bool
    #: The goals of issue 52: CPU per move new/old at most, moves/s new/old at least.
    cpu_goal: float
    rate_goal: float | None = None


ROWS = {
    "production": BaselineRow("pictures + DKIM (production)", True, True, 0.35, 2.5),
    "pictures": BaselineRow("pictures, no DKIM", True, False, 0.70),
    "text": BaselineRow("text only", False, False, 0.60),
}
#: DKIM on costs at most this much the CPU per move of DKIM off (the work tree's).
DKIM_GOAL = 1.10
PART_ORDER = ("receive", "process", "deliver")


# --- building the baseline ---------------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    rev: str
    sha: str
    folder: Path

    @property
    def command(self) -> list[str]:
        return [str(self.folder / ".venv" / "bin" / "pbmserv")]

    @property
    def label(self) -> str:
        return f"{self.rev} ({self.sha[:10]})" if self.rev != self.sha else self.sha[:10]


def _git(*args: str) -> str:
    result = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout.strip()


def _run(
    command: Sequence[str],
    what: str,
    timeout: float,
    cwd: Path | str | None = None,
    env: dict[str, str] | None = None,
) -> str:
    result = subprocess.run(
        list(command), capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env
    )
    if result.returncode != 0:
        raise RuntimeError(f"{what} failed: {(result.stderr or result.stdout)[-2000:]}")
    return result.stdout.strip()


def work_tree_label() -> str:
    """HEAD's short hash, and how many files differ from it (the work tree is what runs)."""
    changed = len(_git("status", "--porcelain").splitlines())
    return f"the work tree (HEAD {_git('rev-parse', '--short=10', 'HEAD')}" + (
        f" + {changed} changed files)" if changed else ")"
    )


def build_baseline(rev: str, cache: Path = CACHE, say: Callable[[str], None] = print) -> Baseline:
    """REV's server in a venv of its own under ``cache`` (built once a commit; a folder
    without its ``.built`` mark is a build that did not finish, and is built again)."""
    sha = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    folder = cache / f"baseline-{sha}"
    cache.mkdir(parents=True, exist_ok=True)
    (cache / ".gitignore").write_text("*\n")  # also ignored by the checkout's .gitignore
    baseline = Baseline(rev, sha, folder)
    with open(cache / f"baseline-{sha}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two benches at once: one builds, the other waits
        if (folder / ".built").exists():
            say(f"baseline {baseline.label}: reusing {folder}")
        else:
            _build(baseline, say)
    _check_imports_from(folder / ".venv", folder, "the baseline's")
    return baseline


def _check_imports_from(venv: Path, tree: Path, whose: str) -> None:
    """RuntimeError unless ``venv``'s Python imports pbmserv from ``tree``."""
    imported = _run(
        [str(venv / "bin" / "python"), "-c", "import pbmserv; print(pbmserv.__file__)"],
        f"importing {whose} pbmserv",
        60,
        cwd="/",
        env={**os.environ, **SIDE_ENV},
    )
    if not Path(imported).resolve().is_relative_to(tree.resolve()):
        raise RuntimeError(f"{whose} venv imports pbmserv from {imported}, not {tree}")


def _build(baseline: Baseline, say: Callable[[str], None]) -> None:
    folder = baseline.folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    started = time.monotonic()
    say(f"baseline {baseline.label}: building in {folder} ...")
    archive = subprocess.Popen(["git", "archive", baseline.sha], cwd=ROOT, stdout=subprocess.PIPE)
    assert archive.stdout is not None
    untar = subprocess.run(["tar", "-x", "-C", str(folder)], stdin=archive.stdout, timeout=300)
    archive.stdout.close()
    if archive.wait(60) != 0 or untar.returncode != 0:
        raise RuntimeError(f"git archive {baseline.sha} | tar -x failed")
    venv = folder / ".venv"
    _run([sys.executable, "-m", "venv", str(venv)], "python -m venv", 300)
    pip = [str(venv / "bin" / "pip"), "install", "-q", "-e", str(folder)]
    _run(pip, "pip install -e (the baseline)", 1800, cwd=folder)
    (folder / ".built").write_text(f"{baseline.rev} {baseline.sha}\n")
    say(f"baseline {baseline.label}: built in {time.monotonic() - started:.0f} s")


# --- one run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadShape:
    """The closed-loop move load every run plays (throughput.py's options)."""

    moves: int
    games: int
    threads: int
    size: int
    players: int
    max_seconds: float


@dataclass
class Run:
    """One row on one side in one round."""

    moves_per_s: float = math.nan
    cpu_ms: float = math.nan
    parts: dict[str, float] = field(default_factory=dict)
    memory_mb: dict[str, float] = field(default_factory=dict)  # peak resident, by process
    done: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def dkim_key(folder: Path) -> Path:
    """A fresh RSA-2048 key (PEM, PKCS#1, as `pbmserv dkim keygen` writes) for the run."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = folder / "dkim-bench.pem"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)
    return path


def row_env(row: BaselineRow, key: Path) -> dict[str, str]:
    env = {**SIDE_ENV, **_DKIM_OFF, "PBMSERV_BOARD_PICTURES": "true" if row.pictures else "false"}
    if row.dkim:
        env.update({"PBMSERV_DKIM_SELECTOR": "bench", "PBMSERV_DKIM_KEY_FILE": str(key)})
    return env


def measure(command: Sequence[str], env: dict[str, str], shape: LoadShape, label: str) -> Run:
    """Set a fresh server up (its own `db upgrade`), open the boards by mail, play the moves;
    the server's CPU per move (all its processes, and by part) and the moves done a second."""
    run = Run()
    pairs = pairings(make_players(shape.players), shape.games)
    try:
        with pbmserv_rig("sqlite", DEFAULT_PG, label, command=command, env=env) as rig:
            games = set_up_by_mail(rig, pairs, shape.size, shape.threads, shape.max_seconds)
            plan_moves(games, shape.moves)
            server = rig.servers[0]
            cpu, parts = server.cpu_seconds(), server.cpu_by_part()
            result = run_load(rig.ports, games, shape.threads, shape.max_seconds, rig.tracker)
            cpu, after = server.cpu_seconds() - cpu, server.cpu_by_part()
            run.done, run.seconds, run.notes = result.done, result.elapsed, list(result.notes)
            run.moves_per_s = result.done_rate
            if result.done:
                run.cpu_ms = cpu * 1000 / result.done
                run.parts = {
                    part: (spent - parts.get(part, 0.0)) * 1000 / result.done
                    for part, spent in after.items()
                }
            run.memory_mb = {
                part: peak / 1024 for part, (_now, peak) in server.memory_by_part().items()
            }
            if result.notes:
                run.notes.append(f"server log: {server.log_tail(3)}")
    except Exception as error:  # one run's failure must not lose the others' figures
        run.notes.append(f"failed: {type(error).__name__}: {error}")
    return run


# --- side by side ------------------------------------------------------------------------------


@dataclass
class Compared:
    """A row's runs: ``old[i]`` and ``new[i]`` are round i's."""

    name: str
    old: list[Run] = field(default_factory=list)
    new: list[Run] = field(default_factory=list)


def build_work_tree_side(cache: Path = CACHE, say: Callable[[str], None] = print) -> list[str]:
    """The work tree's `pbmserv` from a venv built as the baseline's is (``pip install -e``,
    no extras): both sides import the same kind of environment, so that neither pays for
    modules the other lacks (the test extras bring pygments, which alembic's mako then
    imports, and PyNaCl, which dkimpy imports). Built again when pyproject.toml changes."""
    folder = cache / "work-tree"
    stamp = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    cache.mkdir(parents=True, exist_ok=True)
    (cache / ".gitignore").write_text("*\n")
    venv = folder / ".venv"
    with open(cache / "work-tree.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = folder / ".built"
        if built.exists() and built.read_text().strip() == stamp:
            say(f"the work tree: reusing its venv in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            started = time.monotonic()
            say(f"the work tree: building a venv in {folder} ...")
            _run([sys.executable, "-m", "venv", str(venv)], "python -m venv", 300)
            pip = [str(venv / "bin" / "pip"), "install", "-q", "-e", str(ROOT)]
            _run(pip, "pip install -e (the work tree)", 1800, cwd=ROOT)
            built.write_text(stamp + "\n")
            say(f"the work tree: venv built in {time.monotonic() - started:.0f} s")
    _check_imports_from(venv, ROOT, "the work tree's")
    return [str(venv / "bin" / "pbmserv")]


def run_side_by_side(
    baseline: Baseline,
    shape: LoadShape,
    rows: Sequence[str],
    rounds: int,
    workdir: Path,
    say: Callable[[str], None],
) -> list[Compared]:
    """Round after round, each row for the baseline then for the work tree."""
    key = dkim_key(workdir)
    compared = [Compared(name) for name in rows]
    sides = (("old", baseline.command), ("new", build_work_tree_side(CACHE, say)))
    for number in range(1, rounds + 1):
        for entry in compared:
            for side, command in sides:
                say(f"... round {number}/{rounds}: {entry.name}, {side}")
                env = row_env(ROWS[entry.name], key)
                run = measure(command, env, shape, f"{entry.name}-{side}")
                getattr(entry, side).append(run)
                say(f"    {_figures([run])}" + (f" [{'; '.join(run.notes)}]" if run.notes else ""))
    return compared


def _median(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return statistics.median(finite) if finite else math.nan


def _parts(runs: Sequence[Run]) -> dict[str, float]:
    names = sorted(
        {p for r in runs for p in r.parts},
        key=lambda p: (PART_ORDER.index(p) if p in PART_ORDER else len(PART_ORDER), p),
    )
    return {p: _median([r.parts.get(p, math.nan) for r in runs]) for p in names}


def _figures(runs: Sequence[Run]) -> str:
    cpu = _median([r.cpu_ms for r in runs])
    parts = " / ".join(f"{ms:.1f}" for ms in _parts(runs).values())
    rate = _median([r.moves_per_s for r in runs])
    return f"{cpu:.1f} ms ({parts}), {rate:.1f}/s"


def _ratio(new: float, old: float) -> float:
    return new / old if old > 0 and not math.isnan(new) else math.nan


def _verdict(value: float, goal: float | None, at_most: bool) -> str:
    if goal is None:
        return ""
    sign = "<=" if at_most else ">="
    if math.isnan(value):
        return f"goal {sign} {goal:.2f}x: n/a"
    met = value <= goal if at_most else value >= goal
    return f"goal {sign} {goal:.2f}x: {'met' if met else 'NOT met'}"


def _round_ratios(entry: Compared, figure: Callable[[Run], float]) -> str:
    ratios = [_ratio(figure(n), figure(o)) for o, n in zip(entry.old, entry.new, strict=False)]
    shown = [f"{r:.2f}" for r in ratios if not math.isnan(r)]
    return ", ".join(shown) or "n/a"


def print_side_by_side(compared: Sequence[Compared], baseline: Baseline, new_label: str) -> None:
    rounds = max((len(e.old) for e in compared), default=0)
    print(f"\nold = {baseline.label}; new = {new_label}; medians of {rounds} rounds")
    print(
        "server CPU ms per move (receive / process / deliver), moves done a second in the "
        "steady window"
    )
    print("\n| row | old | new | CPU/move new/old | moves/s new/old |")
    print("|---|---|---|---|---|")
    for entry in compared:
        row = ROWS[entry.name]
        cpu = _ratio(_median([r.cpu_ms for r in entry.new]), _median([r.cpu_ms for r in entry.old]))
        rate = _ratio(
            _median([r.moves_per_s for r in entry.new]), _median([r.moves_per_s for r in entry.old])
        )
        cpu_goal = _verdict(cpu, row.cpu_goal, at_most=True)
        rate_goal = _verdict(rate, row.rate_goal, at_most=False)
        print(
            f"| {row.title} | {_figures(entry.old)} | {_figures(entry.new)} "
            f"| {cpu:.2f}x ({cpu_goal}) | {rate:.2f}x{f' ({rate_goal})' if rate_goal else ''} |"
        )
    by_name = {e.name: e for e in compared}
    if "production" in by_name and "pictures" in by_name:
        on, off = by_name["production"], by_name["pictures"]
        ratios = {
            side: _ratio(
                _median([r.cpu_ms for r in getattr(on, side)]),
                _median([r.cpu_ms for r in getattr(off, side)]),
            )
            for side in ("old", "new")
        }
        print(
            f"| DKIM on / off, CPU per move | {ratios['old']:.2f}x | {ratios['new']:.2f}x "
            f"| new: {_verdict(ratios['new'], DKIM_GOAL, at_most=True)} | |"
        )
    print()
    for entry in compared:
        lines = [
            "CPU new/old by round " + _round_ratios(entry, lambda r: r.cpu_ms),
            "moves/s new/old by round " + _round_ratios(entry, lambda r: r.moves_per_s),
        ]
        for side in ("old", "new"):
            runs = getattr(entry, side)
            memory = {p: max(r.memory_mb.get(p, 0.0) for r in runs) for p in _parts(runs)}
            listed = ", ".join(f"{p} {mb:.0f}" for p, mb in memory.items() if mb)
            if listed:
                lines.append(f"{side} peak resident MB by process: {listed}")
            done = "/".join(str(r.done) for r in runs)
            lines.append(f"{side} moves done by round: {done}")
            notes = sorted({n for r in runs for n in r.notes})
            lines += [f"{side}: {note}" for note in notes]
        print(f"- {ROWS[entry.name].title}: " + "; ".join(lines))
