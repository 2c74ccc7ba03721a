"""The first frame the engine renders of a scenario config: what a variant looks like (``--screenshot``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import structlog

from golem.errors import GolemError

log = structlog.get_logger(__name__)

#: Seconds the engine may take to start a variant in the crash probe.
PROBE_TIMEOUT_S = 60.0


def first_frame(config: Path, resolution: str | None = None, tics: int = 1, seed: int = 0) -> np.ndarray:
    """The RGB screen after the episode's first ``tics`` tics, ``[H, W, 3]`` uint8, of the scenario ``config``
    (headless; the engine is first probed in a child process, so a map that crashes it is one line).

    Args:
        config: a scenario ``.cfg``.
        resolution: a ViZDoom ``ScreenResolution`` name (``RES_640X480``); ``None``: the config's.
        tics: tics to play (no buttons pressed) before the frame is taken; at least 1.
        seed: the engine's seed (the same seed draws the same frame).

    Raises:
        GolemError: the config or its WAD is refused, or the engine fails to start it.
    """
    import vizdoom as vzd

    from golem.runtime.engine_guard import EngineGuard, engine_children
    from golem.runtime.session import probe_untrusted
    from golem.scenarios import resolve_scenario

    scenario = resolve_scenario(str(config))
    probe_untrusted(scenario, PROBE_TIMEOUT_S)
    game = vzd.DoomGame()
    if not game.load_config(str(scenario.config)):
        raise GolemError(f"ViZDoom cannot load {config}")
    if scenario.doom_map:
        game.set_doom_map(scenario.doom_map)
    game.set_window_visible(False)
    game.set_sound_enabled(False)
    game.set_audio_buffer_enabled(False)
    game.set_mode(vzd.Mode.PLAYER)
    game.set_seed(int(seed))
    game.set_screen_format(vzd.ScreenFormat.RGB24)
    if resolution is not None:
        game.set_screen_resolution(getattr(vzd.ScreenResolution, resolution))
    guard = EngineGuard()
    before = engine_children()
    try:
        with guard.environment():
            game.init()
        guard.track(engine_children() - before)
        game.new_episode()
        for _ in range(max(1, tics) - 1):
            game.advance_action(1)
        state = game.get_state()
        if state is None:
            raise GolemError(f"the episode of {config} ended before tic {max(1, tics)}")
        frame = np.array(state.screen_buffer, dtype=np.uint8)
    except vzd.ViZDoomErrorException as exc:
        raise GolemError(f"ViZDoom failed on {config}: {str(exc).strip().splitlines()[0]}") from None
    finally:
        game.close()
        guard.release(forget=True)
    log.debug("first_frame", config=str(config), shape=list(frame.shape))
    return frame


def save_first_frame(config: Path, png: Path, resolution: str | None = None) -> Path:
    """Write :func:`first_frame` of ``config`` to ``png`` (atomically); return ``png``."""
    from PIL import Image

    from golem.atomic import atomic_write

    image = Image.fromarray(first_frame(config, resolution))
    with atomic_write(png) as fh:
        image.save(fh, format="PNG")
    return Path(png)
