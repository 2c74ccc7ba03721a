"""`golem run audit`, `golem run examine`, `golem run summary` and `golem models list`.

A tiny store is recorded on the real engine (``golem run record --expert basic``);
models are untrained (interfaces, not skill), saved with ``save_checkpoint`` the
way training saves them.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from golem.data.store import TrajectoryStore
from golem.diagnostics.audit import AuditPlan, audit, stream_episodes
from golem.errors import GolemError
from golem.learning.checkpoints import restore, save_checkpoint
from golem.learning.modelspec import ModelSpec
from golem.learning.validation import Tally
from golem.logs import configure_logging
from golem.plugins import load_plugins
from golem.settings import GolemSettings
from golem_cli.app import build_app
from golem_cli.commands.audit import parse_ids
from golem_explain.examine import examine
from golem_explain.summary import summarize
from tests.conftest import GOLEM, _clean_env
from tests.helpers import json_out

pytestmark = pytest.mark.engine
RUNNER = CliRunner(env={"COLUMNS": "200"})

PROFILE_ACTIONS = [
    "MOVE_FORWARD",
    "MOVE_BACKWARD",
    "MOVE_LEFT",
    "MOVE_RIGHT",
    "TURN_LEFT",
    "TURN_RIGHT",
    "ATTACK",
    "USE",
]


# --- fixtures ----------------------------------------------------------------


class Workspace:
    """A folder with a recorded store and untrained checkpoints; runs the real `golem` in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / "golem-data"
        self.store = self.data / "stores" / "demos"
        self.thermal_store = root / "thermal-store"
        self.models = self.data / "models" / "basic"
        self.active = self.models / "active.safetensors"
        self.thermal_model = root / "thermal.safetensors"

    def golem(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [str(GOLEM), "--log-level", "warning", *args],
            capture_output=True,
            text=True,
            env=_clean_env(),
            cwd=self.root,
            timeout=300,
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"golem {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def invoke(self, *args: str) -> str:
        """The same app in this process (typer's runner), data under this workspace; returns stdout."""
        result = RUNNER.invoke(build_app(), ["--log-level", "warning", "--set", f"data.root={self.data}", *args])
        configure_logging(level="warning")  # the app bound logging to the runner's stderr, now closed
        assert result.exit_code == 0, (result.output, result.exception)
        return result.stdout

    def settings(self, sensors: list[str] | None = None, **training) -> GolemSettings:
        return GolemSettings(
            data={"root": str(self.data)},
            brain={"sensors": sensors or ["visual"]},
            training={"device": "cpu", **training},
        )


def _save_model(settings: GolemSettings, path: Path, seed: int, extra: dict | None = None):
    registry = load_plugins().registry
    spec = ModelSpec.from_settings(settings, registry)
    torch.manual_seed(seed)
    model = registry.get("models", spec.model).obj(spec).eval()
    save_checkpoint(path, model, spec.to_metadata(), extra or {})
    return model, spec


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    w = Workspace(tmp_path_factory.mktemp("audit"))
    w.golem("run", "record", "--expert", "basic", "--episodes", "6", check=True)
    w.golem(
        "run",
        "record",
        "--expert",
        "basic",
        "--episodes",
        "1",
        "--plugin",
        "thermal",
        "--store",
        str(w.thermal_store),
        check=True,
    )
    _save_model(w.settings(), w.active, seed=0)
    _save_model(w.settings(["visual", "thermal"]), w.thermal_model, seed=1)
    return w


def _lengths(store: Path) -> dict[int, int]:
    with TrajectoryStore.open(store) as opened:
        return {info.id: info.length for info in opened.episodes()}


def _png(path: str | Path) -> np.ndarray:
    import matplotlib.image

    assert Path(path).is_file(), path
    assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(str(path))
    assert image.ndim == 3 and image.shape[2] in (3, 4)
    assert float(image[..., :3].std()) > 0.01  # not a blank canvas
    return image


# --- streams and scores (in process) ------------------------------------------


def test_streams_carry_state_and_cover_every_frame_once(ws: Workspace):
    """Windows of L=4 with carried state equal one pass over the whole episode; tails included."""
    registry = load_plugins().registry
    settings = ws.settings()
    spec = ModelSpec.from_settings(settings, registry)
    torch.manual_seed(0)
    model = registry.get("models", "cfc").obj(spec).eval()
    L = 4
    with TrajectoryStore.open(ws.store) as store:
        infos = store.episodes()
        assert any(info.length % L for info in infos)  # some episode has a tail shorter than L
        windows = list(stream_episodes(model, store, infos, spec.sensors, L, batch_size=3))
        for info in infos:
            mine = [w for w in windows if w.episode == info.id]
            assert [w.start for w in mine] == list(range(0, info.length, L))  # stride L, in order, once
            assert sum(len(w.probabilities) for w in mine) == info.length
            assert len(mine[-1].probabilities) == info.length - mine[-1].start  # the tail is a shorter window
            frames = torch.from_numpy(store.read(info, "frames")).unsqueeze(0)
            with torch.no_grad():
                logits, _ = model({"visual": spec.sensor("visual").to_network(frames)}, None)
            whole = torch.sigmoid(logits)[0].numpy()
            streamed = np.concatenate([w.probabilities for w in mine])
            np.testing.assert_allclose(streamed, whole, atol=1e-5)
            targets = np.concatenate([w.targets for w in mine])
            np.testing.assert_array_equal(targets, store.read(info, "actions"))
        # Evaluating a later window from a zero state (the seed's audit) gives other outputs.
        later = next(w for w in windows if w.start > 0)
        info = store.get(later.episode)
        frames = torch.from_numpy(store.read(info, "frames", later.start, later.start + len(later.probabilities)))
        with torch.no_grad():
            cold, _ = model({"visual": spec.sensor("visual").to_network(frames.unsqueeze(0))}, None)
        assert not np.allclose(torch.sigmoid(cold)[0].numpy(), later.probabilities, atol=1e-6)


def test_tally_scores():
    probs = np.array([[0.9, 0.1, 0.2], [0.8, 0.7, 0.1], [0.2, 0.6, 0.3], [0.1, 0.2, 0.4]], dtype=np.float32)
    targets = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 0]], dtype=np.uint8)
    tally = Tally(3)
    tally.add(probs[:2], targets[:2], 0.5)
    tally.add(probs[2:], targets[2:], 0.5)
    scores = tally.scores(["a", "b", "c"])
    # a: tp=1 fp=1 fn=1; b: tp=2 fp=0 fn=0; c: never pressed, never predicted.
    assert (scores["a"].precision, scores["a"].recall, scores["a"].f1) == (0.5, 0.5, 0.5)
    assert scores["a"].support == 2 and scores["a"].predicted == 2
    assert (scores["b"].precision, scores["b"].recall, scores["b"].f1, scores["b"].support) == (1.0, 1.0, 1.0, 2)
    assert (scores["c"].precision, scores["c"].recall, scores["c"].f1, scores["c"].support) == (None, None, None, 0)
    assert tally.steps == 4 and tally.exact_match == 0.5  # steps 0 and 3 are right everywhere


