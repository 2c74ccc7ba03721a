"""``golem data export --format minari`` / ``import --format minari``: the real store, real Minari files."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from typer.testing import CliRunner

minari = pytest.importorskip("minari")

from golem.data.arrays import array_rules  # noqa: E402
from golem.data.store import EpisodeMeta, TrajectoryStore  # noqa: E402
from golem.plugins import load_plugins  # noqa: E402
from golem.profiles import BASIC  # noqa: E402
from golem_cli.app import build_app  # noqa: E402

RULES = array_rules(load_plugins().registry)


def invoke(*args: str):
    return CliRunner().invoke(build_app(), list(args))


def _synthetic(store: TrajectoryStore, T: int, seed: int, **meta: object) -> int:
    rng = np.random.default_rng(seed)
    arrays = {
        "frames": rng.integers(0, 256, (T, 3, 64, 64), dtype=np.uint8),
        "depths": rng.integers(0, 256, (T, 1, 64, 64), dtype=np.uint8),
        "actions": rng.integers(0, 2, (T, len(BASIC)), dtype=np.uint8),
        "rewards": rng.normal(size=T).astype(np.float32),
        "tic": (np.arange(T, dtype=np.int32) * 4 + 1),
    }
    fields = {
        "profile": "basic",
        "action_names": list(BASIC),
        "scenario": "basic",
        "sensors": ["visual", "depth"],
        "source": "expert",
        "seed": seed,
        "frame_skip": 4,
        "tags": ["t"],
        **meta,
    }
    return store.write_episode(EpisodeMeta(**fields), arrays, RULES)


@pytest.fixture
def minari_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Minari's datasets folder in the test's tmp dir: nothing is written to the home folder."""
    root = tmp_path / "minari-datasets"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "demos"
    with TrajectoryStore.create(path, chunk_steps=16) as opened:
        _synthetic(opened, 37, 1, terminated=True, truncated=False)
        _synthetic(opened, 5, 2, terminated=False, truncated=True, map="MAP01")
        _synthetic(opened, 16, 3, source="recovery", extra={"beta": 0.5})  # ended how: not recorded
    return path


def _snapshot(path: Path) -> list[tuple[dict, dict[str, np.ndarray]]]:
    with TrajectoryStore.open(path) as opened:
        return [(info.meta.to_dict(), opened.read_episode(info)) for info in opened.episodes()]


