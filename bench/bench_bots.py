"""Agents against the engine's bots: frags of one player and of each bot over matches on ``cig``.

Every contestant (``--agent``, repeatable: a checkpoint path, ``expert:NAME`` or ``random``, each with an
optional ``LABEL=`` in front) plays ``--matches`` matches of ``--tics`` tics (default 5 of 2,100, 60 s of
game) against ``--bots`` built-in bots (default 2) through ``golem run match``, one seed per match
(1, 2, …, the same seeds for every contestant). Reported per contestant: its frags, deaths and kills per
match (mean and standard error), each bot's frags per match, and whether it scored more frags than
either bot on average. A suicide counts −1 frag, as the engine counts it.

Results go to ``bench/results/bots.json`` (merged per contestant label); ``--table`` prints the table the
docs show.

    python bench/bench_bots.py --agent cloned=/path/to/deathmatch.safetensors --agent expert:deathmatch
    python bench/bench_bots.py --table
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from console import golem  # bench/ is on the path when a benchmark runs as a script

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bots.json"


def _load() -> dict[str, Any]:
    return json.loads(RESULTS.read_text()) if RESULTS.exists() else {"contestants": {}}


def _save(results: dict[str, Any]) -> None:
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    tmp = RESULTS.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=2) + "\n")
    os.replace(tmp, RESULTS)


def _stat(values: list[float]) -> dict[str, float]:
    """Mean and standard error (0 for one value)."""
    n = len(values)
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return {"mean": round(mean, 3), "se": round(math.sqrt(var / n), 3)}


def play(agent: str, bots: int, tics: int, seed: int) -> dict[str, Any]:
    """One match of ``agent`` against ``bots`` bots; the player's and the bots' figures."""
    out = json.loads(
        golem(
            "run", "match", "--agents", agent, "--bots", str(bots), "--tics", str(tics), "--seed", str(seed), "--json"
        )
    )
    player = out["players"][0]
    return {
        "seed": seed,
        "frags": player["frags"],
        "deaths": player["deaths"],
        "kills": player.get("kills"),
        "bots": [b["frags"] for b in out["bots"]],
        "tics": out["game_tics"],
    }


def contest(agent: str, bots: int, tics: int, matches: int) -> dict[str, Any]:
    """``matches`` matches of ``agent`` (seeds 1…``matches``) and their summary."""
    played = [play(agent, bots, tics, seed) for seed in range(1, matches + 1)]
    per_bot = [_stat([float(m["bots"][k]) for m in played]) for k in range(bots)]
    frags = _stat([float(m["frags"]) for m in played])
    return {
        "agent": agent,
        "bots": bots,
        "tics": tics,
        "matches": played,
        "frags": frags,
        "deaths": _stat([float(m["deaths"]) for m in played]),
        "bot_frags": per_bot,
        "beats_every_bot": all(frags["mean"] > b["mean"] for b in per_bot),
    }


def table(results: dict[str, Any]) -> str:
    """Markdown: per contestant, frags and deaths per match against each bot's frags."""
    head = [
        "player",
        "matches × tics",
        "frags / match",
        "deaths / match",
        "each bot's frags / match",
        "more than either bot",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for label, c in results.get("contestants", {}).items():
        bots = ", ".join(f"{b['mean']:.1f} ± {b['se']:.1f}" for b in c["bot_frags"])
        cells = [
            label,
            f"{len(c['matches'])} × {c['tics']:,}",
            f"{c['frags']['mean']:.1f} ± {c['frags']['se']:.1f}",
            f"{c['deaths']['mean']:.1f} ± {c['deaths']['se']:.1f}",
            bots,
            "yes" if c["beats_every_bot"] else "no",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    when = results.get("when", "")[:10]
    lines.append("")
    lines.append(f"`cig`, {results.get('bots', '?')} bots, seeds 1…; {results.get('machine', '')}, {when}.")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", action="append", default=None, help="[LABEL=]checkpoint, expert:NAME or random")
    parser.add_argument("--bots", type=int, default=2)
    parser.add_argument("--tics", type=int, default=2100)
    parser.add_argument("--matches", type=int, default=5)
    parser.add_argument("--table", action="store_true", help="print the table from the stored results")
    args = parser.parse_args()
    results = _load()
    if args.table:
        print(table(results))
        return
    for spec in args.agent or ["expert:deathmatch", "random"]:
        label, _, agent = spec.rpartition("=") if "=" in spec else ("", "", spec)
        label = label or agent
        results.setdefault("contestants", {})[label] = contest(agent, args.bots, args.tics, args.matches)
        results.update(
            bots=args.bots,
            when=datetime.now(UTC).isoformat(timespec="seconds"),
            machine=f"{platform.machine()}, {os.cpu_count()} cores",
        )
        _save(results)
    print(table(results))


if __name__ == "__main__":
    main()
