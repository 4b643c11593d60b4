"""Password checks done ahead, outside the transaction that runs the commands.

argon2 costs tens of milliseconds by design. On SQLite the command transaction holds the
database's only write lock, so a check inside it would hold up everything, even the listener
storing new mail. The processor therefore reads the stored hashes of the users named on a batch's
command lines, checks their passwords once the transaction has stepped back, and hands the
results to the commands; a result counts only if the stored hash is still the one checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, select

from pbmserv.core.accounts.passwords import verify_password
from pbmserv.db.models import User


@dataclass(frozen=True)
class CheckedPassword:
    password_hash: str
    right: bool


#: (lower-cased user id, password) -> the check made ahead.
PasswordChecks = Mapping[tuple[str, str], CheckedPassword]


def stored_hashes(conn: Connection, pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The stored hashes of the users the pairs name (lower-cased user id -> hash)."""
    userids = sorted({userid.lower() for userid, _password in pairs if len(userid) <= 64})
    if not userids:
        return {}
    found = conn.execute(_HASHES, {"userids": userids})
    return {userid: stored for userid, stored in found.all()}


#: Built once: every batch with a password reads its hashes.
_HASHES = select(User.userid, User.password_hash).where(
    User.userid.in_(bindparam("userids", expanding=True))
)


def check_ahead(hashes: Mapping[str, str], pairs: Iterable[tuple[str, str]]) -> PasswordChecks:
    """Check each (user id, password) pair whose user exists (``hashes``, from
    :func:`stored_hashes`); unknown user ids are left to the command (a sign-up names one
    that does not exist yet). Run it outside any transaction: this is where argon2 runs."""
    checks: dict[tuple[str, str], CheckedPassword] = {}
    for userid, password in pairs:
        key = (userid.lower(), password)
        stored = hashes.get(key[0])
        if stored is not None and key not in checks:
            checks[key] = CheckedPassword(stored, verify_password(stored, password))
    return checks
