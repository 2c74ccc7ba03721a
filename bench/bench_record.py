"""Benchmark recording throughput against the raw engine with the same buffers on.

Three loops play the same scenario with the same scripted expert and the same
seeds, in short runs interleaved round by round (the order rotating) so that
the load of a shared machine hits them alike:

* ``raw``: a ``vizdoom.DoomGame`` built by hand with the buffers the four
  sensors need (RGB24 160×120, depth, labels, audio at the DSP rate with
  ``+snd_efx 0``, objects info for the expert, the profile's buttons); each tic
  is only ``get_state()``, the expert's ``act`` and ``make_action``.
* ``inline``: the same session loop with the four sensors read in line before
  each action (how recording worked before extraction overlapped the engine).
* ``record``: the rollout loop (:func:`golem.runtime.rollout.run_episode`) with
  a :class:`golem.workflows.recording.Recorder` on the visual, depth, thermal and
  audio sensors (the arrays handed to the store), sensors read on its helper
  thread while the engine computes the next tic.

Then :func:`golem.workflows.recording.record` (engine start, episodes, LMDB writes: what
``golem run record`` runs) into a temporary store with ``workers=1`` and
``workers=2``, also interleaved. Besides frames/s (wall clock) each loop's
CPU time per tic is measured (this process, its calling thread, the engine
process), which a busy machine disturbs less; from it come the ratio to expect
with a core free for the sensor thread and the ratio with every core busy.
Medians go to ``bench/results/record.json`` and a rich table; the target is
``record / raw ≥ 0.9``.

Usage: ``python bench/bench_record.py [--tics 400] [--repeats 15] [--episodes 6] [--max-steps 400]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.table import Table

from golem.data.store import TrajectoryStore
from golem.logs import configure_logging
from golem.plugins import load_plugins
from golem.profiles import PROFILES
from golem.registry import Registry
from golem.runtime.rollout import run_episode
from golem.runtime.session import AUDIO_SAFE_ARGS, Session
from golem.settings import GolemSettings, section
from golem.workflows.recording import Recorder, RecordPlan, build_sensors, record
from golem_sensors_audio import DSPSettings

RESULTS = Path(__file__).resolve().parent / "results" / "record.json"
SENSORS = ["visual", "depth", "thermal", "audio"]
SCENARIO = "defend_the_center"  # long episodes, monsters (labels), shots (audio)
#: Buffer switches compared between the hand-built game and the session's.
BUFFER_FLAGS = (
    "get_screen_format",
    "get_screen_width",
    "get_screen_height",
    "is_depth_buffer_enabled",
    "is_labels_buffer_enabled",
    "is_audio_buffer_enabled",
    "get_audio_sampling_rate",
    "get_audio_buffer_size",
    "is_objects_info_enabled",
    "get_available_buttons",
)


def bench_settings() -> GolemSettings:
    """Default settings with all four sensors on and the benchmark's scenario."""
    settings = GolemSettings()
    settings.brain.sensors = list(SENSORS)
    settings.game.scenario = SCENARIO
    return settings


def raw_game(settings: GolemSettings, expert: Any) -> Any:
    """A headless ``DoomGame`` with the four sensors' buffers on, built without Golem's session."""
    import vizdoom as vzd

    game = vzd.DoomGame()
    game.load_config(os.path.join(vzd.scenarios_path, f"{SCENARIO}.cfg"))
    game.set_available_buttons([getattr(vzd.Button, name) for name in PROFILES[settings.brain.profile]])
    game.set_screen_format(vzd.ScreenFormat.RGB24)
    game.set_screen_resolution(vzd.ScreenResolution.RES_160X120)
    game.set_window_visible(False)
    game.set_mode(vzd.Mode.PLAYER)
    game.set_depth_buffer_enabled(True)
    game.set_labels_buffer_enabled(True)
    game.set_audio_buffer_enabled(True)
    game.set_audio_sampling_rate(getattr(vzd.SamplingRate, f"SR_{section(settings, DSPSettings).sample_rate}"))
    game.set_audio_buffer_size(4)
    for arg in AUDIO_SAFE_ARGS:
        game.add_game_args(arg)
    expert.configure(game)
    game.init()
    return game


