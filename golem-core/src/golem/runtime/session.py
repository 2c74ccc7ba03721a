"""The ViZDoom session factory: settings + sensors → a running, headless ``DoomGame``.

A :class:`Session` resolves and validates the scenario, replaces the buttons
with the action profile's, lets each sensor and configurer switch on what it
reads, starts the engine with a timeout, and guarantees the engine process
ends with the session — on ``close()``, on an exception in the ``with`` block,
and (through :class:`golem.runtime.engine_guard.EngineGuard`) when our own process is
killed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import structlog

from golem.errors import GolemError
from golem.profiles import PROFILES
from golem.runtime.engine_guard import EngineGuard, engine_children, probe_start
from golem.scenarios import MULTIPLAYER_ONLY_WADS, Scenario, check_game_args, iwad_path, resolve_scenario, scenarios_dir
from golem.sensors import Sensor
from golem.settings import GolemSettings

log = structlog.get_logger(__name__)

#: Game argument without which this OpenAL build crashes the engine when audio is on.
AUDIO_SAFE_ARGS = ("+snd_efx 0",)
#: Folder the engine keeps its ini file in, relative to the working directory.
ENGINE_DIR = "_vizdoom"
DEFAULT_RESOLUTION = "RES_160X120"


def multiplayer_only(scenario: Scenario) -> bool:
    """Whether ``scenario``'s WAD is one of :data:`MULTIPLAYER_ONLY_WADS` (it needs ``-host``/``-join``)."""
    return scenario.wad is not None and scenario.wad.name.lower() in MULTIPLAYER_ONLY_WADS


