"""What reward="chance" costs: self-play steps per second with reward="hand" (the reference) and reward="chance".

Both run `SelfPlayVectorEnv` in this process, on one core, with a player that knocks whenever it may and otherwise
plays a random legal action, so hands end about as often as in trained play (random play hardly ever knocks). The
two modes take turns for `--rounds` rounds and each keeps its best round. The figure that matters is the cost a
hand.

    python benchmarks/rewards.py [--seconds 2] [--rounds 3] [--num-envs 256] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import _one_core  # first: it sets one thread per library before numpy loads

# isort: split
import numpy as np  # noqa: E402

from hollywood_gin_env.envs import SelfPlayVectorEnv  # noqa: E402
from hollywood_gin_env.sampling import sample_legal_streams  # noqa: E402
from hollywood_gin_env.state import KNOCK_BASE  # noqa: E402


def runner(reward: str, num_envs: int) -> Callable[[float], tuple[float, float]]:
    """Knock-when-possible play in a SelfPlayVectorEnv with `reward`; run(seconds) -> (steps/s, hands/s)."""
    env = SelfPlayVectorEnv(num_envs, reward=reward, episode="hand")
    obs, _ = env.reset(seed=0)
    rng = np.arange(num_envs, dtype=np.uint64)
    actions = np.zeros(num_envs, dtype=np.int64)
    everywhere = np.ones(num_envs, dtype=np.bool_)

    def run(seconds: float) -> tuple[float, float]:
        nonlocal obs
        steps, hands, start = 0, 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            masks = obs["action_mask"]
            sample_legal_streams(masks, everywhere, rng, actions)
            knocks = masks[:, KNOCK_BASE:].any(axis=1)
            actions[knocks] = KNOCK_BASE + np.argmax(masks[knocks, KNOCK_BASE:], axis=1)
            obs, _, _, _, infos = env.step(actions)
            steps += num_envs
            hands += int(infos["hand_over"].sum())
        elapsed = time.perf_counter() - start
        return steps / elapsed, hands / elapsed

    run(0.1)  # compile and warm up
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per mode and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each mode keeps its best")
    parser.add_argument("--num-envs", type=int, default=256, help="matches played at once")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="one short round on 32 matches (CI): figures not meant")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.rounds, args.num_envs = 0.05, 1, 32
    _one_core.pin_one_core()
    runners = {mode: runner(mode, args.num_envs) for mode in ("hand", "chance")}
    best = {mode: (0.0, 0.0) for mode in runners}
    for _ in range(args.rounds):
        for mode, run in runners.items():
            best[mode] = max(best[mode], run(args.seconds))
    (hand_steps, hand_hands), (chance_steps, _) = best["hand"], best["chance"]
    steps_per_hand = hand_steps / max(hand_hands, 1e-9)
    extra_us = max(0.0, 1e6 / chance_steps - 1e6 / hand_steps) * steps_per_hand
    result = {
        "hand_steps_per_s": round(hand_steps),
        "chance_steps_per_s": round(chance_steps),
        "steps_per_hand": round(steps_per_hand, 1),
        "chance_ratio": round(chance_steps / hand_steps, 3),
        "chance_us_per_hand": round(extra_us, 1),
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f'reward="hand"    {hand_steps:12,.0f} steps/s   ({steps_per_hand:.1f} steps a hand)')
    print(f'reward="chance"  {chance_steps:12,.0f} steps/s   {result["chance_ratio"]:.3f}x "hand"')
    print(f"the chance costs {extra_us:12,.1f} µs a hand on one core")


if __name__ == "__main__":
    main()
