"""The parameter space, the seed's phase bounds and conditional priors: pure logic, no engine."""

from __future__ import annotations

import pytest

from golem.errors import GolemError, SettingsError
from golem.settings import section
from golem_procgen.space import (
    PARAMETERS,
    PHASE_BOUNDS,
    VOCABULARY,
    ProcgenSettings,
    apply_priors,
    phase_constraints,
    sample_configuration,
)

#: seed 001, CurriculumObligeGenerator._get_phase_constraints, copied value for value as the test's reference.
SEED_PHASE_1 = {
    "size": ["micro", "small"],
    "theme": ["original", "tech"],
    "outdoors": ["none"],
    "steepness": ["none"],
    "liquids": ["none"],
    "teleporters": ["none"],
    "mons": ["none", "sparse"],
    "strength": ["easier", "normal"],
}
SEED_PHASE_2 = {
    "size": ["regular"],
    "theme": ["urban", "hell", "mixed"],
    "outdoors": ["mixed"],
    "steepness": ["mixed"],
    "liquids": ["mixed"],
    "teleporters": ["none"],
    "mons": ["normal", "lots"],
    "strength": ["normal"],
}


def test_phase_bounds_are_the_seeds() -> None:
    assert phase_constraints(1) == SEED_PHASE_1
    assert phase_constraints(2) == SEED_PHASE_2
    assert phase_constraints(3) == {k: list(v) for k, v in VOCABULARY.items()}


def test_phase_three_is_the_configured_space_and_phases_one_two_keep_their_bounds() -> None:
    space = {"size": ["large"], "mons": ["swarms"]}
    three = phase_constraints(3, space)
    assert three["size"] == ["large"] and three["mons"] == ["swarms"] and three["theme"] == list(VOCABULARY["theme"])
    assert phase_constraints(1, space)["size"] == ["micro", "small"]  # a phase bound replaces the space, as the seed


@pytest.mark.parametrize(
    ("params", "fired", "changed"),
    [
        ({"size": "micro", "mons": "swarms"}, ("volume-vs-density",), {"mons": "normal"}),
        ({"size": "micro", "mons": "lots"}, ("volume-vs-density",), {"mons": "normal"}),
        ({"size": "small", "mons": "lots"}, (), {}),
        ({"steepness": "plenty", "outdoors": "none"}, ("verticality-vs-outdoors",), {"outdoors": "mixed"}),
        ({"steepness": "mixed", "outdoors": "none"}, (), {}),
        ({"teleporters": "plenty", "size": "small"}, ("teleporter-amnesia",), {"teleporters": "none"}),
        ({"teleporters": "plenty", "size": "regular"}, (), {}),
        (
            {"size": "micro", "mons": "lots", "steepness": "plenty", "outdoors": "none", "teleporters": "plenty"},
            ("volume-vs-density", "verticality-vs-outdoors", "teleporter-amnesia"),
            {"mons": "normal", "outdoors": "mixed", "teleporters": "none"},
        ),
    ],
)
def test_conditional_priors(params: dict[str, str], fired: tuple[str, ...], changed: dict[str, str]) -> None:
    out, names = apply_priors(params)
    assert names == fired
    assert out == {**params, **changed}


def test_sampling_is_seeded_within_bounds_and_records_priors() -> None:
    for phase in (1, 2, 3):
        bounds = phase_constraints(phase)
        draws = [sample_configuration(phase, seed) for seed in range(60)]
        assert [d.params for d in draws] == [sample_configuration(phase, s).params for s in range(60)]
        for d in draws:
            assert set(d.params) == set(PARAMETERS)
            again, fired = apply_priors(d.params)
            assert again == d.params and fired == ()  # priors already applied
            for k, v in d.params.items():
                assert v in bounds[k] or d.priors, (phase, k, v)
        assert len({tuple(d.params.values()) for d in draws}) > 5, "seeds should give different maps"
    phase3 = [sample_configuration(3, s) for s in range(300)]
    assert {p for d in phase3 for p in d.priors} == {
        "volume-vs-density",
        "verticality-vs-outdoors",
        "teleporter-amnesia",
    }
    assert all(d.params["teleporters"] == "none" for d in (sample_configuration(2, s) for s in range(50)))


def test_overrides_apply_before_priors() -> None:
    config = sample_configuration(1, 0, overrides={"mons": "swarms", "size": "micro"})
    assert config.params["mons"] == "normal" and config.priors == ("volume-vs-density",)


@pytest.mark.parametrize("phase", [0, 4, -1])
def test_unknown_phase_is_one_clear_error(phase: int) -> None:
    with pytest.raises(GolemError, match="unknown curriculum phase"):
        sample_configuration(phase, 0)


def test_unknown_parameter_or_value() -> None:
    with pytest.raises(GolemError, match="unknown value 'huge' for map parameter size"):
        sample_configuration(3, 0, space={"size": ["huge"]})
    with pytest.raises(GolemError, match="unknown map parameter 'gravity'"):
        sample_configuration(1, 0, overrides={"gravity": "low"})


def test_settings_section_validates_the_space() -> None:
    assert section({"procgen": {"space": {"size": ["micro"]}}}, ProcgenSettings).space["size"] == ["micro"]
    with pytest.raises(SettingsError, match="huge"):
        section({"procgen": {"space": {"size": ["huge"]}}}, ProcgenSettings)


def test_phase_bounds_only_name_known_values() -> None:
    for bounds in PHASE_BOUNDS.values():
        for k, values in bounds.items():
            assert set(values) <= set(VOCABULARY[k])
