"""What the processes under test cost, from /proc: CPU seconds (a `serve`'s by the part of the
work each of its processes does, all postgres processes'), resident memory, the load average."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` (all its threads) and of its children
    that have ended, from /proc/PID/stat."""
    data = Path(f"/proc/{pid}/stat").read_text()
    fields = data[data.rindex(")") + 2 :].split()  # the name may hold spaces: skip past it
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def roles_by_pid(pid: int) -> dict[int, str]:
    """A `serve` and its child processes by the part of the work each does (a child's
    ``PBMSERV_CHILD_ROLE``: "process", "deliver"...); "receive" for the listener's own process
    (and the processes of `--workers`, and whatever else has no role)."""
    roles = {}
    for each in [pid, *child_pids(pid)]:
        try:
            environ = Path(f"/proc/{each}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        marked = [item for item in environ if item.startswith(b"PBMSERV_CHILD_ROLE=")]
        roles[each] = marked[0].partition(b"=")[2].decode() if marked else "receive"
    return roles


def cpu_by_part(pid: int) -> dict[str, float]:
    """CPU seconds of a `serve` and its child processes by their part of the work
    (:func:`roles_by_pid`), each process's own time alone."""
    parts: dict[str, float] = {}
    for each, role in roles_by_pid(pid).items():
        try:
            data = Path(f"/proc/{each}/stat").read_text()
        except OSError:
            continue
        fields = data[data.rindex(")") + 2 :].split()
        spent = sum(int(value) for value in fields[11:13]) / os.sysconf("SC_CLK_TCK")
        parts[role] = parts.get(role, 0.0) + spent
    return parts


def child_pids(parent: int) -> list[int]:
    """The processes descended from ``parent`` (children, their children...)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry.name))
    found, waiting = [], list(parents.get(parent, []))
    while waiting:
        pid = waiting.pop()
        found.append(pid)
        waiting += parents.get(pid, [])
    return found


def postgres_cpu() -> dict[int, float]:
    """CPU time of every running process named postgres on this machine, by pid (the
    database's backends for the servers under test among them; other users' sessions too)."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            data = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        if data[data.index("(") + 1 : data.rindex(")")] == "postgres":
            with contextlib.suppress(ValueError, OSError):
                found[int(stat.parent.name)] = cpu_seconds(int(stat.parent.name))
    return found


def postgres_cpu_since(before: dict[int, float]) -> float:
    """The postgres processes' CPU seconds since ``before`` (postgres_cpu()): each running
    process's growth, a new one's all. A backend that ended meanwhile takes its time with it:
    an under-count, never a negative figure."""
    return sum(spent - before.get(pid, 0.0) for pid, spent in postgres_cpu().items())


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def vm_hwm_kb(pid: int, field: str = "VmHWM") -> int:
    """A process's peak resident memory in kB (``field="VmRSS"``: its resident memory now)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return 0


def memory_by_part(pid: int) -> dict[str, tuple[int, int]]:
    """A `serve`'s processes' resident memory now and at its peak (kB), by their part of the
    work (:func:`roles_by_pid`)."""
    parts: dict[str, tuple[int, int]] = {}
    for each, role in roles_by_pid(pid).items():
        now, peak = parts.get(role, (0, 0))
        parts[role] = (now + vm_hwm_kb(each, "VmRSS"), peak + vm_hwm_kb(each))
    return parts
