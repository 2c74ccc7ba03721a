"""Does behavioural cloning learn from pixels? Validation BCE of model variants vs a rates-only predictor.

Uses Golem's own dataset, stateful sampler, validation streams and models; the
variants differ only in where (and whether) inputs or features are normalised.

    OMP_NUM_THREADS=1 .venv/bin/python bench/probe_learning.py --store /tmp/wl/tc30 --variant base --steps 300

Prints one JSON line per evaluation: steps, seconds, val BCE, the rates-only BCE
(training label frequencies scored on the validation labels), and per-action
mean predicted probability vs label rate.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from golem.data.dataset import SequenceDataset
from golem.data.store import TrajectoryStore
from golem.learning.calibration import calibration_windows, recalibrate_norms
from golem.learning.modelspec import ModelSpec
from golem.learning.validation import stream_batches
from golem.plugins import load_plugins
from golem.settings import GolemSettings

VARIANTS = ("base", "pixnorm", "chnorm", "bn1d", "runstd", "gn", "ln", "pixln", "product")


class InputNorm(nn.Module):
    """``(x - mean) / std`` with fixed statistics ``[C, H, W]`` (per pixel) or ``[C, 1, 1]`` (per channel)."""

    def __init__(self, mean: torch.Tensor, std: torch.Tensor, inner: nn.Module) -> None:
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)
        self.inner = inner
        self.out_features = inner.out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner((x - self.mean) / self.std)


class RunningStandardiser(nn.Module):
    """Features ``[N, F]`` standardised by running (EMA) per-feature mean/var; the same in train and eval."""

    def __init__(self, features: int, momentum: float = 0.01) -> None:
        super().__init__()
        self.momentum = momentum
        self.register_buffer("mean", torch.zeros(features))
        self.register_buffer("var", torch.ones(features))
        self.register_buffer("count", torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            with torch.no_grad():
                m, v = x.mean(0), x.var(0, unbiased=False)
                if int(self.count) == 0:
                    self.mean.copy_(m)
                    self.var.copy_(v)
                else:
                    self.mean.lerp_(m, self.momentum)
                    self.var.lerp_(v, self.momentum)
                self.count += 1
        return (x - self.mean) / torch.sqrt(self.var + 1e-5)


class WithTail(nn.Module):
    """``inner`` then ``tail`` (a feature normaliser), keeping ``out_features``."""

    def __init__(self, inner: nn.Module, tail: nn.Module) -> None:
        super().__init__()
        self.inner, self.tail = inner, tail
        self.out_features = inner.out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.tail(self.inner(x))


def with_groupnorm(cortex: nn.Sequential) -> nn.Sequential:
    """The cortex with ``GroupNorm(8, C)`` after every conv."""
    layers: list[nn.Module] = []
    for layer in cortex:
        layers.append(layer)
        if isinstance(layer, nn.Conv2d):
            layers.append(nn.GroupNorm(8, layer.out_channels))
    out = nn.Sequential(*layers)
    out.out_features = cortex.out_features
    return out


def frame_stats(ds: SequenceDataset, n: int, rng: np.random.Generator) -> torch.Tensor:
    """``n`` random training windows' visual input as float ``[N, 3, 64, 64]`` (``to_network`` applied)."""
    idx = rng.choice(len(ds), size=min(n, len(ds)), replace=False)
    return ds.load_batch(idx).inputs["visual"].flatten(0, 1)


def build(variant: str, spec: ModelSpec, registry, train_ds: SequenceDataset, rng) -> nn.Module:
    model = registry.get("models", spec.model).obj(spec)
    if variant in ("base", "product"):  # product: the model `golem run train` builds (brain.feature_norm)
        return model
    cortex = model.cortices["visual"]
    if variant in ("pixnorm", "chnorm", "pixln"):
        x = frame_stats(train_ds, 256, rng)
        dims = (0, 2, 3) if variant == "chnorm" else (0,)
        mean, std = x.mean(dims, keepdim=True)[0], x.std(dims, keepdim=True)[0].clamp_min(1e-2)
        if variant == "pixln":
            cortex = WithTail(cortex, nn.LayerNorm(cortex.out_features))
        model.cortices["visual"] = InputNorm(mean, std, cortex)
    elif variant == "ln":
        model.cortices["visual"] = WithTail(cortex, nn.LayerNorm(cortex.out_features))
    elif variant == "bn1d":
        model.cortices["visual"] = WithTail(cortex, nn.BatchNorm1d(cortex.out_features))
    elif variant == "runstd":
        model.cortices["visual"] = WithTail(cortex, RunningStandardiser(cortex.out_features))
    elif variant == "gn":
        model.cortices["visual"] = with_groupnorm(cortex)
    return model


