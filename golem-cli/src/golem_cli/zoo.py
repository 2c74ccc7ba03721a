"""One scoreboard row as a new user gets it: record the expert, train, (tune), evaluate — resumable.

A row is one scenario and one model component: record the scenario spec's
expert episodes into a store, train with default settings (plus the row's
``--set``), optionally tune the press thresholds by play (seeds 5,000…), then
evaluate against the random policy and the expert on unseen seeds (10,000…).
Everything lives in a work folder (its ``data.root``): the store, the
checkpoints and :data:`STATE_FILE`, which names each finished stage with what it
was run on, so a second run skips what is done. Recording resumes from the
episodes already stored; a stage whose inputs changed (more episodes, other
settings, another checkpoint) runs again, and so does every stage after it.

The row (:func:`build_row`) is the format of ``bench/results/zoo.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import structlog

from golem.atomic import atomic_write
from golem.data.store import TrajectoryStore
from golem.diagnostics.evaluation import EvalPlan, evaluate, expert_for
from golem.errors import GolemError
from golem.learning.training import BatchProgress, TrainPlan, train
from golem.runtime.generated import spec_variation
from golem.scenarios import ScenarioSpec, resolve_scenario, scenario_spec
from golem.selection import check_selected
from golem.settings import GolemSettings, ResolvedSettings
from golem.workflows.recording import Episode, RecordPlan, continuing_seeds, record, require_sensors
from golem_cli.player import resolve_player
from golem_cli.state import AppState

log = structlog.get_logger(__name__)

#: The work folder's record of finished stages.
STATE_FILE = "zoo-state.json"
#: The stages of a row, in order.
STAGES = ("record", "train", "tune", "evaluate")

#: Published results to compare with (what they measured, and where).
REFERENCES = {
    "basic": "Sample Factory RL ≈ 77 return",
    "defend_the_center": "Sample Factory RL ≈ 24–25 kills",
    "take_cover": "World Models 1,092 ± 556 tics",
    "my_way_home": "Sample Factory RL ≈ 0.98 exits",
    "health_gathering": "—",
    "defend_the_line": "Sample Factory RL ≈ 35–43 return",
    "health_gathering_supreme": "Kanervisto et al. BC 8.6 ± 0.4 (860 tics); humans 20.9",
    "predict_position": "—",
    "deadly_corridor": "—",
    "deathmatch": "—",
}

#: Evaluation episodes where 30 are too few: an exit rate's standard error at 0.9 is 0.055 over 30
#: episodes (one model exited 0.97 on the first 30 seeds and 0.86 over 100); health_gathering_supreme's
#: lstm survived 1,658 ± 552 tics on the first 30 seeds and 1,501 ± 591 over 100.
EVAL_EPISODES = {"my_way_home": 100, "health_gathering_supreme": 100}
#: Evaluation episodes per policy on every other scenario.
DEFAULT_EVAL_EPISODES = 30

#: The scenario's own success measure: (label, policy summary key).
MEASURES = {
    "defend_the_center": ("kills", "kills"),
    "take_cover": ("tics survived", "tics"),
    "health_gathering": ("tics survived", "tics"),
    "my_way_home": ("exits", "goal_rate"),
    "basic": ("return", "return"),
    "defend_the_line": ("return", "return"),
    "health_gathering_supreme": ("tics survived", "tics"),
    "predict_position": ("return", "return"),
    "deadly_corridor": ("return", "return"),
    "deathmatch": ("return", "return"),
}

#: What a row keeps of a threshold search (``golem run tune --json``).
TUNE_KEYS = ("best", "plays", "start_return", "best_return", "candidates", "confirmation", "accepted")

#: The columns of a row for people (the README's scoreboard), as :func:`row_cells` fills them.
ROW_COLUMNS = (
    "scenario",
    "model",
    "skip",
    "expert episodes (frames)",
    "train (+ tune) min",
    "eval episodes",
    "measure",
    "model",
    "random",
    "expert",
    "normalised",
    "published",
)


def board_name(model: str, sensors: Sequence[str], tuned: bool = False) -> str:
    """A row's model column and results key part: the model, each extra sensor, ``tuned`` (``cfc+audio+tuned``)."""
    return "+".join([model, *sensors, *(["tuned"] if tuned else [])])


