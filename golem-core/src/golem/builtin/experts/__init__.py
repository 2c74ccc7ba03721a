"""Built-in scripted experts, one per ViZDoom scenario, plus the random baseline.

``EXPERTS`` maps each expert's name (the scenario it plays) to its class; the
core plugin registers every entry, and :class:`RandomExpert` as ``random``.
:class:`RandomPolicy` is the comparison baseline; neither is in ``EXPERTS``.
"""

from __future__ import annotations

from golem.builtin.experts.basic import BasicExpert
from golem.builtin.experts.deadly_corridor import DeadlyCorridorExpert
from golem.builtin.experts.deathmatch import DeathmatchExpert
from golem.builtin.experts.defend_the_center import DefendTheCenterExpert
from golem.builtin.experts.defend_the_line import DefendTheLineExpert
from golem.builtin.experts.health_gathering import HealthGatheringExpert
from golem.builtin.experts.health_gathering_supreme import HealthGatheringSupremeExpert
from golem.builtin.experts.my_way_home import MyWayHomeExpert
from golem.builtin.experts.predict_position import PredictPositionExpert
from golem.builtin.experts.random_policy import RandomExpert, RandomPolicy
from golem.builtin.experts.take_cover import TakeCoverExpert
from golem.experts import Expert

EXPERTS: dict[str, type[Expert]] = {
    cls.name: cls
    for cls in (
        BasicExpert,
        DefendTheCenterExpert,
        HealthGatheringExpert,
        TakeCoverExpert,
        MyWayHomeExpert,
        DefendTheLineExpert,
        HealthGatheringSupremeExpert,
        PredictPositionExpert,
        DeadlyCorridorExpert,
        DeathmatchExpert,
    )
}

__all__ = [
    "EXPERTS",
    "BasicExpert",
    "DeadlyCorridorExpert",
    "DeathmatchExpert",
    "DefendTheCenterExpert",
    "DefendTheLineExpert",
    "HealthGatheringExpert",
    "HealthGatheringSupremeExpert",
    "MyWayHomeExpert",
    "PredictPositionExpert",
    "RandomExpert",
    "RandomPolicy",
    "TakeCoverExpert",
]
