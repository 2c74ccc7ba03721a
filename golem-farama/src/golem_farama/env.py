"""The ViZDoom environment ``vizdoom``: a Gymnasium ``Env`` over a :class:`golem.runtime.session.Session`.

Observations are Golem's sensor steps (a ``Dict`` of one ``Box`` per sensor
key, stored dtype and shape), actions the profile's buttons as ``MultiBinary``,
so standard RL tools drive the same sensors the agent is trained on.

:class:`ScenarioEnv` builds one from plain keyword arguments: it is the entry point of
the ``Golem/<scenario>-v0`` ids that :mod:`golem_farama.registration` registers, so
``gymnasium.make("Golem/defend_the_center-v0", sensors=["visual"], frame_skip=4)`` works.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from golem.errors import GolemError
from golem.profiles import PROFILES
from golem.registry import Registry
from golem.runtime.session import Session
from golem.scenarios import scenario_spec
from golem.sensors import Sensor
from golem.settings import GolemSettings


def _box(sensor: Sensor) -> spaces.Box:
    if np.issubdtype(sensor.dtype, np.integer):
        info = np.iinfo(sensor.dtype)
        low, high = info.min, info.max
    else:
        high = float(np.finfo(sensor.dtype).max)
        low = -high
    return spaces.Box(low=low, high=high, shape=tuple(sensor.shape), dtype=sensor.dtype)


class VizDoomEnv(gymnasium.Env):
    """ViZDoom through Golem's session and sensors.

    Args:
        settings: Golem settings (scenario, map, seed, profile, sensors).
        registry: the components; sensor names are looked up in it.
        sensors: sensor instances, or names looked up in ``registry``; default
            ``settings.brain.sensors``.
        frame_skip: tics each :meth:`step` holds the action (1 tic = 1/35 s).
        render_mode: ``None`` or ``"rgb_array"`` (the 160×120 screen, ``[H, W, 3]`` uint8).
        **session_kwargs: passed to :class:`Session` (``scenario``, ``doom_map``, ``extra_args``, …).

    Observation: ``{sensor.key: array of sensor.shape, sensor.dtype}``.
    Action: ``MultiBinary(n_actions)``, one 0/1 per profile button.
    ``terminated`` when the episode ends otherwise than by its time limit,
    ``truncated`` when the scenario's ``episode_timeout`` ends it.
    The engine starts on the first :meth:`reset`.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 35}

    def __init__(
        self,
        settings: GolemSettings,
        registry: Registry,
        sensors: Sequence[Sensor | str] | None = None,
        *,
        frame_skip: int = 1,
        render_mode: str | None = None,
        **session_kwargs: Any,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if int(frame_skip) < 1:
            raise GolemError(f"frame_skip must be at least 1 tic, got {frame_skip}")
        self.settings = settings
        chosen = list(settings.brain.sensors if sensors is None else sensors)
        names = [s for s in chosen if isinstance(s, str)]
        by_name = {name: registry.get("sensors", name).obj(settings) for name in names}
        self.sensors: list[Sensor] = [by_name[s] if isinstance(s, str) else s for s in chosen]
        self.action_names = PROFILES[settings.brain.profile]
        self.frame_skip = int(frame_skip)
        self.render_mode = render_mode
        self._session_kwargs = session_kwargs
        self._session: Session | None = None
        self.observation_space = spaces.Dict({s.key: _box(s) for s in self.sensors})
        self.action_space = spaces.MultiBinary(len(self.action_names))

    @property
    def session(self) -> Session:
        """The running session (started on first use)."""
        if self._session is None:
            self._session = Session(self.settings, self.sensors, **self._session_kwargs)
        return self._session

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode; ``seed`` seeds both the env's RNG and the engine. Returns ``(obs, info)``."""
        super().reset(seed=seed)
        engine_seed = int(self.np_random.integers(0, 2**31 - 1))
        self.session.new_episode(seed=engine_seed)
        return self.session.observe(), {"engine_seed": engine_seed}

    def step(self, action):
        """Hold ``action`` for ``frame_skip`` tics. Returns ``(obs, reward, terminated, truncated, info)``."""
        session = self.session
        reward = session.act(np.asarray(action).reshape(-1).tolist(), self.frame_skip)
        finished = session.episode_finished
        game = session.game
        timeout = game.get_episode_timeout()
        truncated = bool(finished and timeout > 0 and game.get_episode_time() >= timeout and not session.is_player_dead)
        terminated = bool(finished and not truncated)
        info = {"total_reward": session.total_reward, "player_dead": session.is_player_dead}
        return session.observe(), reward, terminated, truncated, info

    def render(self):
        """The current screen ``[H, W, 3]`` uint8 for ``render_mode="rgb_array"`` (black after the episode ends)."""
        if self.render_mode != "rgb_array":
            return None
        state = self.session.game.get_state()
        if state is None or state.screen_buffer is None:
            return np.zeros((self.session.game.get_screen_height(), self.session.game.get_screen_width(), 3), np.uint8)
        return np.array(state.screen_buffer)

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None


class _EpisodeTimeout:
    """Sets the engine's episode time-out (tics) before ``init()``, so the limit holds at any frame skip."""

    def __init__(self, tics: int) -> None:
        self.tics = int(tics)

    def configure(self, game: Any) -> None:
        game.set_episode_timeout(self.tics)


@functools.lru_cache(maxsize=1)
def _plugin_registry() -> Registry:
    """The installed plugins' registry, loaded once per process (every env of a vector env shares it)."""
    from golem.plugins import load_plugins

    return load_plugins().registry


class ScenarioEnv(VizDoomEnv):
    """:class:`VizDoomEnv` from keyword arguments: the entry point of ``Golem/<scenario>-v0``.

    Args:
        scenario: a ViZDoom scenario name, or a ``.cfg``/``.wad`` path.
        sensors: sensor names of the installed plugins (``["visual", "depth"]``); default
            ``settings.brain.sensors`` (``["visual"]`` unless configured).
        frame_skip: tics each :meth:`step` holds the action; default the scenario's
            :attr:`golem.scenarios.ScenarioSpec.frame_skip`.
        profile: the action profile (``basic``, ``fluid``, ``classic``); default ``settings.brain.profile``.
        doom_map: map lump to play; default the scenario's.
        max_tics: episode time-out in tics (1/35 s) set in the engine, which then reports it as
            ``truncated``; default :attr:`ScenarioSpec.max_steps` for scenarios without a time-out of
            their own, else the scenario's.
        settings: base settings (a copy is changed); default :class:`GolemSettings` from the environment.
        render_mode: ``None`` or ``"rgb_array"``.
        **session_kwargs: passed to :class:`Session` (``extra_args``, ``resolution``, …).

    Raises:
        GolemError: unknown sensor, frame skip below 1 (unknown scenarios fail on the first reset).
    """

    def __init__(
        self,
        scenario: str = "basic",
        sensors: Sequence[str] | None = None,
        *,
        frame_skip: int | None = None,
        profile: str | None = None,
        doom_map: str | None = None,
        max_tics: int | None = None,
        settings: GolemSettings | None = None,
        render_mode: str | None = None,
        **session_kwargs: Any,
    ) -> None:
        settings = settings.model_copy(deep=True) if settings is not None else GolemSettings()
        settings.game.scenario = scenario
        if doom_map is not None:
            settings.game.doom_map = doom_map
        if profile is not None:
            settings.brain.profile = profile
        spec = scenario_spec(scenario)
        tics = max_tics if max_tics is not None else spec.max_steps
        if tics is not None:
            if int(tics) < 1:
                raise GolemError(f"max_tics must be at least 1, got {tics}")
            session_kwargs["configurers"] = (*session_kwargs.get("configurers", ()), _EpisodeTimeout(tics))
        super().__init__(
            settings,
            _plugin_registry(),
            None if sensors is None else list(sensors),
            frame_skip=spec.frame_skip if frame_skip is None else frame_skip,
            render_mode=render_mode,
            **session_kwargs,
        )


def make_vizdoom_env(settings: GolemSettings, registry: Registry, **kwargs: Any) -> gymnasium.Env:
    """A Gymnasium env playing ``settings.game.scenario`` with ``settings.brain.sensors`` (see :class:`VizDoomEnv`)."""
    return VizDoomEnv(settings, registry, **kwargs)
