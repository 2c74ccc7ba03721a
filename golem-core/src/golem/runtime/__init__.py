"""Stage 3, runtime: ViZDoom sessions, the engine guard, workers, the agent and the one rollout loop."""