def test_parse_ids():
    assert parse_ids("3,0,5-7,5") == [0, 3, 5, 6, 7]
    for bad in ("", "x", "3-1", "-2"):
        with pytest.raises(GolemError):
            parse_ids(bad)


# --- the commands --------------------------------------------------------------


def test_audit_json_table_and_chart(ws: Workspace):
    lengths = _lengths(ws.store)
    chart = ws.root / "charts" / "audit.png"
    report = json_out(
        ws.golem("run", "audit", "--episodes", "0-5", "-L", "4", "--chart", str(chart), "--json", check=True)
    )
    assert report["selection"] == "episodes" and report["episodes"] == sorted(lengths)
    assert report["steps"] == sum(lengths.values())  # every frame, tails included
    assert report["windows"] == sum(math.ceil(n / 4) for n in lengths.values())
    assert report["sequence_length"] == 4 and report["threshold"] == 0.5
    assert list(report["actions"]) == PROFILE_ACTIONS
    with TrajectoryStore.open(ws.store) as store:
        pressed = sum(store.read(i, "actions").sum(axis=0) for i in lengths)
    for name, count in zip(PROFILE_ACTIONS, pressed.tolist()):
        a = report["actions"][name]
        assert a["support"] == count
        for key in ("precision", "recall", "f1"):
            assert a[key] is None or 0.0 <= a[key] <= 1.0
    assert 0.0 <= report["exact_match"] <= 1.0
    assert report["chart"] == str(chart)
    _png(chart)
    # People get a table and the chart's path; the default chart goes under data.root/reports.
    table = ws.invoke("run", "audit", "--episodes", "1")
    assert "precision" in table and "ATTACK" in table and "exact match" in table
    assert "audit-basic-active.png" in table
    _png(ws.data / "reports" / "audit-basic-active.png")


