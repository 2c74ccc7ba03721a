"""The scoreboard: record → train → evaluate for every scenario with an expert, as a new user runs it.

For each scenario (``--scenario``, repeatable; default all with an expert) and
each model (``--model``, default ``cfc``): record ``--episodes`` expert episodes
into a fresh store, ``golem run train`` with default settings plus any
``--set`` given here, then ``golem run evaluate`` the trained agent against a
random policy and the expert on the same unseen seeds. Results are merged into
``bench/results/zoo.json`` keyed by scenario and model, so the board can be
filled one scenario at a time; ``--table`` prints the README table from it.
``--tune`` runs ``golem run tune`` (press thresholds by play, seeds 5,000…)
between training and evaluation; its rows are keyed ``<model>+tuned`` (where the
confirmation seeds refute the search, the row plays the trained thresholds).

    python bench/bench_zoo.py --scenario defend_the_center --episodes 60
    python bench/bench_zoo.py --table
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from console import golem  # bench/ is on the path when a benchmark runs as a script
from golem.runtime.scenarios import scenario_spec

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "zoo.json"

#: Scenarios on the board by default: the five the issue names, then the other experts' scenarios.
SCENARIOS = ["basic", "defend_the_center", "health_gathering", "take_cover", "my_way_home",
             "defend_the_line", "health_gathering_supreme", "predict_position", "deadly_corridor", "deathmatch"]

#: Published results to compare with (what they measured, and where).
REFERENCES = {
    "basic": "Sample Factory RL ≈ 77 return",
    "defend_the_center": "Sample Factory RL ≈ 24–25 kills",
    "take_cover": "World Models 1,092 ± 556 tics",
    "my_way_home": "Sample Factory RL ≈ 0.98 exits",
    "health_gathering": "—",
    "defend_the_line": "Sample Factory RL ≈ 35–43 return",
    "health_gathering_supreme": "Kanervisto et al. BC 8.6 ± 0.4 (860 tics); humans 20.9",
    "predict_position": "—",
    "deadly_corridor": "—",
    "deathmatch": "—",
}

#: Evaluation episodes where 30 are too few: an exit rate's standard error at 0.9 is 0.055 over 30
#: episodes (one model exited 0.97 on the first 30 seeds and 0.86 over 100); health_gathering_supreme's
#: lstm survived 1,658 ± 552 tics on the first 30 seeds and 1,501 ± 591 over 100.
EVAL_EPISODES = {"my_way_home": 100, "health_gathering_supreme": 100}

#: The scenario's own success measure: (label, policy summary key, statistic).
MEASURES = {
    "defend_the_center": ("kills", "kills"),
    "take_cover": ("tics survived", "tics"),
    "health_gathering": ("tics survived", "tics"),
    "my_way_home": ("exits", "goal_rate"),
    "basic": ("return", "return"),
    "defend_the_line": ("return", "return"),
    "health_gathering_supreme": ("tics survived", "tics"),
    "predict_position": ("return", "return"),
    "deadly_corridor": ("return", "return"),
    "deathmatch": ("return", "return"),
}


#: What a row keeps of a threshold search (`golem run tune --json`).
TUNE_KEYS = ("best", "plays", "start_return", "best_return", "candidates", "confirmation", "accepted")


def board_name(model: str, sensors: Sequence[str], tuned: bool = False) -> str:
    """A row's model column and results key part: the model, each extra sensor, ``tuned`` (``cfc+audio+tuned``)."""
    return "+".join([model, *sensors, *(["tuned"] if tuned else [])])


