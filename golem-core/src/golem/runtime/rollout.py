"""The one rollout loop: every episode Golem plays goes through :func:`run_episode`.

Recording, live play, evaluation, the experts' benchmark and the world
model's real-engine runner (and DAgger and multiplayer, which build on it)
differ only in who decides and who watches:

* a :class:`Policy` decides each tic: ``reset(game)`` at the start of an
  episode and after a death, ``act(game, state) -> buttons`` (one 0/1 per
  action name), or ``None`` while a human drives in spectator mode. A policy
  may also have ``label() -> buttons``, the action to *record* for the tic it
  last acted on (a :class:`MixingPolicy` executes one policy and labels with
  another); without it the executed buttons are the label.
* :class:`Observer` objects see every tic: ``before_tic(state)`` just before
  the engine advances (the recorder queues its sensor reads there, so they
  overlap the engine's tic), ``after_tic(tic)`` with the executed and label
  buttons and the reward, and ``begin``/``end`` around the episode.

The engine runs in synchronous ``Mode.PLAYER`` (or spectator mode for a
human): each tic blocks until the engine has computed it, so the engine's
clock paces the loop and nothing sleeps.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import structlog

from golem.errors import GolemError

if TYPE_CHECKING:
    from golem.runtime.session import Session

log = structlog.get_logger(__name__)


@runtime_checkable
class Policy(Protocol):
    """Whoever decides: a trained agent, a scripted expert, a controller, a human (``act`` → ``None``)."""

    def reset(self, game: Any) -> None:
        """A new episode starts, or the player respawned after a death."""

    def act(self, game: Any, state: Any) -> list[int] | None:
        """This tic's buttons (one 0/1 per action name), or ``None`` to let the engine read a human's keys."""


@dataclass(frozen=True)
class Tic:
    """One tic as the observers see it after the engine has advanced.

    Attributes:
        t: index of the tic in the episode (0-based).
        state: the ``vizdoom.GameState`` the decision was made on.
        executed: the buttons the engine executed (one 0/1 per action name).
        label: the buttons to record as the demonstration for this tic.
        reward: the scenario's reward for the tic.
    """

    t: int
    state: Any
    executed: list[int]
    label: list[int]
    reward: float


class Observer:
    """Sees every tic of an episode; override what you need (every method is a no-op here)."""

    def begin(self, session: Session, seed: int) -> None:
        """The episode with ``seed`` has just started (``new_episode`` was called)."""

    def before_tic(self, state: Any) -> None:
        """The tic's state, after the decision and just before the engine advances."""

    def after_tic(self, tic: Tic) -> None:
        """The tic has been played."""

    def end(self, result: EpisodeResult) -> None:
        """The episode is over (not called when the loop raised)."""

    def close(self) -> None:
        """Always called last, also when the loop raised: release threads and buffers."""


