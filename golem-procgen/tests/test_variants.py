"""Scenario variants (``vary``): each modification seeded and deterministic, maps the engine plays, experts that still
find their targets, a view height that really moves the eyes, and one-line refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from golem.errors import GolemError
from golem.experts import base_actor_name
from golem.plugins import load_plugins
from golem.scenarios import read_config, resolve_scenario, scenarios_dir
from golem.testing import assert_map_generator_contract
from golem.wad import check_map_file, read_lump, read_wad
from golem_procgen.variants import MODIFICATIONS, VaryGenerator, build_variant, normalise_modifications, variant_stem
from golem_procgen.variants.decorate import catalogue, flatten_states
from golem_procgen.variants.looks import MONSTER_DONORS, MONSTER_FRAMES, monster_sprite, restate
from golem_procgen.variants.obstacles import PLAYER_RADIUS, player_start, walk_grid
from golem_procgen.variants.udmf import parse_textmap, write_textmap

GOLEM = Path(sys.executable).with_name("golem")
#: A scenario each modification changes something in.
SCENARIO_OF = {
    "textures": "take_cover",
    "monsters": "defend_the_center",
    "items": "health_gathering_supreme",
    "light": "take_cover",
    "view_height": "basic",
    "obstacles": "my_way_home",
}


def textmap_of(wad: Path) -> str:
    lump = next(lump for lump in read_wad(wad).lumps if lump.name == "TEXTMAP")
    return read_lump(wad, lump).decode("latin-1")


def lump_text(wad: Path, name: str) -> str:
    return "".join(read_lump(wad, lump).decode("latin-1") for lump in read_wad(wad).lumps if lump.name == name)


def golem(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLEM_")}
    return subprocess.run([str(GOLEM), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout)


# --- pure logic ---------------------------------------------------------------


def test_udmf_round_trip_keeps_every_value() -> None:
    for name in ("take_cover", "defend_the_center", "my_way_home"):
        text = textmap_of(scenarios_dir() / f"{name}.wad")
        parsed = parse_textmap(text)
        assert parsed.namespace == "zdoom"
        assert parse_textmap(write_textmap(parsed)) == parsed
        assert write_textmap(parse_textmap(write_textmap(parsed))) == write_textmap(parsed)
        assert len(parsed.of_kind("vertex")) == text.count("vertex")
    edited = parse_textmap('namespace = "zdoom"; // comment\nsidedef /* c */ { sector = 0; texturemiddle = "A\\"B"; }')
    side = edited.of_kind("sidedef")[0]
    assert side.text("texturemiddle") == 'A"B' and side.number("sector") == 0.0
    side.set_text("texturemiddle", "STONE2")
    assert parse_textmap(write_textmap(edited)).of_kind("sidedef")[0].text("texturemiddle") == "STONE2"
    with pytest.raises(GolemError, match=r"TEXTMAP line 2: expected"):
        parse_textmap('namespace = "zdoom";\nthing { x = ; }')


def test_base_actor_name_strips_only_the_variant_suffix() -> None:
    assert base_actor_name("DoomImp__golem7") == "DoomImp"
    assert base_actor_name("MarineChainsawVzd__golem123__golem4") == "MarineChainsawVzd"
    for plain in ("DoomImp", "Demon", "Foo__golem", "Foo__golemX", "__golem7x"):
        assert base_actor_name(plain) == plain


def test_modifications_are_named_once_in_their_own_order() -> None:
    assert normalise_modifications(["light", "textures", "light"]) == ("textures", "light")
    assert normalise_modifications("view-height+monsters") == ("monsters", "view_height")
    assert variant_stem("take_cover", ["light", "textures"], 7) == "take_cover-textures+light-seed000007"
    assert set(MODIFICATIONS) == {"textures", "monsters", "items", "light", "view_height", "obstacles"}
    for bad in (["textures", "sky"], []):
        with pytest.raises(GolemError, match="modification") as err:
            normalise_modifications(bad)
        assert "\n" not in str(err.value)


def test_restated_monsters_use_frames_freedoom_has() -> None:
    """Every donor sprite drawn for every monster class of the shipped scenarios names frames freedoom2 has, and a
    subclass's inherited Goto (MarineChainsaw: Melee → Super::Melee.Chainsaw) still leads to the chainsaw."""
    import omg

    iwad = omg.WAD(str(scenarios_dir().parent / "freedoom2.wad"))
    frames: dict[str, set[str]] = {}
    for lump in iwad.sprites.keys():
        frames.setdefault(lump[:4], set()).update({lump[4]} | ({lump[6]} if len(lump) > 6 else set()))
    own = read_lump(
        scenarios_dir() / "defend_the_center.wad", read_wad(scenarios_dir() / "defend_the_center.wad").lumps[0]
    )
    cat = catalogue().with_decorate(own.decode("latin-1"))
    for original in ("DoomImp", "Demon", "MarineChainsawVzd", "Cacodemon", "Zombieman", "ShotgunGuy", "ChaingunGuy"):
        sprite = monster_sprite(cat, original)
        assert sprite in MONSTER_FRAMES, original
        for donor in MONSTER_DONORS:
            text = restate(flatten_states(cat, original), sprite, donor)
            used = {line.split()[1] for line in text.splitlines() if line.split()[0] == donor}
            assert used and set("".join(used)) <= frames[donor], (original, donor)
            assert sprite not in text.split() or sprite == donor
    marine = "\n".join(labels[0] + ": " + repr(seg.items) for labels, seg in flatten_states(cat, "MarineChainsawVzd"))
    assert "Melee: (Flow(kind='goto', target='Golem_L0S5'),)" in marine  # ScriptedMarine's 6th: Melee.Chainsaw


