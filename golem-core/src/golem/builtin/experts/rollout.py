"""Play one episode with an expert (or the random baseline) and count what happened."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

import structlog
from vizdoom import GameVariable

log = structlog.get_logger(__name__)


class Policy(Protocol):
    """What the rollout needs: the expert interface."""

    def reset(self, game: Any) -> None: ...

    def act(self, game: Any, state: Any) -> list[int]: ...


@dataclass(frozen=True)
class EpisodeStats:
    """Outcome of one episode.

    Attributes:
        seed: engine seed of the episode.
        episode_return: total reward (the scenario's reward function).
        tics: tics played (actions sent), capped at ``max_tics``.
        kills: monsters killed (``KILLCOUNT``).
        ammo_used: pistol rounds fired (drop in ``AMMO2``).
        died: the player died.
        exited: the episode ended early without a death (the scenario's goal was reached).
    """

    seed: int
    episode_return: float
    tics: int
    kills: int
    ammo_used: int
    died: bool
    exited: bool

    def as_dict(self) -> dict[str, Any]:
        """The stats as a JSON-ready dict."""
        return asdict(self)


def play_episode(game: Any, policy: Policy, seed: int, max_tics: int = 2100) -> EpisodeStats:
    """Run one episode of an initialised ``game`` with ``policy``, at most ``max_tics`` tics.

    The seed is applied before ``new_episode()``, so two policies given the same
    seed meet the same episode start.
    """
    game.set_seed(seed)
    game.new_episode()
    policy.reset(game)
    ammo0 = game.get_game_variable(GameVariable.AMMO2)
    tics = 0
    while not game.is_episode_finished() and tics < max_tics:
        state = game.get_state()
        game.make_action(policy.act(game, state))
        tics += 1
    finished = game.is_episode_finished()
    died = bool(game.is_player_dead())
    timeout = game.get_episode_timeout()
    exited = finished and not died and (timeout == 0 or game.get_episode_time() < timeout)
    stats = EpisodeStats(
        seed=seed,
        episode_return=float(game.get_total_reward()),
        tics=tics,
        kills=int(game.get_game_variable(GameVariable.KILLCOUNT)),
        ammo_used=int(ammo0 - game.get_game_variable(GameVariable.AMMO2)),
        died=died,
        exited=bool(exited),
    )
    log.debug("episode_played", policy=getattr(policy, "name", type(policy).__name__), **stats.as_dict())
    return stats
