"""Agents that learn (PyTorch): PPO learner, value head, rollout storage, opponent pool, warm start."""
