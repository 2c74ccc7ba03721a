"""``golem dream …``: the world-model pipeline, one resumable command per stage.

    collect → train-vae → train-rnn → train-controller → evaluate → render

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
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from golem.atomic import atomic_write
from golem.errors import GolemError
from golem.learning.checkpoints import read_metadata
from golem.settings import GolemSettings
from golem_worldmodel.paths import RunPaths
from golem_worldmodel.presets import PRESETS, Preset, preset_from_settings

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
    int, typer.Option("--threads", min=1, max=256, help="Torch CPU threads (1 is fastest on a busy machine).")
]
SetOpt = Annotated[
    Optional[list[str]],
    typer.Option("--set", help="Override a Golem setting, e.g. game.start_timeout=60.", metavar="KEY=VALUE"),
]


# --- shared plumbing ---------------------------------------------------------


class Context:
    """What every stage needs: settings, run paths, the preset, consoles."""

    def __init__(
        self,
        ctx: typer.Context,
        run: Path | None,
        preset: str | None,
        scenario: str,
        set_: list[str] | None,
        threads: int = 1,
        *,
        creates: bool = False,
        **overrides: Any,
    ) -> None:
        """``creates``: this stage may start a new run folder (``collect``, ``train-vae``); the others read
        an existing one, so a missing run changes nothing on disk before their one-line error."""
        import torch

        torch.set_num_threads(threads)
        root = ctx.find_root().obj
        self.err: Console = getattr(root, "err", Console(stderr=True))
        self.out: Console = getattr(root, "out", Console())
        self.registry = root.host.registry
        self.settings: GolemSettings = root.resolve(set_=set_, flags={"game.scenario": scenario}).settings
        self.scenario = scenario
        self.paths = RunPaths(run if run is not None else self.settings.data.root / "dream" / scenario)
        if self.paths.root.exists() and not self.paths.root.is_dir():
            raise GolemError(f"--run {self.paths.root} is a file, not a run folder")
        self.preset = preset_from_settings(self.settings, preset, self._stored(preset), **overrides)
        if creates or self.paths.root.is_dir():
            self._save_preset()

    def _stored(self, name: str | None) -> Preset | None:
        """The preset this run folder was started with, if any (a different ``--preset`` is an error)."""
        saved = self.paths.root / "preset.json"
        if not saved.is_file():
            return None
        stored = Preset.from_dict(json.loads(saved.read_text()))
        if name is not None and name != stored.name:
            raise GolemError(
                f"run {self.paths.root} uses preset {stored.name!r}, not {name!r}; use another --run folder"
            )
        return stored

    def _save_preset(self) -> None:
        """A new run folder records its preset (with the settings' overrides, not a command's own options)."""
        saved = self.paths.root / "preset.json"
        if saved.is_file():
            return
        base = preset_from_settings(self.settings, self.preset.name)
        try:
            self.paths.root.mkdir(parents=True, exist_ok=True)
            with atomic_write(saved) as fh:
                fh.write(json.dumps(base.to_dict(), indent=2).encode())
        except OSError as exc:
            raise GolemError(f"cannot write the run folder {self.paths.root}: {exc.strerror or exc}") from None

    def progress(self, what: str) -> Progress:
        return Progress(
            TextColumn(f"[bold]{what}[/bold] {{task.description}}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.err,
        )

    def require(self, path: Path, stage: str) -> None:
        if not path.is_file():
            raise GolemError(f"{path} does not exist; run `golem dream {stage} --run {self.paths.root}` first")


def _fmt(metrics: dict[str, float]) -> str:
    return "  ".join(f"{k} {v:.4g}" for k, v in metrics.items())


def _epoch_hooks(progress: Progress, total_epochs: int):
    task = progress.add_task("", total=1, info="")

    def start(epoch: int, n_batches: int) -> None:
        progress.reset(task, total=n_batches, description=f"epoch {epoch + 1}/{total_epochs}", info="")

    def batch(done: int, total: int, metrics: dict[str, float]) -> None:
        progress.update(task, completed=done, info=_fmt(metrics))

    return start, batch


def _models(c: Context):
    from golem_worldmodel.training import load_rnn, load_vae

    c.require(c.paths.vae, "train-vae")
    c.require(c.paths.rnn, "train-rnn")
    return load_vae(c.paths.vae), load_rnn(c.paths.rnn)


def _members(c: Context) -> tuple[list[Any], str]:
    """The ensemble's further MDN-RNNs (members ``1 … rnn_members − 1``) and one digest naming all members."""
    from golem_worldmodel.training import load_ensemble

    return load_ensemble(c.paths, c.preset.rnn_members)


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
    threads: ThreadsOpt = 1,
    set_: SetOpt = None,
) -> None:
    """Random rollouts (an action held 1–10 tics), then the preset's probe episodes (held 50–300 tics), into the \
run's store; episodes < 100 steps dropped."""
    from golem_worldmodel.collect import collect

    c = Context(ctx, run, preset, scenario, set_, threads, creates=True, episodes=episodes, workers=workers)
    with c.progress("collect") as progress:
        task = progress.add_task(scenario, total=c.preset.episodes + c.preset.probe_episodes, info="")
        dropped = 0

        def on_episode(kept: int, episode: Any) -> None:
            nonlocal dropped
            dropped += episode is None
            progress.update(task, completed=kept, info=f"dropped {dropped}")

        out = collect(c.settings, c.registry, c.paths.store, c.preset, scenario, seed, on_episode=on_episode)
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
    threads: ThreadsOpt = 1,
    set_: SetOpt = None,
) -> None:
    """Train the convolutional VAE on the collected 64×64 frames (continues from its checkpoint)."""
    from golem_worldmodel.training import train_vae

    c = Context(ctx, run, preset, scenario, set_, threads, creates=True, vae_epochs=epochs)
    if not (c.paths.store / "data.mdb").is_file():
        raise GolemError(f"no trajectory store in {c.paths.root}; run `golem dream collect --run {c.paths.root}` first")
    with c.progress("train-vae") as progress:
        start, batch = _epoch_hooks(progress, c.preset.vae_epochs)
        out = train_vae(c.paths.vae, c.paths.store, c.preset, scenario, seed, start, batch)
    c.out.print(f"VAE: {out['epochs']} epoch(s){' (already trained)' if out.get('skipped') else ''} → {c.paths.vae}")