# --- building -----------------------------------------------------------------


@pytest.mark.parametrize("knob", list(MODIFICATIONS))
def test_each_modification_is_deterministic_and_seeded(knob: str, tmp_path: Path) -> None:
    scenario = SCENARIO_OF[knob]
    a = build_variant(scenario, [knob], 11, tmp_path / "a.wad")
    b = build_variant(scenario, [knob], 11, tmp_path / "b.wad")
    c = build_variant(scenario, [knob], 12, tmp_path / "c.wad")
    assert a.path.read_bytes() == b.path.read_bytes()
    assert a.config.read_text().replace("a.wad", "b.wad") == b.config.read_text()
    assert a.path.read_bytes() != c.path.read_bytes()
    assert a.details[knob] and a.details == b.details and a.details != c.details
    shipped = scenarios_dir() / f"{scenario}.wad"
    assert a.path.read_bytes() != shipped.read_bytes()
    # Golem's checks accept it, and the config plays the new WAD with everything else the scenario's.
    check_map_file(a.path, a.map)
    resolved = resolve_scenario(str(a.config))
    assert resolved.wad == a.path.resolve() and resolved.config == a.config.resolve()
    mine = {(e.key, e.value) for e in read_config(a.config)}
    theirs = {(e.key, e.value) for e in read_config(scenarios_dir() / f"{scenario}.cfg")}
    assert mine - theirs == {("doom_scenario_path", "a.wad")}
    assert theirs - mine == {("doom_scenario_path", f"{scenario}.wad")}


