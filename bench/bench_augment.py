"""Benchmark what each augmentation costs a training step: none, ``shift``, ``colour``, ``cutout``, ``conv``, all four.

One training step as :func:`golem.learning.training.train` runs it (sampler → store, prefetched →
the selected augmentations with their batch's generator → cortices → core → loss → Adam), on the
same store, settings and batches, the variants interleaved round by round. Each row also times the
augmentations alone on one batch. The augmentations run with their default settings (``p`` included).

Reference rows (when kornia is installed): kornia's ``VideoSequential(..., data_format="BTCHW",
same_on_frame=True)`` doing what ``shift`` and ``colour`` do, seeded from the same generator through
``torch.random.fork_rng``; they are why golem-augment's are hand-written.

Results go to ``bench/results/augment.json`` and a rich table; ``--table`` prints the markdown table
of the stored results (the docs are generated from it).

Usage: ``OMP_NUM_THREADS=1 python bench/bench_augment.py [--batch 32] [--length 16] [--steps 3] [--rounds 5]``
(the store is recorded with the ``basic`` expert when it does not exist).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from bench_train import ensure_store, timed  # bench/ is on the path when a benchmark runs as a script
from rich.console import Console
from rich.table import Table

from golem.allocator import keep_freed_memory
from golem.augment import GEOMETRY, PHOTOMETRIC, Augmentation, augment_inputs, batch_generator
from golem.data.dataset import SequenceDataset
from golem.data.store import TrajectoryStore
from golem.learning.device import autocast_dtype, select_device
from golem.learning.modelspec import ModelSpec
from golem.learning.training import prefetched, to_device, train_step
from golem.logs import configure_logging
from golem.plugins import load_plugins
from golem.settings import GolemSettings

RESULTS = Path(__file__).resolve().parent / "results" / "augment.json"
AUGMENTATIONS = ["shift", "colour", "cutout", "conv"]


class KorniaReference(Augmentation):
    """A kornia module over ``[B, T, C, H, W]`` as an augmentation: kornia draws from torch's global RNG,
    so it runs inside ``fork_rng`` seeded from the batch's generator."""

    def __init__(self, name: str, kind: str, module: Any) -> None:
        self.name, self.kind, self.module = name, kind, module  # type: ignore[misc]

    def __call__(self, images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(torch.randint(0, 2**62, (1,), generator=generator)))
            return self.module(images)


def kornia_references(settings: GolemSettings) -> dict[str, list[Augmentation]]:
    """``{row: [augmentation]}`` of kornia doing ``shift`` and ``colour`` (empty without kornia)."""
    try:
        import kornia.augmentation as K
    except ImportError:
        return {}
    from golem.settings import section
    from golem_augment.colour import ColourSettings
    from golem_augment.shift import ShiftSettings

    shift, colour = section(settings, ShiftSettings), section(settings, ColourSettings)

    def video(op: Any) -> Any:
        return K.VideoSequential(op, data_format="BTCHW", same_on_frame=True)

    crop = K.RandomCrop((64, 64), padding=shift.pad, padding_mode="replicate", p=shift.p)
    jitter = K.ColorJitter(colour.brightness, colour.contrast, colour.saturation, colour.hue, p=colour.p)
    return {
        "shift (kornia, reference)": [KorniaReference("shift", GEOMETRY, video(crop))],
        "colour (kornia, reference)": [KorniaReference("colour", PHOTOMETRIC, video(jitter))],
    }


