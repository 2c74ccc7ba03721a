"""``golem dream …``: the world-model pipeline, one resumable command per stage.

    collect → train-vae → train-rnn → train-controller → evaluate → render

``iterate`` runs the first four, then rounds of collecting with the evolved
controller, refitting V and M and re-evolving (:mod:`golem_worldmodel.rounds`).

Every stage writes one file in the run folder (``--run``, default
``<data.root>/dream/<scenario>``) and skips or continues from what is there.
The preset is fixed when the run folder is created (``preset.json``);
per-command flags override single values.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import numpy as np
import structlog
import typer
from rich.table import Table

from golem.learning.checkpoints import read_metadata
from golem_worldmodel import stages
from golem_worldmodel.context import Context
from golem_worldmodel.presets import PRESETS

log = structlog.get_logger("golem_worldmodel.commands")

app = typer.Typer(
    help="World models: collect, train V and M, evolve a controller in the dream, test it for real.",
    no_args_is_help=True,
)

RunOpt = Annotated[
    Optional[Path], typer.Option("--run", help="Run folder (default: <data.root>/dream/<scenario>).", metavar="DIR")
]
PresetOpt = Annotated[
    Optional[str], typer.Option("--preset", help=f"Sizes: {', '.join(PRESETS)} (default: the run's, else cpu).")
]
ScenarioOpt = Annotated[str, typer.Option("--scenario", "-s", help="ViZDoom scenario.")]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Random seed.")]
ThreadsOpt = Annotated[
    Optional[int],
    typer.Option(
        "--threads",
        min=1,
        max=256,
        help="Torch CPU threads (default: OMP_NUM_THREADS, else every core this process may use; 1 is fastest "
        "beside other heavy work).",
    ),
]
SetOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", help="Override a Golem setting, e.g. game.start_timeout=60.", metavar="KEY=VALUE"),
]


# --- stages ------------------------------------------------------------------


@app.command("collect")
def collect_command(
    ctx: typer.Context,
    run: RunOpt = None,
    preset: PresetOpt = None,
    scenario: ScenarioOpt = "take_cover",
    seed: SeedOpt = 0,
    episodes: Annotated[
        Optional[int], typer.Option("--episodes", "-n", min=1, help="Target episodes in the store.")
    ] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-w", min=1, max=64, help="Parallel engines.")] = None,
    threads: ThreadsOpt = None,
    set_: SetOpt = None,
) -> None:
    """Random rollouts (an action held 1–10 tics), then the preset's probe episodes (held 50–300 tics), into the \
run's store; episodes < 100 steps dropped."""
    c = Context(ctx, run, preset, scenario, set_, threads, creates=True, episodes=episodes, workers=workers)
    out = stages.collect_random(c, seed)
    c.out.print(
        f"collected {out['kept']} episodes ({out['existing']} already there, {out['dropped']} dropped as shorter than "
        f"{c.preset.min_length} steps) → {c.paths.store}"
    )


@app.command("train-vae")
def train_vae_command(
    ctx: typer.Context,
    run: RunOpt = None,
    preset: PresetOpt = None,
    scenario: ScenarioOpt = "take_cover",
    seed: SeedOpt = 0,
    epochs: Annotated[Optional[int], typer.Option("--epochs", min=1, help="Target epochs.")] = None,
    threads: ThreadsOpt = None,
    set_: SetOpt = None,
) -> None:
    """Train the convolutional VAE on the collected 64×64 frames (continues from its checkpoint)."""
    c = Context(ctx, run, preset, scenario, set_, threads, creates=True, vae_epochs=epochs)
    out = stages.train_vae(c, seed)
    c.out.print(f"VAE: {out['epochs']} epoch(s){' (already trained)' if out.get('skipped') else ''} → {c.paths.vae}")


@app.command("train-rnn")
def train_rnn_command(
    ctx: typer.Context,
    run: RunOpt = None,
    preset: PresetOpt = None,
    scenario: ScenarioOpt = "take_cover",
    seed: SeedOpt = 0,
    epochs: Annotated[Optional[int], typer.Option("--epochs", min=1, help="Target epochs.")] = None,
    threads: ThreadsOpt = None,
    set_: SetOpt = None,
) -> None:
    """Encode the frames (mu, logvar per frame), then train the MDN-RNN on sampled latents \
