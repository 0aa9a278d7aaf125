"""Agents behind one batched protocol: `act(observations, action_masks) -> actions` (numpy in and out).

`load_agent(spec)` builds one from a spec: "random", "greedy", "expert", "search[:OPTIONS]", "bot" (the shipped bot,
package data) or "checkpoint:PATH".
Agents see only what the observation and the action mask hold.
"""

from __future__ import annotations

from hollywood_gin_env.agents.base import Agent, AgentProtocol, as_batch
from hollywood_gin_env.agents.expert import ExpertAgent
from hollywood_gin_env.agents.greedy import GreedyAgent
from hollywood_gin_env.agents.loading import (
    BOT_NAME,
    CHECKPOINT_PREFIX,
    HEURISTICS,
    SEARCH_NAME,
    bot_path,
    load_plain_agent,
)
from hollywood_gin_env.agents.random_agent import RandomAgent
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.sampling import check_seed
from hollywood_gin_env.threads import check_num_threads


def load_agent(
    spec: str | AgentProtocol, seed: int | None = None, num_threads: int | None = None, rules: Rules | None = None
) -> AgentProtocol:
    """The agent a spec names: "random", "greedy", "expert", "search" or "search:rollouts=R,candidates=C,policy=P"
    (hollywood_gin_env/agents/search.py), "bot" (the shipped bot) or "checkpoint:PATH" (an agent passes through); the
    heuristics and a checkpoint's lookahead inputs run on `num_threads` kernel threads (default: the CPUs this
    process may use).
    `rules`: the rules of the matches it will play (the search agent rolls out under them; default the standard
    rules)."""
    if seed is not None:
        check_seed(seed)
    check_num_threads(num_threads)
    if not isinstance(spec, str):
        if isinstance(spec, AgentProtocol):
            return spec
        raise ValueError(f"agent spec {spec!r} is neither a string nor an agent with act() and name")
    key = spec.strip()
    if key.lower() == SEARCH_NAME or key.lower().startswith(SEARCH_NAME + ":"):
        from hollywood_gin_env.agents.search import SearchAgent, parse_search_spec

        return SearchAgent(**parse_search_spec(key), rules=rules, seed=seed)
    return load_plain_agent(key, seed, num_threads)


__all__ = [
    "BOT_NAME",
    "CHECKPOINT_PREFIX",
    "HEURISTICS",
    "Agent",
    "AgentProtocol",
    "ExpertAgent",
    "GreedyAgent",
    "RandomAgent",
    "as_batch",
    "bot_path",
    "load_agent",
]