def test_export_loads_in_minari_and_round_trips_exactly(store: Path, minari_home: Path, tmp_path: Path):
    result = invoke("data", "export", "--format", "minari", "golem/basic/expert-v0", "--store", str(store), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["steps"] == 37 + 5 + 16

    dataset = minari.load_dataset("golem/basic/expert-v0")
    assert dataset.total_episodes == 3 and dataset.total_steps == 58
    assert dataset.observation_space == spaces.Dict(
        {
            "depths": spaces.Box(0, 255, (1, 64, 64), np.uint8),
            "frames": spaces.Box(0, 255, (3, 64, 64), np.uint8),
        }
    )
    assert dataset.action_space == spaces.MultiBinary(len(BASIC))
    assert dataset.spec.env_spec is None  # the three episodes differ in map: no single env to recover
    originals = _snapshot(store)
    for (meta, arrays), episode in zip(originals, dataset.iterate_episodes()):
        n = meta["length"]
        assert episode.observations["frames"].shape == (n + 1, 3, 64, 64)
        np.testing.assert_array_equal(episode.observations["frames"][:n], arrays["frames"])
        np.testing.assert_array_equal(episode.observations["frames"][n], arrays["frames"][-1])  # repeated
        np.testing.assert_array_equal(episode.actions, arrays["actions"])
        np.testing.assert_array_equal(episode.rewards, arrays["rewards"])
        assert episode.terminations[-1] == bool(meta["terminated"]) and not episode.terminations[:-1].any()
        assert episode.truncations[-1] == (not meta["terminated"]) and not episode.truncations[:-1].any()
        np.testing.assert_array_equal(episode.infos["tic"][:n], arrays["tic"])
    saved = list(dataset.storage.get_episode_metadata(range(3)))
    assert [json.loads(m["golem_meta"]) for m in saved] == [meta for meta, _ in originals]
    assert dataset.storage.metadata["golem"]["episodes"] == [0, 1, 2]

    back = tmp_path / "back"
    result = invoke("data", "import", "--format", "minari", "golem/basic/expert-v0", "--store", str(back), "--json")
    assert result.exit_code == 0, result.output
    assert [row["steps"] for row in json.loads(result.stdout)["imported"]] == [37, 5, 16]
    for (meta, arrays), (meta2, arrays2) in zip(originals, _snapshot(back), strict=True):
        extra = meta2.pop("extra")
        assert extra.pop("imported_from") == "minari:golem/basic/expert-v0"
        assert extra.pop("exported_episode") == originals.index((meta, arrays))
        assert {**meta2, "extra": extra} == meta  # every field, created and None terminated included
        assert sorted(arrays2) == sorted(arrays)
        for key in arrays:
            assert arrays2[key].dtype == arrays[key].dtype
            np.testing.assert_array_equal(arrays2[key], arrays[key])


def test_export_to_out_records_the_env_spec(store: Path, tmp_path: Path, minari_home: Path):
    out = tmp_path / "elsewhere"
    result = invoke(
        "data",
        "export",
        "--format",
        "minari",
        "golem/basic/first-v1",
        "--out",
        str(out),
        "--episode",
        "0",
        "--store",
        str(store),
    )
    assert result.exit_code == 0, result.output
    assert (out / "golem" / "basic" / "first-v1" / "data" / "metadata.json").is_file()
    assert not minari_home.exists() or not any(minari_home.rglob("metadata.json"))
    dataset = minari.MinariDataset(out / "golem" / "basic" / "first-v1" / "data")
    spec = dataset.spec.env_spec
    assert spec.id == "Golem/basic-v0" and spec.max_episode_steps == 300
    assert spec.kwargs == {"scenario": "basic", "frame_skip": 4, "sensors": ["depth", "visual"], "profile": "basic"}
    env = dataset.recover_environment()  # gymnasium.make of the spec: the engine starts on reset only
    try:
        assert env.observation_space == dataset.observation_space and env.action_space == dataset.action_space
    finally:
        env.close()
    # an existing id is refused, and nothing changes
    again = invoke(
        "data", "export", "--format", "minari", "golem/basic/first-v1", "--out", str(out), "--store", str(store)
    )
    assert again.exit_code != 0 and "already exists" in again.output and len(again.output.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["no-version", "../escape-v0"])
def test_export_refuses_a_malformed_id(store: Path, minari_home: Path, name: str):
    result = invoke("data", "export", "--format", "minari", name, "--store", str(store))
    assert result.exit_code != 0
    assert "not a Minari dataset id" in result.output and len(result.output.strip().splitlines()) == 1
    assert not minari_home.exists() or not any(minari_home.rglob("*.hdf5"))


def _foreign(minari_home: Path, name: str, observation_space: spaces.Space, episodes: list[dict]) -> None:
    """A dataset written by Minari's own API (not by Golem)."""
    from minari.data_collector import EpisodeBuffer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # Minari's notes that no env spec was given
        minari.create_dataset_from_buffers(
            name,
            [EpisodeBuffer(**e) for e in episodes],
            observation_space=observation_space,
            action_space=spaces.MultiBinary(len(BASIC)),
            algorithm_name="test",
            author="test",
            author_email="t@example.org",
            code_permalink="https://example.org",
            description="test",
            jpeg_encoding=False,
        )


def _episode(T: int, actions: np.ndarray | None = None) -> dict:
    rng = np.random.default_rng(T)
    return {
        "observations": {"frames": rng.integers(0, 256, (T + 1, 3, 64, 64), dtype=np.uint8)},
        "actions": rng.integers(0, 2, (T, len(BASIC))).astype(np.int8) if actions is None else actions,
        "rewards": np.ones(T, np.float32),
        "terminations": np.eye(T, dtype=bool)[-1],
        "truncations": np.zeros(T, bool),
    }


def test_a_foreign_dataset_with_fitting_spaces_imports(minari_home: Path, tmp_path: Path):
    _foreign(
        minari_home,
        "other/ok-v0",
        spaces.Dict({"frames": spaces.Box(0, 255, (3, 64, 64), np.uint8)}),
        [_episode(6), _episode(3)],
    )
    result = invoke(
        "data",
        "import",
        "--format",
        "minari",
        "other/ok-v0",
        "--store",
        str(tmp_path / "s"),
        "--source",
        "agent",
        "--json",
    )
    assert result.exit_code == 0, result.output
    back = _snapshot(tmp_path / "s")
    assert [m["length"] for m, _ in back] == [6, 3]
    assert all(m["source"] == "agent" and m["terminated"] is True and m["sensors"] == ["visual"] for m, _ in back)


@pytest.mark.parametrize(
    ("space", "episodes", "message"),
    [
        (spaces.Box(0, 255, (3, 64, 64), np.uint8), None, "not a Dict of sensor arrays"),
        (spaces.Dict({"frames": spaces.Box(0, 1, (3, 64, 64), np.float32)}), "float", "sensor 'visual' stores uint8"),
        (spaces.Dict({"sonar": spaces.Box(0, 1, (4,), np.float32)}), "sonar", "no installed sensor's array"),
        # the second episode is bad: the first must not be imported either
        (
            spaces.Dict({"frames": spaces.Box(0, 255, (3, 64, 64), np.uint8)}),
            "actions",
            "episode 1: actions must be 0/1",
        ),
    ],
)
def test_a_bad_dataset_is_one_line_and_leaves_the_store_unchanged(
    store: Path, minari_home: Path, space: spaces.Space, episodes: str | None, message: str
):
    if episodes is None:
        eps = [{**_episode(4), "observations": _episode(4)["observations"]["frames"]}]
    elif episodes == "float":
        eps = [{**_episode(4), "observations": {"frames": np.zeros((5, 3, 64, 64), np.float32)}}]
    elif episodes == "sonar":
        eps = [{**_episode(4), "observations": {"sonar": np.zeros((5, 4), np.float32)}}]
    else:
        eps = [_episode(4), _episode(4, actions=np.full((4, len(BASIC)), 2, np.int8))]
    _foreign(minari_home, "other/bad-v0", space, eps)
    before = _snapshot(store)
    result = invoke("data", "import", "--format", "minari", "other/bad-v0", "--store", str(store))
    assert result.exit_code != 0
    assert message in result.output and len(result.output.strip().splitlines()) == 1, result.output
    after = _snapshot(store)
    assert [m for m, _ in after] == [m for m, _ in before]


def test_not_a_dataset_is_one_line(tmp_path: Path, minari_home: Path):
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    for target in (str(folder), "golem/missing-v0"):
        result = invoke("data", "import", "--format", "minari", target, "--store", str(tmp_path / "s"))
        assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "s").exists()  # no store created for nothing
    broken = tmp_path / "broken"
    (broken / "data").mkdir(parents=True)
    (broken / "data" / "metadata.json").write_text("{not json")
    result = invoke("data", "import", "--format", "minari", str(broken), "--store", str(tmp_path / "s"))
    assert result.exit_code != 0 and "not a readable Minari dataset" in result.output


