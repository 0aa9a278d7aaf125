"""Training throughput: this project's PPO loop against sb3-contrib's MaskablePPO, in the same process.

    python benchmarks/train.py [--json] [--seconds 60] [--threads 2] [--device cpu|cuda] [--num-envs 256]
    python benchmarks/train.py --smoke          # a few seconds: checks the benchmark runs (CI), figures not meant
    python benchmarks/train.py --workers 1 2    # the same loop with train.workers = K rollout workers on Ray
    python benchmarks/train.py --env-threads 1 2 4 --no-reference   # the loop once per count of kernel threads
    python benchmarks/train.py --compile --no-reference   # eager, then with train.compile = true

`ppo_steps_per_s`: learner decisions per second of the real training loop (the collect and learn of
`hollywood_gin_trainer.run.TrainingRun`'s `update`, ppo.py's one update, configs/default.toml's model and PPO settings;
no warm start, no evaluation), with the split of its time
between the rollout (env, opponents and the policy's forward passes) and the PPO update. `sb3_steps_per_s_N`:
`MaskablePPO("MultiInputPolicy", make_vec_env("HollywoodGin-v1", n_envs=N))` with its default hyperparameters, as
its users run it, for N = 1 and 8. Both use `--threads` torch threads, set deliberately; the ratio is taken against
8 environments. `--workers K ...` runs our loop once per K (K > 1: the rollout on K Ray actors of one CPU and one torch
thread each, hollywood_gin_trainer/workers.py; the learner keeps `--threads`) and adds, per K > 1, its decisions/s, the
rollout and update shares and each worker's rollout-only decisions/s (its rows over its own collect time), the figure
from which a cluster's rollout rate is projected (docs/SCALING.md).

`--env-threads N ...` runs our loop once per N with the rollout's kernels (the engine, the encoder, the heuristic
opponents, the lookahead inputs, the play-outs, the reward credit and GAE) on N threads of this process
(hollywood_gin_env/engine/threads.py; every count plays the same games) and adds, per N, `ppo_steps_per_s_threads_N`
(the whole loop), `rollout_steps_per_s_threads_N` (decisions over the rollout's time alone) and the shares of the time
(`rollout_share_threads_N`, `forward_share_threads_N`, `update_share_threads_N`), the update's own speed
(`update_rows_per_s_threads_N`: rows of every gradient step over the update's seconds, the same whether PPO stops
its epochs early at target_kl or not) and `epochs_per_rollout_threads_N` (those rows over the decisions: how many
epochs the update ran, on average); the plain keys are then the first N's. Without it the kernels use the CPUs
this process may use. `--compile` measures the loop a second time
with `train.compile = true` (the learner's rollout forward passes through torch.compile; hollywood_gin_trainer/
forward.py) on the first count's kernel threads, and adds the `_compiled` figures, `compile_gain` (the whole loop,
compiled over eager) and `compile_rollout_gain` (the rollout alone); `first_update_s` is the first, uncounted update
(which compiles). `--no-reference` skips MaskablePPO (e.g. where sb3-contrib is not installed).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SB3_ENVS = (1, 8)
#: What `--env-threads N` reports per N (as NAME_threads_N).
THREAD_FIGURES = (
    "ppo_steps_per_s",
    "rollout_steps_per_s",
    "rollout_share",
    "forward_share",
    "update_share",
    "update_rows_per_s",
    "epochs_per_rollout",
)
#: What `--compile` reports (as NAME_compiled).
COMPILE_FIGURES = (*THREAD_FIGURES, "first_update_s")


def ours(
    seconds: float,
    threads: int,
    device: str,
    num_envs: int | None,
    smoke: bool,
    workers: int = 1,
    compiled: bool = False,
    env_threads: int | None = None,
) -> dict[str, float]:
    """Run PPO updates of the default recipe for about `seconds`; decisions/s and where the time went."""
    from hollywood_gin_trainer.config import load_config
    from hollywood_gin_trainer.run import TrainingRun, resolve_device

    overrides = [
        "warmstart.teacher='none'",
        "warmstart.teacher_weights=[]",
        f"train.torch_threads={threads}",
        f"train.workers={workers}",
        f"train.compile={str(compiled).lower()}",
    ]
    if num_envs:
        overrides.append(f"env.num_envs={num_envs}")
    if env_threads is not None:
        overrides.append(f"train.env_threads={env_threads}")
    if smoke:
        overrides += ["env.num_envs=16", "ppo.rollout_steps=8", "ppo.minibatch_size=64"]
    run = TrainingRun.create(load_config(str(ROOT / "configs/default.toml"), overrides), resolve_device(device))
    run.start()
    totals = {
        "rollout": 0.0,
        "forward": 0.0,
        "update": 0.0,
        "decisions": 0,
        "rows_trained": 0.0,
        "worker_rows": 0,
        "worker_s": 0.0,
    }
    update, started, began = 0, None, time.perf_counter()
    while True:
        update += 1
        figures = run.update(update)
        if update == 1:  # warms the caches and the kernels (and compiles, with train.compile); not counted
            started = time.perf_counter()
            first = started - began
            continue
        totals["rollout"] += figures["time/rollout_s"]
        totals["forward"] += figures["time/forward_s"]
        totals["update"] += figures["time/update_s"]
        totals["decisions"] += figures["charts/decisions"]
        totals["rows_trained"] += figures["charts/rows_trained"]
        if workers > 1:
            totals["worker_rows"] += sum(run.arena.worker_rows)
            totals["worker_s"] += sum(run.arena.worker_seconds)
        if time.perf_counter() - started >= seconds:
            break
    total = totals["rollout"] + totals["update"]
    if workers > 1:
        run.close()
        return {
            "ppo_steps_per_s": totals["decisions"] / total,
            "ppo_updates": update - 1,
            "rollout_share": totals["rollout"] / total,
            "update_share": totals["update"] / total,
            "worker_rollout_steps_per_s": totals["worker_rows"] / totals["worker_s"],
        }
    return {
        "ppo_steps_per_s": totals["decisions"] / total,
        "ppo_seconds": total,
        "ppo_updates": update - 1,
        "first_update_s": first,
        "num_envs": run.config.env.num_envs,
        "rollout_share": totals["rollout"] / total,
        "rollout_steps_per_s": totals["decisions"] / totals["rollout"],
        "forward_share": totals["forward"] / total,
        "env_and_opponents_share": (totals["rollout"] - totals["forward"]) / total,
        "update_share": totals["update"] / total,
        "update_rows_per_s": totals["rows_trained"] / totals["update"],
        "epochs_per_rollout": totals["rows_trained"] / totals["decisions"],
    }


def sb3(seconds: float, n_envs: int, smoke: bool) -> dict[str, float]:
    """MaskablePPO's defaults on make_vec_env with n_envs environments, learning for about `seconds`."""
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    import hollywood_gin_env  # noqa: F401  (registers HollywoodGin-v1)

    vec_env = make_vec_env("HollywoodGin-v1", n_envs=n_envs, seed=0)
    kwargs = {"n_steps": 16, "batch_size": 16} if smoke else {}
    model = MaskablePPO("MultiInputPolicy", vec_env, seed=0, verbose=0, device="cpu", **kwargs)
    chunk = model.n_steps * n_envs
    model.learn(chunk)  # warm-up: first compile of the env, first update
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        model.learn(chunk, reset_num_timesteps=False)
        steps += chunk
    elapsed = time.perf_counter() - started
    return {f"sb3_steps_per_s_{n_envs}": steps / elapsed, f"sb3_seconds_{n_envs}": elapsed}


