"""A fingerprint of the shipped recipe: SHA-256 hashes of a scaled-down `configs/default.toml` run.

    PYTHONPATH=. python scripts/recipe_fingerprint.py            # about a minute or two on a 2-core machine
    PYTHONPATH=. python scripts/recipe_fingerprint.py --tiny     # a few seconds: the smoke test's size
    PYTHONPATH=. python scripts/recipe_fingerprint.py --env-threads 2   # the same hashes on 2 kernel threads
    PYTHONPATH=. python scripts/recipe_fingerprint.py --compile  # train.compile (other roundings: other hashes)

The run keeps every mechanism of the recipe on (the warm start on the re-weighted `expert`, the lookahead features,
the privileged critic with its play-out, the opponent pool with its snapshots and heuristics, the evaluations) and
shrinks only its sizes (updates, matches, rollout steps, teacher decisions, evaluation matches); it is seeded, runs
on one torch thread and `--env-threads` kernel threads (default 1; every count gives the same hashes: the rollout's
kernels split the matches into slices, hollywood_gin_env/engine/threads.py), in a temporary run directory, through
`hollywood_gin_trainer.run.TrainingRun` in train.py's order of steps.
It prints the hashes of the final weights, the optimizer's state, every warm-start epoch's and PPO update's losses,
the evaluation results, and of all of them together: a change to the trainer that must not change what it trains
(a refactoring, a deleted option) keeps every hash.
"""

from __future__ import annotations

import argparse
import hashlib
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hollywood_gin_env.evaluation.evaluate import without_timing
from hollywood_gin_trainer.config import Config, load_config
from hollywood_gin_trainer.run import TrainingRun
from hollywood_gin_trainer.trainstate import read_training_file

RECIPE = Path(__file__).resolve().parent.parent / "configs" / "default.toml"
#: The recipe's sizes, scaled down; every mechanism stays on.
SCALED = [
    "train.updates=8",
    "train.torch_threads=1",
    "train.max_minutes=0",
    "env.num_envs=64",
    "ppo.rollout_steps=64",
    "ppo.minibatch_size=1024",
    "warmstart.decisions=20000",
    "warmstart.epochs=2",
    "warmstart.minibatch_size=512",
    "selfplay.snapshot_every=2",
    "eval.every=4",
    "eval.matches=20",
]
#: Smaller still, with a narrower network: for the smoke test.
TINY = [
    *SCALED,
    "train.updates=2",
    "env.num_envs=8",
    "ppo.rollout_steps=16",
    "ppo.minibatch_size=64",
    "model.hidden_sizes=[32]",
    "model.card_channels=8",
    "warmstart.decisions=256",
    "warmstart.epochs=1",
    "warmstart.minibatch_size=128",
    "selfplay.snapshot_every=1",
    "eval.every=2",
    "eval.matches=2",
]
#: The losses fingerprinted: what the recipe's warm start and PPO update report.
WARM_KEYS = ("policy_loss", "value_loss", "accuracy")
PPO_KEYS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance", "early_stop")
PARTS = ("weights", "optimizer", "losses", "evaluations")


def fingerprint_config(tiny: bool = False, env_threads: int = 1, compiled: bool = False) -> Config:
    """The scaled-down recipe (configs/default.toml with SCALED, or TINY, applied) on `env_threads` kernel threads,
    with train.compile as given."""
    options = [
        f"train.env_threads={env_threads}",
        f"train.compile={str(compiled).lower()}",
    ]
    return load_config(str(RECIPE), [*(TINY if tiny else SCALED), *options])


def _feed(digest: Any, value: Any) -> None:
    """Feed a canonical encoding of value (dicts in key order, tensors and arrays as dtype, shape and bytes)."""
    if isinstance(value, dict):
        digest.update(b"{%d" % len(value))
        for key in sorted(value, key=str):
            _feed(digest, str(key))
            _feed(digest, value[key])
    elif isinstance(value, (list, tuple)):
        digest.update(b"[%d" % len(value))
        for item in value:
            _feed(digest, item)
    elif isinstance(value, torch.Tensor):
        _feed(digest, value.detach().cpu().numpy())
    elif isinstance(value, np.ndarray):
        digest.update(f"a{value.dtype.str}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, float):
        digest.update(b"f" + struct.pack("<d", value))
    else:
        digest.update(f"{type(value).__name__}:{value!r};".encode())


def sha256(value: Any) -> str:
    """The SHA-256 of value's canonical encoding (`_feed`)."""
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.hexdigest()


def run_recipe(config: Config, run_dir: Path) -> dict[str, Any]:
    """Train `config` in run_dir in train.py's order of steps; the final last.pt's model and optimizer states, the
    losses (warm-start epochs, then PPO updates) and every evaluation's results."""
    losses: list[dict[str, float]] = []
    evaluations: list[dict[str, Any]] = []
    last = run_dir / "last.pt"
    run = TrainingRun.create(config)
    try:
        run.start(log=lambda epoch, stats: losses.append({key: stats[key] for key in WARM_KEYS}))
        run.save(last)
        for update in range(1, config.train.updates + 1):
            _, ent_coef = run.schedule(update)
            stats = run.learn(run.collect(), ent_coef)
            losses.append({key: stats[key] for key in PPO_KEYS})
            run.progress.update = update
            run.snapshot(update)
            if update % config.eval.every == 0 or update == config.train.updates:
                run.save(last)
                results = run.evaluate()  # less the times, the figures no seed fixes
                evaluations.append({name: without_timing(summary) for name, summary in results.items()})
                run.save(last)
        print(f"snapshot matches played: {int(run.pool.played.sum())}", file=sys.stderr)
    finally:
        run.close()
    saved = read_training_file(last)["train"]
    return {"weights": saved["model"], "optimizer": saved["optimizer"], "losses": losses, "evaluations": evaluations}


def fingerprint(tiny: bool = False, env_threads: int = 1, compiled: bool = False) -> dict[str, str]:
    """The hashes of each part of a scaled-down recipe run (PARTS) and of all of them together ("combined")."""
    with tempfile.TemporaryDirectory(prefix="recipe-fingerprint-") as folder:
        results = run_recipe(fingerprint_config(tiny, env_threads, compiled), Path(folder))
    hashes = {part: sha256(results[part]) for part in PARTS}
    hashes["combined"] = sha256([hashes[part] for part in PARTS])
    return hashes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tiny", action="store_true", help="the smoke test's smaller run (a few seconds)")
    parser.add_argument(
        "--env-threads", type=int, default=1, metavar="N", help="the rollout's kernel threads (default 1; 1..1024)"
    )
    parser.add_argument("--compile", action="store_true", help="train.compile=true (a compiled rollout forward)")
    args = parser.parse_args(argv)
    try:  # refuses a bad count by name, before any work
        config = fingerprint_config(args.tiny, args.env_threads, args.compile)
    except ValueError as error:
        parser.error(str(error))
    for part, value in fingerprint(args.tiny, config.train.env_threads, args.compile).items():
        print(f"{part:12s} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
