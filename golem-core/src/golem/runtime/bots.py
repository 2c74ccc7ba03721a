"""The engine's bots, and the network game of one that Golem hosts so that one player can meet them.

ViZDoom's bots (``addbot``) only play in a network game, and the multiplayer maps (``cig``,
``multi_duel``) crash the engine outside one. An evaluation or a fine-tuning run that plays
against bots therefore hosts a deathmatch of one player on a free local port
(:func:`solo_game_args`): nobody else can join (the host accepts ``N − 1 = 0`` connection
requests), the engine starts at once, and :class:`AddBots` adds the bots at the start of every
episode. ``golem run match`` adds its bots the same way.
"""

from __future__ import annotations

from typing import Any

from golem.runtime.netgame import check_deathmatch_starts, free_port, host_args
from golem.runtime.rollout import Observer
from golem.runtime.session import multiplayer_only
from golem.scenarios import Scenario


class AddBots(Observer):
    """Adds ``count`` engine bots right after each episode starts (and removes the last episode's first).

    Args:
        count: bots to add; 0 adds none.
    """

    name = "bots"

    def __init__(self, count: int) -> None:
        self.count = int(count)

    def begin(self, session: Any, seed: int) -> None:
        game = session.game
        game.send_game_command("removebots")
        for _ in range(self.count):
            game.send_game_command("addbot")


def needs_network_game(scenario: Scenario, bots: int) -> bool:
    """Whether a lone player of ``scenario`` must host a network game: a multiplayer-only map, or bots."""
    return bots > 0 or multiplayer_only(scenario)


def solo_game_args(scenario: Scenario, bots: int, *, name: str = "golem", cheats_off: bool = True) -> list[str]:
    """Engine arguments that host a deathmatch of one player where :func:`needs_network_game` says so, else ``[]``.

    Args:
        scenario: the resolved scenario.
        bots: engine bots the episodes will add.
        name: the player's name in the game (what the bots' frag messages call it).
        cheats_off: ``+viz_nocheat 1`` (:func:`~golem.runtime.netgame.host_args`); an expert needs it off.

    Raises:
        GolemError: the map has no deathmatch starts (the engine would crash starting the game).
    """
    if not needs_network_game(scenario, bots):
        return []
    check_deathmatch_starts(scenario)
    return host_args(1, free_port(), "deathmatch", name=name, cheats_off=cheats_off)


__all__ = ["AddBots", "needs_network_game", "solo_game_args"]