def main(argv: list[str] | None = None) -> int:
    """Run both and print the figures (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds of training each (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads (default: %(default)s)")
    parser.add_argument("--device", default="cpu", help="the learner's device, cpu or cuda (default: %(default)s)")
    parser.add_argument("--num-envs", type=int, default=None, help="matches at once (default: the recipe's, 256)")
    parser.add_argument("--smoke", action="store_true", help="a few seconds on tiny sizes (CI): figures not meant")
    parser.add_argument(
        "--env-threads",
        type=int,
        nargs="+",
        default=[],
        metavar="N",
        help="kernel threads of the rollout, one measurement per N (default: one run on the CPUs it may use)",
    )
    parser.add_argument("--no-reference", action="store_true", help="skip MaskablePPO (needs sb3-contrib)")
    parser.add_argument(
        "--compile",
        action="store_true",
        help="measure our loop again with train.compile = true (after the eager one, same thread count)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        nargs="+",
        default=[1],
        metavar="K",
        help="rollout workers, one measurement per K (1 is always run; K > 1 needs [ray])",
    )
    args = parser.parse_args(argv)
    import torch

    from hollywood_gin_env.engine.threads import check_num_threads

    torch.set_num_threads(args.threads)
    seconds = 0.5 if args.smoke else args.seconds
    if min(args.workers) < 1:
        parser.error(f"--workers {' '.join(map(str, args.workers))}: each K must be at least 1")
    try:
        counts = [check_num_threads(n, "--env-threads") for n in args.env_threads]
    except ValueError as error:
        parser.error(str(error))
    result: dict = {"threads": args.threads, "device": args.device, "compile": args.compile}
    for n in counts:  # every env, agent and policy the run builds takes n kernel threads
        figures = ours(seconds, args.threads, args.device, args.num_envs, args.smoke, env_threads=n)
        result.update({f"{name}_threads_{n}": figures[name] for name in THREAD_FIGURES})
        result.update({"env_threads": n, **figures} if n == counts[0] else {})  # the plain keys: the first count's
    if not counts:
        result.update(ours(seconds, args.threads, args.device, args.num_envs, args.smoke))
    if args.compile:  # on the first count's kernel threads, against the eager figures above
        first = counts[0] if counts else None
        figures = ours(seconds, args.threads, args.device, args.num_envs, args.smoke, compiled=True, env_threads=first)
        result.update({f"{name}_compiled": figures[name] for name in COMPILE_FIGURES})
        result["compile_gain"] = figures["ppo_steps_per_s"] / result["ppo_steps_per_s"]
        result["compile_rollout_gain"] = figures["rollout_steps_per_s"] / result["rollout_steps_per_s"]
    for k in sorted(set(args.workers) - {1}):
        figures = ours(seconds, args.threads, args.device, args.num_envs, args.smoke, workers=k)
        result.update({f"{name}_workers_{k}": value for name, value in figures.items()})
    if not args.no_reference:
        for n in SB3_ENVS:
            result.update(sb3(seconds, n, args.smoke))
        result["ratio"] = result["ppo_steps_per_s"] / result[f"sb3_steps_per_s_{SB3_ENVS[-1]}"]
    if args.json:
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in result.items()}))
    else:
        print_figures(result, args, counts)
    return 0


def print_figures(result: dict, args: argparse.Namespace, counts: list[int]) -> None:
    """The figures as lines of text."""
    print(
        f"this project's PPO ({result['num_envs']} matches, {args.device}, {args.threads} threads): "
        f"{result['ppo_steps_per_s']:,.0f} decisions/s (rollout {result['rollout_share']:.0%}, of which policy "
        f"forward {result['forward_share']:.0%}; update {result['update_share']:.0%}); rollout alone: "
        f"{result['rollout_steps_per_s']:,.0f} decisions/s"
    )
    for n in counts:
        figure = {name: result[f"{name}_threads_{n}"] for name in THREAD_FIGURES}
        print(
            f"  {n} env threads: {figure['ppo_steps_per_s']:,.0f} decisions/s, rollout alone "
            f"{figure['rollout_steps_per_s']:,.0f} (rollout {figure['rollout_share']:.0%}, of which forward "
            f"{figure['forward_share']:.0%}; update {figure['update_share']:.0%}, {figure['update_rows_per_s']:,.0f} "
            f"rows/s, {figure['epochs_per_rollout']:.2f} epochs a rollout)"
        )
    if args.compile:
        print(
            f"  compiled (train.compile = true): {result['ppo_steps_per_s_compiled']:,.0f} decisions/s "
            f"({result['compile_gain']:.2f}x eager), rollout alone {result['rollout_steps_per_s_compiled']:,.0f} "
            f"({result['compile_rollout_gain']:.2f}x; forward {result['forward_share_compiled']:.0%} of the loop); "
            f"first update {result['first_update_s_compiled']:.0f} s against {result['first_update_s']:.0f} s eager "
            "(the compiling)"
        )
    if not args.no_reference:
        for n in SB3_ENVS:
            print(f"sb3-contrib MaskablePPO, make_vec_env n_envs={n}: {result[f'sb3_steps_per_s_{n}']:,.0f} steps/s")
    for k in sorted(set(args.workers) - {1}):
        print(
            f"this project's PPO with {k} Ray rollout workers: {result[f'ppo_steps_per_s_workers_{k}']:,.0f} "
            f"decisions/s (rollout {result[f'rollout_share_workers_{k}']:.0%}, update "
            f"{result[f'update_share_workers_{k}']:.0%}); rollout alone, per worker: "
            f"{result[f'worker_rollout_steps_per_s_workers_{k}']:,.0f} decisions/s"
        )
    if not args.no_reference:
        print(f"ratio against {SB3_ENVS[-1]} environments: {result['ratio']:.1f}x (target >= 6)")


if __name__ == "__main__":
    raise SystemExit(main())
