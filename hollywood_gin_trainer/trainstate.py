"""Training-state files: everything a run needs to continue exactly, in a policy file `load_agent` also plays.

A run's `last.safetensors` is a policy checkpoint (hollywood_gin_env/agents/checkpoint.py: the policy's tensors by
parameter name, metadata with its format, version, network and rules) whose training state rides along: tensors under
EXTRA_PREFIX ("train/") and one JSON object, the metadata's "train":

    tensors  train/model.value_head.*           the value head (the policy's own tensors are the checkpoint's)
             train/optimizer.<i>.exp_avg, .exp_avg_sq, .step    Adam's state of parameter i
             train/pool.<k>.<parameter>         snapshot k's weights; train/pool.wins, train/pool.played
             train/arena.engine.<field>, train/arena.<seats...>  the matches (workers.py: train/arena.<k>.*)
             train/rng.generator                the torch Generator's state
             train/warmstart.optimizer.<i>.*, train/warmstart.totals, train/warmstart.generator
                                                the cloning's Adam, epoch totals and epoch's generator state
    "train"  {"config", "progress", "device", "optimizer": {"param_groups"}, "pool": {"updates", "next_slot"},
              "arena": {"step", "opponents"}, "rng": {"numpy"},
              "opponents": {spec: the SHA-256 of its file} for each frozen opponent read from a policy file,
              "warmstart": {"epoch", "batch"}}

A run saved in its warm start (warmstart.py) holds no matches (they are dealt after it: "arena" is null) and its
"warmstart" record says where the cloning stands; the numpy stream is the one the warm start began with (it collects
the teacher's decisions again). A started run's file has no "warmstart".

Reading runs no code and allocates only what the run itself holds: the config is read from the header first (its
network, the one the metadata names, resolved as a file's: among the networks known, `--import MODULE`), the run
it describes is built, and each tensor must have the dtype and shape of the run's own (support/tensorfile.py). Then
every value's range is checked before anything is restored, so a damaged file is one ValueError naming the value:
Adam's hyperparameters against the run's (lr within 0..train.lr), its moments finite and within what gradients
clipped to ppo.max_grad_norm can make, its step counts equal and within the updates done; weights finite and within
MAX_WEIGHT (a policy checkpoint's bound: hollywood_gin_env/agents/checkpoint.py); the progress counters within the
config (update <= train.updates, decisions within what the updates could train on); the pool within
selfplay.pool_size and its counts; the matches by the engine's own checks, their opponents by spec the config's
(selfplay.opponents); each policy file a frozen opponent is read from the one the run
began against (its SHA-256); the device a CPU or CUDA one; a warm start's epoch and minibatch within
[warmstart], its Adam's steps the minibatches done and its moments within clipped gradients' bounds, its totals
within the rows cloned.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict, field
from typing import Any

import numpy as np
import torch
from pydantic.dataclasses import dataclass

from hollywood_gin_env.agents.checkpoint import EXTRA_PREFIX, MAX_WEIGHT, save_checkpoint
from hollywood_gin_env.agents.networks import check_network_spec, network_tensors
from hollywood_gin_env.support.messages import escape_controls, shown_text, shown_value
from hollywood_gin_env.support.tensorfile import Spec, read_tensor_header, read_tensors
from hollywood_gin_trainer.config import (
    MAX_WARMSTART_DECISIONS,
    SCHEMA,
    Bool,
    Config,
    Float,
    Int,
    config_from_dict,
    network_difference,
    validated,
)

#: run.py's TrainingRun, which imports this module (so named here, not imported).
Run = Any
#: Decisions one run may train on: the warm start's and every update's, each at most 2**20.
MAX_DECISIONS = MAX_WARMSTART_DECISIONS + 1_000_000 * 2**20
#: Adam's moments may exceed the clipped gradients' bound by rounding only.
ROUNDING = 1e-3
ADAM_STATE = ("step", "exp_avg", "exp_avg_sq")
#: A number in the progress history: an int stays an int.
Number = Int() | Float()
#: The device types a run trains on (run.py's `resolve_device` refuses others).
DEVICE_TYPES = ("cpu", "cuda")


@dataclass(config=SCHEMA)
class Progress:
    """The run's counters."""

    update: Int(0, 1_000_000) = 0
    """PPO updates done"""
    global_step: Int(0, MAX_DECISIONS) = 0
    """decisions trained on (the warm start's teacher decisions included)"""
    wall_seconds: Float(0.0, 1e9) = 0.0
    """wall time spent training, over every resume"""
    best_lower: Float(-1.0, 1.0) = -1.0
    """the best lower 95% bound of the win rate against eval.opponents[0]"""
    history: list[dict[str, Number]] = field(default_factory=list)
    """every evaluation's headline figures"""
    evaluation_due: Bool = False
    """saved just before the evaluation of `update`: a resumed run plays it first"""
    finished: Bool = False
    """`update` is the run's last (train.updates reached, or train.max_minutes passed)"""

    def record(self, results: dict[str, dict[str, Any]], best_by: str) -> bool:
        """Add an evaluation's headline figures to the history; True if its lower bound against `best_by` is the
        best so far."""
        headline = {"update": self.update, "decisions": self.global_step, "wall_s": round(self.wall_seconds)}
        for name, summary in results.items():
            headline[f"win_vs_{name}"] = round(summary["match_win_rate"], 4)
            headline[f"low_vs_{name}"] = round(summary["match_win_ci95"][0], 4)
            headline[f"high_vs_{name}"] = round(summary["match_win_ci95"][1], 4)
        self.history.append(headline)
        self.evaluation_due = False
        low = results[best_by]["match_win_ci95"][0]
        if low > self.best_lower:
            self.best_lower = low
            return True
        return False