def buffer_flags(game: Any) -> dict[str, str]:
    """The buffer settings of a game, as text (to check both loops read the same buffers)."""
    return {name: str(getattr(game, name)()) for name in BUFFER_FLAGS}


def run_raw(game: Any, expert: Any, tics: int, seed: int) -> int:
    """``tics`` tics of ``get_state`` + expert + ``make_action``, new episodes (seed, seed+1, …) as needed."""
    done = 0
    while done < tics:
        game.set_seed(seed)
        game.new_episode()
        expert.reset(game)
        seed += 1
        while done < tics and not game.is_episode_finished():
            state = game.get_state()
            game.make_action(expert.act(game, state))
            done += 1
    return done


def run_inline(session: Session, expert: Any, tics: int, seed: int) -> int:
    """Like :func:`run_raw` on a Golem session, every sensor read before acting (the serial loop)."""
    game, done = session.game, 0
    while done < tics:
        session.new_episode(seed)
        expert.reset(game)
        seed += 1
        steps: list[list[np.ndarray]] = []
        while done < tics and not game.is_episode_finished():
            state = game.get_state()
            steps.append([sensor.extract(state) for sensor in session.sensors])
            session.act(expert.act(game, state))
            done += 1
        [np.stack(column) for column in zip(*steps)]
    return done


def run_record(session: Session, expert: Any, tics: int, seed: int) -> int:
    """``tics`` tics through the rollout loop with a :class:`Recorder` (episodes cut at the remaining budget)."""
    done = 0
    while done < tics:
        recorder = Recorder(tics - done)
        run_episode(session, expert, seed, max_steps=tics - done, observers=[recorder])
        done += len(recorder.arrays["actions"])
        seed += 1
    return done


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(fn: Callable[[], int], engine_pid: int) -> dict[str, float]:
    """One call of ``fn`` (which returns the tics it played): tics/s and CPU µs per tic.

    ``cpu_us_python``: this process (all threads); ``cpu_us_main``: the calling thread
    alone (with the engine's, the serial path of a tic; sensor reading on the helper
    thread is off it); ``cpu_us_engine``: the engine process.
    """
    ours, main, engine = os.times(), time.thread_time(), cpu_seconds(engine_pid)
    started = time.perf_counter()
    tics = fn()
    seconds = time.perf_counter() - started
    after, main_after = os.times(), time.thread_time()
    return {
        "fps": tics / seconds,
        "cpu_us_python": (after.user + after.system - ours.user - ours.system) / tics * 1e6,
        "cpu_us_main": (main_after - main) / tics * 1e6,
        "cpu_us_engine": (cpu_seconds(engine_pid) - engine) / tics * 1e6,
    }


def loops(settings: GolemSettings, registry: Registry, tics: int, repeats: int, seed: int) -> dict[str, Any]:
    """Interleaved rounds of the raw, inline and record loops; one :func:`measure` per loop and round."""
    from golem.runtime.engine_guard import engine_children

    actions = PROFILES[settings.brain.profile]
    expert_cls = registry.get("experts", SCENARIO).obj
    raw_expert, expert = expert_cls(actions), expert_cls(actions)
    before = engine_children()
    game = raw_game(settings, raw_expert)
    raw_pid = min(engine_children() - before, default=0)
    try:
        with Session(settings, build_sensors(settings, registry), configurers=[expert]) as session:
            flags = buffer_flags(game), buffer_flags(session.game)
            if flags[0] != flags[1]:
                raise SystemExit(f"raw game and session differ in buffers: {flags}")
            session_pid = min(session.engine_pids, default=0)
            runs = {
                "raw": (raw_pid, lambda: run_raw(game, raw_expert, tics, seed)),
                "inline": (session_pid, lambda: run_inline(session, expert, tics, seed)),
                "record": (session_pid, lambda: run_record(session, expert, tics, seed)),
            }
            for _, run in runs.values():  # warm-up: caches, plans, first-episode costs
                run()
            names = list(runs)
            rounds: dict[str, list[dict[str, float]]] = {name: [] for name in names}
            for rep in range(repeats):
                for name in names[rep % 3 :] + names[: rep % 3]:
                    pid, run = runs[name]
                    rounds[name].append(measure(run, pid))
    finally:
        game.close()
    samples = {name: [r["fps"] for r in rs] for name, rs in rounds.items()}
    # means over the rounds: the engine's /proc counter ticks at 10 ms, too coarse for one run
    cpu = {
        name: {key: statistics.fmean(r[key] for r in rs) for key in ("cpu_us_python", "cpu_us_main", "cpu_us_engine")}
        for name, rs in rounds.items()
    }
    return {
        "buffers": flags[0],
        "tics_per_run": tics,
        "samples": samples,
        "cpu_us_per_tic": cpu,
        "cpu_bound_ratio": cpu_ratios(cpu, ("cpu_us_python", "cpu_us_engine")),
        "serial_path_ratio": cpu_ratios(cpu, ("cpu_us_main", "cpu_us_engine")),
    }