def probe_untrusted(scenario: Scenario, timeout: float) -> None:
    """Start ``scenario`` once in a child process when it loads a WAD ViZDoom does not ship.

    A map that passes :mod:`golem.wad`'s checks can still kill the engine inside
    ``init()``, and with it this process (SIGSEGV, no message); the child dies instead and
    :func:`golem.runtime.engine_guard.probe_start` turns that into one line naming the file.
    Each WAD (path, size, modification time) and map is probed once per process.

    Raises:
        GolemError: the engine crashed, failed or hung on the scenario.
    """
    iwad = iwad_path(scenario.config, scenario.doom_map)
    shipped = scenarios_dir().parent.resolve()
    files = [p.resolve() for p in (scenario.wad, iwad) if p is not None]
    untrusted = [p for p in files if not p.is_relative_to(shipped)]
    if not untrusted:
        return
    spec = {
        "config": str(scenario.config) if scenario.config is not None else None,
        "wad": str(scenario.wad) if scenario.wad is not None else None,
        "iwad": str(iwad) if iwad is not None else None,
        "map": scenario.doom_map,
    }
    if scenario.config is not None:
        files.append(scenario.config)
    key = repr([(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files] + [scenario.doom_map])
    probe_start(spec, f"map {scenario.doom_map or 'of ' + scenario.config.name} of {untrusted[0]}", timeout, key=key)


# One engine start at a time in this process, so new child pids are ours.
_INIT_LOCK = threading.Lock()
# Guards of engines frozen after a start timeout: kept alive so their watchdog
# kills the engine only when this process exits.
_STUCK_GUARDS: list[EngineGuard] = []


def check_display() -> None:
    """Fail with one line unless a game window can open (Linux: a reachable X display).

    Without one, ViZDoom's SDL cannot create the window and the engine takes the
    calling process down with a segmentation fault, so this runs before ``init()``.
    ``SDL_VIDEODRIVER`` set to anything but ``x11`` (e.g. ``wayland``) skips the check.

    Raises:
        GolemError: ``DISPLAY`` unset or the X display cannot be opened.
    """
    if not sys.platform.startswith("linux") or os.environ.get("SDL_VIDEODRIVER", "x11") != "x11":
        return
    hint = "run from a desktop session or under a virtual screen (xvfb-run golem ...)"
    display = os.environ.get("DISPLAY", "")
    if not display:
        raise GolemError(f"no display for the game window: DISPLAY is not set; {hint}")
    if display_opens(display) is False:
        raise GolemError(f"cannot open display {display!r} for the game window; {hint}")


def display_opens(display: str) -> bool | None:
    """Whether an X client can open ``display`` now (``None``: no Xlib here to ask)."""
    try:
        xlib = ctypes.CDLL(ctypes.util.find_library("X11") or "libX11.so.6")
    except OSError:
        return None
    xlib.XOpenDisplay.argtypes = [ctypes.c_char_p]
    xlib.XOpenDisplay.restype = ctypes.c_void_p
    xlib.XCloseDisplay.argtypes = [ctypes.c_void_p]
    handle = xlib.XOpenDisplay(display.encode())
    if not handle:
        return False
    xlib.XCloseDisplay(handle)
    return True


class Configurer(Protocol):
    """Anything that switches engine features on before ``init()`` (scripted experts do)."""

    def configure(self, game: Any) -> None: ...


class Session:
    """One headless ViZDoom game driven tic by tic (``Mode.PLAYER``, synchronous).

    Args:
        settings: ``game.scenario``, ``game.doom_map``, ``game.seed``,
            ``game.start_timeout`` (seconds) and ``brain.profile`` are used.
        sensors: sensor instances; each one's ``configure(game)`` runs before
            ``init()`` and :meth:`observe` returns one array per sensor ``key``.
        scenario, doom_map, seed: override the settings' values.
        visible: show the game window (default headless); on Linux it needs a
            reachable X display (:func:`check_display`).
        spectator: ``Mode.SPECTATOR`` — a human plays, :meth:`act` only advances.
        realtime: ``Mode.ASYNC_PLAYER`` — the engine runs at 35 tics/s of wall time and
            :meth:`act` waits for the next tic (a person watching the window can react).
        configurers: more objects with ``configure(game)`` (experts switching on
            objects info, labels, game variables).
        extra_args: extra engine command-line arguments (``"+sv_cheats 1"``).
        resolution: a ``vizdoom.ScreenResolution`` name.

    Raises:
        GolemError: unknown scenario, missing/invalid WAD or map, unknown button,
            no display for a visible window, engine error or start timeout — one line.
    """

    def __init__(
        self,
        settings: GolemSettings,
        sensors: Iterable[Sensor] = (),
        *,
        scenario: str | None = None,
        doom_map: str | None = None,
        seed: int | None = None,
        visible: bool = False,
        spectator: bool = False,
        realtime: bool = False,
        configurers: Iterable[Configurer] = (),
        extra_args: Sequence[str] = (),
        resolution: str = DEFAULT_RESOLUTION,
    ) -> None:
        import vizdoom as vzd

        self.settings = settings
        self.sensors: tuple[Sensor, ...] = tuple(sensors)
        self.action_names: tuple[str, ...] = PROFILES[settings.brain.profile]
        self.scenario: Scenario = resolve_scenario(
            scenario or settings.game.scenario, doom_map if doom_map is not None else settings.game.doom_map
        )
        self.seed = settings.game.seed if seed is None else seed
        self._guard: EngineGuard | None = None

        netgame = any(a.split()[0] in ("-host", "-join") for a in extra_args if a.split())
        if multiplayer_only(self.scenario) and not netgame:
            raise GolemError(
                f"{self.scenario.name} ({self.scenario.wad.name.lower()}) is a multiplayer map that crashes the engine "
                "outside a network game: play it with `golem run match` (e.g. --agents MODEL --bots 4)"
            )
        keys = [s.key for s in self.sensors]
        if len(set(keys)) != len(keys):
            raise GolemError(f"two sensors share a key: {', '.join(keys)}")
        if visible:
            check_display()
        if not netgame:
            # A network map waits for its players, so a lone probe cannot start it.
            probe_untrusted(self.scenario, settings.game.start_timeout)

        game = vzd.DoomGame()
        self._game = game
        self._closed = False  # from here on close() has a game to end
        if self.scenario.config is not None:
            if not game.load_config(str(self.scenario.config)):
                raise GolemError(f"ViZDoom could not load scenario config {self.scenario.config}")
            # The engine's own reading of the config's game_args, before Golem adds its own.
            check_game_args(game.get_game_args(), f"scenario config {self.scenario.config}")
            # The engine must load the very files validated above (ViZDoom 1.3.2 joins even an
            # absolute path in a config to the config's folder).
            if self.scenario.wad is not None:
                game.set_doom_scenario_path(str(self.scenario.wad))
            named_iwad = iwad_path(self.scenario.config, self.scenario.doom_map)
            if named_iwad is not None:
                game.set_doom_game_path(str(named_iwad))
        if self.scenario.config is None and self.scenario.wad is not None:
            game.set_doom_scenario_path(str(self.scenario.wad))
            iwad = iwad_path(None, self.scenario.doom_map)
            if iwad is not None:
                game.set_doom_game_path(str(iwad))
        if self.scenario.doom_map is not None:
            game.set_doom_map(self.scenario.doom_map)
        try:
            buttons = [getattr(vzd.Button, name) for name in self.action_names]
        except AttributeError as exc:
            raise GolemError(f"profile {settings.brain.profile!r} names an unknown ViZDoom button: {exc}") from None
        game.set_available_buttons(buttons)
        game.set_screen_format(vzd.ScreenFormat.RGB24)
        try:
            game.set_screen_resolution(getattr(vzd.ScreenResolution, resolution))
        except AttributeError:
            raise GolemError(f"unknown screen resolution {resolution!r} (e.g. RES_160X120)") from None
        game.set_window_visible(visible)
        game.set_mode(vzd.Mode.SPECTATOR if spectator else vzd.Mode.ASYNC_PLAYER if realtime else vzd.Mode.PLAYER)
        game.set_seed(int(self.seed))
        for part in (*self.sensors, *configurers):
            part.configure(game)
        if game.is_audio_buffer_enabled():
            for arg in AUDIO_SAFE_ARGS:
                game.add_game_args(arg)
        for arg in extra_args:
            game.add_game_args(arg)
        self._start(settings.game.start_timeout)
        for sensor in self.sensors:
            sensor.reset()

    # --- lifecycle -------------------------------------------------------

    def _start(self, timeout: float) -> None:
        """``game.init()`` within ``timeout`` seconds, tracking the engine pid from the moment it exists."""
        # The engine creates ./_vizdoom/ (its ini and saves) with a check-then-mkdir; two engines
        # starting together in a new folder race on it and one dies with "File exists".
        Path(ENGINE_DIR).mkdir(exist_ok=True)
        outcome: dict[str, BaseException | None] = {}

        def run() -> None:
            try:
                self._game.init()
                outcome["error"] = None
            except BaseException as exc:  # reported to the caller below
                outcome["error"] = exc

        started = time.monotonic()
        with _INIT_LOCK:
            self._guard = EngineGuard()
            before = engine_children()
            with self._guard.environment():  # the engine carries the guard's token from its first instant
                thread = threading.Thread(target=run, name="vizdoom-init", daemon=True)
                thread.start()
                while thread.is_alive() and time.monotonic() - started < timeout:
                    self._guard.track(engine_children() - before)
                    thread.join(0.02)
                timed_out = thread.is_alive()
                # The engine process may not exist yet: give it a moment to appear so it is tracked.
                grace = time.monotonic() + 2.0
                while timed_out and thread.is_alive() and not self._guard.pids and time.monotonic() < grace:
                    self._guard.track(engine_children() - before)
                    thread.join(0.02)
            self._guard.track(engine_children() - before)
        if timed_out:
            message = (
                f"ViZDoom engine did not start within {timeout:g}s (scenario {self.scenario.name}); "
                "raise game.start_timeout or check the scenario"
            )
            self._closed = True
            if thread.is_alive():
                # Killing the engine while init() runs segfaults the host process in
                # ViZDoom 1.3, so the engine is frozen now and SIGKILLed by the
                # watchdog when this process exits.
                import signal

                self._guard.kill(signal.SIGSTOP)
                _STUCK_GUARDS.append(self._guard)
                log.error(
                    "engine_start_timeout",
                    scenario=self.scenario.name,
                    timeout_s=timeout,
                    pids=sorted(self._guard.pids),
                )
                raise GolemError(message + "; the stuck engine is stopped and dies with this process")
            self._cleanup()
            raise GolemError(message)
        error = outcome.get("error")
        if error is not None:
            self._cleanup()
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise GolemError(f"ViZDoom engine failed to start (scenario {self.scenario.name}): {first}") from None
        log.debug(
            "engine_started",
            scenario=self.scenario.name,
            map=self.scenario.doom_map,
            seconds=round(time.monotonic() - started, 3),
            pids=sorted(self._guard.pids),
        )

    def _cleanup(self) -> None:
        """Close the game and make sure its engine process is gone."""
        try:
            self._game.close()
        except Exception as exc:  # the engine may already be dead
            log.warning("engine_close_error", error=str(exc))
        if self._guard is not None:
            if not self._guard.wait_gone(timeout=2.0):
                self._guard.kill()
                self._guard.wait_gone(timeout=2.0)
            self._guard.release(forget=True)

    def close(self) -> None:
        """End the game and its engine process; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._cleanup()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            try:
                self.close()
            except Exception:
                pass

    # --- playing ---------------------------------------------------------

    @property
    def game(self) -> Any:
        """The underlying ``vizdoom.DoomGame``."""
        return self._game

    @property
    def engine_pids(self) -> set[int]:
        """Pids of this session's engine process(es)."""
        return set(self._guard.pids) if self._guard is not None else set()

    @property
    def n_actions(self) -> int:
        return len(self.action_names)

    def new_episode(self, seed: int | None = None) -> None:
        """Start a new episode (optionally re-seeding the engine) and reset every sensor's held value."""
        if seed is not None:
            self._game.set_seed(int(seed))
        self._game.new_episode()
        for sensor in self.sensors:
            sensor.reset()

    def observe(self) -> dict[str, np.ndarray]:
        """One stored step per sensor, keyed by sensor ``key`` (e.g. ``frames``: uint8 ``[3, 64, 64]``).

        At the end of an episode (no state) each sensor repeats its last value.
        """
        state = self._game.get_state()
        return {sensor.key: sensor.extract(state) for sensor in self.sensors}

    def act(self, action: Sequence[int], tics: int | None = None) -> float:
        """Hold ``action`` (one 0/1 per :attr:`action_names`) for ``tics`` tics (1 tic = 1/35 s); the reward.

        ``tics`` defaults to ``game.frame_skip``.
        """
        if len(action) != len(self.action_names):
            raise ValueError(
                f"action has {len(action)} values, profile has {len(self.action_names)}: {self.action_names}"
            )
        hold = self.settings.game.frame_skip if tics is None else int(tics)
        return float(self._game.make_action([int(a) for a in action], hold))

    def advance(self, tics: int = 1) -> None:
        """Advance ``tics`` tics without acting (spectator mode: the human acts)."""
        self._game.advance_action(int(tics))

    @property
    def last_action(self) -> list[int]:
        """The buttons pressed on the last tic (in spectator mode: the human's), as 0/1."""
        return [int(v != 0) for v in self._game.get_last_action()]

    @property
    def episode_finished(self) -> bool:
        return bool(self._game.is_episode_finished())

    @property
    def is_player_dead(self) -> bool:
        return bool(self._game.is_player_dead())

    @property
    def total_reward(self) -> float:
        """The episode's reward so far."""
        return float(self._game.get_total_reward())
