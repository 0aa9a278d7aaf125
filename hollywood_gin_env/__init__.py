"""hollywood-gin: the exact, batched Hollywood Gin engine and its reinforcement-learning environments."""

from gymnasium.envs.registration import register

from hollywood_gin_env.rules import Rules

register(
    id="HollywoodGin-v1",
    entry_point="hollywood_gin_env.envs:HollywoodGinEnv",
    vector_entry_point="hollywood_gin_env.envs:HollywoodGinVectorEnv",
)

__all__ = ["Rules"]
