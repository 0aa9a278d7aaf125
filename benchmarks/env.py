"""Steps per second of uniformly random legal play: the VectorEnv, the single env, and OpenSpiel's gin_rummy.

All three run in this process, each on one core (one kernel thread), observations and masks included, and the
ratios are printed against OpenSpiel (the reference engine; benchmarks/README.md). A "step" is one `step()` call
per match of our envs (the learner's action and the opponent's replies) and one decision in OpenSpiel (with
the acting player's `observation_tensor()`). The three take turns for `--rounds` rounds and each
keeps its best round, so a busy machine slows them alike and spoils the ratios less. A last line, labelled,
gives the VectorEnv its kernel threads on every CPU the process may use (measured first, before the pin): what a
user's default `num_threads` gets, not a like-for-like ratio.

    python benchmarks/env.py [--seconds 2] [--rounds 3] [--num-envs 1024] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable

import _one_core  # first: it sets one thread per library before numpy loads

# isort: split
import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import hollywood_gin_env  # noqa: E402, F401  (registers HollywoodGin-v1)
from hollywood_gin_env.engine.sampling import sample_legal_streams  # noqa: E402
from hollywood_gin_env.engine.threads import available_cpus  # noqa: E402


def vector_runner(num_envs: int, num_threads: int = 1) -> Callable[[float], float]:
    """Random legal play through gymnasium.make_vec(..., vectorization_mode="vector_entry_point")."""
    env = gym.make_vec(
        "HollywoodGin-v1", num_envs=num_envs, vectorization_mode="vector_entry_point", num_threads=num_threads
    )
    obs, _ = env.reset(seed=0)
    rng = np.arange(num_envs, dtype=np.uint64)
    actions = np.zeros(num_envs, dtype=np.int64)
    everywhere = np.ones(num_envs, dtype=np.bool_)

    def run(seconds: float) -> float:
        nonlocal obs
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            sample_legal_streams(obs["action_mask"], everywhere, rng, actions)
            obs, _, _, _, _ = env.step(actions)
            steps += num_envs
        return steps / (time.perf_counter() - start)

    run(0.1)  # compile and warm up
    return run


def single_runner() -> Callable[[float], float]:
    """Random legal play through gymnasium.make("HollywoodGin-v1")."""
    env = gym.make("HollywoodGin-v1")  # one match: one kernel thread
    obs, _ = env.reset(seed=0)
    pick = random.Random(0).randrange

    def run(seconds: float) -> float:
        nonlocal obs
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            legal = np.flatnonzero(obs["action_mask"])
            obs, _, terminated, truncated, _ = env.step(legal[pick(len(legal))])
            steps += 1
            if terminated or truncated:
                obs, _ = env.reset()
        return steps / (time.perf_counter() - start)

    run(0.1)
    return run


def openspiel_runner() -> Callable[[float], float]:
    """Random play of pyspiel's gin_rummy with the acting player's observation_tensor() each decision."""
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    pick = random.Random(0).randrange

    def run(seconds: float) -> float:
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes = state.chance_outcomes()
                    state.apply_action(outcomes[pick(len(outcomes))][0])
                    continue
                state.observation_tensor(state.current_player())
                legal = state.legal_actions()
                state.apply_action(legal[pick(len(legal))])
                steps += 1
        return steps / (time.perf_counter() - start)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per engine and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each engine keeps its best")
    parser.add_argument("--num-envs", type=int, default=1024, help="matches in the VectorEnv")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="one short round on 64 matches (CI): figures not meant")
    args = parser.parse_args()
    if args.smoke:
        args.seconds, args.rounds, args.num_envs = 0.05, 1, 64
    cpus = available_cpus()
    every_cpu_run = vector_runner(args.num_envs, cpus)  # its threads start unpinned: every CPU
    every_cpu = max(every_cpu_run(args.seconds) for _ in range(args.rounds))
    _one_core.pin_one_core()
    runners = {"openspiel": openspiel_runner(), "vector": vector_runner(args.num_envs), "single": single_runner()}
    best = dict.fromkeys(runners, 0.0)
    for _ in range(args.rounds):
        for name, run in runners.items():
            best[name] = max(best[name], run(args.seconds))
    openspiel, vector, single = best["openspiel"], best["vector"], best["single"]
    result = {
        "vector_steps_per_s": round(vector),
        "single_steps_per_s": round(single),
        "openspiel_steps_per_s": round(openspiel),
        "vector_ratio": round(vector / openspiel, 2),
        "single_ratio": round(single / openspiel, 2),
        "cpus": cpus,
        "vector_steps_per_s_every_cpu": round(every_cpu),
        "vector_ratio_every_cpu": round(every_cpu / openspiel, 2),
    }
    if args.json:
        print(json.dumps(result))
        return
    print("each on one core (one kernel thread) unless labelled")
    print(f"OpenSpiel gin_rummy       {openspiel:12,.0f} steps/s")
    print(f"VectorEnv (N={args.num_envs:<5d})     {vector:12,.0f} steps/s   {result['vector_ratio']:6.2f}x OpenSpiel")
    print(f"single env                {single:12,.0f} steps/s   {result['single_ratio']:6.2f}x OpenSpiel")
    print(
        f"VectorEnv, {cpus} kernel threads on {cpus} CPUs {every_cpu:9,.0f} steps/s   "
        f"{result['vector_ratio_every_cpu']:6.2f}x OpenSpiel (on one core)"
    )


if __name__ == "__main__":
    main()
