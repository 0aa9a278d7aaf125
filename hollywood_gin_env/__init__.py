"""hollywood-gin: the exact, batched Hollywood Gin engine and its reinforcement-learning environments.

`import hollywood_gin_env` registers "HollywoodGin-v1" and an id for each rules preset (ENV_IDS). The names a user
needs come from here, each loaded from its layer on first use (PEP 562), so the import stays fast: `Rules`, `Game`,
`Engine`, `load_agent`, the envs (`HollywoodGinEnv`, `HollywoodGinVectorEnv`, `SelfPlayVectorEnv`) and the evaluator
(`play_pair`, `evaluate_pairs`, `round_robin`, `format_report`, `summarize_pair`, `Schedule`). The layers, one folder
each, are in docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import importlib
from typing import Any

from gymnasium.envs.registration import register

#: The registered env ids and the rules preset each one plays (`rules=`; None: the env's default): the same env
#: classes under each id. docs/ENVIRONMENTS.md, "Registered ids", gives what a match is under each.
ENV_IDS = {
    "HollywoodGin-v1": None,
    "GinRummyEAAI-v1": "eaai",
    "GinRummyOpenSpiel-v1": "openspiel",
    "GinRummyClassic-v1": "classic",
}


def _register() -> None:
    """Register each id of ENV_IDS with Gymnasium (`gymnasium.make` and `gymnasium.make_vec`)."""
    for env_id, preset in ENV_IDS.items():
        register(
            id=env_id,
            entry_point="hollywood_gin_env.envs:HollywoodGinEnv",
            vector_entry_point="hollywood_gin_env.envs:HollywoodGinVectorEnv",
            kwargs={} if preset is None else {"rules": preset},
        )


_register()

#: Each public name and the module that defines it.
PUBLIC = {
    "Rules": "hollywood_gin_env.rules.options",
    "Game": "hollywood_gin_env.engine.game",
    "Engine": "hollywood_gin_env.engine.batched",
    "load_agent": "hollywood_gin_env.agents.loading",
    "HollywoodGinEnv": "hollywood_gin_env.envs.hollywood_gin",
    "HollywoodGinVectorEnv": "hollywood_gin_env.envs.vector",
    "SelfPlayVectorEnv": "hollywood_gin_env.envs.selfplay",
    "play_pair": "hollywood_gin_env.evaluation.evaluate",
    "evaluate_pairs": "hollywood_gin_env.evaluation.evaluate",
    "round_robin": "hollywood_gin_env.evaluation.evaluate",
    "format_report": "hollywood_gin_env.evaluation.report",
    "summarize_pair": "hollywood_gin_env.evaluation.evaluate",
    "Schedule": "hollywood_gin_env.evaluation.duplicate",
}
__all__ = list(PUBLIC)


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    if name not in PUBLIC:
        raise AttributeError(f"module 'hollywood_gin_env' has no attribute {name!r}")
    value = getattr(importlib.import_module(PUBLIC[name]), name)
    globals()[name] = value  # the next lookup is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *PUBLIC})