def eval_episodes_for(scenario: str) -> int:
    """Evaluation episodes per policy of the scenario's row (:data:`EVAL_EPISODES`, else 30)."""
    return EVAL_EPISODES.get(scenario, DEFAULT_EVAL_EPISODES)


@dataclass(frozen=True)
class ZooPlan:
    """One row to run.

    Attributes:
        scenario: a shipped scenario with a scripted expert.
        folder: the work folder (store, checkpoints, state file).
        model: the model component (``brain.model``).
        episodes: expert episodes to record (``None``: the scenario spec's).
        eval_episodes: evaluation episodes per policy (``None``: :func:`eval_episodes_for`).
        workers: parallel engine processes for recording, tuning and evaluation.
        sets: ``KEY=VALUE`` settings for training only (the row's ``settings``).
        plugins: components selected for every stage (an extra sensor must be recorded to be read).
        tune: tune the press thresholds by play between training and evaluation.
    """

    scenario: str
    folder: Path
    model: str = "cfc"
    episodes: int | None = None
    eval_episodes: int | None = None
    workers: int = 2
    sets: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    tune: bool = False

    @property
    def spec(self) -> ScenarioSpec:
        return scenario_spec(self.scenario)

    @property
    def wanted_episodes(self) -> int:
        return self.episodes if self.episodes is not None else self.spec.episodes

    @property
    def evaluated_episodes(self) -> int:
        return self.eval_episodes if self.eval_episodes is not None else eval_episodes_for(self.scenario)


class StageView(Protocol):
    """What a display of a row is told (``golem zoo`` draws a line per stage)."""

    def begin(self, stage: str, total: int | None, info: str) -> None:
        """``stage`` starts: ``total`` steps of work (``None``: not known yet)."""

    def update(self, stage: str, completed: int, total: int | None, info: str) -> None:
        """``stage`` has done ``completed`` of ``total``."""

    def finish(self, stage: str, info: str, skipped: bool = False) -> None:
        """``stage`` is done (``skipped``: by an earlier run)."""


@dataclass
class ZooState:
    """The work folder's :data:`STATE_FILE`: per stage, what it ran on, what it produced, the seconds it took."""

    path: Path
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path) -> ZooState:
        path = folder / STATE_FILE
        try:
            data = json.loads(path.read_text()) if path.is_file() else {}
        except (OSError, ValueError) as exc:
            raise GolemError(f"cannot read {path}: {exc}; delete it to start the row afresh") from None
        return cls(path, dict(data.get("stages") or {}))

    def done(self, stage: str, inputs: dict[str, Any]) -> dict[str, Any] | None:
        """The stored result of ``stage`` when it finished on these ``inputs``, else ``None``."""
        entry = self.stages.get(stage)
        if entry is None or "result" not in entry or entry.get("inputs") != _plain(inputs):
            return None
        return entry["result"]

    def seconds(self, stage: str) -> float:
        return float((self.stages.get(stage) or {}).get("seconds") or 0.0)

    def put(self, stage: str, inputs: dict[str, Any], result: dict[str, Any] | None, seconds: float) -> None:
        """Record ``stage`` (``result=None``: started, not finished) and write the file atomically."""
        entry: dict[str, Any] = {"inputs": _plain(inputs), "seconds": round(seconds, 2)}
        if result is not None:
            entry["result"] = result
        self.stages[stage] = entry
        self.save()

    def save(self) -> None:
        try:
            with atomic_write(self.path) as fh:
                fh.write((json.dumps({"stages": self.stages}, indent=2) + "\n").encode())
        except OSError as exc:
            raise GolemError(f"cannot write in {self.path.parent}: {exc.strerror or exc}") from None


