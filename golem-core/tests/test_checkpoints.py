"""Checkpoints: safetensors round trip, rebuild from metadata alone, atomic writes, bad files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file
from torch import nn

from golem import hookimpl
from golem.errors import GolemError
from golem.learning.checkpoints import (
    CHECKPOINT_FORMAT,
    load_checkpoint,
    read_metadata,
    rebuild_model,
    restore,
    save_checkpoint,
)
from golem.learning.modelspec import ModelSpec
from golem.plugins import load_plugins
from golem.sensors import Sensor
from golem.settings import GolemSettings

# --- a tiny sensor and model, registered through the hooks like any plugin --------


class PingSensor(Sensor):
    name = "ping"
    key = "pings"
    dtype = np.dtype(np.float32)

    @property
    def shape(self) -> tuple[int, ...]:
        return (4,)

    def configure(self, game) -> None:  # pragma: no cover - no engine here
        pass

    def _read(self, state):  # pragma: no cover
        return None

    def cortex(self, extra_channels: int = 0) -> nn.Module:
        layer = nn.Linear(4 + extra_channels, 3)
        layer.out_features = 3
        return layer


class TinyNet(nn.Module):
    """``inputs["ping"][B, T, 4]`` → cortex → GRU(working_memory) → logits ``[B, T, A]``."""

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.cortex = spec.sensors[0].cortex()
        self.core = nn.GRU(self.cortex.out_features, spec.working_memory, batch_first=True)
        self.head = nn.Linear(spec.working_memory, spec.n_actions)

    def forward(self, inputs, hx=None):
        out, h = self.core(self.cortex(inputs["ping"]), None if hx is None else hx.unsqueeze(0))
        return self.head(out), h[0]


class PingPlugin:
    @hookimpl
    def register_sensors(self, register) -> None:
        register("ping", PingSensor)

    @hookimpl
    def register_models(self, register) -> None:
        register("tiny", TinyNet)


@pytest.fixture(scope="module")
def registry():
    return load_plugins(only=[], extra=[("testplug", PingPlugin())]).registry


def make_spec(working_memory: int = 6) -> ModelSpec:
    settings = GolemSettings.model_construct()
    return ModelSpec(
        sensors=[PingSensor(settings)],
        n_actions=3,
        working_memory=working_memory,
        model="tiny",
        profile="basic",
        action_names=("a", "b", "c"),
    )


@pytest.fixture
def saved(tmp_path):
    torch.manual_seed(0)
    spec = make_spec()
    model = TinyNet(spec).eval()
    extra = {
        "settings": GolemSettings.model_construct().model_dump(mode="json"),
        "metrics": {"val_loss": 0.25, "f1": [0.5, 0.75, 1.0]},
        "data_fingerprint": "sha256:abc",
    }
    path = save_checkpoint(tmp_path / "models" / "basic" / "active.safetensors", model, spec.to_metadata(), extra)
    return path, model, spec


# --- round trip -------------------------------------------------------------------


def test_round_trip(saved):
    path, model, spec = saved
    state, meta = load_checkpoint(path)
    assert state.keys() == model.state_dict().keys()
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(state[name], tensor)
    assert meta["spec"] == json.loads(json.dumps(spec.to_metadata()))
    assert meta["metrics"] == {"val_loss": 0.25, "f1": [0.5, 0.75, 1.0]}
    assert meta["data_fingerprint"] == "sha256:abc"
    assert meta["settings"]["brain"]["model"] == "cfc"
    assert meta["format"] == CHECKPOINT_FORMAT and isinstance(meta["version"], str)
    assert read_metadata(path) == meta


def test_file_is_plain_safetensors_with_json_metadata(saved):
    path, _, _ = saved
    blob = path.read_bytes()
    header = json.loads(blob[8 : 8 + int.from_bytes(blob[:8], "little")])
    raw = header["__metadata__"]
    assert json.loads(raw["golem.spec"])["model"] == "tiny"
    assert set(raw) >= {"golem.format", "golem.version", "golem.spec", "golem.sha256", "golem.metrics"}


def test_rebuild_from_metadata_alone(saved, registry):
    path, model, _ = saved
    again = rebuild_model(path, registry)
    assert isinstance(again, TinyNet) and not again.training
    x = {"ping": torch.randn(2, 5, 4)}
    with torch.no_grad():
        torch.testing.assert_close(again(x)[0], model(x)[0])
    restored = restore(path, registry)
    assert restored.spec.action_names == ("a", "b", "c")
    assert restored.spec.working_memory == 6


def test_rebuild_ignores_the_environment(saved, registry, monkeypatch):
    monkeypatch.setenv("GOLEM_BRAIN__WORKING_MEMORY", "99")
    path, _, _ = saved
    assert restore(path, registry).spec.working_memory == 6


def test_rebuild_with_an_unknown_model_names_the_known_ones(tmp_path, registry):
    spec = make_spec()
    meta = spec.to_metadata() | {"model": "nope"}
    path = save_checkpoint(tmp_path / "m.safetensors", TinyNet(spec), meta)
    with pytest.raises(GolemError, match="unknown model 'nope'; known: tiny"):
        rebuild_model(path, registry)


def test_rebuild_with_a_changed_sensor_shape_is_an_error(tmp_path, registry):
    spec = make_spec()
    meta = spec.to_metadata()
    meta["sensor_shapes"]["ping"] = [5]
    path = save_checkpoint(tmp_path / "m.safetensors", TinyNet(spec), meta)
    with pytest.raises(GolemError, match="trained on"):
        rebuild_model(path, registry)


def test_weights_that_do_not_fit_are_an_error(tmp_path, registry):
    small = make_spec(working_memory=6)
    meta = make_spec(working_memory=7).to_metadata()
    path = save_checkpoint(tmp_path / "m.safetensors", TinyNet(small), meta)
    with pytest.raises(GolemError, match="does not fit"):
        rebuild_model(path, registry)


# --- atomic writes --------------------------------------------------------------


def test_overwrite_is_atomic_and_leaves_no_temp_files(saved):
    path, model, spec = saved
    for p in model.parameters():
        p.data.add_(1.0)
    save_checkpoint(path, model, spec.to_metadata())
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    state, meta = load_checkpoint(path)
    torch.testing.assert_close(state["head.bias"], model.state_dict()["head.bias"])
    assert "metrics" not in meta


def test_failed_save_leaves_the_old_file(saved):
    path, model, spec = saved
    before = path.read_bytes()
    with pytest.raises(GolemError, match="not JSON-able"):
        save_checkpoint(path, model, spec.to_metadata(), {"metrics": {"bad": object()}})
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_reserved_metadata_keys_are_refused(tmp_path):
    spec = make_spec()
    with pytest.raises(GolemError, match="reserved"):
        save_checkpoint(tmp_path / "m.safetensors", TinyNet(spec), spec.to_metadata(), {"spec": {}})


# --- bad files ------------------------------------------------------------------


def _one_line_error(path: Path, match: str) -> None:
    with pytest.raises(GolemError, match=match) as info:
        load_checkpoint(path)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path):
    _one_line_error(tmp_path / "nope.safetensors", "not found")


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.999])
def test_truncated_file(saved, keep):
    path, _, _ = saved
    blob = path.read_bytes()
    path.write_bytes(blob[: int(len(blob) * keep)])
    _one_line_error(path, "corrupt")


def test_garbage_file(tmp_path):
    path = tmp_path / "junk.safetensors"
    path.write_bytes(b"PK\x03\x04 this is a zip, or a pickle, or anything else")
    _one_line_error(path, "corrupt")
    with pytest.raises(GolemError, match="corrupt"):
        read_metadata(path)


def test_flipped_byte_in_the_weights(saved):
    path, _, _ = saved
    blob = bytearray(path.read_bytes())
    blob[-3] ^= 0xFF
    path.write_bytes(bytes(blob))
    _one_line_error(path, "SHA-256")


def test_safetensors_without_golem_metadata(tmp_path):
    path = tmp_path / "plain.safetensors"
    save_file({"w": torch.zeros(2)}, str(path), metadata={"format": "pt"})
    _one_line_error(path, "no Golem metadata")


# --- header hash, finite weights, stale temporary files --------------------------------


def _rewrite_metadata(path: Path, *, drop: tuple[str, ...] = (), **changes: str) -> None:
    """Change (or ``drop``) ``golem.*`` header entries in place, keeping the file a valid safetensors file."""
    blob = path.read_bytes()
    size = int.from_bytes(blob[:8], "little")
    header = json.loads(blob[8 : 8 + size])
    header["__metadata__"].update({f"golem.{k}": v for k, v in changes.items()})
    for key in drop:
        del header["__metadata__"][f"golem.{key}"]
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(len(text).to_bytes(8, "little") + text + blob[8 + size :])


def test_changed_metadata_does_not_match_its_hash(saved):
    path, _, _ = saved
    _rewrite_metadata(path, scenario=json.dumps("../evil/x.cfg"))
    with pytest.raises(GolemError, match="metadata does not match the recorded SHA-256"):
        read_metadata(path)
    _one_line_error(path, "metadata does not match")


def test_a_current_format_without_a_header_hash_is_refused(saved):
    path, _, _ = saved
    _rewrite_metadata(path, drop=("header_sha256",))
    _one_line_error(path, "no golem.header_sha256")


def test_a_format_1_file_without_a_header_hash_is_still_read(saved):
    path, model, _ = saved
    _rewrite_metadata(path, drop=("header_sha256",), format="1")
    state, meta = load_checkpoint(path)
    assert meta["format"] == 1 and state.keys() == model.state_dict().keys()


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused(tmp_path, registry, value):
    spec = make_spec()
    model = TinyNet(spec)
    with torch.no_grad():
        model.head.bias[1] = value
    path = save_checkpoint(tmp_path / "m.safetensors", model, spec.to_metadata())
    _one_line_error(path, "non-finite weights \\(NaN or Inf\\) in head.bias")
    with pytest.raises(GolemError, match="non-finite"):
        restore(path, registry)


def test_a_killed_writers_temp_file_is_removed_by_the_next_write(saved):
    import os
    import subprocess
    import sys

    path, model, spec = saved
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = path.parent / f".{path.name}.golem-{dead_pid}-abcd1234.tmp"
    live = path.parent / f".{path.name}.golem-{os.getppid()}-efgh5678.tmp"
    old_style = path.parent / f".{path.name}.k2j4h5g6.tmp"
    for temp in (stale, live, old_style):
        temp.write_bytes(b"half a checkpoint")
    day = 2 * 3600
    os.utime(old_style, (os.path.getmtime(old_style) - day, os.path.getmtime(old_style) - day))
    save_checkpoint(path, model, spec.to_metadata())
    assert not stale.exists() and not old_style.exists()
    assert live.exists()  # its writer (our parent) is alive
