"""The Gymnasium environments: the single-agent env, its batched VectorEnv and the two-player self-play env.

`import hollywood_gin_env` registers "HollywoodGin-v1" (with a `vector_entry_point`); docs/ENVIRONMENTS.md.
"""

from hollywood_gin_env.envs.hollywood_gin import HollywoodGinEnv
from hollywood_gin_env.envs.selfplay import SelfPlayVectorEnv
from hollywood_gin_env.envs.vector import HollywoodGinVectorEnv

__all__ = ["HollywoodGinEnv", "HollywoodGinVectorEnv", "SelfPlayVectorEnv"]
