"""Trajectory-store benchmark (not a test): LMDB window reads vs in-memory numpy, and reader RSS vs store size.

Run: ``.venv/bin/python bench/bench_store.py`` (about 2-3 minutes; flags scale it).
Writes ``bench/results/store.json`` and prints a rich table.

1. Throughput — batches of ``B`` windows of ``L`` steps over every modality
   (frames uint8 [3,64,64], depths/thermals uint8 [1,64,64], audios float16
   [2,N], actions uint8 [8]), copied into one preallocated batch per key, as a
   sampler does. The same (episode, start) draws are read from LMDB
   window by window (``StoreReader.read_into``), a whole batch per key in one
   call (``StoreReader.read_batch``, what training uses) and from numpy arrays
   held in memory; starts are multiples of ``L`` (the sampler's stride) and,
   separately, arbitrary.
2. Memory — for stores of several sizes, a fresh subprocess iterates the whole
   store ``--passes`` times in windows; it reports peak RSS (VmHWM), and the
   peak of anonymous (private heap) RSS. File pages of the memory map count in
   VmHWM while cached but are shared, clean and reclaimable page cache.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from golem.data.store import EpisodeMeta, TrajectoryStore
from golem.profiles import BASIC

KEYS = ("frames", "depths", "thermals", "audios", "actions")


def step_shapes(audio_n: int) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    return {
        "frames": ((3, 64, 64), np.dtype(np.uint8)),
        "depths": ((1, 64, 64), np.dtype(np.uint8)),
        "thermals": ((1, 64, 64), np.dtype(np.uint8)),
        "audios": ((2, audio_n), np.dtype(np.float16)),
        "actions": ((len(BASIC),), np.dtype(np.uint8)),
    }


def step_bytes(audio_n: int) -> int:
    return sum(int(np.prod(s)) * d.itemsize for s, d in step_shapes(audio_n).values()) + 4  # + rewards


def template(T: int, audio_n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for key, (shape, dtype) in step_shapes(audio_n).items():
        if key == "actions":
            out[key] = rng.integers(0, 2, (T, *shape), dtype=np.uint8)
        elif dtype == np.uint8:
            out[key] = rng.integers(0, 256, (T, *shape), dtype=np.uint8)
        else:
            out[key] = rng.standard_normal((T, *shape)).astype(dtype)
    return out


def build(path: Path, total_steps: int, episode_steps: int, audio_n: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """A store of ``total_steps`` steps in episodes of ``episode_steps``; returns the arrays written (views of one
    template)."""
    rng = np.random.default_rng(seed)
    base = template(episode_steps, audio_n, rng)
    written = []
    meta = dict(
        profile="basic", action_names=list(BASIC), scenario="bench", sensors=["visual", "depth", "thermal", "audio"]
    )
    with TrajectoryStore.create(path) as store:
        remaining = total_steps
        n = 0
        while remaining > 0:
            T = min(episode_steps, remaining)
            arrays = {k: v[:T].copy() for k, v in base.items()}
            arrays["frames"][:, 0, 0, 0] = n % 256
            store.write_episode(EpisodeMeta(**meta), arrays)  # type: ignore[arg-type]
            written.append(arrays)
            remaining -= T
            n += 1
    return written


def draws(
    lengths: list[int], B: int, L: int, n: int, aligned: bool, rng: np.random.Generator
) -> list[list[tuple[int, int]]]:
    out = []
    for _ in range(n):
        batch = []
        for _ in range(B):
            e = int(rng.integers(len(lengths)))
            if aligned:
                s = int(rng.integers(lengths[e] // L)) * L
            else:
                s = int(rng.integers(lengths[e] - L + 1))
            batch.append((e, s))
        out.append(batch)
    return out


def bench_throughput(args: argparse.Namespace, work: Path) -> dict:
    steps = int(args.throughput_mb * 2**20 / step_bytes(args.audio_n))
    path = work / "throughput"
    memory = build(path, steps, args.episode_steps, args.audio_n)
    shapes = step_shapes(args.audio_n)
    batch = {k: np.empty((args.B, args.L, *s), dtype=d) for k, (s, d) in shapes.items()}
    result = {
        "steps": steps,
        "B": args.B,
        "L": args.L,
        "audio_n": args.audio_n,
        "batch_bytes": sum(b.nbytes for b in batch.values()),
    }
    rng = np.random.default_rng(1)
    with TrajectoryStore.open(path) as store:
        infos = store.episodes()
        lengths = [i.length for i in infos]
        for aligned in (True, False):
            plan = draws(lengths, args.B, args.L, args.batches, aligned, rng)

            def numpy_reads(plan=plan) -> None:
                for row in plan:
                    for b, (e, s) in enumerate(row):
                        arrays = memory[e]
                        for k in KEYS:
                            batch[k][b] = arrays[k][s : s + args.L]

            def lmdb_reads(plan=plan) -> None:
                for row in plan:
                    with store.reader() as r:
                        for b, (e, s) in enumerate(row):
                            info = infos[e]
                            for k in KEYS:
                                r.read_into(batch[k][b], info, k, s)

            batched_plan = [([infos[e] for e, _ in row], [s for _, s in row], [args.L] * len(row)) for row in plan]

            def lmdb_batched(batched_plan=batched_plan) -> None:
                for eps, starts, lengths in batched_plan:
                    with store.reader() as r:
                        for k in KEYS:
                            r.read_batch(batch[k], eps, starts, lengths, k)

            lmdb_reads()  # warm the page cache, as a training epoch after the first would
            timings = {}
            for name, fn in (("numpy", numpy_reads), ("lmdb", lmdb_reads), ("lmdb_batched", lmdb_batched)):
                best = float("inf")
                for _ in range(args.repeats):
                    t0 = time.perf_counter()
                    fn()
                    best = min(best, time.perf_counter() - t0)
                timings[name] = args.batches / best
            result["aligned" if aligned else "unaligned"] = {
                "numpy_batches_per_s": timings["numpy"],
                "lmdb_batches_per_s": timings["lmdb"],
                "ratio": timings["lmdb"] / timings["numpy"],
                "lmdb_batched_batches_per_s": timings["lmdb_batched"],
                "batched_ratio": timings["lmdb_batched"] / timings["numpy"],
                "lmdb_MiB_per_s": timings["lmdb"] * result["batch_bytes"] / 2**20,
            }
    shutil.rmtree(path)
    return result


ITERATE = r"""
import json, sys
import numpy as np
from golem.data.store import TrajectoryStore