def policy_record(config: Config, progress: Progress, commit: str) -> dict[str, Any]:
    """What a policy file records about how it was made (its metadata's "training")."""
    return {
        "config": config.to_dict(),
        "updates": progress.update,
        "decisions": progress.global_step,
        "wall_seconds": round(progress.wall_seconds, 1),
        "commit": commit,
        "evaluations": progress.history[-1:],
    }


# ------------------------------------------------------------------------------------------------ writing


def save(path: str | os.PathLike, run: Run) -> None:
    """Write the run's state to path atomically (module docstring's layout)."""
    tensors, data = state(run)
    rules = run.config.make_rules().to_dict()
    save_checkpoint(path, run.model.policy, run.network_spec, tensors, deterministic=True, rules=rules, train=data)


def state(run: Run) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(tensors under their names less EXTRA_PREFIX, the "train" object) of a run."""
    tensors = {f"model.{name}": array for name, array in _numpy(run.model.value_head.state_dict(), "value_head.")}
    optimizer = run.optimizer.state_dict()
    for index, entry in optimizer["state"].items():
        tensors.update({f"optimizer.{index}.{key}": value.cpu().numpy() for key, value in entry.items()})
    pool = run.pool
    for k, snapshot in enumerate(pool.snapshots):
        tensors.update({f"pool.{k}.{name}": array for name, array in _numpy(snapshot.state_dict())})
    tensors.update({"pool.wins": pool.wins, "pool.played": pool.played})
    arena_data = None  # in the warm start: no matches dealt yet
    if run.started:
        arena_arrays, arena_data = run.arena.state()
        tensors.update({f"arena.{name}": array for name, array in arena_arrays.items()})
    elif run.cloning is None:
        raise ValueError("a run is saved once started, or in its warm start")
    tensors["rng.generator"] = run.generator.get_state().cpu().numpy()
    data = {
        "config": run.config.to_dict(),
        "progress": asdict(run.progress),
        "device": run.device.type,
        "optimizer": {"param_groups": optimizer["param_groups"]},
        "pool": {"updates": list(pool.updates), "next_slot": pool.next_slot},
        "arena": arena_data,
        "rng": {"numpy": run.rng.bit_generator.state},
        "opponents": pool.digests,
    }
    if not run.started:
        cloning_tensors, data["warmstart"] = cloning_state(run)
        tensors.update(cloning_tensors)
    return tensors, data


def cloning_state(run: Run) -> tuple[dict[str, np.ndarray], dict[str, int]]:
    """(tensors under their names less EXTRA_PREFIX, the "warmstart" record) of a run's cloning where it stands."""
    cloning = run.cloning
    tensors = {
        f"warmstart.optimizer.{index}.{key}": value.cpu().numpy()
        for index, entry in cloning.optimizer.state_dict()["state"].items()
        for key, value in entry.items()
    }
    start = cloning.epoch_start if cloning.epoch_start is not None else run.generator.get_state()
    tensors.update({"warmstart.totals": cloning.totals.cpu().numpy(), "warmstart.generator": start.cpu().numpy()})
    return tensors, {"epoch": cloning.epoch, "batch": cloning.batch}


