"""``assert_expert_contract``: the checks every scripted expert must pass, for plugin authors' tests."""

from __future__ import annotations

from typing import Any

from golem.experts import Expert
from golem.profiles import PROFILES
from golem.runtime.rollout import run_episode
from golem.runtime.session import Session
from golem.settings import GolemSettings


def _network_game_of_one(scenario: str) -> list[str]:
    """Host arguments for a multiplayer-only map (``cig``), which the engine cannot start alone; else none."""
    from golem.runtime.netgame import free_port, host_args
    from golem.runtime.session import multiplayer_only
    from golem.scenarios import resolve_scenario

    if not multiplayer_only(resolve_scenario(scenario)):
        return []
    return host_args(1, free_port(), "deathmatch", name="expert", cheats_off=False)


class _CheckedExpert:
    """Plays an expert through the rollout loop, checking and keeping every action it gives."""

    def __init__(self, expert: Any, n_actions: int) -> None:
        self.expert, self.n_actions, self.name = expert, n_actions, expert.name
        self.actions: list[list[int]] = []

    def reset(self, game: Any) -> None:
        self.expert.reset(game)

    def act(self, game: Any, state: Any) -> list[int]:
        action = self.expert.act(game, state)
        name = self.name
        assert len(action) == self.n_actions, f"{name}: act gave {len(action)} values for {self.n_actions} actions"
        assert all(a in (0, 1) for a in action), f"{name}: act must give 0/1 values, got {action}"
        self.actions.append(list(action))
        return list(action)


def assert_expert_contract(
    expert_cls: type[Expert],
    settings: GolemSettings | None = None,
    *,
    tics: int = 64,
    seed: int = 0,
    scenario: str | None = None,
) -> Expert:
    """Play ``tics`` tics of ``scenario`` (default: the expert's first) on the real engine (headless).

    An expert for generated maps (``procedural = True``) is given a built map's ``.cfg`` as ``scenario``.

    Checks: the class names itself and its scenarios; it configures the engine
    before ``init()``; every ``act`` returns one 0/1 per action name of the
    profile; and the same seed gives the same actions (experts are
    deterministic, so recorded demonstrations are reproducible).

    Returns the expert instance after the run.
    """
    assert isinstance(getattr(expert_cls, "name", None), str) and expert_cls.name, "an expert needs a `name`"
    scenarios = getattr(expert_cls, "scenarios", ())
    assert scenarios and all(isinstance(s, str) for s in scenarios), (
        f"{expert_cls.name}: `scenarios` must name scenarios"
    )
    settings = settings or GolemSettings.model_construct()
    names = PROFILES[settings.brain.profile]
    runs: list[list[list[int]]] = []
    expert = expert_cls(names, settings)
    for _ in range(2):
        expert = expert_cls(names, settings)
        checked = _CheckedExpert(expert, len(names))
        with Session(
            settings,
            scenario=scenario or scenarios[0],
            seed=seed,
            configurers=[expert],
            extra_args=_network_game_of_one(scenario or scenarios[0]),
        ) as session:
            run_episode(session, checked, seed, max_steps=tics)
        runs.append(checked.actions)
    assert runs[0], f"{expert_cls.name}: the episode ended before the first tic"
    assert runs[0] == runs[1], f"{expert_cls.name}: the same seed gave different actions"
    return expert
