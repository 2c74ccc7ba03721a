"""``golem rl``: reinforcement fine-tuning of a cloned policy (``golem rl finetune``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from golem.errors import GolemError
from golem.learning.distributed import Ranks, close_group, init_from_environment, spawn_ranks
from golem.profiles import PROFILES
from golem.runtime.generated import WorldPlan, build_world
from golem.runtime.netgame import check_deathmatch_starts
from golem.scenarios import read_config, resolve_scenario, scenario_key, scenario_spec, step_limit
from golem.settings import GolemSettings, ResolvedSettings, section, with_section
from golem_cli.options import (
    GeneratorOpt,
    JsonOpt,
    ModelScenarioOpt,
    PluginOpt,
    ProcgenChoice,
    ProcgenPhaseOpt,
    SetOpt,
    checkpoint_option,
    game_flags,
)
from golem_cli.player import resolve_player
from golem_cli.progress import task_bar
from golem_cli.state import state
from golem_rl.finetune import FinetunePlan, FinetuneResult, UpdateRecord, finetune, finetune_rank
from golem_rl.selection import EVAL_START_SEED, Evaluation
from golem_rl.settings import RLSettings
from golem_rl.shapers import build_shaping

HELP = """Reinforcement learning on top of behavioural cloning.

finetune: PPO on the scenario's own reward, starting from a cloned checkpoint and kept near it
by a KL term (as VPT does), on many engines and processes; the best policy by play becomes
the profile's active model.
"""

app = typer.Typer(help=HELP, no_args_is_help=True)

#: Tics after which an episode of a scenario without a time-out of its own is cut (60 s, as the specs cut
#: take_cover's): rollouts carry on across it, and every evaluation must end.
DEFAULT_MAX_STEPS = 2_100

#: The reward shapers of a run on generated maps unless ``rl.shapers`` is given: a bonus for each new
#: 64-unit square stood in, the exit being the maps' only reward otherwise.
MAPS_SHAPERS: dict[str, float] = {"explore": 0.01}

#: Config keys through which a ViZDoom scenario pays a reward (the map's scripts may pay more).
REWARD_KEYS = frozenset(
    k for k in ("living_reward", "death_penalty", "death_reward", "map_exit_reward", "kill_reward", "secret_reward",
                "item_reward", "frag_reward", "hit_reward", "hit_taken_reward", "hit_taken_penalty",
                "damage_made_reward", "damage_taken_reward", "damage_taken_penalty", "health_reward", "armor_reward")
)  # fmt: skip


def recorded_scenario(metadata: Mapping[str, Any]) -> str | None:
    """The scenario a checkpoint's metadata names (``scenario``, else ``data.scenario``, else ``data.module``), as
    written — a name or a path; ``None`` when it names none."""
    if isinstance(metadata.get("scenario"), str) and metadata["scenario"]:
        return str(metadata["scenario"])
    data = metadata.get("data")
    if isinstance(data, Mapping):
        for key in ("scenario", "module"):
            if isinstance(data.get(key), str) and data[key]:
                return str(data[key])
    return None


def declares_reward(scenario: str, doom_map: str | None) -> bool:
    """Whether the scenario's config sets a reward (a bare WAD has none; its scripts may still pay)."""
    config = resolve_scenario(scenario, doom_map).config
    if config is None:
        return False
    for entry in read_config(config):
        if entry.key in REWARD_KEYS:
            try:
                if float(entry.value) != 0.0:
                    return True
            except ValueError:
                continue
    return False


def episode_limit(scenario: str, doom_map: str | None) -> int | None:
    """Tics after which an episode is cut: the scenario's spec's limit, else none when its config sets a time-out,
    else :data:`DEFAULT_MAX_STEPS` (a bare map never ends by itself, and evaluation must)."""
    limit = step_limit(scenario, None)
    if limit is not None:
        return limit
    config = resolve_scenario(scenario, doom_map).config
    if config is not None and any(e.key == "episode_timeout" and e.value not in ("", "0") for e in read_config(config)):
        return None
    return DEFAULT_MAX_STEPS


