"""Plugins for real: third-party distributions installed with pip, loaded from entry points."""

from __future__ import annotations

import pytest

from golem.errors import DuplicateComponentError, UnknownComponentError
from golem.plugins import load_plugins
from golem.registry import Owner, Registry
from tests.helpers import json_out


def _plugins(proc) -> dict[str, dict]:
    return {p["plugin"]: p for p in json_out(proc)["plugins"]}


@pytest.mark.slow
def test_installed_plugin_is_listed_with_its_components(golem_cli, plugin_site):
    proc = golem_cli(["plugins", "list", "--json"], env={"PYTHONPATH": str(plugin_site)}, check=True)
    plugins = _plugins(proc)
    example = plugins["example"]
    assert example["distribution"] == "golem-example-plugin"
    assert example["version"] == "1.2.3"
    assert example["status"] == "ok"
    assert example["components"] == {
        "losses": ["example_l1", "example_scaled_l1"],
        "map_generators": ["example_box"],
        "experts": ["sluggish"],
    }
    assert plugins["core"]["status"] == "ok"
    assert plugins["core"]["distribution"] == "golem-core"


@pytest.mark.slow
def test_broken_plugins_are_reported_and_the_cli_keeps_working(golem_cli, plugin_site):
    proc = golem_cli(["plugins", "list", "--json"], env={"PYTHONPATH": str(plugin_site)}, check=True)
    plugins = _plugins(proc)
    assert plugins["broken_import"]["status"] == "broken"
    assert "golem_dependency_that_does_not_exist" in plugins["broken_import"]["error"]
    assert plugins["broken_hook"]["status"] == "broken"
    assert "fails while registering" in plugins["broken_hook"]["error"]
    # nothing of a plugin that failed half-way is registered
    assert plugins["broken_hook"]["components"] == {}
    # other commands still work
    ok = golem_cli(["config", "show", "--json"], env={"PYTHONPATH": str(plugin_site)})
    assert ok.returncode == 0, ok.stderr


@pytest.mark.slow
def test_duplicate_name_breaks_the_later_plugin_naming_both_owners(golem_cli, plugin_site):
    plugins = _plugins(golem_cli(["plugins", "list", "--json"], env={"PYTHONPATH": str(plugin_site)}, check=True))
    error = plugins["zz_clash"]["error"]
    assert "example_l1" in error
    assert "golem-example-plugin" in error and "golem-clash-plugin" in error
    assert plugins["example"]["status"] == "ok"


@pytest.mark.slow
def test_plugin_component_is_selectable_with_plugin_flag(golem_cli, plugin_site):
    env = {"PYTHONPATH": str(plugin_site)}
    proc = golem_cli(["config", "show", "--json", "--plugin", "example_l1"], env=env, check=True)
    loss = json_out(proc)["settings"]["training.loss"]
    assert loss == {"value": "example_l1", "source": "flag --plugin"}
    # the global position works too
    proc = golem_cli(["--plugin", "losses:example_l1", "config", "show", "--json"], env=env, check=True)
    assert json_out(proc)["settings"]["training.loss"]["value"] == "example_l1"


@pytest.mark.slow
def test_plugin_adds_a_command(golem_cli, plugin_site):
    proc = golem_cli(["example-hello", "--name", "doomguy"], env={"PYTHONPATH": str(plugin_site)}, check=True)
    assert "hello doomguy from golem-example-plugin" in proc.stdout


@pytest.mark.slow
def test_load_plugins_env_restricts_distributions(golem_cli, plugin_site):
    env = {"PYTHONPATH": str(plugin_site), "GOLEM_LOAD_PLUGINS": "golem-example-plugin"}
    plugins = _plugins(golem_cli(["plugins", "list", "--json"], env=env, check=True))
    assert set(plugins) == {"core", "example"}


@pytest.mark.slow
def test_unknown_plugin_name_is_one_line_listing_known_names(golem_cli, plugin_site):
    proc = golem_cli(["config", "show", "--plugin", "focul"], env={"PYTHONPATH": str(plugin_site)})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "unknown component 'focul'" in lines[0]
    assert "example_l1" in lines[0]  # the known losses are listed
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_disabling_the_selected_loss_is_refused(golem_cli, plugin_site):
    env = {"PYTHONPATH": str(plugin_site)}
    proc = golem_cli(["config", "show", "--plugin", "example_l1", "--plugin", "no:example_l1"], env=env)
    assert proc.returncode == 2
    assert "is the selected loss" in proc.stderr


