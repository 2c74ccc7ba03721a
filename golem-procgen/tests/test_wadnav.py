"""Navigation sidecars built from a WAD: a hand-made map's doors, locks, switch, lift and exit; the builtin
generator's teleporters; a shipped UDMF scenario; Oblige's maps; ``golem procgen nav``; the explorer on them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from golem_procgen.layout import CELL, Layout, SectorSpec, Thing, generate_layout
from golem_procgen.mapdata import Line, read_map
from golem_procgen.maps import write_map
from golem_procgen.navigation import NavMap, sidecar_path
from golem_procgen.oblige import oblige_available
from golem_procgen.specials import line_action
from golem_procgen.wadnav import nav_from_bytes, nav_from_wad
from golem_procgen.wadwriter import write_wad

SCENARIOS = Path(__import__("vizdoom").__file__).parent / "scenarios"
needs_oblige = pytest.mark.skipif(
    not oblige_available(),
    reason="Oblige is not built here: run `make oblige` (needs Debian's libfltk1.3-dev); `make test` tries it first",
)

# The hand-made map: a row of rooms, west to east —
#   A (start, blue key) | D1 blue door | B (switch on its north wall) | D2 door the switch opens | C | lift L | D | exit
ROOMS = [  # (first column, last column, sector)
    (1, 3, 0),
    (4, 4, 1),
    (5, 7, 2),
    (8, 8, 3),
    (9, 10, 4),
    (11, 11, 5),
    (12, 12, 6),
    (13, 13, 7),
]
D1, D2, LIFT, EXIT_PAD = 1, 3, 5, 7
SWITCH_TAG, LIFT_TAG = 5, 7


def _spec(kind: str, floor: int, ceiling: int) -> SectorSpec:
    return SectorSpec(kind, floor, ceiling, "FLOOR0_1", "CEIL1_1", "STARTAN2")


def _layout() -> Layout:
    sectors = [
        _spec("room", 0, 128),
        _spec("door", 0, 0),
        _spec("room", 0, 128),
        _spec("door", 0, 0),
        _spec("room", 0, 192),
        _spec("room", 64, 192),  # the lift, up
        _spec("room", 64, 192),
        _spec("exit", 64, 192),
    ]
    grid = [[-1] * 15 for _ in range(4)]
    for first, last, sector in ROOMS:
        for i in range(first, last + 1):
            grid[1][i] = grid[2][i] = sector
    return Layout(
        width=15,
        height=4,
        grid=grid,
        sectors=sectors,
        rooms=[],
        connections=[],
        things=[Thing(1.5 * CELL, 1.5 * CELL, 0, 5)],  # the blue key card, in A
        start=(2.5 * CELL, 2.0 * CELL, 0),
        exit_cell=(13, 1),
    )


def _handmade(path: Path, *, key: bool = True, start: bool = True) -> Path:
    """Write the hand-made map (with its scenario config) to ``path``: the builtin writer's lines, then the
    specials it does not write, edited in with omgifol."""
    import omg
    from omg.mapedit import MapEditor

    raw = path.with_suffix(".raw.wad")
    raw.write_bytes(write_wad(_layout()))
    wad = omg.WAD(str(raw))
    editor = MapEditor(wad.maps["MAP01"])
    side = editor.sidedefs
    for line in editor.linedefs:
        back = side[line.back].sector if line.back != 0xFFFF else -1
        front = side[line.front].sector
        if line.action == 1 and back == D1:
            line.action = 26  # DR door, blue key
        elif line.action == 1 and back == D2:
            line.action = 0  # opened by the switch only
        elif back == -1 and front == 2 and editor.vertexes[line.vx_a].y == 3 * CELL:
            line.action, line.tag = 103, SWITCH_TAG  # S1 open door, on B's north wall
        elif {front, back} == {4, LIFT}:
            if front == LIFT:  # used from C: C must be the front
                line.vx_a, line.vx_b, line.front, line.back = line.vx_b, line.vx_a, line.back, line.front
            line.action, line.tag = 62, LIFT_TAG  # SR lift
    editor.sectors[D2].tag = SWITCH_TAG
    editor.sectors[LIFT].tag = LIFT_TAG
    editor.things = [t for t in editor.things if (key or t.type != 5) and (start or t.type != 1)]
    wad.maps["MAP01"] = editor.to_lumps()
    wad.to_file(str(path))
    raw.unlink()
    return path


def test_doors_locks_a_switch_a_lift_and_the_exit_of_a_hand_made_map(tmp_path: Path) -> None:
    nav = nav_from_wad(_handmade(tmp_path / "hand.wad"))
    sectors = nav["sectors"]
    assert sectors[D1]["kind"] == "door" and sectors[D1]["lock"] == [["blue"]]
    assert sectors[D2]["kind"] == "door" and sectors[D2]["lock"] == [["s0"]]
    assert sectors[LIFT]["kind"] == "lift" and sectors[LIFT]["low"] == 0 and "lock" not in sectors[LIFT]
    assert [s["kind"] for s in sectors].count("room") == 5  # A, B, C, D and the exit pad
    (switch,) = nav["switches"]
    assert switch["id"] == "s0" and switch["trigger"] == "use" and switch["opens"] == [D2]
    x, y = switch["at"]
    assert 5 * CELL < x < 8 * CELL and 2 * CELL < y < 3 * CELL  # in B, in front of its north wall
    assert nav["keys"] == [{"x": 1.5 * CELL, "y": 1.5 * CELL, "key": "blue"}]
    assert nav["exit_trigger"] == "cross" and nav["solvable"]
    navmap = NavMap(nav)
    start = tuple(nav["start"][:2])
    assert navmap.progression(start) == ["blue", "s0"]
    assert not navmap.reachable(start, navmap.exit)
    assert not navmap.reachable(start, navmap.exit, frozenset({"blue"}))
    assert navmap.reachable(start, navmap.exit, frozenset({"blue", "s0"}))
    path = navmap.path(start, navmap.cell_of(*navmap.exit), tokens=frozenset({"blue", "s0"}))
    assert {navmap.kind(c) for c in path} >= {"door", "lift"}


def test_builtin_maps_read_back_with_their_teleporters_and_exit() -> None:
    params = {
        "size": "regular",
        "theme": "tech",
        "outdoors": "none",
        "steepness": "mixed",
        "liquids": "mixed",
        "teleporters": "plenty",
        "mons": "none",
        "strength": "normal",
    }
    layout = generate_layout(params, 3)
    nav = nav_from_bytes(write_wad(layout))
    assert nav["solvable"] and nav["exit_trigger"] == "cross"
    navmap = NavMap(nav)
    pads = {navmap.cell_of((a + 0.5) * CELL, (b + 0.5) * CELL) for pair in layout.teleports for a, b in pair}
    assert nav["jumps"] and all(navmap.cell_of(x, y) in pads for *_, x, y in nav["jumps"])
    exit_x, exit_y = (layout.exit_cell[0] + 0.5) * CELL, (layout.exit_cell[1] + 0.5) * CELL
    assert abs(nav["exit"][0] - exit_x) <= CELL and abs(nav["exit"][1] - exit_y) <= CELL
    doors = sum(1 for s in layout.sectors if s.kind == "door")
    assert sum(1 for s in nav["sectors"] if s["kind"] == "door") == doors


def test_a_shipped_udmf_scenario_reads_and_its_goal_is_reachable() -> None:
    wad = SCENARIOS / "my_way_home.wad"
    assert read_map(wad).format == "udmf"
    nav = nav_from_wad(wad)
    navmap = NavMap(nav)
    costs = navmap.costs_from(tuple(nav["start"][:2]))
    goals = [t for t in nav["things"] if t["type"] in (2018, 9001)]  # the armour and the spots a script moves it to
    assert len(goals) == 18 and all(navmap.within((t["x"], t["y"]), costs) for t in goals)
    assert nav["exits"] == [] and not nav["solvable"]


@pytest.mark.parametrize(
    ("special", "args", "activation", "kind", "lock", "trigger"),
    [
        (12, (0, 16, 150, 0, 0), "use", "door", None, "use"),
        (13, (4, 16, 150, 2, 0), "use", "door", "blue", "use"),
        (21, (9, 8, 0, 0, 0), "cross", "floor", None, "cross"),
        (62, (3, 32, 105, 0, 0), "use", "lift", None, "use"),
        (70, (11, 0, 0, 0, 0), "cross", "teleport", None, "cross"),
        (243, (0, 0, 0, 0, 0), "use", "exit", None, "use"),
    ],
)
def test_hexen_numbered_specials(special, args, activation, kind, lock, trigger) -> None:
    line = Line((0.0, 0.0), (64.0, 0.0), 0, 1, special=special, tag=args[0], args=args, activation=activation)
    action = line_action(line, "hexen")
    assert action is not None and (action.kind, action.lock, action.trigger) == (kind, lock, trigger)
    assert line_action(Line((0.0, 0.0), (64.0, 0.0), 0, 1, special=special, args=args), "hexen") is None


def _golem(app, args: list[str]) -> tuple[int, str]:
    """Run ``golem ARGS`` on ``app`` in this process: exit code and output (stdout and stderr)."""
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def test_nav_command_writes_a_sidecar_or_says_in_one_line_why_not(tmp_path: Path) -> None:
    from golem_cli.app import build_app

    app = build_app()
    good = _handmade(tmp_path / "good.wad")
    code, output = _golem(app, ["procgen", "nav", str(good)])
    assert code == 0, output
    assert "good.nav.json" in output and "2 doors, 1 lift, 1 key, 1 switch;" in output and "exit by cross" in output
    assert json.loads(sidecar_path(good).read_text())["solvable"]
    cases = [
        ([str(tmp_path / "missing.wad")], "WAD file not found"),
        ([str(good), "--map", "MAP02"], "map MAP02 not found"),
        ([str(_handmade(tmp_path / "nostart.wad", start=False))], "has no player start"),
        ([str(_handmade(tmp_path / "nokey.wad", key=False))], "no way from the player start to an exit"),
        ([str(SCENARIOS / "basic.wad"), "-o", str(tmp_path / "basic.nav.json")], "has no exit"),
    ]
    for args, text in cases:
        code, output = _golem(app, ["procgen", "nav", *args])
        errors = [line for line in output.splitlines() if line.strip()]
        assert code != 0 and len(errors) == 1 and errors[0].startswith("error:") and text in errors[0], output
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["good.nav.json"]  # nothing half-written


@pytest.mark.engine
def test_the_explorer_takes_the_key_the_switch_and_the_lift_to_the_exit(tmp_path: Path) -> None:
    from golem.profiles import PROFILES
    from golem.runtime.rollout import run_episode
    from golem.runtime.session import Session
    from golem.settings import GolemSettings
    from golem_procgen.explorer import ExplorerExpert

    wad = _handmade(tmp_path / "hand.wad")
    nav = nav_from_wad(wad)
    info = write_map(wad.read_bytes(), wad, "MAP01", nav, {"size": "micro"}, 3, "test", 0)
    assert ExplorerExpert.plays(str(info.config)) and ExplorerExpert.plays(str(info.path))
    settings = GolemSettings()
    expert = ExplorerExpert(PROFILES["basic"], settings)
    with Session(settings, scenario=str(info.config), configurers=[expert]) as session:
        assert session.game.is_labels_buffer_enabled()  # a map built from a WAD: what is on screen is in sight
        result = run_episode(session, expert, 0)
    assert result.exited, result
    assert expert._pressed == {"s0"}


@needs_oblige
@pytest.mark.engine
@pytest.mark.slow
def test_oblige_maps_get_a_sidecar_and_the_explorer_reaches_the_exit(tmp_path: Path) -> None:
    from golem.profiles import PROFILES
    from golem.runtime.rollout import run_episode
    from golem.runtime.session import Session
    from golem.settings import GolemSettings
    from golem_procgen.explorer import ExplorerExpert
    from golem_procgen.oblige import ObligeGenerator
    from golem_procgen.space import sample_configuration

    seed = 0  # phase 1, seed 0: a micro map without monsters (measured: the exit in about 500 tics)
    info = ObligeGenerator().build(sample_configuration(1, seed).as_dict(), seed, tmp_path / "o.wad")
    assert info.nav == sidecar_path(info.path)
    nav = json.loads(info.nav.read_text())
    assert nav["generator"] == "oblige" and nav["map_format"] == "doom" and nav["solvable"]
    assert nav["exit_trigger"] == "use"  # Oblige ends its levels with a switch
    settings = GolemSettings()
    expert = ExplorerExpert(PROFILES["basic"], settings)
    with Session(settings, scenario=str(info.config), configurers=[expert]) as session:
        result = run_episode(session, expert, seed)
    assert result.exited, result


class _Game:
    """What the explorer reads of a game between tics (its scenario, its seed, its health): a fake for this
    unit test of the explorer's choice of whom to fight, beside the real-engine tests above and below."""

    def __init__(self, config: Path) -> None:
        self.config, self.health = config, 100.0

    def get_doom_scenario_path(self) -> str:
        return str(self.config.with_suffix(".wad"))

    def get_seed(self) -> int:
        return 0

    def get_game_variable(self, variable) -> float:
        from vizdoom import GameVariable

        return self.health if variable == GameVariable.HEALTH else 0.0


