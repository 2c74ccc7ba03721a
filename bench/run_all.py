"""Run every benchmark in turn with its default size; each writes bench/results/<name>.json.

    .venv/bin/python bench/run_all.py              # all of them
    .venv/bin/python bench/run_all.py store train  # some of them

Benchmarks measure ratios side by side in one run (the machines are noisy);
run them on an otherwise idle machine for figures worth quoting.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORDER = ["store", "record", "experts", "train", "precision", "augment", "latency", "demo", "dream", "match", "tune"]


def main(names: list[str]) -> int:
    chosen = names or ORDER
    unknown = [n for n in chosen if n not in ORDER]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(ORDER)}", file=sys.stderr)
        return 2
    failed = []
    for name in chosen:
        started = time.perf_counter()
        print(f"== bench_{name}.py", flush=True)
        proc = subprocess.run([sys.executable, str(HERE / f"bench_{name}.py")], check=False)
        print(f"== bench_{name}.py: exit {proc.returncode} in {time.perf_counter() - started:.0f} s", flush=True)
        if proc.returncode != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
