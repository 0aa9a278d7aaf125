"""`load_agent(spec)`: the agent a spec names, in the one grammar every front end reads (evaluate and its Ray workers,
play, the envs' `opponent=`, the trainer's opponents).

    random, greedy, expert     the heuristics (HEURISTICS; names are trimmed and case-blind)
    bot, bot-eaai              the shipped bots (SHIPPED_BOTS: checkpoints the package carries as data)
    checkpoint:PATH            a policy checkpoint file
    module:attr                an agent class or factory of the user's (attr may be dotted), declared so: a class with
                               act and a str name (an Agent subclass too), or a function marked @agent_factory; called
                               with the keyword arguments it accepts among seed, num_threads and rules, it returns an
                               object with act(observations, action_masks) and a name
    NAME                       a name an installed package registers in the entry-point group "hollywood_gin.agents"
                               (NAME = "module:attr"); a built-in name wins over an entry point of the same name
    NAME=SPEC                  SPEC, named NAME (the label a report shows; `parse_agent_arg`)

The shipped bots are found with `importlib.resources`, so they play wherever the package is installed, whatever the
working directory. Code is imported only because the user named it: a `module:attr` spec read from a file (a saved
match, a training state) is loaded with `allow_import=False`, which resolves it only if its module is imported
already (the user's own code imported it, or `--import MODULE` did); a name an installed package registers resolves
from a file too (installing the package was the user's act). Every module of the standard library is imported, so a
`module:attr` must name code declared an agent (above), typed or read from a file alike: a file naming `os:abort` is
refused before anything is called, and a spec that plays when typed plays when a file (a saved match, a training
state) gives it back. Resolution is support/imports.py's, the one resolver networks use too. Every failure of the
user's code, at import or when called, is one line naming the spec.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

from hollywood_gin_env.agents.base import Agent, AgentProtocol
from hollywood_gin_env.agents.expert import ExpertAgent
from hollywood_gin_env.agents.greedy import GreedyAgent
from hollywood_gin_env.agents.provenance import recorded_rules
from hollywood_gin_env.agents.random_agent import RandomAgent
from hollywood_gin_env.agents.simple import SimpleAgent
from hollywood_gin_env.agents.torch_threads import check_torch_threads
from hollywood_gin_env.engine.threads import check_num_threads
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.imports import (
    declare,
    find_reference,
    first_line,
    is_declared,
    is_reference,
    registered,
    registered_names,
)
from hollywood_gin_env.support.messages import install_hint
from hollywood_gin_env.support.streams import check_seed
from hollywood_gin_env.support.tensorfile import read_tensor_header

#: The heuristics by name: each a class taking `num_threads=`, reseeded by `reset(seed)`.
HEURISTICS = {"random": RandomAgent, "greedy": GreedyAgent, "expert": ExpertAgent, "simple": SimpleAgent}
CHECKPOINT_PREFIX = "checkpoint:"
BOT_NAME = "bot"
BOT_FILE = "hollywood-ppo.safetensors"
#: The shipped bots by name: their checkpoint files in hollywood_gin_env/data (bot-eaai: trained under the eaai rules).
SHIPPED_BOTS = {BOT_NAME: BOT_FILE, "bot-eaai": "eaai-ppo.safetensors"}
#: The entry-point group in which installed packages register agents by name ("name = module:attr").
ENTRY_POINT_GROUP = "hollywood_gin.agents"
#: The keyword arguments a `module:attr` class or factory is given, those of them it accepts.
FACTORY_KEYWORDS = ("seed", "num_threads", "rules")
#: A name given as NAME=SPEC: two of them and " vs " fit a report's tables in 120 columns.
MAX_NAME = 24
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
ROLE = "agent"  # what @agent_factory declares a function (support/imports.py)
#: What a `module:attr` agent spec must name (is_agent_factory), as messages say it.
DECLARATION = "an agent class (with act() and a str name) or a function marked @agent_factory"


def agent_factory(factory: Callable[..., AgentProtocol]) -> Callable[..., AgentProtocol]:
    """Mark a function (or a class whose `name` is set only when built) as an agent factory, so a spec may name it
    `module:attr`; a class with `act` and a str `name` (an `Agent` subclass among them) needs no mark."""
    return declare(factory, ROLE)


def is_agent_factory(value: object) -> bool:
    """True for what is marked `@agent_factory` and for an agent class: an `Agent` subclass, or a class whose
    attributes (its own or inherited) give a callable `act` and a str `name` (read without running its code)."""
    if is_declared(value, ROLE):
        return True
    if not isinstance(value, type) or value is Agent:  # the base class plays nothing
        return False
    name = inspect.getattr_static(value, "name", None)
    return issubclass(value, Agent) or (
        callable(inspect.getattr_static(value, "act", None)) and isinstance(name, (str, property))
    )


def bot_path(name: str = BOT_NAME) -> Path:
    """A shipped bot's checkpoint file, package data (a file on disk in every ordinary install; it may be absent
    from an install that does not ship that bot)."""
    return Path(str(files("hollywood_gin_env") / "data" / SHIPPED_BOTS[name]))


def shipped_bot_for(rules: Rules | None) -> str | None:
    """The name of the shipped bot trained under `rules` that this install carries (None: none is, or no rules)."""
    if rules is None:
        return None
    for name in SHIPPED_BOTS:
        path = bot_path(name)
        if path.is_file() and recorded_rules(read_tensor_header(path, what=name).metadata, name) == rules:
            return name
    return None


def policy_file(spec: str) -> Path | None:
    """The file a policy spec reads: a shipped bot's for its name, PATH for "checkpoint:PATH"; None otherwise."""
    key = spec.strip()
    if key.lower() in SHIPPED_BOTS:
        return bot_path(key.lower())
    path = key[len(CHECKPOINT_PREFIX) :] if key.lower().startswith(CHECKPOINT_PREFIX) else ""
    return Path(path) if path else None


