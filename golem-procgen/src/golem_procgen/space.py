"""The map parameter space, the curriculum's phases and the conditional priors (seed 001, §5).

A map configuration is one value per parameter — Oblige's names as the seed
uses them (``size``, ``theme``, ``outdoors``, ``steepness``, ``liquids``,
``teleporters``, ``mons``, ``strength``). :func:`sample_configuration` draws
one per parameter, uniformly from the phase's bounds
(:func:`phase_constraints`: phase 1 and 2 exactly as the seed's
``_get_phase_constraints``, phase 3 the configured ``procgen.space``), then
applies the seed's three conditional priors (:func:`apply_priors`) and records
which of them fired. The draw depends only on ``(phase, seed)`` and the
configured space, so the same seed and phase give the same configuration.

Pure Python: no engine, no files.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import Field, field_validator

from golem.errors import GolemError
from golem.settings import ComponentSettings

#: Every value a parameter can take, in increasing order of difficulty. ``lots``/``swarms``/``plenty``
#: are the seed's names; the Oblige backend maps them to Oblige 7.70's own (see :mod:`golem_procgen.oblige`).
VOCABULARY: dict[str, tuple[str, ...]] = {
    "size": ("micro", "small", "regular", "large"),
    "theme": ("original", "tech", "urban", "hell", "mixed"),
    "outdoors": ("none", "mixed", "plenty"),
    "steepness": ("none", "mixed", "plenty"),
    "liquids": ("none", "mixed", "plenty"),
    "teleporters": ("none", "mixed", "plenty"),
    "mons": ("none", "sparse", "normal", "lots", "swarms"),
    "strength": ("easier", "normal", "harder"),
}
PARAMETERS: tuple[str, ...] = tuple(VOCABULARY)
PHASES: tuple[int, ...] = (1, 2, 3)

#: The seed's ``_get_phase_constraints`` for phases 1 and 2, value for value. Phase 3 is the configured space.
PHASE_BOUNDS: dict[int, dict[str, tuple[str, ...]]] = {
    1: {
        "size": ("micro", "small"),
        "theme": ("original", "tech"),
        "outdoors": ("none",),
        "steepness": ("none",),
        "liquids": ("none",),
        "teleporters": ("none",),
        "mons": ("none", "sparse"),
        "strength": ("easier", "normal"),
    },
    2: {
        "size": ("regular",),
        "theme": ("urban", "hell", "mixed"),
        "outdoors": ("mixed",),
        "steepness": ("mixed",),
        "liquids": ("mixed",),
        "teleporters": ("none",),  # still none: a teleport replaces the whole view at once
        "mons": ("normal", "lots"),
        "strength": ("normal",),
    },
}

#: The conditional priors, in the order the seed applies them: name → what it does.
PRIORS: dict[str, str] = {
    "volume-vs-density": "a micro map with lots or swarms of monsters gets a normal density",
    "verticality-vs-outdoors": "plenty of steepness with no outdoors gets mixed outdoors",
    "teleporter-amnesia": "plenty of teleporters on a micro or small map gets none",
}


def _full_space() -> dict[str, list[str]]:
    return {k: list(v) for k, v in VOCABULARY.items()}


class ProcgenSettings(ComponentSettings):
    """Procedural maps (``procgen.*``): the space phase 3 samples from, and the backends' limits."""

    key: ClassVar[str] = "procgen"

    space: dict[str, list[str]] = Field(
        default_factory=_full_space,
        description="values each map parameter may take in phase 3 (the full distribution); "
        "phases 1 and 2 use the seed's bounds",
    )
    oblige_binary: str = Field(
        "", description="path to the Oblige 7.70 binary (empty: the one `make oblige` builds under .oblige/)"
    )
    oblige_timeout_s: float = Field(120.0, gt=0.0, description="seconds one Oblige build may take before it is killed")

    @field_validator("space")
    @classmethod
    def _known_values(cls, space: dict[str, list[str]]) -> dict[str, list[str]]:
        try:
            check_space(space)
        except GolemError as exc:  # pydantic reports ValueError as a validation error
            raise ValueError(str(exc)) from None
        return {k: list(space.get(k) or VOCABULARY[k]) for k in PARAMETERS}