def bce(z: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return nn.functional.binary_cross_entropy_with_logits(z, y)


@torch.no_grad()
def evaluate(model: nn.Module, ds: SequenceDataset, batch_size: int) -> dict:
    """Val BCE over contiguous streams with carried state, and per-action mean probability / label rate."""
    model.eval()
    loss_sum, n, probs, labels = 0.0, 0, [], []
    hx = None
    for indices, active in stream_batches(ds, batch_size):
        batch = ds.load_batch(indices)
        if hx is None:
            hx = model.initial_state(len(indices))
        hx = model.reset_rows(hx, batch.is_first)
        logits, hx = model(batch.inputs, hx)
        rows = torch.from_numpy(active)
        z, y = logits[rows], batch.targets[rows]
        loss_sum += float(bce(z, y)) * z.numel()
        n += z.numel()
        probs.append(torch.sigmoid(z).flatten(0, 1))
        labels.append(y.flatten(0, 1))
    model.train()
    p, y = torch.cat(probs), torch.cat(labels)
    return {
        "val_bce": loss_sum / n,
        "pred_rate": p.mean(0).tolist(),
        "label_rate": y.mean(0).tolist(),
        "pred_std": p.std(0).tolist(),
    }


def rates_only(train_ds: SequenceDataset, val_ds: SequenceDataset, batch_size: int) -> float:
    """BCE on the validation labels of predicting each action's training frequency at every step."""

    def labels(ds):
        out = []
        for indices, active in stream_batches(ds, batch_size):
            out.append(ds.load_batch(indices).targets[torch.from_numpy(active)].flatten(0, 1))
        return torch.cat(out)

    q = labels(train_ds).mean(0).clamp(1e-6, 1 - 1e-6)
    y = labels(val_ds)
    return float(bce(torch.logit(q).expand_as(y), y))


@torch.no_grad()
def feature_stats(model: nn.Module, ds: SequenceDataset) -> dict:
    """Cortex (+normaliser) features on a few contiguous windows: mean, std, per-feature std across frames, step
    change."""
    model.eval()
    batch = ds.load_batch(np.arange(min(16, len(ds))))
    f = model.encode(batch.inputs)  # [B, T, F]
    model.train()
    flat = f.flatten(0, 1)
    return {
        "feat_mean": float(flat.mean()),
        "feat_std": float(flat.std()),
        "feat_std_across_frames": float(flat.std(0).mean()),
        "feat_step_change_std": float((f[:, 1:] - f[:, :-1]).std()),
    }


def bn_checks(model: nn.Module, train_ds, val_ds, sampler, batch_size: int) -> dict:
    """BatchNorm consistency: val BCE with batch statistics, and after re-estimating running stats at fixed weights."""
    import copy

    probe = copy.deepcopy(model)
    bns = [m for m in probe.modules() if isinstance(m, nn.BatchNorm1d)]
    out = {}
    with torch.no_grad():
        for m in bns:
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the batches below
        hx = probe.initial_state(batch_size)
        probe.train()
        for k, indices in enumerate(sampler):
            batch = train_ds.load_batch(indices)
            hx = probe.reset_rows(hx, batch.is_first)
            _, hx = probe(batch.inputs, hx)
            if k == 30:
                break
    out["val_bce_recalibrated"] = evaluate(probe, val_ds, batch_size)["val_bce"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--variant", choices=VARIANTS, default="base")
    ap.add_argument("--model", default="cfc")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--every", type=int, default=150)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--length", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cpu = torch.device("cpu")
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    settings = GolemSettings().model_copy(deep=True)
    settings.brain.model = args.model
    settings.brain.feature_norm = "batch" if args.variant == "product" else "none"
    settings.training.sequence_length = args.length
    settings.training.batch_size = args.batch
    settings.training.recovery_ratio = 0.0
    registry = load_plugins().registry
    spec = ModelSpec.from_settings(settings, registry)
    with TrajectoryStore.open(args.store) as store:
        ds = SequenceDataset.from_store(
            store, spec.sensors, spec.action_names, settings.training, include_recovery=False, profile=spec.profile
        )
        train_ds, val_ds = ds.split(settings.training.validation_split, settings.training.seed)
        x = frame_stats(train_ds, 64, rng)
        head = {
            "variant": args.variant,
            "model": args.model,
            "store": str(args.store),
            "train_steps_data": int(sum(i.length for i in train_ds.episodes.values())),
            "val_steps_data": int(sum(i.length for i in val_ds.episodes.values())),
            "input_min": float(x.min()),
            "input_max": float(x.max()),
            "input_channel_mean": x.mean((0, 2, 3)).tolist(),
            "input_channel_std": x.std((0, 2, 3)).tolist(),
            "input_pixel_std_across_frames": float(x.std(0).mean()),
            "rates_only_bce": rates_only(train_ds, val_ds, args.batch),
        }
        model = build(args.variant, spec, registry, train_ds, rng)
        model.train()
        head |= feature_stats(model, val_ds)
        print(json.dumps(head), flush=True)
        sampler = registry.get("samplers", "stateful").obj(train_ds, settings)
        opt = torch.optim.Adam(model.parameters(), lr=settings.training.learning_rate)
        hx = model.initial_state(args.batch)
        step, t0, train_sum = 0, time.perf_counter(), 0.0
        while step < args.steps:
            for indices in sampler:
                batch = train_ds.load_batch(indices)
                hx = model.reset_rows(hx, batch.is_first)
                logits, hx = model(batch.inputs, hx)
                loss = bce(logits, batch.targets)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                hx = hx.detach()
                train_sum += float(loss.detach())
                step += 1
                if step % args.every == 0 or step == args.steps:
                    if args.variant == "product":  # as `golem run train` does before validating
                        recalibrate_norms(model, train_ds, calibration_windows(train_ds, args.batch, 8, step), cpu)
                    out = {
                        "variant": args.variant,
                        "model": args.model,
                        "step": step,
                        "seconds": round(time.perf_counter() - t0, 1),
                        "train_bce": train_sum / args.every,
                    } | evaluate(model, val_ds, args.batch)
                    out |= feature_stats(model, val_ds)
                    if any(isinstance(m, nn.BatchNorm1d) for m in model.modules()):
                        out |= bn_checks(model, train_ds, val_ds, sampler, args.batch)
                    out["rates_only_bce"] = head["rates_only_bce"]
                    train_sum = 0.0
                    print(json.dumps(out), flush=True)
                if step >= args.steps:
                    break


if __name__ == "__main__":
    main()
