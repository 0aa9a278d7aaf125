"""The trainer's configuration: one dataclass per TOML section, a docstring under every field (CleanRL's style).

The defaults are the shipped recipe (configs/default.toml is their documented copy). The schema is validated by
pydantic v2 (`pydantic.dataclasses`): each field's type is strict (an int is not a float, 1 is not true), its range
is an `Annotated` bound, an unknown section or key is refused. `load_config(path, overrides)` reads a TOML file with
the standard library's `tomllib`, applies `--set section.key=value` overrides and checks everything; every refusal
is one `ValueError` naming the key, the value and what is allowed. `[rules]` is passed to
`hollywood_gin_env.Rules`, which checks its own keys the same way. `to_toml` writes a config with `tomli-w`.

The network (`[model] network` and `network_kwargs`) is named as a checkpoint names it (hollywood_gin_env/agents/
networks.py): checked before anything is made, its factory resolved, built on the meta device within a checkpoint's
bounds and checked against the network protocol. A config file or `--set` is the user's own, so a `MODULE:FACTORY`
network there imports its module (`load_config`); a config read back from a training state is a file's, and
resolves only among the networks already known (`--import MODULE`). `[ppo] advantages` names the advantage
estimate the same way: "gae", or a `MODULE:FUNCTION` declared an estimator (hollywood_gin_trainer/advantages.py).
"""

import copy
import dataclasses
import math
import tomllib
from dataclasses import field
from typing import Annotated, Any, Literal

import tomli_w
from pydantic import ConfigDict, Field, Strict, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from hollywood_gin_env.agents.expert import NUM_WEIGHTS
from hollywood_gin_env.agents.loading import parse_agent_arg
from hollywood_gin_env.engine.threads import MAX_THREADS
from hollywood_gin_env.evaluation.duplicate import MAX_MATCHES, MAX_TORCH_THREADS
from hollywood_gin_env.evaluation.evaluate import agent_labels
from hollywood_gin_env.rules.options import PRESET_KEY, Rules
from hollywood_gin_env.support.imports import MAX_REFERENCE, import_user_module
from hollywood_gin_env.support.messages import escape_controls, shown_value
from hollywood_gin_env.support.userfiles import read_user_file
from hollywood_gin_trainer.advantages import GAE, check_estimator

# Upper bounds on what allocates or runs in proportion to a size: each is far above the shipped recipes
# (configs/*.toml) and refuses at once what would otherwise fail hours later, out of memory.
#: train.seed seeds numpy's generators and torch's, which take 64 bits; 32 keep every seed derived from it in range.
MAX_TRAIN_SEED = 2**32 - 1
#: PPO updates one run may take: at this count a run is bounded by `train.max_minutes` alone (exploit's --minutes).
MAX_UPDATES = 1_000_000
#: Decisions one rollout stores, env.num_envs * ppo.rollout_steps (about 6 KB each with the recipe's critic).
MAX_ROLLOUT_DECISIONS = 2**20
#: Teacher decisions the warm start holds at once. With the recipe's network inputs and privileged critic each takes
#: 5.96 KB; measured, the process peaks at about 1.3 GB + 5.8 KB a decision: 7.3 GB for the recipe's 1.2M, 11.8 GB at
#: this cap (docs/TRAINING.md, "[warmstart]").
MAX_WARMSTART_DECISIONS = 2_000_000
#: An agent spec's length (selfplay.opponents, eval.opponents, warmstart.init): a path and a label.
MAX_SPEC_CHARS = 4096
#: Entries of selfplay.opponents (each a column of the privileged critic's input) and of eval.opponents.
MAX_OPPONENTS = 16
#: The recipe's opponent mix: self-play, snapshots, and the heuristics as fixed anchors against forgetting.
RECIPE_OPPONENTS = {"self": 0.1, "snapshots": 0.1, "expert": 0.5, "greedy": 0.3}
#: A config file's size, and a `--set` value's.
MAX_CONFIG_BYTES = 1 << 20
#: The recipe's teacher: expert with a larger knock-chance credit, less discard caution and more lookahead; 53% of
#: matches against expert (1000 matches), so cloning it starts the learner above expert instead of level with it.
RECIPE_TEACHER_WEIGHTS = (1.5, 60.0, 1.0, 0.1, 0.5, 0.0, 2.0, 0.05, 8.0)
#: The recipe's network: the card network of hollywood_gin_env/agents/policy.py, with these arguments.
RECIPE_NETWORK = "cards"
RECIPE_NETWORK_KWARGS = {
    "hidden_sizes": [256, 256],
    "activation": "relu",
    "card_channels": 32,
    "take_features": True,
    "lookahead_features": True,
}
#: Arguments of the recipe's network a [model] may give as its own keys, short for network_kwargs' (`model_table`).
NETWORK_SHORTHAND = ("hidden_sizes", "card_channels", "take_features", "lookahead_features")
#: A network's name: a registered name or MODULE:FACTORY (hollywood_gin_env/agents/networks.py's bound).
MAX_NETWORK_NAME = 200