(dream.rnn_members of them)."""
    c = Context(ctx, run, preset, scenario, set_, threads, rnn_epochs=epochs)
    for i, out in enumerate(stages.train_rnn(c, seed)):
        path = c.paths.member(i)
        c.out.print(f"MDN-RNN: {out['epochs']} epoch(s){' (already trained)' if out.get('skipped') else ''} → {path}")


@app.command("train-controller")
def train_controller_command(
    ctx: typer.Context,
    run: RunOpt = None,
    preset: PresetOpt = None,
    scenario: ScenarioOpt = "take_cover",
    seed: SeedOpt = 0,
    generations: Annotated[
        Optional[int], typer.Option("--generations", "-g", min=1, help="Target generations.")
    ] = None,
    population: Annotated[Optional[int], typer.Option("--population", min=2, help="CMA-ES population.")] = None,
    rollouts: Annotated[Optional[int], typer.Option("--rollouts", min=1, help="Dreams per candidate.")] = None,
    temperature: Annotated[
        Optional[float], typer.Option("--temperature", "-t", min=0.0, help="Dream temperature τ.")
    ] = None,
    reward_mode: Annotated[Optional[str], typer.Option("--reward", help="predicted, survival or mix.")] = None,
    real_every: Annotated[
        Optional[int], typer.Option("--real-every", min=0, help="Generations between real-engine checks (0: never).")
    ] = None,
    termination: Annotated[
        Optional[str], typer.Option("--termination", help="threshold (p_done > 0.5) or sample (Bernoulli).")
    ] = None,
    threads: ThreadsOpt = None,
    set_: SetOpt = None,
) -> None:
    """Evolve the linear controller with CMA-ES inside the dream; the best is checked in the real engine \
every k generations."""
    c = Context(
        ctx,
        run,
        preset,
        scenario,
        set_,
        threads,
        generations=generations,
        population=population,
        rollouts=rollouts,
        temperature=temperature,
        reward_mode=reward_mode,
        real_every=real_every,
        termination=termination,
    )
    out = stages.train_controller(c, seed)
    c.out.print(
        f"controller: {out.get('generation', out.get('generations'))} generation(s), dream score of the CMA-ES mean "
        f"{out.get('dream_of_mean') or float('nan'):.1f}"
        + (f", real {out['real_mean']:.1f} over {out['real_episodes']} episode(s)" if "real_mean" in out else "")
        + f" → {c.paths.controller}"
    )


@app.command("iterate")
def iterate_command(
    ctx: typer.Context,
    run: RunOpt = None,
    preset: PresetOpt = None,
    scenario: ScenarioOpt = "take_cover",
    seed: SeedOpt = 0,
    rounds: Annotated[
        Optional[int],
        typer.Option("--rounds", "-k", min=0, max=100, help="Rounds after the first pipeline (default: dream.rounds)."),
    ] = None,
    stop_when_honest: Annotated[
        Optional[bool],
        typer.Option(
            "--stop-when-honest/--all-rounds",
            help="Stop once the dream is honest, or run every round (default: dream.stop_when_honest).",
        ),
    ] = None,
    threads: ThreadsOpt = None,
    set_: SetOpt = None,
) -> None:
    """The pipeline, then rounds of: collect with the kept controller (plus ε-random holds), fine-tune V and M \
