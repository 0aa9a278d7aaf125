"""Which rules a match is played under: the rules asked for, else the rules its agents were trained under.

Every agent may carry `rules`: the rules it was trained under (a checkpoint's metadata "rules"; a `Rules`, or a
preset's name or a dict of options that `Rules.from_spec` reads), or None for no preference (the heuristics, and a
user's agent unless it says). `rules_in_play` is the one place the choice is made: rules given explicitly (a
program's `--rules`, an env's `rules=`) win whatever the agents were trained under; otherwise the one rule set every
agent that records one was trained under, the defaults (hollywood) if none records one, and a ValueError naming both
rule sets (`Rules.describe()`) and both agents when two differ. Every front end calls it with the agents it built,
and every report names the rules it played under.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.messages import shown_value


def agent_rules(agent: Any) -> Rules | None:
    """The rules an agent records (its `rules`), or None; ValueError naming the agent if they are not rules."""
    recorded = getattr(agent, "rules", None)
    if recorded is None or isinstance(recorded, Rules):
        return recorded
    try:
        return Rules.from_spec(recorded)
    except (TypeError, ValueError) as error:
        raise ValueError(f"agent {shown_value(_name(agent))} records rules that are not rules: {error}") from None


def recorded_rules(metadata: Mapping[str, Any], where: str) -> Rules | None:
    """The rules a checkpoint's metadata records it was trained under: its "rules", else the rules of the training
    config it records ("training" / "config" / "rules"), else None; ValueError naming `where` if they are not rules."""
    found = metadata.get("rules")
    if found is None:
        training = metadata.get("training")
        config = training.get("config") if isinstance(training, Mapping) else None
        found = config.get("rules") if isinstance(config, Mapping) else None
    if found is None:
        return None
    try:
        return Rules.from_spec(found)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: the rules it records are not rules: {error}") from None


def rules_in_play(agents: Iterable[Any], rules: Rules | None = None) -> Rules:
    """`rules` if given; else the rules every agent that records some was trained under (the defaults if none
    does); ValueError in one line naming both rule sets and both agents when two agents' rules differ."""
    if rules is not None:
        return rules
    first: tuple[Any, Rules] | None = None
    for agent in agents:
        recorded = agent_rules(agent)
        if recorded is None:
            continue
        if first is None:
            first = (agent, recorded)
        elif recorded != first[1]:
            raise ValueError(
                f"agent {shown_value(_name(first[0]))} was trained under the rules {first[1].describe()!r} and "
                f"agent {shown_value(_name(agent))} under {recorded.describe()!r}: name the rules to play them under "
                "(--rules, or rules= in Python)"
            )
    return Rules() if first is None else first[1]


def _name(agent: Any) -> str:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) else repr(agent)