#: Every section: unknown keys refused, NaN and infinities refused, each field's docstring its description.
SCHEMA = ConfigDict(extra="forbid", allow_inf_nan=False, use_attribute_docstrings=True)


def Int(low: int | None = None, high: int | None = None) -> Any:  # noqa: N802 (a type, as Annotated reads)
    """An int (never a bool or a float) within low..high."""
    return Annotated[int, Strict(), Field(ge=low, le=high)]


def Float(low: float | None = None, high: float | None = None) -> Any:  # noqa: N802
    """A finite number (an int is taken as a float; a bool is not) within low..high."""
    return Annotated[float, Strict(), Field(ge=low, le=high)]


Bool = Annotated[bool, Strict()]
#: An agent spec (load_agent's grammar, NAME=SPEC) or one of selfplay.opponents' own keys ("self", "snapshots").
Spec = Annotated[str, Strict(), Field(min_length=1, max_length=MAX_SPEC_CHARS)]


@dataclass(config=SCHEMA)
class TrainConfig:
    """[train]: the run as a whole."""

    seed: Int(0, MAX_TRAIN_SEED) = 0
    """seed of everything: the deals, the opponents drawn, the network's initial weights, the action samples
    (0..2**32-1)"""
    updates: Int(1, MAX_UPDATES) = 2000
    """PPO updates after the warm start (one update = one rollout, then its epochs)"""
    lr: Float(0.0, 1.0) = 3e-4
    """Adam learning rate of the PPO phase"""
    anneal_lr: Bool = True
    """decay the learning rate linearly to 0 over the updates"""
    torch_threads: Int(1, MAX_TORCH_THREADS) = 2
    """torch's intra-op threads; set deliberately: the default (one per core) oversubscribes a busy small machine"""
    env_threads: Int(1, MAX_THREADS) | None = None
    """kernel threads of the rollout (the engine, the encoder, the heuristics, the lookahead inputs, the privileged
    view, the play-outs, the reward credit and GAE; hollywood_gin_env/engine/threads.py), 1..1024; absent (None): the
    CPUs this process may use (os.sched_getaffinity) less torch_threads, at least 1 (one on a 2-CPU machine, the
    fastest count measured there). The same seed trains the same weights for every count. With
    `workers = K > 1` each Ray worker takes 1 unless this is set (then each takes this many). docs/TRAINING.md,
    "Threads": how to split the cores between this and torch_threads"""
    max_minutes: Float(0.0) = 115.0
    """wall-time cap of the whole run, warm start included (0: none): the first update past it is the last one,
    evaluated and saved as if `updates` had been reached (a safety net; size `updates` to finish before it)"""
    compile: Bool = False
    """run the rollout's forward passes of the learner through torch.compile (hollywood_gin_trainer/forward.py): on
    CUDA as CUDA graphs over batches padded to env.num_envs rows, on the CPU with a dynamic batch size. Compiling
    takes seconds to half a minute once per run; the weights trained may differ from eager ones in the last bits
    (other roundings); the same seed trains the same weights for every env_threads count. Off until measured to gain on
    the machine (docs/TRAINING.md, "Threads")"""
    workers: Int(1, 256) = 1
    """rollout workers: 1 plays every match in this process (no Ray); K > 1 splits `env.num_envs` over K Ray
    actors of one CPU each (workers.py, docs/SCALING.md), the learner updates here; a local Ray holds at most one
    per CPU and one per 512 MiB of memory available (--ray-address: the cluster's own bound)"""