@pytest.mark.engine
def test_an_engine_episode_round_trips(tmp_path: Path, minari_home: Path):
    """Frames the real engine rendered, played through the registered Gymnasium id."""
    env = gymnasium.make("Golem/basic-v0", sensors=["visual", "depth"], frame_skip=4)
    obs, _ = env.reset(seed=7)
    steps: dict[str, list] = {"frames": [], "depths": [], "actions": [], "rewards": []}
    done = terminated = False
    while not done:
        action = env.action_space.sample()
        steps["frames"].append(obs["frames"])
        steps["depths"].append(obs["depths"])
        steps["actions"].append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        steps["rewards"].append(reward)
        done = terminated or truncated
    env.close()
    arrays = {k: np.stack(v) for k, v in steps.items()}
    with TrajectoryStore.create(tmp_path / "real") as opened:
        meta = EpisodeMeta(
            profile="basic",
            action_names=list(BASIC),
            scenario="basic",
            sensors=["visual", "depth"],
            source="agent",
            seed=7,
            frame_skip=4,
            terminated=bool(terminated),
            truncated=not terminated,
        )
        opened.write_episode(meta, arrays, RULES)
    assert (
        invoke(
            "data", "export", "--format", "minari", "golem/basic/real-v0", "--store", str(tmp_path / "real")
        ).exit_code
        == 0
    )
    assert (
        invoke(
            "data", "import", "--format", "minari", "golem/basic/real-v0", "--store", str(tmp_path / "back")
        ).exit_code
        == 0
    )
    ((meta1, arrays1),) = _snapshot(tmp_path / "real")
    ((meta2, arrays2),) = _snapshot(tmp_path / "back")
    assert meta2["created"] == meta1["created"] and meta2["length"] == meta1["length"] == len(arrays["actions"])
    for key in arrays1:
        np.testing.assert_array_equal(arrays2[key], arrays1[key])


def test_without_the_plugin_the_cli_names_it(tmp_path: Path):
    """The core alone knows its own npz format and says which distribution has minari."""
    from golem.plugins import load_plugins

    for command in (["import", "x/y-v0"], ["export", "golem/basic/x-v0"]):
        args = ["data", *command, "--format", "minari", "--store", str(tmp_path / "s")]
        result = CliRunner().invoke(build_app(load_plugins(only=[])), args)
        assert result.exit_code != 0
        lines = result.output.strip().splitlines()
        assert lines == [
            "error: unknown data format 'minari' (it comes with golem-farama: pip install golem-farama); known: npz"
        ], result.output
    assert not (tmp_path / "s").exists()


@pytest.mark.slow
def test_without_minari_the_cli_names_the_distribution(tmp_path: Path):
    # a fresh interpreter in which `import minari` fails, as in a broken install of golem-farama
    code = (
        "import sys\n"
        "sys.modules['minari'] = None\n"
        "from typer.testing import CliRunner\n"
        "from golem_cli.app import build_app\n"
        "r = CliRunner().invoke(build_app(), ['data', 'import', '--format', 'minari', 'x/y-v0', "
        f"'--store', {str(tmp_path / 's')!r}])\n"
        "print(r.exit_code); print(r.output)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    exit_code, *lines = done.stdout.strip().splitlines()
    assert exit_code != "0"
    assert len(lines) == 1 and "Minari support is not installed" in lines[0], done.stdout + done.stderr
    assert lines[0].endswith("pip install golem-farama")
