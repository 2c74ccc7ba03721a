"""Golem's settings: defaults < ``golem.toml`` < ``GOLEM_*`` environment < command-line flags.

Every effective value remembers where it came from, so ``golem config show``
can say why a setting has the value it has. Environment variables nest with
``__``: ``GOLEM_TRAINING__BATCH_SIZE=16`` sets ``training.batch_size``.

The core declares its own groups (``data``, ``brain``, ``training``, ``game``).
A component declares its own settings as a :class:`ComponentSettings` model
with a dotted ``key`` (the ``focal`` loss: ``loss.focal``; the audio sensor:
``brain.dsp``) and registers it with the component; :func:`load_settings`
validates each section with its owner's model, fills in the defaults of every
registered section and refuses keys no one owns. Components read their section
with :func:`section`, which also works on settings that travelled as JSON.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from golem.errors import SettingsError

if TYPE_CHECKING:
    from golem.registry import Registry

CONFIG_FILE = "golem.toml"
ENV_PREFIX = "GOLEM_"


class _Group(BaseModel):
    # Extra keys are the sections of components (``brain.dsp``); load_settings validates them with
    # their owners' models and refuses keys that no registered component owns.
    model_config = ConfigDict(extra="allow", validate_assignment=True)


class ComponentSettings(BaseModel):
    """Base of a component's own settings model.

    Class attributes:
        key: the dotted settings path of the section (``loss.focal``, ``brain.dsp``).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
    key: ClassVar[str] = ""


M = TypeVar("M", bound=BaseModel)


class DataSettings(_Group):
    """Where Golem keeps what it records and trains."""

    root: Path = Field(Path("golem-data"), description="folder for stores, models and reports")
    store: str = Field("demos", description="trajectory store name (a folder under root/stores) or a path")


class BrainSettings(_Group):
    """The agent: its action profile, sensors and network sizes."""

    profile: Literal["basic", "fluid", "classic"] = Field("basic", description="action profile")
    model: str = Field("cfc", description="model component name")
    sensors: list[str] = Field(default_factory=lambda: ["visual"], description="enabled sensor names")
    cortical_depth: int = Field(3, ge=1, le=6, description="conv layers in the visual cortex")
    working_memory: int = Field(64, ge=4, le=4096, description="units of the recurrent core")
    feature_norm: Literal["batch", "none"] = Field(
        "batch",
        description="standardise each cortex feature before the core: batch statistics in training, "
        "running averages re-estimated at the trained weights in evaluation and play (none: off)",
    )
    activation: float = Field(0.5, gt=0.0, lt=1.0, description="probability threshold for pressing a button")