def cpu_ratios(cpu: dict[str, dict[str, float]], keys: tuple[str, str]) -> dict[str, float]:
    """Raw's CPU per tic over each loop's, summing ``keys``.

    With all CPU time (``cpu_us_python`` + engine) this is the frames/s ratio on a
    machine whose cores are all busy; with the calling thread's (``cpu_us_main``
    + engine, the work each tic waits for) it is the ratio when a core is free
    for the sensor thread.
    """
    raw = sum(cpu["raw"][k] for k in keys)
    return {name: raw / sum(c[k] for k in keys) for name, c in cpu.items() if name != "raw"}


def record_runs(
    settings: GolemSettings, registry: Registry, episodes: int, max_steps: int, repeats: int
) -> dict[str, Any]:
    """Interleaved ``record()`` calls into temporary stores with one and two workers; frames/s each."""
    samples: dict[str, list[float]] = {"workers=1": [], "workers=2": []}
    with tempfile.TemporaryDirectory(prefix="golem-bench-") as tmp:
        for rep in range(repeats):
            order = [1, 2] if rep % 2 == 0 else [2, 1]
            for workers in order:
                plan = RecordPlan(
                    demonstrator="expert", expert=SCENARIO, episodes=episodes, workers=workers, max_steps=max_steps
                )
                with TrajectoryStore.open_or_create(Path(tmp) / f"r{rep}w{workers}") as store:
                    started = time.perf_counter()
                    ids = record(settings, registry, plan, store, SCENARIO)
                    seconds = time.perf_counter() - started
                    frames = sum(info.meta.length for info in store.episodes() if info.id in ids)
                samples[f"workers={workers}"].append(frames / seconds)
    return {"episodes": episodes, "max_steps": max_steps, "samples": samples}


