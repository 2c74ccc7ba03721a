"""Built maps as scenarios: a registered map generator's map for each seed, built once and cached.

Two kinds of world are built here, one map per episode seed:

* a curriculum phase of a generator that can sample one (``sample(phase, seed) -> config``, as the
  ``golem-procgen`` generators do): ``golem run record --procgen-phase P --maps N`` and ``golem run
  evaluate --procgen-phase P --maps N`` play one episode on each of N maps;
* a fixed configuration, such as a look-alike *variant* of a shipped scenario (``{"scenario": ...,
  "modifications": [...]}`` for the ``vary`` generator): ``golem run record --vary textures`` plays every
  episode on a variant of its own.

Map *k* is built from seed ``start + k`` into a cache folder (by default
``<data.root>/maps/<generator>/phase<P>/`` or ``<data.root>/maps/<generator>/<scenario>-<modifications>/``);
its file name carries the seed and a hash of the configuration, so a map is reused while its files
are there and rebuilt when the configuration changes (the same configuration and seed give the same bytes).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from golem.errors import GolemError
from golem.registry import Registry
from golem.settings import GolemSettings
from golem.wad import validate_wad


@dataclass(frozen=True)
class GeneratedMap:
    """One built map as a scenario: ``scenario`` (its ``.cfg``, else the ``.wad``) and the ``seed`` built from.

    Attributes:
        scenario: the ``.cfg`` to play (else the ``.wad``).
        seed: the seed the map was built from (episodes on it are played with the same seed).
        params: the generator's description of the map (a curriculum configuration's parameters).
        generator: the registered generator that built it.
        phase: its curriculum phase (``None``: built from a fixed configuration).
        config_sha256: SHA-256 of the configuration it was built from (canonical JSON).
    """

    scenario: str
    seed: int
    params: dict[str, Any]
    generator: str = "builtin"
    phase: int | None = None
    config_sha256: str = ""

    def describe(self) -> dict[str, Any]:
        """What an episode on this map stores about it (``extra["world"]``)."""
        return {
            "generator": self.generator,
            "phase": self.phase,
            "seed": self.seed,
            "config_sha256": self.config_sha256,
            "params": dict(self.params),
        }


@dataclass(frozen=True)
class WorldPlan:
    """Where a recording's or an evaluation's episodes play: each episode seed on a map built for it.

    Attributes:
        generator: a registered map generator (``builtin``, ``oblige``, ``vary``, …).
        phase: a curriculum phase whose configuration the generator samples per seed, or ``None`` with ``config``.
        config: a fixed configuration for every seed (e.g. ``{"scenario": "take_cover", "modifications":
            ["textures"]}`` for ``vary``), or ``None`` with ``phase``.
        folder: the cache folder (``None``: :func:`worlds_folder`).
        scenario: the scenario name stored with each episode (a variant's shipped scenario, so training takes its
            spec); ``None``: the built map's ``.cfg`` path.
    """

    generator: str
    phase: int | None = None
    config: dict[str, Any] | None = None
    folder: str | None = None
    scenario: str | None = None
    tags: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if (self.phase is None) == (self.config is None):
            raise GolemError("a world plan needs exactly one of a curriculum phase and a fixed configuration")

    def label(self) -> str:
        """A short description for progress displays: ``phase-1 maps of builtin``, ``take_cover variants``."""
        if self.phase is not None:
            return f"phase-{self.phase} maps of {self.generator}"
        mods = "+".join((self.config or {}).get("modifications", [])) or self.generator
        return f"{self.scenario or 'map'} variants ({mods})"

    @property
    def seed_key(self) -> str:
        """The key a store reserves a curriculum phase's map seeds under (``builtin:phase1``)."""
        return f"{self.generator}:phase{self.phase}"

    def episode_tags(self) -> list[str]:
        """Tags every episode on these worlds gets (``--module`` selects by them)."""
        out = [*self.tags, f"generator:{self.generator}"]
        if self.phase is not None:
            out.append(f"procgen-phase{self.phase}")
        for mod in (self.config or {}).get("modifications", []):
            out.append(f"vary:{mod}")
        return out


def variation_plan(scenario: str, modifications: list[str] | tuple[str, ...]) -> WorldPlan:
    """Every episode of ``scenario`` on a look-alike variant of its own with ``modifications`` (generator
    ``vary``, golem-procgen), stored under the scenario's name so training takes its spec."""
    return WorldPlan(
        generator="vary", config={"scenario": scenario, "modifications": list(modifications)}, scenario=scenario
    )


def spec_variation(scenario: str, registry: Registry) -> WorldPlan | None:
    """The randomised recording ``scenario``'s spec asks for (:attr:`golem.scenarios.ScenarioSpec.vary`), else
    ``None``: its shipped map (a path is never varied by default, nor where no ``vary`` generator is installed)."""
    from golem.scenarios import is_scenario_name, scenario_spec

    if not is_scenario_name(scenario) or "vary" not in registry.names("map_generators"):
        return None
    mods = scenario_spec(scenario).vary
    return variation_plan(scenario, mods) if mods else None


