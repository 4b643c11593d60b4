"""A DKIM key that others can read is named at `serve`'s start, as ssh names its keys: the
key signs every mail of the domain, so whoever reads it can sign as the server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pbmserv.outbound.signing import key_file_exposure, new_key
from tests.e2e.processes import environment, run_pbmserv, start_serve
from tests.support import free_port

pytestmark = pytest.mark.db


def a_key(tmp_path: Path, mode: int, group: int | None = None) -> Path:
    key = tmp_path / "dkim.key"
    key.write_bytes(new_key(1024))
    os.chmod(key, mode)
    if group is not None:
        os.chown(key, -1, group)
    return key


def test_which_modes_expose_a_key(tmp_path: Path) -> None:
    assert key_file_exposure(a_key(tmp_path, 0o600)) is None
    assert key_file_exposure(a_key(tmp_path, 0o640, os.getegid())) is None  # our own group
    world = key_file_exposure(a_key(tmp_path, 0o644))
    assert world is not None and "readable by every user (mode 0644)" in world
    if os.geteuid() == 0:  # only root can give a file a group it is not in
        stranger = max({65534} - {os.getegid(), *os.getgroups()} or {65533})
        other = key_file_exposure(a_key(tmp_path, 0o640, stranger))
        assert other is not None and f"readable by the group {stranger}" in other


def test_serve_says_so_at_its_start(db_url: str, tmp_path: Path) -> None:
    key = a_key(tmp_path, 0o644)
    port = free_port()
    env = environment(
        db_url,
        tmp_path / "spool",
        PBMSERV_LISTEN=f"127.0.0.1:{port}",
        PBMSERV_DKIM_SELECTOR="pbmserv",
        PBMSERV_DKIM_KEY_FILE=str(key),
    )
    assert run_pbmserv(["db", "upgrade"], env).returncode == 0
    log_path = tmp_path / "serve.log"
    proc = start_serve(env, port, log_path)
    try:
        assert "readable by every user (mode 0644): chmod o-rwx it" in log_path.read_text()
    finally:
        proc.terminate()
        proc.wait(30)