def check_space(space: Mapping[str, Sequence[str]]) -> None:
    """Refuse unknown parameters and values with one line.

    Raises:
        GolemError: a parameter not in :data:`VOCABULARY`, or a value it cannot take.
    """
    for name, values in space.items():
        if name not in VOCABULARY:
            raise GolemError(f"unknown map parameter {name!r}; known: {', '.join(PARAMETERS)}")
        if isinstance(values, str):
            values = [values]
        for value in values:
            if value not in VOCABULARY[name]:
                raise GolemError(
                    f"unknown value {value!r} for map parameter {name}; known: {', '.join(VOCABULARY[name])}"
                )


def check_phase(phase: int) -> int:
    """``phase`` if it is a curriculum phase (1, 2, 3), else one clear error."""
    if phase not in PHASES:
        raise GolemError(f"unknown curriculum phase {phase!r}; phases are 1, 2 and 3")
    return int(phase)


def phase_constraints(phase: int, space: Mapping[str, Sequence[str]] | None = None) -> dict[str, list[str]]:
    """The values each parameter may take in ``phase``.

    As the seed: a phase's bound, where it has one, replaces the configured
    values; otherwise (and in phase 3) the configured ``space`` applies.

    Args:
        phase: 1, 2 or 3.
        space: the configured full space (default: every value in :data:`VOCABULARY`).
    """
    check_phase(phase)
    base = _full_space() if space is None else {k: list(space.get(k) or VOCABULARY[k]) for k in PARAMETERS}
    check_space(base)
    bounds = PHASE_BOUNDS.get(phase, {})
    return {k: list(bounds.get(k) or base[k]) for k in PARAMETERS}


@dataclass(frozen=True)
class MapConfig:
    """One sampled map configuration.

    Attributes:
        phase: the curriculum phase it was drawn in.
        seed: the seed it was drawn with (the generators build with the same seed).
        params: one value per parameter of :data:`PARAMETERS`.
        priors: names of the conditional priors (:data:`PRIORS`) that changed it, in order.
    """

    phase: int
    seed: int
    params: dict[str, str]
    priors: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``phase``, ``seed``, ``params``, ``priors``."""
        return {"phase": self.phase, "seed": self.seed, "params": dict(self.params), "priors": list(self.priors)}


def apply_priors(params: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
    """The seed's three conditional priors, applied in its order.

    Returns:
        The adjusted parameters and the names of the priors that fired.
    """
    out = dict(params)
    fired: list[str] = []
    if out.get("size") == "micro" and out.get("mons") in ("lots", "swarms"):
        out["mons"] = "normal"
        fired.append("volume-vs-density")
    if out.get("steepness") == "plenty" and out.get("outdoors") == "none":
        out["outdoors"] = "mixed"
        fired.append("verticality-vs-outdoors")
    if out.get("teleporters") == "plenty" and out.get("size") in ("micro", "small"):
        out["teleporters"] = "none"
        fired.append("teleporter-amnesia")
    return out, tuple(fired)


def sample_configuration(
    phase: int, seed: int, space: Mapping[str, Sequence[str]] | None = None, overrides: Mapping[str, str] | None = None
) -> MapConfig:
    """Draw one map configuration for ``phase`` from ``seed``.

    Each parameter is drawn uniformly from its phase bound (in
    :data:`PARAMETERS` order, one ``random.Random`` seeded by phase and seed),
    ``overrides`` replace drawn values (as the seed's explicit overrides), then
    the conditional priors apply.

    Raises:
        GolemError: unknown phase, parameter or value.
    """
    bounds = phase_constraints(phase, space)
    rng = random.Random(f"golem-procgen:{phase}:{int(seed)}")
    params = {k: rng.choice(bounds[k]) for k in PARAMETERS}
    if overrides:
        check_space(overrides)
        params.update(overrides)
    params, fired = apply_priors(params)
    return MapConfig(phase=phase, seed=int(seed), params=params, priors=fired)


def config_from_mapping(raw: Mapping[str, Any]) -> dict[str, str]:
    """A full, checked parameter mapping from ``raw`` (a :class:`MapConfig` dict or bare params).

    Missing parameters take their easiest value.

    Raises:
        GolemError: unknown parameter or value.
    """
    params = raw.get("params", raw) if isinstance(raw, Mapping) else raw
    params = {k: v for k, v in dict(params).items() if k not in ("phase", "seed", "priors")}
    check_space(params)
    return {k: str(params.get(k, VOCABULARY[k][0])) for k in PARAMETERS}
