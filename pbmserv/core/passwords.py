"""Password hashing with argon2 (constant-time verification inside argon2-cffi)."""

from __future__ import annotations

from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

# OWASP's minimum argon2id profile: strong enough, and fast enough to check every move.
_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    try:
        return _HASHER.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


@cache
def _dummy_hash() -> str:
    return _HASHER.hash("no such user")


def burn_verification_time(password: str) -> None:
    """Spend the time of a real check, so an unknown user id is not told apart by timing."""
    verify_password(_dummy_hash(), password)