def _numpy(weights: dict[str, torch.Tensor], prefix: str = "") -> list[tuple[str, np.ndarray]]:
    return [(prefix + name, tensor.detach().cpu().numpy()) for name, tensor in weights.items()]


# ------------------------------------------------------------------------------------------------ reading


def read_config(path: str | os.PathLike) -> tuple[Config, dict[str, Any]]:
    """(config, the "train" object) of a training-state file, from its header alone. The network its metadata names
    must be its config's [model] network, and resolves as a file's: among the networks known, never by importing
    what the file names (`--import MODULE`)."""
    metadata = read_tensor_header(path).metadata
    train = metadata.get("train")
    if not isinstance(train, dict) or "config" not in train:
        raise ValueError(f"{_shown(path)} holds a policy but no training state; resume from a run's last.safetensors")
    try:
        config = config_from_dict(train["config"])
    except ValueError as error:
        raise ValueError(f"{_shown(path)}: the saved config: {error}") from None
    try:
        differ = network_difference(check_network_spec(metadata.get("network")), config.network_spec())
    except ValueError as error:
        differ = str(error)
    if differ:
        raise ValueError(f"{_shown(path)}: the training state is damaged: its network is not its [model]'s: {differ}")
    return config, train


def load(path: str | os.PathLike, run: Run, train: dict[str, Any]) -> None:
    """Restore a run of the file's config from the file (its "train" object already read): every tensor read
    against the run's own dtypes and shapes, every value checked, then restored; ValueError naming the value."""
    try:
        progress = validated(Progress, train.get("progress"), "progress")
        check_progress(progress, run.config)
        snapshots = check_pool_record(train.get("pool"), run.config, progress)
        warm = check_warm_record(train.get("warmstart"), run, progress)
        specs = {EXTRA_PREFIX + name: spec for name, spec in own_specs(run, snapshots, warm).items()}
        adam = (EXTRA_PREFIX + "optimizer.", EXTRA_PREFIX + "warmstart.optimizer.")  # none before the first step
        optional = [name for name in specs if name.startswith(adam)]
        found = read_tensors(path, {**network_tensors(run.network_spec), **specs}, optional=optional)
        check(run, progress, train, found)
        restore(run, progress, train, found, warm)
    except (ValueError, KeyError, TypeError) as error:
        detail = str(error.args[0] if isinstance(error, KeyError) and error.args else error)
        detail = detail.removeprefix(f"{_shown(path)}: ")  # the reader's messages name the file too
        raise ValueError(f"{_shown(path)}: the training state is damaged: {escape_controls(detail)}") from None


def own_specs(run: Run, snapshots: int, warm: dict[str, int] | None = None) -> dict[str, Spec]:
    """The training state's tensors (names less EXTRA_PREFIX) a run of this config holds with `snapshots` snapshots
    and Adam's state of every parameter, its matches or (saved in its warm start: `warm`) its cloning: name ->
    (numpy dtype name, shape). Workers are not started for it (workers.py's `RemoteArena.specs`)."""
    value_head = _numpy(run.model.value_head.state_dict(), "value_head.")
    specs = {f"model.{name}": (a.dtype.name, a.shape) for name, a in value_head}
    specs["rng.generator"] = ("uint8", tuple(run.generator.get_state().shape))
    prefixes = ("optimizer.", "warmstart.optimizer.") if warm is not None else ("optimizer.",)
    for index, parameter in enumerate(run.model.parameters()):
        moment = ("float32", tuple(parameter.shape))
        for prefix in prefixes:
            specs |= {f"{prefix}{index}.exp_avg": moment, f"{prefix}{index}.exp_avg_sq": moment}
            specs[f"{prefix}{index}.step"] = ("float32", ())
    if warm is None:
        specs |= {f"arena.{name}": spec for name, spec in run.arena.specs().items()}
    else:
        specs |= {"warmstart.totals": ("float64", (3,)), "warmstart.generator": specs["rng.generator"]}
    network = network_tensors(run.network_spec)
    for k in range(snapshots):
        specs |= {f"pool.{k}.{name}": spec for name, spec in network.items()}
    size = run.config.selfplay.pool_size
    return specs | {"pool.wins": ("float64", (size,)), "pool.played": ("float64", (size,))}


