"""The engine's own netcode: who hosts, who joins, on which port, and with which arguments.

ViZDoom's multiplayer is ZDoom's peer-to-peer lockstep over UDP: the host is
started with ``-host N`` and waits in ``init()`` until ``N`` players have
joined with ``-join ADDR:PORT``; then every engine runs tic ``t`` only when it
holds every player's command for ``t``. In synchronous ``Mode.PLAYER`` each
player's engine computes a tic when its Python side calls ``make_action``.
Matches (``golem-match``) add a tic barrier on top of this.

What is exposed: the engine binds its UDP socket to every interface
(``INADDR_ANY`` in ``i_net.cpp``; there is no bind-address option and no join
password). The host's socket, on ``-port``, accepts the first ``N - 1``
connection requests from any address while it waits for its players; after
the game starts every engine drops packets from addresses that are not
players. Each joining engine listens on a random port of every interface.
An all-local match therefore hosts on a random free port rather than Doom's
well-known 5029 (:func:`host_port`); see ``docs/multiplayer-network.md``.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Literal

from golem.errors import GolemError
from golem.scenarios import Scenario, scenario_map
from golem.wad import read_wad, thing_types

#: Doom's network port: where a match that others join is hosted unless ``--port`` says otherwise.
DEFAULT_PORT = 5029
#: Engine tics per minute of game (the unit of the engine's ``timelimit``).
TICS_PER_MINUTE = 35 * 60
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
#: Editor number of a deathmatch start: a deathmatch needs at least one on its map.
DEATHMATCH_START = 11
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

    The engine listens on every interface (``INADDR_ANY``); a taken port makes it quit inside ``init()``.

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


def host_port(requested: int | None, *, all_local: bool) -> int:
    """The UDP port a host listens on: ``requested``, else a random free one when every player of the match
    starts on this machine (nobody needs to know it), else :data:`DEFAULT_PORT` (people joining expect it)."""
    if requested is not None:
        return int(requested)
    return free_port() if all_local else DEFAULT_PORT


def time_limit_arg(end_tic: int) -> str:
    """The host's ``+timelimit`` that ends the map when the engine's tic counter reaches ``end_tic``.

    The engine ends a deathmatch map at ``level.maptime >= (int)(timelimit * 35 * 60)`` (``p_spec.cpp``),
    computed in single precision from a value in minutes; half a tic more than ``end_tic`` keeps the
    truncation on ``end_tic``. The counter reads ``game.get_episode_start_time()`` (at least 1) when an
    episode starts, so a match of ``T`` tics ends at ``start + T``, the tic its episode time-out ends it.
    """
    return f"+timelimit {(int(end_tic) + 0.5) / TICS_PER_MINUTE:.9g}"


def host_args(
    players: int, port: int, rules: Rules, *, name: str, frag_limit: int | None = None, cheats_off: bool = True
) -> list[str]:
    """Engine arguments of the player that hosts ``players`` players (itself included) on ``port``.

    Args:
        players: human and agent players in the match (bots are added after the start, not counted).
        rules: ``deathmatch`` or ``coop``.
        name: the host player's name in the game.
        frag_limit: the engine's ``fraglimit``: the match ends when a player reaches it.
        cheats_off: ``+viz_nocheat 1`` (no privileged object lists in any engine); experts need it off.
    """
    args = [f"-host {int(players)}", f"-port {int(port)}", *(DEATHMATCH_ARGS if rules == "deathmatch" else COOP_ARGS)]
    if cheats_off:
        args.append("+viz_nocheat 1")
    if frag_limit is not None:
        args.append(f"+fraglimit {int(frag_limit)}")
    args.append(f"+name {name}")
    return args


def check_deathmatch_starts(scenario: Scenario, otherwise: str = "") -> None:
    """Refuse a deathmatch on a map without deathmatch starts: the engine dies (SIGSEGV) starting one there.

    Args:
        scenario: the resolved scenario.
        otherwise: what else the user may do, appended to the error (``"or cooperative rules (--coop)"``).

    Raises:
        GolemError: the map has no thing :data:`DEATHMATCH_START` (``deathmatch``, ``basic`` and most
            single-player scenarios), or its WAD cannot be read.
    """
    doom_map = scenario_map(scenario)
    wad = read_wad(scenario.wad) if scenario.wad is not None else None
    if wad is None or doom_map not in wad.maps():  # a map of the IWAD: Doom II's maps all have deathmatch starts
        return
    if DEATHMATCH_START not in thing_types(scenario.wad, doom_map, wad):
        raise GolemError(
            f"{scenario.name} ({scenario.wad.name} {doom_map}) has no deathmatch starts, and a deathmatch there "
            "crashes the engine: play a deathmatch map such as cig or multi_duel"
            + (f" {otherwise}" if otherwise else "")
        )


def join_args(address: Address, *, name: str) -> list[str]:
    """Engine arguments of a player joining the match hosted at ``address``."""
    return [f"-join {address.host}:{address.port}", f"+name {name}"]


__all__ = [
    "DEATHMATCH_START",
    "DEFAULT_PORT",
    "TICS_PER_MINUTE",
    "Address",
    "Rules",
    "check_deathmatch_starts",
    "check_port_free",
    "free_port",
    "host_args",
    "host_port",
    "join_args",
    "parse_address",
    "time_limit_arg",
]
