"""Agents behind one batched protocol: `act(observations, action_masks) -> actions` (numpy in and out).

`load_agent(spec)` builds one from a spec: "random", "greedy", "expert", "bot" (the shipped bot, package data) or
"checkpoint:PATH". Agents see only what the observation and the action mask hold.
"""

from __future__ import annotations

from hollywood_gin_env.agents.base import Agent, AgentProtocol, as_batch
from hollywood_gin_env.agents.expert import ExpertAgent
from hollywood_gin_env.agents.greedy import GreedyAgent
from hollywood_gin_env.agents.loading import BOT_NAME, CHECKPOINT_PREFIX, HEURISTICS, bot_path, load_agent
from hollywood_gin_env.agents.random_agent import RandomAgent
from hollywood_gin_env.agents.simple import SimpleAgent

__all__ = [
    "BOT_NAME",
    "CHECKPOINT_PREFIX",
    "HEURISTICS",
    "Agent",
    "AgentProtocol",
    "ExpertAgent",
    "GreedyAgent",
    "RandomAgent",
    "SimpleAgent",
    "as_batch",
    "bot_path",
    "load_agent",
]