def _plain(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples become lists), so stored and current inputs compare equal."""
    return json.loads(json.dumps(value))


class Row:
    """Runs :class:`ZooPlan`'s stages in :class:`AppState` ``st``'s settings, showing them on ``view``."""

    def __init__(self, st: AppState, plan: ZooPlan, view: StageView) -> None:
        self.st, self.plan, self.view = st, plan, view
        self.registry = st.host.registry
        self.expert = check_plan(st, plan)
        self.state = ZooState.load(plan.folder)
        self.state.save()  # an unwritable folder fails now, before any engine starts

    # --- settings -------------------------------------------------------------

    def resolve(self, plugin: Sequence[str] = (), set_: Sequence[str] = (), **flags: Any) -> ResolvedSettings:
        """The user's settings for one stage, with the work folder as ``data.root``."""
        return self.st.resolve(
            plugin=[*self.plan.plugins, *plugin], set_=list(set_), flags={"data.root": str(self.plan.folder), **flags}
        )

    # --- the stages -----------------------------------------------------------

    def run(self) -> dict[str, Any]:
        """Every stage not done yet, then the row."""
        recorded = self.record()
        trained = self.train(recorded)
        tuned = self.tune(trained) if self.plan.tune else None
        if not self.plan.tune:
            self.view.finish("tune", "not asked (--tune)", skipped=True)
        board = self.evaluate(played_checkpoint(trained, tuned))
        return build_row(self.plan, self.state, recorded, trained, tuned, board)

    def record(self) -> dict[str, Any]:
        """Expert episodes into the store until it holds the plan's; what the store then holds."""
        plan, scenario = self.plan, self.plan.scenario
        resolved = self.resolve(**{"game.scenario": scenario})
        settings = resolved.settings
        check_selected(settings, self.registry, ["sensors"])
        require_sensors(settings)
        if "game.frame_skip" not in resolved.sources:
            settings = _with_game(settings, frame_skip=plan.spec.frame_skip)
        wanted, path = plan.wanted_episodes, settings.store_path()
        worlds = spec_variation(scenario, self.registry)  # the spec's randomised recording, if it asks for one
        inputs = {"episodes": wanted, "sensors": list(settings.brain.sensors)}
        if worlds is not None:
            inputs["vary"] = list((worlds.config or {})["modifications"])
        started = time.perf_counter()
        with TrajectoryStore.open_or_create(path) as store:
            have = _expert_episodes(store, scenario)
            missing = wanted - have
            if missing <= 0:
                result = self._recorded(store, settings, have)
                self.state.put("record", inputs, result, self.state.seconds("record"))
                self.view.finish("record", f"{have} episodes stored", skipped=True)
                return result
            where = scenario if worlds is None else worlds.label()
            self.view.begin("record", wanted, f"{self.expert} on {where}, {have} stored")
            log.info("zoo_record", scenario=scenario, stored=have, recording=missing)
            seeds = continuing_seeds(store, scenario, settings.game.seed, missing)
            rec = RecordPlan(
                demonstrator="expert",
                expert=self.expert,
                episodes=missing,
                workers=plan.workers,
                seeds=seeds,
                worlds=worlds,
            )
            count, returns = [have], []

            def on_episode(eid: int, episode: Episode) -> None:
                count[0] += 1
                returns.append(episode.meta.total_return)
                mean = sum(returns) / len(returns)
                self.view.update("record", count[0], wanted, f"{self.expert} on {scenario}, mean return {mean:.2f}")

            try:
                record(settings, self.registry, rec, store, scenario, on_episode=on_episode)
            finally:  # an interrupted recording keeps its episodes and the time they took
                seconds = self.state.seconds("record") + time.perf_counter() - started
                self.state.put("record", inputs, None, seconds)
            result = self._recorded(store, settings, _expert_episodes(store, scenario))
        self.state.put("record", inputs, result, seconds)
        self.view.finish("record", f"{result['episodes']} episodes, {result['frames']:,} frames")
        return result

    def _recorded(self, store: TrajectoryStore, settings: GolemSettings, episodes: int) -> dict[str, Any]:
        frames = sum(i.meta.length for i in store.episodes(source="expert", scenario=self.plan.scenario))
        return {
            "episodes": episodes,
            "frames": frames,
            "frame_skip": int(settings.game.frame_skip),
            "sensors": list(settings.brain.sensors),
        }

    def train(self, recorded: dict[str, Any]) -> dict[str, Any]:
        """``golem run train --json`` with the row's settings: the training result and the in-training search."""
        from golem_cli.commands.train import tune_after_training

        plan = self.plan
        default_model = self.st.resolve().settings.brain.model
        with_model = [plan.model] if plan.model != default_model else []
        # With --tune the search runs once, as its own stage, not also inside training (a spec's tune_episodes).
        no_spec_tune = ["training.tune_episodes=0"] if plan.tune else []
        inputs = {
            "recorded": recorded,
            "model": plan.model,
            "sets": list(plan.sets),
            "plugins": list(plan.plugins),
            "tune": plan.tune,
        }
        done = self.state.done("train", inputs)
        if done is not None:
            self.view.finish("train", _trained_line(done), skipped=True)
            return done
        resolved = self.resolve(plugin=with_model, set_=[*plan.sets, *no_spec_tune])
        settings = resolved.settings
        self.view.begin("train", None, f"{settings.brain.model} on {recorded['episodes']} episodes")
        started = time.perf_counter()
        epochs: dict[str, int] = {}

        def on_batch(p: BatchProgress) -> None:
            first = epochs.setdefault("first", p.epoch)
            total = (p.epochs - first) * p.batches if p.batches else None
            done_ = (p.epoch - first) * (p.batches or 0) + p.batch
            self.view.update("train", done_, total, f"epoch {p.epoch + 1}/{p.epochs}, loss {p.mean_loss:.4f}")

        result = train(
            settings,
            self.registry,
            TrainPlan(store=settings.store_path(), given=frozenset(resolved.sources)),
            on_batch=on_batch,
        )
        if result.interrupted:
            raise KeyboardInterrupt
        tuned = tune_after_training(
            self.st,
            resolved,
            result,
            quiet=True,
            on_progress=lambda d, t, info: self.view.update("train", d, t, f"tuning {info}"),
        )
        if tuned is not None and tuned.get("error") == "interrupted":
            raise KeyboardInterrupt
        out = result.to_dict() | {"tuned": tuned}
        seconds = time.perf_counter() - started
        out["tune_seconds"] = float((tuned or {}).get("seconds") or 0.0)
        self.state.put("train", inputs, out, seconds - out["tune_seconds"])
        self.view.finish("train", _trained_line(out))
        return out

    def tune(self, trained: dict[str, Any]) -> dict[str, Any]:
        """``golem run tune --json`` on the trained checkpoint (30 episodes a candidate, 30 to confirm)."""
        from golem_cli.commands.tune import tune_model, tune_summary

        inputs = {"model": trained["archive"]}
        done = self.state.done("tune", inputs)
        if done is not None:
            self.view.finish("tune", _tuned_line(done), skipped=True)
            return done
        self.view.begin("tune", None, "press thresholds by play")
        started = time.perf_counter()
        search, archive, active = tune_model(
            self.st,
            self.resolve(),
            Path(trained["archive"]),
            workers=self.plan.workers,
            on_progress=lambda d, t, info: self.view.update("tune", d, t, info),
        )
        out = tune_summary(search, archive, active)
        self.state.put("tune", inputs, out, time.perf_counter() - started)
        self.view.finish("tune", _tuned_line(out))
        return out

    def evaluate(self, checkpoint: str) -> dict[str, Any]:
        """``golem run evaluate`` of ``checkpoint`` against the random policy and the expert: the board's summary."""
        episodes = self.plan.evaluated_episodes
        inputs = {"model": checkpoint, "episodes": episodes}
        done = self.state.done("evaluate", inputs)
        if done is not None:
            self.view.finish("evaluate", _evaluated_line(done), skipped=True)
            return done
        player = resolve_player(self.resolve(), Path(checkpoint), self.registry)
        settings = player.settings
        resolve_scenario(player.scenario, settings.game.doom_map)
        plan = EvalPlan(
            model_path=player.path,
            scenario=player.scenario,
            episodes=episodes,
            workers=self.plan.workers,
            threshold=player.threshold,
            expert=expert_for(self.registry, player.scenario),
            frame_skip=int(settings.game.frame_skip),
        )
        total = episodes * len(plan.roles)
        self.view.begin("evaluate", total, f"{', '.join(plan.roles)} on seeds {plan.start_seed}…")
        started = time.perf_counter()
        count = [0]

        def on_episode(_: Any) -> None:
            count[0] += 1
            self.view.update("evaluate", count[0], total, f"{', '.join(plan.roles)} on seeds {plan.start_seed}…")

        board = evaluate(settings, self.registry, plan, on_episode=on_episode)
        out = board.summary() | {"measured": datetime.now(UTC).isoformat(timespec="seconds")}
        self.state.put("evaluate", inputs, out, time.perf_counter() - started)
        self.view.finish("evaluate", _evaluated_line(out))
        return out