def checked_plan(
    resolved: ResolvedSettings,
    model: Path | None,
    registry: Any,
    transfer: bool = False,
    procgen: ProcgenChoice | None = None,
) -> tuple[FinetunePlan, GolemSettings]:
    """The fine-tuning plan and the run's settings; bad input is one line, before any process starts.

    The settings take the checkpoint's profile, sensors and frame skip where none were given
    (as play does), the scenario the checkpoint was cloned on unless ``--scenario`` names it
    (a checkpoint of another profile or scenario than asked is refused, unless ``transfer``:
    then any scenario its profile and sensors play), and else the scenario's spec's frame skip.
    With ``procgen`` (``--procgen-phase P``) every episode plays a generated map of its own (any checkpoint
    of the profile; the first held-out map is built here, so an unknown generator or phase fails first).

    Raises:
        GolemError: a missing/corrupt checkpoint, another profile or scenario than asked, an unknown scenario,
            or ``rl`` settings that do not fit together.
    """
    player = resolve_player(resolved, model, registry)
    given = resolved.sources
    spec = player.metadata.get("spec") or {}
    profile = spec.get("profile")
    if "brain.profile" in given and profile and resolved.settings.brain.profile != profile:
        raise GolemError(
            f"checkpoint {player.path} is of profile {profile}, not {resolved.settings.brain.profile}: "
            f"fine-tune a {resolved.settings.brain.profile} checkpoint, or leave brain.profile unset"
        )
    if profile and tuple(spec.get("action_names") or ()) not in ((), PROFILES.get(str(profile), ())):
        raise GolemError(f"checkpoint {player.path} presses buttons its profile {profile} does not have")
    rl = section(player.settings, RLSettings)
    build_shaping(player.settings, registry, rl.shapers)  # an unknown shaper is refused before any process starts
    if rl.minibatches > rl.workers:
        raise GolemError(f"rl.minibatches {rl.minibatches} exceeds the segments per update (rl.workers {rl.workers})")
    if procgen is not None and procgen.given:
        return _maps_plan(resolved, player, registry, procgen)
    recorded = recorded_scenario(player.metadata)
    scenario = player.scenario
    if "game.scenario" in given:
        if recorded and scenario_key(recorded) != scenario_key(scenario) and not transfer:
            raise GolemError(
                f"checkpoint {player.path} was cloned on {recorded}, not {scenario}: fine-tune a checkpoint of "
                f"{scenario}, leave out --scenario to fine-tune on {recorded}, or pass --transfer to carry it over"
            )
    elif recorded is None:
        raise GolemError(f"checkpoint {player.path} does not say which scenario it was cloned on: pass --scenario")
    settings = player.settings
    skip_given = "game.frame_skip" in given or (player.metadata.get("data") or {}).get("frame_skip")
    if not skip_given:
        settings = settings.model_copy(
            update={"game": settings.game.model_copy(update={"frame_skip": scenario_spec(scenario).frame_skip})}
        )
    resolved_scenario = resolve_scenario(scenario, settings.game.doom_map)  # unknown names and bad files fail here
    if rl.bots:
        check_deathmatch_starts(resolved_scenario)  # bots play a deathmatch, which such a map would crash
    plan = FinetunePlan(
        model_path=player.path,
        scenario=scenario,
        max_steps=rl.episode_tics or episode_limit(scenario, settings.game.doom_map),
        declared_reward=declares_reward(scenario, settings.game.doom_map),
    )
    return plan, settings


def _maps_plan(
    resolved: ResolvedSettings, player: Any, registry: Any, procgen: ProcgenChoice
) -> tuple[FinetunePlan, GolemSettings]:
    """The plan of a run on generated maps: a map of its own per episode, the checkpoint's frame skip, and
    ``rl.decisions = sample`` and ``rl.shapers = MAPS_SHAPERS`` unless given."""
    given = resolved.sources
    if "game.scenario" in given:
        raise GolemError("--procgen-phase plays generated maps: leave out --scenario")
    settings = player.settings
    rl = section(settings, RLSettings)
    if rl.bots:
        raise GolemError("--bots plays a deathmatch against the engine's bots: leave out --procgen-phase")
    assert procgen.phase is not None
    defaults: dict[str, Any] = {}
    if "rl.decisions" not in given:
        # On unseen phase-1 maps every fine-tuned checkpoint measured exited at least as many with its buttons drawn as
        # thresholded, most many more (a thresholded navigator repeats itself where it is stuck): the result
        # plays, and is kept, sampled.
        defaults["decisions"] = "sample"
    if not any(key == "rl.shapers" or key.startswith("rl.shapers.") for key in given):
        # The exit is the maps' only reward: without the exploration bonus a measured run lost what the clone had
        # (0 % of unseen phase-1 maps exited, against 46–60 % with it).
        defaults["shapers"] = dict(MAPS_SHAPERS)
    if defaults:
        settings = with_section(settings, rl.model_copy(update=defaults))
    world = WorldPlan(generator=procgen.generator, phase=procgen.phase)
    first = build_world(settings, registry, world, EVAL_START_SEED)  # an unknown generator or phase fails here
    plan = FinetunePlan(
        model_path=player.path,
        scenario=world.label(),
        max_steps=rl.episode_tics or None,  # 0 / None: each map's own time-out (by its size)
        declared_reward=declares_reward(first.scenario, settings.game.doom_map),
        world=world,
    )
    return plan, settings