def _shown(path: str | os.PathLike) -> str:
    return escape_controls(os.fspath(path))


# ------------------------------------------------------------------------------------------------ the checks


def check_progress(progress: Progress, config: Config) -> None:
    """ValueError naming the counter unless the progress fits the config (what its updates could have done)."""
    updates = config.train.updates
    if progress.update > updates:
        raise ValueError(f"progress.update={progress.update}: the run has train.updates={updates}")
    most = config.warmstart.decisions + progress.update * config.env.num_envs * config.ppo.rollout_steps
    if progress.global_step > most:
        raise ValueError(
            f"progress.global_step={progress.global_step}: the warm start and {progress.update} updates train on at "
            f"most {most:,} decisions"
        )
    if len(progress.history) > progress.update:
        raise ValueError(f"progress.history: {len(progress.history)} evaluations in {progress.update} updates")
    if (progress.evaluation_due or progress.finished) and progress.update == 0:
        raise ValueError("progress.evaluation_due, progress.finished: set before the first update")


def check_pool_record(record: Any, config: Config, progress: Progress) -> int:
    """The number of snapshots the saved pool holds (the updates they were taken at, the next slot); ValueError
    naming the value unless it fits selfplay.pool_size and the snapshots the updates done took."""
    if not isinstance(record, dict) or set(record) != {"updates", "next_slot"}:
        raise ValueError("pool: expected the keys 'next_slot' and 'updates'")
    updates, next_slot, s = record["updates"], record["next_slot"], config.selfplay
    taken = progress.update // s.snapshot_every
    if not isinstance(updates, list) or len(updates) > min(s.pool_size, taken):
        count = len(updates) if isinstance(updates, list) else shown_value(updates)
        raise ValueError(f"pool.updates: {count} snapshots; selfplay.pool_size is {s.pool_size} and {taken} were taken")
    for k, update in enumerate(updates):
        if type(update) is not int or not 0 < update <= progress.update or update % s.snapshot_every:
            raise ValueError(f"pool.updates[{k}]={shown_value(update)}: a snapshot update in 1..{progress.update}")
    allowed = range(s.pool_size) if len(updates) == s.pool_size else range(len(updates), len(updates) + 1)
    if type(next_slot) is not int or next_slot not in allowed:
        raise ValueError(f"pool.next_slot={shown_value(next_slot)}: with {len(updates)} snapshots it lies in {allowed}")
    return len(updates)


def check(run: Run, progress: Progress, train: dict[str, Any], found: dict[str, np.ndarray]) -> None:
    """ValueError naming the first value out of its range (module docstring)."""
    for name, array in found.items():
        if _is_weight(name):
            _check_bound(name.removeprefix(EXTRA_PREFIX), array, MAX_WEIGHT)
    wins, played = found[EXTRA_PREFIX + "pool.wins"], found[EXTRA_PREFIX + "pool.played"]
    for name, counts in (("pool.wins", wins), ("pool.played", played)):
        if not (np.isfinite(counts).all() and (counts >= 0).all() and (counts == np.round(counts)).all()):
            raise ValueError(f"{name}: counts are finite whole numbers >= 0")
    if (wins > played).any():
        raise ValueError("pool.wins: more wins than matches played against a snapshot")
    check_optimizer(train.get("optimizer"), found, run, progress)
    if train.get("device") not in DEVICE_TYPES:  # printed when the run resumes on another device
        raise ValueError(f"device={shown_value(train.get('device'))}: expected one of {', '.join(DEVICE_TYPES)}")
    check_opponent_files(train.get("opponents"), run.pool.digests)
    warm = train.get("warmstart")
    if warm is not None:
        check_cloning(warm, found, run)