def check_plan(st: AppState, plan: ZooPlan) -> str:
    """The expert of ``plan``'s scenario, after the checks that need no engine (one-line errors)."""
    registry = st.host.registry
    resolve_scenario(plan.scenario, None)  # an unknown scenario lists the known ones
    registry.get("models", plan.model)  # an unknown model lists the known ones
    expert = expert_for(registry, plan.scenario)
    if expert is None:
        with_experts = sorted(
            {
                s
                for n in registry.names("experts")
                if getattr(registry.get("experts", n).obj, "reference", True)
                for s in getattr(registry.get("experts", n).obj, "scenarios", ())
            }
        )
        raise GolemError(
            f"scenario {plan.scenario!r} has no scripted expert to record; "
            f"the zoo's scenarios: {', '.join(with_experts)}"
        )
    try:
        plan.folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GolemError(f"cannot create the work folder {plan.folder}: {exc.strerror or exc}") from None
    return expert


def _with_game(settings: GolemSettings, **game: Any) -> GolemSettings:
    return settings.model_copy(update={"game": settings.game.model_copy(update=game)})


def played_checkpoint(trained: dict[str, Any], tuned: dict[str, Any] | None) -> str:
    """The checkpoint a row's board plays: what a user's active model is after the row's stages.

    The ``--tune`` stage's archive where it ran; else the archive the in-training search (a spec's
    ``tune_episodes``) wrote when its thresholds were confirmed; else the trained archive.
    """
    in_training = trained.get("tuned") or {}
    searched = in_training.get("archive") if in_training.get("accepted") else None
    return str((tuned or {}).get("archive") or searched or trained["archive"])