@app.command("finetune")
def finetune_command(
    ctx: typer.Context,
    model: Annotated[Optional[Path], checkpoint_option("to fine-tune")] = None,
    scenario: ModelScenarioOpt = None,
    frames: Annotated[
        Optional[int], typer.Option("--frames", min=1, help="Environment frames (tics) in all ranks (rl.frames).")
    ] = None,
    workers: Annotated[
        Optional[int], typer.Option("--workers", "-w", min=1, max=256, help="Engine processes per rank (rl.workers).")
    ] = None,
    nproc: Annotated[
        int,
        typer.Option(
            "--nproc",
            min=1,
            max=64,
            help="Decentralised PPO processes on this machine (torch.distributed, gloo): each runs its own "
            "--workers engines and the gradients are averaged.",
        ),
    ] = 1,
    seed: Annotated[
        Optional[int],
        typer.Option("--seed", min=0, help="Seed of the sampling, the episodes, the value head (rl.seed)."),
    ] = None,
    bots: Annotated[
        Optional[int],
        typer.Option(
            "--bots",
            min=0,
            max=15,
            help="The engine's bots in every episode (rl.bots): each engine hosts a deathmatch of its own; "
            "evaluations then keep the best by frags (rl.score).",
        ),
    ] = None,
    transfer: Annotated[
        bool,
        typer.Option(
            "--transfer",
            help="Fine-tune on --scenario although the checkpoint was cloned on another (same buttons and "
            "sensors), e.g. a deathmatch agent against bots on cig.",
        ),
    ] = False,
    procgen_phase: ProcgenPhaseOpt = None,
    generator: GeneratorOpt = "builtin",
    json_: JsonOpt = False,
    plugin: PluginOpt = None,
    set_: SetOpt = None,
) -> None:
    """Fine-tune a cloned model with PPO on the scenario's reward, kept near it by KL(π‖π_BC).

    Rollouts run on --workers engines per process, --nproc processes (or torchrun); every
    rl.eval_every updates the policy plays held-out seeds, and a better one is kept only when
    fresh seeds confirm the gain. The best becomes the profile's active model and an archive;
    if none beats the source, the active model stays. Ctrl-C saves the current weights,
    validates them by play and reports. Settings: rl.* (`golem config show`).

    With --procgen-phase P every episode plays a generated map of its own (rollouts from seed
    100,000, held-out evaluations from 20,000; the map's reward: +1 at the exit, −1 for dying),
    the result draws its buttons (rl.decisions = sample) unless rl.decisions is set, and the
    reward adds exploration (rl.shapers = {explore = 0.01}) unless rl.shapers is set
    ({} for none).
    """
    st = state(ctx)
    flags = {**game_flags(scenario), "rl.frames": frames, "rl.workers": workers, "rl.seed": seed, "rl.bots": bots}
    resolved = st.resolve(plugin=plugin, set_=set_, flags=flags)
    procgen = ProcgenChoice(procgen_phase, generator=generator)
    plan, settings = checked_plan(resolved, model, st.host.registry, transfer=transfer, procgen=procgen)
    rl = section(settings, RLSettings)
    with ExitStack() as stack:
        if nproc > 1:
            stack.enter_context(
                spawn_ranks(
                    nproc, finetune_rank, (settings.model_dump_json(), plan), timeout_s=rl.timeout, daemon=False
                )
            )
        elif init_from_environment(rl.timeout).world > 1:
            stack.callback(close_group)  # under torchrun every process runs this command; rank 0 reports
        ranks = Ranks.current()
        quiet = json_ or not ranks.main
        view = _View(None if quiet else st.err, plan, rl, settings)
        with view:
            try:
                result = finetune(
                    settings, st.host.registry, plan, on_update=view.on_update, on_evaluation=view.on_evaluation
                )
            except KeyboardInterrupt:
                raise GolemError("interrupted before the first update; nothing was saved", exit_code=130) from None
        if not ranks.main:
            return
    if json_:
        typer.echo(json.dumps(result.to_dict()))
    else:
        _report(st.out, result, plan, rl.kept_by)
    if result.interrupted:
        st.err.print(
            "[yellow]interrupted: the last weights were saved and validated by play[/yellow]",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(130)


class _View:
    """Progress of a run on ``console`` (``None``: quiet): a bar over the updates with the latest figures."""

    def __init__(self, console: Any, plan: FinetunePlan, rl: RLSettings, settings: GolemSettings) -> None:
        self.console = console
        self.progress = None
        if console is not None:
            self.progress = task_bar(
                console, "[bold]fine-tuning[/bold] {task.fields[what]}", "{task.fields[info]}", transient=True
            )
        self.what = f"{plan.model_path.name} on {plan.scenario}"
        self.score = rl.kept_by
        self.task: Any = None

    def __enter__(self) -> _View:
        if self.progress is not None:
            self.progress.__enter__()
            self.task = self.progress.add_task("finetune", total=None, what=self.what, info="starting the engines")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.progress is not None:
            self.progress.__exit__(*exc)

    def on_update(self, record: UpdateRecord) -> None:
        if self.progress is None:
            return
        ret = "–" if record.return_mean is None else f"{record.return_mean:.1f}"
        if record.frags_mean is not None:
            ret += f"  frags {record.frags_mean:.1f}"
        info = (
            f"return {ret}  KL→BC {record.kl_bc:.4f}  entropy {record.entropy:.2f}  {record.frames_per_s:.0f} frames/s"
        )
        self.progress.update(self.task, total=record.updates, completed=record.update, info=info)

    def on_evaluation(self, evaluation: Evaluation) -> None:
        if self.progress is None:
            return
        verdict = "kept" if evaluation.kept else "not kept"
        label = "source" if evaluation.update == 0 else f"update {evaluation.update}"
        self.console.print(
            f"evaluation ({label}, {evaluation.frames} frames): held-out {self.score} {evaluation.mean:.2f} "
            f"± {evaluation.std:.2f} — {verdict}",
            highlight=False,
            soft_wrap=True,
        )


def _report(out: Any, result: FinetuneResult, plan: FinetunePlan, score: str = "return") -> None:
    """The evaluations (their ``score``: return or frags), the kept checkpoint and where everything went."""
    table = Table(title=f"{plan.scenario}: fine-tuned {Path(result.source).name}", show_edge=False)
    for column in ("update", "frames", f"held-out {score}", "confirmation", "kept"):
        table.add_column(column, justify="right")
    for e in result.evaluations:
        c = e.get("confirmation")
        confirmation = "–" if not c else f"gain {c['gain']:+.2f} ± {c['se']:.2f}"
        table.add_row(
            "source" if e["update"] == 0 else str(e["update"]),
            str(e["frames"]),
            f"{e['mean']:.2f} ± {e['std']:.2f}",
            confirmation,
            "yes" if e["kept"] else "no",
        )
    out.print(table)
    last = result.history[-1] if result.history else None
    if last is not None:
        out.print(
            f"{result.updates} updates, {result.frames} frames in {result.seconds:.0f} s; last update: "
            f"KL to the cloned policy {last['kl_bc']:.4f} nats/decision, entropy {last['entropy']:.3f}",
            highlight=False,
        )
    if result.tensorboard:
        out.print(f"curves       → {result.tensorboard}", highlight=False, soft_wrap=True)
    if result.active:
        out.print(f"active model → {result.active}", highlight=False, soft_wrap=True)
        out.print(f"archived as  → {result.archive}", highlight=False, soft_wrap=True)
    else:
        out.print(
            "no fine-tuned weights beat the source by play (confirmed on fresh seeds): the active model is unchanged",
            highlight=False,
            soft_wrap=True,
        )
    if result.last:
        out.print(f"last weights → {result.last}", highlight=False, soft_wrap=True)


__all__ = ["app", "checked_plan", "declares_reward", "finetune_command", "recorded_scenario"]