def check_warm_record(record: Any, run: Run, progress: Progress) -> dict[str, int] | None:
    """The "warmstart" record of a run saved in its warm start (None for a started run's); ValueError naming the
    value unless the config clones, its epoch and minibatch lie within [warmstart], and the progress is a warm
    start's (no update done, no decision counted)."""
    if record is None:
        return None
    if run.cloning is None:
        raise ValueError(
            f"warmstart={shown_value(record)}: this run's config has no cloning to continue (warmstart.init, "
            'teacher "none" or no decisions)'
        )
    if not isinstance(record, dict) or set(record) != {"epoch", "batch"}:
        raise ValueError(f"warmstart={shown_value(record)}: expected the keys 'batch' and 'epoch'")
    w = run.config.warmstart
    for key, high in (("epoch", w.epochs - 1), ("batch", -(-w.decisions // w.minibatch_size) - 1)):
        value = record[key]
        if type(value) is not int or not 0 <= value <= high:
            raise ValueError(f"warmstart.{key}={shown_value(value)}: a warm start's {key} lies in 0..{high}")
    if progress != Progress(wall_seconds=progress.wall_seconds):
        raise ValueError("progress: a run saved in its warm start has done no update and counted no decision")
    return record


def check_cloning(record: dict[str, int], found: dict[str, np.ndarray], run: Run) -> None:
    """ValueError naming the value unless the cloning's Adam has taken the minibatches done (its moments within what
    clipped gradients make) and its totals are what the rows cloned in this epoch can sum to."""
    w = run.config.warmstart
    steps = record["epoch"] * -(-w.decisions // w.minibatch_size) + record["batch"]
    count = len(list(run.model.parameters()))
    prefix = f"{EXTRA_PREFIX}warmstart.optimizer."
    present = [i for i in range(count) if f"{prefix}{i}.step" in found]
    if len(present) != (count if steps else 0):
        raise ValueError(
            f"warmstart.optimizer: Adam's state of {len(present)} of {count} parameters after {steps} minibatches "
            "(every parameter's from the first on)"
        )
    bound = run.config.ppo.max_grad_norm * (1 + ROUNDING)
    for i in present:
        step = float(found[f"{prefix}{i}.step"])
        if step != steps:
            raise ValueError(f"warmstart.optimizer.{i}.step={step:g}: the cloning took {steps} minibatches")
        _check_bound(f"warmstart.optimizer.{i}.exp_avg", found[f"{prefix}{i}.exp_avg"], bound)
        _check_bound(f"warmstart.optimizer.{i}.exp_avg_sq", found[f"{prefix}{i}.exp_avg_sq"], bound**2, 0.0)
    rows = min(w.decisions, record["batch"] * w.minibatch_size)
    totals = found[EXTRA_PREFIX + "warmstart.totals"]
    _check_bound("warmstart.totals", totals, float(np.finfo(np.float64).max), 0.0)
    if totals[2] > rows:
        raise ValueError(f"warmstart.totals: {totals[2]:g} right answers in the {rows} decisions cloned this epoch")


def check_opponent_files(saved: Any, digests: dict[str, str]) -> None:
    """ValueError naming the opponent unless each frozen opponent read from a policy file is read from the file the
    run began against (the SHA-256s `saved`): a run trains against the same opponents, never a changed file."""
    if not isinstance(saved, dict) or set(saved) != set(digests):
        raise ValueError(
            f"opponents={shown_value(saved)}: the run's opponents read from policy files are {sorted(digests)}"
        )
    for spec, digest in digests.items():
        if saved[spec] != digest:
            raise ValueError(
                f"selfplay.opponents {spec!r}: the run began against a file of SHA-256 {shown_value(saved[spec])}; "
                f"it now has {digest}"
            )


def _is_weight(name: str) -> bool:
    """True for a network's weights: the policy's, the value head's (model.*), a snapshot's (pool.<k>.*)."""
    short = name.removeprefix(EXTRA_PREFIX)
    return short == name or short.startswith("model.") or (short.startswith("pool.") and short[5].isdigit())


def _check_bound(name: str, array: np.ndarray, bound: float, low: float | None = None) -> None:
    """ValueError naming the tensor unless its values are finite and within -bound..bound (low..bound)."""
    low = -bound if low is None else low
    if array.size and not (np.isfinite(array).all() and array.min() >= low and array.max() <= bound):
        finite = array[np.isfinite(array)]
        extreme = "non-finite" if finite.size < array.size else f"{finite.min():g}..{finite.max():g}"
        raise ValueError(f"{name}: values must be finite and lie in {low:g}..{bound:g}, found {extreme}")


def check_optimizer(saved: Any, found: dict[str, np.ndarray], run: Run, progress: Progress) -> None:
    """ValueError naming the value unless Adam's saved groups are the run's own (lr within 0..train.lr) and its
    moments and steps are what the updates done can have made (module docstring)."""
    own = run.optimizer.state_dict()["param_groups"]
    groups = saved.get("param_groups") if isinstance(saved, dict) else None
    if not isinstance(groups, list) or len(groups) != len(own):
        raise ValueError(f"optimizer.param_groups: expected a list of {len(own)} groups")
    for k, (group, mine) in enumerate(zip(groups, own, strict=True)):
        _check_group(group, mine, f"optimizer.param_groups[{k}]", run.config.train.lr)
    count = len(list(run.model.parameters()))
    present = [i for i in range(count) if f"{EXTRA_PREFIX}optimizer.{i}.step" in found]
    if len(present) not in (0, count) or bool(present) != (progress.update > 0):
        raise ValueError(
            f"optimizer.state: Adam's state of {len(present)} of {count} parameters after {progress.update} updates "
            "(every parameter's from the first update on)"
        )
    ppo, env = run.config.ppo, run.config.env
    steps = progress.update * ppo.epochs * -(-env.num_envs * ppo.rollout_steps // ppo.minibatch_size)
    bound = ppo.max_grad_norm * (1 + ROUNDING)
    for i in present:
        step = float(found[f"{EXTRA_PREFIX}optimizer.{i}.step"])
        first = float(found[f"{EXTRA_PREFIX}optimizer.{present[0]}.step"])
        if not (step.is_integer() and 1 <= step <= steps) or step != first:
            raise ValueError(
                f"optimizer.{i}.step={step:g}: one whole number of Adam steps for every parameter, 1..{steps:,} "
                f"in {progress.update} updates"
            )
        _check_bound(f"optimizer.{i}.exp_avg", found[f"{EXTRA_PREFIX}optimizer.{i}.exp_avg"], bound)
        _check_bound(f"optimizer.{i}.exp_avg_sq", found[f"{EXTRA_PREFIX}optimizer.{i}.exp_avg_sq"], bound**2, 0.0)


def _check_group(group: Any, own: dict[str, Any], where: str, lr: float) -> None:
    """ValueError naming the key unless a saved Adam group has the run's own settings and an lr in 0..lr."""
    if not isinstance(group, dict) or set(group) != set(own):
        raise ValueError(f"{where}: expected the keys {sorted(own)}")
    value = group["lr"]
    if type(value) not in (int, float) or not 0.0 <= value <= lr:
        raise ValueError(f"{where}.lr={shown_value(value)}: the learning rate lies in 0..train.lr={lr:g}")
    for key, mine in own.items():
        if key != "lr" and _plain(group[key]) != _plain(mine):
            raise ValueError(f"{where}.{key}={shown_value(group[key])}: this run's Adam has {mine!r}")


def _plain(value: Any) -> Any:
    """JSON's form of a value (tuples are lists)."""
    return list(value) if isinstance(value, tuple) else value


# ------------------------------------------------------------------------------------------------ restoring


def restore(
    run: Run, progress: Progress, train: dict[str, Any], found: dict[str, np.ndarray], warm: dict[str, int] | None
) -> None:
    """Put the checked state into the run: its matches last (a remote arena starts its workers for a state checked
    whole), or for a run saved in its warm start (`warm`) its cloning instead."""
    extra = {name.removeprefix(EXTRA_PREFIX): array for name, array in found.items() if name.startswith(EXTRA_PREFIX)}
    policy = {f"policy.{name}": _tensor(array) for name, array in found.items() if not name.startswith(EXTRA_PREFIX)}
    model = {name.removeprefix("model."): _tensor(a) for name, a in extra.items() if name.startswith("model.")}
    run.model.load_state_dict(policy | model)
    own = run.optimizer.state_dict()
    for group, saved in zip(own["param_groups"], train["optimizer"]["param_groups"], strict=True):
        group["lr"] = saved["lr"]
    moments = {}
    for index in range(len(list(run.model.parameters()))):
        if f"optimizer.{index}.step" in extra:
            moments[index] = _weights({key: extra[f"optimizer.{index}.{key}"] for key in ADAM_STATE})
    run.optimizer.load_state_dict({"state": moments, "param_groups": own["param_groups"]})
    restore_pool(run.pool, train["pool"], extra)
    run.progress = progress
    restore_streams(run, train, extra["rng.generator"])
    if warm is None:
        run.cloning = None  # the warm start is done
        run.arena.load_state(_under(extra, "arena."), train["arena"])
    else:
        restore_cloning(run, warm, extra, same_device=train["device"] == run.device.type)


def restore_cloning(run: Run, record: dict[str, int], extra: dict[str, np.ndarray], same_device: bool) -> None:
    """The cloning's Adam, epoch, minibatch and totals; the generator's state at the epoch's start (on another
    device than the file's, the epoch draws its order from the reseeded stream)."""
    cloning = run.cloning
    moments = {}
    for index in range(len(list(run.model.parameters()))):
        if f"warmstart.optimizer.{index}.step" in extra:
            moments[index] = _weights({key: extra[f"warmstart.optimizer.{index}.{key}"] for key in ADAM_STATE})
    own = cloning.optimizer.state_dict()
    cloning.optimizer.load_state_dict({"state": moments, "param_groups": own["param_groups"]})
    cloning.epoch, cloning.batch = record["epoch"], record["batch"]
    cloning.totals = _tensor(extra["warmstart.totals"]).to(cloning.totals.device)
    cloning.epoch_start = _tensor(extra["warmstart.generator"]) if same_device else None


def restore_pool(pool: Any, record: dict[str, Any], extra: dict[str, np.ndarray]) -> None:
    """The pool's snapshots, counts and next slot."""
    weights = [_weights(_under(extra, f"pool.{k}.")) for k in range(len(record["updates"]))]
    pool.restore(weights, record["updates"], extra["pool.wins"], extra["pool.played"], record["next_slot"])


def restore_streams(run: Run, train: dict[str, Any], generator_state: np.ndarray) -> None:
    """The numpy and torch streams; on another device than the file's, the torch stream reseeded (said once)."""
    try:
        rng = np.random.default_rng()
        rng.bit_generator.state = train["rng"]["numpy"]
    except (TypeError, ValueError, KeyError, OverflowError) as error:
        raise ValueError(f"rng.numpy: not the state of numpy's generator ({error})") from None
    run.rng.bit_generator.state = rng.bit_generator.state
    if train["device"] != run.device.type:  # a CPU generator's state does not fit a CUDA one: same run, not bit-exact
        run.generator.manual_seed(run.config.train.seed + run.progress.update)
        print(
            f"resuming on {run.device.type} a run saved on {shown_text(train['device'])}: action samples reseeded",
            file=sys.stderr,
        )
        return
    try:
        run.generator.set_state(torch.from_numpy(generator_state.copy()))
    except RuntimeError as error:
        raise ValueError(f"rng.generator: not the state of a torch generator ({error})") from None


def _under(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {name.removeprefix(prefix): array for name, array in arrays.items() if name.startswith(prefix)}


def _weights(arrays: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {name: _tensor(array) for name, array in arrays.items()}


def _tensor(array: np.ndarray) -> torch.Tensor:
    """A tensor of its own (a file's arrays may be read-only views)."""
    return torch.from_numpy(np.array(array))
