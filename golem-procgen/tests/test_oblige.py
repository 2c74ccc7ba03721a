"""The ``oblige`` backend: the 7.70 value mapping (pure), one-line failures, and real Oblige where `make oblige`
built it."""

from __future__ import annotations

from pathlib import Path

import pytest

from golem.errors import GolemError
from golem.plugins import load_plugins
from golem.runtime.session import Session
from golem.settings import GolemSettings
from golem.testing import assert_map_generator_contract
from golem_procgen.oblige import ObligeGenerator, config_text, oblige_available, oblige_values
from golem_procgen.space import VOCABULARY, sample_configuration

#: Oblige 7.70's accepted values, as PyOblige 0.1.3 (the sdist the binary is built from) lists them.
FREQUENCY = ["mixed", "none", "rare", "few", "less", "some", "more", "heaps"]
OBLIGE_770 = {
    "size": ["micro", "tiny", "small", "regular", "large", "extreme", "epi", "prog", "mixed"],
    "theme": [
        "original",
        "mostly_original",
        "epi",
        "mostly_epi",
        "bit_mixed",
        "jumble",
        "tech",
        "mostly_tech",
        "urban",
        "mostly_urban",
        "hell",
        "mostly_hell",
    ],
    "outdoors": FREQUENCY,
    "liquids": FREQUENCY,
    "teleporters": FREQUENCY,
    "steepness": FREQUENCY,
    "mons": ["scarce", "few", "less", "some", "more", "nuts", "mixed", "none"],
    "strength": ["weak", "easier", "normal", "harder", "tough", "crazy"],
}
needs_oblige = pytest.mark.skipif(
    not oblige_available(),
    reason="Oblige is not built here: run `make oblige` (needs Debian's libfltk1.3-dev); `make test` tries it first",
)


def test_every_seed_value_maps_to_an_oblige_770_value() -> None:
    for name, values in VOCABULARY.items():
        for value in values:
            mapped = oblige_values({name: value})[name]
            assert mapped in OBLIGE_770[name], (name, value, mapped)
    mapped = oblige_values({"mons": "swarms", "steepness": "plenty", "theme": "mixed", "size": "micro"})
    assert {k: mapped[k] for k in ("mons", "steepness", "theme", "size")} == {
        "mons": "nuts",
        "steepness": "heaps",
        "theme": "bit_mixed",
        "size": "micro",
    }
    text = config_text(sample_configuration(2, 1).params, 1)
    assert "seed = 1" in text and "game = doom2" in text and "length = single" in text


def test_missing_binary_is_one_clear_line_and_no_fallback(tmp_path: Path) -> None:
    settings = GolemSettings.model_validate({"procgen": {"oblige_binary": str(tmp_path / "nope" / "Oblige")}})
    with pytest.raises(GolemError, match="Oblige is not installed .* `make oblige`"):
        ObligeGenerator(settings).build(sample_configuration(1, 0).as_dict(), 0, tmp_path / "m.wad")
    assert not (tmp_path / "m.wad").exists()


@needs_oblige
def test_a_hung_oblige_is_stopped_and_leaves_nothing(tmp_path: Path) -> None:
    settings = GolemSettings.model_validate({"procgen": {"oblige_timeout_s": 0.2}})
    with pytest.raises(GolemError, match="took longer than 0.2s"):
        ObligeGenerator(settings).build(sample_configuration(1, 0).as_dict(), 0, tmp_path / "m.wad")
    assert list(tmp_path.iterdir()) == []


@needs_oblige
@pytest.mark.engine
@pytest.mark.slow
def test_real_oblige_maps_meet_the_contract_and_load(tmp_path: Path) -> None:
    builder = load_plugins().registry.get("map_generators", "oblige").obj
    config = sample_configuration(1, 5).as_dict()
    info = assert_map_generator_contract(builder, tmp_path, config, seed=5)  # same config + seed → same bytes

    class Objects:
        def configure(self, game) -> None:
            game.set_objects_info_enabled(True)

    with Session(GolemSettings(), scenario=str(info.config), configurers=[Objects()]) as session:
        session.new_episode(0)
        names = {o.name for o in session.game.get_state().objects}
    assert "DoomPlayer" in names and len(names) > 3