def table(results: dict[str, Any]) -> str:
    """The markdown table of a results file: each row's cost alone and in a training step."""
    rows = [
        "| augmentation | alone, ms per batch | training step, ms | vs no augmentation |",
        "|---|---|---|---|",
    ]
    for name, r in results["rows"].items():
        alone = "—" if r["augment_ms"] is None else f"{r['augment_ms']:.1f}"
        rows.append(f"| {name} | {alone} | {r['step_ms']:.0f} | {r['ratio']:.2f}× |")
    cfg = (
        f"B = {results['batch_size']}, L = {results['sequence_length']}, `{results['model']}` on the visual sensor, "
        f"cortices in {results['precision']}, {results['torch_threads']} torch thread(s), best of "
        f"{results['rounds']} interleaved rounds of {results['steps']} steps"
    )
    return "\n".join(rows) + f"\n\n{cfg}."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "golem-bench-train-store")
    parser.add_argument("--episodes", type=int, default=60, help="basic episodes to record when the store is missing")
    parser.add_argument("--batch", type=int, default=32, help="B (training.batch_size default)")
    parser.add_argument("--length", type=int, default=16, help="L")
    parser.add_argument("--steps", type=int, default=3, help="training steps per round")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (best and median are kept)")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--table", action="store_true", help="print the stored results' markdown table and exit")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(args.out.read_text())))
        return
    keep_freed_memory()
    configure_logging(level="warning")
    device = select_device("cpu")
    ensure_store(args.store, args.episodes, 2)
    registry = load_plugins().registry
    settings = GolemSettings.model_validate(
        {"training": {"batch_size": args.batch, "sequence_length": args.length, "device": "cpu"}}
    )
    cfg = settings.training
    autocast = autocast_dtype(cfg.precision, device)
    spec = ModelSpec.from_settings(settings, registry)
    frames = args.batch * args.length
    variants: dict[str, list[Augmentation]] = {"none": []}
    variants.update({name: [registry.get("augmentations", name).obj(settings)] for name in AUGMENTATIONS})
    variants["all four"] = [aug for name in AUGMENTATIONS for aug in variants[name]]
    variants.update(kornia_references(settings))
    with TrajectoryStore.open(args.store) as store:
        dataset = SequenceDataset.from_store(store, spec.sensors, spec.action_names, cfg, profile=spec.profile)
        torch.manual_seed(0)
        initial = registry.get("models", spec.model).obj(spec).state_dict()
        loss_fn = registry.get("losses", cfg.loss).obj(settings, spec.n_actions)
        sampler = registry.get("samplers", cfg.sampler).obj(dataset, settings)

        def endless() -> Iterator[list[int]]:
            while True:
                yield from sampler

        batches = prefetched(dataset, endless())
        fixed = to_device(dataset.load_batch(next(iter(sampler))).inputs, device)

        def step(augs: list[Augmentation]) -> Callable[[], None]:
            model = registry.get("models", spec.model).obj(spec).train()
            model.load_state_dict(initial)
            optimizer = torch.optim.Adam(model.parameters(), lr=cfg.learning_rate)
            state: dict[str, Any] = {"hx": model.initial_state(args.batch, device), "n": 0}

            def call() -> None:
                batch = next(batches)
                inputs = to_device(batch.inputs, device)
                if augs:
                    inputs = augment_inputs(inputs, spec.sensors, augs, batch_generator(cfg.seed, 0, state["n"]))
                state["n"] += 1
                _, state["hx"] = train_step(
                    model,
                    loss_fn,
                    optimizer,
                    inputs,
                    batch.targets,
                    batch.is_first,
                    state["hx"],
                    batch.mask,
                    batch.timespans,
                    1.0,
                    autocast,
                )

            return call

        def alone(augs: list[Augmentation]) -> Callable[[], None]:
            return lambda: augment_inputs(fixed, spec.sensors, augs, batch_generator(cfg.seed, 0, 0))

        step_samples = timed({n: step(a) for n, a in variants.items()}, args.steps, args.warmup, args.rounds, device)
        aug_samples = timed({n: alone(a) for n, a in variants.items() if a}, 5, 1, args.rounds, device)
    best = {name: min(v) for name, v in step_samples.items()}
    base = best["none"]
    report = {
        "machine": platform.processor() or platform.machine(),
        "torch_threads": torch.get_num_threads(),
        "load_average_1min": os.getloadavg()[0],
        "batch_size": args.batch,
        "sequence_length": args.length,
        "model": spec.model,
        "precision": str(autocast or torch.float32).removeprefix("torch."),
        "rounds": args.rounds,
        "steps": args.steps,
        "rows": {
            name: {
                "augmentations": [a.name for a in variants[name]],
                "augment_ms": 1000 * min(aug_samples[name]) if name in aug_samples else None,
                "step_ms": 1000 * t,
                "median_step_ms": 1000 * statistics.median(step_samples[name]),
                "frames_per_s": frames / t,
                "ratio": t / base,
            }
            for name, t in best.items()
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    out = Table(
        title=f"Training step with augmentations, best of {args.rounds} rounds (B={args.batch}, L={args.length}, "
        f"{torch.get_num_threads()} threads, cortices in {report['precision']})"
    )
    for col in ("augmentation", "alone, ms", "step, ms", "× none"):
        out.add_column(col, justify="left" if col == "augmentation" else "right")
    for name, r in report["rows"].items():
        alone_ms = "—" if r["augment_ms"] is None else f"{r['augment_ms']:.1f}"
        out.add_row(name, alone_ms, f"{r['step_ms']:.0f}", f"{r['ratio']:.2f}")
    Console().print(out)
    Console().print(f"→ {args.out}")


if __name__ == "__main__":
    main()
