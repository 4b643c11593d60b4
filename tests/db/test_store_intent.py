"""A store waiting for SQLite's write lock says so (db.engine.StoreIntent), in this process or
another, and a processing batch that has held the lock long enough makes way for it: the
listener and the processing may run in different processes (runtime.child_processes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pbmserv.db.engine import StoreIntent, make_engine, store_intent


def test_a_store_waiting_in_one_place_is_seen_from_another(tmp_path: Path) -> None:
    path = str(tmp_path / "pbmserv.db.storing")
    listener, processing = StoreIntent(path), StoreIntent(path)
    assert not processing.waiting()
    with listener.announced():
        assert processing.waiting()
        with listener.announced():  # a group's store inside the listener's announcement
            assert processing.waiting()
        assert processing.waiting(), "still waiting until the last store leaves"
    assert not processing.waiting()


def test_a_store_waiting_in_another_process_is_seen(tmp_path: Path) -> None:
    path = str(tmp_path / "pbmserv.db.storing")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from pbmserv.db.engine import StoreIntent\n"
            f"intent = StoreIntent({path!r})\n"
            "with intent.announced():\n"
            "    print('waiting', flush=True)\n"
            "    sys.stdin.readline()\n",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "waiting"
        processing = StoreIntent(path)
        assert processing.waiting()
        holder.stdin.write("done\n")
        holder.stdin.flush()
        assert holder.wait(10) == 0
        assert not processing.waiting()
    finally:
        holder.kill()


def test_a_database_in_memory_counts_its_own_stores() -> None:
    intent = StoreIntent(None)
    assert not intent.waiting()
    with intent.announced():
        assert intent.waiting()
    assert not intent.waiting()


def test_only_sqlite_has_stores_waiting_for_its_lock(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'pbmserv.db'}")
    intent = store_intent(engine)
    assert intent is not None and intent is store_intent(engine)
    with intent.announced():
        assert (tmp_path / "pbmserv.db.storing").exists()
    engine.dispose()
    # PostgreSQL's writers do not wait for each other: nothing to make way for (no connection
    # is made to find that out).
    assert store_intent(make_engine("postgresql+psycopg://postgres@127.0.0.1:5432/test")) is None
