"""The tic barrier that holds a match's local players in exact lockstep.

Measured on ViZDoom 1.3.2 (``bench/bench_match.py``, ``tests/test_match.py``):
the netcode alone does not hold a slow *joining* player to one tic per
decision. When a joiner decides more slowly than the host, the host runs
ahead and the joiner's engine runs two tics per ``make_action`` to catch up
(its command held for both; 99.9 % of its steps in the benchmark, the two
engines up to a thousand tics apart at the same step). A slower host holds
the joiners back by itself. A :class:`TicBarrier` shared by the players one
command starts restores exact lockstep: every player hands the engine its
command for tic ``t`` only once all have decided tic ``t``, so every engine
steps exactly one tic per pass of the barrier and a slow player slows the
match instead of skipping tics. A decision held for ``k`` tics (frame skip
``k``) is handed to the engine one tic at a time, one pass each: players with
different frame skips, or a dead one pressing ``USE``, pass the barrier the
same number of times per tic (with one multi-tic ``make_action`` per
decision their passes drift apart and the match stalls). Players joining
from another command (another machine, a person) are held by the netcode
only; an agent's CfC then integrates the tics that really passed
(``game.timespans = engine``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from golem.errors import GolemError


class MatchAborted(GolemError):
    """Another player of the match stopped (it died, failed, or the match was called off)."""


class TicBarrier:
    """All local players pass it together before each tic, so their engines stay in lockstep; it logs each tic.

    Called before every tic a player's engine advances (decisions, each tic of a held decision and respawn
    presses alike; see :class:`golem_match.match.LockstepSession`).

    Args:
        barrier: a ``multiprocessing`` barrier for the number of local players (``None``: one player,
            nothing to wait for; the tics are still logged).
        timeout: seconds to wait for the slowest player before calling the match off.
        player: this player's name, for the message.
        clock: the engine's tic now (``game.get_episode_time``).

    Attributes:
        tic: per tic advanced, the engine's tic counter before it.
        wall_ns: per tic advanced, ``time.perf_counter_ns()`` when the barrier let it through
            (CLOCK_MONOTONIC: comparable between the processes of one machine).
    """

    def __init__(self, barrier: Any | None, timeout: float, player: str, clock: Callable[[], int]) -> None:
        self.barrier, self.timeout, self.player, self.clock = barrier, float(timeout), player, clock
        self.tic: list[int] = []
        self.wall_ns: list[int] = []

    def __call__(self) -> None:
        """Wait for every other local player to reach the same point, then log the tic.

        Raises:
            MatchAborted: a player did not arrive within the timeout, or the match was called off.
        """
        if self.barrier is not None:
            try:
                self.barrier.wait(self.timeout)
            except threading.BrokenBarrierError:
                raise MatchAborted(
                    f"{self.player}: another player did not reach tic {len(self.tic) + 1} within {self.timeout:g}s "
                    "or the match was called off"
                ) from None
        self.wall_ns.append(time.perf_counter_ns())
        self.tic.append(int(self.clock()))


def episode_tics(end_clock: int, tics: Sequence[int], start_tic: int) -> int:
    """Tics a player's game ran in an episode, from its first tic to its end.

    Args:
        end_clock: the engine's tic counter after the episode (0 once a frag limit ended the map).
        tics: the counter before each tic the player advanced (:attr:`TicBarrier.tic`).
        start_tic: the counter when ``new_episode`` returned.

    A player who joined over the network can return from ``new_episode`` before the game's first tic has
    run — its counter still 0 where the host's reads 1 — and may pass the barrier once more before the
    counter moves; a started episode's counter is never 0, so such a player's episode began at the first
    tic it logged above 0. The end is the tic after the last one advanced when the counter was reset.
    """
    first = int(start_tic) if start_tic > 0 else min((int(t) for t in tics if t > 0), default=1)
    last = int(tics[-1]) + 1 if tics else 0
    return max(max(int(end_clock), last) - first, 0)


__all__ = ["MatchAborted", "TicBarrier", "episode_tics"]