def _expert_episodes(store: TrajectoryStore, scenario: str) -> int:
    return len(store.episodes(source="expert", scenario=scenario))


def _trained_line(trained: dict[str, Any]) -> str:
    val = trained.get("validation") or {}
    exact = f", validation exact match {val['exact_match']:.3f}" if val.get("exact_match") is not None else ""
    return f"{trained.get('updates')} updates{exact}"


def _tuned_line(tuned: dict[str, Any]) -> str:
    return "thresholds kept" if tuned.get("accepted") else "thresholds unchanged (not confirmed)"


def _evaluated_line(summary: dict[str, Any]) -> str:
    norm = (summary.get("share") or {}).get("normalised")
    return f"{summary['episodes']} episodes a policy, normalised {'—' if norm is None else f'{norm:.1%}'}"


def build_row(
    plan: ZooPlan,
    state: ZooState,
    recorded: dict[str, Any],
    trained: dict[str, Any],
    tuned: dict[str, Any] | None,
    board: dict[str, Any],
) -> dict[str, Any]:
    """The row in ``bench/results/zoo.json``'s format."""
    label, key = MEASURES.get(plan.scenario, ("return", "return"))
    policies = board["policies"]
    in_training = trained.get("tuned")
    minutes = {stage: round(state.seconds(stage) / 60, 2) for stage in STAGES}
    if in_training and "seconds" in in_training:  # the spec's search inside training counts as tuning
        minutes["tune"] = round(float(trained.get("tune_seconds") or in_training["seconds"]) / 60, 2)
    return {
        "scenario": plan.scenario,
        "model": plan.model,
        "measured": board.get("measured") or datetime.now(UTC).isoformat(timespec="seconds"),
        "recorded_episodes": recorded["episodes"],
        # the modifications the episodes were recorded on, one variant each (the spec's ``vary``); None: shipped map
        "recorded_on": (state.stages.get("record", {}).get("inputs") or {}).get("vary"),
        "frames": trained["data"]["total_steps"],
        "frame_skip": board.get("frame_skip", 1),
        "settings": list(plan.sets),
        "sensors": list(recorded["sensors"]),
        "updates": trained.get("updates"),
        "best_epoch": trained.get("best_epoch"),
        "thresholds": trained.get("thresholds"),  # calibrated on validation; what it plays: "tuned…"["plays"]
        "tuned": None if tuned is None else {k: tuned[k] for k in TUNE_KEYS},
        # the scenario's spec (training.tune_episodes) tuned the thresholds inside `golem run train`
        "tuned_in_training": in_training and {k: in_training.get(k) for k in (*TUNE_KEYS, "seconds", "error")},
        "validation": {k: trained["validation"][k] for k in ("loss", "exact_match", "steps")}
        if trained.get("validation")
        else None,
        "minutes": minutes,
        "eval_episodes": board["episodes"],
        "return": {role: policies[role]["return"] for role in policies},
        "measure": {"label": label, **{role: policies[role][key] for role in policies}},
        "normalised": board["share"]["normalised"],
        "reference": REFERENCES.get(plan.scenario),
    }


