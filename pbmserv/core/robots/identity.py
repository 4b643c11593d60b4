"""Who is a robot (core.robots.turns), told apart where mail and logins are decided."""

from __future__ import annotations

from pbmserv.db.models import User

#: Robots' addresses: a domain that never receives mail (RFC 2606).
ROBOT_DOMAIN = "robots.invalid"


def is_robot(user: User) -> bool:
    return user.robot_level is not None


def is_robot_address(address: str) -> bool:
    """Whether mail to ``address`` would go to a robot (it never goes)."""
    return address.strip().lower().endswith("@" + ROBOT_DOMAIN)