on all data, re-evolve from the kept controller, check it for real and calibrate the dream.

    Stops once the dream is honest (held actions and controller within dream.honest_ratio× of the engine).
    Resumable; every round is one entry of <run>/rounds.json.
    """
    from golem_worldmodel.rounds import iterate, load_rounds

    c = Context(
        ctx,
        run,
        preset,
        scenario,
        set_,
        threads,
        creates=True,
        check=lambda p: load_rounds(p.rounds),
        rounds=rounds,
        stop_when_honest=stop_when_honest,
    )
    records = iterate(c, c.preset.rounds, seed, on_round=lambda rec: _print_round(c, rec))
    _print_rounds(c, records)


def _round_cells(rec: dict[str, Any]) -> list[str]:
    cal = rec["calibration"]
    ratios = " / ".join(f"{cal[k]['ratio']:.1f}" if k in cal else "—" for k in ("noop", "left", "right"))
    added = rec.get("added", {})
    return [
        str(rec["round"]),
        f"{added.get('episodes', 0)} / {added.get('frames', 0):,}",
        f"{rec['rnn_epochs']}",
        f"{rec.get('generations') or 0}",
        f"{cal['controller']['dream'][0]:.0f}" if "controller" in cal else "—",
        f"{rec['real_mean']:.0f} ± {rec['real_se']:.0f}",
        f"{cal['controller']['ratio']:.2f}×" if "controller" in cal else "—",
        ratios,
        "yes" if rec["honest"] else "no",
        "yes" if rec["kept"] else "no",
        f"{sum(rec.get('seconds', {}).values()) / 60:.1f}",
    ]


def _print_round(c: Context, rec: dict[str, Any]) -> None:
    cal = rec["calibration"]
    c.out.print(
        f"round {rec['round']}: real {rec['real_mean']:.0f} ± {rec['real_se']:.0f} tics over {rec['real_episodes']} "
        f"episodes, dream ÷ real: "
        + ", ".join(f"{k} {v['ratio']:.2f}×" for k, v in cal.items())
        + f"; {'kept' if rec['kept'] else 'not kept (worse than the last kept)'}"
        + ("; the dream is honest" if rec["honest"] else "")
    )


def _print_rounds(c: Context, records: list[dict[str, Any]]) -> None:
    table = Table(title=f"{c.scenario}: rounds of {c.paths.root} (survival in tics)")
    for col in (
        "round",
        "added: episodes / frames",
        "M epochs",
        "generations",
        "dream",
        "real ± s.e.",
        "dream ÷ real",
        "held: still / left / right",
        "honest",
        "kept",
        "min",
    ):
        table.add_column(col, justify="right")
    for rec in records:
        table.add_row(*_round_cells(rec))
    c.out.print(table)
    c.out.print(f"kept controller → {c.paths.controller}; `golem dream evaluate --run {c.paths.root}` plays it")


@app.command("evaluate")
def evaluate_command(
    ctx: typer.Context,
    run: RunOpt = None,
    preset: PresetOpt = None,
    scenario: ScenarioOpt = "take_cover",
    episodes: Annotated[
        Optional[int], typer.Option("--episodes", "-n", min=1, help="Real episodes (100 for a reported figure).")
    ] = None,
    random_baseline: Annotated[
        bool, typer.Option("--random/--no-random", help="Also play a uniformly random policy.")
    ] = True,
    seed: Annotated[int, typer.Option("--seed", min=0, help="Engine seed of the first episode.")] = 100_000,
    force: Annotated[
        bool, typer.Option("--force", help="Re-run even when evaluation.json matches this controller.")
    ] = False,
    which: Annotated[
        str, typer.Option("--controller", help="mean (the CMA-ES mean) or best (top candidate of the last generation).")
    ] = "mean",
    threads: ThreadsOpt = None,
    set_: SetOpt = None,
) -> None:
    """Play the controller in the real engine (same recurrence as the dream): survival mean ± std."""
    from golem_worldmodel.evolution import load_controller
    from golem_worldmodel.real_runner import play_real
    from golem_worldmodel.training import load_rnn, load_vae

    c = Context(ctx, run, preset, scenario, set_, threads, eval_episodes=episodes)
    vae_file, reader = stages.controller_files(c)
    sha = read_metadata(c.paths.controller)["sha256"]
    rnn_sha, vae_sha = read_metadata(reader)["sha256"], read_metadata(vae_file)["sha256"]
    n = c.preset.eval_episodes
    report_path = c.paths.evaluation if which == "mean" else c.paths.root / f"evaluation_{which}.json"
    if report_path.is_file() and not force:  # checked before the models are loaded: a cached report is instant
        old = json.loads(report_path.read_text())
        same = (old.get("controller_sha256"), old.get("rnn_sha256"), old.get("vae_sha256")) == (sha, rnn_sha, vae_sha)
        if same and old.get("episodes") == n and old.get("seed") == seed:
            _print_eval(c, old)
            return
    vae, rnn = load_vae(vae_file), load_rnn(reader)
    policy, meta = load_controller(c.paths.controller, which)
    results: dict[str, Any] = {}
    with c.progress("evaluate") as progress:
        for name, pol in [("controller", policy)] + ([("random", None)] if random_baseline else []):
            task = progress.add_task(name, total=n, info="")
            tics: list[float] = []

            def on_episode(done: int, t: float, task=task, tics=tics) -> None:
                tics.append(t)
                progress.update(task, completed=done, info=f"mean {np.mean(tics):.0f}")

            out = play_real(
                c.settings,
                vae,
                rnn,
                pol,
                n,
                scenario,
                seed=seed,
                max_steps=c.preset.max_steps,
                on_episode=on_episode,
                screen_flashes=c.preset.screen_flashes,
            )
            s = np.asarray(out["survival"], np.float64)
            results[name] = {
                "mean": float(s.mean()),
                "std": float(s.std()),
                "min": int(s.min()),
                "max": int(s.max()),
                "solved_share": float((s >= 750).mean()),
                "survival": [int(x) for x in s],
            }
    report = {
        "scenario": scenario,
        "episodes": n,
        "seed": seed,
        "max_steps": c.preset.max_steps,
        "controller_sha256": sha,
        "rnn_sha256": rnn_sha,  # the M whose hidden state the controller read
        "vae_sha256": vae_sha,  # the V whose latents that M read
        "controller_params": which,
        "controller_generations": meta.get("progress", {}).get("generations"),
        "preset": c.preset.name,
        "temperature": meta.get("temperature"),
        **results,
    }
    tmp = report_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2))
    tmp.replace(report_path)
    log.info("dream.evaluate.done", **{k: round(v["mean"], 1) for k, v in results.items()}, episodes=n)
    _print_eval(c, report)


def _print_eval(c: Context, report: dict[str, Any]) -> None:
    table = Table(
        title=(
            f"{report['scenario']} ({report.get('controller_params', 'mean')} controller): "
            f"survival over {report['episodes']} real episodes (tics, max {report['max_steps']})"
        )
    )
    for col in ("policy", "mean ± std", "min", "max", "≥ 750"):
        table.add_column(col, justify="right" if col != "policy" else "left")
    for name in ("controller", "random"):
        if name in report:
            r = report[name]
            table.add_row(
                name,
                f"{r['mean']:.1f} ± {r['std']:.1f}",
                str(r["min"]),
                str(r["max"]),
                f"{100 * r['solved_share']:.0f}%",
            )
    c.out.print(table)


@app.command("render")
def render_command(
    ctx: typer.Context,
    run: RunOpt = None,
    preset: PresetOpt = None,
    scenario: ScenarioOpt = "take_cover",
    seed: SeedOpt = 0,
    steps: Annotated[int, typer.Option("--steps", min=1, help="Most frames to render.")] = 500,
    out: Annotated[Optional[Path], typer.Option("--out", "-o", help="GIF path (default: <run>/dream.gif).")] = None,
    threads: ThreadsOpt = None,
    set_: SetOpt = None,
) -> None:
    """A GIF of the controller inside its own dream (decoded by the VAE), beside a real rollout."""
    from golem_worldmodel.dream_env import DreamEnv, StartPool, dream_returns
    from golem_worldmodel.evolution import load_controller
    from golem_worldmodel.latents import load_latents
    from golem_worldmodel.real_runner import play_real
    from golem_worldmodel.render import decode_latents, side_by_side, write_gif

    c = Context(ctx, run, preset, scenario, set_, threads)
    vae, rnn = stages.controller_models(c)
    members, _ = stages.members(c)
    c.require(c.paths.latents, "train-rnn")
    policy, _ = load_controller(c.paths.controller, "mean")
    latents, _ = load_latents(c.paths.latents)
    pool = StartPool.from_latents(latents, c.preset.warmup)
    env = DreamEnv(
        rnn,
        pool,
        1,
        temperature=c.preset.temperature,
        reward_mode=c.preset.reward_mode,
        termination=c.preset.termination,
        max_steps=steps,
        autoreset=False,
        members=members,
        death=c.preset.ensemble_death,
    )
    dream = dream_returns(env, policy, pool.sample(1, np.random.default_rng(seed)), seed, record=True)
    T = int(dream["steps"][0]) + 1
    dream_frames = decode_latents(vae, dream["z"][:T, 0])
    real = play_real(
        c.settings,
        vae,
        rnn,
        policy,
        1,
        scenario,
        seed=100_000 + seed,
        max_steps=steps,
        record_frames=True,
        screen_flashes=c.preset.screen_flashes,
    )
    path = write_gif(out or c.paths.gif, side_by_side(dream_frames, real["frames"].transpose(0, 2, 3, 1)))
    c.out.print(f"dream ({T - 1} steps, left) beside real ({real['survival'][0]} tics, right) → {path}")