class TrainingSettings(_Group):
    """Behavioural cloning with stateful truncated BPTT."""

    sequence_length: Annotated[int, Field(ge=1, le=4096)] | Literal["auto"] = Field(
        "auto",
        description="BPTT window L, steps; auto: half the median episode length, within 4..32 "
        "(basic's ~11-tic episodes: 5; long episodes: 32)",
    )
    batch_size: int = Field(32, ge=1, le=65536, description="parallel streams B")
    learning_rate: float = Field(1e-3, gt=0.0, lt=1.0, description="Adam step size")
    epochs: int = Field(10, ge=1, le=100000, description="passes over the training streams")
    min_updates: int = Field(
        500,
        ge=0,
        le=100_000_000,
        description="keep training past `epochs` until this many optimiser steps (small stores need them)",
    )
    updates: int = Field(
        0,
        ge=0,
        le=100_000_000,
        description="optimiser steps to train for, epochs as many as that takes (0: train for `epochs`)",
    )
    keep_best: bool = Field(True, description="save the epoch with the lowest validation loss, not the last")
    validate_every: int = Field(
        50,
        ge=1,
        le=100_000_000,
        description="validate after each epoch once this many optimiser steps have passed since the last validation "
        "(and after the last epoch); every epoch of at least this many steps validates",
    )
    tensorboard: bool = Field(True, description="write TensorBoard event files under data.root/runs (false: none)")
    calibrate_thresholds: bool = Field(
        True, description="per-action press thresholds maximising validation F1, stored in the checkpoint for play"
    )
    tune_episodes: int = Field(
        0,
        ge=0,
        le=1_000,
        description="after training, tune the press thresholds by play in the engine (as `golem run tune`) with "
        "this many episodes per candidate, kept only when as many fresh seeds confirm the gain (0: off; a "
        "scenario's spec may turn it on where the user set none)",
    )
    loss: str = Field("focal", description="loss component name")
    sampler: str = Field("stateful", description="sampler component name")
    mirror: bool = Field(
        True,
        description="mirror augmentation (flip width, swap left/right): every window also read mirrored "
        "(`--plugin mirror` / `--plugin no:mirror`)",
    )
    augmentations: list[str] = Field(
        default_factory=list,
        description="augmentation component names applied to each training batch, in order, one random draw "
        "per window (`--plugin shift` adds one, `--plugin no:shift` removes it; their settings: `augment.<name>`)",
    )
    recovery_ratio: float = Field(0.25, ge=0.0, lt=1.0, description="share of streams on recovery episodes")
    validation_split: float = Field(0.1, ge=0.0, lt=1.0, description="share of episodes held out")
    seed: int = Field(0, ge=0)
    device: Literal["auto", "cpu", "cuda", "mps"] = "auto"
    threads: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="torch CPU threads of each training process; unset: OMP_NUM_THREADS if "
        "given, else the cores divided by the processes of the run (--nproc)",
    )
    precision: Literal["auto", "fp32", "bf16"] = Field(
        "auto",
        description="what the sensor cortices compute in while training (the core, the loss and the weights stay "
        "float32; validation and play are float32): bf16 autocast, fp32, or auto = bf16 where the device has it "
        "natively (AMX / AVX-512 BF16 CPUs, CUDA), else fp32",
    )
    peer_timeout: float = Field(
        1800.0,
        gt=0.0,
        description="data-parallel training: seconds a process waits for the others (rank 0's "
        "validation included) before it gives up",
    )

    @property
    def window(self) -> int:
        """``sequence_length`` as a number: ``auto`` reads as 32 where no data decides (a model's summary, a
        checkpoint that does not record its L); training resolves it from the episodes
        (:func:`auto_sequence_length`)."""
        return AUTO_MAX_LENGTH if self.sequence_length == "auto" else int(self.sequence_length)


#: ``training.sequence_length = "auto"``: half the median episode length, clamped to these bounds.
AUTO_MIN_LENGTH, AUTO_MAX_LENGTH = 4, 32


