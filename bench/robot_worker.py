"""A robot of another commit, as a process: ``bench/robots.py`` plays ``L3@REV`` through it.

Run by REV's own Python (bench/rig/baseline.py builds REV in a venv of its own), so that the
robot is REV's code, whatever this tree has changed. It reads one JSON request a line on stdin
(``game``, ``state`` as ``game.dump`` writes it, ``seat``, ``level``, ``seed``) and answers
one JSON line (``text``: the move as mailed, ``cpu``: the CPU seconds the robot thought). It
speaks to both shapes of the robots' entry point: ``robot_move(game, state, seat, level, rng)``
before robots were handed a seat's view, ``robot_move(game, view, level, rng)`` after.
"""

from __future__ import annotations

import json
import random
import sys
import time
from typing import Any


def main() -> int:
    from pbmserv.games import find_game
    from pbmserv.robots import levels

    try:
        from pbmserv.robots.view import seat_view
    except ImportError:  # a commit from before the seat's view
        seat_view = None

    for line in sys.stdin:
        request = json.loads(line)
        game = find_game(request["game"])
        assert game is not None, request["game"]
        state = game.load(request["state"])
        seat, level, rng = request["seat"], request["level"], random.Random(request["seed"])
        began = time.process_time()
        args: tuple[Any, ...] = (
            (game, seat_view(game, state, seat)) if seat_view else (game, state, seat)
        )
        choice = levels.robot_move(*args, level, rng)
        answer = {"text": choice.text, "cpu": time.process_time() - began}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