def parse_agent_arg(text: str) -> tuple[str | None, str]:
    """One agent argument: "NAME=SPEC" -> (NAME, SPEC), a plain spec -> (None, spec). A checkpoint's path comes after
    a colon and may hold a "=" (checkpoint:runs/lr=3e-4/policy.pt), so text whose first "=" follows a ":" is a plain
    spec."""
    name, sep, spec = text.partition("=")
    if not sep or ":" in name:
        return None, text
    return name, spec


def check_name(name: str) -> str:
    """The name of a NAME=SPEC, or a ValueError naming it and what a name may hold."""
    if not isinstance(name, str) or len(name) > MAX_NAME or not _NAME.fullmatch(name):
        raise ValueError(
            f"agent name {name!r}: use 1 to {MAX_NAME} letters, digits, '_', '.', '+' or '-', starting with a "
            "letter or a digit"
        )
    return name


def builtin_names() -> list[str]:
    """The agents known by name without an installed package: the heuristics and the shipped bots."""
    return [*HEURISTICS, *SHIPPED_BOTS]


def load_agent(
    spec: str | AgentProtocol,
    seed: int | None = None,
    num_threads: int | None = None,
    torch_threads: int | None = None,
    allow_import: bool = True,
    rules: Rules | None = None,
) -> AgentProtocol:
    """The agent a spec names (module docstring; an agent passes through). Its kernels run on `num_threads` threads
    (default: the CPUs this process may use), and a policy acts on `torch_threads` torch threads (default: the
    programs' choice, agents/torch_threads.py). `allow_import=False` (a spec read from a file) resolves `module:attr`
    only if its module is imported already. `rules`, when the caller knows them, go to a factory that accepts them.
    ValueError in one line naming the spec and the specs allowed."""
    if seed is not None:
        check_seed(seed)
    num_threads = check_num_threads(num_threads)
    torch_threads = check_torch_threads(torch_threads)
    if not isinstance(spec, str):
        if isinstance(spec, AgentProtocol):
            return spec
        raise ValueError(f"agent spec {spec!r} is neither a string nor an agent with act() and name")
    label, key = parse_agent_arg(spec.strip())
    options = {"seed": seed, "num_threads": num_threads, "torch_threads": torch_threads, "rules": rules}
    agent = _named_agent(key.strip(), options, allow_import)
    if label is not None:
        _rename(agent, check_name(label), spec)
    return agent


