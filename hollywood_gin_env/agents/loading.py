"""The agents a spec names without search: "random", "greedy", "expert" and "checkpoint:PATH".

`load_agent` (the package's face) builds these through `load_plain_agent`, and so does the search agent for its
rollout policy and base; keeping them here, below both, is what lets the search agent load them without importing
the package that imports it.
"""

from __future__ import annotations

from hollywood_gin_env.agents.base import AgentProtocol
from hollywood_gin_env.agents.expert import ExpertAgent
from hollywood_gin_env.agents.greedy import GreedyAgent
from hollywood_gin_env.agents.random_agent import RandomAgent

HEURISTICS = {"random": RandomAgent, "greedy": GreedyAgent, "expert": ExpertAgent}
CHECKPOINT_PREFIX = "checkpoint:"
SEARCH_NAME = "search"


def load_plain_agent(spec: str, seed: int | None = None, num_threads: int | None = None) -> AgentProtocol:
    """The agent "random", "greedy", "expert" or "checkpoint:PATH" names, its kernels on `num_threads` threads
    (`load_agent`); ValueError naming the specs allowed."""
    key = spec.strip()
    if key.lower() in HEURISTICS:
        agent = HEURISTICS[key.lower()](num_threads=num_threads)
        agent.reset(seed)
        return agent
    if key.lower().startswith(CHECKPOINT_PREFIX):
        try:
            from hollywood_gin_env.agents.policy import load_checkpoint_agent  # imports torch
        except ImportError as error:
            raise ValueError(
                f"agent {key!r} needs torch, which is not installed ({error}): install the [torch] extra,"
                f' e.g. python -m pip install torch==2.13.0 -e ".[torch]"'
            ) from None
        return load_checkpoint_agent(key[len(CHECKPOINT_PREFIX) :], seed=seed, num_threads=num_threads)
    raise ValueError(
        f"unknown agent spec {spec!r}: use one of {', '.join(HEURISTICS)}, {SEARCH_NAME}[:OPTIONS] or checkpoint:PATH"
    )
