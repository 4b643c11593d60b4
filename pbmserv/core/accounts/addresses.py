"""Who writes from an address: the users registered with it, and the one who added it."""

from __future__ import annotations

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from pbmserv.db.models import User, UserAddress


def users_of_address(session: Session, address: str) -> list[User]:
    """The users whose registered address is ``address`` (case aside), and the user who added
    it (``add``), in user id order."""
    wanted = address.lower()
    added = select(UserAddress.user_id).where(UserAddress.address == wanted)
    query = select(User).where(
        or_(func.lower(User.email) == wanted, User.id.in_(added.scalar_subquery()))
    )
    return list(session.scalars(query.order_by(User.id)))


#: Most other addresses one user may add (``add``).
MAX_ADDRESSES = 5


def users_registered_at(session: Session, address: str) -> int:
    """How many open accounts have ``address`` (case aside) as their registered address."""
    query = select(func.count()).select_from(User)
    query = query.where(func.lower(User.email) == address.lower(), User.disabled.is_(False))
    return session.scalar(query) or 0
