"""Files only the server's own user may read: the database file and the spool of outgoing mail
(a mailed password reset lies there). Made so at creation, whatever the umask."""

from __future__ import annotations

import os
from pathlib import Path

PRIVATE_FILE = 0o600
PRIVATE_FOLDER = 0o700


def private_folder(path: Path) -> None:
    """Make ``path`` and its missing parents; the folders made here are 0700. A folder that
    exists is left as its owner set it (an operator may share it with an MTA on purpose)."""
    missing: list[Path] = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_FOLDER)
        except FileExistsError:  # made by another process meanwhile
            continue
        os.chmod(folder, PRIVATE_FOLDER)  # the umask may have taken bits the owner needs


def create_private_file(path: Path) -> None:
    """Create an empty ``path`` as 0600 unless it exists (then it is left alone)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
    except FileExistsError:
        return
    os.fchmod(descriptor, PRIVATE_FILE)
    os.close(descriptor)


def open_private_for_writing(path: Path) -> int:
    """A descriptor of a new or truncated ``path`` that only its owner may read."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    os.fchmod(descriptor, PRIVATE_FILE)
    return descriptor