@dataclass(config=SCHEMA)
class EnvConfig:
    """[env]: the matches played at once and what they pay."""

    num_envs: Int(2, 8192) = 256
    """matches played at once (one batched engine; at most 8192, and num_envs * ppo.rollout_steps <= 2**20)"""
    reward: Literal["hand", "game", "match", "chance"] = "hand"
    """"hand": ±points/100 when a hand is scored; "game": ±1 per Hollywood game closed; "match": ±1 at the end;
    "chance": 2 × the hand's change in the chance to win the match (hollywood_gin_env/rules/win_chance.py)"""
    episode: Literal["match", "hand"] = "hand"
    """where returns stop: "match" (a decision's return runs on through later hands) or "hand" (only the points of
    the hand it was made in; the value head then predicts the rest of the hand, a much less noisy target)"""


@dataclass(config=SCHEMA)
class ModelConfig:
    """[model]: the policy network (any network of the network protocol, hollywood_gin_env/agents/networks.py; the
    recipe's is "cards") and its value head."""

    network: Annotated[str, Strict(), Field(min_length=1, max_length=MAX_NETWORK_NAME)] = RECIPE_NETWORK
    """the policy network: a registered name ("cards", the card network of hollywood_gin_env/agents/policy.py;
    "mlp", a plain MLP; a name an installed package registers in the entry-point group hollywood_gin.networks) or
    MODULE:FACTORY, a function marked @network_factory or a torch.nn.Module class with the network protocol
    (hollywood_gin_env/agents/networks.py; docs/TRAINING.md, "The network")"""
    network_kwargs: dict[str, Any] = field(default_factory=lambda: copy.deepcopy(RECIPE_NETWORK_KWARGS))
    """the network factory's keyword arguments (TOML values; the factory's defaults for those left out); absent:
    the recipe's for "cards", none for another network. "cards" takes hidden_sizes (widths of the torso's hidden
    layers, at most 8), activation ("relu" or "tanh"), card_channels (width of each card's hidden vector in the card
    head), take_features (the draw/take/pass logits also see what taking the face-up card would do: the exact meld
    solver) and lookahead_features (the network also reads what `expert` computes before it acts, for each card:
    expected deadwood, knock and gin chances after the next draw, danger; and for a stock draw:
    hollywood_gin_env/agents/lookahead_planes.py, about 60 us of numba a decision); [model]'s own hidden_sizes,
    card_channels, take_features and lookahead_features change these ("cards" only). Every network holds at most
    50M parameters (what a checkpoint may declare)"""
    critic: Literal["player", "privileged"] = "privileged"
    """the value head's inputs: "player", the network's features (its `features` of its input rows); "privileged",
    those and what the player cannot see (the opponent's hand and deadwood, who the opponent is, the next stock cards;
    privileged.py), through an MLP: a training-time baseline only, never part of the shipped policy"""
    critic_stock_cards: Int(1, 16) = 12
    """"privileged" critic only: how many of the next stock cards, in order, the value head sees (at most 16: each is
    208 bytes more for every decision the warm start and a rollout hold)"""
    critic_playout: Bool = True
    """"privileged" critic only: the value head also sees the score of `expert` playing each hand's deal out against
    itself on the same stock (one play-out a hand, privileged.py)"""