def _field(info: Any, name: str) -> Any:
    return info.get(name) if isinstance(info, Mapping) else getattr(info, name, None)


def config_sha256(config: Mapping[str, Any]) -> str:
    """SHA-256 of ``config`` as canonical JSON (sorted keys, no spaces): what a cached map was built from."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def map_generator(settings: GolemSettings, registry: Registry, name: str, *, sampling: bool = True) -> Any:
    """The generator ``name`` built for ``settings``; with ``sampling`` it must be able to sample curriculum phases.

    Raises:
        GolemError: no generator of that name (none installed: install golem-procgen), or one without ``sample``.
    """
    if not registry.names("map_generators"):
        raise GolemError(
            "no map generator is installed: generated maps and variants need golem-procgen (pip install golem-procgen)"
        )
    generator = registry.get("map_generators", name).obj(settings)
    if sampling and not callable(getattr(generator, "sample", None)):
        raise GolemError(f"map generator {name!r} cannot sample curriculum phases (it has no sample(phase, seed))")
    return generator


def maps_folder(settings: GolemSettings, generator: str, phase: int) -> Path:
    """Where the maps of ``phase`` from ``generator`` are kept: ``<data.root>/maps/<generator>/phase<P>``."""
    return settings.data.root / "maps" / generator / f"phase{phase}"


def worlds_folder(settings: GolemSettings, plan: WorldPlan) -> Path:
    """The cache folder of ``plan``'s maps: its own ``folder``, a phase's :func:`maps_folder`, or
    ``<data.root>/maps/<generator>/<scenario>-<modifications>`` for a fixed configuration."""
    if plan.folder is not None:
        return Path(plan.folder)
    if plan.phase is not None:
        return maps_folder(settings, plan.generator, plan.phase)
    config = plan.config or {}
    name = "-".join(
        [str(config.get("scenario", "map")), "+".join(str(m) for m in config.get("modifications", [])) or "plain"]
    )
    return settings.data.root / "maps" / plan.generator / name


def build_world(
    settings: GolemSettings, registry: Registry, plan: WorldPlan, seed: int, *, generator: Any = None
) -> GeneratedMap:
    """The map of ``plan`` for ``seed``: reused from the cache folder when built before, else built there.

    Args:
        generator: the built generator to use (saves building it again per map); ``None``: from the registry.

    Raises:
        GolemError: no such generator, an unknown phase or configuration, or a build that fails (one line).
    """
    builder = (
        generator
        if generator is not None
        else map_generator(settings, registry, plan.generator, sampling=plan.phase is not None)
    )
    if plan.phase is not None:
        sampled = builder.sample(plan.phase, seed)
        config = sampled.as_dict() if hasattr(sampled, "as_dict") else dict(sampled)
    else:
        config = dict(plan.config or {})
    digest = config_sha256(config)
    folder = worlds_folder(settings, plan).resolve()
    wad = folder / f"seed{seed:06d}-{digest[:10]}.wad"
    cfg = wad.with_suffix(".cfg")
    if wad.is_file() and cfg.is_file():
        validate_wad(wad)  # a corrupt map left by an earlier run fails here with one line
        scenario = cfg
    else:
        info = builder.build(config, seed, wad)
        scenario = _field(info, "config") or _field(info, "path")
    return GeneratedMap(
        scenario=str(scenario),
        seed=int(seed),
        params=dict(config.get("params", config)),
        generator=plan.generator,
        phase=plan.phase,
        config_sha256=digest,
    )


def generated_maps(
    settings: GolemSettings,
    registry: Registry,
    phase: int,
    count: int,
    start_seed: int = 0,
    generator: str = "builtin",
    folder: Path | None = None,
    on_map: Callable[[GeneratedMap], None] | None = None,
) -> list[GeneratedMap]:
    """``count`` maps of curriculum ``phase`` from seeds ``start_seed …``, built where missing.

    Raises:
        GolemError: no such generator, an unknown phase, or a build that fails (one line).
    """
    plan = WorldPlan(generator=generator, phase=phase, folder=None if folder is None else str(folder))
    builder = map_generator(settings, registry, generator)
    out: list[GeneratedMap] = []
    for seed in range(start_seed, start_seed + count):
        item = build_world(settings, registry, plan, seed, generator=builder)
        out.append(item)
        if on_map is not None:
            on_map(item)
    return out


def world_matches(extra: Mapping[str, Any], generator: str | None, phase: int | None) -> bool:
    """Whether an episode's built map (``extra["world"]``) has ``generator`` and ``phase`` (``None``: any)."""
    if generator is None and phase is None:
        return True
    world = extra.get("world")
    if not isinstance(world, dict):
        return False
    return (generator is None or world.get("generator") == generator) and (phase is None or world.get("phase") == phase)


__all__ = [
    "GeneratedMap",
    "WorldPlan",
    "build_world",
    "config_sha256",
    "generated_maps",
    "map_generator",
    "maps_folder",
    "spec_variation",
    "variation_plan",
    "world_matches",
    "worlds_folder",
]
