"""Tuning's engines: a fresh evaluation per candidate against engines kept open for every candidate.

``golem run tune`` plays dozens of candidates (press thresholds) on the same
seeds. Each candidate used to be one :func:`~golem.diagnostics.evaluation.evaluate`
call, which starts its engines — with ``--workers 2``, spawns two processes that
import torch and the plugins — and stops them again.
:class:`~golem.diagnostics.evaluation.ModelPlayer` starts them once. Both ways
play the same candidates here, alternated, on the same seeds, and must return
the same episodes; the table gives seconds per candidate and the ratio.

    python bench/bench_tune.py --model path/to/model.safetensors --scenario defend_the_center \\
        --candidates 8 --episodes 10 --workers 1 2

With no ``--model`` an untrained ``cfc`` on ``basic`` plays (short episodes: the
start-up cost shows most).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from rich.console import Console
from rich.table import Table

from golem.diagnostics.evaluation import EvalPlan, ModelPlayer, evaluate
from golem.learning.checkpoints import read_metadata, save_checkpoint
from golem.learning.modelspec import ModelSpec
from golem.logs import configure_logging
from golem.plugins import load_plugins
from golem.runtime.agent import model_threshold, settings_for_model
from golem.settings import BrainSettings, GolemSettings, ResolvedSettings

RESULTS = Path(__file__).resolve().parent / "results" / "tune_engines.json"


def untrained(folder: Path) -> Path:
    """An untrained ``cfc`` for the ``basic`` profile (weights seeded 0)."""
    registry = load_plugins().registry
    settings = GolemSettings.model_construct(brain=BrainSettings(profile="basic", sensors=["visual"]))
    torch.manual_seed(0)
    spec = ModelSpec.from_settings(settings, registry)
    return save_checkpoint(
        folder / "untrained.safetensors", registry.get("models", "cfc").obj(spec), spec.to_metadata()
    )


def candidates(start: list[float], count: int) -> list[list[float]]:
    """``count`` threshold sets: the start, then each action in turn at 0.3 and 0.6."""
    out = [list(start)]
    i = 0
    while len(out) < count:
        for value in (0.3, 0.6):
            moved = list(start)
            moved[i % len(start)] = value
            out.append(moved)
        i += 1
    return out[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, help="checkpoint (default: an untrained cfc on basic)")
    parser.add_argument("--scenario", default=None, help="scenario (default: the model's, else basic)")
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    configure_logging(level="warning")
    registry = load_plugins().registry
    folder = Path(tempfile.mkdtemp(prefix="bench-tune-"))
    model = args.model or untrained(folder)
    metadata = read_metadata(model)
    base = GolemSettings()
    settings = settings_for_model(ResolvedSettings(settings=base, sources={}, config_file=None), metadata, registry)
    scenario = args.scenario or (metadata.get("data") or {}).get("scenario") or "basic"
    frame_skip = int((metadata.get("data") or {}).get("frame_skip") or 1)
    settings = settings.model_copy(update={"game": settings.game.model_copy(update={"frame_skip": frame_skip})})
    n = len(metadata["spec"]["action_names"])
    start = model_threshold(metadata)
    start = [float(start)] * n if isinstance(start, (int, float)) else list(start)
    sets = candidates(start, args.candidates)
    rows: list[dict[str, Any]] = []
    for workers in args.workers:
        plan = EvalPlan(
            model_path=model,
            scenario=scenario,
            episodes=args.episodes,
            max_steps=args.max_steps,
            baselines=False,
            expert=None,
            start_seed=5000,
            workers=workers,
            frame_skip=frame_skip,
        )
        t0 = time.perf_counter()
        fresh = [evaluate(settings, registry, replace(plan, threshold=t)).of("model") for t in sets]
        t_fresh = time.perf_counter() - t0
        t0 = time.perf_counter()
        with ModelPlayer(settings, registry, plan) as player:
            kept = [player.play(t, plan.seeds) for t in sets]
        t_kept = time.perf_counter() - t0
        same = all([r.episode_return for r in a] == [r.episode_return for r in b] for a, b in zip(fresh, kept))
        tics = int(sum(r.tics for batch in kept for r in batch))
        rows.append(
            {
                "workers": workers,
                "candidates": len(sets),
                "episodes": args.episodes,
                "tics": tics,
                "fresh_s": round(t_fresh, 2),
                "kept_s": round(t_kept, 2),
                "speedup": round(t_fresh / t_kept, 2),
                "same_episodes": same,
                "mean_return": round(float(np.mean([r.episode_return for b in kept for r in b])), 3),
            }
        )
    record = {
        "model": str(model),
        "scenario": scenario,
        "frame_skip": frame_skip,
        "date": time.strftime("%Y-%m-%d"),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    table = Table(title=f"tuning's engines: {scenario}, {len(sets)} candidates × {args.episodes} episodes")
    for col in (
        "workers",
        "tics played",
        "engines started per candidate (s, total)",
        "engines kept (s, total)",
        "ratio",
        "same episodes",
    ):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(
            str(r["workers"]),
            f"{r['tics']:,}",
            f"{r['fresh_s']:.1f}",
            f"{r['kept_s']:.1f}",
            f"{r['speedup']:.2f}×",
            "yes" if r["same_episodes"] else "NO",
        )
    Console().print(table)


if __name__ == "__main__":
    main()
