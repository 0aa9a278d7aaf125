"""Train a Hollywood Gin policy by self-play: a behaviour-cloning warm start, then PPO against an opponent pool.

    python train.py                                    # configs/default.toml: the recipe of the shipped bot
    python train.py --config configs/quick.toml        # about 5 minutes on 2 cores
    python train.py --set train.lr=1e-4 --seed 3 --run-dir runs/try
    python train.py --resume runs/try                  # continue from runs/try/last.pt

Logs go to TensorBoard (`tensorboard --logdir runs`); the run directory gets config.toml, last.pt (every evaluation
and on Ctrl-C), best.pt (best lower 95% bound against the first eval opponent) and policy.pt (the final policy).
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # the engine is single-threaded; keep numba from spawning a pool

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from agents.arena import Arena
from agents.config import Config, load_config, to_toml
from agents.pool import OpponentPool
from agents.ppo import ActorCritic, Batch, ppo_update
from agents.rollout import RolloutStorage
from agents.tblog import log_evaluation, log_hparams, log_scalars
from agents.trainstate import Progress, load_training, policy_metadata, restore_rng, save_training
from agents.warmstart import clone, collect_teacher
from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.agents.policy import PolicyAgent, save_checkpoint
from hollywood_gin_env.atomic import atomic_write_text
from hollywood_gin_env.evaluate import play_pair, summarize_pair
from hollywood_gin_env.observation import OBS_SIZE
from hollywood_gin_env.state import NUM_ACTIONS


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/default.toml", help="TOML config (default: %(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override a config field, e.g. --set train.lr=1e-4 (repeatable)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=None, help="shorthand for --set train.seed=N")
    parser.add_argument("--run-dir", default=None, help="output folder (default: runs/<config>-seed<N>-<time>)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"), help="torch device (default: cpu)")
    parser.add_argument("--resume", default=None, metavar="RUN_DIR|PATH", help="continue a run from its last.pt")
    parser.add_argument("--stop-after", type=int, default=None, metavar="UPDATES",
                        help="save last.pt and stop after this many more updates (as Ctrl-C does)")  # fmt: skip
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser.parse_args(argv)


def git_commit() -> str:
    """The commit the code runs at ("+dirty" with uncommitted changes), or "unknown"."""
    try:
        here = Path(__file__).parent
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
        return head.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def evaluate(model: ActorCritic, config: Config) -> dict[str, dict]:
    """Duplicate-deal matches of the greedy policy against each eval opponent (hollywood_gin_env.evaluate)."""
    agent = PolicyAgent(model.policy, deterministic=True, name="learner")
    results = {}
    for name in config.eval.opponents:
        record = play_pair(agent, load_agent(name), config.eval.matches, seed=config.eval.seed,
                           rules=config.make_rules())  # fmt: skip
        results[name] = summarize_pair(record)
    model.train()
    return results


class Interrupt:
    """Ctrl-C asks the loop to save last.pt and stop after the current update; a second Ctrl-C stops at once."""

    def __init__(self) -> None:
        self.requested = False
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nCtrl-C: saving last.pt after this update (Ctrl-C again to stop at once)", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:  # noqa: C901 - the script reads top to bottom, like CleanRL's
    args = parse_args(argv)
    interrupt = Interrupt()
    try:
        if args.resume:
            config, saved = load_training(args.resume)
            run_dir = Path(args.resume if os.path.isdir(args.resume) else os.path.dirname(args.resume) or ".")
        else:
            seed_override = [f"train.seed={args.seed}"] if args.seed is not None else []
            config, saved = load_config(args.config, args.set + seed_override), None
    except (ValueError, FileNotFoundError) as error:
        raise SystemExit(f"train.py: error: {error}") from None
    if not args.resume:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = Path(args.run_dir or f"runs/{Path(args.config).stem}-seed{config.train.seed}-{stamp}")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: torch sees no CUDA device; use --device cpu")
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / "config.toml", to_toml(config))

    # Threads and seeds: one block, so that the same seed gives the same run.
    torch.set_num_threads(config.train.torch_threads)
    seed = config.train.seed
    np.random.seed(seed)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    generator = torch.Generator().manual_seed(seed)
    device = torch.device(args.device)
    rules = config.make_rules()

    model = ActorCritic(config.policy_config())
    optimizer = torch.optim.Adam(model.parameters(), lr=config.train.lr, eps=1e-5)
    pool = OpponentPool(config.selfplay, config.policy_config())
    arena = Arena(config.env.num_envs, rules, config.env.reward, config.env.match_bonus, pool, config.env.episode)
    progress = Progress()
    commit = git_commit()
    # purge what a crashed run logged after its last checkpoint, so TensorBoard has no duplicate steps
    writer = SummaryWriter(str(run_dir), purge_step=saved["progress"]["global_step"] + 1 if saved else None)
    started = time.perf_counter()

    if saved:
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        pool.load_state_dict(saved["pool"])
        arena.load_state_dict(saved["arena"])
        progress = Progress(**saved["progress"])
        restore_rng(saved["rng"], rng, generator)
        print(f"resuming {run_dir} at update {progress.update}/{config.train.updates}", file=sys.stderr)
    else:
        print(f"run directory: {run_dir}", file=sys.stderr)
        if config.warmstart.teacher != "none" and config.warmstart.decisions > 0:
            progress.global_step = warm_start(model, config, rng, generator, writer)
        arena.reset(seed=seed, rng=rng)
        progress.wall_seconds = time.perf_counter() - started
        save_training(run_dir / "last.pt", config, progress, model, optimizer, pool, arena, rng, generator)

    model.to(device)
    storage = RolloutStorage(config.ppo.rollout_steps, config.env.num_envs, OBS_SIZE, NUM_ACTIONS)
    updates, first_update = config.train.updates, progress.update
    stop_at = updates if args.stop_after is None else min(updates, first_update + args.stop_after)
    bar = tqdm(total=updates, initial=first_update, disable=args.no_progress, desc="updates", dynamic_ncols=True)
    session_start, session_wall = time.perf_counter(), progress.wall_seconds
    postfix: dict[str, str] = {}
    for update in range(first_update + 1, stop_at + 1):
        frac = (update - 1) / max(updates - 1, 1)
        lr = config.train.lr * (1.0 - (update - 1) / updates) if config.train.anneal_lr else config.train.lr
        for group in optimizer.param_groups:
            group["lr"] = lr
        ent_coef = config.ppo.ent_coef + (config.ppo.ent_coef_final - config.ppo.ent_coef) * frac

        t0 = time.perf_counter()
        arena.stats.clear()
        arena.collect(storage, model, generator, rng)
        advantages = storage.advantages(config.ppo.gamma, config.ppo.gae_lambda)
        valid = storage.valid
        batch = Batch(*(torch.from_numpy(np.ascontiguousarray(a[valid])) for a in (
            storage.obs, storage.masks, storage.actions, storage.logprobs, storage.values)),
            advantages=torch.from_numpy(advantages[valid]),
            returns=torch.from_numpy(advantages[valid] + storage.values[valid]))  # fmt: skip
        t1 = time.perf_counter()
        losses = ppo_update(model, optimizer, batch, config.ppo, ent_coef, generator)
        t2 = time.perf_counter()

        progress.update = update
        progress.global_step += len(batch)
        progress.wall_seconds = session_wall + time.perf_counter() - session_start
        sps = len(batch) / (t2 - t0)
        times = {
            "rollout_s": t1 - t0,
            "forward_s": arena.forward_s,
            "update_s": t2 - t1,
            "wall_s": progress.wall_seconds,
        }
        log_scalars(writer, progress.global_step, update, lr, ent_coef, sps, times, losses, arena.stats.summary(), pool)
        if update % config.selfplay.snapshot_every == 0:
            pool.add(model.policy, update)
        out_of_time = 0 < config.train.max_minutes * 60 <= progress.wall_seconds
        last = update == updates or out_of_time
        if (config.eval.every and update % config.eval.every == 0) or last:
            results = evaluate(model, config)
            improved = log_evaluation(writer, progress, results, config.eval.opponents[0])
            meta = policy_metadata(config, progress, commit)
            if improved:
                save_checkpoint(run_dir / "best.pt", model.policy, config.policy_config(), **meta)
            save_training(run_dir / "last.pt", config, progress, model, optimizer, pool, arena, rng, generator)
            postfix.update({f"vs_{k}": f"{v['match_win_rate']:.0%}" for k, v in results.items()})
        postfix["decisions/s"] = f"{sps:,.0f}"
        bar.set_postfix(postfix, refresh=False)
        bar.update(1)
        if out_of_time:
            print(f"train.max_minutes = {config.train.max_minutes} reached at update {update}/{updates}: stopping",
                  file=sys.stderr)  # fmt: skip
            break
        if interrupt.requested or (update == stop_at and not last):
            save_training(run_dir / "last.pt", config, progress, model, optimizer, pool, arena, rng, generator)
            bar.close()
            writer.close()
            print(f"stopped at update {update}/{updates}; saved {run_dir / 'last.pt'}\n"
                  f"resume with: python train.py --resume {run_dir}", file=sys.stderr)  # fmt: skip
            return 0
    bar.close()
    save_checkpoint(run_dir / "policy.pt", model.policy, config.policy_config(),
                    **policy_metadata(config, progress, commit))  # fmt: skip
    log_hparams(writer, config, progress)
    writer.close()
    final = progress.history[-1] if progress.history else {}
    print(
        f"done: {progress.update} updates, {progress.global_step:,} decisions, {progress.wall_seconds / 60:.1f} "
        f"min; final {final}; policy: {run_dir / 'policy.pt'}, best: {run_dir / 'best.pt'}",
        file=sys.stderr,
    )
    return 0


def warm_start(model: ActorCritic, config: Config, rng: np.random.Generator, generator: torch.Generator,
               writer: SummaryWriter) -> int:  # fmt: skip
    """Behaviour cloning on the teacher (agents/warmstart.py); returns the decisions it trained on."""
    t0 = time.perf_counter()
    data = collect_teacher(config, rng)
    seconds = time.perf_counter() - t0
    print(f"warm start: {len(data['actions']):,} {config.warmstart.teacher} decisions in {seconds:.0f} s",
          file=sys.stderr)  # fmt: skip

    def log(epoch: int, stats: dict[str, float]) -> None:
        for key, value in stats.items():
            writer.add_scalar(f"warmstart/{key}", value, epoch + 1)
        print(f"warm start epoch {epoch + 1}: {stats}", file=sys.stderr)

    clone(model, data, config, generator, log)
    writer.add_scalar("time/warmstart_s", time.perf_counter() - t0, 0)
    return len(data["actions"])


if __name__ == "__main__":
    raise SystemExit(main())