def test_a_monster_that_hurts_the_player_from_where_it_stands_is_fought(tmp_path: Path) -> None:
    """On maps built from a WAD a far monster that has not moved is taken for asleep and left alone; one that
    hurts the player (shooting from a ledge, through a window: it never moves) must be fought once on screen,
    and one out of view looked for."""
    from types import SimpleNamespace

    from golem.profiles import PROFILES
    from golem.settings import GolemSettings
    from golem_procgen.explorer import QUIET, ExplorerExpert

    wad = _handmade(tmp_path / "hand.wad")
    info = write_map(wad.read_bytes(), wad, "MAP01", nav_from_wad(wad), {"size": "micro"}, 3, "test", 0)
    expert = ExplorerExpert(PROFILES["basic"], GolemSettings())
    game = _Game(info.config)
    expert.reset(game)
    assert expert.nav.per_move
    x, y = 2.5 * CELL, 2.0 * CELL  # the start, in room A
    zombie = SimpleNamespace(id=7, name="Zombieman", position_x=9.5 * CELL, position_y=2.0 * CELL)  # room C
    assert ((zombie.position_x - x) ** 2 + (zombie.position_y - y) ** 2) ** 0.5 > QUIET
    shown = SimpleNamespace(objects=[zombie], labels=[SimpleNamespace(object_id=7)])
    hidden = SimpleNamespace(objects=[zombie], labels=[])

    expert._tic = 1
    assert not expert.nav.line_of_sight((x, y), (zombie.position_x, zombie.position_y))  # two doors between
    assert expert._visible_monsters(hidden, x, y) == []
    assert expert._visible_monsters(shown, x, y) == []  # on screen, but far and still: asleep

    expert._tic = 2
    expert._hurt_by(hidden, x, y)  # hurt with the zombie out of view: the player turns to look for it
    assert expert._look is not None and expert._look[0] == zombie.id
    expert._ignored[zombie.id] = float("inf")  # it had been given up on
    expert._tic = 3
    expert._hurt_by(shown, x, y)  # hurt again, the zombie on screen: awake, and fought again
    assert [o.id for _, o in expert._visible_monsters(shown, x, y)] == [zombie.id]
    expert._tic = 4
    assert expert._visible_monsters(hidden, x, y) == []  # out of view again: the sidecar's sight alone says no
