"""The builtin generator: the hook contract, geometry a player can walk, and maps the real engine loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from golem.errors import GolemError
from golem.plugins import load_plugins
from golem.runtime.session import Session
from golem.scenarios import resolve_scenario
from golem.settings import GolemSettings
from golem.testing import assert_map_generator_contract
from golem_procgen.builtin import BuiltinGenerator
from golem_procgen.layout import CELL, MAX_STEP, SIZES, generate_layout
from golem_procgen.navigation import NavMap, sidecar_path
from golem_procgen.space import sample_configuration
from golem_procgen.themes import all_flats, all_textures


def test_registered_through_the_entry_point_and_meets_the_contract(tmp_path: Path) -> None:
    registry = load_plugins().registry
    builder = registry.get("map_generators", "builtin").obj
    config = sample_configuration(2, 3).as_dict()
    info = assert_map_generator_contract(builder, tmp_path, config, seed=3)
    assert info.map == "MAP01" and info.nav == sidecar_path(info.path) and info.config.suffix == ".cfg"
    assert "explorer" in registry.names("experts")


def test_every_texture_and_flat_is_in_the_shipped_iwad() -> None:
    import omg
    import vizdoom
    from omg.txdef import Textures

    iwad = omg.WAD(str(Path(vizdoom.__file__).parent / "freedoom2.wad"))
    assert all_flats() <= set(iwad.flats.keys())
    assert all_textures() <= set(Textures(iwad.txdefs).keys())


@pytest.mark.parametrize("phase", [1, 2, 3])
def test_layouts_are_walkable_from_start_to_exit(phase: int) -> None:
    for seed in range(12):
        config = sample_configuration(phase, seed)
        layout = generate_layout(config.params, seed)
        assert len(layout.rooms) == SIZES[config.params["size"]][2]
        nav = NavMap(_nav(layout))
        start = layout.start[:2]
        assert nav.reachable(start, nav.exit), (phase, seed, config.params)
        # Every step down the path to the exit is one the player can climb.
        path = nav.path(start, nav.cell_of(*nav.exit))
        for a, b in zip(path, path[1:]):
            if abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1:
                rise = layout.sectors[layout.grid[b[1]][b[0]]].floor - layout.sectors[layout.grid[a[1]][a[0]]].floor
                assert rise <= MAX_STEP
        if config.params["teleporters"] != "none":
            assert layout.teleports or len(layout.rooms) < 3


def _nav(layout) -> dict:
    from golem_procgen.navigation import layout_to_nav

    return json.loads(json.dumps(layout_to_nav(layout, "builtin", "MAP01")))


def test_parameters_shape_the_geometry() -> None:
    base = {
        "size": "regular",
        "theme": "tech",
        "outdoors": "none",
        "steepness": "none",
        "liquids": "none",
        "teleporters": "none",
        "mons": "none",
        "strength": "normal",
    }
    flat = generate_layout(base, 1)
    assert {s.floor for s in flat.sectors if s.kind == "room"} == {0}
    assert not [s for s in flat.sectors if s.kind in ("liquid", "teleport")]
    assert not [t for t in flat.things if t.type in (3004, 3001, 9, 3002, 3005, 69)]
    steep = generate_layout({**base, "steepness": "plenty"}, 1)
    assert len({s.floor for s in steep.sectors if s.kind == "room"}) > 2
    wet = generate_layout({**base, "liquids": "plenty"}, 1)
    assert [s for s in wet.sectors if s.kind == "liquid" and s.special in (5, 7, 16)]
    sky = generate_layout({**base, "outdoors": "plenty"}, 1)
    assert [s for s in sky.sectors if s.ceiling_flat == "F_SKY1"]
    tele = generate_layout({**base, "teleporters": "plenty"}, 1)
    pads = [s for s in tele.sectors if s.kind == "teleport"]
    assert len(pads) == 4 and {p.dest_tag for p in pads} == {p.tag for p in pads}
    few = generate_layout({**base, "mons": "sparse"}, 1)
    many = generate_layout({**base, "mons": "swarms", "strength": "harder"}, 1)
    count = lambda lay: sum(t.type in (3004, 3001, 9, 3002, 3005, 69) for t in lay.things)  # noqa: E731
    assert count(many) > 3 * max(count(few), 1)
    assert (
        generate_layout({**base, "size": "large"}, 1).width
        > flat.width
        > generate_layout({**base, "size": "micro"}, 1).width
    )


def test_same_seed_same_bytes_other_seed_other_map(tmp_path: Path) -> None:
    gen = BuiltinGenerator()
    config = sample_configuration(3, 8).as_dict()
    a = gen.build(config, 8, tmp_path / "a.wad").path.read_bytes()
    b = gen.build(config, 8, tmp_path / "b.wad").path.read_bytes()
    c = gen.build(config, 9, tmp_path / "c.wad").path.read_bytes()
    assert a == b != c


def test_bad_config_is_one_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(GolemError, match="unknown value 'gigantic' for map parameter size"):
        BuiltinGenerator().build({"size": "gigantic"}, 0, tmp_path / "x.wad")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.engine
def test_the_engine_loads_generated_maps_as_built(tmp_path: Path) -> None:
    gen = BuiltinGenerator()
    settings = GolemSettings()
    for phase, seed in ((1, 0), (2, 1), (3, 2)):
        config = sample_configuration(phase, seed)
        info = gen.build(config.as_dict(), seed, tmp_path / f"p{phase}.wad")
        layout = generate_layout(config.params, seed)
        assert resolve_scenario(str(info.config)).wad == info.path.resolve()

        class Sectors:
            def configure(self, game) -> None:
                game.set_sectors_info_enabled(True)
                game.set_objects_info_enabled(True)

        with Session(settings, scenario=str(info.config), configurers=[Sectors()]) as session:
            session.new_episode(seed)
            state = session.game.get_state()
            assert len(state.sectors) == len(layout.sectors)
            # The engine's sectors are the layout's, in order (the explorer reads door heights by index).
            assert [s.floor_height for s in state.sectors] == [float(s.floor) for s in layout.sectors]
            player = next(o for o in state.objects if o.name == "DoomPlayer")
            assert (player.position_x, player.position_y) == pytest.approx(layout.start[:2])
            assert session.game.get_episode_timeout() > 0


def test_cells_are_the_size_the_planner_assumes() -> None:
    assert CELL == 64


def test_a_map_without_a_player_start_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    from golem_procgen.layout import generate_layout
    from golem_procgen.maps import write_map
    from golem_procgen.wadwriter import write_wad

    layout = generate_layout(sample_configuration(1, 0).params, 0)
    data = bytearray(write_wad(layout))
    from golem.wad import read_wad_bytes

    things = next(lump for lump in read_wad_bytes(bytes(data)).lumps if lump.name == "THINGS")
    for k in range(things.offset, things.offset + things.size, 10):  # turn every player start into a stimpack
        if int.from_bytes(data[k + 6 : k + 8], "little") == 1:
            data[k + 6 : k + 8] = (2011).to_bytes(2, "little")
    with pytest.raises(GolemError, match="has no player start"):
        write_map(bytes(data), tmp_path / "m.wad", "MAP01", {}, layout.params, 3, "builtin", 0)
    with pytest.raises(GolemError, match="map MAP01 not found"):
        write_map(
            b"PWAD\x00\x00\x00\x00\x0c\x00\x00\x00", tmp_path / "m.wad", "MAP01", {}, layout.params, 3, "builtin", 0
        )
    assert list(tmp_path.iterdir()) == []


def test_generated_maps_are_built_once_and_a_corrupted_one_is_one_line(tmp_path: Path) -> None:
    from golem.runtime.generated import generated_maps

    registry = load_plugins().registry
    settings = GolemSettings.model_validate({"data": {"root": str(tmp_path)}})
    made = generated_maps(settings, registry, 2, 3, start_seed=5)
    assert [m.seed for m in made] == [5, 6, 7] and all(Path(m.scenario).suffix == ".cfg" for m in made)
    wad = Path(made[1].scenario).with_suffix(".wad")
    stamp = wad.stat().st_mtime_ns
    assert generated_maps(settings, registry, 2, 3, start_seed=5) == made and wad.stat().st_mtime_ns == stamp
    wad.write_bytes(b"PWAD\x10\x00\x00\x00\xff\xff\xff\x7f")
    with pytest.raises(GolemError, match=str(wad.name)):
        generated_maps(settings, registry, 2, 3, start_seed=5)
    with pytest.raises(GolemError, match="unknown map generator 'nope'"):
        generated_maps(settings, registry, 2, 1, generator="nope")
