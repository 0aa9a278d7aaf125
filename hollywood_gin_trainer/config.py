"""The trainer's configuration: one dataclass per TOML section, a docstring under every field (CleanRL's style).

`load_config(path, overrides)` reads a TOML file with the standard library's `tomllib`, applies `--set
section.key=value` overrides and checks everything: an unknown section or key, a wrong type or a bad value raises
`ValueError` naming the key, the value and what is allowed. `[rules]` is passed to `hollywood_gin_env.Rules`, which
checks its own keys the same way.
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
from dataclasses import dataclass, field
from typing import Any, get_args, get_origin, get_type_hints

from hollywood_gin_env.agents.expert import NUM_WEIGHTS
from hollywood_gin_env.engine.threads import MAX_THREADS
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.userfiles import read_user_file


def _allowed(
    low: float | None = None,
    high: float | None = None,
    choices: tuple = (),
    nonempty: bool = False,
    max_len: int | None = None,
):
    """Field metadata: the range or choices a value must respect (a list's elements, each), a list's length."""
    return {"low": low, "high": high, "choices": choices, "nonempty": nonempty, "max_len": max_len}


# Upper bounds on what allocates or runs in proportion to a size: each is far above the shipped recipes
# (configs/*.toml) and refuses at once what would otherwise fail hours later, out of memory.
#: train.seed seeds numpy's legacy global generator, which takes 32 bits.
MAX_TRAIN_SEED = 2**32 - 1
#: Decisions one rollout stores, env.num_envs * ppo.rollout_steps (float32 observations: about 2.5 GB).
MAX_ROLLOUT_DECISIONS = 2**20
#: Teacher decisions the warm start keeps in memory at once (about 2.4 KB each: about 5 GB).
MAX_WARMSTART_DECISIONS = 2_000_000
#: A config file's size and nesting (the shipped configs: under 4 KB, 2 deep), checked before it is parsed.
MAX_CONFIG_BYTES = 1 << 20
MAX_CONFIG_DEPTH = 32
#: The recipe's teacher: expert with a larger knock-chance credit, less discard caution and more lookahead; 53% of
#: matches against expert (1000 matches), so cloning it starts the learner above expert instead of level with it.
RECIPE_TEACHER_WEIGHTS = (1.5, 60.0, 1.0, 0.1, 0.5, 0.0, 2.0, 0.05, 8.0)


@dataclass
class TrainConfig:
    """[train]: the run as a whole."""

    seed: int = field(default=0, metadata=_allowed(0, MAX_TRAIN_SEED))
    """seed of everything: the deals, the opponents drawn, the network's initial weights, the action samples
    (0..2**32-1)"""
    updates: int = field(default=2000, metadata=_allowed(1, 1_000_000))
    """PPO updates after the warm start (one update = one rollout, then its epochs)"""
    lr: float = field(default=3e-4, metadata=_allowed(0.0, 1.0))
    """Adam learning rate of the PPO phase"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over the updates"""
    torch_threads: int = field(default=2, metadata=_allowed(1, 256))
    """torch's intra-op threads; set deliberately: the default (one per core) oversubscribes a busy small machine"""
    env_threads: int | None = field(default=None, metadata=_allowed(1, MAX_THREADS))
    """kernel threads of the rollout (the engine, the encoder, the heuristics, the lookahead inputs, the privileged
    view, the play-outs, the reward credit and GAE; hollywood_gin_env/engine/threads.py), 1..1024; absent (None): the
    CPUs this process may use (os.sched_getaffinity) less torch_threads, at least 1 (one on a 2-CPU machine, the
    fastest count measured there). The same seed trains the same weights for every count. With
    `workers = K > 1` each Ray worker takes 1 unless this is set (then each takes this many). docs/TRAINING.md,
    "Threads": how to split the cores between this and torch_threads"""
    max_minutes: float = field(default=115.0, metadata=_allowed(0.0))
    """wall-time cap of the whole run, warm start included (0: none): the first update past it is the last one,
    evaluated and saved as if `updates` had been reached (a safety net; size `updates` to finish before it)"""
    compile: bool = False
    """run the rollout's forward passes of the learner through torch.compile (hollywood_gin_trainer/forward.py): on
    CUDA as CUDA graphs over batches padded to env.num_envs rows, on the CPU with a dynamic batch size. Compiling
    takes seconds to half a minute once per run; the weights trained may differ from eager ones in the last bits
    (other roundings); the same seed trains the same weights for every env_threads count. Off until measured to gain on
    the machine (docs/TRAINING.md, "Threads")"""
    workers: int = field(default=1, metadata=_allowed(1, 256))
    """rollout workers: 1 plays every match in this process (no Ray); K > 1 splits `env.num_envs` over K Ray
    actors of one CPU each (workers.py, docs/SCALING.md), the learner updates here"""


@dataclass
class EnvConfig:
    """[env]: the matches played at once and what they pay."""

    num_envs: int = field(default=256, metadata=_allowed(2, 8192))
    """matches played at once (one batched engine; at most 8192, and num_envs * ppo.rollout_steps <= 2**20)"""
    reward: str = field(default="hand", metadata=_allowed(choices=("hand", "game", "match", "chance")))
    """"hand": ±points/100 when a hand is scored; "game": ±1 per Hollywood game closed; "match": ±1 at the end;
    "chance": 2 × the hand's change in the chance to win the match (hollywood_gin_env/rules/win_chance.py)"""
    episode: str = field(default="hand", metadata=_allowed(choices=("match", "hand")))
    """where returns stop: "match" (a decision's return runs on through later hands) or "hand" (only the points of
    the hand it was made in; the value head then predicts the rest of the hand, a much less noisy target)"""


@dataclass
class ModelConfig:
    """[model]: the policy network (hollywood_gin_env.agents.policy's "cards" network, ReLU) and its value head."""

    hidden_sizes: list[int] = field(
        default_factory=lambda: [256, 256], metadata=_allowed(1, 8192, nonempty=True, max_len=8)
    )
    """widths of the torso's hidden layers (at most 8 layers, and at most 50M parameters in all: what a checkpoint
    may declare, hollywood_gin_env/agents/policy.py)"""
    card_channels: int = field(default=32, metadata=_allowed(1, 8192))
    """width of each card's hidden vector in the card head"""
    take_features: bool = True
    """give the draw/take/pass logits what taking the face-up card would do (exact meld solver)"""
    lookahead_features: bool = True
    """the network also reads what `expert` computes before it acts, for each card (expected deadwood,
    knock and gin chances after the next draw, danger) and for a stock draw (hollywood_gin_env/agents/
    lookahead_planes.py; about 60 us of numba a decision)"""
    critic: str = field(default="privileged", metadata=_allowed(choices=("player", "privileged")))
    """the value head's inputs: "player", the torso's features of the observation; "privileged", those and what the
    player cannot see (the opponent's hand and deadwood, who the opponent is, the next stock cards;
    privileged.py), through an MLP: a training-time baseline only, never part of the shipped policy"""
    critic_stock_cards: int = field(default=12, metadata=_allowed(1, 16))
    """"privileged" critic only: how many of the next stock cards, in order, the value head sees (at most 16: each is
    208 bytes more for every decision the warm start and a rollout hold)"""
    critic_playout: bool = True
    """"privileged" critic only: the value head also sees the score of `expert` playing each hand's deal out against
    itself on the same stock (one play-out a hand, privileged.py)"""


@dataclass
class PPOConfig:
    """[ppo]: rollouts and the clipped-surrogate update."""

    rollout_steps: int = field(default=64, metadata=_allowed(1, 4096))
    """decisions collected per match per update (both seats' decisions in a self-play match)"""
    epochs: int = field(default=2, metadata=_allowed(1, 100))
    """passes over each rollout"""
    minibatch_size: int = field(default=2048, metadata=_allowed(1, MAX_ROLLOUT_DECISIONS))
    """learner decisions per gradient step"""
    gamma: float = field(default=0.995, metadata=_allowed(0.0, 1.0))
    """discount per own decision"""
    gae_lambda: float = field(default=0.95, metadata=_allowed(0.0, 1.0))
    """GAE's lambda along each player's own decisions"""
    clip_coef: float = field(default=0.2, metadata=_allowed(0.0, 10.0))
    """the surrogate's clipping of the probability ratio"""
    clip_vloss: bool = True
    """clip the value loss around the rollout's values too"""
    norm_adv: bool = True
    """normalise advantages per minibatch"""
    vf_coef: float = field(default=0.5, metadata=_allowed(0.0, 100.0))
    """weight of the value loss"""
    ent_coef: float = field(default=0.003, metadata=_allowed(0.0, 10.0))
    """entropy bonus at the start of the PPO phase"""
    ent_coef_final: float = field(default=0.0005, metadata=_allowed(0.0, 10.0))
    """entropy bonus at the end (annealed linearly)"""
    max_grad_norm: float = field(default=0.5, metadata=_allowed(0.0, 1e6))
    """gradient-norm clipping"""
    target_kl: float = field(default=0.02, metadata=_allowed(0.0, 10.0))
    """stop an update's epochs once the approximate KL passes this (0 = never)"""
    bf16: bool = False
    """the update's forward passes under torch.autocast in bfloat16 (the gradients and Adam stay float32): about
    1.4x the update's rows/s on a CPU with AVX-512 BF16, far slower on one without it; other weights than float32
    (other roundings). Off by default: benchmarks/README.md has the figures"""


@dataclass
class WarmStartConfig:
    """[warmstart]: behaviour cloning on a heuristic's decisions before PPO (random play almost never ends a hand)."""

    teacher: str = field(default="expert", metadata=_allowed(choices=("expert", "greedy", "none")))
    """the heuristic that plays both seats and whose decisions are cloned ("none" skips the warm start)"""
    teacher_weights: list[float] = field(default_factory=lambda: list(RECIPE_TEACHER_WEIGHTS))
    """"expert" only: its 9 weights in hollywood_gin_env/agents/expert.py's order (lookahead, knock_chance, danger,
    danger_age, signal, take_margin, gin_hold, gin_outs, gin_stock); empty: expert's own defaults"""
    decisions: int = field(default=1_200_000, metadata=_allowed(0, MAX_WARMSTART_DECISIONS))
    """teacher decisions to collect (at most 2,000,000: they are held in memory, about 2.4 KB each, and 208 bytes
    more per stock card a "privileged" critic sees)"""
    epochs: int = field(default=4, metadata=_allowed(1, 100))
    """passes over the collected decisions"""
    lr: float = field(default=1e-3, metadata=_allowed(0.0, 1.0))
    """Adam learning rate of the cloning (decays linearly to 0)"""
    minibatch_size: int = field(default=2048, metadata=_allowed(1, MAX_ROLLOUT_DECISIONS))
    """decisions per gradient step"""
    value_coef: float = field(default=0.5, metadata=_allowed(0.0, 100.0))
    """weight of the value head's regression on the teacher's discounted returns"""


@dataclass
class SelfPlayConfig:
    """[selfplay]: who the learner plays. Each new match draws its opponent from this mix."""

    self_weight: float = field(default=0.1, metadata=_allowed(0.0))
    """share of matches against the current policy itself (both seats train)"""
    snapshot_weight: float = field(default=0.1, metadata=_allowed(0.0))
    """share against a frozen past snapshot from the pool (falls back to self while the pool is empty)"""
    expert_weight: float = field(default=0.5, metadata=_allowed(0.0))
    """share against the `expert` heuristic (a fixed anchor against forgetting)"""
    greedy_weight: float = field(default=0.3, metadata=_allowed(0.0))
    """share against the `greedy` heuristic"""
    snapshot_every: int = field(default=25, metadata=_allowed(1))
    """updates between snapshots added to the pool"""
    pool_size: int = field(default=8, metadata=_allowed(1, 64))
    """most snapshots kept; the oldest is dropped first"""
    priority_exponent: float = field(default=1.0, metadata=_allowed(0.0, 100.0))
    """snapshot i is drawn with weight (1 - learner's win rate against it + 0.05) ** exponent (0 = uniform)"""


@dataclass
class EvalConfig:
    """[eval]: duplicate-deal matches through hollywood_gin_env.evaluation.evaluate during training."""

    every: int = field(default=100, metadata=_allowed(0))
    """updates between evaluations (0 = only at the end); last.pt is written at each"""
    matches: int = field(default=400, metadata=_allowed(2, 100_000))
    """matches per opponent (even: duplicate pairs; at most 100,000)"""
    opponents: list[str] = field(
        default_factory=lambda: ["expert", "greedy"],
        metadata=_allowed(choices=("expert", "greedy", "random"), nonempty=True),
    )
    """heuristics evaluated against; best.pt is kept by the lower 95% bound against the first"""
    seed: int = field(default=1_000_003, metadata=_allowed(0, 2**64 - 1))
    """deal seed of every evaluation (the same deals each time, so evaluations compare)"""


SECTIONS: dict[str, type] = {
    "train": TrainConfig,
    "env": EnvConfig,
    "model": ModelConfig,
    "ppo": PPOConfig,
    "warmstart": WarmStartConfig,
    "selfplay": SelfPlayConfig,
    "eval": EvalConfig,
}
#: "section.key" -> the largest value allowed, of every integer field with an upper bound.
LIMITS: dict[str, int] = {
    f"{name}.{f.name}": f.metadata["high"]
    for name, cls in SECTIONS.items()
    for f in dataclasses.fields(cls)
    if get_type_hints(cls)[f.name] is int and f.metadata.get("high") is not None
}


@dataclass
class Config:
    """The whole run: every section, plus `rules` (the keys of hollywood_gin_env.Rules)."""

    train: TrainConfig = field(default_factory=TrainConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    warmstart: WarmStartConfig = field(default_factory=WarmStartConfig)
    selfplay: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    rules: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (TOML- and checkpoint-safe)."""
        return dataclasses.asdict(self)

    def make_rules(self) -> Rules:
        """The `Rules` of `[rules]`."""
        return Rules.from_dict(self.rules)

    def policy_config(self) -> dict[str, Any]:
        """The checkpoint config of the policy network this run trains."""
        m = self.model
        return {
            "arch": "cards",
            "hidden_sizes": list(m.hidden_sizes),
            "activation": "relu",
            "card_channels": m.card_channels,
            "take_features": m.take_features,
            "lookahead_features": m.lookahead_features,
            "deterministic": True,
        }


def _check_value(key: str, value: Any, hint: Any, meta: dict[str, Any]) -> Any:
    """The value converted to the field's type; ValueError naming the key, the value and what is allowed."""
    optional = [arg for arg in get_args(hint) if arg is not type(None)]
    if len(optional) == 1 and len(get_args(hint)) == 2:  # `X | None`: None (absent from TOML) is the default
        return None if value is None else _check_value(key, value, optional[0], meta)
    if get_origin(hint) is list:
        if not isinstance(value, list) or (meta.get("nonempty") and not value):
            raise ValueError(f"{key}={value!r} must be a {'non-empty ' if meta.get('nonempty') else ''}list")
        if meta.get("max_len") is not None and len(value) > meta["max_len"]:
            raise ValueError(f"{key} has {len(value)} entries: allowed at most {meta['max_len']}")
        return [_check_value(f"{key}[{i}]", v, get_args(hint)[0], meta) for i, v in enumerate(value)]
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{key}={value!r} must be true or false")
        return value
    if hint is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{key}={value!r} must be an integer")
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{key}={value!r} must be a number")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"{key}={value!r} must be a finite number (not nan or inf)")
    if hint is str and not isinstance(value, str):
        raise ValueError(f"{key}={value!r} must be a string")
    if meta.get("choices") and value not in meta["choices"]:
        raise ValueError(f"{key}={value!r} is not allowed: use one of {', '.join(map(repr, meta['choices']))}")
    low, high = meta.get("low"), meta.get("high")
    if (low is not None and value < low) or (high is not None and value > high):
        bound = f"{low} <= value" + (f" <= {high}" if high is not None else "")
        raise ValueError(f"{key}={value!r} is out of range: allowed {bound}")
    return value


def _section(name: str, cls: type, data: Any) -> Any:
    """One section's dataclass from its TOML table."""
    if not isinstance(data, dict):
        raise ValueError(f"[{name}] must be a table, got {data!r}")
    hints = get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ValueError(
            f"unknown key {name}.{unknown[0]} (value {data[unknown[0]]!r}); [{name}] allows: {', '.join(fields)}"
        )
    values = {k: _check_value(f"{name}.{k}", v, hints[k], dict(fields[k].metadata)) for k, v in data.items()}
    return cls(**values)


def config_from_dict(data: dict[str, Any]) -> Config:
    """A checked Config from nested plain data (a TOML document or a checkpoint's `config`)."""
    unknown = sorted(set(data) - set(SECTIONS) - {"rules"})
    if unknown:
        raise ValueError(f"unknown config section [{unknown[0]}]; allowed: {', '.join([*SECTIONS, 'rules'])}")
    sections = {name: _section(name, cls, data.get(name, {})) for name, cls in SECTIONS.items()}
    rules = data.get("rules", {})
    if not isinstance(rules, dict):
        raise ValueError(f"[rules] must be a table, got {rules!r}")
    config = Config(**sections, rules=dict(rules))
    config.make_rules()  # Rules names any bad key or value
    _check_across(config)
    return config


def _check_across(config: Config) -> None:
    """Constraints between fields."""
    mix = config.selfplay
    total = mix.self_weight + mix.snapshot_weight + mix.expert_weight + mix.greedy_weight
    if not 0 < total < math.inf:  # each weight is finite, but two near 1e308 sum to inf: no draw could be made
        raise ValueError(
            f"selfplay: the opponent weights (self, snapshot, expert, greedy) sum to {total}; the sum must be "
            "finite and above 0"
        )
    weights = config.warmstart.teacher_weights
    if weights and (config.warmstart.teacher != "expert" or len(weights) != NUM_WEIGHTS):
        raise ValueError(
            f"warmstart.teacher_weights={weights!r}: give {NUM_WEIGHTS} numbers (expert.py's weights, "
            f'in order) with teacher = "expert", or none'
        )
    if config.train.workers > config.env.num_envs:
        raise ValueError(
            f"train.workers={config.train.workers} is more than env.num_envs={config.env.num_envs}: "
            "each rollout worker needs at least one match"
        )
    model = config.model
    if model.critic != "privileged" and (model.critic_stock_cards != 1 or model.critic_playout):
        raise ValueError(
            f"model.critic_stock_cards={model.critic_stock_cards} and model.critic_playout="
            f'{str(model.critic_playout).lower()} shape a privileged critic: set model.critic="privileged", or with '
            f"model.critic={model.critic!r} set model.critic_stock_cards=1 and model.critic_playout=false"
        )
    if config.eval.matches % 2:
        raise ValueError(f"eval.matches={config.eval.matches} must be even (duplicate pairs)")
    decisions = config.env.num_envs * config.ppo.rollout_steps
    if decisions > MAX_ROLLOUT_DECISIONS:
        raise ValueError(
            f"env.num_envs * ppo.rollout_steps = {decisions:,} decisions per rollout: allowed at most "
            f"{MAX_ROLLOUT_DECISIONS:,} (the rollout is held in memory)"
        )
    from hollywood_gin_env.agents.policy import check_policy_config  # imports torch, as training does anyway

    check_policy_config(config.policy_config(), where="[model]")  # the bounds a checkpoint must meet


def parse_override(text: str) -> tuple[list[str], Any]:
    """("section.key", value) from "section.key=value"; the value is read as TOML, else as a bare string."""
    key, sep, raw = text.partition("=")
    path = key.strip().split(".")
    if not sep or len(path) != 2 or not all(path):
        raise ValueError(f"--set {text!r} must look like section.key=value (e.g. train.lr=1e-4)")
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    return path, value


def load_config(path: str | None = None, overrides: list[str] = ()) -> Config:
    """The checked Config of a TOML file (None: every default) with `section.key=value` overrides applied."""
    data: dict[str, Any] = {} if path is None else read_toml(path)
    for text in overrides:
        (section, key), value = parse_override(text)
        if not isinstance(data.setdefault(section, {}), dict):
            raise ValueError(f"--set {text!r}: [{section}] is not a table")
        data[section][key] = value
    return config_from_dict(data)


def read_toml(path: str) -> dict[str, Any]:
    """The TOML document of a config file: a regular file of at most MAX_CONFIG_BYTES, nested at most
    MAX_CONFIG_DEPTH deep (checked before parsing: the parser recurses); ValueError naming the file else."""
    raw = read_user_file(path, MAX_CONFIG_BYTES, "config file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path} is not valid TOML: not UTF-8 text ({error})") from None
    depth = nesting_depth(text)
    if depth > MAX_CONFIG_DEPTH:
        raise ValueError(f"{path} nests arrays or tables {depth} deep; a config nests at most {MAX_CONFIG_DEPTH} deep")
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as error:
        raise ValueError(f"{path} is not valid TOML: {error}") from None


def nesting_depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings and comments (a close approximation of TOML's: enough to
    bound it before parsing)."""
    depth = deepest = 0
    quote, escaped, comment = "", False, False
    for char in text:
        if comment:
            comment = char != "\n"
        elif quote:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char == "#":
            comment = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(depth - 1, 0)
    return deepest


def to_toml(config: Config) -> str:
    """The config as a TOML document (written into the run directory)."""
    lines = []
    for name, values in config.to_dict().items():
        lines.append(f"[{name}]")
        lines += [f"{key} = {_toml_value(value)}" for key, value in values.items() if value is not None]
        lines.append("")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return repr(value)