def test_audit_defaults_to_the_checkpoints_validation_episodes(ws: Workspace):
    path = ws.root / "trained.safetensors"
    extra = {
        "training": {"sequence_length": 5},
        "data": {"store": str(ws.store.resolve()), "validation_episodes": [1, 4, 99]},  # 99 is gone
    }
    _save_model(ws.settings(), path, seed=2, extra=extra)
    report = audit(ws.settings(), load_plugins().registry, AuditPlan(model=path, store=ws.store))
    assert report.selection == "validation" and report.episodes == [1, 4]
    assert report.sequence_length == 5  # the L it was trained with
    lengths = _lengths(ws.store)
    assert report.steps == lengths[1] + lengths[4]
    assert report.chart is None
    # Another store: its ids are other episodes, so the fingerprint does not apply.
    other = audit(ws.settings(), load_plugins().registry, AuditPlan(model=path, store=ws.thermal_store))
    assert other.selection == "all"
    with pytest.raises(GolemError, match="no episode 42 in"):
        audit(ws.settings(), load_plugins().registry, AuditPlan(model=path, store=ws.store, episodes=[0, 42]))


def test_examine_writes_grad_cam_png(ws: Workspace):
    out = ws.data / "reports" / "examine-basic-ep2-t5.png"  # the default place
    result = json_out(ws.golem("run", "examine", "--episode", "2", "--step", "5", "--json", check=True))
    assert (ws.root / result["path"]).resolve() == out.resolve() and result["episode"] == 2 and result["step"] == 5
    assert result["action"] in PROFILE_ACTIONS
    assert result["probability"] == max(result["probabilities"].values())
    assert result["layers"] == {"visual": "cortices.visual.4"}  # last conv of the 3-layer cortex
    image = _png(out)
    assert image.shape[1] > image.shape[0]  # input and heat map side by side
    # The explanation is of the live state: the same probabilities as running steps 0..5 in one pass.
    restored = restore(ws.active, load_plugins().registry)
    with TrajectoryStore.open(ws.store) as store:
        frames = torch.from_numpy(store.read(2, "frames", 0, 6)).unsqueeze(0)
    with torch.no_grad():
        logits, _ = restored.model({"visual": restored.spec.sensor("visual").to_network(frames)}, None)
    live = torch.sigmoid(logits)[0, 5].numpy()
    np.testing.assert_allclose([result["probabilities"][n] for n in PROFILE_ACTIONS], live, atol=1e-5)


def test_examine_explains_the_thermal_cortex_too(ws: Workspace):
    settings = ws.settings(["visual", "thermal"])
    out = ws.root / "ex" / "thermal.png"
    result = examine(settings, load_plugins().registry, 0, 3, model=ws.thermal_model, store=ws.thermal_store, out=out)
    assert set(result.layers) == {"visual", "thermal"}
    image = _png(out)
    assert image.shape[1] > 3 * image.shape[0]  # four panels: visual, its map, thermal, its map