def profile_record(
    settings: GolemSettings, registry: Registry, episodes: int, max_steps: int, top: int = 15
) -> dict[str, Any]:
    """Where one worker's ``record()`` spends its time: cProfile of the calling thread, top functions by own time.

    The sensors' helper thread and the engine process are not in this profile
    (cProfile follows one thread); their share is the difference between wall
    time and the profiled total.
    """
    import cProfile
    import pstats

    plan = RecordPlan(demonstrator="expert", expert=SCENARIO, episodes=episodes, workers=1, max_steps=max_steps)
    with (
        tempfile.TemporaryDirectory(prefix="golem-bench-") as tmp,
        TrajectoryStore.open_or_create(Path(tmp) / "profiled") as store,
    ):
        profiler = cProfile.Profile()
        started = time.perf_counter()
        profiler.enable()
        ids = record(settings, registry, plan, store, SCENARIO)
        profiler.disable()
        wall = time.perf_counter() - started
        frames = sum(info.meta.length for info in store.episodes() if info.id in ids)
    stats = pstats.Stats(profiler)
    rows = []
    for (file, line, name), (_, calls, own, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append(
            {
                "function": f"{Path(file).name}:{line}({name})",
                "calls": calls,
                "own_s": round(own, 4),
                "cumulative_s": round(cumulative, 4),
                "own_us_per_tic": round(1e6 * own / max(frames, 1), 1),
            }
        )
    rows.sort(key=lambda r: r["own_s"], reverse=True)
    return {
        "frames": frames,
        "wall_s": round(wall, 3),
        "us_per_tic": round(1e6 * wall / max(frames, 1), 1),
        "top": rows[:top],
    }


def summarise(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """Median, min and max of each sample list."""
    return {name: {"median": statistics.median(v), "min": min(v), "max": max(v)} for name, v in samples.items()}


def ratios(samples: dict[str, list[float]], base: str) -> dict[str, float]:
    """Median over repetitions of each loop's tics/s divided by ``base``'s in the same repetition."""
    return {
        name: statistics.median(a / b for a, b in zip(v, samples[base])) for name, v in samples.items() if name != base
    }


def table(results: dict[str, Any]) -> Table:
    """The rich table of the results."""
    loop, rec = results["loops"], results["record"]
    out = Table(
        title=(
            f"Recording vs raw engine ({SCENARIO}, sensors {'+'.join(SENSORS)}; "
            f"medians of {results['repeats']} interleaved runs)"
        )
    )
    for col in ("what", "frames/s (median)", "min–max", "ratio (median of paired)", "CPU µs/tic: ours (main) + engine"):
        out.add_column(col, justify="left" if col == "what" else "right")
    labels = {
        "raw": "raw engine (get_state + act)",
        "inline": "sensors read in line (serial)",
        "record": "rollout + Recorder (4 sensors)",
    }
    for name, s in loop["summary"].items():
        ratio = "1.00" if name == "raw" else f"{loop['ratio_to_raw'][name]:.2f}"
        cpu = loop["cpu_us_per_tic"][name]
        out.add_row(
            labels[name],
            f"{s['median']:.0f}",
            f"{s['min']:.0f}–{s['max']:.0f}",
            ratio,
            f"{cpu['cpu_us_python']:.0f} ({cpu['cpu_us_main']:.0f}) + {cpu['cpu_us_engine']:.0f}",
        )
    for name, s in rec["summary"].items():
        ratio = "1.00" if name == "workers=1" else f"{rec['ratio_to_one_worker'][name]:.2f} (vs 1 worker)"
        out.add_row(f"record() into LMDB, {name}", f"{s['median']:.0f}", f"{s['min']:.0f}–{s['max']:.0f}", ratio, "")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tics", type=int, default=400, help="tics per loop run")
    parser.add_argument("--repeats", type=int, default=15, help="interleaved rounds of the three loops")
    parser.add_argument("--episodes", type=int, default=6, help="episodes per record() run")
    parser.add_argument("--max-steps", type=int, default=400, help="tics per episode in record() runs")
    parser.add_argument("--record-repeats", type=int, default=3, help="interleaved record() repetitions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile-only", action="store_true", help="only profile one worker's record() and print it")
    parser.add_argument("--out", type=Path, default=RESULTS, help="JSON results file")
    args = parser.parse_args(argv)
    configure_logging(level="warning")
    settings = bench_settings()
    registry = load_plugins().registry
    if args.profile_only:
        prof = profile_record(settings, registry, args.episodes, args.max_steps)
        print(json.dumps(prof, indent=1))
        return 0
    started = time.perf_counter()
    loop = loops(settings, registry, args.tics, args.repeats, args.seed)
    loop["summary"] = summarise(loop["samples"])
    loop["ratio_to_raw"] = ratios(loop["samples"], "raw")
    rec = record_runs(settings, registry, args.episodes, args.max_steps, args.record_repeats)
    rec["summary"] = summarise(rec["samples"])
    rec["ratio_to_one_worker"] = ratios(rec["samples"], "workers=1")
    results = {
        "scenario": SCENARIO,
        "sensors": SENSORS,
        "repeats": args.repeats,
        "record_repeats": args.record_repeats,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "seconds": round(time.perf_counter() - started, 1),
        "target": {"record_over_raw": 0.9},
        "loops": loop,
        "record": rec,
        "profile": profile_record(settings, registry, args.episodes, args.max_steps),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    console = Console()
    if not console.is_terminal:
        console.width = 120
    console.print(table(results))
    console.print(
        f"record / raw = {loop['ratio_to_raw']['record']:.2f} measured (target ≥ 0.90) at load average "
        f"{results['load_average'][0]:.1f} on {results['cpus']} CPUs; from CPU time per tic: "
        f"{loop['serial_path_ratio']['record']:.2f} with a core free for the sensor thread, "
        f"{loop['cpu_bound_ratio']['record']:.2f} with every core busy; written {args.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
