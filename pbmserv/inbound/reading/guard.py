"""``guard``: how each step of reading a message is kept from raising.

Reading a message must be total (see :mod:`pbmserv.inbound.reading.decode`): every step that
may meet a broken message runs through ``guard``, which gives a default instead of the exception.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")
_D = TypeVar("_D")


def guard(step: Callable[[], _T], default: _D) -> _T | _D:
    """Run one decoding step; a broken message makes it give ``default`` instead of raising."""
    try:
        return step()
    except Exception:
        return default
