"""The robots (computer players): whether they play, and their share of the CPU."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RobotSettings:
    # Whether the robots (computer players, core.robots.turns) play: `serve` then thinks for them
    # in a process of its own at the lowest CPU priority, so a person's move never waits.
    robots: bool = True
    # CPU seconds a robot may think about one move at most (its level may stop sooner).
    robot_cpu_seconds: float = 5.0
    # Boards one person may have against robots at a time.
    robot_games_per_user: int = 5
    # How often the robots' process looks for boards where a robot is to act.
    robot_poll_seconds: float = 1.0
    # Fair shares of the robots' time (runtime.robot_fairness): turns thought about at once (each
    # for a different person), the CPU seconds one person's robot turns may take an hour
    # (then they wait), and the CPU seconds a robot thinks about a proposal (a draw).
    robot_turns_at_once: int = 2
    robot_cpu_seconds_per_person_per_hour: float = 600.0
    robot_proposal_cpu_seconds: float = 0.5