@dataclass(frozen=True)
class EpisodeResult:
    """What happened in one episode.

    Attributes:
        policy: who played (``model``, ``random``, an expert's name).
        seed: the engine seed.
        episode_return: the scenario's total reward.
        tics: tics played (survival time; 35 tics = 1 s), capped by ``max_steps``; at frame skip k
            each decision counts k (the last one may have been cut short by the episode's end).
        kills: monsters killed (``KILLCOUNT``).
        health: health at the end.
        dead: the player was dead at the end.
        deaths: deaths during the episode (respawns only happen in multiplayer).
        ammo_used: rounds fired (drop in ``AMMO2``, the pistol's and chaingun's ammunition).
        frags: the change of ``FRAGCOUNT`` (network games: +1 a player or bot killed, −1 a death by one's own
            hand; 0 in single play).
        exited: the episode ended before its time-out without a death (the scenario's goal was reached).
        terminated: the episode ended by itself (death or exit), as Gymnasium and Minari count it.
        truncated: the episode was cut by a time-out (the scenario's or ``max_steps``).
    """

    policy: str
    seed: int
    episode_return: float
    tics: int
    kills: int
    health: float
    dead: bool
    deaths: int
    ammo_used: int = 0
    frags: int = 0
    exited: bool = False
    terminated: bool = False
    truncated: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dict."""
        return asdict(self)


def policy_name(policy: Any) -> str:
    """The name a policy reports in results (its ``name`` attribute, else its class name)."""
    return str(getattr(policy, "name", type(policy).__name__))


def respawn_buttons(session: Session) -> list[int]:
    """The buttons that respawn a dead player in one tic each: ``USE`` (else ``ATTACK``) pressed.

    Raises:
        GolemError: the profile has neither button.
    """
    names = list(session.action_names)
    for name in ("USE", "ATTACK"):
        if name in names:
            return [int(n == name) for n in names]
    raise GolemError("a multiplayer player needs USE or ATTACK in its action profile to respawn")


def run_episode(
    session: Session,
    policy: Policy,
    seed: int,
    *,
    max_steps: int | None = None,
    observers: Sequence[Observer] = (),
    pace: Callable[[], None] | None = None,
) -> EpisodeResult:
    """Play one episode of ``session`` with ``policy``; the engine's tic is the clock (no sleeps).

    Args:
        session: a started session (synchronous player mode, or spectator mode for a human).
        policy: decides every tic (see :class:`Policy`); reset at the start and after every death.
        seed: engine seed; two policies given one seed meet the same episode start.
        max_steps: stop after this many tics (``None``: the scenario's own time-out); each decision
            holds its buttons ``game.frame_skip`` tics.
        observers: see every tic, in order (recorder, video, statistics).
        pace: called before every call that advances the engine (lockstep multiplayer: a barrier
            all local players pass together, so they hand the engine each tic's commands at once).
            With it a dead player respawns by pressing ``USE`` one tic at a time through the same
            path instead of ``respawn_player()``, which runs several tics on its own.

    Returns:
        The :class:`EpisodeResult`.

    Raises:
        GolemError: the episode ended before its first tic.
    """
    from vizdoom import GameVariable

    game = session.game
    session.new_episode(seed)
    policy.reset(game)
    label_of = getattr(policy, "label", None)
    try:
        for observer in observers:
            observer.begin(session, seed)
        ammo0 = game.get_game_variable(GameVariable.AMMO2)
        frags0 = game.get_game_variable(GameVariable.FRAGCOUNT)
        tics = deaths = 0
        settings = getattr(session, "settings", None)
        hold = int(settings.game.frame_skip) if settings is not None else 1  # tics each decision holds its buttons
        cut = dead_before = False
        respawn = respawn_buttons(session) if pace is not None else None
        while not game.is_episode_finished():
            if game.is_player_dead():  # multiplayer: the episode goes on after a death
                deaths += int(not dead_before)
                dead_before = True
                if respawn is None:
                    game.respawn_player()
                else:
                    pace()
                    session.act(respawn, 1)
                continue
            if dead_before:  # respawned: a carried state starts afresh
                policy.reset(game)
                dead_before = False
            state = game.get_state()
            action = policy.act(game, state)
            for observer in observers:
                observer.before_tic(state)
            if pace is not None:
                pace()
            if action is None:  # a human drives: the engine reads the keys
                session.advance(1)
                executed = session.last_action
                reward = float(game.get_last_reward())
            else:
                executed = [int(b) for b in action]
                reward = session.act(executed, hold)
            label = list(label_of()) if label_of is not None else executed
            tic = Tic(t=tics, state=state, executed=executed, label=label, reward=reward)
            for observer in observers:
                observer.after_tic(tic)
            tics += 1 if action is None else hold
            if max_steps is not None and tics >= max_steps:
                cut = not game.is_episode_finished()
                break
        if tics == 0:
            raise GolemError(f"episode with seed {seed} ended before its first tic")
        dead = bool(game.is_player_dead())
        if dead:  # the last tic killed the player: a carried state must not outlive it
            policy.reset(game)
        finished = bool(game.is_episode_finished())
        timeout = int(game.get_episode_timeout())
        exited = finished and not dead and (timeout == 0 or game.get_episode_time() < timeout)
        result = EpisodeResult(
            policy=policy_name(policy),
            seed=int(seed),
            episode_return=float(game.get_total_reward()),
            tics=tics,
            kills=int(game.get_game_variable(GameVariable.KILLCOUNT)),
            health=float(game.get_game_variable(GameVariable.HEALTH)),
            dead=dead,
            deaths=deaths + int(dead and not dead_before),
            ammo_used=int(ammo0 - game.get_game_variable(GameVariable.AMMO2)),
            frags=int(game.get_game_variable(GameVariable.FRAGCOUNT) - frags0),
            exited=bool(exited),
            terminated=dead or bool(exited),
            truncated=cut or (finished and not dead and not exited),
        )
        for observer in observers:
            observer.end(result)
    finally:
        for observer in observers:
            observer.close()
    log.debug("episode_played", **result.as_dict())
    return result


class HumanPolicy:
    """A person at the keyboard in spectator mode: the engine reads the keys (``act`` returns ``None``)."""

    name = "human"

    def reset(self, game: Any) -> None:
        """Nothing to reset: the person carries their own state."""

    def act(self, game: Any, state: Any) -> None:
        """``None``: the engine advances with the buttons the person holds."""
        return None


class MixingPolicy:
    """Execute ``executor``'s action with probability ``1 − beta`` per tic, else ``labeller``'s; label with
    ``labeller``.

    Both policies see every tic (so stateful ones — a recurrent agent, an
    expert with cooldowns — stay in step whichever action ran). ``beta = 1``
    executes the labeller only (plain behavioural-cloning data), ``beta = 0``
    the executor only (the DAgger learner with expert labels).

    Attributes:
        executed_labeller: tics on which the labeller's action was executed.
        disagreements: tics on which the two policies' buttons differed.
    """

    def __init__(self, executor: Policy, labeller: Policy, beta: float, *, seed: int = 0) -> None:
        if not 0.0 <= beta <= 1.0:
            raise GolemError(f"beta must be between 0 and 1, got {beta}")
        self.executor, self.labeller, self.beta = executor, labeller, float(beta)
        self.name = f"mix({policy_name(executor)}, {policy_name(labeller)}, beta={self.beta:g})"
        self._rng = random.Random(seed)
        self._label: list[int] = []
        self.executed_labeller = self.disagreements = 0

    def reset(self, game: Any) -> None:
        """Reset both policies."""
        self.executor.reset(game)
        self.labeller.reset(game)

    def act(self, game: Any, state: Any) -> list[int]:
        """Ask both; return the executed one and keep the label."""
        mine = self.executor.act(game, state)
        theirs = self.labeller.act(game, state)
        if mine is None or theirs is None:
            raise GolemError("a mixing policy needs two deciding policies, not a human in spectator mode")
        self._label = [int(b) for b in theirs]
        self.disagreements += int(list(mine) != self._label)
        if self._rng.random() < self.beta:
            self.executed_labeller += 1
            return list(self._label)
        return [int(b) for b in mine]

    def label(self) -> list[int]:
        """The labeller's buttons for the tic last acted on."""
        return list(self._label)


__all__ = [
    "EpisodeResult",
    "HumanPolicy",
    "MixingPolicy",
    "Observer",
    "Policy",
    "Tic",
    "policy_name",
    "respawn_buttons",
    "run_episode",
]
