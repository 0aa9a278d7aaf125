"""hollywood-gin: the exact, batched Hollywood Gin engine and its reinforcement-learning environments."""

from hollywood_gin_env.rules import Rules

__all__ = ["Rules"]