def status():
    fields = {}
    for line in open("/proc/self/status"):
        k, _, v = line.partition(":")
        if k in ("VmHWM", "VmRSS", "RssAnon", "RssFile"):
            fields[k] = int(v.split()[0]) * 1024
    return fields

path, L, passes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
peak_anon = 0
steps = 0
with TrajectoryStore.open(path) as store:
    infos = store.episodes()
    out = {k: np.empty((L, *spec.step_shape), dtype=spec.dtype) for k, spec in infos[0].arrays.items()}
    start = status()
    for _ in range(passes):
        for info in infos:
            with store.reader() as r:
                for s in range(0, info.length - L + 1, L):
                    for k in out:
                        r.read_into(out[k], info, k, s)
                    steps += L
            peak_anon = max(peak_anon, status()["RssAnon"])
end = status()
print(json.dumps({"steps_read": steps, "start": start, "end": end, "peak_anon": peak_anon}))
"""


def bench_memory(args: argparse.Namespace, work: Path) -> list[dict]:
    rows = []
    for mb in args.sizes_mb:
        path = work / f"mem{mb}"
        steps = int(mb * 2**20 / step_bytes(args.audio_n))
        t0 = time.perf_counter()
        build(path, steps, args.episode_steps, args.audio_n)
        write_s = time.perf_counter() - t0
        proc = subprocess.run(
            [sys.executable, "-c", ITERATE, str(path), str(args.L), str(args.passes)],
            capture_output=True,
            text=True,
            check=True,
        )
        rep = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.append(
            {
                "store_MiB": (path / "data.mdb").stat().st_size / 2**20,
                "steps": steps,
                "write_MiB_per_s": mb / write_s,
                "passes": args.passes,
                "vmhwm_MiB": rep["end"]["VmHWM"] / 2**20,
                "peak_anon_MiB": rep["peak_anon"] / 2**20,
                "rss_file_end_MiB": rep["end"]["RssFile"] / 2**20,
                "anon_at_open_MiB": rep["start"]["RssAnon"] / 2**20,
            }
        )
        shutil.rmtree(path)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--B", type=int, default=32)
    p.add_argument("--L", type=int, default=32)
    p.add_argument("--audio-n", type=int, default=2520)
    p.add_argument("--episode-steps", type=int, default=1000)
    p.add_argument("--throughput-mb", type=float, default=256, help="store size for the throughput run")
    p.add_argument("--batches", type=int, default=100)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--sizes-mb", type=lambda s: [int(x) for x in s.split(",")], default=[256, 512, 1024])
    p.add_argument("--passes", type=int, default=2)
    p.add_argument("--budget-mb", type=int, default=128, help="anonymous-RSS budget the reader must stay under")
    p.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a temp dir)")
    p.add_argument("--out", type=Path, default=Path(__file__).with_name("results") / "store.json")
    args = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="golem-bench-", dir=args.dir))
    console = Console()
    try:
        with console.status("throughput…"):
            throughput = bench_throughput(args, work)
        with console.status("memory…"):
            memory = bench_memory(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "throughput": throughput,
        "memory": memory,
        "budget_anon_MiB": args.budget_mb,
        "anon_within_budget": all(r["peak_anon_MiB"] <= args.budget_mb for r in memory),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=2))
    tmp.replace(args.out)

    t = Table(
        title=f"window reads: B={args.B} L={args.L}, all modalities ({throughput['batch_bytes'] / 2**20:.1f} MiB/batch)"
    )
    for c in (
        "starts",
        "numpy batches/s",
        "lmdb per window",
        "lmdb/numpy",
        "lmdb read_batch",
        "read_batch/numpy",
        "lmdb MiB/s",
    ):
        t.add_column(c, justify="right")
    for key in ("aligned", "unaligned"):
        r = throughput[key]
        t.add_row(
            key,
            f"{r['numpy_batches_per_s']:.1f}",
            f"{r['lmdb_batches_per_s']:.1f}",
            f"{r['ratio']:.2f}",
            f"{r['lmdb_batched_batches_per_s']:.1f}",
            f"{r['batched_ratio']:.2f}",
            f"{r['lmdb_MiB_per_s']:.0f}",
        )
    console.print(t)
    m = Table(title=f"reader memory while iterating the whole store x{args.passes} (anon budget {args.budget_mb} MiB)")
    for c in ("store MiB", "steps", "write MiB/s", "peak anon RSS MiB", "VmHWM MiB", "file-backed RSS at end MiB"):
        m.add_column(c, justify="right")
    for r in memory:
        m.add_row(
            f"{r['store_MiB']:.0f}",
            str(r["steps"]),
            f"{r['write_MiB_per_s']:.0f}",
            f"{r['peak_anon_MiB']:.1f}",
            f"{r['vmhwm_MiB']:.0f}",
            f"{r['rss_file_end_MiB']:.0f}",
        )
    console.print(m)
    console.print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
