"""`golem run match`: real engines over loopback, in lockstep, with bots, faults and a person at the keyboard.

Every match here is short (a few hundred tics); each test checks that no
engine process outlives the command.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from golem.data.store import TrajectoryStore
from golem.runtime.engine_guard import is_alive
from golem.runtime.netgame import DEFAULT_PORT, free_port
from tests.conftest import GOLEM, _clean_env
from tests.helpers import json_out
from tests.test_play_evaluate import _save
from tests.test_record_human import ATTACK_KEY, _wait_for_window, _xdotool, needs_x

pytestmark = pytest.mark.engine


#: Marks the engines this test process starts (inherited through every subprocess), so that the engines
#: of tests running beside these ones (pytest-xdist workers) are not counted as this match's.
#: (Not a ``GOLEM_`` variable: the tests' subprocess environments drop those.)
os.environ["MATCH_TEST_OWNER"] = str(os.getpid())
_MARK = f"MATCH_TEST_OWNER={os.getpid()}".encode()


def _engines() -> set[int]:
    """Pids of the live ``vizdoom`` engine processes started from this test process."""
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/comm") as fh:
                    if fh.read().strip() != "vizdoom" or not is_alive(int(name)):
                        continue
                with open(f"/proc/{name}/environ", "rb") as fh:
                    if _MARK in fh.read().split(b"\0"):
                        found.add(int(name))
            except OSError:
                pass
    return found


def _no_new_engines(before: set[int], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = _engines() - before
        if not left:
            return
        time.sleep(0.1)
    raise AssertionError(f"engine processes outlived the match: {sorted(_engines() - before)}")


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode != 0, proc.stdout
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert lines and lines[-1].startswith("error:"), proc.stderr
    return lines[-1]


def test_two_agents_head_to_head_in_lockstep_with_a_video(golem_cli, tmp_path: Path):
    a, b = _save(tmp_path / "alpha.safetensors"), _save(tmp_path / "beta.safetensors")
    before = _engines()
    proc = golem_cli(
        [
            "run",
            "match",
            "--agents",
            f"{a},{b}",
            "--tics",
            "200",
            "--port",
            str(free_port()),
            "--tic-log",
            "tics.json",
            "--video",
            "alpha.gif",
            "--json",
        ],
        check=True,
    )
    report = json_out(proc)
    names = [p["name"] for p in report["players"]]
    assert names == ["alpha", "beta"] and [p["kind"] for p in report["players"]] == ["model", "model"]
    assert sorted(p["slot"] for p in report["players"]) == [1, 2]
    # Exactly the tics asked for, by the engine's own counter: one barrier pass per tic, both engines on the
    # same tic at every pass, the counter running from its value at the episode's start.
    assert report["game_tics"] == 200
    assert report["lockstep"] == {"players": 2, "advances": 200, "max_tic_spread": 0, "steps": [1]}
    log = json.loads((tmp_path / "tics.json").read_text())
    ta, tb = np.asarray(log["alpha"]["tic"]), np.asarray(log["beta"]["tic"])
    assert len(ta) == len(tb) == 200 and (ta == tb).all() and (np.diff(ta) == 1).all()
    for p in report["players"]:
        if p["deaths"] == 0:  # alive throughout: it played every tic
            assert p["tics"] == 200
    for p in report["players"]:
        assert p["decisions"] > 0 and p["decision_p99_ms"] >= p["decision_p50_ms"] > 0
        assert not any(is_alive(pid) for pid in p["engine_pids"])
    gif = tmp_path / "alpha.gif"
    assert gif.is_file() and gif.read_bytes()[:6] in (b"GIF87a", b"GIF89a")
    _no_new_engines(before)


def test_agents_against_bots_recorded_into_the_store(golem_cli, tmp_path: Path):
    store = tmp_path / "mp-store"
    before = _engines()
    proc = golem_cli(
        [
            "run",
            "match",
            "--agents",
            "expert:deathmatch,random",
            "--bots",
            "2",
            "--tics",
            "300",
            "--port",
            str(free_port()),
            "--record",
            "--store",
            str(store),
            "--tag",
            "duel",
        ],
        check=True,
    )
    out = proc.stdout
    assert "deathmatch on cig" in out and "bot 3" in out and "bot 4" in out and "in lockstep" in out
    assert "recorded 2 episode(s)" in proc.stderr
    with TrajectoryStore.open(store) as opened:
        infos = list(opened.episodes())
        assert sorted(i.meta.source for i in infos) == ["agent", "expert"]
        for info in infos:
            assert {"multiplayer", "deathmatch", "duel"} <= set(info.meta.tags)
            assert info.meta.scenario == "cig" and info.meta.extra["player"] in ("deathmatch", "random")
            arrays = opened.read_episode(info.id)
            assert arrays["frames"].shape[1:] == (3, 64, 64) and len(arrays["actions"]) == info.meta.length > 100
    _no_new_engines(before)


def test_a_frag_limit_ends_the_match(golem_cli):
    proc = golem_cli(
        [
            "run",
            "match",
            "--agents",
            "expert:deathmatch",
            "--bots",
            "4",
            "--frags",
            "1",
            "--tics",
            "6000",
            "--port",
            str(free_port()),
            "--json",
        ],
        check=True,
    )
    report = json_out(proc)
    frags = [p["frags"] for p in report["players"]] + [b["frags"] for b in report["bots"]]
    assert max(frags) == 1  # the first frag, by the expert or a bot, ended it …
    assert 0 < report["game_tics"] < 6000  # … long before the time limit


def test_a_slow_player_slows_the_match_but_does_not_desynchronise_it(golem_cli, tmp_path: Path, plugin_site: Path):
    delay_ms = 6.0
    before = _engines()
    proc = golem_cli(
        [
            "run",
            "match",
            "--agents",
            "random,expert:sluggish",
            "--tics",
            "120",
            "--port",
            str(free_port()),
            "--set",
            f"experts.sluggish.delay_ms={delay_ms}",
            "--tic-log",
            "tics.json",
            "--json",
        ],
        env={"PYTHONPATH": str(plugin_site)},
        check=True,
    )
    report = json_out(proc)
    assert report["lockstep"]["max_tic_spread"] == 0 and report["lockstep"]["steps"] == [1]
    log = json.loads((tmp_path / "tics.json").read_text())
    slow, fast = log["sluggish"], log["random"]
    assert np.median(slow["decide_ns"]) / 1e6 >= delay_ms
    assert np.median(fast["decide_ns"]) / 1e6 < 1.0  # the fast player decides quickly…
    n = min(len(slow["wall_ns"]), len(fast["wall_ns"]))
    fast_step_ms = np.median(np.diff(np.asarray(fast["wall_ns"][:n]))) / 1e6
    assert fast_step_ms >= delay_ms * 0.9  # …but waits for the slow one: its engine steps no faster
    gap_ms = np.abs(np.asarray(slow["wall_ns"][:n]) - np.asarray(fast["wall_ns"][:n])) / 1e6
    assert np.median(gap_ms) < delay_ms  # both hand the engine each tic together
    _no_new_engines(before)


def _players_of(pid: int) -> list[int]:
    """The spawned player processes of the ``golem`` process ``pid``, oldest first."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmd = fh.read()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid and b"spawn_main" in cmd:
            out.append(int(name))
    return sorted(out)


