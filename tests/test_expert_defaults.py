"""Recording with an expert's defaults: the scenario it plays without ``--scenario``, and the ``random`` expert."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from golem.data.store import TrajectoryStore
from golem.diagnostics.evaluation import expert_for
from golem.plugins import load_plugins
from golem.runtime.random_policy import RandomExpert
from golem.testing import assert_expert_contract

pytestmark = pytest.mark.engine


def _episodes(root: Path) -> list:
    with TrajectoryStore.open(root / "stores" / "demos") as store:
        return [(info, store.read(info, "actions")) for info in store.episodes()]


def test_deathmatch_records_without_a_scenario(golem_cli, tmp_path: Path) -> None:
    """The expert's default scenario is one the engine starts alone (``cig`` needs a network game)."""
    proc = golem_cli(
        ["run", "record", "--expert", "deathmatch", "-n", "1", "--max-steps", "40", "--set", f"data.root={tmp_path}"]
    )
    assert proc.returncode == 0, proc.stderr
    ((info, actions),) = _episodes(tmp_path)
    assert info.meta.scenario == "deathmatch" and len(actions) > 0


def test_random_expert_records_any_scenario_reproducibly(golem_cli, tmp_path: Path) -> None:
    for root in (tmp_path / "a", tmp_path / "b"):
        proc = golem_cli(
            [
                "run",
                "record",
                "--expert",
                "random",
                "--scenario",
                "take_cover",
                "-n",
                "2",
                "--max-steps",
                "60",
                "--seed",
                "7",
                "--set",
                f"data.root={root}",
            ]
        )
        assert proc.returncode == 0, proc.stderr
    a, b = _episodes(tmp_path / "a"), _episodes(tmp_path / "b")
    assert [i.meta.scenario for i, _ in a] == ["take_cover"] * 2 and [i.meta.seed for i, _ in a] == [7, 8]
    for (_, x), (_, y) in zip(a, b, strict=True):
        assert np.array_equal(x, y)  # the same seed records the same presses
    assert not np.array_equal(a[0][1][:10], a[1][1][:10])  # another seed draws others
    pressed = np.concatenate([x for _, x in a]).mean(axis=0)
    assert np.all((pressed > 0.2) & (pressed < 0.8))  # each button about half the time


def test_random_expert_contract_and_never_a_scoreboards_expert(golem_cli) -> None:
    assert_expert_contract(RandomExpert, tics=32)
    registry = load_plugins().registry
    assert registry.get("experts", "random").obj is RandomExpert
    # it plays every scenario, yet a scenario without an expert of its own has none on the scoreboard
    assert expert_for(registry, "rocket_basic") is None and expert_for(registry, "take_cover") == "take_cover"
    listed = golem_cli(["plugins", "list"], env={"COLUMNS": "300"}, check=True).stdout
    assert "random" in listed


def test_a_variants_expert_is_its_scenarios_expert(tmp_path: Path) -> None:
    """A look-alike variant of a shipped scenario is scored against that scenario's expert, never a collector
    (the world model's random-hold plays take_cover too, and its name sorts first)."""
    registry = load_plugins().registry
    for scenario in ("take_cover", "defend_the_center", "health_gathering"):
        cfg = tmp_path / f"{scenario}-look.cfg"
        cfg.write_text("doom_map = map01\n")
        cfg.with_suffix(".variant.json").write_text(json.dumps({"scenario": scenario}))
        assert expert_for(registry, str(cfg)) == scenario
    assert not getattr(registry.get("experts", "random-hold").obj, "reference", True)
