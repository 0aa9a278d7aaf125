"""Training throughput: this project's PPO loop against sb3-contrib's MaskablePPO, in the same process.

    python benchmarks/train.py [--json] [--seconds 60] [--threads 2]

`ppo_steps_per_s`: learner decisions per second of the real training loop (train.py's rollout and PPO update on
configs/default.toml's model and PPO settings; no warm start, no evaluation), from the run's own TensorBoard
figures, with the split between rollout (env, opponents and the policy's forward passes) and update.
`sb3_steps_per_s`: `MaskablePPO("MultiInputPolicy", gymnasium.make("HollywoodGin-v1"))` with its default settings,
learning for about as long. Both use `--threads` torch threads (default: the machine's cores), set deliberately.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def ours(seconds: float, threads: int) -> dict[str, float]:
    """Run train.py for about `seconds` of PPO updates; decisions/s and where the time went."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    import train

    def run(updates: int, folder: str) -> dict[str, list[float]]:
        train.main(["--config", str(ROOT / "configs/default.toml"), "--run-dir", folder, "--no-progress",
                    "--set", "warmstart.teacher='none'", "--set", "eval.every=0", "--set", "eval.matches=2",
                    "--set", f"train.updates={updates}", "--set", f"train.torch_threads={threads}"])  # fmt: skip
        events = EventAccumulator(folder)
        events.Reload()
        tags = ("charts/SPS", "time/rollout_s", "time/forward_s", "time/update_s")
        return {tag: [e.value for e in events.Scalars(tag)] for tag in tags}

    with tempfile.TemporaryDirectory() as folder:
        probe = run(2, os.path.join(folder, "probe"))  # warms the caches and sizes the real run
        per_update = sum(probe["time/rollout_s"]) / 2 + sum(probe["time/update_s"]) / 2
        figures = run(max(3, round(seconds / per_update)), os.path.join(folder, "run"))
    rollout, forward, update = (sum(figures[f"time/{k}"][1:]) for k in ("rollout_s", "forward_s", "update_s"))
    decisions = sum(s * (r + u) for s, r, u in zip(figures["charts/SPS"][1:], figures["time/rollout_s"][1:],
                                                    figures["time/update_s"][1:], strict=True))  # fmt: skip
    total = rollout + update
    return {"ppo_steps_per_s": decisions / total, "ppo_seconds": total, "rollout_share": rollout / total,
            "forward_share": forward / total, "env_and_opponents_share": (rollout - forward) / total,
            "update_share": update / total}  # fmt: skip


def sb3(seconds: float) -> dict[str, float]:
    """MaskablePPO's defaults on the single env, learning for about `seconds`."""
    import gymnasium as gym
    from sb3_contrib import MaskablePPO

    import hollywood_gin_env  # noqa: F401  (registers HollywoodGin-v1)

    model = MaskablePPO("MultiInputPolicy", gym.make("HollywoodGin-v1"), seed=0, verbose=0)
    model.learn(model.n_steps)  # warm-up: first compile of the env, first update
    steps, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        model.learn(model.n_steps, reset_num_timesteps=False)
        steps += model.n_steps
    elapsed = time.perf_counter() - started
    return {"sb3_steps_per_s": steps / elapsed, "sb3_seconds": elapsed}


def main(argv: list[str] | None = None) -> int:
    """Run both and print the figures (or JSON)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds of training each (default: %(default)s)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="torch threads (default: %(default)s)")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    result = {"threads": args.threads, **ours(args.seconds, args.threads), **sb3(args.seconds)}
    result["ratio"] = result["ppo_steps_per_s"] / result["sb3_steps_per_s"]
    if args.json:
        print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in result.items()}))
    else:
        print(
            f"this project's PPO: {result['ppo_steps_per_s']:,.0f} decisions/s (rollout {result['rollout_share']:.0%}"
            f", of which policy forward {result['forward_share']:.0%}; update {result['update_share']:.0%})"
        )
        print(f"sb3-contrib MaskablePPO: {result['sb3_steps_per_s']:,.0f} steps/s")
        print(f"ratio: {result['ratio']:.1f}x (target >= 5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
