"""The engine's own netcode, as a match uses it: who hosts, who joins, and the tic barrier.

ViZDoom's multiplayer is ZDoom's peer-to-peer lockstep over UDP: the host is
started with ``-host N`` and waits in ``init()`` until ``N`` players have
joined with ``-join ADDR:PORT``; then every engine runs tic ``t`` only when it
holds every player's command for ``t``. In synchronous ``Mode.PLAYER`` each
player's engine computes a tic when its Python side calls ``make_action``.

Measured on ViZDoom 1.3.2 (``bench/bench_match.py``, ``tests/test_match.py``):
the netcode alone does not hold a slow *joining* player to one tic per
decision. When a joiner decides more slowly than the host, the host runs
ahead and the joiner's engine runs two tics per ``make_action`` to catch up
(its command held for both; 99.9 % of its steps in the benchmark, the two
engines up to a thousand tics apart at the same step). A slower host holds
the joiners back by itself. A :class:`TicBarrier` shared by the players one
command starts restores exact lockstep: every player hands the engine its
command for tic ``t`` only once all have decided tic ``t``, so every engine
steps exactly one tic per decision and a slow player slows the match instead
of skipping tics. Players joining from another command (another machine, a
person) are held by the netcode only; an agent's CfC then integrates the tics
that really passed (``game.timespans = engine``).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from golem.errors import GolemError

#: Doom's network port.
DEFAULT_PORT = 5029
#: Deathmatch rules: respawn at once, far from the killer, no auto-aim, no cheats (``state.objects`` stays empty
#: unless an expert switches cheats back on for its own engine — see :func:`host_args`).
DEATHMATCH_ARGS = (
    "-deathmatch",
    "+sv_forcerespawn 1",
    "+sv_noautoaim 1",
    "+sv_respawnprotect 1",
    "+sv_spawnfarthest 1",
    "+viz_respawn_delay 0",
)
#: Cooperative rules: everyone against the map's monsters.
COOP_ARGS = ("+sv_forcerespawn 1", "+sv_noautoaim 1", "+viz_respawn_delay 0")

Rules = Literal["deathmatch", "coop"]


@dataclass(frozen=True)
class Address:
    """Where a match is hosted: ``host`` (name or IPv4) and UDP ``port``."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


def parse_address(text: str, default_port: int = DEFAULT_PORT) -> Address:
    """``ADDR[:PORT]`` → :class:`Address`.

    Raises:
        GolemError: an empty address, a port that is not 1–65535, or a name that does not resolve.
    """
    host, sep, port_text = text.strip().rpartition(":")
    if not sep:
        host, port_text = text.strip(), ""
    if not host:
        raise GolemError(f"--join needs an address such as 127.0.0.1 or 127.0.0.1:{default_port}, got {text!r}")
    try:
        port = int(port_text) if port_text else default_port
    except ValueError:
        raise GolemError(f"port in {text!r} is not a number") from None
    if not 0 < port < 65536:
        raise GolemError(f"port {port} is not between 1 and 65535")
    try:
        socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_DGRAM)
    except socket.gaierror:
        raise GolemError(f"cannot resolve the match host {host!r}") from None
    return Address(host, port)


def check_port_free(port: int) -> None:
    """Fail with one line if the UDP ``port`` the host would listen on is taken.

    The engine listens on every interface; a taken port makes it quit inside ``init()``.

    Raises:
        GolemError: the port is in use (another match, another game).
    """
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.bind(("", port))
    except OSError as exc:
        raise GolemError(f"UDP port {port} is in use ({exc.strerror}); host on another one with --port") from None
    finally:
        probe.close()


def free_port() -> int:
    """A UDP port nobody listens on now (for tests and benchmarks)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.bind(("", 0))
        return int(probe.getsockname()[1])
    finally:
        probe.close()


def host_args(players: int, port: int, rules: Rules, *, name: str, time_limit_min: float | None = None,
              frag_limit: int | None = None, cheats_off: bool = True) -> list[str]:
    """Engine arguments of the player that hosts ``players`` players (itself included) on ``port``.

    Args:
        players: human and agent players in the match (bots are added after the start, not counted).
        rules: ``deathmatch`` or ``coop``.
        name: the host player's name in the game.
        time_limit_min: the engine's ``timelimit`` in minutes (the match also ends at its tic limit).
        frag_limit: the engine's ``fraglimit``: the match ends when a player reaches it.
        cheats_off: ``+viz_nocheat 1`` (no privileged object lists in any engine); experts need it off.
    """
    args = [f"-host {int(players)}", f"-port {int(port)}", *(DEATHMATCH_ARGS if rules == "deathmatch" else COOP_ARGS)]
    if cheats_off:
        args.append("+viz_nocheat 1")
    if time_limit_min is not None:
        args.append(f"+timelimit {time_limit_min:g}")
    if frag_limit is not None:
        args.append(f"+fraglimit {int(frag_limit)}")
    args.append(f"+name {name}")
    return args


def join_args(address: Address, *, name: str) -> list[str]:
    """Engine arguments of a player joining the match hosted at ``address``."""
    return [f"-join {address.host}:{address.port}", f"+name {name}"]


class MatchAborted(GolemError):
    """Another player of the match stopped (it died, failed, or the match was called off)."""


class TicBarrier:
    """All local players pass it together before each tic, so their engines stay in lockstep; it logs each tic.

    Used as :func:`golem.runtime.rollout.run_episode`'s ``pace``: called before every call that advances
    the engine (decisions and respawn presses alike).

    Args:
        barrier: a ``multiprocessing`` barrier for the number of local players (``None``: one player,
            nothing to wait for; the tics are still logged).
        timeout: seconds to wait for the slowest player before calling the match off.
        player: this player's name, for the message.
        clock: the engine's tic now (``game.get_episode_time``).

    Attributes:
        tic: per engine advance, the engine's tic before it.
        wall_ns: per engine advance, ``time.perf_counter_ns()`` when the barrier let it through
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


__all__ = [
    "DEFAULT_PORT",
    "Address",
    "MatchAborted",
    "Rules",
    "TicBarrier",
    "check_port_free",
    "free_port",
    "host_args",
    "join_args",
    "parse_address",
]
