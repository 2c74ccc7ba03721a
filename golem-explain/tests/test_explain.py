"""golem-explain without the engine: its registrations, the audit's chart and a summary of the settings' network."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

import golem_explain.plugin
from golem.diagnostics.audit import AuditReport
from golem.learning.validation import ActionScore
from golem.plugins import load_plugins
from golem_cli.app import build_app
from golem_explain.chart import write_chart

HOST = load_plugins(only=["golem-models"], extra=[("explain", golem_explain.plugin)])


def test_registers_the_chart_and_two_run_commands():
    assert HOST.registry.names("charts") == ["audit"]
    assert HOST.registry.get("charts", "audit").obj is write_chart
    run = next(g.typer_instance for g in build_app(HOST).registered_groups if g.name == "run")
    names = [c.name for c in run.registered_commands]
    assert names.index("train") < names.index("summary") < names.index("audit") < names.index("examine")


def test_the_audit_chart_is_a_png(tmp_path: Path):
    scores = {
        "ATTACK": ActionScore(precision=0.5, recall=0.25, f1=1 / 3, support=4, predicted=2),
        "USE": ActionScore(precision=None, recall=None, f1=None, support=0, predicted=0),  # 0/0: drawn as 0
    }
    report = AuditReport("m.safetensors", "s", "all", [0, 1], 40, 5, 8, 0.5, 0.75, scores)
    path = write_chart(report, tmp_path / "reports" / "audit.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    image = matplotlib.image.imread(str(path))
    assert image.ndim == 3 and float(np.asarray(image)[..., :3].std()) > 0.01


def test_summary_of_the_settings_network():
    result = CliRunner().invoke(build_app(HOST), ["run", "summary", "--set", "training.sequence_length=4", "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["source"] == "settings" and [s["name"] for s in summary["sensors"]] == ["visual"]
    assert (
        summary["total"]
        == summary["sensors"][0]["parameters"] + summary["standardiser"] + summary["core"] + (summary["head"])
    )
