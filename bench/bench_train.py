"""Benchmark one training step against its cortices alone, and the ``cfc`` core against ``lstm``.

Three measurements on the same store, settings and device, in one run:

* **full step** — frames/s of what :func:`golem.learning.training.train` does per batch:
  sampler → ``load_batch`` (store, prefetched by a thread) → device → reset rows → cortices → core →
  head → loss → backward → Adam step;
* **cortices** — frames/s of the cortices' forward + backward alone on one
  batch already on the device (no sampler, store, core, loss or optimiser);
  ``full / cortices`` is the share of the step the rest costs (target ≥ 0.85);
* **cores** — the full step with the ``cfc`` core and with the ``lstm`` core at
  equal width (``brain.working_memory``), plus each core's forward + backward
  alone on the same features;
* **CfC implementations** — forward + backward of the core alone on random
  features ``[B, --core-length, in_features]`` (default T = 32): ``ncps``' own
  loop, Golem's fast core (TorchScript loops, the default; and the same loops
  in eager Python) and ``nn.LSTM`` at the same width (targets: fast ≥ 3×
  ``ncps``, and within 1.5× of the LSTM, i.e. ≥ 0.67 of its rate).

A frame is one step of one row: a batch is ``B · L`` frames. Results go to
``bench/results/train.json`` and a rich table.

Usage: ``python bench/bench_train.py [--store PATH] [--episodes 60] [--batch 16] [--length 8] [--steps 10]
[--rounds 5]`` (the store is recorded with the ``basic`` expert when it does not exist).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import structlog
import torch
from rich.console import Console
from rich.table import Table

from golem.allocator import keep_freed_memory
from golem.data.dataset import SequenceDataset
from golem.data.store import TrajectoryStore
from golem.learning.device import select_device
from golem.learning.modelspec import ModelSpec
from golem.learning.training import prefetched, to_device, train_step
from golem.logs import configure_logging
from golem.plugins import load_plugins
from golem.settings import GolemSettings
from golem.workflows.recording import RecordPlan, record

RESULTS = Path(__file__).resolve().parent / "results" / "train.json"
log = structlog.get_logger("bench_train")


def sync(device: torch.device) -> None:
    """Wait for queued device work, so wall-clock times are real."""
    if device.type == "cuda":
        torch.cuda.synchronize()
    elif device.type == "mps":
        torch.mps.synchronize()


def timed(
    fns: dict[str, Callable[[], Any]], steps: int, warmup: int, rounds: int, device: torch.device
) -> dict[str, list[float]]:
    """Seconds per call of each function in each of ``rounds`` interleaved rounds of ``steps`` calls.

    Interleaving keeps a busy shared machine from favouring whichever function
    happened to run in a quiet moment; the best round is the least disturbed.
    """
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            sync(device)
            t0 = time.perf_counter()
            for _ in range(steps):
                fn()
            sync(device)
            samples[name].append((time.perf_counter() - t0) / steps)
    return samples


def ensure_store(path: Path, episodes: int, workers: int) -> None:
    """Record ``episodes`` of the ``basic`` expert into ``path`` unless a store is already there."""
    if TrajectoryStore.exists(path):
        return
    settings = GolemSettings()
    registry = load_plugins().registry
    with TrajectoryStore.open_or_create(path) as store:
        record(settings, registry, RecordPlan("expert", episodes, expert="basic", workers=workers), store, "basic")


def bench_model(
    settings: GolemSettings, store: TrajectoryStore, steps: int, warmup: int, rounds: int, device: torch.device
) -> dict[str, Any]:
    """Full-step, cortices-only and core-only frames/s for ``settings.brain.model``."""
    registry = load_plugins().registry
    torch.manual_seed(0)
    cfg = settings.training
    spec = ModelSpec.from_settings(settings, registry)
    dataset = SequenceDataset.from_store(store, spec.sensors, spec.action_names, cfg, profile=spec.profile)
    model = registry.get("models", spec.model).obj(spec).to(device).train()
    loss_fn = registry.get("losses", cfg.loss).obj(settings, spec.n_actions).to(device)
    sampler = registry.get("samplers", cfg.sampler).obj(dataset, settings)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
    frames = cfg.batch_size * cfg.sequence_length

    def endless() -> Iterator[list[int]]:
        while True:
            yield from sampler

    batches = prefetched(dataset, endless())
    state = {"hx": model.initial_state(cfg.batch_size, device)}

    def full() -> None:
        batch = next(batches)
        _, state["hx"] = train_step(
            model,
            loss_fn,
            optimizer,
            to_device(batch.inputs, device),
            batch.targets.to(device),
            batch.is_first.to(device),
            state["hx"],
        )

    fixed = dataset.load_batch(next(iter(sampler)))
    inputs = to_device(fixed.inputs, device)

    def cortices() -> None:
        model.zero_grad(set_to_none=True)
        model.encode(inputs).square().mean().backward()

    with torch.no_grad():
        features = model.encode(inputs).detach()
    hx0 = model.initial_state(cfg.batch_size, device)

    def core() -> None:
        model.zero_grad(set_to_none=True)
        out, _ = model.core(features, hx0)
        out.square().mean().backward()

    t = timed({"full": full, "cortices": cortices, "core": core}, steps, warmup, rounds, device)
    best = {name: min(v) for name, v in t.items()}
    median = {name: statistics.median(v) for name, v in t.items()}
    return {
        "model": spec.model,
        "parameters": sum(p.numel() for p in model.parameters()),
        "full_step_fps": frames / best["full"],
        "cortices_fps": frames / best["cortices"],
        "core_fps": frames / best["core"],
        "full_over_cortices": best["cortices"] / best["full"],
        "ms_per_step": 1000 * best["full"],
        "median": {
            "full_step_fps": frames / median["full"],
            "cortices_fps": frames / median["cortices"],
            "full_over_cortices": median["cortices"] / median["full"],
        },
    }


def bench_cores(
    in_features: int, batch: int, length: int, width: int, steps: int, warmup: int, rounds: int, device: torch.device
) -> dict[str, Any]:
    """Forward + backward frames/s of the CfC implementations and the LSTM on the same features."""
    from golem_models.cores import CfCCore, LSTMCore
    from golem_models.fastcfc import cfc_scan

    torch.manual_seed(0)
    reference = CfCCore(in_features, width, reference=True).to(device)
    fast = CfCCore(in_features, width).to(device)
    fast.load_state_dict(reference.state_dict())
    lstm = LSTMCore(in_features, width).to(device)
    x = torch.randn(batch, length, in_features, device=device, requires_grad=True)
    h = torch.zeros(batch, width, device=device)
    hc = torch.zeros(batch, 2 * width, device=device)
    runs: dict[str, Callable[[], tuple[torch.Tensor, torch.Tensor]]] = {
        "ncps": lambda: reference(x, h),
        "fast": lambda: fast(x, h),
        "fast_eager": lambda: cfc_scan(fast.rnn.rnn_cell, x, h, loops="eager"),
        "lstm": lambda: lstm(x, hc),
    }

    def fwd_bwd(run: Callable[[], tuple[torch.Tensor, torch.Tensor]]) -> Callable[[], None]:
        def call() -> None:
            x.grad = None
            out, _ = run()
            out.square().mean().backward()

        return call

    t = timed({name: fwd_bwd(run) for name, run in runs.items()}, steps, warmup, rounds, device)
    fps = {name: batch * length / min(v) for name, v in t.items()}
    return {
        "in_features": in_features,
        "batch_size": batch,
        "length": length,
        "working_memory": width,
        "fps": fps,
        "fast_over_ncps": fps["fast"] / fps["ncps"],
        "fast_over_lstm": fps["fast"] / fps["lstm"],
        "script_over_eager": fps["fast"] / fps["fast_eager"],
        "targets": {"fast_over_ncps": 3.0, "fast_over_lstm": 1 / 1.5},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "golem-bench-train-store")
    parser.add_argument("--episodes", type=int, default=60, help="episodes to record when the store is missing")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch", type=int, default=32, help="B (training.batch_size default)")
    parser.add_argument("--length", type=int, default=8)
    parser.add_argument("--core-length", type=int, default=32, help="T of the CfC implementations' comparison")
    parser.add_argument("--width", type=int, default=64, help="brain.working_memory of both cores")
    parser.add_argument("--steps", type=int, default=10, help="calls per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (best and median are kept)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if os.environ.get("BENCH_ALLOCATOR", "tuned") == "tuned":  # bench_allocator.py compares both
        keep_freed_memory()
    configure_logging(level="warning")
    device = select_device(args.device)
    ensure_store(args.store, args.episodes, args.workers)

    results: dict[str, Any] = {}
    with TrajectoryStore.open(args.store) as store:
        for model in ("cfc", "lstm"):
            settings = GolemSettings.model_validate(
                {
                    "brain": {"model": model, "working_memory": args.width},
                    "training": {"batch_size": args.batch, "sequence_length": args.length, "device": args.device},
                }
            )
            results[model] = bench_model(settings, store, args.steps, args.warmup, args.rounds, device)
        cfc_spec = ModelSpec.from_settings(
            GolemSettings.model_validate({"brain": {"model": "cfc"}}), load_plugins().registry
        )
        in_features = load_plugins().registry.get("models", "cfc").obj(cfc_spec).in_features
    cores = bench_cores(
        in_features, args.batch, args.core_length, args.width, args.steps, args.warmup, args.rounds, device
    )
    report = {
        "device": str(device),
        "torch_threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(),
        "load_average_1min": os.getloadavg()[0],
        "batch_size": args.batch,
        "sequence_length": args.length,
        "working_memory": args.width,
        "steps_per_round": args.steps,
        "rounds": args.rounds,
        "store": str(args.store),
        "allocator": os.environ.get("BENCH_ALLOCATOR", "tuned"),
        "target_full_over_cortices": 0.9,
        "models": results,
        "cfc_implementations": cores,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")

    table = Table(
        title=(
            f"Training throughput, frames/s, best of {args.rounds} rounds "
            f"(B={args.batch}, L={args.length}, width {args.width}, {device})"
        )
    )
    for col in ("core", "full step", "cortices f+b", "full / cortices", "core f+b", "ms / step"):
        table.add_column(col, justify="left" if col == "core" else "right")
    for name, r in results.items():
        table.add_row(
            name,
            f"{r['full_step_fps']:.0f}",
            f"{r['cortices_fps']:.0f}",
            f"{r['full_over_cortices']:.2f}",
            f"{r['core_fps']:.0f}",
            f"{r['ms_per_step']:.1f}",
        )
    Console().print(table)
    impl = Table(
        title=f"Core forward + backward, frames/s (B={args.batch}, T={args.core_length}, "
        f"{cores['in_features']} features → width {args.width})"
    )
    for col in ("ncps CfC", "fast CfC", "fast, eager loops", "nn.LSTM", "fast / ncps", "fast / LSTM"):
        impl.add_column(col, justify="right")
    f = cores["fps"]
    impl.add_row(
        f"{f['ncps']:.0f}",
        f"{f['fast']:.0f}",
        f"{f['fast_eager']:.0f}",
        f"{f['lstm']:.0f}",
        f"{cores['fast_over_ncps']:.2f}× (≥ 3)",
        f"{cores['fast_over_lstm']:.2f} (≥ 0.67)",
    )
    Console().print(impl)
    Console().print(f"→ {args.out}")


if __name__ == "__main__":
    main()
