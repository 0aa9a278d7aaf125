"""The trainer's opponents as data: `selfplay.opponents` (spec -> weight) as the codes the run's parts read, how the
agents a config names are loaded, and the rules they were trained under.

`Lineup.of(opponents)`: entry j of the map, in its order, is code j: the j-th weight of the draw (pool.py), column j
of the privileged critic's "who" one-hot (privileged.py), what a saved arena's `kind` holds (arena.py). The keys are
"self" (the current policy in both seats: both seats' decisions train), "snapshots" (a frozen past snapshot of the
pool, drawn by priority) and any agent spec `load_agent` builds (NAME=SPEC labels one): frozen, loaded once per run,
never trained. A self-play match of a lineup without a "self" entry (a "snapshots" draw while the pool is empty, the
warm start's teacher matches) is code SELF_UNLISTED, which has no column. Adding an opponent is one line of config:
`selfplay.opponents = {self = 1.0, random = 1.0}`.

Loading: a config is the user's own file, so the agents it names load as the user's act; a config read back from a
training state (`--resume`) is a file, and its specs load with `allow_import=False` (`load_opponent`): a
`module:attr` opponent then resolves only where its module is already imported (`--import MODULE`).

Rules: an agent may record the rules it was trained under (a trainer checkpoint's metadata "rules"). A config that
names its rules (`Config.names_rules`) plays them whatever its agents were trained under; one that does not refuses an
opponent, an evaluation opponent or a `warmstart.init` trained under other rules than its own, in one line naming both
(`check_rules`). `hollywood-gin exploit` plays its target's rules where the config names none
(hollywood_gin_env.agents.provenance's `rules_in_play`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from torch import nn

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.agents.base import AgentProtocol
from hollywood_gin_env.agents.checkpoint import read_checkpoint_metadata
from hollywood_gin_env.agents.loading import parse_agent_arg, policy_file
from hollywood_gin_env.agents.provenance import agent_rules, recorded_rules
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_trainer.config import Config

SELF, SNAPSHOTS = "self", "snapshots"
#: The code of a self-play match where "self" has no entry (module docstring): it sets no column.
SELF_UNLISTED = -1
#: What to do where the config's rules and an agent's differ.
NAME_THE_RULES = 'name the rules to play (rules = "NAME" or a [rules] key, --rules, or --set rules.KEY=VALUE)'


@dataclass(frozen=True)
class Lineup:
    """`selfplay.opponents` as codes (module docstring): its specs and weights in the map's order."""

    specs: tuple[str, ...]
    weights: tuple[float, ...]

    @classmethod
    def of(cls, opponents: dict[str, float]) -> Lineup:
        """The lineup of a checked config's `selfplay.opponents`."""
        return cls(tuple(opponents), tuple(float(weight) for weight in opponents.values()))

    @property
    def size(self) -> int:
        """Entries, codes 0..size-1: the privileged critic's "who" columns."""
        return len(self.specs)

    @property
    def self_code(self) -> int:
        """The code of a self-play match: "self"'s entry, or SELF_UNLISTED."""
        return self.specs.index(SELF) if SELF in self.specs else SELF_UNLISTED

    @property
    def lowest_code(self) -> int:
        """The lowest code a match may hold (SELF_UNLISTED where "self" has no entry)."""
        return min(0, self.self_code)

    def probabilities(self) -> np.ndarray:
        """Each entry's share of the draws."""
        weights = np.array(self.weights, dtype=np.float64)
        return weights / weights.sum()

    def is_self(self, kinds: np.ndarray) -> np.ndarray:
        """bool[N]: the matches of these codes that are self-play (the learner in both seats)."""
        return kinds == self.self_code

    def is_snapshot(self, kinds: np.ndarray) -> np.ndarray:
        """bool[N]: the matches of these codes against a snapshot."""
        if SNAPSHOTS not in self.specs:
            return np.zeros(np.shape(kinds), dtype=np.bool_)
        return kinds == self.specs.index(SNAPSHOTS)

    def draws_snapshots(self) -> bool:
        """True if a match may be drawn against a snapshot (then the run takes them)."""
        return SNAPSHOTS in self.specs and self.weights[self.specs.index(SNAPSHOTS)] > 0

    def agents(self) -> list[tuple[int, str]]:
        """(code, spec) of every entry played by a frozen agent."""
        return [(code, spec) for code, spec in enumerate(self.specs) if spec not in (SELF, SNAPSHOTS)]


def entry_seed(seed: int | None, code: int) -> int | None:
    """The seed of the frozen agent of entry `code` in a pool seeded with `seed`: a stream of its own."""
    return None if seed is None else int(np.random.SeedSequence([seed, code]).generate_state(1, np.uint64)[0])


def load_opponent(
    where: str, text: str, seed: int | None = None, num_threads: int = 1, allow_import: bool = True
) -> AgentProtocol:
    """The frozen agent of a spec or NAME=SPEC the config holds at `where` (a policy's weights take no gradient);
    `allow_import=False` for a config read from a file (module docstring). One-line errors name `where` and the
    spec."""
    _, spec = parse_agent_arg(text)
    try:
        agent = load_agent(spec, seed=seed, num_threads=num_threads, allow_import=allow_import)
    except (ValueError, FileNotFoundError) as error:
        raise type(error)(f"{where} {text!r}: {error}") from None
    policy = getattr(agent, "policy", None)
    if isinstance(policy, nn.Module):
        policy.eval().requires_grad_(False)
    return agent


def named_agents(config: Config) -> list[tuple[str, str]]:
    """(where, spec) of every agent the config names: its frozen opponents, then its evaluation opponents."""
    lineup = Lineup.of(config.selfplay.opponents)
    return [("selfplay.opponents", spec) for _, spec in lineup.agents()] + [
        ("eval.opponents", spec) for spec in config.eval.opponents
    ]


def init_rules(init: str) -> Rules | None:
    """The rules the policy of a `warmstart.init` spec ("bot", "checkpoint:PATH") records it was trained under; a
    file that cannot be read is one error naming the key."""
    where = f"warmstart.init={init!r}"
    try:
        metadata = read_checkpoint_metadata(policy_file(init))
    except (ValueError, FileNotFoundError) as error:
        raise type(error)(f"{where}: {error}") from None
    return recorded_rules(metadata, where)


def check_agents(config: Config) -> None:
    """Build every agent a new run's config names once and check the rules they (and `warmstart.init`) were trained
    under against the config's (`check_rules`); one ValueError (FileNotFoundError) naming the key and the spec."""
    records = []
    for where, spec in named_agents(config):
        agent = load_opponent(where, spec)
        records.append((f"{where} {spec!r}", agent_rules(agent)))
    init = config.warmstart.init
    if init:
        records.append((f"warmstart.init={init!r}", init_rules(init)))
    check_rules(config, records)


def check_rules(config: Config, records: Iterable[tuple[str, Rules | None]]) -> None:
    """ValueError in one line naming both rule sets unless every rule set recorded is the config's own, or the config
    names its rules (module docstring); `records` are (the agent in words, the rules it records or None)."""
    if config.names_rules():
        return
    ours = config.make_rules()
    for what, theirs in records:
        if theirs is not None and theirs != ours:
            raise ValueError(
                f"{what} was trained under the rules {theirs.describe()}, the config plays {ours.describe()}: "
                f"{NAME_THE_RULES}"
            )