def auto_sequence_length(lengths: Sequence[int]) -> int:
    """The BPTT window for episodes of these lengths (steps): half the median, within 4..32.

    ``basic``'s expert episodes (median ~11 tics) get 5, the length its tuned
    recipe uses; scenarios with episodes of hundreds of tics get 32. No episode: 32.
    """
    if not lengths:
        return AUTO_MAX_LENGTH
    median = float(sorted(lengths)[len(lengths) // 2])
    return int(min(max(median // 2, AUTO_MIN_LENGTH), AUTO_MAX_LENGTH))


class LossSettings(_Group):
    """Parameters of the loss components, one section per loss (``loss.focal``), owned by the loss's plugin."""


class AugmentSettings(_Group):
    """Parameters of the augmentation components, one section per augmentation that has any
    (``augment.shift``), owned by its plugin; ``training.augmentations`` selects which run."""


class ExpertsSettings(_Group):
    """Parameters of the scripted experts, one section per expert that has any, owned by its plugin."""


class GameSettings(_Group):
    """The ViZDoom session: which world and how it runs."""

    scenario: str = Field("basic", description="a ViZDoom scenario name, or a .cfg/.wad path")
    doom_map: str | None = Field(None, description="map lump for a WAD, e.g. MAP01")
    seed: int = Field(0, ge=0)
    start_timeout: float = Field(30.0, gt=0.0, description="seconds allowed for the engine to start")
    frame_skip: int = Field(
        1, ge=1, le=35, description="tics each decision holds its buttons (play, evaluate, record: every policy)"
    )
    timespans: Literal["engine", "unit"] = Field(
        "engine",
        description="time a model's ODE integrates per decision: the engine's tics since the last one, "
        "or 1 (unit) whatever the frame skip",
    )


#: Keys that drive each button while a person intervenes (pynput names: letters, digits, ``left``,
#: ``ctrl``, ``space``, …); a button is pressed while any of its keys is held.
DEFAULT_BINDINGS: dict[str, list[str]] = {
    "MOVE_FORWARD": ["w", "up"],
    "MOVE_BACKWARD": ["s", "down"],
    "MOVE_LEFT": ["a"],
    "MOVE_RIGHT": ["d"],
    "TURN_LEFT": ["left"],
    "TURN_RIGHT": ["right"],
    "ATTACK": ["ctrl", "space"],
    "USE": ["e"],
    "SELECT_NEXT_WEAPON": ["q"],
    "SELECT_WEAPON2": ["2"],
    "SELECT_WEAPON3": ["3"],
}


class InterveneSettings(_Group):
    """Human DAgger (``golem run intervene``): how a person takes over from the model."""

    hotkey: str = Field("shift", description="key held to take over from the model (pynput name; shift = LEFT SHIFT)")
    retroactive: Literal["first-action", "none"] = Field(
        "first-action",
        description="first-action: the last L autonomous tics before a take-over join its episode, labelled with "
        "the person's first corrective buttons (the seed's rule); none: only the person's tics",
    )
    bindings: dict[str, list[str]] = Field(
        default_factory=lambda: {k: list(v) for k, v in DEFAULT_BINDINGS.items()},
        description="button → keys that press it while the person drives",
    )


class GolemSettings(BaseSettings):
    """All of Golem's settings."""

    model_config = SettingsConfigDict(
        # extra: top-level component sections (the world model's ``dream``); load_settings refuses unowned keys
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="allow",
        validate_assignment=True,
    )

    data: DataSettings = Field(default_factory=DataSettings)
    brain: BrainSettings = Field(default_factory=BrainSettings)
    training: TrainingSettings = Field(default_factory=TrainingSettings)
    loss: LossSettings = Field(default_factory=LossSettings)
    augment: AugmentSettings = Field(default_factory=AugmentSettings)
    experts: ExpertsSettings = Field(default_factory=ExpertsSettings)
    game: GameSettings = Field(default_factory=GameSettings)
    intervene: InterveneSettings = Field(default_factory=InterveneSettings)

    def store_path(self) -> Path:
        """The trajectory store directory (``data.store`` as a path, or under ``root/stores``)."""
        raw = Path(self.data.store)
        if raw.is_absolute() or raw.parent != Path("."):
            return raw
        return self.data.root / "stores" / raw

    def models_path(self) -> Path:
        """Where checkpoints go: ``root/models/<profile>``."""
        return self.data.root / "models" / self.brain.profile


@dataclass
class ResolvedSettings:
    """Effective settings plus, for each dotted key, the source of its value."""

    settings: GolemSettings
    sources: dict[str, str]
    config_file: Path | None

    def rows(self) -> list[tuple[str, Any, str]]:
        """``(dotted key, value, source)`` for every leaf setting, in declaration order."""
        flat = _flatten(self.settings.model_dump(mode="json"))
        return [(key, value, self.sources.get(key, "default")) for key, value in flat.items()]


def _flatten(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, dotted + "."))
        else:
            out[dotted] = value
    return out


def _merge(
    into: dict[str, Any], layer: Mapping[str, Any], source: str, sources: dict[str, str], prefix: str = ""
) -> None:
    """Deep-merge ``layer`` into ``into`` and note ``source`` for every leaf it sets."""
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        origin = source.format(key=dotted, env=ENV_PREFIX + dotted.upper().replace(".", "__"))
        if isinstance(value, Mapping):
            node = into.setdefault(key, {})
            if not isinstance(node, dict):
                node = into[key] = {}
            _merge(node, value, source, sources, dotted + ".")
            if not value:  # an empty table sets no leaf, but it was given (e.g. rl.shapers = {}: none)
                sources[dotted] = origin
        else:
            into[key] = value
            sources[dotted] = origin


def parse_assignment(text: str) -> tuple[str, Any]:
    """``"training.batch_size=16"`` → ``("training.batch_size", 16)``; values are TOML, else strings."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise SettingsError(f"--set expects KEY=VALUE (e.g. training.batch_size=16), got {text!r}")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return key, value


def nest(dotted: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1}`` → ``{"a": {"b": 1}}``."""
    out: dict[str, Any] = {}
    for key, value in dotted.items():
        node = out
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise SettingsError(f"setting {key!r} does not exist: {part!r} is not a group")
        node[parts[-1]] = value
    return out


def _read_toml(path: Path) -> dict[str, Any]:
    """The TOML table of ``path``: UTF-8, with or without the byte-order mark editors on Windows write."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise SettingsError(f"config file not found: {path}") from None
    except OSError as exc:
        raise SettingsError(f"cannot read config file {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8-sig")  # TOML is UTF-8; "-sig" drops a leading BOM
    except UnicodeDecodeError as exc:
        raise SettingsError(f"config file {path} is not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from None


class _MappingEnvSource(EnvSettingsSource):
    """pydantic-settings' environment parsing, reading a given mapping instead of ``os.environ``."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(GolemSettings)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        return {k.lower(): v for k, v in self._environ.items()}


def _read_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """The ``GOLEM_*`` variables as a nested dict, parsed by pydantic-settings."""
    try:
        return _MappingEnvSource(environ)()
    except Exception as exc:  # pydantic-settings' own parse errors (bad JSON for a list, …)
        raise SettingsError(f"invalid GOLEM_* environment setting: {str(exc).splitlines()[0]}") from None


def load_settings(
    config: Path | None = None,
    overrides: Sequence[tuple[str, Mapping[str, Any]]] = (),
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    registry: Registry | None = None,
) -> ResolvedSettings:
    """Resolve settings from every source, lowest first.

    Args:
        config: an explicit TOML file (must exist); otherwise ``golem.toml`` in
            ``cwd`` is used when present.
        overrides: command-line layers, lowest first: ``(label, {dotted key: value})``,
            e.g. ``("flag --set", {"training.epochs": 3})``; the label is the source
            ``config show`` reports.
        environ: environment to read ``GOLEM_*`` from (default ``os.environ``).
        cwd: directory searched for ``golem.toml`` (default the current one).
        registry: the components whose settings sections are validated and filled in
            (default: the installed plugins, loaded here).

    Raises:
        SettingsError: one line naming the key, the value and what is allowed.
    """
    environ = os.environ if environ is None else environ
    sources: dict[str, str] = {}
    merged: dict[str, Any] = {}
    config_file = config
    if config_file is None:
        candidate = (cwd or Path.cwd()) / CONFIG_FILE
        config_file = candidate if candidate.is_file() else None
    if config_file is not None:
        _merge(merged, _read_toml(config_file), f"file {config_file}", sources)
    if registry is None:
        from golem.plugins import load_plugins

        registry = load_plugins().registry
    env_values = _read_env({k: v for k, v in environ.items() if k.upper().startswith(ENV_PREFIX)})
    # Other GOLEM_* variables (GOLEM_LOAD_PLUGINS, another tool's) are no settings: ignore them, as before.
    own = {key.split(".")[0] for key in registry.settings_sections()} - set(GolemSettings.model_fields)
    env_values = {k: v for k, v in env_values.items() if k in GolemSettings.model_fields}
    for name, value in environ.items():  # top-level component sections: GOLEM_DREAM__VAE_EPOCHS=3
        parts = name[len(ENV_PREFIX) :].lower().split("__") if name.upper().startswith(ENV_PREFIX) else []
        if len(parts) > 1 and parts[0] in own:
            node = env_values
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value
    _merge(merged, env_values, "env {env}", sources)
    for label, layer in overrides:
        _merge(merged, nest(layer), label, sources)
    try:
        settings = GolemSettings.model_validate(merged)
    except ValidationError as exc:
        raise SettingsError(_explain(exc, sources)) from None
    _validate_sections(settings, registry.settings_sections(), sources)
    return ResolvedSettings(settings=settings, sources=sources, config_file=config_file)


def _validate_sections(
    settings: GolemSettings, sections: Mapping[str, type[BaseModel]], sources: Mapping[str, str]
) -> None:
    """Validate every component section in place, add the defaults of absent ones, refuse unowned keys.

    Raises:
        SettingsError: an invalid value in a section, or a key that neither the core nor a component owns.
    """
    for key, model in sections.items():
        *path, name = key.split(".")
        group: BaseModel = settings
        for part in path:
            group = getattr(group, part, None)  # type: ignore[assignment]
            if not isinstance(group, BaseModel):
                raise SettingsError(f"settings section {key!r} is not inside a settings group")
        extra = group.__pydantic_extra__
        if extra is None:
            raise SettingsError(f"settings group {'.'.join(path) or '<root>'} takes no component sections ({key!r})")
        raw = extra.get(name, {})
        if isinstance(raw, model):
            continue
        if not isinstance(raw, Mapping):
            source = sources.get(key, "default")
            raise SettingsError(f"invalid setting {key} = {raw!r} (from {source}): a table of settings is expected")
        try:
            extra[name] = model.model_validate(raw)
        except ValidationError as exc:
            raise SettingsError(_explain(exc, sources, prefix=key)) from None
    for dotted in _unowned(settings, ""):
        source = next((s for k, s in sources.items() if dotted == k or k.startswith(dotted + ".")), "default")
        raise SettingsError(f"unknown setting {dotted!r} (from {source}); see `golem config show` for the known keys")


def _unowned(group: BaseModel, prefix: str) -> list[str]:
    """Dotted keys of extra values that are not validated component sections."""
    out: list[str] = []
    for name, value in (group.__pydantic_extra__ or {}).items():
        if not isinstance(value, BaseModel):
            out.append(prefix + name)
    for name in type(group).model_fields:
        value = getattr(group, name)
        if isinstance(value, _Group):
            out += _unowned(value, f"{prefix}{name}.")
    return out


def section(settings: BaseModel, model: type[M]) -> M:
    """The component section ``model.key`` of ``settings`` as a ``model`` instance.

    Works on settings from :func:`load_settings` (sections already validated),
    on settings that travelled as JSON (the section is a dict: validated here)
    and on settings without the section (the model's defaults).

    Raises:
        SettingsError: the section holds invalid values.
    """
    key = getattr(model, "key", "")
    if not key:
        raise SettingsError(f"{model.__name__} has no settings key")
    node: Any = settings
    for part in key.split("."):
        if isinstance(node, BaseModel):
            node = getattr(node, part, None)
        elif isinstance(node, Mapping):
            node = node.get(part)
        else:
            node = None
        if node is None:
            return model()
    if isinstance(node, model):
        return node
    try:
        return model.model_validate(node.model_dump() if isinstance(node, BaseModel) else node)
    except ValidationError as exc:
        raise SettingsError(_explain(exc, {}, prefix=key)) from None


def with_section(settings: GolemSettings, values: BaseModel) -> GolemSettings:
    """A deep copy of ``settings`` whose section ``values.key`` is ``values`` (a component's settings model):
    inside a group (``brain.dsp``) or at the top level (``rl``, ``dream``)."""
    copy = settings.model_copy(deep=True)
    *path, name = str(getattr(values, "key", "")).split(".")
    group: Any = copy
    for part in path:
        group = getattr(group, part)
    if not name or group.__pydantic_extra__ is None:
        raise SettingsError(f"{type(values).__name__} has no settings key of a component section")
    group.__pydantic_extra__[name] = values
    return copy


def _explain(exc: ValidationError, sources: Mapping[str, str], prefix: str = "") -> str:
    """One line from a pydantic error: key, value, what is allowed, and where it came from."""
    errors = exc.errors()
    first = errors[0]
    loc = [str(p) for p in first["loc"]]
    # Unions report the failing branch as a loc part ("float", "list[float]"); keep the setting path.
    key_parts: list[str] = []
    for part in loc:
        if part.isidentifier() or part.isdigit():
            key_parts.append(part)
        else:
            break
    key = ".".join(([prefix] if prefix else []) + key_parts) or "<root>"
    source = next(
        (s for k, s in sources.items() if key == k or key.startswith(k + ".") or k.startswith(key + ".")), "default"
    )
    if first["type"] == "extra_forbidden":
        message = f"unknown setting {key!r} (from {source}); see `golem config show` for the known keys"
    else:
        message = f"invalid setting {key} = {first.get('input')!r} (from {source}): {first['msg']}"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more)"
    return message