def test_a_killed_player_ends_the_match_cleanly_with_no_engine_left(tmp_path: Path):
    before = _engines()
    proc = subprocess.Popen(
        [
            str(GOLEM),
            "run",
            "match",
            "--agents",
            "random,random",
            "--tics",
            "200000",
            "--port",
            str(free_port()),
            "--stall-timeout",
            "5",
        ],
        cwd=tmp_path,
        env=_clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        engines: set[int] = set()
        while time.monotonic() < deadline and len(engines) < 2:  # both engines up and playing
            engines = _engines() - before
            time.sleep(0.2)
        assert len(engines) == 2, "the match did not start"
        time.sleep(1.0)
        players = _players_of(proc.pid)
        assert len(players) == 2, players
        killed_at = time.monotonic()
        os.kill(players[1], signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
        ended_in = time.monotonic() - killed_at
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0
    line = [x for x in err.strip().splitlines() if x.strip()][-1]
    assert line.startswith("error: match stopped: player random-2 (random) killed by SIGKILL at tic "), err
    assert line.endswith("; random called off; no engine is left running"), line
    assert ended_in < 15.0
    assert not any(is_alive(p) for p in engines)
    _no_new_engines(before)


def test_a_player_joining_from_another_command_ends_on_the_hosts_time_limit(golem_cli, tmp_path: Path):
    port = str(free_port())
    before = _engines()
    host = subprocess.Popen(
        [
            str(GOLEM),
            "run",
            "match",
            "--agents",
            "random",
            "--host",
            "2",
            "--tics",
            "150",
            "--port",
            port,
            "--tic-log",
            "host.json",
            "--json",
        ],
        cwd=tmp_path,
        env=_clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The joining command gives no --tics: only the host's ``timelimit`` ends its episode.
        guest = golem_cli(
            ["run", "match", "--join", f"127.0.0.1:{port}", "--agents", "random", "--tic-log", "guest.json", "--json"],
            check=True,
        )
        h_out, h_err = host.communicate(timeout=120)
    finally:
        if host.poll() is None:
            host.kill()
    assert host.returncode == 0, h_err
    hosted, joined = json.loads(h_out), json_out(guest)
    # The host's count is the match's. A joining engine runs two tics in one call whenever it holds the host's
    # commands for both (0–37 times a match, measured on 8 matches), and the host has sent the command of the
    # tic after its last: when the map's time limit ends inside such a call (counter 150 → 152, 2 matches in 8)
    # the second tic is the one after the end, and a joiner that was not told the limit cannot tell it from a
    # last call that caught up two played tics (149 → 151, 1 in 8). So a joiner without --tics reports 150 or 151.
    assert hosted["game_tics"] == 150 and joined["game_tics"] in (150, 151)
    for player in hosted["players"]:
        if player["deaths"] == 0:  # alive throughout: it played every tic of the host's limit
            assert player["tics"] == 150
    for player in joined["players"]:
        if player["deaths"] == 0:
            assert player["tics"] == joined["game_tics"]
    _no_new_engines(before)


def test_episode_tics_count_from_the_first_tic_played() -> None:
    """Pure logic beside the test above: a player joined over the network can return from ``new_episode``
    before the game's first tic (its counter 0 where the host's reads 1); its episode still ran 150 tics."""
    from golem_match.lockstep import episode_tics

    host, guest = list(range(1, 151)), [1, 2, 3, *range(5, 149), 150]  # the guest skipped tics 4 and 149
    assert episode_tics(151, host, start_tic=1) == episode_tics(151, guest, start_tic=0) == 150
    assert episode_tics(151, [0, *guest], start_tic=0) == 150  # it passed the barrier before the game began
    assert episode_tics(0, host, start_tic=1) == 150  # a frag limit reset the counter: the tic after the last
    assert episode_tics(40, [], start_tic=1) == 39


def test_an_all_local_match_hosts_on_a_random_port_not_doom_s_own(golem_cli):
    well_known = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        try:
            well_known.bind(("", DEFAULT_PORT))
        except OSError:
            pass  # something else holds it already: the same situation
        before = _engines()
        proc = golem_cli(["run", "match", "--agents", "random,random", "--tics", "35", "--json"], check=True)
        assert json_out(proc)["game_tics"] == 35
        _no_new_engines(before)
        # Hosting for players who join from elsewhere keeps the port they expect.
        line = _one_line_error(golem_cli(["run", "match", "--agents", "random", "--host", "2"]))
        assert f"UDP port {DEFAULT_PORT} is in use" in line
    finally:
        well_known.close()


def test_joining_where_nobody_hosts_fails_within_the_timeout(golem_cli):
    before = _engines()
    started = time.monotonic()
    proc = golem_cli(
        ["run", "match", "--join", f"127.0.0.1:{free_port()}", "--agents", "random", "--wait", "4"], timeout=120
    )
    line = _one_line_error(proc)
    assert "nobody answered" in line and "4s" in line
    assert time.monotonic() - started < 60
    _no_new_engines(before)


def test_bad_match_inputs_are_one_line_errors(golem_cli, tmp_path: Path):
    taken = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    taken.bind(("", 0))
    try:
        port = taken.getsockname()[1]
        line = _one_line_error(golem_cli(["run", "match", "--agents", "random", "--port", str(port)]))
        assert f"UDP port {port} is in use" in line
    finally:
        taken.close()
    assert "not a checkpoint file" in _one_line_error(golem_cli(["run", "match", "--agents", "nothing.safetensors"]))
    assert "--join" in _one_line_error(golem_cli(["run", "match", "--human"]))
    model = _save(tmp_path / "m.safetensors")
    line = _one_line_error(golem_cli(["run", "play", "--model", str(model), "--scenario", "cig"]))
    assert "multiplayer map" in line and "golem run match" in line  # alone, cig.wad would crash the engine
    assert "fewer players" in _one_line_error(
        golem_cli(["run", "match", "--agents", "random,random", "--host", "1", "--port", str(free_port())])
    )
    assert "port" in _one_line_error(golem_cli(["run", "match", "--join", "127.0.0.1:99999", "--agents", "random"]))


@needs_x
def test_a_person_joins_a_hosted_match_from_a_window(xvfb: str, tmp_path: Path):
    port = str(free_port())
    before = _engines()
    env = _clean_env({"DISPLAY": xvfb})
    host = subprocess.Popen(
        [
            str(GOLEM),
            "run",
            "match",
            "--agents",
            "random",
            "--host",
            "2",
            "--realtime",
            "--tics",
            "175",
            "--port",
            port,
            "--json",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    person = subprocess.Popen(
        [
            str(GOLEM),
            "run",
            "match",
            "--join",
            f"127.0.0.1:{port}",
            "--human",
            "--record",
            "--store",
            "people",
            "--json",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        window = _wait_for_window(xvfb, person)
        assert _xdotool(xvfb, "windowfocus", "--sync", window).returncode == 0
        deadline = time.monotonic() + 60
        while person.poll() is None and time.monotonic() < deadline:
            _xdotool(xvfb, "keydown", ATTACK_KEY)
            time.sleep(0.15)
            _xdotool(xvfb, "keyup", ATTACK_KEY)
            time.sleep(0.1)
        p_out, p_err = person.communicate(timeout=60)
        h_out, h_err = host.communicate(timeout=60)
    finally:
        for proc in (host, person):
            if proc.poll() is None:
                proc.kill()
    assert person.returncode == 0, p_err
    assert host.returncode == 0, h_err
    hosted, joined = json.loads(h_out), json.loads(p_out)
    assert joined["players"][0]["kind"] == "human" and joined["players"][0]["slot"] == 2
    assert hosted["players"][0]["slot"] == 1
    # The host ran at the engine's real-time clock: 175 tics take about 5 s of wall time.
    assert hosted["seconds"] > 3.0
    with TrajectoryStore.open(tmp_path / "people") as opened:
        (info,) = list(opened.episodes())
        assert info.meta.source == "human"
        actions = opened.read_episode(info.id)["actions"]
        attack = info.meta.action_names.index("ATTACK")
        assert actions[:, attack].any(), "the person's key presses were not recorded"
    _no_new_engines(before)