def _ensure_latents(c: Context):
    """Encode the store with the current VAE unless ``latents.safetensors`` already holds its episodes under that VAE.

    Episodes collected since (``collect --episodes`` raised) are encoded with the rest; M then trains on all of them.
    """
    from golem.data.store import TrajectoryStore
    from golem_worldmodel.latents import encode_store, load_latents, save_latents, store_episodes
    from golem_worldmodel.training import load_vae

    c.require(c.paths.vae, "train-vae")
    vae_sha = read_metadata(c.paths.vae)["sha256"]
    if c.paths.latents.is_file():
        latents, meta = load_latents(c.paths.latents)
        with TrajectoryStore.open(c.paths.store) as store:
            ids = [i.id for i in store_episodes(store, c.scenario)]
        if meta.get("vae_sha256") == vae_sha and latents.episode_ids == ids:
            return latents
        log.info(
            "dream.latents.stale",
            reason="the VAE changed"
            if meta.get("vae_sha256") != vae_sha
            else f"the store holds {len(ids)} episodes, the latents {len(latents.episode_ids)}",
        )
    vae = load_vae(c.paths.vae)
    with c.progress("encode") as progress:
        task = progress.add_task("frames → mu, logvar", total=None, info="")
        latents = encode_store(
            vae, c.paths.store, c.scenario, on_episode=lambda d, t: progress.update(task, completed=d, total=t)
        )
    save_latents(c.paths.latents, latents, vae_sha, c.scenario)
    return latents


@app.command("train-rnn")
def train_rnn_command(
    ctx: typer.Context,
    run: RunOpt = None,
    preset: PresetOpt = None,
    scenario: ScenarioOpt = "take_cover",
    seed: SeedOpt = 0,
    epochs: Annotated[Optional[int], typer.Option("--epochs", min=1, help="Target epochs.")] = None,
    threads: ThreadsOpt = 1,
    set_: SetOpt = None,
) -> None:
    """Encode the frames (mu, logvar per frame), then train the MDN-RNN on sampled latents \
(dream.rnn_members of them)."""
    from golem_worldmodel.training import train_rnn

    c = Context(ctx, run, preset, scenario, set_, threads, rnn_epochs=epochs)
    latents = _ensure_latents(c)
    vae_sha = read_metadata(c.paths.vae)["sha256"]
    for i in range(c.preset.rnn_members):
        path = c.paths.member(i)
        with c.progress(
            "train-rnn" + (f" {i + 1}/{c.preset.rnn_members}" if c.preset.rnn_members > 1 else "")
        ) as progress:
            start, batch = _epoch_hooks(progress, c.preset.rnn_epochs)
            out = train_rnn(path, latents, c.preset, seed + i, start, batch, vae_sha256=vae_sha)
        c.out.print(f"MDN-RNN: {out['epochs']} epoch(s){' (already trained)' if out.get('skipped') else ''} → {path}")


