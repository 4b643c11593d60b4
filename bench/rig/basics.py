"""The rig's small helpers: ports on 127.0.0.1, bounded waits, threads, child processes, a
work folder, a percentile, a log's tracebacks, a table of figures."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def parse_host_port(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if host not in ("127.0.0.1", "localhost", "") or not port.isdigit():
        raise ValueError(f"{text!r}: give 127.0.0.1:PORT (the benches only talk to 127.0.0.1)")
    return "127.0.0.1", int(port)


def wait_listening(port: int, timeout: float, alive: Callable[[], bool] = lambda: True) -> bool:
    """True once something accepts connections on 127.0.0.1:``port`` (within ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return True
        time.sleep(0.05)
    return False


def wait_until(condition: Callable[[], bool], deadline: float, step: float = 0.05) -> bool:
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def start_threads(
    target: Callable[[int], None], count: int, deadline: float
) -> list[threading.Thread]:
    """Run ``target(0..count-1)`` in daemon threads; wait for them until ``deadline``."""
    workers = [threading.Thread(target=target, args=(n,), daemon=True) for n in range(count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(max(0.1, deadline - time.monotonic()))
    return workers


def percentile(values: Sequence[float], fraction: float) -> float:
    """The ``fraction`` quantile (nearest rank) of ``values``; NaN when there are none."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))]


def count_tracebacks(log_path: Path | None) -> int:
    if log_path is None or not log_path.exists():
        return 0
    return log_path.read_bytes().count(b"Traceback (most recent call last)")


@contextlib.contextmanager
def workdir_for(prefix: str, keep: bool = False) -> Iterator[Path]:
    """A temporary folder for the run (under $TMPDIR), removed at the end unless ``keep``."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        if keep:
            print(f"(work folder kept: {path})")
        else:
            shutil.rmtree(path, ignore_errors=True)


def wait_or_kill(process: subprocess.Popen, seconds: float = 10) -> None:
    """Wait (bounded) for a child process that was asked to stop; SIGKILL it if it does not."""
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(seconds)


def print_rows(title: str, rows: Sequence[tuple[str, str, str]], value_width: int) -> None:
    """A bench's table: the title, then a line a figure (label, value, what it should be)."""
    print(title)
    width = max(len(r[0]) for r in rows)
    for label, value, note in rows:
        print(f"  {label.ljust(width)}  {value.rjust(value_width)}  {note}")
