"""What a model is built from: the enabled sensors, the action count and the network sizes.

A :class:`ModelSpec` is handed to a model builder (``builder(spec) -> nn.Module``)
and written into every checkpoint as JSON (:meth:`ModelSpec.to_metadata`), so a
model can be rebuilt from its file alone (:meth:`ModelSpec.from_metadata`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from golem.errors import GolemError
from golem.profiles import PROFILES
from golem.sensors import Sensor
from golem.settings import BrainSettings, GolemSettings, section

if TYPE_CHECKING:
    from golem.registry import Registry

#: Version of the metadata layout written by :meth:`ModelSpec.to_metadata`.
SPEC_FORMAT = 1

_REQUIRED = ("model", "sensors", "n_actions", "working_memory")

#: Ways the cortex features may be normalised before the core (``brain.feature_norm``).
FEATURE_NORMS = ("batch", "none")


@dataclass
class ModelSpec:
    """The architecture of one model.

    Attributes:
        sensors: enabled sensor instances, in order; each has its own cortex
            unless it ``joins`` another sensor (then it feeds that cortex as
            extra channels).
        n_actions: logits per step (A).
        working_memory: units of the recurrent core.
        cortical_depth: conv layers in the visual cortex. Sensors read it from the settings they
            were built with; ``None`` takes it from there, a different value is an error.
        feature_norm: ``batch``: each cortex feature is standardised before the core
            (see :class:`golem_models.net.DoomNet`); ``none``: features go to the core as they are
            (the architecture of checkpoints written before this option existed).
        model: model component name (``cfc``, ``lstm``).
        profile: action profile name.
        action_names: one name per action (empty when unknown, else length ``n_actions``).
        sensor_settings: the sensors' own settings sections, ``{dotted key: values}``
            (the audio sensor's ``brain.dsp``); ``None`` takes them from the settings the
            sensors were built with, a different value is an error.
    """

    sensors: list[Sensor]
    n_actions: int
    working_memory: int = 64
    cortical_depth: int | None = None
    feature_norm: str = "batch"
    model: str = "cfc"
    profile: str = "basic"
    action_names: tuple[str, ...] = ()
    sensor_settings: dict[str, dict[str, Any]] | None = None

    def __post_init__(self) -> None:
        self.sensors = list(self.sensors)
        self.action_names = tuple(self.action_names)
        if self.n_actions < 1:
            raise GolemError(f"a model needs at least one action, got n_actions={self.n_actions}")
        if self.action_names and len(self.action_names) != self.n_actions:
            raise GolemError(f"{len(self.action_names)} action names given for n_actions={self.n_actions}")
        if self.working_memory < 1:
            raise GolemError(f"working_memory must be positive, got {self.working_memory}")
        if not self.sensors:
            raise GolemError("a model needs at least one sensor (brain.sensors is empty)")
        if self.feature_norm not in FEATURE_NORMS:
            raise GolemError(f"unknown feature_norm {self.feature_norm!r}; known: {', '.join(FEATURE_NORMS)}")
        self._agree_with_sensor_settings()
        names = [s.name for s in self.sensors]
        if len(set(names)) != len(names):
            raise GolemError(f"sensor listed twice in {names}")
        for sensor in self.sensors:
            if sensor.joins is None:
                continue
            target = next((s for s in self.sensors if s.name == sensor.joins), None)
            if target is None:
                raise GolemError(f"sensor {sensor.name!r} joins {sensor.joins!r}, which is not enabled; enable both")
            if target.joins is not None:
                raise GolemError(f"sensor {sensor.name!r} joins {target.name!r}, which itself joins {target.joins!r}")
            if tuple(sensor.shape[1:]) != tuple(target.shape[1:]):
                raise GolemError(
                    f"sensor {sensor.name!r} {tuple(sensor.shape)} cannot join {target.name!r} "
                    f"{tuple(target.shape)}: sizes after the channel axis differ"
                )

    def _agree_with_sensor_settings(self) -> None:
        """Fill ``cortical_depth``/``sensor_settings`` from the sensors' settings, or check they agree with them.

        A checkpoint records these values and rebuilds the sensors from them, so a
        spec that disagrees with how its sensors were built would not round-trip.
        """
        brains = [s.settings.brain for s in self.sensors if hasattr(getattr(s, "settings", None), "brain")]
        depths = {b.cortical_depth for b in brains}
        if len(depths) > 1:
            raise GolemError("the sensors of one model were built with different brain settings")
        if self.cortical_depth is None:
            self.cortical_depth = depths.pop() if depths else BrainSettings().cortical_depth
        elif depths and self.cortical_depth not in depths:
            raise GolemError(
                f"cortical_depth={self.cortical_depth} but the sensors were built with "
                f"brain.cortical_depth={depths.pop()}"
            )
        built: dict[str, dict[str, Any]] = {}  # what the sensors were built with
        models: dict[str, Any] = {}
        for sensor in self.sensors:
            model = getattr(sensor, "settings_model", None)
            if model is None:
                continue
            values = section(getattr(sensor, "settings", None) or GolemSettings.model_construct(), model)
            built[model.key], models[model.key] = values.model_dump(mode="json"), model
        if self.sensor_settings is None:
            self.sensor_settings = built
            return
        given: dict[str, dict[str, Any]] = {}
        for key, values in self.sensor_settings.items():
            if key not in models:
                continue  # a section no enabled sensor owns (e.g. an older sensor's): nothing to agree with
            try:
                given[key] = models[key].model_validate(values).model_dump(mode="json")
            except Exception as exc:  # pydantic ValidationError: keep it one line
                raise GolemError(f"invalid {key} settings {values}: {str(exc).splitlines()[0]}") from None
            if given[key] != built[key]:
                raise GolemError(f"{key}={given[key]} but the sensors were built with {key}={built[key]}")
        self.sensor_settings = {**built, **given}

    # --- structure ---------------------------------------------------------

    @property
    def sensor_names(self) -> list[str]:
        """Names of the enabled sensors, in order."""
        return [s.name for s in self.sensors]

    def cortex_groups(self) -> dict[str, list[Sensor]]:
        """``{owner name: [sensors joining it]}`` for every sensor with its own cortex, in order."""
        groups: dict[str, list[Sensor]] = {s.name: [] for s in self.sensors if s.joins is None}
        for sensor in self.sensors:
            if sensor.joins is not None:
                groups[sensor.joins].append(sensor)
        return groups

    def sensor(self, name: str) -> Sensor:
        """The enabled sensor called ``name``."""
        for s in self.sensors:
            if s.name == name:
                return s
        raise KeyError(name)

    # --- construction ------------------------------------------------------

    @classmethod
    def from_settings(cls, settings: GolemSettings, registry: Registry) -> ModelSpec:
        """The spec of ``settings.brain``: sensors looked up by name in ``registry`` and built with ``settings``."""
        brain = settings.brain
        sensors = [registry.get("sensors", name).obj(settings) for name in brain.sensors]
        actions = PROFILES[brain.profile]
        return cls(
            sensors=sensors,
            n_actions=len(actions),
            working_memory=brain.working_memory,
            cortical_depth=brain.cortical_depth,
            feature_norm=brain.feature_norm,
            model=brain.model,
            profile=brain.profile,
            action_names=tuple(actions),
        )

    def to_metadata(self) -> dict[str, Any]:
        """A JSON-able description from which :meth:`from_metadata` rebuilds this spec."""
        return {
            "format": SPEC_FORMAT,
            "model": self.model,
            "profile": self.profile,
            "action_names": list(self.action_names),
            "n_actions": self.n_actions,
            "sensors": self.sensor_names,
            "sensor_shapes": {s.name: list(s.shape) for s in self.sensors},
            "working_memory": self.working_memory,
            "cortical_depth": self.cortical_depth,
            "feature_norm": self.feature_norm,
            "sensor_settings": {k: dict(v) for k, v in (self.sensor_settings or {}).items()},
        }

    def settings(self) -> GolemSettings:
        """Settings whose ``brain`` group matches this spec (defaults elsewhere; the environment is not read)."""
        return brain_settings(
            self.model,
            self.sensor_names,
            self.working_memory,
            self.cortical_depth,
            self.profile,
            self.sensor_settings or {},
            feature_norm=self.feature_norm,
        )

    @classmethod
    def from_metadata(cls, meta: Mapping[str, Any], registry: Registry) -> ModelSpec:
        """Rebuild a spec from :meth:`to_metadata` output, building sensors found by name in ``registry``.

        Metadata without ``feature_norm`` (written before the option existed) rebuilds
        the network it was trained as, without the standardiser.

        Raises:
            GolemError: missing keys, an unknown sensor, or a sensor whose shape
                no longer matches the recorded one.
        """
        if not isinstance(meta, Mapping):
            raise GolemError(f"model metadata must be a JSON object, got {type(meta).__name__}")
        missing = [k for k in _REQUIRED if k not in meta]
        if missing:
            raise GolemError(f"model metadata lacks {', '.join(missing)}")
        if int(meta.get("format", SPEC_FORMAT)) > SPEC_FORMAT:
            raise GolemError(
                f"model metadata format {meta['format']} is newer than this Golem understands ({SPEC_FORMAT})"
            )
        model, names = str(meta["model"]), [str(n) for n in meta["sensors"]]
        working_memory, cortical_depth = int(meta["working_memory"]), int(meta.get("cortical_depth", 3))
        profile = str(meta.get("profile", "basic"))
        sections = {str(k): dict(v) for k, v in (meta.get("sensor_settings") or {}).items()}
        if meta.get("dsp") and "brain.dsp" not in sections:  # checkpoints from before sensors owned their settings
            sections["brain.dsp"] = dict(meta["dsp"])
        feature_norm = str(meta.get("feature_norm", "none"))
        if feature_norm not in FEATURE_NORMS:
            raise GolemError(f"model metadata has unknown feature_norm {feature_norm!r}; upgrade golem")
        settings = brain_settings(
            model, names, working_memory, cortical_depth, profile, sections, feature_norm=feature_norm
        )
        sensors = [registry.get("sensors", name).obj(settings) for name in names]
        shapes = meta.get("sensor_shapes") or {}
        for sensor in sensors:
            recorded = shapes.get(sensor.name)
            if recorded is not None and tuple(recorded) != tuple(sensor.shape):
                raise GolemError(
                    f"sensor {sensor.name!r} now reads {tuple(sensor.shape)} "
                    f"but the model was trained on {tuple(recorded)}"
                )
        return cls(
            sensors=sensors,
            n_actions=int(meta["n_actions"]),
            working_memory=working_memory,
            cortical_depth=cortical_depth,
            feature_norm=feature_norm,
            model=model,
            profile=profile,
            action_names=tuple(meta.get("action_names") or ()),
        )


def brain_settings(
    model: str,
    sensors: Sequence[str],
    working_memory: int,
    cortical_depth: int,
    profile: str,
    sections: Mapping[str, Mapping[str, Any]],
    *,
    feature_norm: str = "batch",
) -> GolemSettings:
    """Settings with the given ``brain`` group and sensor sections (``{dotted key: values}``), defaults elsewhere.

    ``GOLEM_*`` is not read.

    Sensors are built from these when a model is rebuilt from metadata, so a
    checkpoint means the same network whatever the environment says.
    """
    brain: dict[str, Any] = {
        "model": model,
        "sensors": list(sensors),
        "working_memory": working_memory,
        "cortical_depth": cortical_depth,
        "feature_norm": feature_norm,
    }
    if profile in PROFILES:
        brain["profile"] = profile
    tree: dict[str, Any] = {"brain": brain}
    for key, values in sections.items():
        *path, name = key.split(".")
        node = tree
        for part in path:
            node = node.setdefault(part, {})
        node[name] = dict(values)
    try:
        # model_construct: GolemSettings' own validation would merge GOLEM_* variables in.
        groups = {
            name: GolemSettings.model_fields[name].annotation.model_validate(value) for name, value in tree.items()
        }
        return GolemSettings.model_construct(**groups)
    except Exception as exc:  # pydantic ValidationError: keep it one line
        raise GolemError(f"model metadata holds invalid brain settings: {str(exc).splitlines()[0]}") from None


__all__ = ["FEATURE_NORMS", "SPEC_FORMAT", "ModelSpec", "brain_settings"]
