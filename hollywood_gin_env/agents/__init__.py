"""Agents behind one batched protocol: `act(observations, action_masks) -> actions` (numpy in and out).

`load_agent(spec)` builds one from a spec (agents/loading.py: the heuristics' names, the shipped bots,
"checkpoint:PATH", "module:attr" naming an agent class or a function marked `@agent_factory`, names installed
packages register, "NAME=SPEC"). Agents see only what the observation and the action mask hold; each may carry the
`rules` it was trained under, and `rules_in_play` (agents/provenance.py) picks the rules a match of them is played
under.
"""

from __future__ import annotations

from hollywood_gin_env.agents.base import Agent, AgentProtocol, as_batch
from hollywood_gin_env.agents.expert import ExpertAgent
from hollywood_gin_env.agents.greedy import GreedyAgent
from hollywood_gin_env.agents.loading import (
    BOT_NAME,
    CHECKPOINT_PREFIX,
    ENTRY_POINT_GROUP,
    HEURISTICS,
    SHIPPED_BOTS,
    agent_factory,
    bot_path,
    load_agent,
    parse_agent_arg,
)
from hollywood_gin_env.agents.provenance import agent_rules, rules_in_play
from hollywood_gin_env.agents.random_agent import RandomAgent
from hollywood_gin_env.agents.simple import SimpleAgent
from hollywood_gin_env.agents.torch_threads import DEFAULT_TORCH_THREADS

__all__ = [
    "BOT_NAME",
    "CHECKPOINT_PREFIX",
    "DEFAULT_TORCH_THREADS",
    "ENTRY_POINT_GROUP",
    "HEURISTICS",
    "SHIPPED_BOTS",
    "Agent",
    "AgentProtocol",
    "ExpertAgent",
    "GreedyAgent",
    "RandomAgent",
    "SimpleAgent",
    "agent_factory",
    "agent_rules",
    "as_batch",
    "bot_path",
    "load_agent",
    "parse_agent_arg",
    "rules_in_play",
]
