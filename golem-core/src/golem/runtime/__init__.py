"""Stage 3, runtime: ViZDoom sessions, the engine guard, scenarios, WAD checks, workers, the agent and the one rollout loop."""
