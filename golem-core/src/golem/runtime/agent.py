"""A trained model as a policy: sensors → tensors → ``model.step`` with carried ``hx`` → buttons.

An :class:`Agent` is a :class:`golem.runtime.rollout.Policy`: live play,
evaluation, DAgger and multiplayer run it through
:func:`golem.runtime.rollout.run_episode`, which resets it (zeroing ``hx``) at
a new episode and after a death. It carries the recurrent state from tic to
tic; the engine's clock paces the loop and nothing sleeps.

Per-tic decision time is kept in the agent, in nanoseconds:

* :attr:`Agent.sense_ns` — sensor extraction (engine state → stored arrays);
* :attr:`Agent.decide_ns` — stored arrays → tensors → one ``model.step`` →
  sigmoid → threshold (or a draw) → button list.

A checkpoint presses a button when its probability passes the button's threshold,
unless its metadata says ``"decisions": "sample"`` (a policy fine-tuned by reinforcement
to be played as it was trained: each button drawn from its probability). The draws
are seeded by the engine's episode seed, so an episode replays the same.

Their sum is the time the agent adds to a tic; the engine's own tic is not in it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import structlog
import torch
from torch import nn

from golem.errors import GolemError
from golem.learning.modelspec import ModelSpec

if TYPE_CHECKING:
    from golem.registry import Registry
    from golem.runtime.session import Session
    from golem.sensors import Sensor
    from golem.settings import GolemSettings, ResolvedSettings

log = structlog.get_logger(__name__)

#: Intra-op threads for live play. One sense→act step is a batch of one: on the
#: CPU one thread is as fast as several (see bench/bench_latency.py) and leaves
#: the other cores to the engine and to parallel evaluation workers.
LIVE_THREADS = 1


def check_compatible(spec: ModelSpec, profile: str, action_names: Sequence[str], sensors: Sequence[Sensor]) -> None:
    """Fail with one line unless a session with ``profile``/``action_names``/``sensors`` can feed the model.

    The session must press the model's buttons in the model's order and read
    every sensor the model was trained on, with the same stored shape. Sensors
    the session reads beyond those are ignored.

    Raises:
        GolemError: a different action profile, or a missing / differently shaped sensor.
    """
    actions = tuple(action_names)
    expected = tuple(spec.action_names)
    if (expected and expected != actions) or (not expected and spec.n_actions != len(actions)):
        if spec.profile != profile:
            raise GolemError(
                f"model was trained for profile {spec.profile} ({spec.n_actions} actions) but the scenario "
                f"session uses {profile} ({len(actions)}); pass --set brain.profile={spec.profile}"
            )
        raise GolemError(
            f"model was trained on actions {', '.join(expected) or spec.n_actions} but the session presses "
            f"{', '.join(actions)}"
        )
    by_name = {s.name: s for s in sensors}
    missing = [name for name in spec.sensor_names if name not in by_name]
    if missing:
        have = ", ".join(by_name) or "none"
        raise GolemError(
            f"model expects sensors {', '.join(spec.sensor_names)} but the session reads {have}; "
            f"enable {', '.join(missing)} (--plugin {' --plugin '.join(missing)})"
        )
    for sensor in spec.sensors:
        got = tuple(by_name[sensor.name].shape)
        if got != tuple(sensor.shape):
            raise GolemError(
                f"sensor {sensor.name} reads {got} in this session but the model was trained on {tuple(sensor.shape)}"
            )


class Agent:
    """A trained model playing live, one tic at a time.

    Args:
        model: a network with ``step(inputs, hx) -> (logits[1, A], hx[1, S])``
            where ``inputs[sensor name]`` is float ``[1, *shape]`` (``DoomNet``);
            put in eval mode here.
        spec: the model's spec (its sensors convert stored steps to network input).
        threshold: press a button when its sigmoid probability exceeds this:
            one value for every button (``brain.activation``, default 0.5) or one
            per action in the model's order (thresholds calibrated on validation,
            :func:`trained_thresholds`).
        threads: ``torch.set_num_threads`` for this process (``None``: leave it).
        sample: draw each button from its probability instead of thresholding it
            (:data:`SAMPLE`; the draws are seeded at every :meth:`reset` from the engine's seed).
        temperature: a sampling agent draws each button from ``sigmoid(logit / temperature)``: below 1 its
            draws follow the likelier value more often, above 1 less (1: the model's own probabilities).

    Attributes:
        sense_ns: per decision, nanoseconds spent extracting sensors (:meth:`sense`).
        decide_ns: per decision, nanoseconds from stored arrays to the button list (:meth:`decide`).
        last_probs: the last decision's button probabilities, float ``[A]`` (the model's own, before any
            sampling temperature).
        metadata: the checkpoint's metadata when loaded by :func:`load_agent`.
    """

    name = "model"

    def __init__(
        self,
        model: nn.Module,
        spec: ModelSpec,
        threshold: float | Sequence[float] = 0.5,
        *,
        threads: int | None = LIVE_THREADS,
        sample: bool = False,
        temperature: float = 1.0,
    ) -> None:
        check_temperature(temperature, sample)
        if threads is not None:
            torch.set_num_threads(threads)
        self.model = model.eval()
        self.sample = bool(sample)
        self.temperature = float(temperature)
        self._rng = np.random.default_rng(0)
        self.spec = spec
        self.thresholds: np.ndarray = np.zeros(0)  # float64 [A], set by set_threshold
        self.threshold: float | list[float] = 0.5
        self.set_threshold(threshold)
        self.action_names: tuple[str, ...] = tuple(spec.action_names)
        self._sensors = [(s.name, s.key, s) for s in spec.sensors]
        try:
            self._device = next(model.parameters()).device
        except StopIteration:
            self._device = torch.device("cpu")
        self._hx: torch.Tensor | None = None
        self.sense_ns: list[int] = []
        self.decide_ns: list[int] = []
        self.last_probs: np.ndarray = np.zeros(spec.n_actions, dtype=np.float32)
        self.metadata: dict[str, Any] = {}
        self._session_sensors: list[Sensor] = []
        self.timespans: str = "engine"
        self._last_tic: int | None = None

    # --- compatibility -----------------------------------------------------

    def check_session(self, session: Session) -> None:
        """Fail with one line unless ``session`` presses the model's buttons and reads its sensors.

        Binds the session's sensors the model reads, which :meth:`act` extracts every tic, and
        takes ``game.timespans`` (whether the model integrates the engine's tics between decisions).
        """
        check_compatible(self.spec, session.settings.brain.profile, session.action_names, session.sensors)
        self.timespans = session.settings.game.timespans
        wanted = set(self.spec.sensor_names)
        self._session_sensors = [s for s in session.sensors if s.name in wanted]

    # --- state -------------------------------------------------------------

    def set_threshold(self, threshold: float | Sequence[float]) -> None:
        """Press thresholds from now on: one for every button, or one per action in the model's order.

        Raises:
            GolemError: a count that does not fit the model, or a value outside (0, 1).
        """
        values = np.asarray(threshold, dtype=np.float64).reshape(-1)
        if values.size == 1:
            values = np.full(self.spec.n_actions, values[0])
        elif values.size != self.spec.n_actions:
            raise GolemError(f"{values.size} thresholds for a model of {self.spec.n_actions} actions")
        if not ((values > 0.0) & (values < 1.0)).all():
            raise GolemError(f"activation threshold must be between 0 and 1, got {threshold}")
        self.thresholds = values
        self.threshold = float(values[0]) if (values == values[0]).all() else values.tolist()

    def reset(self, game: Any = None) -> None:
        """Zero the carried state (new episode, death); a sampling agent's draws restart from the engine's seed
        and episode tic (the same episode replays the same draws; a respawn does not repeat the first ones)."""
        self._hx = None
        self._last_tic = None
        if self.sample:
            seed = int(game.get_seed()) if callable(getattr(game, "get_seed", None)) else 0
            tic = int(game.get_episode_time()) if callable(getattr(game, "get_episode_time", None)) else 0
            self._rng = np.random.default_rng([seed, tic])

    @property
    def hx(self) -> torch.Tensor | None:
        """The carried state ``[1, S]`` (``None`` right after :meth:`reset`: zeros on the next step)."""
        return self._hx

    # --- acting ------------------------------------------------------------

    def act(self, game: Any, state: Any) -> list[int]:
        """The policy step: extract the bound sensors from ``state``, then :meth:`decide`.

        Raises:
            GolemError: :meth:`check_session` was not called first.
        """
        if not self._session_sensors:
            raise GolemError("agent is not bound to a session: call check_session(session) before playing")
        tic = getattr(state, "tic", None)
        elapsed = 1.0
        if tic is not None:
            if self._last_tic is not None and self.timespans == "engine":
                elapsed = float(max(int(tic) - self._last_tic, 1))
            self._last_tic = int(tic)
        return self.decide(self.sense(state, self._session_sensors), elapsed)

    def decide(self, observation: Mapping[str, np.ndarray], elapsed: float = 1.0) -> list[int]:
        """One decision's buttons from one stored step per sensor.

        Args:
            observation: ``{sensor key: array of the sensor's shape and dtype}``
                (``frames``: uint8 ``[3, 64, 64]``, …), as :meth:`Session.observe` returns.
            elapsed: engine tics since the previous decision (the ODE's time step; 1 at frame skip 1).

        Returns:
            One 0/1 per action name; the step's time is appended to :attr:`decide_ns`.
        """
        started = time.perf_counter_ns()
        with torch.inference_mode():
            inputs: dict[str, torch.Tensor] = {}
            for name, key, sensor in self._sensors:
                try:
                    stored = observation[key]
                except KeyError:
                    got = ", ".join(observation)
                    raise GolemError(f"observation lacks {key!r} (sensor {name}); got {got}") from None
                x = torch.from_numpy(np.ascontiguousarray(stored)).unsqueeze(0)  # [1, *shape]
                inputs[name] = sensor.to_network(x).to(self._device)
            if self._hx is None:
                init = getattr(self.model, "initial_state", None)
                self._hx = init(1, self._device) if callable(init) else None
            if elapsed == 1.0:  # models that do not integrate time never see the argument
                logits, self._hx = self.model.step(inputs, self._hx)  # [1, A], [1, S]
            else:
                spans = torch.tensor([elapsed], dtype=torch.float32, device=self._device)
                logits, self._hx = self.model.step(inputs, self._hx, spans)
            logits = logits[0].float()
            probs = torch.sigmoid(logits).cpu().numpy()
            drawn = probs
            if self.sample and self.temperature != 1.0:
                # the divisor stays a normal float32: a logit of 0 draws at 0.5 however cold the temperature
                drawn = torch.sigmoid(logits / max(self.temperature, 1e-30)).cpu().numpy()
        self.last_probs = probs
        if self.sample:
            action = (self._rng.random(drawn.shape) < drawn).astype(int).tolist()
        else:
            action = (probs > self.thresholds).astype(int).tolist()
        self.decide_ns.append(time.perf_counter_ns() - started)
        return action

    def sense(self, state: Any, sensors: Sequence[Sensor]) -> dict[str, np.ndarray]:
        """``{key: stored step}`` from a ``vizdoom.GameState``; the time goes to :attr:`sense_ns`."""
        started = time.perf_counter_ns()
        observation = {s.key: s.extract(state) for s in sensors}
        self.sense_ns.append(time.perf_counter_ns() - started)
        return observation

    def latency_ms(self) -> dict[str, float]:
        """p50/p99 of sense, decide and their sum per decision, in milliseconds (empty before any)."""
        return latency_summary(self.sense_ns, self.decide_ns)


def latency_summary(sense_ns: Sequence[int], decide_ns: Sequence[int]) -> dict[str, float]:
    """``{"sense_p50_ms", …, "total_p99_ms", "decisions"}`` from per-decision nanosecond lists."""
    n = len(decide_ns)
    if n == 0:
        return {}
    decide = np.asarray(decide_ns, dtype=np.float64) / 1e6
    sense = np.asarray(sense_ns[-n:], dtype=np.float64) / 1e6 if len(sense_ns) >= n else np.zeros(n)
    out: dict[str, float] = {"decisions": float(n)}
    for label, values in (("sense", sense), ("decide", decide), ("total", sense + decide)):
        out[f"{label}_p50_ms"] = round(float(np.percentile(values, 50)), 4)
        out[f"{label}_p99_ms"] = round(float(np.percentile(values, 99)), 4)
    return out


def trained_scenario(metadata: Mapping[str, Any], checkpoint: Path | str = "the checkpoint") -> str | None:
    """The scenario a checkpoint was trained on, if its metadata says so: a shipped scenario's name.

    Looked up as ``scenario``, then ``data.scenario``, then ``data.module`` when that names a known scenario.
    A path there is refused (:func:`golem.scenarios.checkpoint_scenario`): a checkpoint must not
    choose which file the engine loads; the user passes such a file with ``--scenario``.

    Raises:
        GolemError: the metadata names a scenario file rather than a shipped scenario (one line).
    """
    from golem.scenarios import checkpoint_scenario, known_scenarios

    if isinstance(metadata.get("scenario"), str):
        return checkpoint_scenario(str(metadata["scenario"]), checkpoint)
    data = metadata.get("data")
    if isinstance(data, Mapping):
        for key in ("scenario", "module"):
            value = data.get(key)
            if isinstance(value, str) and value and (key == "scenario" or value in known_scenarios()):
                return checkpoint_scenario(value, checkpoint)
    return None


def trained_frame_skip(metadata: Mapping[str, Any]) -> int | None:
    """The tics per decision of the data a checkpoint was trained on (``data.frame_skip``), if it says."""
    data = metadata.get("data")
    value = data.get("frame_skip") if isinstance(data, Mapping) else None
    return int(value) if isinstance(value, int) and value >= 1 else None


def at_trained_frame_skip(
    settings: GolemSettings, given: Mapping[str, str], metadata: Mapping[str, Any]
) -> GolemSettings:
    """``settings`` deciding every ``data.frame_skip`` tics, as the checkpoint's demonstrations did, unless
    ``game.frame_skip`` is among the ``given`` keys (or the checkpoint does not record its data's skip)."""
    skip = trained_frame_skip(metadata)
    if skip is None or "game.frame_skip" in given or skip == settings.game.frame_skip:
        return settings
    return settings.model_copy(update={"game": settings.game.model_copy(update={"frame_skip": skip})})


def settings_for_model(resolved: ResolvedSettings, metadata: Mapping[str, Any], registry: Registry) -> GolemSettings:
    """The run's settings with the checkpoint's profile, sensors and sensor sections wherever the user set none.

    A model then plays as it was trained (``--plugin``/``--set`` still override;
    a real mismatch is reported by :func:`check_compatible`). Sections are taken
    for sensors that are installed and declare them (``brain.dsp``); checkpoints
    from before sensors owned their settings record audio's as ``dsp``.
    """
    from golem.profiles import PROFILES
    from golem.settings import with_section

    spec = metadata.get("spec") if isinstance(metadata.get("spec"), Mapping) else {}
    given = resolved.sources
    settings = resolved.settings.model_copy(deep=True)
    if "brain.profile" not in given and spec.get("profile") in PROFILES:
        settings.brain.profile = str(spec["profile"])
    if "brain.sensors" not in given and spec.get("sensors"):
        settings.brain.sensors = [str(s) for s in spec["sensors"]]
    sections = dict(spec.get("sensor_settings") or {})
    if spec.get("dsp") and "brain.dsp" not in sections:
        sections["brain.dsp"] = spec["dsp"]
    known = registry.settings_sections()
    for key, values in sections.items():
        if key in known and not any(k == key or k.startswith(key + ".") for k in given):
            settings = with_section(settings, known[key].model_validate(values))
    return settings


def trained_threshold(metadata: Mapping[str, Any]) -> float | None:
    """The ``brain.activation`` a checkpoint was trained with, when recorded."""
    value = metadata.get("activation")
    return float(value) if isinstance(value, (int, float)) and 0.0 < float(value) < 1.0 else None


def trained_thresholds(metadata: Mapping[str, Any]) -> list[float] | None:
    """Per-action press thresholds calibrated on validation, in the model's action order, when recorded."""
    values = metadata.get("thresholds")
    names = (metadata.get("spec") or {}).get("action_names") or []
    if not isinstance(values, Mapping) or not names or set(values) != set(names):
        return None
    out = [float(values[n]) for n in names]
    return out if all(0.0 < v < 1.0 for v in out) else None


def model_threshold(metadata: Mapping[str, Any], default: float = 0.5) -> float | list[float]:
    """How a checkpoint presses its buttons: its calibrated per-action thresholds, else the
    ``brain.activation`` it was trained with, else ``default``."""
    return trained_thresholds(metadata) or trained_threshold(metadata) or default


#: ``metadata["decisions"]`` of a checkpoint whose buttons are drawn from their probabilities in play.
SAMPLE = "sample"


def samples_buttons(metadata: Mapping[str, Any]) -> bool:
    """Whether the checkpoint is played by drawing each button from its probability (``"decisions": "sample"``)
    rather than by thresholds."""
    return metadata.get("decisions") == SAMPLE


def check_temperature(temperature: float, sample: bool, name: str = "the model") -> None:
    """Fail with one line unless ``temperature`` is a finite positive number, and 1 where ``name`` does not
    ``sample`` (a thresholded model draws nothing a temperature could change).

    Raises:
        GolemError: a temperature that is not a finite positive number, or not 1 for a thresholded model.
    """
    if not (math.isfinite(temperature) and temperature > 0.0):
        raise GolemError(f"sampling temperature must be a positive number, got {temperature:g}")
    if temperature != 1.0 and not sample:
        raise GolemError(
            f"a sampling temperature ({temperature:g}) changes only drawn buttons, and {name} presses by "
            "thresholds here: play it with --decisions sample"
        )


def load_agent(
    path: str | Path,
    registry: Registry,
    threshold: float | Sequence[float] = 0.5,
    *,
    threads: int | None = LIVE_THREADS,
    sample: bool | None = None,
    temperature: float = 1.0,
) -> Agent:
    """An :class:`Agent` for the checkpoint at ``path`` (rebuilt from its metadata, CPU, eval mode).

    ``sample`` draws each button from its probability (``True``) or presses by ``threshold``
    (``False``); ``None`` plays as the checkpoint's metadata says (:func:`samples_buttons`).
    ``temperature`` divides the logits a sampling agent draws from (:class:`Agent`).

    Raises:
        GolemError: a missing, corrupt or unrebuildable checkpoint, or a temperature for an agent that
            does not sample (one line).
    """
    from golem.learning.checkpoints import restore

    check_temperature(temperature, True)  # a bad value fails before the checkpoint is read
    restored = restore(path, registry)
    draws = samples_buttons(restored.metadata) if sample is None else sample
    check_temperature(temperature, draws, Path(path).name)
    agent = Agent(restored.model, restored.spec, threshold, threads=threads, sample=draws, temperature=temperature)
    agent.metadata = restored.metadata
    return agent


__all__ = [
    "LIVE_THREADS",
    "SAMPLE",
    "Agent",
    "check_temperature",
    "samples_buttons",
    "load_agent",
    "settings_for_model",
    "at_trained_frame_skip",
    "trained_scenario",
    "trained_threshold",
    "trained_thresholds",
    "model_threshold",
    "check_compatible",
    "latency_summary",
]