def test_bytes_do_not_depend_on_the_process(tmp_path: Path) -> None:
    """Another process with another string-hash seed builds the same bytes (no set or dict order leaks out)."""
    here = build_variant("defend_the_center", list(MODIFICATIONS), 9, tmp_path / "here.wad")
    code = (
        "import sys; from pathlib import Path; from golem_procgen.variants import build_variant, MODIFICATIONS; "
        "build_variant('defend_the_center', list(MODIFICATIONS), 9, Path(sys.argv[1]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "there.wad")], check=True, env=env, timeout=120)
    assert here.path.read_bytes() == (tmp_path / "there.wad").read_bytes()
    assert here.config.read_text().replace("here.wad", "there.wad") == (tmp_path / "there.cfg").read_text()


def test_a_knob_draws_the_same_whatever_else_is_asked(tmp_path: Path) -> None:
    alone = build_variant("defend_the_center", ["textures"], 3, tmp_path / "a.wad")
    mixed = build_variant("defend_the_center", ["light", "textures", "monsters", "obstacles"], 3, tmp_path / "b.wad")
    assert alone.details["textures"] == mixed.details["textures"]
    assert mixed.modifications == ("textures", "monsters", "light", "obstacles")
    decorate = lump_text(mixed.path, "DECORATE")
    assert "ACTOR MarineChainsawVzd: MarineChainsaw" in decorate  # the map's own classes kept, ours after
    assert "actor MarineChainsawVzd__golem3 : MarineChainsawVzd replaces MarineChainsawVzd" in decorate
    assert "actor Demon__golem3 : Demon replaces Demon" in decorate


def test_textures_keep_mapping_sky_and_sizes(tmp_path: Path) -> None:
    from golem_procgen.variants.textures import iwad_art

    info = build_variant("my_way_home", ["textures"], 5, tmp_path / "v.wad")
    walls, flats = info.details["textures"]["walls"], info.details["textures"]["flats"]
    art = iwad_art(scenarios_dir().parent / "freedoom2.wad")
    assert walls and all(art.sizes[new][0] in (64, 128, 256) for new in walls.values())
    assert len(set(walls.values())) == len(walls) and len(set(flats.values())) == len(flats)
    before, after = parse_textmap(textmap_of(scenarios_dir() / "my_way_home.wad")), parse_textmap(textmap_of(info.path))
    for old, new in zip(before.of_kind("sidedef"), after.of_kind("sidedef")):
        for key in ("texturetop", "texturemiddle", "texturebottom"):
            name = (old.text(key) or "-").upper()
            assert (new.text(key) or "-").upper() == walls.get(name, name)
    assert [s.fields for s in before.of_kind("vertex")] == [s.fields for s in after.of_kind("vertex")]


def test_obstacles_cut_nothing_off(tmp_path: Path) -> None:
    """On my_way_home the start still reaches the goal armour; on defend_the_center every spot of the monsters'
    spawn ring (radius 735) is still reachable; no obstacle stands on a player start."""
    for scenario, seed in (("my_way_home", 4), ("defend_the_center", 9)):
        info = build_variant(scenario, ["obstacles"], seed, tmp_path / f"{scenario}.wad")
        placed = info.details["obstacles"]
        assert 2 <= len(placed) <= 4
        textmap = parse_textmap(textmap_of(info.path))
        grid = walk_grid(textmap)
        start = player_start(textmap)
        blocked = np.zeros_like(grid.free)
        for o in placed:
            assert max(abs(o["x"] - start[0]), abs(o["y"] - start[1])) > PLAYER_RADIUS + o["radius"] + 32
            blocked |= grid.box(o["x"], o["y"], PLAYER_RADIUS + o["radius"])
        before, after = grid.reachable(start), grid.reachable(start, blocked)
        assert not (before & ~blocked & ~after).any()
        if scenario == "my_way_home":
            goal = next(t for t in textmap.of_kind("thing") if int(t.number("type")) == 2018)
            assert after[grid.cell(goal.number("x"), goal.number("y"))]
        else:
            ring = [(735 * np.cos(a), 735 * np.sin(a)) for a in np.linspace(0, 2 * np.pi, 64, endpoint=False)]
            hits = [after[grid.cell(x, y)] or blocked[grid.cell(x, y)] for x, y in ring]
            assert all(hits)


def test_refusals_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    from golem_procgen.builtin import BuiltinGenerator
    from golem_procgen.space import sample_configuration

    out = tmp_path / "out"
    generator = VaryGenerator()
    cases: list[tuple[dict[str, Any], str]] = [
        ({"scenario": "take_cover", "modifications": ["textures", "fog"]}, "unknown modification 'fog'"),
        ({"scenario": "take_cover", "modifications": ["textures"], "theme": "x"}, "unknown configuration key"),
        ({"modifications": ["textures"]}, "needs a scenario"),
        ({"scenario": "nosuch", "modifications": ["light"]}, "unknown scenario 'nosuch'"),
        ({"scenario": "freedoom2", "modifications": ["light"]}, "no scenario WAD"),
        ({"scenario": "deadly_corridor", "modifications": ["obstacles"]}, "obstacles: cannot place"),
    ]
    classic = BuiltinGenerator().build(sample_configuration(1, 2).as_dict(), 2, tmp_path / "classic.wad")
    cases.append(({"scenario": str(classic.config), "modifications": ["light"]}, "classic format (no TEXTMAP)"))
    for config, message in cases:
        with pytest.raises(GolemError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
            generator.build(config, 1, out / "v.wad")
        assert "\n" not in str(err.value)
    assert not out.exists() or not any(out.iterdir())


def test_experts_play_variants_of_their_scenario(tmp_path: Path) -> None:
    from golem_experts import EXPERTS

    info = build_variant("take_cover", ["light"], 1, tmp_path / "v.wad")
    assert EXPERTS["take_cover"].plays(str(info.config)) and EXPERTS["take_cover"].plays(str(info.path))
    assert not EXPERTS["defend_the_center"].plays(str(info.config))


def test_registered_generator_meets_the_contract_and_samples_no_phase(tmp_path: Path) -> None:
    from golem.runtime.generated import map_generator
    from golem.settings import load_settings

    registry = load_plugins().registry
    builder = registry.get("map_generators", "vary").obj
    info = assert_map_generator_contract(
        builder, tmp_path, {"scenario": "take_cover", "modifications": ["light", "monsters"]}, seed=2
    )
    assert info.config == tmp_path / "first.cfg" and info.scenario == "take_cover" and info.seed == 2
    assert info.modifications == ("monsters", "light") and info.path == tmp_path / "first.wad"
    assert json.loads(json.dumps(info.as_dict()))["details"]["light"]["levels"]
    assert not hasattr(builder(None), "sample")
    with pytest.raises(GolemError, match="cannot sample curriculum phases"):
        map_generator(load_settings(environ={}).settings, registry, "vary")


# --- in the engine --------------------------------------------------------------


def _play(config: Path, tics: int, variables: list[Any] | None = None) -> tuple[list[Any], np.ndarray, set[str]]:
    """Play ``tics`` tics of ``config`` with no buttons pressed: (game variables at the first tic, the first frame
    [H, W, 3], object names seen)."""
    import vizdoom as vzd

    game = vzd.DoomGame()
    assert game.load_config(str(config))
    game.set_window_visible(False)
    game.set_sound_enabled(False)
    game.set_objects_info_enabled(True)
    game.set_screen_format(vzd.ScreenFormat.RGB24)
    game.set_screen_resolution(vzd.ScreenResolution.RES_160X120)
    game.set_seed(1)
    for v in variables or []:
        game.add_available_game_variable(v)
    names: set[str] = set()
    try:
        game.init()
        game.new_episode()
        state = game.get_state()
        values, frame = list(state.game_variables if state.game_variables is not None else []), state.screen_buffer
        for _ in range(tics):
            if game.is_episode_finished():
                break
            names |= {o.name for o in game.get_state().objects or []}
            game.make_action([0] * game.get_available_buttons_size())
    finally:
        game.close()
    return values, frame, names


@pytest.mark.engine
@pytest.mark.slow
def test_every_modification_loads_and_plays(tmp_path: Path) -> None:
    from golem.runtime.session import probe_untrusted

    for knob, scenario in SCENARIO_OF.items():
        info = build_variant(scenario, [knob], 21, tmp_path / f"{knob}.wad")
        _, _, names = _play(info.config, 70)
        assert names, knob
        if knob in ("monsters", "items"):
            replaced = {n for n in names if base_actor_name(n) != n}
            assert replaced and not set(info.details[knob]) & names, (knob, names)  # no original left
        if knob == "obstacles":
            assert {o["class"] for o in info.details["obstacles"]} <= names
    everything = build_variant("defend_the_center", list(MODIFICATIONS), 21, tmp_path / "all.wad")
    probe_untrusted(resolve_scenario(str(everything.config)), timeout=60)  # the crash probe Golem runs before play


@pytest.mark.engine
@pytest.mark.slow
def test_experts_find_their_targets_on_variants(tmp_path: Path) -> None:
    """The defend_the_center expert shoots the replaced monsters, the health_gathering expert sees the replaced
    medikits: both read objects by name, which only :func:`base_actor_name` maps back."""
    from golem.profiles import BASIC
    from golem.runtime.rollout import run_episode
    from golem.runtime.session import Session
    from golem.settings import load_settings
    from golem_experts import EXPERTS
    from golem_experts.health_gathering import ITEMS
    from golem_experts.privileged import objects_named

    settings = load_settings(environ={}).settings
    monsters = build_variant("defend_the_center", ["monsters"], 5, tmp_path / "dtc.wad")
    expert = EXPERTS["defend_the_center"](BASIC, settings)
    with Session(settings, scenario=str(monsters.config), configurers=[expert]) as session:
        result = run_episode(session, expert, 1, max_steps=350)
    assert result.kills >= 2, result

    items = build_variant("health_gathering", ["items"], 5, tmp_path / "hg.wad")
    seen: list[int] = []

    class Spy(EXPERTS["health_gathering"]):
        def act(self, game: Any, state: Any) -> list[int]:
            assert all(o.name == "Medikit__golem5" for o in state.objects if "Medikit" in o.name)
            seen.append(len(objects_named(state, *ITEMS)))
            return super().act(game, state)

    spy = Spy(BASIC, settings)
    with Session(settings, scenario=str(items.config), configurers=[spy]) as session:
        run_episode(session, spy, 1, max_steps=60)
    assert seen and min(seen) > 0


@pytest.mark.engine
def test_view_height_moves_the_eyes(tmp_path: Path) -> None:
    import vizdoom as vzd

    info = build_variant("basic", ["view_height"], 4, tmp_path / "v.wad")
    height = info.details["view_height"]["view_height"]
    assert height != 41 and f'playerclasses = "{info.details["view_height"]["player"]}"' in lump_text(
        info.path, "MAPINFO"
    )
    variables = [vzd.GameVariable.VIEW_HEIGHT, vzd.GameVariable.POSITION_Z, vzd.GameVariable.CAMERA_POSITION_Z]
    (*_, view, z, eye), frame, _ = _play(info.config, 1, variables)  # basic.cfg asks for AMMO2 first
    (*_, view0, z0, eye0), frame0, _ = _play(scenarios_dir() / "basic.cfg", 1, variables)
    assert (view0, eye0 - z0) == (41, 41)
    assert (view, eye - z) == (height, height)
    assert np.abs(frame.astype(int) - frame0.astype(int)).mean() > 1.0  # the view really moved


@pytest.mark.engine
@pytest.mark.slow
def test_command_writes_the_variant_and_its_first_frame(tmp_path: Path) -> None:
    bad = golem(["procgen", "vary", "nosuch", "--textures"], tmp_path)
    assert bad.returncode != 0
    lines = [line for line in bad.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: unknown scenario 'nosuch'"), bad.stderr
    proc = golem(
        ["procgen", "vary", "take_cover", "--seed", "3", "--textures", "--monsters", "-o", "out"]
        + ["--screenshot", "shot.png", "--json"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    stem = "take_cover-textures+monsters-seed000003"
    assert report["path"] == f"out/{stem}.wad" and report["config"] == f"out/{stem}.cfg"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        f"{stem}.cfg",
        f"{stem}.variant.json",
        f"{stem}.wad",
    ]
    sidecar = json.loads((tmp_path / "out" / f"{stem}.variant.json").read_text())
    assert sidecar["scenario"] == "take_cover" and sidecar["modifications"] == ["textures", "monsters"]
    assert report["details"]["monsters"]["DoomImp"]["actor"] == "DoomImp__golem3"
    from PIL import Image

    with Image.open(tmp_path / "shot.png") as shot:
        assert shot.mode == "RGB" and shot.size == (320, 240)  # take_cover.cfg's resolution
