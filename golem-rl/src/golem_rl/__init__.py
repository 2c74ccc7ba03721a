"""golem-rl: PPO fine-tuning of a cloned Golem policy, anchored to it by a KL term (``golem rl finetune``)."""

__version__ = "0.1.0"