@dataclass(config=SCHEMA)
class PPOConfig:
    """[ppo]: rollouts and the clipped-surrogate update."""

    rollout_steps: Int(1, 4096) = 64
    """decisions collected per match per update (both seats' decisions in a self-play match)"""
    epochs: Int(1, 100) = 2
    """passes over each rollout"""
    minibatch_size: Int(1, MAX_ROLLOUT_DECISIONS) = 2048
    """learner decisions per gradient step"""
    gamma: Float(0.0, 1.0) = 0.995
    """discount per own decision"""
    gae_lambda: Float(0.0, 1.0) = 0.95
    """GAE's lambda along each player's own decisions"""
    advantages: Annotated[str, Strict(), Field(min_length=1, max_length=MAX_REFERENCE)] = GAE
    """the advantage estimate: "gae" (per-player GAE with gamma and gae_lambda) or MODULE:FUNCTION, a function
    marked @advantage_estimator that gives the advantages of each player's chain of decisions
    (hollywood_gin_trainer/advantages.py)"""
    clip_coef: Float(0.0, 10.0) = 0.2
    """the surrogate's clipping of the probability ratio"""
    clip_vloss: Bool = True
    """clip the value loss around the rollout's values too"""
    norm_adv: Bool = True
    """normalise advantages per minibatch"""
    vf_coef: Float(0.0, 100.0) = 0.5
    """weight of the value loss"""
    ent_coef: Float(0.0, 10.0) = 0.003
    """entropy bonus at the start of the PPO phase"""
    ent_coef_final: Float(0.0, 10.0) = 0.0005
    """entropy bonus at the end (annealed linearly)"""
    max_grad_norm: Float(0.0, 1e6) = 0.5
    """gradient-norm clipping"""
    target_kl: Float(0.0, 10.0) = 0.02
    """stop an update's epochs once the approximate KL passes this (0 = never)"""
    bf16: Bool = False
    """the update's forward passes under torch.autocast in bfloat16 (the gradients and Adam stay float32): about
    1.4x the update's rows/s on a CPU with AVX-512 BF16, far slower on one without it; other weights than float32
    (other roundings). Off by default: benchmarks/README.md has the figures"""


@dataclass(config=SCHEMA)
class WarmStartConfig:
    """[warmstart]: behaviour cloning on a heuristic's decisions before PPO (random play almost never ends a hand)."""

    teacher: Literal["expert", "greedy", "none"] = "expert"
    """the heuristic that plays both seats and whose decisions are cloned ("none" skips the warm start)"""
    teacher_weights: list[Float()] = field(default_factory=lambda: list(RECIPE_TEACHER_WEIGHTS))
    """"expert" only: its 9 weights in hollywood_gin_env/agents/expert.py's order (lookahead, knock_chance, danger,
    danger_age, signal, take_margin, gin_hold, gin_outs, gin_stock); empty: expert's own defaults"""
    decisions: Int(0, MAX_WARMSTART_DECISIONS) = 1_200_000
    """teacher decisions to collect (at most 2,000,000: they are held in memory, 5.96 KB each with the recipe's network
    inputs and privileged critic; the process peaks at about 7.3 GB for the recipe's 1.2M and 11.8 GB at 2,000,000)"""
    epochs: Int(1, 100) = 4
    """passes over the collected decisions"""
    lr: Float(0.0, 1.0) = 1e-3
    """Adam learning rate of the cloning (decays linearly to 0)"""
    minibatch_size: Int(1, MAX_ROLLOUT_DECISIONS) = 2048
    """decisions per gradient step"""
    value_coef: Float(0.0, 100.0) = 0.5
    """weight of the value head's regression on the teacher's discounted returns"""
    init: Annotated[str, Strict(), Field(max_length=MAX_SPEC_CHARS)] = ""
    """start the policy from a checkpoint's weights instead of cloning: "bot" or "checkpoint:PATH" (its network must
    be [model]'s, the same name and arguments; the value head starts fresh); empty: the cloning above"""


@dataclass(config=SCHEMA)
class SelfPlayConfig:
    """[selfplay]: who the learner plays. Each new match draws its opponent from `opponents`."""

    opponents: Annotated[dict[Spec, Float(0.0)], Field(min_length=1, max_length=MAX_OPPONENTS)] = field(
        default_factory=lambda: dict(RECIPE_OPPONENTS)
    )
    """who the learner plays, each with its share of the matches (weights >= 0, at least one above 0; at most 16
    entries), in the order of the draw and of the privileged critic's "who" columns: "self" (the current policy in
    both seats; both train), "snapshots" (a frozen past snapshot of the pool; self while the pool is empty), or any
    agent spec load_agent reads ("expert", "greedy", "random", "bot", "checkpoint:PATH", NAME=SPEC to label one),
    frozen: never trained (hollywood_gin_trainer/opponents.py)"""
    snapshot_every: Int(1) = 25
    """updates between snapshots added to the pool"""
    pool_size: Int(1, 64) = 8
    """most snapshots kept; the oldest is dropped first"""
    priority_exponent: Float(0.0, 100.0) = 1.0
    """snapshot i is drawn with weight (1 - learner's win rate against it + 0.05) ** exponent (0 = uniform)"""


