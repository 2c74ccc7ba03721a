"""Summary: the network a sensor configuration builds, layer by layer (torchinfo), with parameter counts.

The configuration is the settings' (``brain.sensors``, sizes, profile) or a
checkpoint's (rebuilt from its metadata alone). Parameter counts are given per
cortex (with the sensors that join it), for the recurrent core and the head.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import structlog
import torch
from torch import nn

from golem.extras import require
from golem.learning.archives import load_model
from golem.learning.modelspec import ModelSpec

if TYPE_CHECKING:
    from golem.registry import Registry
    from golem.settings import GolemSettings

log = structlog.get_logger("golem_explain.summary")


@dataclass
class SensorRow:
    """One enabled sensor: stored step shape and dtype, the cortex it feeds, and that cortex's parameters.

    ``parameters`` is ``None`` for a sensor that joins another's cortex (counted there).
    """

    name: str
    key: str
    shape: list[int]
    dtype: str
    cortex: str
    parameters: int | None


@dataclass
class ModelSummary:
    """What :func:`summarize` found.

    Attributes:
        source: ``settings`` or the checkpoint path.
        model, profile: component and action profile names.
        n_actions, working_memory, cortical_depth: sizes.
        sensors: one :class:`SensorRow` per enabled sensor, in order.
        standardiser, core, head, total, trainable: parameter counts (``standardiser``: the
            feature standardiser between cortices and core, 0 without one).
        steps: ``T`` of the dummy input ``[1, T, *shape]`` torchinfo ran.
        table: torchinfo's layer table (input/output shapes, parameters), as text.
    """

    source: str
    model: str
    profile: str
    n_actions: int
    working_memory: int
    cortical_depth: int | None
    sensors: list[SensorRow]
    standardiser: int
    core: int
    head: int
    total: int
    trainable: int
    steps: int
    table: str = field(repr=False, default="")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def count(module: nn.Module) -> int:
    """Parameters of ``module`` (all, trainable or not)."""
    return sum(p.numel() for p in module.parameters())


def dummy_inputs(spec: ModelSpec, steps: int) -> dict[str, torch.Tensor]:
    """Zeros in each sensor's stored dtype, through ``to_network``: ``{name: float [1, steps, *shape]}``."""
    return {s.name: s.to_network(torch.from_numpy(np.zeros((1, steps, *s.shape), dtype=s.dtype))) for s in spec.sensors}


def summarize(
    settings: GolemSettings,
    registry: Registry,
    model: Path | None = None,
    *,
    steps: int | None = None,
    depth: int = 3,
) -> ModelSummary:
    """Build the settings' network (or rebuild ``model``'s checkpoint) and describe it.

    Args:
        model: a checkpoint path; ``None``: the settings' configuration (untrained).
        steps: ``T`` of the dummy input (default ``training.sequence_length``).
        depth: torchinfo's nesting depth.

    Raises:
        GolemError: unknown components, invalid settings, missing or corrupt checkpoint.
    """
    torchinfo = require("torchinfo", "golem run summary", install="golem-explain")

    if model is not None:
        path, restored = load_model(settings, registry, model)
        spec, net, source = restored.spec, restored.model, str(path)
    else:
        spec = ModelSpec.from_settings(settings, registry)
        net, source = registry.get("models", spec.model).obj(spec), "settings"
    net = net.cpu().eval()
    T = int(steps or settings.training.window)
    groups = spec.cortex_groups()
    owner_of = {j.name: owner for owner, joiners in groups.items() for j in joiners}
    rows = []
    for s in spec.sensors:
        if s.name in groups:
            joined = "".join(f"+{j.name}" for j in groups[s.name])
            rows.append(
                SensorRow(
                    s.name,
                    s.key,
                    list(s.shape),
                    np.dtype(s.dtype).name,
                    f"{s.name}{joined}",
                    count(net.cortices[s.name]),
                )
            )
        else:
            rows.append(
                SensorRow(s.name, s.key, list(s.shape), np.dtype(s.dtype).name, f"joins {owner_of[s.name]}", None)
            )
    with torch.no_grad():
        stats = torchinfo.summary(
            net,
            input_data=[dummy_inputs(spec, T), net.initial_state(1)],
            col_names=["input_size", "output_size", "num_params", "trainable"],
            depth=depth,
            verbose=0,
            device="cpu",
        )
    total = count(net)
    result = ModelSummary(
        source=source,
        model=spec.model,
        profile=spec.profile,
        n_actions=spec.n_actions,
        working_memory=spec.working_memory,
        cortical_depth=spec.cortical_depth,
        sensors=rows,
        standardiser=count(getattr(net, "standardise", nn.Identity())),
        core=count(net.core),
        head=count(net.head),
        total=total,
        trainable=sum(p.numel() for p in net.parameters() if p.requires_grad),
        steps=T,
        table=collapse_repeats(str(stats)),
    )
    log.info("summary.done", source=source, sensors=spec.sensor_names, parameters=total)
    return result


def collapse_repeats(table: str, longest_block: int = 4, at_least: int = 3) -> str:
    """torchinfo's table with runs of a repeated block of rows (a recurrent cell once per step) shown once.

    Rows are compared without their ``depth-idx`` numbers; a block of up to
    ``longest_block`` rows repeated ``at_least`` times or more becomes the block
    and a line ``… the N rows above repeat K× in all (one per time step)``.
    """
    lines = table.splitlines()
    keys = [re.sub(r"\b\d+-\d+\b", "", line) for line in lines]
    out: list[str] = []
    i = 0
    while i < len(lines):
        for k in range(1, longest_block + 1):
            block = keys[i : i + k]
            reps = 1
            while keys[i + reps * k : i + (reps + 1) * k] == block and len(block) == k:
                reps += 1
            if reps >= at_least:
                out += lines[i : i + k]
                indent = len(lines[i]) - len(lines[i].lstrip("│ ├└─"))
                out.append(f"{lines[i][:indent]}… the {k} row(s) above repeat {reps}× in all (one per time step)")
                i += reps * k
                break
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


__all__ = ["ModelSummary", "SensorRow", "collapse_repeats", "count", "dummy_inputs", "summarize"]