def _real_scorer(c: Context, vae: Any, rnn: Any, episodes: int, seed: int):
    from golem_worldmodel.controller import LinearController
    from golem_worldmodel.real_runner import play_real

    def score(params: np.ndarray) -> list[int]:
        policy = LinearController(params, rnn.z_dim, rnn.hidden)
        return play_real(
            c.settings,
            vae,
            rnn,
            policy,
            episodes,
            c.scenario,
            seed=seed,
            max_steps=c.preset.max_steps,
            screen_flashes=c.preset.screen_flashes,
        )["survival"]

    return score


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
    threads: ThreadsOpt = 1,
    set_: SetOpt = None,
) -> None:
    """Evolve the linear controller with CMA-ES inside the dream; the best is checked in the real engine \
every k generations."""
    from golem_worldmodel.dream_env import StartPool
    from golem_worldmodel.evolution import train_controller
    from golem_worldmodel.latents import load_latents

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
    vae, rnn = _models(c)
    members, digest = _members(c)
    c.require(c.paths.latents, "train-rnn")
    latents, _ = load_latents(c.paths.latents)
    pool = StartPool.from_latents(latents, c.preset.warmup)
    scorer = _real_scorer(c, vae, rnn, c.preset.real_episodes, seed=50_000) if c.preset.real_every else None
    with c.progress("train-controller") as progress:
        task = progress.add_task("generations", total=c.preset.generations, info="")
        last_real = [float("nan")]

        def on_generation(gen: int, rec: dict[str, Any]) -> None:
            last_real[0] = rec.get("real_mean", last_real[0])
            progress.update(
                task,
                completed=gen,
                info=f"dream: population {rec['dream_mean']:.0f} max {rec['dream_max']:.0f} "
                f"CMA mean {rec['dream_of_mean']:.0f}  real {last_real[0]:.0f}  σ {rec['sigma']:.3f}",
            )

        out = train_controller(
            c.paths.controller,
            c.paths.controller_log,
            rnn,
            pool,
            c.preset,
            seed,
            scorer,
            on_generation,
            rnn_sha256=digest,
            members=members,
        )
    c.out.print(
        f"controller: {out.get('generation', out.get('generations'))} generation(s), dream score of the CMA-ES mean "
        f"{out.get('dream_of_mean') or float('nan'):.1f}"
        + (f", real {out['real_mean']:.1f} over {out['real_episodes']} episode(s)" if "real_mean" in out else "")
        + f" → {c.paths.controller}"
    )


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
    threads: ThreadsOpt = 1,
    set_: SetOpt = None,
) -> None:
    """Play the controller in the real engine (same recurrence as the dream): survival mean ± std."""
    from golem_worldmodel.evolution import load_controller
    from golem_worldmodel.real_runner import play_real

    c = Context(ctx, run, preset, scenario, set_, threads, eval_episodes=episodes)
    vae, rnn = _models(c)
    c.require(c.paths.controller, "train-controller")
    policy, meta = load_controller(c.paths.controller, which)
    sha = read_metadata(c.paths.controller)["sha256"]
    n = c.preset.eval_episodes
    report_path = c.paths.evaluation if which == "mean" else c.paths.root / f"evaluation_{which}.json"
    if report_path.is_file() and not force:
        old = json.loads(report_path.read_text())
        if old.get("controller_sha256") == sha and old.get("episodes") == n and old.get("seed") == seed:
            _print_eval(c, old)
            return
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
    threads: ThreadsOpt = 1,
    set_: SetOpt = None,
) -> None:
    """A GIF of the controller inside its own dream (decoded by the VAE), beside a real rollout."""
    from golem_worldmodel.dream_env import DreamEnv, StartPool, dream_returns
    from golem_worldmodel.evolution import load_controller
    from golem_worldmodel.latents import load_latents
    from golem_worldmodel.real_runner import play_real
    from golem_worldmodel.render import decode_latents, side_by_side, write_gif

    c = Context(ctx, run, preset, scenario, set_, threads)
    vae, rnn = _models(c)
    members, _ = _members(c)
    c.require(c.paths.controller, "train-controller")
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