def test_in_process_loading_records_owners(plugin_site, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_site))
    host = load_plugins(only=["example"])
    comp = host.registry.get("losses", "example_l1")
    assert comp.owner.distribution == "golem-example-plugin"
    assert comp.owner.version == "1.2.3"
    assert callable(comp.obj)


def test_registry_duplicate_and_unknown_errors():
    reg = Registry()
    a = Owner("a", "golem-a", "1")
    b = Owner("b", "golem-b", "2")
    reg.add("losses", "focal", object(), a)
    with pytest.raises(DuplicateComponentError, match="golem-a.*golem-b"):
        reg.add("losses", "focal", object(), b)
    reg.add("models", "focal", object(), b)  # same name, other category: allowed
    with pytest.raises(UnknownComponentError, match="unknown loss 'focul'; known: focal"):
        reg.get("losses", "focul")
    with pytest.raises(ValueError):
        reg.add("losses", "bad:name", object(), a)


class _Inline:
    """A plugin object registered directly (embedding and tests)."""

    import golem as _g

    @staticmethod
    @_g.hookimpl
    def register_samplers(register):
        register("inline_sampler", object())


def test_extra_plugins_register_through_the_same_hooks():
    host = load_plugins(only=[], extra=[("inline", _Inline)])
    assert host.registry.get("samplers", "inline_sampler").owner.plugin == "inline"
    assert [p.name for p in host.plugins][0] == "core"


@pytest.mark.slow
def test_a_plugins_own_settings_are_validated_under_its_key(golem_cli, plugin_site):
    env = {"PYTHONPATH": str(plugin_site)}
    shown = json_out(golem_cli(["config", "show", "--json"], env=env, check=True))["settings"]
    assert shown["loss.example_scaled_l1.scale"] == {"value": 1.0, "source": "default"}
    assert shown["loss.focal.alpha"]["value"] == 0.25  # the shipped losses' sections, from their plugin
    given = golem_cli(["config", "show", "--json", "--set", "loss.example_scaled_l1.scale=2.5"], env=env, check=True)
    assert json_out(given)["settings"]["loss.example_scaled_l1.scale"] == {"value": 2.5, "source": "flag --set"}
    bad = golem_cli(["config", "show", "--set", "loss.example_scaled_l1.scale=0"], env=env)
    assert bad.returncode != 0
    assert "loss.example_scaled_l1.scale" in bad.stderr and "greater than 0" in bad.stderr
    assert len([line for line in bad.stderr.splitlines() if line.strip()]) == 1
    unknown = golem_cli(["config", "show", "--set", "loss.example_scaled_l1.bogus=1"], env=env)
    assert unknown.returncode != 0 and "unknown setting 'loss.example_scaled_l1.bogus'" in unknown.stderr
    # without the plugin its section is nobody's
    alone = golem_cli(["config", "show", "--set", "loss.example_scaled_l1.scale=2"])
    assert alone.returncode != 0 and "unknown setting 'loss.example_scaled_l1'" in alone.stderr


def test_map_generator_and_command_contracts(plugin_site, monkeypatch, tmp_path):
    from golem.testing import assert_command_contract, assert_map_generator_contract, assert_plugin_registers

    monkeypatch.syspath_prepend(str(plugin_site))
    import golem_example

    generator = assert_plugin_registers(golem_example, "map_generators", "example_box")
    info = assert_map_generator_contract(generator.obj, tmp_path / "maps", {"size": 384}, seed=3)
    assert info["map"] == "MAP01"
    assert "Say hello" in assert_command_contract(golem_example, ["example-hello"])
    with pytest.raises(AssertionError, match="help exited"):
        assert_command_contract(golem_example, ["no-such-command"])


@pytest.mark.engine
def test_a_generated_map_loads_in_the_engine(plugin_site, monkeypatch, tmp_path):
    from golem.runtime.session import Session
    from golem.settings import load_settings

    monkeypatch.syspath_prepend(str(plugin_site))
    import golem_example

    wad = tmp_path / "box.wad"
    golem_example.BoxGenerator(None).build({"size": 512}, 0, wad)
    settings = load_settings(
        environ={}, overrides=[("test", {"game.scenario": str(wad), "game.doom_map": "MAP01"})]
    ).settings
    with Session(settings) as session:
        session.new_episode(0)
        for _ in range(5):
            session.act([1, 0, 0, 0, 0, 0, 0, 0])
        assert not session.episode_finished and session.game.get_episode_time() >= 5
