"""A robot's turn, thought about and carried out.

The turn is thought about off every message's transaction (runtime.robot_runner): the board is
read, the robot thinks (pbmserv.robots) and the move is then played in a transaction of its
own through the path a person's move takes (commands.play.play_and_report): one history
entry, the board mail to the person and the observers in the same commit. That transaction
plays the move only if the board is still where the robot thought about it
(core.robots.turns.load_turn), so a move is never played twice, whoever thought about it meanwhile.

Proposals: a robot takes no moves back (its games are rated as any other) and agrees a draw
when its own search gives it no better than a draw (:data:`DRAW_ACCEPTED_AT_MOST`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pbmserv.core.commands.play import play_and_report
from pbmserv.core.commands.proposals import accept_and_tell, reject_and_tell
from pbmserv.core.context import CommandContext
from pbmserv.core.play import proposals
from pbmserv.core.play.boards import Board
from pbmserv.core.results import CommandError, Section
from pbmserv.core.robots.seeds import robot_rng
from pbmserv.core.robots.turns import RobotTurn
from pbmserv.robots.levels import robot_move, robot_value
from pbmserv.robots.view import seat_view

#: A robot agrees a draw when its search expects at most this share of a win for itself.
DRAW_ACCEPTED_AT_MOST = 0.45


@dataclass(frozen=True)
class Decision:
    """What a robot decided for a turn: the move's text, or "accept" / "reject"."""

    turn: RobotTurn
    answer: str
    #: CPU seconds it thought.
    cpu_seconds: float = 0.0


def decide(board: Board, turn: RobotTurn, cpu_seconds: float, key: bytes) -> Decision:
    """Think about ``turn`` on ``board`` (read before, outside any transaction that writes).
    The robot is told nothing but the state as its seat may see it (pbmserv.robots draws
    hidden pieces from that view) and a generator of its own, never the board's seed: one
    seeded under the server's secret ``key`` (core.robots.seeds.robot_key), so that no player
    can work out its reply in advance while the operator can replay it."""
    rng = robot_rng(key, turn)
    if turn.task == "undo":
        return Decision(turn, "reject")
    if turn.task == "draw":
        began = time.process_time()
        value = robot_value(
            board.game,
            seat_view(board.game, board.state, turn.seat),
            turn.level,
            rng,
            cpu_seconds=cpu_seconds,
        )
        answer = "accept" if value <= DRAW_ACCEPTED_AT_MOST else "reject"
        return Decision(turn, answer, time.process_time() - began)
    choice = robot_move(
        board.game, seat_view(board.game, board.state, turn.seat), turn.level, rng, cpu_seconds
    )
    return Decision(turn, choice.text, choice.cpu_seconds)


def carry_out(ctx: CommandContext, board: Board, decision: Decision) -> Section | None:
    """Play the robot's move, or give its answer, in the caller's transaction, as a person's
    would be (history, board mail, ratings); None when the proposal it answers is gone."""
    turn, game = decision.turn, board.game
    if turn.task == "move":
        return play_and_report(ctx, game, board, turn.seat, decision.answer)
    try:
        standing = proposals.answerable(ctx, board, turn.seat, turn.task)
    except CommandError:
        return None
    if decision.answer == "accept":
        return accept_and_tell(ctx, game, board, turn.seat, standing)
    return reject_and_tell(ctx, game, board, turn.seat, standing)
