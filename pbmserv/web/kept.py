"""A small store of values kept least recently used first out, safe across the threads the
site's views run in (functools.lru_cache keeps a function's results; these are values looked up
and put by their keys, and the states of past positions are searched by ply)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Kept(Generic[K, V]):
    """At most ``capacity`` values by key; the least recently used goes first."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._values: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._values.get(key)
            if value is not None:
                self._values.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self.capacity:
                self._values.popitem(last=False)
