"""Lockstep multiplayer for Golem: agents against agents, bots and people over the engine's own netcode.

:func:`golem_match.match.play_match` runs a :class:`~golem_match.match.MatchPlan`
(one process per local player, each on the one rollout loop, held in exact
lockstep by a :class:`~golem_match.lockstep.TicBarrier`); the ``match`` plugin
adds ``golem run match``.
"""
