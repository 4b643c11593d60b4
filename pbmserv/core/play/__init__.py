"""Play: a board from its challenge to its end (the game service: load, parse, apply, persist),
consent and declining, queued moves, proposals, board numbers, and the mail a board sends."""