@dataclass(config=SCHEMA)
class EvalConfig:
    """[eval]: duplicate-deal matches through hollywood_gin_env.evaluation.evaluate during training."""

    every: Int(0) = 100
    """updates between evaluations (0 = only at the end); the training state is written before and after each"""
    matches: Int(2, MAX_MATCHES) = 400
    """matches per opponent (even: duplicate pairs; at most 100,000)"""
    opponents: Annotated[list[Spec], Field(min_length=1, max_length=MAX_OPPONENTS)] = field(
        default_factory=lambda: ["expert", "greedy"]
    )
    """the agents evaluated against: any spec load_agent reads, NAME=SPEC to label one (its label names its figures,
    eval/match_win_rate_vs_LABEL; at most 16); best.safetensors is kept by the lower 95% bound against the first"""
    seed: Int(0, 2**64 - 1) = 1_000_003
    """deal seed of every evaluation (the same deals each time, so evaluations compare)"""


@dataclass(config=SCHEMA)
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
    """the rules played: the keys of hollywood_gin_env.Rules, "preset" naming the preset they change ("hollywood",
    "eaai", "openspiel", "classic"; docs/RULES.md §4); `rules = "NAME"` is short for `[rules] preset = "NAME"`"""

    def to_dict(self) -> dict[str, Any]:
        """Plain data (TOML- and checkpoint-safe)."""
        return dataclasses.asdict(self)

    def make_rules(self) -> Rules:
        """The `Rules` of `[rules]`."""
        return Rules.from_dict(self.rules)

    def names_rules(self) -> bool:
        """True if the config names its rules (`rules = "NAME"` or any [rules] key): the user asked for them, so an
        agent trained under other rules may play them (hollywood_gin_trainer/opponents.py)."""
        return bool(self.rules)

    def eval_labels(self) -> list[str]:
        """The label of each eval opponent (its NAME, a checkpoint's file stem, or its spec): what its figures are
        named by; ValueError naming two opponents of one label."""
        names, specs = zip(*(parse_agent_arg(text) for text in self.eval.opponents), strict=True)
        try:
            return agent_labels(specs, names)
        except ValueError as error:
            raise ValueError(f"eval.opponents: {error}") from None

    def network_spec(self) -> dict[str, Any]:
        """The network this run trains, as a checkpoint names it: {"name": [model] network, "kwargs":
        network_kwargs}."""
        return {"name": self.model.network, "kwargs": copy.deepcopy(self.model.network_kwargs)}


def network_difference(theirs: dict[str, Any], ours: dict[str, Any]) -> str:
    """How a network spec differs from the run's (`Config.network_spec`), in words ("" for none): its name, else
    each argument that differs or is given in only one of the two."""
    if theirs["name"] != ours["name"]:
        theirs_name, ours_name = (escape_controls(repr(spec["name"])) for spec in (theirs, ours))  # checked: short
        return f"network={theirs_name} (the run's {ours_name})"
    a, b, absent = theirs["kwargs"], ours["kwargs"], object()
    keys = sorted(key for key in {**a, **b} if a.get(key, absent) != b.get(key, absent))

    def shown(kwargs: dict[str, Any], key: str) -> str:
        return shown_value(kwargs[key]) if key in kwargs else "absent"

    return ", ".join(f"{key}={shown(a, key)} (the run's {shown(b, key)})" for key in keys)


#: Section name -> its dataclass.
SECTIONS: dict[str, type] = {f.name: f.type for f in dataclasses.fields(Config) if f.name != "rules"}


def config_from_dict(data: Any) -> Config:
    """A checked Config from nested plain data (a TOML document or a checkpoint's `config`); its network and its
    advantage estimator resolve among the modules already imported (`import_config_modules`)."""
    config = validated(Config, model_table(rules_as_table(data)))
    config.make_rules()  # Rules names any bad key or value
    _check_across(config)
    return config


