"""A player's private link to a board: the web page of what their seat sees (their own secrets
in a game with hidden information), reached only by the link in their own board mail.

The link is a capability: a token of 192 bits, an HMAC of the board, the user and the link's
generation under a key derived from the server's own (``server_keys``), so every board mail can
carry it again without the server storing it; the database keeps only its SHA-256, to find the
link's holder. Revoking a link (by mail, ``GAME newlink``, or from the admin shell) moves it to
its next generation: the old token then finds nothing (404) and the next board mail carries the
new one. Once the board is over everything on it is public, and the web view sends the private
link's reader to the public page.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from pbmserv.core.accounts.bouncing import bounce_key
from pbmserv.db.models import PrivateLink

#: The token's bytes: 192 bits, written as 32 URL-safe base64 letters.
TOKEN_BYTES = 24
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{32}")
_PURPOSE = b"pbmserv private board links"


@dataclass(frozen=True)
class LinkHolder:
    """Whose private link a token is: a board, a user and the seat they play there."""

    board: int
    user_id: int
    seat: int


def _key(session: Session) -> bytes:
    return hmac.digest(bounce_key(session), _PURPOSE, hashlib.sha256)


def _token(key: bytes, board: int, user_id: int, generation: int) -> str:
    mac = hmac.digest(key, f"{board}:{user_id}:{generation}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac[:TOKEN_BYTES]).decode("ascii")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def private_token(session: Session, board: int, user_id: int, seat: int, now: datetime) -> str:
    """The token of the player's private link to ``board`` (made, its hash kept, on first use)."""
    key = _key(session)
    link = session.get(PrivateLink, (board, user_id))
    if link is None:
        token = _token(key, board, user_id, 1)
        session.add(
            PrivateLink(
                game_id=board,
                user_id=user_id,
                seat=seat,
                generation=1,
                token_hash=token_hash(token),
                created_at=now,
            )
        )
        return token
    return _token(key, board, user_id, link.generation)


def revoke(session: Session, board: int, user_id: int) -> bool:
    """Make the player's private link to ``board`` stop working (the next one is another);
    False when they had none."""
    link = session.get(PrivateLink, (board, user_id), with_for_update=True)
    if link is None:
        return False
    link.generation += 1
    link.token_hash = token_hash(_token(_key(session), board, user_id, link.generation))
    return True


def holder_of(session: Session, token: str) -> LinkHolder | None:
    """Whose link ``token`` is; None for anything that is not a live link's token."""
    if not TOKEN_PATTERN.fullmatch(token):
        return None
    found = session.execute(
        select(PrivateLink.game_id, PrivateLink.user_id, PrivateLink.seat).where(
            PrivateLink.token_hash == token_hash(token)
        )
    ).one_or_none()
    return None if found is None else LinkHolder(found.game_id, found.user_id, found.seat)
