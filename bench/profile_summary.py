"""Where a profiled server spent its CPU: py-spy's folded stacks (``BENCH_PROFILE=DIR`` on any
bench) summed by function and by the parts of a move.

Run ``python bench/profile_summary.py DIR/server-1.folded [--moves N] [--top 25]``. With
``--moves`` every figure is also given in ms a move, scaled so that the samples add up to the
CPU the bench measured (``--cpu-ms`` a move): py-spy samples wall time of threads on the CPU,
so the shares are what the profile gives and the absolute figures come from /proc.

Idle samples (the event loop waiting in select/epoll, threads waiting on a lock or a queue)
are left out: they are not CPU.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

#: Leaf frames that are waiting, not working (an event loop's select, an idle pool thread,
#: a lock or a condition).
IDLE_LEAF = re.compile(
    r"^(\w+\.)?(select|poll|epoll_wait|wait|acquire|sleep|_wait_for_tstate_lock) \(|"
    r"^_worker \(concurrent/futures/thread\.py"
)
#: py-spy --subprocesses names each stack's process first.
PROCESS = re.compile(r'^process (\d+):"(.*)"$')

#: The parts of a move: the first pattern that matches any frame of a stack names its part.
PARTS: list[tuple[str, re.Pattern[str]]] = [
    ("picture: rasterise + PNG", re.compile(r"pictures\.py|pylunasvg|resvg|PIL/")),
    ("picture: SVG drawing", re.compile(r"\bsvg \(|drawing\.py|picture\.py")),
    ("DKIM signing", re.compile(r"outbound/signing/|signing\.py|dkim/")),
    ("argon2", re.compile(r"argon2")),
    ("SQLite / SQL driver", re.compile(r"sqlite3|psycopg")),
    ("SQLAlchemy", re.compile(r"sqlalchemy/")),
    ("templates", re.compile(r"jinja2/|compose\.py")),
    ("mail building", re.compile(r"email/|mime\.py|headers\.py")),
    ("SMTP out (aiosmtplib)", re.compile(r"aiosmtplib/")),
    ("SMTP in (aiosmtpd)", re.compile(r"aiosmtpd/")),
    ("parsing mail", re.compile(r"decode\.py|reply_text\.py|body_text\.py|header_values\.py")),
    ("game rules", re.compile(r"pbmserv/games/")),
    ("logging", re.compile(r"logging/|logs\.py")),
    ("event loop", re.compile(r"asyncio/")),
]


def frames_of(line: str) -> tuple[list[str], int]:
    stack, _, count = line.rpartition(" ")
    return stack.split(";"), int(count)


def is_idle(frames: list[str]) -> bool:
    return bool(IDLE_LEAF.match(frames[-1]))


def part_of(frames: list[str]) -> str:
    for name, pattern in PARTS:
        if any(pattern.search(frame) for frame in frames):
            return name
    return "other"


def roles_beside(path: Path) -> dict[str, str]:
    """The processes' parts of the work by pid, as the bench noted them (``NAME-N.roles``)."""
    noted = path.with_suffix(".roles")
    if not noted.exists():
        return {}
    return dict(line.split(" ", 1) for line in noted.read_text().splitlines() if " " in line)


def summarise(
    path: Path, only: str | None = None
) -> tuple[int, Counter[str], Counter[str], Counter[str]]:
    roles = roles_beside(path)
    busy = 0
    parts: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        try:
            frames, count = frames_of(line)
        except ValueError:  # a line cut short (py-spy stopped with the server)
            continue
        if is_idle(frames):
            continue
        # The innermost process frame names the process (a child's stacks sit in its
        # parent's); its part of the work as the bench noted it, or else: a child process
        # runs `python -m pbmserv`, the server `pbmserv`.
        where = [i for i, frame in enumerate(frames) if PROCESS.match(frame)]
        if where:
            process = PROCESS.match(frames[where[-1]])
            assert process is not None
            guess = "child" if "-m pbmserv" in process.group(2) else "receive"
            role = roles.get(process.group(1), guess)
            if only is not None and role != only:
                continue
            parts[f"[process: {role} {process.group(1)}]"] += count
            frames = frames[where[-1] + 1 :] or ["(the process itself)"]
        busy += count
        parts[part_of(frames)] += count
        leaves[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    return busy, parts, leaves, inclusive


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folded", type=Path, nargs="+")
    parser.add_argument("--moves", type=int, help="moves the profile covers")
    parser.add_argument("--cpu-ms", type=float, help="measured server CPU ms a move")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument(
        "--process", help="only the processes doing this part: receive, process, deliver"
    )
    args = parser.parse_args()
    busy = 0
    parts: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for path in args.folded:
        b, p, leaf, inc = summarise(path, args.process)
        busy, parts, leaves, inclusive = busy + b, parts + p, leaves + leaf, inclusive + inc
    if not busy:
        print("no busy samples")
        return
    scale = (args.cpu_ms / busy) if args.cpu_ms else None

    def show(count: int) -> str:
        share = f"{100 * count / busy:5.1f}%"
        return f"{share} {count * scale:6.2f} ms" if scale else share

    print(f"{busy} busy samples" + (f" ({args.moves} moves)" if args.moves else ""))
    print("\nby part of a move:")
    for name, count in parts.most_common():
        print(f"  {show(count)}  {name}")
    print(f"\nfunctions by own time (top {args.top}):")
    for name, count in leaves.most_common(args.top):
        print(f"  {show(count)}  {name[:110]}")
    print(f"\nfunctions by time inside them (top {args.top}):")
    for name, count in inclusive.most_common(args.top):
        print(f"  {show(count)}  {name[:110]}")


if __name__ == "__main__":
    main()