def test_summary_and_models_list(ws: Workspace):
    summary = json.loads(ws.invoke("run", "summary", "--plugin", "thermal", "--json"))
    assert summary["source"] == "settings"
    assert [s["name"] for s in summary["sensors"]] == ["visual", "thermal"]
    cortices = sum(s["parameters"] for s in summary["sensors"] if s["parameters"] is not None)
    assert summary["standardiser"] == 2 * (256 + 128)  # BatchNorm1d over visual + thermal features: scale, shift
    assert summary["total"] == cortices + summary["standardiser"] + summary["core"] + summary["head"] > 0
    assert "Conv2d" in summary["table"] and "Total params" in summary["table"]
    # the fast CfC core runs all steps in one call: one row with its parameters, not one per step
    assert summary["table"].count("CfCCore") == 1 and f"{summary['core']:,}" in summary["table"]
    from_file = summarize(ws.settings(), load_plugins().registry, ws.thermal_model, steps=2)
    assert from_file.source == str(ws.thermal_model) and from_file.total == summary["total"]
    assert [s.name for s in from_file.sensors] == ["visual", "thermal"]  # the checkpoint's, not the settings'

    archive = ws.models / "archive"
    metrics = {
        "history": [{"epoch": 0}, {"epoch": 1}],
        "validation": {"exact_match": 0.5, "actions": {"ATTACK": {"f1": 0.25}, "USE": {"f1": None}}},
    }
    extra = {
        "training": {"epochs": 2, "loss": "focal", "learning_rate": 0.002, "sequence_length": 8},
        "metrics": metrics,
        "created": "2026-01-02T03:04:05+00:00",
    }
    _save_model(ws.settings(), archive / "20260102T030405Z-cfc.safetensors", seed=3, extra=extra)
    (archive / "20260103T000000Z-cfc.safetensors").write_bytes(b"not a checkpoint")
    entries = json_out(ws.golem("models", "list", "--json", check=True))
    assert [Path(e["path"]).name for e in entries] == [
        "20260102T030405Z-cfc.safetensors",
        "20260103T000000Z-cfc.safetensors",
    ]
    good, bad = entries
    assert good["profile"] == "basic" and good["model"] == "cfc" and good["sensors"] == ["visual"]
    assert (good["epochs"], good["loss"], good["learning_rate"]) == (2, "focal", 0.002)
    assert good["validation"]["exact_match"] == 0.5 and good["created"].startswith("2026-01-02")
    assert good["bytes"] > 0 and good["active"] is False and good["error"] is None
    assert "corrupt" in bad["error"]
    table = ws.invoke("models", "list")
    assert "focal" in table and "unreadable" in table and "20260102T030405Z-cfc.safetensors" in table


def test_collapse_repeats_shows_a_per_step_block_once():
    """A cell called once per step (the ncps reference loop, a plugin's core) is listed once with its count."""
    from golem_explain.summary import collapse_repeats

    rows = ["DoomNet", "├─CfCCore: 1-3"]
    for t in range(5):
        rows += [f"│    └─CfCCell: 2-{2 * t + 1}", f"│    │    └─Linear: 3-{t + 1}"]
    rows += ["├─Linear: 1-4"]
    out = collapse_repeats("\n".join(rows)).splitlines()
    assert out.count("│    └─CfCCell: 2-1") == 1 and sum("CfCCell" in line for line in out) == 1
    assert any("the 2 row(s) above repeat 5× in all" in line for line in out) and out[-1] == "├─Linear: 1-4"


# --- bad input: one line, non-zero exit ---------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["run", "audit", "--set", "data.root=nothing-here"],
            "no active model for profile basic; run `golem run train` first",
        ),
        (["run", "audit", "--model", "corrupt.safetensors"], "is corrupt or truncated"),
        (["run", "examine", "--episode", "0", "--step", "999"], "step 999 is outside episode 0"),
        (
            ["run", "audit", "--model", "thermal.safetensors"],
            "the model reads sensor 'thermal' but episode 0 has no 'thermals' array",
        ),
    ],
)
def test_bad_input_is_one_line(ws: Workspace, args: list[str], needle: str):
    (ws.root / "corrupt.safetensors").write_bytes(ws.active.read_bytes()[:2000])
    proc = ws.golem(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_activate_an_archive_and_a_damaged_active_model_is_shown_damaged(tmp_path: Path):
    w = Workspace(tmp_path)
    archive = w.models / "archive" / "20260102T000000Z-cfc.safetensors"
    _save_model(w.settings(), archive, seed=4, extra={"created": "2026-01-02T00:00:00+00:00"})
    _save_model(w.settings(), w.active, seed=5)  # an active model that is not that archive
    assert json_out(w.golem("models", "list", "--json", check=True))[0]["active"] is False
    done = w.golem("models", "activate", "1", check=True)
    assert "active model" in done.stdout and w.active.read_bytes() == archive.read_bytes()
    assert json_out(w.golem("models", "list", "--json", check=True))[0]["active"] is True
    blob = bytearray(w.active.read_bytes())
    blob[-5] ^= 0xFF  # damage the tensor data, keep the header
    w.active.write_bytes(bytes(blob))
    listing = w.golem("models", "list", check=True)
    assert "the active model is damaged" in listing.stdout and "SHA-256" in listing.stdout
    assert json_out(w.golem("models", "list", "--json", check=True))[0]["active"] is False
    missing = w.golem("models", "activate", "7")
    assert missing.returncode != 0 and "is not one of them" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    w.golem("models", "activate", str(archive), check=True)  # by path
    assert json_out(w.golem("models", "list", "--json", check=True))[0]["active"] is True
