"""Live play and the scoreboard on the real engine: the agent loop, `golem run play`, `golem run evaluate`.

Models are untrained (interface tests): built from a ModelSpec and saved as a
real checkpoint, where `golem run train` would put the active model.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from golem.diagnostics.evaluation import EvalPlan, evaluate, expert_for
from golem.errors import GolemError
from golem.learning.checkpoints import save_checkpoint
from golem.learning.modelspec import ModelSpec
from golem.plugins import load_plugins
from golem.runtime.agent import Agent, check_compatible, load_agent
from golem.runtime.random_policy import RandomPolicy
from golem.runtime.rollout import Observer, run_episode
from golem.runtime.session import Session
from golem.settings import BrainSettings, GolemSettings
from golem.workflows.recording import build_sensors
from tests.conftest import GOLEM, _clean_env
from tests.helpers import json_out, one_error_line

pytestmark = pytest.mark.engine

REGISTRY = load_plugins().registry


def _settings(profile: str = "basic", sensors: tuple[str, ...] = ("visual",)) -> GolemSettings:
    return GolemSettings.model_construct(brain=BrainSettings(profile=profile, sensors=list(sensors)))


def _spec(profile: str = "basic", sensors: tuple[str, ...] = ("visual",)) -> ModelSpec:
    return ModelSpec.from_settings(_settings(profile, sensors), REGISTRY)


def _save(path: Path, profile: str = "basic", sensors: tuple[str, ...] = ("visual",)) -> Path:
    torch.manual_seed(0)
    spec = _spec(profile, sensors)
    return save_checkpoint(path, REGISTRY.get("models", "cfc").obj(spec), spec.to_metadata())


def _active(tmp_path: Path) -> Path:
    return _save(tmp_path / "golem-data" / "models" / "basic" / "active.safetensors")


# --- the sense→act loop --------------------------------------------------------


def test_agent_steps_match_the_sequence_forward_and_reset_zeroes_hx():
    spec = _spec()
    model = REGISTRY.get("models", "cfc").obj(spec)
    agent = Agent(model, spec, threshold=0.5)
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, size=(5, 3, 64, 64), dtype=np.uint8)
    actions = [agent.decide({"frames": f}) for f in frames]
    assert all(len(a) == spec.n_actions and set(a) <= {0, 1} for a in actions)
    assert len(agent.decide_ns) == 5 and all(ns > 0 for ns in agent.decide_ns)
    with torch.no_grad():
        logits, _ = model({"visual": spec.sensor("visual").to_network(torch.from_numpy(frames)[None])})
    probs = torch.sigmoid(logits[0, -1]).numpy()
    np.testing.assert_allclose(agent.last_probs, probs, rtol=1e-4, atol=1e-5)  # hx carried tic to tic
    assert agent.hx is not None
    agent.reset()
    assert agent.hx is None
    first = agent.decide({"frames": frames[0]})
    assert first == actions[0]  # a reset agent decides like a fresh one


def test_mismatched_profile_or_sensors_are_one_line_errors():
    visual = build_sensors(_settings(), REGISTRY)
    profile = r"model was trained for profile fluid \(9 actions\) but the scenario session uses basic \(8\)"
    with pytest.raises(GolemError, match=profile):
        check_compatible(_spec("fluid"), "basic", _spec().action_names, visual)
    with pytest.raises(GolemError, match=r"model expects sensors visual, thermal but the session reads visual"):
        check_compatible(_spec(sensors=("visual", "thermal")), "basic", _spec().action_names, visual)


def test_run_episode_counts_and_resets_hx_on_death():
    settings = _settings()
    spec = _spec()
    agent = Agent(REGISTRY.get("models", "cfc").obj(spec), spec)
    seen: list[tuple[int, int, int]] = []

    class KillAtTic5(Observer):
        def before_tic(self, state):
            seen.append(state.screen_buffer.shape)
            if len(seen) == 5:
                session.game.send_game_command("kill")

    with Session(settings, build_sensors(settings, REGISTRY), scenario="defend_the_center") as session:
        agent.check_session(session)
        alive = run_episode(session, agent, 10_000, max_steps=12)
        assert (alive.tics, alive.dead, alive.deaths, alive.policy) == (12, False, 0, "model")
        assert agent.hx is not None and len(agent.decide_ns) == len(agent.sense_ns) == 12
        dead = run_episode(session, agent, 10_001, max_steps=50, observers=[KillAtTic5()])
        assert dead.dead and dead.deaths == 1 and dead.tics <= 7 and dead.health <= 0
        assert agent.hx is None  # zeroed on death
        assert seen[0] == (120, 160, 3)  # the RGB screen, not the 64×64 input
        rand = run_episode(session, RandomPolicy(session.action_names, seed=1), 10_000, max_steps=12)
        assert rand.policy == "random" and rand.tics == 12


def test_evaluate_without_an_expert_notes_it(tmp_path: Path):
    path = _save(tmp_path / "m.safetensors")
    assert expert_for(REGISTRY, "rocket_basic") is None and expert_for(REGISTRY, "basic") == "basic"
    plan = EvalPlan(model_path=path, scenario="rocket_basic", episodes=1, max_steps=10)
    board = evaluate(_settings(), REGISTRY, plan)
    summary = board.summary()
    assert set(summary["policies"]) == {"model", "random"}
    assert summary["share"] == {"normalised": None, "raw": None}
    assert "no scripted expert" in summary["note"]
    assert summary["seeds"] == [10_000]


# --- the CLI -----------------------------------------------------------------


def test_play_prints_episodes_and_writes_video(golem_cli, tmp_path: Path):
    _active(tmp_path)
    proc = golem_cli(["run", "play", "--episodes", "2", "--max-steps", "15", "--video", "out.gif"], check=True)
    assert "episode 1" in proc.stdout and "episode 2" in proc.stdout and "return" in proc.stdout
    survived = [int(m) for m in re.findall(r"survived (\d+) tics", proc.stdout)]
    assert len(survived) == 2 and all(1 <= t <= 15 for t in survived)
    assert f"video: {sum(survived)} frames" in proc.stdout  # one frame per tic of both episodes
    from PIL import Image

    with Image.open(tmp_path / "out.gif") as gif:
        assert gif.size == (160, 120) and gif.n_frames >= 2
    report = json_out(golem_cli(["run", "play", "--max-steps", "10", "--seed", "7", "--json"], check=True))
    assert report["scenario"] == "basic" and report["threshold"] == 0.5 and report["decisions"] == "threshold"
    (episode,) = report["episodes"]
    assert episode["seed"] == 7 and episode["tics"] <= 10
    assert {"kills", "health", "dead", "episode_return"} <= set(episode)
    assert report["latency_ms"]["total_p99_ms"] > 0


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="needs xvfb-run (apt-get install xvfb)")
def test_play_in_a_window_runs_at_the_engines_real_time_clock(tmp_path: Path):
    _active(tmp_path)
    proc = subprocess.run(
        ["xvfb-run", "-a", str(GOLEM), "run", "play", "--window", "--max-steps", "35", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_clean_env(),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json_out(proc)
    assert report["episodes"][0]["tics"] == 35
    assert report["seconds"] >= 0.8  # 35 tics at 35 Hz: paced by the engine, not by sleeps


def test_evaluate_scoreboard_in_workers(golem_cli, tmp_path: Path):
    _active(tmp_path)
    proc = golem_cli(
        [
            "run",
            "evaluate",
            "--episodes",
            "2",
            "--workers",
            "2",
            "--max-steps",
            "40",
            "--out",
            "r.json",
            "--out",
            "r.csv",
            "--json",
        ],
        check=True,
    )
    summary = json_out(proc)
    assert summary["scenario"] == "basic" and summary["expert"] == "basic"
    assert summary["seeds"] == [10_000, 10_001]
    assert set(summary["policies"]) == {"model", "random", "expert"}
    for stats in summary["policies"].values():
        assert stats["episodes"] == 2 and set(stats["return"]) == {"mean", "std"}
    assert summary["policies"]["expert"]["return"]["mean"] > 50  # the basic expert kills the monster
    assert set(summary["share"]) == {"normalised", "raw"}
    detail = json.loads((tmp_path / "r.json").read_text())["episodes_detail"]
    assert sorted((d["policy"], d["seed"]) for d in detail) == sorted(
        (p, s) for p in ("model", "random", "expert") for s in (10_000, 10_001)
    )
    with (tmp_path / "r.csv").open() as fh:
        assert len(list(csv.DictReader(fh))) == 6
    table = golem_cli(["run", "evaluate", "--episodes", "1", "--max-steps", "20"], check=True)
    assert "expert (basic)" in table.stdout and "normalised" in table.stdout


def test_bad_inputs_are_one_line_errors(golem_cli, tmp_path: Path):
    assert "golem run train" in one_error_line(golem_cli(["run", "play"]))
    fluid = _save(tmp_path / "fluid.safetensors", profile="fluid")
    # The model's own profile and sensors are taken from its checkpoint; asking for others is a real mismatch.
    line = one_error_line(golem_cli(["run", "play", "--model", str(fluid), "--set", "brain.profile=basic"]))
    assert "model was trained for profile fluid (9 actions) but the scenario session uses basic (8)" in line
    thermal = _save(tmp_path / "thermal.safetensors", sensors=("visual", "thermal"))
    line = one_error_line(
        golem_cli(["run", "evaluate", "--model", str(thermal), "--episodes", "1", "--plugin", "no:thermal"])
    )
    assert "model expects sensors visual, thermal but the session reads visual" in line
    active = _active(tmp_path)
    assert "unknown scenario 'no_such_map'" in one_error_line(golem_cli(["run", "play", "-s", "no_such_map"]))
    blob = active.read_bytes()
    active.write_bytes(blob[: len(blob) // 2])
    assert "corrupt" in one_error_line(golem_cli(["run", "play"]))
    assert "DISPLAY" in one_error_line(golem_cli(["run", "play", "--window"], env={"DISPLAY": ""}))


def test_play_and_evaluate_take_the_models_sensors_profile_and_sensor_settings(golem_cli, tmp_path: Path):
    # A model trained on the fluid profile with thermal and audio at 11,025 Hz plays with no flags at all.
    settings = GolemSettings.model_construct(
        brain=BrainSettings.model_validate(
            {"profile": "fluid", "sensors": ["visual", "thermal", "audio"], "dsp": {"sample_rate": 11025}}
        )
    )
    torch.manual_seed(0)
    spec = ModelSpec.from_settings(settings, REGISTRY)
    assert spec.sensor_settings["brain.dsp"]["sample_rate"] == 11025
    path = save_checkpoint(tmp_path / "rich.safetensors", REGISTRY.get("models", "cfc").obj(spec), spec.to_metadata())
    out = json_out(golem_cli(["run", "play", "--model", str(path), "--max-steps", "5", "--json"], check=True))
    assert len(out["episodes"]) == 1 and out["episodes"][0]["tics"] == 5
    golem_cli(["run", "evaluate", "--model", str(path), "--episodes", "1", "--max-steps", "5"], check=True)
    # a sample rate given that the model was not trained with is a real mismatch: one line
    line = one_error_line(golem_cli(["run", "play", "--model", str(path), "--set", "brain.dsp.sample_rate=22050"]))
    assert "audio" in line and "(2, 2520)" in line and "(2, 1260)" in line


def test_evaluate_on_my_way_home_shows_how_often_the_goal_was_reached(golem_cli, tmp_path: Path):
    _active(tmp_path)
    out = golem_cli(
        ["run", "evaluate", "--scenario", "my_way_home", "--episodes", "1", "--max-steps", "400"], check=True
    )
    assert "goal reached" in out.stdout  # the expert walks to the exit
    summary = json_out(
        golem_cli(
            ["run", "evaluate", "--scenario", "my_way_home", "--episodes", "1", "--max-steps", "400", "--json"],
            check=True,
        )
    )
    assert summary["policies"]["expert"]["goal_rate"] == 1.0


def test_gif_timing_stays_real_for_identical_frames(tmp_path: Path):
    from PIL import Image

    from golem.runtime.video import VideoWriter, gif_durations

    assert sum(gif_durations(35)) == 1000 and set(gif_durations(35)) <= {20, 30}
    writer = VideoWriter(tmp_path / "still.gif")
    for _ in range(70):  # two seconds of a screen that does not change, then one other frame
        writer.add(np.zeros((120, 160, 3), np.uint8))
    writer.add(np.full((120, 160, 3), 255, np.uint8))
    writer.close()
    gif, total = Image.open(tmp_path / "still.gif"), 0
    for index in range(gif.n_frames):
        gif.seek(index)
        total += gif.info["duration"]
    assert abs(total - 71 * 1000 / 35) <= 10  # real time, though Pillow stores the still part as one frame


def test_a_sampling_checkpoint_draws_its_buttons_seeded_by_the_episode(golem_cli, tmp_path: Path):
    torch.manual_seed(0)
    spec = _spec()
    net = REGISTRY.get("models", "cfc").obj(spec)
    sampling = save_checkpoint(tmp_path / "s.safetensors", net, spec.to_metadata(), {"decisions": "sample"})
    thresholded = save_checkpoint(tmp_path / "t.safetensors", net, spec.to_metadata())
    assert load_agent(sampling, REGISTRY).sample and not load_agent(thresholded, REGISTRY).sample

    class Logged:
        def __init__(self, agent: Agent) -> None:
            self.agent, self.buttons, self.probs = agent, [], []

        def reset(self, game) -> None:
            self.agent.reset(game)

        def act(self, game, state) -> list[int]:
            pressed = self.agent.act(game, state)
            self.buttons.append(pressed)
            self.probs.append(self.agent.last_probs.copy())
            return pressed

    settings = _settings()
    played = {}
    with Session(settings, build_sensors(settings, REGISTRY), scenario="defend_the_center") as session:
        for name, path, seed in (("a", sampling, 10_000), ("b", sampling, 10_000), ("c", sampling, 10_001)):
            policy = Logged(load_agent(path, REGISTRY))
            policy.agent.check_session(session)
            run_episode(session, policy, seed, max_steps=120)
            played[name] = policy
        fixed = Logged(load_agent(thresholded, REGISTRY))
        fixed.agent.check_session(session)
        run_episode(session, fixed, 10_000, max_steps=120)
    assert played["a"].buttons == played["b"].buttons  # the same episode replays the same draws
    assert played["a"].buttons != played["c"].buttons
    probs, pressed = np.array(played["a"].probs), np.array(played["a"].buttons)
    assert ((probs > 0.05) & (probs < 0.95)).any(axis=0).all()  # an untrained head is undecided: draws vary
    assert np.abs(pressed.mean(0) - probs.mean(0)).max() < 0.2  # pressed about as often as its probability
    assert ((np.array(fixed.probs) > 0.5) == np.array(fixed.buttons)).all()  # the other presses at its threshold
    line = one_error_line(golem_cli(["run", "tune", "--model", str(sampling), "--episodes", "2"]))
    assert "draws its buttons from their probabilities" in line


class Episode:
    """What a sampling agent's reset reads of the engine: the episode's seed and tic."""

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def get_seed(self) -> int:
        return self.seed

    def get_episode_time(self) -> int:
        return 0


def test_a_temperature_sharpens_or_flattens_the_draws_and_only_the_draws(tmp_path: Path):
    torch.manual_seed(0)
    spec = _spec()
    net = REGISTRY.get("models", "cfc").obj(spec)
    with torch.no_grad():  # a decided head, each button far from a coin: p ≈ 0.12 or 0.88
        net.head.bias.copy_(torch.tensor([2.0, -2.0] * spec.n_actions)[: spec.n_actions])
    path = save_checkpoint(tmp_path / "m.safetensors", net, spec.to_metadata())
    observation = {"frames": np.zeros((3, 64, 64), np.uint8)}

    def draws(temperature: float, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
        agent = load_agent(path, REGISTRY, sample=True, temperature=temperature)
        pressed, probs = [], []
        for episode in range(n):
            agent.reset(Episode(episode))  # the same first decision in n episodes, each drawn by its seed
            pressed.append(agent.decide(observation))
            probs.append(agent.last_probs.copy())
        return np.array(pressed), np.array(probs)

    base, probs = draws(1.0)
    assert np.allclose(probs, probs[0]) and (np.abs(probs[0] - 0.5) > 0.3).all()
    cold, cold_probs = draws(1e-6)
    hot, _ = draws(100.0)
    assert np.allclose(cold_probs, probs)  # last_probs stay the model's own
    assert (cold == (probs[0] > 0.5)).all()  # a cold draw is the likelier value, every time
    assert np.abs(hot.mean(0) - 0.5).max() < 0.1  # a hot one a coin
    assert np.abs(base.mean(0) - probs[0]).max() < 0.1  # at 1 the model's own probabilities, far from a coin
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(GolemError, match="temperature must be a positive number"):
            load_agent(path, REGISTRY, sample=True, temperature=bad)
    with pytest.raises(GolemError, match="play it with --decisions sample"):
        load_agent(path, REGISTRY, temperature=0.5)  # a thresholded checkpoint draws nothing to sharpen


def test_decisions_overrides_how_the_checkpoint_chooses_its_buttons(golem_cli, tmp_path: Path):
    _active(tmp_path)  # an untrained, thresholded checkpoint: its probabilities are near 0.5, so draws vary
    judge = ["run", "evaluate", "-n", "3", "--max-steps", "60", "--no-baselines", "--json"]

    def played(*extra: str) -> tuple[str, list[float]]:
        summary = json_out(golem_cli([*judge, *extra, "--out", "r.json"], check=True))
        detail = json.loads((tmp_path / "r.json").read_text())["episodes_detail"]
        return summary["decisions"], [d["episode_return"] for d in sorted(detail, key=lambda d: d["seed"])]

    as_saved, thresholded = played()
    assert as_saved == "threshold"
    assert played("--decisions", "threshold") == ("threshold", thresholded)
    mode, drawn = played("--decisions", "sample")
    assert mode == "sample" and drawn != thresholded  # the buttons were drawn, not thresholded
    assert played("--decisions", "sample") == ("sample", drawn)  # seeded by the episode: the same again
    assert played("--decisions", "sample", "--temperature", "1e-6") == ("sample", thresholded)  # cold: the mode
    assert json.loads((tmp_path / "r.json").read_text())["temperature"] == 1e-6
    refused = {"0.5": "play it with --decisions sample", "0": "must be a positive number"}
    for value, said in refused.items():
        assert said in one_error_line(golem_cli([*judge, "--temperature", value]))
    play = ["run", "play", "--max-steps", "20", "--decisions", "sample", "--json"]
    shown = json_out(golem_cli([*play, "--temperature", "0.5"], check=True))
    assert shown["decisions"] == "sample" and shown["temperature"] == 0.5
    assert "play it with --decisions sample" in one_error_line(golem_cli(["run", "play", "--temperature", "2"]))
    unknown = golem_cli(["run", "play", "--decisions", "argmax"])
    assert unknown.returncode == 2 and "'argmax' is not one of" in " ".join(unknown.stderr.split())
