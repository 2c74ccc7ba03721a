"""Multiplayer speed and lockstep: tics per second of 2- and 4-agent matches against one player alone on the same map.

Every player is a CfC agent (an untrained checkpoint: the same per-tic work —
sensors, tensors, one model step — as a trained one) in its own process and
engine, on ``cig``. The single-player baseline plays the same map with the
same agent through the same rollout loop in a network game of one (``cig.wad``
crashes the engine outside a network game). Reported per
run: game tics per second of wall time, and each player's decision p50/p99.

A last pair of runs shows why the match holds local players with a tic
barrier: the random policy (≈0.03 ms a decision) hosts and an agent (≈2 ms)
joins, with and without it. Without it the engine's netcode lets the host run
ahead of the slower joiner, whose engine then runs two tics per decision
(tic steps above 1, the players far apart at the same step); with it every
step is one tic on every engine. (A slower *host* holds everyone back by
itself: the joiners wait for its commands.)

Results go to ``bench/results/match.json``; ``--table`` prints the README table.

    python bench/bench_match.py --tics 2100
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "match.json"


def checkpoint(path: Path) -> Path:
    """An untrained CfC checkpoint for the default settings (profile basic, visual sensor)."""
    import torch

    from golem.learning.checkpoints import save_checkpoint
    from golem.learning.modelspec import ModelSpec
    from golem.plugins import load_plugins
    from golem.settings import GolemSettings

    registry = load_plugins().registry
    torch.manual_seed(0)
    spec = ModelSpec.from_settings(GolemSettings(), registry)
    return save_checkpoint(path, registry.get("models", "cfc").obj(spec), spec.to_metadata())


def single(model: Path, tics: int) -> dict[str, Any]:
    """The agent alone on cig: tics per second and decision times.

    ``cig.wad`` crashes the engine outside a network game, so "alone" is a network game of one
    (``-host 1``: the netcode runs, with no peer to wait for).
    """
    from golem.plugins import load_plugins
    from golem.runtime.agent import load_agent
    from golem.runtime.netgame import free_port, host_args
    from golem.runtime.rollout import run_episode
    from golem.runtime.session import Session
    from golem.settings import GolemSettings
    from golem.workflows.recording import build_sensors

    settings = GolemSettings()
    registry = load_plugins().registry
    agent = load_agent(model, registry, 0.5)

    class Limit:
        def configure(self, game: Any) -> None:
            game.set_episode_timeout(tics)

    alone = host_args(1, free_port(), "deathmatch", name="p1")
    with Session(
        settings, build_sensors(settings, registry), scenario="cig", configurers=[Limit()], extra_args=alone
    ) as session:
        agent.check_session(session)
        started = time.perf_counter()
        result = run_episode(session, agent, 0)
        seconds = time.perf_counter() - started
    decide = np.asarray(agent.decide_ns, dtype=np.float64) + np.asarray(agent.sense_ns, dtype=np.float64)
    return {
        "players": 1,
        "tics": result.tics,
        "seconds": round(seconds, 3),
        "tics_per_second": round(result.tics / seconds, 1),
        "decision_p50_ms": [round(float(np.percentile(decide, 50)) / 1e6, 3)],
        "decision_p99_ms": [round(float(np.percentile(decide, 99)) / 1e6, 3)],
    }


def match(kinds: list[str], model: Path, tics: int, *, barrier: bool = True) -> dict[str, Any]:
    from golem.runtime.netgame import free_port
    from golem.settings import GolemSettings
    from golem_match.match import MatchPlan, PlayerSpec, play_match

    base = GolemSettings().model_dump_json()
    players = [
        PlayerSpec(f"p{i + 1}", kind, str(model) if kind == "model" else None, base, 0.5)  # type: ignore[arg-type]
        for i, kind in enumerate(kinds)
    ]
    plan = MatchPlan(players=players, slots=len(players), tics=tics, port=free_port(), barrier=barrier)
    report, _ = play_match(plan)
    logs = [report.tic_log[p.name] for p in players]
    multi = [float(np.mean(np.diff(np.asarray(x["tic"])) > 1)) for x in logs]
    return {
        "players": len(players),
        "kinds": kinds,
        "barrier": barrier,
        "tics": report.game_tics,
        "seconds": report.seconds,
        "tics_per_second": report.tics_per_second,
        "decision_p50_ms": [p.decision_p50_ms for p in report.players],
        "decision_p99_ms": [p.decision_p99_ms for p in report.players],
        "max_tic_spread": report.lockstep["max_tic_spread"],
        "tic_steps": report.lockstep["steps"],
        "share_of_steps_over_one_tic": [round(m, 4) for m in multi],
    }


def table(results: dict[str, Any]) -> str:
    base = results["runs"]["single"]["tics_per_second"]
    lines = [
        "| run | players | tics/s | vs one player alone | decision p99 per player (ms) | tic steps | largest tic gap |",
        "|---|---|---|---|---|---|---|",
    ]
    labels = {
        "single": "one agent alone (network game of one)",
        "agents2": "2 agents",
        "agents4": "4 agents",
        "mixed_barrier": "random hosts, agent joins: tic barrier",
        "mixed_netcode": "random hosts, agent joins: netcode only",
    }
    for key, label in labels.items():
        r = results["runs"].get(key)
        if r is None:
            continue
        p99 = ", ".join(f"{v:.2f}" for v in r["decision_p99_ms"])
        steps = "{" + ", ".join(str(s) for s in r.get("tic_steps", [1])) + "}"
        gap = r.get("max_tic_spread", "–")
        lines.append(
            f"| {label} | {r['players']} | {r['tics_per_second']:.0f} | {r['tics_per_second'] / base:.2f}× "
            f"| {p99} | {steps} | {gap} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tics", type=int, default=2100, help="tics per run (2100 = one minute of game)")
    parser.add_argument("--table", action="store_true", help="print the README table of the stored results")
    args = parser.parse_args()
    if args.table:
        print(table(json.loads(RESULTS.read_text())))
        return
    runs: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="golem-bench-match-") as tmp:
        model = checkpoint(Path(tmp) / "agent.safetensors")
        for key, run in (
            ("single", lambda: single(model, args.tics)),
            ("agents2", lambda: match(["model"] * 2, model, args.tics)),
            ("agents4", lambda: match(["model"] * 4, model, args.tics)),
            ("mixed_barrier", lambda: match(["random", "model"], model, args.tics)),
            ("mixed_netcode", lambda: match(["random", "model"], model, args.tics, barrier=False)),
        ):
            runs[key] = run()
            print(key, json.dumps(runs[key]), flush=True)
    results = {"when": datetime.now(UTC).isoformat(timespec="seconds"), "tics": args.tics, "map": "cig", "runs": runs}
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(table(results))


if __name__ == "__main__":
    main()
