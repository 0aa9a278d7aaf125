"""`load_agent(spec)`: the agent a spec names: "random", "greedy", "expert", "bot" or "checkpoint:PATH".

"bot" is the shipped bot, the checkpoint the package carries as data
(hollywood_gin_env/data/hollywood-ppo.safetensors), found with `importlib.resources`, so it plays wherever the
package is installed, whatever the working directory.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

from hollywood_gin_env.agents.base import AgentProtocol
from hollywood_gin_env.agents.expert import ExpertAgent
from hollywood_gin_env.agents.greedy import GreedyAgent
from hollywood_gin_env.agents.random_agent import RandomAgent
from hollywood_gin_env.agents.simple import SimpleAgent
from hollywood_gin_env.engine.threads import check_num_threads
from hollywood_gin_env.support.messages import install_hint
from hollywood_gin_env.support.streams import check_seed

HEURISTICS = {"random": RandomAgent, "greedy": GreedyAgent, "expert": ExpertAgent, "simple": SimpleAgent}
CHECKPOINT_PREFIX = "checkpoint:"
BOT_NAME = "bot"
BOT_FILE = "hollywood-ppo.safetensors"


def bot_path() -> Path:
    """The shipped bot's checkpoint file, package data (a file on disk in every ordinary install)."""
    return Path(str(files("hollywood_gin_env") / "data" / BOT_FILE))


def policy_file(spec: str) -> Path | None:
    """The file a policy spec reads: the shipped bot's for "bot", PATH for "checkpoint:PATH"; None otherwise."""
    key = spec.strip()
    if key.lower() == BOT_NAME:
        return bot_path()
    path = key[len(CHECKPOINT_PREFIX) :] if key.lower().startswith(CHECKPOINT_PREFIX) else ""
    return Path(path) if path else None


def load_agent(spec: str | AgentProtocol, seed: int | None = None, num_threads: int | None = None) -> AgentProtocol:
    """The agent a spec names: "random", "greedy", "expert", "bot" (the shipped bot) or "checkpoint:PATH" (an agent
    passes through); the heuristics and a checkpoint's lookahead inputs run on `num_threads` kernel threads (default:
    the CPUs this process may use). ValueError naming the specs allowed."""
    if seed is not None:
        check_seed(seed)
    check_num_threads(num_threads)
    if not isinstance(spec, str):
        if isinstance(spec, AgentProtocol):
            return spec
        raise ValueError(f"agent spec {spec!r} is neither a string nor an agent with act() and name")
    key = spec.strip()
    if key.lower() in HEURISTICS:
        agent = HEURISTICS[key.lower()](num_threads=num_threads)
        agent.reset(seed)
        return agent
    is_bot = key.lower() == BOT_NAME
    if is_bot or key.lower().startswith(CHECKPOINT_PREFIX):
        try:
            from hollywood_gin_env.agents.checkpoint import load_checkpoint_agent  # imports torch
        except ImportError as error:
            raise ValueError(
                f"agent {key!r} needs torch, which is not installed ({error}): {install_hint('torch')}"
            ) from None
        if is_bot:  # as_file: a real file even from a zipped install (a temporary copy, for the load only)
            with as_file(files("hollywood_gin_env") / "data" / BOT_FILE) as path:
                return load_checkpoint_agent(path, seed=seed, num_threads=num_threads, name=BOT_NAME)
        return load_checkpoint_agent(key[len(CHECKPOINT_PREFIX) :], seed=seed, num_threads=num_threads)
    raise ValueError(f"unknown agent spec {spec!r}: use one of {', '.join(HEURISTICS)}, {BOT_NAME} or checkpoint:PATH")
