"""Scenario resolution: a ViZDoom scenario name, a ``.cfg`` path, or a ``.wad`` path + map.

Every WAD is validated (:mod:`golem.wad`) before the engine loads it, because
the engine crashes or hangs on malformed maps, and so is the map a config starts
(the engine waits forever for a map its WADs lack).

A ``.cfg`` is read as the engine reads it (:func:`read_config`) and checked
(:func:`check_config`): only the keys of :data:`CONFIG_KEYS` are accepted, and its
``game_args`` only the engine arguments of :data:`ENGINE_CVARS` / :data:`ENGINE_FLAGS`
(:func:`check_game_args`), so a scenario file cannot run a program, make the engine
write files or load unchecked WADs. ``docs/safety.md`` lists the accepted set.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from golem.errors import GolemError
from golem.wad import WadDirectory, check_map_file, read_wad

#: The map used when a WAD is given without a map name (else the WAD's first map), and the
#: engine's own default when a config names none.
DEFAULT_WAD_MAP = "MAP01"
#: Scenario WADs whose maps are for network games only: outside one, ViZDoom 1.3.2's ``init()`` segfaults
#: (measured for these two; ``deathmatch.wad`` and ``multi_deathmatch.wad`` start alone).
MULTIPLAYER_ONLY_WADS = ("cig.wad", "multi_duel.wad")

#: The ``.cfg`` keys Golem accepts (ViZDoom 1.3.2 reads each as ``snake_case`` or ``camelCase``, any case).
#: Left out: ``vizdoom_path`` (the engine program to run) and ``doom_config_path`` (a file the engine writes).
CONFIG_KEYS = frozenset(
    {
        "doom_game_path",
        "doom_scenario_path",
        "doom_map",
        "doom_skill",
        "seed",
        "episode_start_time",
        "episode_timeout",
        "game_args",
        "mode",
        "ticrate",
        "console_enabled",
        "sound_enabled",
        "window_visible",
        "screen_resolution",
        "screen_format",
        "available_buttons",
        "available_game_variables",
        "button_max_value",
        "depth_buffer_enabled",
        "labels_buffer_enabled",
        "automap_buffer_enabled",
        "audio_buffer_enabled",
        "audio_buffer_size",
        "audio_sampling_rate",
        "notifications_buffer_enabled",
        "notifications_buffer_size",
        "objects_info_enabled",
        "sectors_info_enabled",
        "automap_mode",
        "automap_rotate",
        "automap_render_textures",
        "automap_render_objects_as_sprites",
        "render_hud",
        "render_minimal_hud",
        "render_weapon",
        "render_crosshair",
        "render_decals",
        "render_particles",
        "render_effects_sprites",
        "effects_sprites",
        "render_messages",
        "render_corpses",
        "render_screen_flashes",
        "render_all_frames",
        "living_reward",
        "death_penalty",
        "death_reward",
        "map_exit_reward",
        "kill_reward",
        "secret_reward",
        "item_reward",
        "frag_reward",
        "hit_reward",
        "hit_taken_reward",
        "hit_taken_penalty",
        "damage_made_reward",
        "damage_taken_reward",
        "damage_taken_penalty",
        "health_reward",
        "armor_reward",
    }
)
#: Config keys refused, with the reason given to the user.
REFUSED_CONFIG_KEYS = {
    "vizdoom_path": "it names the engine program to run",
    "doom_config_path": "it names a file the engine writes",
}
#: List-valued config keys: the value is ``{ ... }``, possibly over several lines.
LIST_CONFIG_KEYS = frozenset({"available_buttons", "available_game_variables"})

#: Engine console variables a config's ``game_args`` may set, as ``+name value`` (one plain value each):
#: game rules only (no console commands, no file names).
ENGINE_CVARS = frozenset(
    {
        "sv_noautoaim",
        "sv_forcerespawn",
        "sv_respawnprotect",
        "sv_spawnfarthest",
        "sv_nocrouch",
        "sv_nojump",
        "sv_nofreelook",
        "sv_infiniteammo",
        "sv_nomonsters",
        "sv_fastmonsters",
        "sv_losefrag",
        "sv_noexit",
        "sv_samelevel",
        "sv_weaponstay",
        "sv_itemrespawn",
        "sv_respawnsuper",
        "sv_noweaponspawn",
        "sv_fastweapons",
        "timelimit",
        "fraglimit",
        "teamplay",
        "deathmatch",
        "skill",
        "dmflags",
        "dmflags2",
        "freelook",
        "cl_run",
        "viz_respawn_delay",
        "viz_nocheat",
        "snd_efx",
    }
)
#: Engine flags a config's ``game_args`` may give, as ``-name`` followed by this many plain values.
ENGINE_FLAGS = {"deathmatch": 0, "altdeath": 0, "nomonsters": 0, "fast": 0, "respawn": 0, "skill": 1, "timer": 1}
#: What a value in ``game_args`` may look like: a number or a plain word (no ``;``, quotes or paths).
_PLAIN_VALUE = re.compile(r"-?[A-Za-z0-9_.]+")


def scenarios_dir() -> Path:
    """The folder of scenario ``.cfg``/``.wad`` files shipped with ViZDoom."""
    import vizdoom

    return Path(vizdoom.scenarios_path)


@dataclass(frozen=True)
class ScenarioSpec:
    """How a shipped scenario is recorded, trained on and played by default (one spec per scenario,
    as Sample Factory's ``doom_utils`` keeps one).

    Attributes:
        frame_skip: tics each decision holds its buttons (``game.frame_skip`` where the user set none):
            record, evaluate and play use it; a trained model carries the skip of its data.
        max_steps: step limit in tics for scenarios with no time-out of their own (``None``: the
            scenario's own time-out).
        mirror: whether left-right mirrored twins of its episodes are valid demonstrations
            (``training.mirror`` where the user set none): not for a fixed maze, whose mirror image
            is another maze.
        episodes: expert episodes a new user should record (the scoreboard's default).
        min_updates: optimiser steps a model of this scenario trains for at least
            (``training.min_updates`` where the user set no budget; ``None``: the setting's default).
        updates: optimiser steps a model of this scenario trains for, however many epochs that takes
            (``training.updates`` where the user set no budget; ``None``: train for ``training.epochs``).
            For stores large enough that ten epochs would outlast the 20 minutes of training a new user
            is promised.
        tune_episodes: after training, tune the press thresholds by play with this many episodes per
            candidate (``training.tune_episodes`` where the user set none; 0: no tuning).
        vary: modifications of its look (``golem procgen vary``) an expert's episodes are recorded on
            where ``golem run record`` is given no ``--vary``: each episode on a variant of its own, built
            from the episode's seed (randomised recording; ``--vary none``: the shipped map). ``()``: the
            shipped map.
        sensors: sensors recorded and trained on beside the settings' (``brain.sensors``) where the user
            chose none (no ``brain.sensors`` setting, no ``--plugin`` naming a sensor), each where it is
            installed; training adds one only where every episode it reads carries it. Read for generated
            maps (:data:`GENERATED_SPECS`); no shipped scenario's spec sets it.
    """

    frame_skip: int = 1
    max_steps: int | None = None
    mirror: bool = True
    episodes: int = 30
    min_updates: int | None = None
    updates: int | None = None
    tune_episodes: int = 0
    vary: tuple[str, ...] = ()
    sensors: tuple[str, ...] = ()


#: Specs of the shipped scenarios Golem has measured; others get :class:`ScenarioSpec`'s defaults.
#: Frame skip 4 (as Sample Factory plays every Doom scenario) where a network copies the expert's
#: held decisions from pixels; 1 where an episode lasts a few tics (``basic``) or the expert times a
#: single shot to the tic (``predict_position``, ``deadly_corridor``, which score below random at 4).
#: Scenarios without a time-out of their own get 2,100 tics (60 s, as World Models ran take_cover).
#: Episode counts, update counts and in-training threshold tuning are where the measured score stopped
#: rising; the measurements are in ``docs/research/2026-12-04-scenario-specs.md``. Randomised recording
#: (``vary``) where the generalisation board measured it to keep the agent playing on looks it never saw
#: at no loss on the shipped map (``docs/generalisation.md``).
SCENARIO_SPECS: dict[str, ScenarioSpec] = {
    "basic": ScenarioSpec(frame_skip=1, episodes=240),
    "defend_the_center": ScenarioSpec(
        frame_skip=4, episodes=100, min_updates=1500, tune_episodes=30, vary=("textures", "monsters", "light")
    ),
    "defend_the_line": ScenarioSpec(frame_skip=4, max_steps=2100, episodes=60, tune_episodes=30),
    "health_gathering": ScenarioSpec(frame_skip=4, episodes=60),
    "take_cover": ScenarioSpec(frame_skip=4, max_steps=2100, episodes=240),
    "my_way_home": ScenarioSpec(frame_skip=4, mirror=False, episodes=1200),
    "health_gathering_supreme": ScenarioSpec(frame_skip=4, episodes=600, updates=3000),
    "predict_position": ScenarioSpec(frame_skip=1, episodes=200),
    "deadly_corridor": ScenarioSpec(frame_skip=1, episodes=100),
    "deathmatch": ScenarioSpec(frame_skip=4, episodes=60),
}


#: Specs of the curriculum's generated maps by phase (any generator); a phase not listed takes
#: :class:`ScenarioSpec`'s defaults. On phase 1 the scout's decisions every four tics and the automap beside
#: the screen are the recipe that exited most unseen maps, cloned and fine-tuned
#: (``docs/research/2026-12-07-generated-maps.md``, ``docs/research/2026-12-07-automap-on-2000-maps.md``);
#: phases 2 and 3 keep the defaults until a recipe is measured to play them.
GENERATED_SPECS: dict[int, ScenarioSpec] = {1: ScenarioSpec(frame_skip=4, sensors=("automap",))}


def generated_spec(phase: int | None) -> ScenarioSpec:
    """The spec of generated maps of curriculum ``phase`` (:data:`GENERATED_SPECS`; defaults for any other)."""
    return GENERATED_SPECS.get(phase, ScenarioSpec()) if phase is not None else ScenarioSpec()


#: Suffix of the sidecar a scenario variant's ``.cfg`` has beside it (``<stem>.variant.json``), naming the
#: shipped scenario it varies (``{"scenario": "take_cover", "modifications": [...], "seed": ...}``).
VARIANT_SIDECAR = ".variant.json"


def variant_of(scenario: str) -> str | None:
    """The shipped scenario that the ``.cfg``/``.wad`` path ``scenario`` is a look-alike variant of (its
    ``<stem>.variant.json`` sidecar says so), else ``None``.

    A variant keeps its scenario's layout and rules and changes its look (``golem procgen vary``), so it
    takes that scenario's spec (frame skip, step limit) and its expert plays it.
    """
    if not scenario.lower().endswith((".cfg", ".wad")):
        return None
    sidecar = Path(scenario).with_suffix(VARIANT_SIDECAR)
    try:
        base = json.loads(sidecar.read_text(encoding="utf-8")).get("scenario")
    except (OSError, ValueError, AttributeError):
        return None
    return base if _shipped(base) else None


def _shipped(name: object) -> bool:
    """Whether ``name`` names a scenario ViZDoom ships."""
    return isinstance(name, str) and "/" not in name and (scenarios_dir() / f"{name}.cfg").is_file()


def scenario_key(scenario: str) -> str:
    """The name a scenario's spec is filed under: the name itself, a variant's shipped scenario
    (:func:`variant_of`), or a ``.cfg``/``.wad`` path's file stem."""
    if scenario.lower().endswith((".cfg", ".wad")):
        return variant_of(scenario) or Path(scenario).stem
    return scenario


def scenario_spec(scenario: str | None) -> ScenarioSpec:
    """The spec of ``scenario`` (a name or a ``.cfg``/``.wad`` path); defaults for any other."""
    return SCENARIO_SPECS.get(scenario_key(scenario), ScenarioSpec()) if scenario else ScenarioSpec()


def step_limit(scenario: str, max_steps: int | None) -> int | None:
    """``max_steps`` when given, else the scenario's default limit (:attr:`ScenarioSpec.max_steps`), else ``None``.

    ``scenario`` is a name or a ``.cfg``/``.wad`` path (its file stem is looked up).
    """
    if max_steps is not None:
        return max_steps
    return scenario_spec(scenario).max_steps


def known_scenarios() -> list[str]:
    """Names of every scenario ``.cfg`` ViZDoom ships (``basic``, ``deathmatch``, …), sorted."""
    return sorted(p.stem for p in scenarios_dir().glob("*.cfg"))


@dataclass(frozen=True)
class Scenario:
    """A resolved scenario.

    Attributes:
        name: display name (scenario name or file stem).
        config: the ``.cfg`` to load, or ``None`` for a bare WAD.
        wad: the scenario WAD (``doom_scenario_path``), or ``None`` when the
            config only uses the IWAD (``doom2.cfg``).
        doom_map: the map to start (upper case), or ``None`` to keep the config's.
    """

    name: str
    config: Path | None
    wad: Path | None
    doom_map: str | None


@dataclass(frozen=True)
class ConfigEntry:
    """One ``key = value`` (or ``key += value``) entry of a ViZDoom config.

    Attributes:
        key: the key as Golem names it (``doom_map``); an unknown key is kept lower-cased as written.
        value: the value as written, trimmed (a list key's ``{ ... }`` joined on one line).
        append: written with ``+=``.
        line: the 1-based line number it starts on.
    """

    key: str
    value: str
    append: bool
    line: int


def _key_name(raw: str) -> str:
    """``raw`` as a :data:`CONFIG_KEYS` name when it is one in any spelling the engine takes (``doomMap``)."""
    squeezed = re.sub(r"[\s_]", "", raw.lower())
    known = {k.replace("_", ""): k for k in (*CONFIG_KEYS, *REFUSED_CONFIG_KEYS)}
    return known.get(squeezed, " ".join(raw.lower().split()))


def read_config(config: Path) -> list[ConfigEntry]:
    """The entries of a ViZDoom config, parsed as ViZDoom 1.3.2's loader parses them.

    A line whose first non-blank character is ``#`` is a comment (a ``#`` later on a line is
    part of the value, as the engine reads it); ``+=`` is looked for before ``=``; a list key's
    value runs from ``{`` to the line that ends with ``}``.

    Raises:
        GolemError: the file cannot be read.
    """
    try:
        lines = config.read_text(errors="replace").splitlines()
    except OSError as exc:
        raise GolemError(f"cannot read scenario config {config}: {exc.strerror}") from None
    entries: list[ConfigEntry] = []
    i = 0
    while i < len(lines):
        number, line = i + 1, " ".join(lines[i].split())
        i += 1
        if not line or line.startswith("#"):
            continue
        if "+=" in line:
            raw_key, value, append = *line.split("+=", 1), True
        elif "=" in line:
            raw_key, value, append = *line.split("=", 1), False
        else:
            continue
        key, value = _key_name(raw_key.strip()), value.strip()
        if key in LIST_CONFIG_KEYS:
            while not value and i < len(lines):
                value = " ".join(lines[i].split())
                value = "" if value.startswith("#") else value
                i += 1
            if value.startswith("{"):
                while not value.endswith("}") and i < len(lines):
                    more = " ".join(lines[i].split())
                    i += 1
                    if more and not more.startswith("#"):
                        value += " " + more
        entries.append(ConfigEntry(key=key, value=value, append=append, line=number))
    return entries


def scenario_map(scenario: Scenario) -> str:
    """The map the engine starts for ``scenario``: its own, else its config's ``doom_map``, else
    :data:`DEFAULT_WAD_MAP` (as :func:`resolve_scenario` reads them)."""
    if scenario.doom_map:
        return scenario.doom_map.upper()
    configured = _config_value(scenario.config, "doom_map") if scenario.config is not None else None
    return (configured or DEFAULT_WAD_MAP).upper()


def _config_value(config: Path, key: str) -> str | None:
    """A ``key = value`` entry of a ViZDoom config (last one wins), or ``None``."""
    value = None
    for entry in read_config(config):
        if entry.key == key and not entry.append and entry.value:
            value = entry.value
    return value


def check_game_args(args: str, source: str) -> None:
    """Refuse engine arguments outside :data:`ENGINE_CVARS` / :data:`ENGINE_FLAGS`.

    Args:
        args: the arguments as one string (``"+sv_noautoaim 1 -fast"``).
        source: what they came from, for the message (a config's path).

    Raises:
        GolemError: one line naming the first refused argument.
    """
    tokens = args.split()
    i = 0
    while i < len(tokens):
        token = tokens[i]
        name = token[1:].lower()
        if token[:1] == "+" and name in ENGINE_CVARS:
            wanted = 1
        elif token[:1] == "-" and name in ENGINE_FLAGS:
            wanted = ENGINE_FLAGS[name]
        else:
            raise GolemError(
                f"{source}: engine argument {token!r} is not allowed in a scenario file "
                "(allowed: game-rule settings listed in docs/safety.md)"
            )
        values = tokens[i + 1 : i + 1 + wanted]
        if len(values) != wanted or not all(_PLAIN_VALUE.fullmatch(v) for v in values):
            raise GolemError(
                f"{source}: engine argument {token} needs {wanted} plain value(s), got {' '.join(values) or 'none'!s}"
            )
        i += 1 + wanted


def check_config(config: Path) -> list[ConfigEntry]:
    """Read ``config`` and refuse what Golem does not accept from a file; return its entries.

    Raises:
        GolemError: one line naming the file, the line and the key or argument refused.
    """
    entries = read_config(config)
    for entry in entries:
        where = f"scenario config {config} line {entry.line}"
        if entry.key in REFUSED_CONFIG_KEYS:
            raise GolemError(f"{where}: key {entry.key} is not allowed ({REFUSED_CONFIG_KEYS[entry.key]})")
        if entry.key not in CONFIG_KEYS:
            raise GolemError(
                f"{where}: unknown key {entry.key!r} (the keys Golem accepts are listed in docs/safety.md)"
            )
        if entry.key == "game_args":
            check_game_args(entry.value, where)
    return entries


def is_scenario_name(value: str) -> bool:
    """Whether ``value`` is the name of a scenario ViZDoom ships (``basic``), not a path."""
    return (
        "/" not in value
        and "\\" not in value
        and not value.lower().endswith((".cfg", ".wad"))
        and value in known_scenarios()
    )


def checkpoint_scenario(value: str, checkpoint: Path | str) -> str:
    """The scenario a checkpoint's metadata names, if it is a shipped scenario's name.

    A path in a checkpoint is refused: a downloaded checkpoint must not choose which file
    the engine loads. The user can pass that path on the command line instead.

    Raises:
        GolemError: ``value`` is not a shipped scenario name (one line).
    """
    if is_scenario_name(value):
        return value
    raise GolemError(
        f"checkpoint {checkpoint} names scenario {value!r}, which is not a shipped scenario name; "
        f"a checkpoint may only name one (e.g. basic): pass --scenario {value} to use that file"
    )


def iwad_path(config: Path | None = None, doom_map: str | None = None) -> Path | None:
    """The IWAD the engine will use, or ``None`` when it is not on disk.

    The config's ``doom_game_path`` (relative to the config, else to ViZDoom's
    folder), else the bundled Freedoom: ``freedoom1.wad`` for ``ExMy`` maps,
    ``freedoom2.wad`` otherwise.
    """
    bundled = scenarios_dir().parent
    entry = _config_value(config, "doom_game_path") if config is not None else None
    if entry:
        path = Path(entry)
        candidates = [path] if path.is_absolute() else [config.parent / path, bundled / path]  # type: ignore[union-attr]
    else:
        episodic = bool(doom_map and re.fullmatch(r"E[0-9]M[0-9]", doom_map.upper()))
        candidates = [bundled / ("freedoom1.wad" if episodic else "freedoom2.wad")]
    return next((p for p in candidates if p.is_file()), None)


def _check_map(sources: list[tuple[Path, WadDirectory]], doom_map: str, name: str) -> None:
    """Validate ``doom_map`` in the first of ``sources`` that has it (as the engine looks it up).

    Raises:
        GolemError: no source has the map, or its lumps are damaged.
    """
    for path, wad in sources:
        if doom_map in {lump.name for lump in wad.lumps}:
            wad.validate_map(doom_map)
            check_map_file(path, doom_map, wad)
            return
    known = sorted({m for _, wad in sources for m in wad.maps()})
    raise GolemError(f"map {doom_map} not found for scenario {name} (maps: {', '.join(known) or 'none'})")


def resolve_scenario(scenario: str, doom_map: str | None = None) -> Scenario:
    """Resolve ``scenario`` and check its config, WAD and map before any engine starts.

    Args:
        scenario: a ViZDoom scenario name (see :func:`known_scenarios`), a path
            to a ``.cfg``, or a path to a ``.wad``.
        doom_map: map lump to play (``MAP01``, ``E1M1``); for a WAD it defaults
            to ``MAP01`` (or the WAD's first map), for a config to the config's.

    Raises:
        GolemError: unknown name (listing the known ones), missing file, a config key or
            engine argument Golem does not accept (:func:`check_config`), or an invalid
            WAD/map — one line.
    """
    lower = scenario.lower()
    if lower.endswith(".wad"):
        wad_path = Path(scenario).expanduser()
        wad = read_wad(wad_path)  # raises on missing / malformed
        maps = wad.maps()
        chosen = (doom_map or (DEFAULT_WAD_MAP if DEFAULT_WAD_MAP in maps or not maps else maps[0])).upper()
        wad.validate_map(chosen)
        check_map_file(wad_path, chosen, wad)
        return Scenario(name=wad_path.stem, config=None, wad=wad_path.resolve(), doom_map=chosen)
    if lower.endswith(".cfg") or "/" in scenario:
        config = Path(scenario).expanduser()
        if not config.is_file():
            raise GolemError(f"scenario config not found: {config}")
        name = config.stem
    else:
        config = scenarios_dir() / f"{scenario}.cfg"
        if not config.is_file():
            raise GolemError(
                f"unknown scenario {scenario!r}; known: {', '.join(known_scenarios())} (or a .cfg/.wad path)"
            )
        name = scenario
    config = config.resolve()
    check_config(config)
    wad_entry = _config_value(config, "doom_scenario_path")
    wad_path = None
    if wad_entry:
        wad_path = Path(wad_entry)
        if not wad_path.is_absolute():
            wad_path = config.parent / wad_path
        if not wad_path.is_file():
            raise GolemError(f"scenario {name}: WAD {wad_path} named by {config.name} not found")
    chosen = doom_map.upper() if doom_map else None
    check_map = chosen or (_config_value(config, "doom_map") or DEFAULT_WAD_MAP).upper()
    sources = [(wad_path, read_wad(wad_path))] if wad_path is not None else []
    iwad = iwad_path(config, check_map)
    if iwad is not None:
        # A map missing from the scenario WAD is looked up in the IWAD, as the engine does.
        sources.append((iwad, read_wad(iwad)))
    if not chosen and not _config_value(config, "doom_map") and sources:
        # The engine starts MAP01 when a config names no map and waits forever if its WADs lack it
        # (freedoom1.cfg: an ExMy IWAD): start the first map they have instead, as for a bare WAD.
        names = {lump.name for _, wad in sources for lump in wad.lumps}
        first = next((m for _, wad in sources for m in wad.maps()), None)
        if check_map not in names and first is not None:
            chosen = check_map = first
    if sources:
        _check_map(sources, check_map, name)
    return Scenario(name=name, config=config, wad=wad_path, doom_map=chosen)
