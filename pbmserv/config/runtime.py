"""The processes `serve` runs and how often they look for work."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuntimeSettings:
    # Server processes `serve` runs, sharing the listening port (SO_REUSEPORT) and the
    # database: each uses a core of its own.
    workers: int = 1
    # Whether `serve` (each worker) plays the moves in a process of its own, apart from the
    # one that listens: the listener then stores at its own pace while moves are played.
    processing_process: bool = True
    # Processes of its own each `serve` (each worker) delivers mail from (drawing pictures,
    # signing, sending: as much CPU as playing the moves), beside the one that listens and
    # plays; 0 delivers from that one.
    delivery_processes: int = 1
    # How far below the listener's the CPU priority of `serve`'s child processes is (nice,
    # 0-19): in a burst the listener then keeps storing what arrives, and answering its
    # senders, while the moves and the mail wait their turn for the CPU. Measured on 2 cores
    # shared with PostgreSQL and the senders, 5 stored a PostgreSQL burst up to a third
    # faster but played a steady stream of moves a tenth slower: off unless bursts matter.
    child_niceness: int = 0
    poll_seconds: float = 2.0
    # How long processing waits, once woken from idle, for more messages before it takes what
    # came: messages arriving together then share one batch (one transaction, one look at the
    # passwords), a tenth less CPU a move under load for a few milliseconds of latency.
    processing_gather_seconds: float = 0.005