def run_one(scenario: str, model: str, episodes: int, eval_episodes: int, workers: int, extra: list[str],
            sensors: Sequence[str] = (), tune: bool = False) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"golem-zoo-{scenario}-"))
    sets = [a for s in extra for a in ("--set", s)]
    try:
        # Extra sensors are plugins every step loads: the store records them, the model reads them.
        root = ["--set", f"data.root={work / 'data'}", *(a for name in sensors for a in ("--plugin", name))]
        t0 = time.perf_counter()
        golem("run", "record", "--expert", scenario, "--scenario", scenario, "--episodes", str(episodes),
              "--workers", str(workers), *root, cwd=work)
        t_record = time.perf_counter() - t0
        with_model = ["--plugin", model] if model != "cfc" else []
        t0 = time.perf_counter()
        # With --tune the search runs once, below, not also inside training (a scenario spec's tune_episodes).
        no_spec_tune = ["--set", "training.tune_episodes=0"] if tune else []
        out = golem("run", "train", *with_model, *root, *sets, *no_spec_tune, "--json", cwd=work)
        t_train = time.perf_counter() - t0
        trained = json.loads(out)
        tuned = None
        t_tune = 0.0
        in_training = trained.get("tuned") or {}
        if "seconds" in in_training:  # the spec's tuning ran inside `golem run train`: count it as tuning
            t_tune = float(in_training["seconds"])
            t_train -= t_tune
        if tune:  # `golem run tune`: thresholds by play on seeds 5,000…, the evaluation's stay unseen
            t0 = time.perf_counter()
            tuned = json.loads(golem("run", "tune", *root, "--workers", str(workers), "--json", cwd=work))
            t_tune = time.perf_counter() - t0
        t0 = time.perf_counter()
        board_path = work / "board.json"
        golem("run", "evaluate", *root, "--episodes", str(eval_episodes), "--workers", str(workers),
              "--out", str(board_path), cwd=work)
        t_eval = time.perf_counter() - t0
        board = json.loads(board_path.read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    label, key = MEASURES.get(scenario, ("return", "return"))
    policies = board["policies"]
    return {
        "scenario": scenario,
        "model": model,
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "recorded_episodes": episodes,
        "frames": trained["data"]["total_steps"],
        "frame_skip": board.get("frame_skip", 1),
        "settings": extra,
        "sensors": ["visual", *sensors],
        "updates": trained.get("updates"),
        "best_epoch": trained.get("best_epoch"),
        "thresholds": trained.get("thresholds"),  # calibrated on validation; what it plays: "tuned…"["plays"]
        "tuned": None if tuned is None else {k: tuned[k] for k in TUNE_KEYS},
        # the scenario's spec (training.tune_episodes) tuned the thresholds inside `golem run train`
        "tuned_in_training": trained.get("tuned") and {k: trained["tuned"].get(k) for k in (*TUNE_KEYS, "seconds", "error")},
        "validation": {k: trained["validation"][k] for k in ("loss", "exact_match", "steps")}
        if trained.get("validation") else None,
        "minutes": {"record": round(t_record / 60, 2), "train": round(t_train / 60, 2), "tune": round(t_tune / 60, 2),
                    "evaluate": round(t_eval / 60, 2)},
        "eval_episodes": eval_episodes,
        "return": {role: policies[role]["return"] for role in policies},
        "measure": {"label": label, **{role: policies[role][key] for role in policies}},
        "normalised": board["share"]["normalised"],
        "reference": REFERENCES.get(scenario),
    }


def fmt(stat: Any) -> str:
    if isinstance(stat, dict):
        return f"{stat['mean']:.2f} ± {stat['std']:.2f}"
    return "—" if stat is None else f"{stat:.2f}"


def minutes(spent: dict[str, float]) -> str:
    """Training minutes, plus the threshold search's where one ran (``golem run tune``, or inside training)."""
    tune = spent.get("tune") or 0.0
    return f"{spent['train']:.1f}" + (f" + {tune:.1f}" if tune >= 0.05 else "")


def table(results: dict[str, Any]) -> str:
    rows = ["| scenario | model | skip | expert episodes (frames) | train (+ tune) min | eval episodes | measure | model | random "
            "| expert | normalised | published |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key in sorted(results):
        r = results[key]
        m = r["measure"]
        norm = "—" if r["normalised"] is None else f"{100 * r['normalised']:.0f} %"
        rows.append(
            f"| {r['scenario']} | {board_name(r['model'], r.get('sensors', ['visual'])[1:], bool(r.get('tuned')))} | {r.get('frame_skip', 1)} | {r['recorded_episodes']} ({r['frames']:,}) "
            f"| {minutes(r['minutes'])} "
            f"| {r['eval_episodes']} | {m['label']} | "
            f"{fmt(m.get('model'))} | {fmt(m.get('random'))} | {fmt(m.get('expert'))} | {norm} | {r['reference'] or '—'} |"
        )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenario", action="append", help="scenario with an expert (repeatable; default: all)")
    parser.add_argument("--model", action="append", help="model component (repeatable; default: cfc)")
    parser.add_argument("--episodes", type=int, help="expert episodes to record (default: the scenario spec's)")
    parser.add_argument("--eval-episodes", type=int,
                        help="evaluation episodes per policy (default: 30; 100 on my_way_home)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sensor", dest="sensors", action="append", default=[],
                        help="extra sensor plugin beside the visual one (repeatable: depth, thermal, audio)")
    parser.add_argument("--set", dest="sets", action="append", default=[], help="extra training setting KEY=VALUE")
    parser.add_argument("--tune", action="store_true",
                        help="tune the press thresholds by play (`golem run tune`) between training and evaluation")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--table", action="store_true", help="print the README table of the stored results and stop")
    args = parser.parse_args()
    results: dict[str, Any] = json.loads(args.out.read_text()) if args.out.is_file() else {}
    if args.table:
        print(table(results))
        return 0
    started = time.perf_counter()
    for scenario in args.scenario or SCENARIOS:
        for model in args.model or ["cfc"]:
            episodes = args.episodes or scenario_spec(scenario).episodes
            print(f"{scenario} / {model}: {episodes} expert episodes …", flush=True)
            evaluated = args.eval_episodes or EVAL_EPISODES.get(scenario, 30)
            result = run_one(scenario, model, episodes, evaluated, args.workers, args.sets, args.sensors, args.tune)
            results[f"{scenario}/{board_name(model, args.sensors, args.tune)}"] = result
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=2) + "\n")
            print(f"  normalised {result['normalised']}, {result['measure']}, {result['minutes']}", flush=True)
    print(f"total {(time.perf_counter() - started) / 60:.1f} min")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
