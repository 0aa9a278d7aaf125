"""Paired A/B of this checkout against another: the same workload in two processes at once, on one core.

    python benchmarks/paired.py --against ../hollywood-gin-old          # VectorEnv, single env, engine: 3 pairs each
    python benchmarks/paired.py --against ../hollywood-gin-old --workloads vector --pairs 6
    python benchmarks/paired.py                                         # this checkout against itself: the noise

Sequential runs of one checkout spread by ±5–8% on a shared 2-vCPU machine, more than the differences worth
finding. Two processes pinned to the same core share its caches, its clock and whatever else the machine runs, so
drift moves both alike; each counts its own CPU time (`time.process_time`) and keeps its best burst. The figure is
the ratio this / other of each pair; its spread across pairs (and against the checkout itself) is the noise.

The workloads use only what every version of the package offers: `gymnasium.make_vec(..., "vector_entry_point")`
with 1024 matches, `gymnasium.make` with one, and `hollywood_gin_env.Engine` with 4096, each in random legal play
picked by this file's own sampler, so both sides pay the same for the picking. Both sides run one kernel thread.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
WORKLOADS = ("vector", "single", "engine")
#: (units of one burst's step, steps per burst) for each workload: a burst takes about 0.2 s alone.
BURSTS = {"vector": (1024, 200), "single": (1, 10_000), "engine": (4096, 40)}


def child(workload: str, bursts: int, cpu: int, smoke: bool) -> float:
    """Units per CPU-second of `workload` in the hollywood_gin_env that sys.path finds (best burst)."""
    os.environ["NUMBA_NUM_THREADS"] = "1"
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {cpu})
    import random

    import gymnasium as gym
    import numba
    import numpy as np

    import hollywood_gin_env

    @numba.njit
    def pick_legal(masks, states, out):
        """A uniform legal action per row from row i's own xorshift stream (the same cost on both sides)."""
        for i in range(masks.shape[0]):
            x = states[i]
            x ^= x << np.uint64(13)
            x ^= x >> np.uint64(7)
            x ^= x << np.uint64(17)
            states[i] = x
            count = 0
            for a in range(masks.shape[1]):
                count += masks[i, a] != 0
            k = int(x % np.uint64(max(count, 1)))
            for a in range(masks.shape[1]):
                if masks[i, a] != 0:
                    if k == 0:
                        out[i] = a
                        break
                    k -= 1

    width, steps = BURSTS[workload]
    steps = max(1, steps // 20) if smoke else steps
    states = np.arange(1, width + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    actions = np.zeros(width, dtype=np.int64)
    if workload == "vector":
        env = gym.make_vec("HollywoodGin-v1", num_envs=width, vectorization_mode="vector_entry_point")
        obs, _ = env.reset(seed=0)

        def burst() -> None:
            nonlocal obs
            for _ in range(steps):
                pick_legal(obs["action_mask"], states, actions)
                obs, _, _, _, _ = env.step(actions)

    elif workload == "single":
        env = gym.make("HollywoodGin-v1")
        obs, _ = env.reset(seed=0)
        choose = random.Random(0).randrange

        def burst() -> None:
            nonlocal obs
            for _ in range(steps):
                legal = np.flatnonzero(obs["action_mask"])
                obs, _, terminated, truncated, _ = env.step(legal[choose(len(legal))])
                if terminated or truncated:
                    obs, _ = env.reset()

    else:
        # the package exports Engine; checkouts before the layered folders kept it in hollywood_gin_env.engine
        engine_class = (
            getattr(hollywood_gin_env, "Engine", None) or importlib.import_module("hollywood_gin_env.engine").Engine
        )
        engine = engine_class(width)
        engine.new_matches(seeds=np.arange(width, dtype=np.uint64))

        def burst() -> None:
            for _ in range(steps):
                pick_legal(engine.legal_mask, states, actions)
                engine.step(actions)
                if engine.done_now.any():
                    engine.new_matches(selected=engine.done)

    burst()  # compile or load from cache, warm up
    best = float("inf")
    for _ in range(bursts):
        start = time.process_time()
        burst()
        best = min(best, time.process_time() - start)
    return width * steps / max(best, 1e-9)


def pair(workload: str, other: Path, bursts: int, cpu: int, smoke: bool, ours_first: bool) -> tuple[float, float]:
    """(ours, other's) units/s of one pair: both children started together, pinned to `cpu`."""
    sides = {"ours": HERE.parents[1], "other": other}
    order = ["ours", "other"] if ours_first else ["other", "ours"]
    procs = {}
    for side in order:
        env = {**os.environ, "PYTHONPATH": str(sides[side]), "NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        command = [sys.executable, str(HERE), "--child", workload, "--bursts", str(bursts), "--cpu", str(cpu)]
        procs[side] = subprocess.Popen(
            command + (["--smoke"] if smoke else []), cwd=sides[side], env=env, stdout=subprocess.PIPE, text=True
        )
    rates = {}
    for side, proc in procs.items():
        out, _ = proc.communicate(timeout=900)
        if proc.returncode != 0:
            raise SystemExit(f"the {side} side ({sides[side]}) failed on {workload} with exit code {proc.returncode}")
        rates[side] = float(out.strip().splitlines()[-1])
    return rates["ours"], rates["other"]


def main(argv: list[str] | None = None) -> int:
    """Run the pairs and print a table (and JSON with --json)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, help="the other checkout's root (default: this checkout)")
    parser.add_argument("--workloads", nargs="+", choices=WORKLOADS, default=list(WORKLOADS))
    parser.add_argument("--pairs", type=int, default=3, help="pairs per workload (default 3)")
    parser.add_argument("--bursts", type=int, default=30, help="bursts per side of a pair, best kept (default 30)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON last")
    parser.add_argument("--smoke", action="store_true", help="one short pair per workload against this checkout")
    parser.add_argument("--child", choices=WORKLOADS, help=argparse.SUPPRESS)
    parser.add_argument("--cpu", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    if args.child:
        print(child(args.child, args.bursts, cpu, args.smoke))
        return 0
    other = (args.against or HERE.parents[1]).resolve()
    if not (other / "hollywood_gin_env" / "__init__.py").is_file():
        parser.error(f"--against {other}: no hollywood_gin_env package there (give a checkout's root folder)")
    pairs, bursts = (1, 2) if args.smoke else (args.pairs, args.bursts)
    print(f"this checkout ({HERE.parents[1]}) / {other}, pinned together to CPU {cpu}, one kernel thread each")
    figures: dict[str, float] = {}
    for workload in args.workloads:
        results = [pair(workload, other, bursts, cpu, args.smoke, ours_first=k % 2 == 0) for k in range(pairs)]
        ratios = [ours / theirs for ours, theirs in results]
        ours, theirs = statistics.median(r[0] for r in results), statistics.median(r[1] for r in results)
        shown, middle = ", ".join(f"{r:.3f}" for r in ratios), statistics.median(ratios)
        print(f"{workload:7s} ours {ours:12,.0f}/s  other {theirs:12,.0f}/s  ratios {shown}  median {middle:.3f}")
        figures[f"{workload}_ratio"] = round(middle, 4)
        figures[f"{workload}_ours_per_s"] = round(ours)
        figures[f"{workload}_other_per_s"] = round(theirs)
    if args.json:
        print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
