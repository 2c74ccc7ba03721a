"""Is the dream as deadly as the real game? Fixed policies in both, for one trained world-model run
(:mod:`golem_worldmodel.calibration`, the figures ``golem dream iterate`` gates on).

CMA-ES maximises survival *in the dream*; a controller is only as good as the
dream is honest. For a run folder (``golem dream collect … train-rnn``) this
plays the same fixed policies in M's dream and in the real engine and reports
their survival side by side:

* ``noop``, ``left``, ``right`` — one discrete action every tic (what a
  collapsed controller does), ``random`` — a uniform random action every tic,
  and ``controller`` — the run's CMA-ES mean, when the run has one;
* dream: ``--dreams`` dreams from the first steps of collected episodes
  (``t0`` = the warm-up, as a real episode starts), τ and the termination rule of
  the run's preset; survival in tics including the warm-up;
* real: ``--episodes`` engine episodes from seed 60,000 (unseen by training,
  the real-engine checks and the evaluation), with the run's
  ``screen_flashes``.

It also scores M's death head *teacher-forced* on the collected episodes: the
share of deaths where ``p_done > 0.5`` on the dying step, the false-positive
rate elsewhere, and how many steps ahead it first fires. A head that fires on
the dying frames but a dream that survives far longer than the engine means M
does not *generate* what kills the player. Results go to
``bench/results/dream_calibration.json`` keyed by ``--key`` (default: the run
folder's name).

With an ensemble (``--members N``, the run trained with ``dream.rnn_members``
≥ N) the dream draws a member per step and dies as ``--death`` says; the death
head is member 0's.

Usage: ``python bench/bench_dream_calibration.py --run DIR [--episodes 10] [--dreams 256] [--members N] [--key NAME]``
"""

from __future__ import annotations

import argparse
import json
import platform
from datetime import UTC, datetime
from pathlib import Path

import torch
from rich.console import Console
from rich.table import Table

from golem.logs import configure_logging
from golem.settings import GolemSettings
from golem_worldmodel.calibration import calibrate, death_head
from golem_worldmodel.evolution import load_controller
from golem_worldmodel.latents import load_latents
from golem_worldmodel.paths import RunPaths
from golem_worldmodel.presets import Preset
from golem_worldmodel.training import load_ensemble, load_rnn, load_vae

RESULTS = Path(__file__).resolve().parent / "results" / "dream_calibration.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, type=Path, help="a world-model run folder with a trained MDN-RNN")
    ap.add_argument("--episodes", type=int, default=10, help="real episodes per policy")
    ap.add_argument("--dreams", type=int, default=256, help="dreams per policy")
    ap.add_argument("--temperature", type=float, default=None, help="dream τ (default: the run's preset)")
    ap.add_argument(
        "--real",
        default=True,
        action=argparse.BooleanOptionalAction,
        help="also play the real engine (--no-real: the dream only)",
    )
    ap.add_argument(
        "--members",
        type=int,
        default=None,
        help="MDN-RNN ensemble size to dream with (default: the run's dream.rnn_members; needs mdnrnn_<i> files)",
    )
    ap.add_argument("--death", choices=("max", "drawn"), default=None, help="ensemble death rule (default: the run's)")
    ap.add_argument("--key", default=None)
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    configure_logging(level="warning")
    torch.set_num_threads(1)
    console = Console()

    paths = RunPaths(args.run)
    preset = Preset.from_dict(json.loads((args.run / "preset.json").read_text()))
    preset = preset.with_overrides(temperature=args.temperature, rnn_members=args.members, ensemble_death=args.death)
    vae, rnn = load_vae(paths.vae), load_rnn(paths.rnn)
    members, _ = load_ensemble(paths, preset.rnn_members)
    latents, _ = load_latents(paths.latents)
    controller = load_controller(paths.controller, "mean")[0] if paths.controller.is_file() else None
    rows = calibrate(
        GolemSettings(),
        preset_scenario(args.run),
        preset,
        vae,
        rnn,
        members,
        latents,
        controller,
        dreams=args.dreams,
        episodes=args.episodes,
        real=args.real,
    )
    for name, r in rows.items():
        console.print(
            f"{name}: dream {r['dream'][0]:.0f} ± {r['dream'][1]:.0f}, real {r['real'][0]:.0f} ± {r['real'][1]:.0f}"
        )
    head = death_head(rnn.eval(), latents)

    ensemble = f", {preset.rnn_members} members, death {preset.ensemble_death}" if preset.rnn_members > 1 else ""
    table = Table(title=f"{args.run}: survival in tics, dream (τ {preset.temperature}{ensemble}) vs real")
    for col in ("policy", "dream", "real", "dream / real"):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for name, r in rows.items():
        table.add_row(
            name, "{:.0f} ± {:.0f}".format(*r["dream"]), "{:.0f} ± {:.0f}".format(*r["real"]), f"{r['ratio']:.1f}×"
        )
    console.print(table)
    console.print(
        f"death head, teacher-forced: fires on {100 * head['fires_on_death_step']:.0f} % of the dying steps, "
        f"false positives {100 * head['false_positive_rate']:.2f} %, first fires a median "
        f"{head['median_steps_ahead']:.0f} step(s) ahead"
    )

    results = json.loads(args.out.read_text()) if args.out.is_file() else {}
    results[args.key or args.run.name] = {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "run": str(args.run),
        "preset": preset.to_dict(),
        "episodes": args.episodes,
        "dreams": args.dreams,
        "policies": rows,
        "death_head": head,
        "machine": platform.machine(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(results, indent=2))
    tmp.replace(args.out)


def preset_scenario(run: Path) -> str:
    """The scenario of the run's collected episodes."""
    from golem.data.store import TrajectoryStore

    with TrajectoryStore.open(RunPaths(run).store) as store:
        return store.episodes()[0].meta.scenario


if __name__ == "__main__":
    main()
