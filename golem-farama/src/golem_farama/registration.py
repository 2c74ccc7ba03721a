"""Gymnasium ids for Golem's environment: ``Golem/<scenario>-v0``, one per scenario ViZDoom ships.

``import golem_farama`` registers them (loading Golem's plugins imports it), so after it

>>> env = gymnasium.make("Golem/defend_the_center-v0", sensors=["visual"], frame_skip=4)  # doctest: +SKIP

works, as does ``gymnasium.make("golem_farama:Golem/defend_the_center-v0")`` with no import of
its own (Gymnasium imports the module named before the colon). Gymnasium 1.x reads no
entry points, so an import is what registers third-party ids.

Each id's entry point is :class:`golem_farama.env.ScenarioEnv` with ``scenario`` and the
scenario's ``frame_skip`` as default kwargs, and ``max_episode_steps`` is the scenario's step
limit in tics (:attr:`golem.scenarios.ScenarioSpec.max_steps`, else the ``episode_timeout``
of its ``.cfg``) divided by that frame skip, rounded up. The limit is also set in the engine in
tics, so a different ``frame_skip`` keeps the same time-out; pass ``max_episode_steps`` with it
(``ceil(tics / frame_skip)``, or ``-1`` for the engine's limit alone) so the step count agrees.
Multiplayer-only maps (``cig``, ``multi_duel``: they need a network game) get no id.
"""

from __future__ import annotations

import math

import gymnasium

from golem.scenarios import MULTIPLAYER_ONLY_WADS, _config_value, known_scenarios, scenario_spec, scenarios_dir

#: Namespace of every Golem id.
NAMESPACE = "Golem"
#: Version suffix of the ids.
VERSION = 0
#: Entry point of every id (imported only when an env is made).
ENTRY_POINT = "golem_farama.env:ScenarioEnv"


def env_id(scenario: str) -> str:
    """The Gymnasium id of a shipped scenario: ``Golem/<scenario>-v0``."""
    return f"{NAMESPACE}/{scenario}-v{VERSION}"


def scenario_tic_limit(scenario: str) -> int | None:
    """A shipped scenario's episode limit in tics: its spec's ``max_steps``, else its ``.cfg``'s ``episode_timeout``."""
    spec = scenario_spec(scenario)
    if spec.max_steps is not None:
        return spec.max_steps
    value = _config_value(scenarios_dir() / f"{scenario}.cfg", "episode_timeout")
    try:
        tics = int(value) if value is not None else 0
    except ValueError:
        return None
    return tics if tics > 0 else None


def shipped_scenarios() -> list[str]:
    """The scenarios that get an id: every ``.cfg`` ViZDoom ships except the network-only maps (none without
    ViZDoom)."""
    try:
        shipped = known_scenarios()
    except ImportError:  # no engine installed: `import golem_farama` still works, with no ids
        return []
    names = []
    for name in shipped:
        wad = _config_value(scenarios_dir() / f"{name}.cfg", "doom_scenario_path") or ""
        if wad.rsplit("/", 1)[-1].lower() not in MULTIPLAYER_ONLY_WADS:
            names.append(name)
    return names


def register_envs() -> list[str]:
    """Register ``Golem/<scenario>-v0`` for every shipped scenario (ids already registered are kept).

    Returns:
        The ids, sorted by scenario name.
    """
    ids = []
    for name in shipped_scenarios():
        gid = env_id(name)
        ids.append(gid)
        if gid in gymnasium.registry:
            continue
        skip = scenario_spec(name).frame_skip
        tics = scenario_tic_limit(name)
        gymnasium.register(
            id=gid,
            entry_point=ENTRY_POINT,
            max_episode_steps=None if tics is None else math.ceil(tics / skip),
            kwargs={"scenario": name, "frame_skip": skip},
        )
    return ids
