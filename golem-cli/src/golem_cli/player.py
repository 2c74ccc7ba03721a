"""Which checkpoint, scenario, press threshold and settings a command that plays a model uses.

``--model`` travels with ``--scenario``, ``--seed``, ``--frame-skip``, ``--plugin`` and
``--set``; :func:`choose_player` resolves them together for play, evaluate, tune and match.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from golem.learning.archives import resolve_model
from golem.learning.checkpoints import read_metadata
from golem.registry import Registry
from golem.runtime.agent import at_trained_frame_skip, model_threshold, settings_for_model, trained_scenario
from golem.settings import GolemSettings, ResolvedSettings
from golem_cli.options import game_flags
from golem_cli.state import AppState


class Player(NamedTuple):
    """A checkpoint ready to play: where it is, its metadata, the scenario, its press threshold(s), the settings."""

    path: Path
    metadata: dict[str, Any]
    scenario: str
    threshold: float | list[float]
    settings: GolemSettings


def resolve_player(resolved: ResolvedSettings, model: Path | None, registry: Registry) -> Player:
    """``(checkpoint, metadata, scenario, threshold, settings)`` for play/evaluate.

    The scenario is the one given (flag, ``--set``, file, environment), else the
    one in the model's metadata — a shipped scenario's name only, a path there is
    refused (:func:`golem.runtime.agent.trained_scenario`) — else ``game.scenario``'s default. The threshold
    is a given ``brain.activation``, else the model's per-action thresholds
    calibrated on validation, else the activation it was trained with, else the default. The
    settings take the model's profile, sensors and sensor settings where none
    were given (:func:`golem.runtime.agent.settings_for_model`), and every policy decides
    as often as the model's demonstrations did (``data.frame_skip``) unless
    ``game.frame_skip`` was given.
    """
    path = resolve_model(resolved.settings, model)
    metadata = read_metadata(path)
    settings = at_trained_frame_skip(settings_for_model(resolved, metadata, registry), resolved.sources, metadata)
    scenario = settings.game.scenario
    if "game.scenario" not in resolved.sources:
        scenario = trained_scenario(metadata, path) or scenario
    threshold: float | list[float] = settings.brain.activation
    if "brain.activation" not in resolved.sources:
        threshold = model_threshold(metadata, threshold)
    return Player(path, metadata, scenario, threshold, settings)


def choose_player(
    st: AppState,
    model: Path | None,
    plugin: list[str] | None,
    set_: list[str] | None,
    *,
    scenario: str | None = None,
    seed: int | None = None,
    frame_skip: int | None = None,
) -> tuple[ResolvedSettings, Player]:
    """The command's settings (with ``--scenario``/``--seed``/``--frame-skip``) and the player they choose."""
    resolved = st.resolve(plugin=plugin, set_=set_, flags=game_flags(scenario, seed, frame_skip))
    return resolved, resolve_player(resolved, model, st.host.registry)
