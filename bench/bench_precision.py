"""Benchmark the training step in float32 and with the cortices in bfloat16, and the cortex's memory layout.

Three variants of one training step (sampler → store → cortices → standardiser → core → loss → Adam),
on the same store, model and batches, interleaved round by round:

* **fp32, NCHW** — the visual cortex as a plain ``nn.Sequential`` on NCHW frames (before);
* **fp32, channels-last** — the cortex as shipped (``golem.cortex``): frames handed to the convolutions
  in channels-last order, float32 throughout;
* **bf16 cortices** — the same under ``torch.autocast(bfloat16)`` as ``training.precision=auto`` runs it
  on a CPU with AMX / AVX-512 BF16 (the core, loss and weights stay float32).

Results go to ``bench/results/precision.json`` and a rich table. Ratios are against fp32, NCHW.

Usage: ``python bench/bench_precision.py [--batch 32] [--length 32] [--steps 5] [--rounds 4]``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch
from bench_train import ensure_store, timed  # bench/ is on the path when a benchmark runs as a script
from rich.console import Console
from rich.table import Table
from torch import nn

from golem.allocator import keep_freed_memory
from golem.data.dataset import SequenceDataset
from golem.data.store import TrajectoryStore
from golem.learning.device import cpu_has_native_bf16, select_device
from golem.learning.modelspec import ModelSpec
from golem.learning.training import prefetched, to_device, train_step
from golem.logs import configure_logging
from golem.plugins import load_plugins
from golem.settings import GolemSettings

RESULTS = Path(__file__).resolve().parent / "results" / "precision.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "golem-bench-train-store")
    parser.add_argument("--episodes", type=int, default=60, help="basic episodes to record when the store is missing")
    parser.add_argument("--batch", type=int, default=32, help="B (training.batch_size default)")
    parser.add_argument("--length", type=int, default=32, help="L (the default for long episodes)")
    parser.add_argument("--steps", type=int, default=5, help="calls per round")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds (best and median are kept)")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    keep_freed_memory()
    configure_logging(level="warning")
    device = select_device("cpu")
    ensure_store(args.store, args.episodes, 2)
    registry = load_plugins().registry
    settings = GolemSettings.model_validate(
        {
            "training": {"batch_size": args.batch, "sequence_length": args.length, "device": "cpu", "mirror": True},
        }
    )
    cfg = settings.training
    spec = ModelSpec.from_settings(settings, registry)
    frames = args.batch * args.length
    with TrajectoryStore.open(args.store) as store:
        dataset = SequenceDataset.from_store(store, spec.sensors, spec.action_names, cfg, profile=spec.profile)
        torch.manual_seed(0)
        shipped = registry.get("models", spec.model).obj(spec).train()
        nchw = registry.get("models", spec.model).obj(spec).train()
        nchw.load_state_dict(shipped.state_dict())
        nchw.cortices["visual"] = nn.Sequential(*nchw.cortices["visual"])  # same layers, NCHW frames
        loss_fn = registry.get("losses", cfg.loss).obj(settings, spec.n_actions)
        sampler = registry.get("samplers", cfg.sampler).obj(dataset, settings)

        def endless() -> Iterator[list[int]]:
            while True:
                yield from sampler

        batches = prefetched(dataset, endless())

        def step(model: nn.Module, autocast: torch.dtype | None) -> Any:
            optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
            state = {"hx": model.initial_state(args.batch, device)}

            def call() -> None:
                batch = next(batches)
                _, state["hx"] = train_step(
                    model,
                    loss_fn,
                    optimizer,
                    to_device(batch.inputs, device),
                    batch.targets,
                    batch.is_first,
                    state["hx"],
                    batch.mask,
                    batch.timespans,
                    1.0,
                    autocast,
                )

            return call

        variants = {"fp32, NCHW": step(nchw, None), "fp32, channels-last": step(shipped, None)}
        if torch.ops.mkldnn._is_mkldnn_bf16_supported():
            variants["bf16 cortices, channels-last"] = step(shipped, torch.bfloat16)
        samples = timed(variants, args.steps, args.warmup, args.rounds, device)
    best = {name: min(v) for name, v in samples.items()}
    base = best["fp32, NCHW"]
    report = {
        "machine": platform.processor() or platform.machine(),
        "native_bf16": cpu_has_native_bf16(),
        "torch_threads": torch.get_num_threads(),
        "load_average_1min": os.getloadavg()[0],
        "batch_size": args.batch,
        "sequence_length": args.length,
        "rounds": args.rounds,
        "steps": args.steps,
        "frames_per_s": {name: frames / t for name, t in best.items()},
        "median_frames_per_s": {name: frames / statistics.median(v) for name, v in samples.items()},
        "speedup": {name: base / t for name, t in best.items()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    table = Table(
        title=f"Training step, frames/s, best of {args.rounds} rounds (B={args.batch}, L={args.length}, "
        f"{torch.get_num_threads()} threads, native bf16: {report['native_bf16']})"
    )
    for col in ("variant", "frames/s", "ms / step", "× fp32 NCHW"):
        table.add_column(col, justify="left" if col == "variant" else "right")
    for name, t in best.items():
        table.add_row(name, f"{frames / t:.0f}", f"{1000 * t:.0f}", f"{base / t:.2f}")
    Console().print(table)
    Console().print(f"→ {args.out}")


if __name__ == "__main__":
    main()