def validated(kind: type, data: Any, where: str = "") -> Any:
    """`data` as the schema dataclass `kind` (Config, or another of SCHEMA's); one ValueError naming the key (under
    `where`), the value (a bounded repr, however large or deep) and what is allowed."""
    try:
        return TypeAdapter(kind).validate_python(data)
    except ValidationError as error:
        first = error.errors()[0]
    parts, value = [str(part) for part in first["loc"]], shown_value(first["input"])
    if first["type"] == "unexpected_keyword_argument":
        holder = kind
        for part in parts[:-1]:
            holder = holder.__pydantic_fields__[part].annotation
        fields = ", ".join(holder.__pydantic_fields__)
        if holder is Config:
            raise ValueError(f"unknown config section [{parts[-1]}] (value {value}); allowed: {fields}") from None
        section = f"[{parts[-2]}]" if len(parts) > 1 else where
        key = ".".join([where, *parts] if where else parts)
        raise ValueError(f"unknown key {key} (value {value}); {section} allows: {fields}") from None
    key = ".".join([where, parts[0]] if where else parts[:1]) if parts else where or "the config"
    key += "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in parts[1:])
    raise ValueError(f"{key}={value} is not allowed: {first['msg'][0].lower()}{first['msg'][1:]}") from None


def _check_across(config: Config) -> None:
    """Constraints between fields."""
    total = sum(config.selfplay.opponents.values())
    if not 0 < total < math.inf:  # each weight is finite, but two near 1e308 sum to inf: no draw could be made
        raise ValueError(
            f"selfplay.opponents: the weights sum to {total}; the sum must be finite and above 0 (give one "
            "opponent a weight above 0, e.g. selfplay.opponents={self = 1.0})"
        )
    config.eval_labels()  # two evaluation opponents of one label would share their figures
    init = config.warmstart.init
    if init and not (init.lower() == "bot" or init.lower().startswith("checkpoint:") and init[len("checkpoint:") :]):
        raise ValueError(f'warmstart.init={shown_value(init)} is not allowed: use "bot", "checkpoint:PATH" or ""')
    weights = config.warmstart.teacher_weights
    if weights and (config.warmstart.teacher != "expert" or len(weights) != NUM_WEIGHTS):
        raise ValueError(
            f"warmstart.teacher_weights={shown_value(weights)}: give {NUM_WEIGHTS} numbers (expert.py's weights, "
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
    check_network(config)
    check_estimator(config.ppo)


def check_network(config: Config) -> None:
    """ValueError in one line naming [model] unless its network resolves among the networks known, builds on the
    meta device within a checkpoint's bounds and follows the network protocol, and its arguments are TOML values
    (the run writes its config as TOML)."""
    from hollywood_gin_env.agents.networks import network_tensors  # imports torch, as training does anyway

    spec = config.network_spec()
    try:
        tomli_w.dumps({"network_kwargs": spec["kwargs"]})
    except (TypeError, ValueError) as error:
        raise ValueError(
            f"model.network_kwargs={shown_value(spec['kwargs'])}: not TOML values ({error}); a config holds "
            "strings, numbers, booleans, lists and tables"
        ) from None
    network_tensors(spec, "[model]")


def model_table(data: Any) -> Any:
    """The document with [model]'s network arguments in `network_kwargs`: where absent, the recipe's
    (RECIPE_NETWORK_KWARGS) for the recipe's network and none for another; the recipe network's arguments given as
    [model]'s own keys (NETWORK_SHORTHAND: `--set model.card_channels=64`, the shipped run's docs/shipped-run/
    config.toml) change those key by key. ValueError naming such a key given for another network."""
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or not isinstance(model.get("network_kwargs", {}), dict):
        return data
    own = {key: model[key] for key in NETWORK_SHORTHAND if key in model}
    network = model.get("network", RECIPE_NETWORK)
    if own and network != RECIPE_NETWORK:
        key = next(iter(own))
        raise ValueError(
            f"model.{key}: an argument of the network {RECIPE_NETWORK!r}; [model] network={shown_value(network)} "
            f"takes its arguments from model.network_kwargs"
        )
    default = RECIPE_NETWORK_KWARGS if network == RECIPE_NETWORK else {}
    kwargs = {**copy.deepcopy(model.get("network_kwargs", default)), **own}
    rest = {key: value for key, value in model.items() if key not in NETWORK_SHORTHAND}
    return {**data, "model": {**rest, "network_kwargs": kwargs}}


#: The keys of a config that name code by MODULE:ATTRIBUTE: (section, key).
CODE_KEYS = (("model", "network"), ("ppo", "advantages"))


def import_config_modules(data: Any) -> None:
    """Import the module of each MODULE:ATTRIBUTE the user's own config names (CODE_KEYS: [model]'s network, [ppo]'s
    advantage estimator): naming it there is the user's act, as typing it is (a config read back from a training
    state never imports one: `--import`). ValueError in one line if an import fails."""
    for section, key in CODE_KEYS:
        table = data.get(section) if isinstance(data, dict) else None
        name = table.get(key) if isinstance(table, dict) else None
        if isinstance(name, str) and ":" in name:
            import_user_module(name.partition(":")[0], f"{section}.{key}={shown_value(name)}")


def rules_table(rules: Rules) -> dict[str, Any]:
    """A config's [rules] that plays `rules` (every key but those absent, None, which TOML cannot write)."""
    return {key: value for key, value in rules.to_dict().items() if value is not None}


def rules_as_table(data: Any) -> Any:
    """The document with `rules = "NAME"` written as the table it stands for, `[rules] preset = "NAME"`."""
    if isinstance(data, dict) and isinstance(data.get("rules"), str):
        return {**data, "rules": {PRESET_KEY: data["rules"]}}
    return data


def parse_toml(text: str, where: str) -> dict[str, Any]:
    """The TOML document of `text`; ValueError naming `where` if it is not one."""
    try:
        return _loads(text, where)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{where} is not valid TOML: {error}") from None


def _loads(text: str, where: str) -> dict[str, Any]:
    """tomllib.loads of at most MAX_CONFIG_BYTES characters; ValueError naming `where` if they nest too deep for
    the parser (which recurses)."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ValueError(f"{where} holds {len(text):,} characters; a config holds at most {MAX_CONFIG_BYTES:,}")
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ValueError(f"{where} nests arrays or tables too deep to read (a config nests 2 deep)") from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """("section.key", value) from "section.key=value"; the value is read as TOML, else as a bare string."""
    key, sep, raw = text.partition("=")
    path = key.strip().split(".")
    if not sep or len(path) != 2 or not all(path):
        raise ValueError(f"--set {shown_value(text)} must look like section.key=value (e.g. train.lr=1e-4)")
    try:
        return path, _loads(f"v = {raw.strip()}", f"--set {escape_controls(key.strip())}")["v"]
    except tomllib.TOMLDecodeError:
        return path, raw.strip()  # a bare word: `--set warmstart.teacher=greedy`


def toml_inline(value: Any) -> str:
    """The TOML text of plain data on one line (a table inline): a `--set` value; TypeError for what TOML cannot
    hold (None)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_inline(str(key))} = {toml_inline(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(map(toml_inline, value)) + "]"
    return tomli_w.dumps({"v": value}).removeprefix("v = ").rstrip("\n")


def load_config(path: str | None = None, overrides: list[str] = (), rules: Rules | None = None) -> Config:
    """The checked Config of a TOML file (None: every default) with `rules` in place of its [rules] (`--rules`),
    then `section.key=value` overrides applied: the user's own config, so a MODULE:FACTORY network it names is
    imported (`import_config_modules`)."""
    data: dict[str, Any] = {} if path is None else rules_as_table(read_toml(path))
    if rules is not None:
        data["rules"] = rules_table(rules)
    for text in overrides:
        (section, key), value = parse_override(text)
        if not isinstance(data.setdefault(section, {}), dict):
            raise ValueError(f"--set {section}.{key}: [{section}] is not a table")
        data[section][key] = value
    import_config_modules(data)
    return config_from_dict(data)


def read_toml(path: str) -> dict[str, Any]:
    """The TOML document of a config file: a regular file of at most MAX_CONFIG_BYTES; ValueError naming it else."""
    raw = read_user_file(path, MAX_CONFIG_BYTES, "config file")
    try:
        text = raw.decode("utf-8-sig")  # a byte order mark, as some editors write, is no part of the TOML
    except UnicodeDecodeError as error:
        raise ValueError(f"{escape_controls(str(path))} is not valid TOML: not UTF-8 text ({error})") from None
    return parse_toml(text, escape_controls(str(path)))


def to_toml(config: Config) -> str:
    """The config as a TOML document (written into the run directory); an absent value (None) is left out."""
    return tomli_w.dumps({name: _present(values) for name, values in config.to_dict().items()})


def _present(values: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}
