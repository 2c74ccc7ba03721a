"""The main job's result: `golem demo` end to end, the trained agent judged over 100 unseen episodes.

Writes bench/results/demo.json (timings, per-policy mean ± std, the model's share
of the expert's score) and prints the scoreboard. The issue's target: the
trained agent reaches at least 80% of the expert's mean score on `basic`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--eval-episodes", type=int, default=100, help="evaluation episodes per policy")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "demo.json")
    args = parser.parse_args()
    golem = Path(sys.executable).with_name("golem")
    work = Path(tempfile.mkdtemp(prefix="golem-bench-demo-"))
    try:
        proc = subprocess.run(
            [
                str(golem),
                "--log-level",
                "warning",
                "demo",
                "--out",
                str(work / "demo"),
                "--eval-episodes",
                str(args.eval_episodes),
                "--workers",
                str(args.workers),
            ],
            cwd=work,
            check=False,
        )
        if proc.returncode != 0:
            return proc.returncode
        result = json.loads((work / "demo" / "reports" / "demo.json").read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["target_share"] = 0.8
    result["meets_target"] = result["share"]["raw"] is not None and result["share"]["raw"] >= 0.8
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    table = Table(title=f"golem demo: {args.eval_episodes} unseen episodes per policy on basic")
    for col in ("policy", "return (mean ± std)", "kills"):
        table.add_column(col)
    for role, stats in result["summary"]["policies"].items():
        r, k = stats["return"], stats["kills"]
        table.add_row(role, f"{r['mean']:.2f} ± {r['std']:.2f}", f"{k['mean']:.2f}")
    console = Console()
    console.print(table)
    console.print(
        f"model / expert = {result['share']['raw']:.1%}; (model − random)/(expert − random) = "
        f"{result['share']['normalised']:.1%}; total {result['total_s']:.0f} s {result['timings_s']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