def _named_agent(key: str, options: dict[str, Any], allow_import: bool) -> AgentProtocol:
    """The agent of a spec without a label (the rows of the module docstring's table, in order)."""
    lower = key.lower()
    if lower in HEURISTICS:
        agent = HEURISTICS[lower](num_threads=options["num_threads"])
        agent.reset(options["seed"])
        return agent
    if lower in SHIPPED_BOTS or lower.startswith(CHECKPOINT_PREFIX):
        return _policy_agent(key, options)
    if is_reference(key):
        return _made_agent(
            key, find_reference(key, f"agent {key!r}", allow_import, is_agent_factory, DECLARATION), options
        )
    target = registered(ENTRY_POINT_GROUP, key)  # an installed package's: installing it was the user's act
    if target is not None:
        return _made_agent(key, target, options)
    names = registered_names(ENTRY_POINT_GROUP)
    extra = f", {', '.join(names)} (installed packages')" if names else ""
    raise ValueError(
        f"unknown agent spec {key!r}: use one of {', '.join(builtin_names())}{extra}, checkpoint:PATH or "
        "module:attr (an agent class of yours, or a function marked @agent_factory)"
    )


def _policy_agent(key: str, options: dict[str, Any]) -> AgentProtocol:
    """A shipped bot or a checkpoint file's agent (imports torch)."""
    try:
        from hollywood_gin_env.agents.checkpoint import load_checkpoint_agent  # imports torch
    except ImportError as error:
        hint = install_hint("torch")
        raise ValueError(f"agent {key!r} needs torch, which is not installed ({error}): {hint}") from None
    kwargs = {name: options[name] for name in ("seed", "num_threads", "torch_threads")}
    name = key.lower()
    if name not in SHIPPED_BOTS:
        return load_checkpoint_agent(key[len(CHECKPOINT_PREFIX) :], **kwargs)
    data = files("hollywood_gin_env") / "data" / SHIPPED_BOTS[name]
    if not data.is_file():
        raise ValueError(
            f"agent {name!r} is not shipped in this install: hollywood_gin_env/data/{SHIPPED_BOTS[name]} is missing"
        )
    with as_file(data) as path:  # a real file even from a zipped install (a temporary copy, for the load only)
        return load_checkpoint_agent(path, name=name, **kwargs)


def _made_agent(spec: str, target: Any, options: dict[str, Any]) -> AgentProtocol:
    """The agent a resolved class or factory makes (`spec` names it in errors): called with the keywords it accepts
    among FACTORY_KEYWORDS, checked to be an agent."""
    if not callable(target):
        raise ValueError(f"agent {spec!r} names a {type(target).__name__}, not a class or a factory")
    given = {"seed": options["seed"], "num_threads": options["num_threads"], "rules": options["rules"]}
    kwargs = _accepted(target, {name: value for name, value in given.items() if value is not None})
    try:
        agent = target(**kwargs)
    except Exception as error:  # the user's code: its failure in one line, naming the spec
        raise ValueError(f"agent {spec!r} failed when called: {first_line(error)}") from None
    if not callable(getattr(agent, "act", None)) or not isinstance(getattr(agent, "name", None), str):
        raise ValueError(
            f"agent {spec!r} made {type(agent).__name__!r}, not an agent: an agent has act(observations, "
            "action_masks) and a name (a str)"
        )
    if options["seed"] is not None and "seed" not in kwargs and callable(getattr(agent, "reset", None)):
        agent.reset(options["seed"])
    return agent


def _accepted(target: Any, keywords: dict[str, Any]) -> dict[str, Any]:
    """The keywords a callable accepts (all of them if it takes **kwargs; none if its signature cannot be read)."""
    try:
        parameters = inspect.signature(target).parameters.values()
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return keywords
    names = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return {name: value for name, value in keywords.items() if name in names}


def _rename(agent: AgentProtocol, name: str, spec: str) -> None:
    """Give the agent of a NAME=SPEC its name; ValueError if the agent's name cannot be set."""
    try:
        agent.name = name
    except AttributeError:
        raise ValueError(f"agent {spec!r}: its agent's name cannot be set; use the spec without NAME=") from None