def row_key(row: dict[str, Any]) -> str:
    """The row's key in ``zoo.json``: ``scenario/model[+sensor…][+tuned]``."""
    return f"{row['scenario']}/{board_name(row['model'], row.get('sensors', ['visual'])[1:], bool(row.get('tuned')))}"


def fmt(stat: Any) -> str:
    """``mean ± std`` of a statistic, a plain number, or an em dash."""
    if isinstance(stat, dict):
        return f"{stat['mean']:.2f} ± {stat['std']:.2f}"
    return "—" if stat is None else f"{stat:.2f}"


def minutes_cell(spent: dict[str, float]) -> str:
    """Training minutes, plus the threshold search's where one ran (``golem run tune``, or inside training)."""
    tune = spent.get("tune") or 0.0
    return f"{spent['train']:.1f}" + (f" + {tune:.1f}" if tune >= 0.05 else "")


def row_cells(r: dict[str, Any]) -> list[str]:
    """A row's cells under :data:`ROW_COLUMNS`."""
    m = r["measure"]
    norm = "—" if r["normalised"] is None else f"{100 * r['normalised']:.0f} %"
    return [
        r["scenario"],
        board_name(r["model"], r.get("sensors", ["visual"])[1:], bool(r.get("tuned"))),
        str(r.get("frame_skip", 1)),
        f"{r['recorded_episodes']} ({r['frames']:,})" + (" on variants" if r.get("recorded_on") else ""),
        minutes_cell(r["minutes"]),
        str(r["eval_episodes"]),
        m["label"],
        fmt(m.get("model")),
        fmt(m.get("random")),
        fmt(m.get("expert")),
        norm,
        r["reference"] or "—",
    ]
