"""Golem's scripted experts, one per shipped ViZDoom scenario.

``EXPERTS`` maps each expert's name (the scenario it plays) to its class; the
``experts`` plugin (:mod:`golem_experts.plugin`) registers every entry through
the expert hook, as any third-party plugin would. :mod:`golem_experts.geometry`
and :mod:`golem_experts.privileged` are public: other plugins' experts (the
procedural maps' ``explorer``) aim and steer with them. The ``random`` expert
and the random baseline live in the core (:mod:`golem.runtime.random_policy`).
"""

from __future__ import annotations

from golem.experts import Expert
from golem_experts.basic import BasicExpert
from golem_experts.deadly_corridor import DeadlyCorridorExpert
from golem_experts.deathmatch import DeathmatchExpert
from golem_experts.defend_the_center import DefendTheCenterExpert
from golem_experts.defend_the_line import DefendTheLineExpert
from golem_experts.health_gathering import HealthGatheringExpert
from golem_experts.health_gathering_supreme import HealthGatheringSupremeExpert
from golem_experts.my_way_home import MyWayHomeExpert
from golem_experts.predict_position import PredictPositionExpert
from golem_experts.take_cover import TakeCoverExpert

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
    "TakeCoverExpert",
]
