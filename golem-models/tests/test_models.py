"""Tests for golem-models: shapes, joins, carried state, resets, step == forward, plugins, checkpoints."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
import torch
from torch import nn

from golem import hookimpl
from golem.data.dataset import SequenceDataset
from golem.data.store import TrajectoryStore
from golem.data.store.schema import EpisodeMeta
from golem.errors import GolemError
from golem.learning.calibration import calibration_windows, recalibrate_norms
from golem.learning.checkpoints import rebuild_model, restore, save_checkpoint
from golem.learning.modelspec import ModelSpec
from golem.plugins import load_plugins
from golem.sensors import Sensor
from golem.settings import GolemSettings
from golem.testing.models import assert_model_contract
from golem_models import CfCCore, DoomNet, LSTMCore, build_cfc, build_lstm

# --- tiny test-local sensors (no engine): an image, a channel joining it, a vector ---


class TinyConv(nn.Module):
    def __init__(self, in_channels: int) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.net = nn.Sequential(nn.Conv2d(in_channels, 4, 3, stride=2), nn.ReLU(), nn.Flatten())
        self.out_features = 4 * 3 * 3  # 8×8 → 3×3

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class TinyLinear(nn.Module):
    def __init__(self, in_features: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, 6), nn.Tanh())
        self.out_features = 6

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class _NoEngine(Sensor):
    def configure(self, game) -> None:  # pragma: no cover - no engine in these tests
        pass

    def _read(self, state):  # pragma: no cover
        return None


class CamSensor(_NoEngine):
    name = "cam"
    key = "cams"
    dtype = np.dtype(np.uint8)

    @property
    def shape(self) -> tuple[int, ...]:
        return (3, 8, 8)

    def cortex(self, extra_channels: int = 0) -> nn.Module:
        return TinyConv(3 + extra_channels)


class DepSensor(_NoEngine):
    name = "dep"
    key = "deps"
    dtype = np.dtype(np.uint8)
    joins = "cam"

    @property
    def shape(self) -> tuple[int, ...]:
        return (1, 8, 8)


class VecSensor(_NoEngine):
    name = "vec"
    key = "vecs"
    dtype = np.dtype(np.float32)

    @property
    def shape(self) -> tuple[int, ...]:
        return (5,)

    def cortex(self, extra_channels: int = 0) -> nn.Module:
        return TinyLinear(5 + extra_channels)


SENSORS = {cls.name: cls for cls in (CamSensor, DepSensor, VecSensor)}


class TinySensorsPlugin:
    """Registers the tiny sensors, for ``load_plugins(extra=[("tinysensors", TinySensorsPlugin())])``."""

    @hookimpl
    def register_sensors(self, register) -> None:
        for name, cls in SENSORS.items():
            register(name, cls)


BUILDERS = {"cfc": build_cfc, "lstm": build_lstm}
A = 5
H = 8


def make_spec(model: str = "cfc", sensors=(CamSensor, DepSensor, VecSensor)) -> ModelSpec:
    settings = GolemSettings.model_construct()
    return ModelSpec(
        sensors=[cls(settings) for cls in sensors],
        n_actions=A,
        working_memory=H,
        model=model,
        action_names=tuple(f"a{i}" for i in range(A)),
    )


def make_inputs(spec: ModelSpec, batch: int, steps: int, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return {s.name: torch.rand(batch, steps, *s.shape, generator=gen) for s in spec.sensors}


@pytest.fixture(params=sorted(BUILDERS))
def model(request) -> DoomNet:
    torch.manual_seed(0)
    return BUILDERS[request.param](make_spec(request.param)).eval()


@pytest.mark.parametrize("name", sorted(BUILDERS))
@pytest.mark.parametrize("sensors", [(CamSensor, DepSensor, VecSensor), (VecSensor,), (CamSensor,)])
def test_contract(name, sensors):
    assert_model_contract(BUILDERS[name], make_spec(name, sensors))


def test_shapes(model):
    inputs = make_inputs(model.spec, batch=2, steps=3)
    logits, hx = model(inputs, None)
    assert logits.shape == (2, 3, A)
    assert hx.shape == (2, model.state_size)
    assert model.state_size == (H if model.spec.model == "cfc" else 2 * H)
    assert model.initial_state(2).shape == hx.shape and not model.initial_state(2).any()


def test_hx_none_means_zeros(model):
    inputs = make_inputs(model.spec, 2, 3)
    a, ha = model(inputs, None)
    b, hb = model(inputs, model.initial_state(2))
    torch.testing.assert_close(a, b)
    torch.testing.assert_close(ha, hb)


def test_joining_sensor_feeds_the_owner_cortex(model):
    assert set(model.cortices) == {"cam", "vec"}  # dep has no cortex of its own
    assert model.cortices["cam"].in_channels == 3 + 1
    assert model.in_features == 36 + 6
    inputs = make_inputs(model.spec, 2, 2)
    base, _ = model(inputs)
    inputs["dep"] = inputs["dep"] + 1.0
    moved, _ = model(inputs)
    assert not torch.allclose(base, moved)


def test_missing_sensor_input_is_an_error(model):
    inputs = make_inputs(model.spec, 1, 1)
    del inputs["dep"]
    with pytest.raises(KeyError, match="dep"):
        model(inputs)


def test_step_equals_forward_on_one_tic(model):
    inputs = make_inputs(model.spec, 3, 1)
    hx = torch.randn(3, model.state_size) * 0.1
    logits, h1 = model(inputs, hx)
    step_logits, h2 = model.step({k: v[:, 0] for k, v in inputs.items()}, hx)
    assert step_logits.shape == (3, A)
    torch.testing.assert_close(step_logits, logits[:, 0])
    torch.testing.assert_close(h2, h1)


def test_stepping_a_sequence_equals_forward_over_it(model):
    inputs = make_inputs(model.spec, 2, 4)
    logits, h_seq = model(inputs)
    hx, outs = None, []
    for t in range(4):
        out, hx = model.step({k: v[:, t] for k, v in inputs.items()}, hx)
        outs.append(out)
    torch.testing.assert_close(torch.stack(outs, dim=1), logits)
    torch.testing.assert_close(hx, h_seq)


def test_state_carried_across_calls_equals_one_call(model):
    inputs = make_inputs(model.spec, 2, 5)
    whole, h_whole = model(inputs)
    first, h1 = model({k: v[:, :2] for k, v in inputs.items()}, None)
    second, h2 = model({k: v[:, 2:] for k, v in inputs.items()}, h1)
    torch.testing.assert_close(torch.cat([first, second], dim=1), whole)
    torch.testing.assert_close(h2, h_whole)


def test_state_matters(model):
    inputs = make_inputs(model.spec, 2, 2)
    a, _ = model(inputs, None)
    b, _ = model(inputs, torch.ones(2, model.state_size))
    assert not torch.allclose(a, b)


def test_reset_rows_zeroes_exactly_those_rows(model):
    hx = torch.randn(4, model.state_size)
    mask = torch.tensor([True, False, True, False])
    out = model.reset_rows(hx, mask)
    assert not out[mask].any()
    torch.testing.assert_close(out[~mask], hx[~mask])
    assert hx[mask].abs().sum() > 0  # the input is left alone
    # a reset row then behaves as a fresh episode, the others keep their past
    inputs = make_inputs(model.spec, 4, 2)
    logits, _ = model(inputs, out)
    fresh, _ = model({k: v[mask] for k, v in inputs.items()}, None)
    kept, _ = model({k: v[~mask] for k, v in inputs.items()}, hx[~mask])
    torch.testing.assert_close(logits[mask], fresh)
    torch.testing.assert_close(logits[~mask], kept)


def test_reset_rows_checks_the_mask_shape(model):
    with pytest.raises(ValueError, match="mask"):
        model.reset_rows(torch.zeros(3, model.state_size), torch.tensor([True, False]))


def test_gradients_reach_every_parameter(model):
    model.train()
    logits, hx = model(make_inputs(model.spec, 2, 3))
    (logits.square().mean() + hx.square().mean()).backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, name
        assert torch.isfinite(p.grad).all(), name


def test_cfc_and_lstm_share_the_interface():
    spec_c, spec_l = make_spec("cfc"), make_spec("lstm")
    cfc, lstm = build_cfc(spec_c), build_lstm(spec_l)
    for net in (cfc, lstm):
        inputs = make_inputs(net.spec, 2, 3)
        hx = net.reset_rows(net.initial_state(2), torch.tensor([True, False]))
        logits, hx = net(inputs, hx)
        step, hx = net.step({k: v[:, 0] for k, v in inputs.items()}, hx.detach())
        assert logits.shape == (2, 3, A) and step.shape == (2, A) and hx.shape == (2, net.state_size)
    assert type(cfc.core).__name__ == "CfCCore" and type(lstm.core).__name__ == "LSTMCore"


def test_single_sensor_without_joins():
    net = build_cfc(make_spec(sensors=(VecSensor,)))
    logits, _ = net(make_inputs(net.spec, 2, 3))
    assert logits.shape == (2, 3, A) and list(net.cortices) == ["vec"]


def test_spec_rejects_a_join_without_its_target():
    with pytest.raises(GolemError, match="joins 'cam'"):
        make_spec(sensors=(DepSensor, VecSensor))


def test_spec_metadata_round_trip():
    spec = make_spec("lstm")
    meta = spec.to_metadata()
    meta = json.loads(json.dumps(meta))
    registry = load_plugins(extra=[("tinysensors", TinySensorsPlugin())]).registry
    again = ModelSpec.from_metadata(meta, registry)
    assert again.to_metadata() == meta
    assert [type(s) for s in again.sensors] == [CamSensor, DepSensor, VecSensor]


def test_entry_points_register_models():
    host = load_plugins()
    assert {"cfc", "lstm"} <= set(host.registry.names("models"))
    assert host.registry.get("models", "cfc").obj is build_cfc
    assert host.registry.get("models", "lstm").obj is build_lstm
    assert host.registry.get("models", "cfc").owner.distribution == "golem-models"


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_checkpoint_rebuilds_the_same_network(tmp_path, name):
    torch.manual_seed(1)
    net = BUILDERS[name](make_spec(name)).eval()
    path = save_checkpoint(tmp_path / "m.safetensors", net, net.spec.to_metadata(), {"metrics": {"f1": 0.5}})
    registry = load_plugins(extra=[("tinysensors", TinySensorsPlugin())]).registry
    again = rebuild_model(path, registry)
    inputs = make_inputs(net.spec, 2, 3)
    with torch.no_grad():
        torch.testing.assert_close(again(inputs)[0], net(inputs)[0])
    restored = restore(path, registry)
    assert restored.spec.model == name and restored.metadata["metrics"] == {"f1": 0.5}


def test_checkpoint_for_a_different_architecture_is_an_error(tmp_path):
    net = build_cfc(make_spec("cfc"))
    meta = net.spec.to_metadata() | {"model": "lstm"}  # weights of a cfc, metadata says lstm
    path = save_checkpoint(tmp_path / "m.safetensors", net, meta)
    registry = load_plugins(extra=[("tinysensors", TinySensorsPlugin())]).registry
    with pytest.raises(GolemError, match="does not fit"):
        rebuild_model(path, registry)


# --- the real sensors, when their plugins are installed ---------------------


def _real_sensor_classes() -> dict[str, type]:
    """Real sensor classes available now: the built-in visual (imported directly) and registered plugins."""
    found: dict[str, type] = {}
    if importlib.util.find_spec("golem.builtin.visual") is not None:
        from golem.builtin.visual import VisualSensor

        found["visual"] = VisualSensor
    registry = load_plugins().registry
    for name in registry.names("sensors"):
        found.setdefault(name, registry.get("sensors", name).obj)
    return found


REAL_SETS = [["visual"], ["visual", "depth"], ["visual", "depth", "thermal"], ["visual", "audio"]]


@pytest.mark.parametrize("names", REAL_SETS)
@pytest.mark.parametrize("model_name", sorted(BUILDERS))
def test_real_sensors(tmp_path, names, model_name):
    classes = _real_sensor_classes()
    missing = [n for n in names if n not in classes]
    if missing:
        pytest.skip(f"sensor plugin(s) not installed yet: {missing}")
    settings = GolemSettings.model_validate({"brain": {"sensors": names, "working_memory": 8, "cortical_depth": 2}})
    spec = ModelSpec(sensors=[classes[n](settings) for n in names], n_actions=A, working_memory=8, model=model_name)
    net = assert_model_contract(BUILDERS[model_name], spec, batch=2, steps=2)
    assert list(net.cortices) == [n for n in names if spec.sensor(n).joins is None]
    stored = {s.name: torch.randint(0, 255, (1, 2, *s.shape), dtype=torch.uint8) for s in spec.sensors}
    inputs = {s.name: s.to_network(stored[s.name]) for s in spec.sensors}
    with torch.no_grad():
        logits, hx = net(inputs)
        step, _ = net.step({k: v[:, 0] for k, v in inputs.items()}, None)
    assert logits.shape == (1, 2, A) and hx.shape == (1, net.state_size)
    torch.testing.assert_close(step, logits[:, 0])
    registry = load_plugins().registry
    if all(n in registry.names("sensors") for n in names):  # rebuild from the checkpoint's metadata alone
        path = save_checkpoint(tmp_path / "m.safetensors", net, spec.to_metadata())
        again = rebuild_model(path, registry)
        with torch.no_grad():
            torch.testing.assert_close(again(inputs)[0], logits)


# --- the contract catches the seed's defects ---------------------------------


def test_contract_catches_a_reset_that_does_nothing():
    class NoReset(DoomNet):
        @staticmethod
        def reset_rows(hx, mask):
            return hx

    with pytest.raises(AssertionError, match="masked row"):
        assert_model_contract(lambda spec: NoReset(spec, CfCCore), make_spec(sensors=(VecSensor,)))


def test_contract_catches_a_model_that_drops_its_state():
    class Amnesiac(DoomNet):
        def forward(self, inputs, hx=None):
            return super().forward(inputs, None)

    with pytest.raises(AssertionError, match="carried"):
        assert_model_contract(lambda spec: Amnesiac(spec, LSTMCore), make_spec(sensors=(VecSensor,)))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_on_cuda(tmp_path):
    net = build_cfc(make_spec()).cuda().eval()
    inputs = {k: v.cuda() for k, v in make_inputs(net.spec, 2, 3).items()}
    hx = net.reset_rows(net.initial_state(2), torch.tensor([True, False]))  # CPU mask, CUDA state
    assert hx.device.type == "cuda"
    logits, hx = net(inputs, hx)
    step, _ = net.step({k: v[:, 0] for k, v in inputs.items()}, None)
    assert logits.device.type == "cuda" and step.device.type == "cuda"
    path = save_checkpoint(tmp_path / "m.safetensors", net, net.spec.to_metadata())
    again = rebuild_model(path, load_plugins(extra=[("tinysensors", TinySensorsPlugin())]).registry)
    with torch.no_grad():
        torch.testing.assert_close(again({k: v.cpu() for k, v in inputs.items()})[0], net(inputs)[0].cpu())


# --- the feature standardiser before the core ---


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_features_are_standardised_before_the_core(name):
    net = BUILDERS[name](make_spec(name, sensors=(VecSensor,))).train()  # tanh features: none constant
    assert isinstance(net.standardise, nn.BatchNorm1d) and net.standardise.num_features == net.in_features
    features = net.encode(make_inputs(net.spec, 4, 6))  # [B, T, F], batch statistics in training mode
    flat = features.detach().flatten(0, 1)
    torch.testing.assert_close(flat.mean(0), torch.zeros(net.in_features), atol=1e-5, rtol=0)
    torch.testing.assert_close(
        flat.var(0, unbiased=False), torch.ones(net.in_features), atol=1e-2, rtol=0
    )  # eps = 1e-5


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_evaluation_does_not_depend_on_the_batch(name):
    net = BUILDERS[name](make_spec(name)).eval()
    inputs = make_inputs(net.spec, 3, 4)
    with torch.no_grad():
        together, _ = net(inputs)
        alone, _ = net({k: v[1:2] for k, v in inputs.items()})
    torch.testing.assert_close(alone[0], together[1])


def test_metadata_without_feature_norm_rebuilds_the_old_network(tmp_path):
    """Checkpoints written before ``feature_norm`` existed load strictly as the network they were."""
    spec = ModelSpec(
        sensors=make_spec().sensors,
        n_actions=A,
        working_memory=8,
        feature_norm="none",
        action_names=tuple(f"a{i}" for i in range(A)),
    )
    net = build_cfc(spec).eval()
    assert isinstance(net.standardise, nn.Identity)
    old_meta = {k: v for k, v in spec.to_metadata().items() if k != "feature_norm"}
    path = save_checkpoint(tmp_path / "old.safetensors", net, old_meta)
    restored = restore(path, load_plugins(extra=[("tinysensors", TinySensorsPlugin())]).registry)
    assert restored.spec.feature_norm == "none" and isinstance(restored.model.standardise, nn.Identity)
    inputs = make_inputs(spec, 2, 3)
    with torch.no_grad():
        torch.testing.assert_close(restored.model(inputs)[0], net(inputs)[0])


def test_default_settings_standardise():
    assert GolemSettings.model_construct().brain.feature_norm == "batch"
    assert make_spec().to_metadata()["feature_norm"] == "batch"


def test_recalibration_sets_the_statistics_of_the_current_weights(tmp_path):
    settings = GolemSettings.model_construct()
    sensors = [CamSensor(settings), VecSensor(settings)]
    rng = np.random.default_rng(0)
    names = [f"a{i}" for i in range(A)]
    with TrajectoryStore.create(tmp_path / "store") as store:
        for seed in range(3):
            n = 24
            meta = EpisodeMeta(profile="basic", action_names=names, scenario="tiny", seed=seed, sensors=["cam", "vec"])
            store.write_episode(
                meta,
                {
                    "cams": rng.integers(0, 255, (n, 3, 8, 8), dtype=np.uint8),
                    "vecs": rng.normal(size=(n, 5)).astype(np.float32),
                    "actions": rng.integers(0, 2, (n, A), dtype=np.uint8),
                },
            )
    with TrajectoryStore.open(tmp_path / "store") as store:
        ds = SequenceDataset(store, store.episodes(), sensors, names, 4, check=False)
        spec = ModelSpec(sensors=sensors, n_actions=A, working_memory=8, action_names=ds.action_names)
        net = build_cfc(spec).eval()
        windows = calibration_windows(ds, 4, 3, seed=0)
        assert recalibrate_norms(net, ds, windows, torch.device("cpu")) == 1
        assert not net.training and net.standardise.momentum == 0.1
        with torch.no_grad():
            raw = torch.cat(
                [
                    torch.cat(
                        [
                            net.cortices[o](x.flatten(0, 1))
                            for o, x in ((o, ds.load_batch(w).inputs[o]) for o in net.groups)
                        ],
                        dim=-1,
                    )
                    for w in windows
                ]
            )
        torch.testing.assert_close(net.standardise.running_mean, raw.mean(0), atol=1e-5, rtol=1e-4)


def test_bf16_autocast_reaches_the_cortices_and_stops_before_the_core(model):
    """Training under ``training.precision=bf16``: the cortices compute in bfloat16, the standardiser, the
    recurrent core and the head in float32, and the weights stay float32."""
    seen: dict[str, torch.dtype] = {}
    hooks = [
        model.cortices["cam"].register_forward_hook(lambda m, i, o: seen.__setitem__("cortex", o.dtype)),
        model.core.register_forward_hook(lambda m, i, o: seen.__setitem__("core", o[0].dtype)),
    ]
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits, hx = model(make_inputs(model.spec, 2, 3), None)
    finally:
        for hook in hooks:
            hook.remove()
    assert seen == {"cortex": torch.bfloat16, "core": torch.float32}
    assert logits.dtype == hx.dtype == torch.float32
    assert all(p.dtype == torch.float32 for p in model.parameters())
    plain, _ = model(make_inputs(model.spec, 2, 3), None)  # without autocast: float32 and close
    torch.testing.assert_close(logits, plain, rtol=0.1, atol=0.1)


def test_features_through_the_head_are_the_logits(model):
    inputs = make_inputs(model.spec, 2, 4)
    hx = torch.randn(2, model.state_size) * 0.1
    logits, h1 = model(inputs, hx)
    out, h2 = model.features(inputs, hx)
    assert out.shape == (2, 4, model.head.in_features)
    torch.testing.assert_close(model.head(out), logits, rtol=0, atol=0)
    torch.testing.assert_close(h2, h1, rtol=0, atol=0)


def test_features_reset_each_row_where_its_episode_starts(model):
    inputs = make_inputs(model.spec, 2, 6)
    hx = torch.randn(2, model.state_size) * 0.5
    starts = torch.zeros(2, 6, dtype=torch.bool)
    starts[0, 2] = starts[1, 4] = True  # row 0 starts an episode at step 2, row 1 at step 4
    out, h_end = model.features(inputs, hx, starts=starts)
    for row, cut in ((0, 2), (1, 4)):
        one = {k: v[row : row + 1] for k, v in inputs.items()}
        before, _ = model.features({k: v[:, :cut] for k, v in one.items()}, hx[row : row + 1])
        after, h_row = model.features({k: v[:, cut:] for k, v in one.items()}, None)
        torch.testing.assert_close(out[row : row + 1], torch.cat([before, after], dim=1))
        torch.testing.assert_close(h_end[row : row + 1], h_row)
    none, _ = model.features(inputs, hx, starts=torch.zeros(2, 6, dtype=torch.bool))
    torch.testing.assert_close(none, model.features(inputs, hx)[0])
