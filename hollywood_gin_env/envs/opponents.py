"""Opponents of the learner envs: a spec, an agent with `act(observations, action_masks)`, or a callable."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from hollywood_gin_env.rules.options import Rules

#: act(observations float32[B, D], action_masks int8[B, 107]) -> int64[B] actions.
ActFn = Callable[[np.ndarray, np.ndarray], Any]

BUILTIN_RANDOM = "random"


def resolve_opponent(
    opponent: Any, num_threads: int | None = None, torch_threads: int | None = None, rules: Rules | None = None
) -> tuple[ActFn | None, Callable[[int], Any] | None, Rules]:
    """The opponent's batched act function (None: the built-in random opponent), its reseed function, and the rules
    of the matches: `rules` if given, else those the opponent was trained under (the defaults if it records none).

    "random" (or None) is built in: it draws from each match's own env stream, so seeded runs
    repeat exactly and a vector env equals single envs seeded alike. Other specs ("greedy",
    "expert", "bot", "checkpoint:PATH", "module:attr", ...) are loaded by `hollywood_gin_env.agents.load_agent` with
    `num_threads` kernel threads (default: every CPU this process may use but one, at least one) and `torch_threads`
    torch threads (default: the programs' choice). An agent with
    `reset(seed)` (the agents/ protocol) is reseeded whenever the env is reset with a seed.
    """
    if opponent is None or opponent == BUILTIN_RANDOM:
        return None, None, rules if rules is not None else Rules()
    agent = _load_named(opponent, num_threads, torch_threads, rules) if isinstance(opponent, str) else opponent
    rules = _rules_in_play(agent, rules)
    act = getattr(agent, "act", None)
    if callable(act):
        reseed = getattr(agent, "reset", None)
        return act, reseed if callable(reseed) else None, rules
    if callable(agent):
        return agent, None, rules
    raise ValueError(
        f"opponent={opponent!r} is not allowed: use a name such as 'random', an agent with "
        "act(observations, action_masks), or a callable with that signature"
    )


def opponent_name(opponent: Any) -> str:
    """How errors name an opponent: its spec, its agent `name`, or the callable's repr."""
    if opponent is None or isinstance(opponent, str):
        return repr(opponent or BUILTIN_RANDOM)
    name = getattr(opponent, "name", None)
    return repr(name) if isinstance(name, str) else repr(opponent)


def _load_named(name: str, num_threads: int | None, torch_threads: int | None, rules: Rules | None) -> Any:
    """An agent from hollywood_gin_env.agents.load_agent (imported lazily)."""
    try:
        from hollywood_gin_env.agents import load_agent
    except ImportError as err:
        raise ValueError(
            f"opponent={name!r} needs hollywood_gin_env.agents, which is not available ({err}); "
            f"the built-in opponent is {BUILTIN_RANDOM!r}"
        ) from err
    return load_agent(name, num_threads=num_threads, torch_threads=torch_threads, rules=rules)


def _rules_in_play(agent: Any, rules: Rules | None) -> Rules:
    """`rules_in_play` of the opponent alone (agents/provenance.py, imported lazily as load_agent is)."""
    from hollywood_gin_env.agents.provenance import rules_in_play

    return rules_in_play([agent], rules)
