"""Engine benchmark: meld-solver hands/s and random-play decision steps/s, against OpenSpiel in the same run.

    python benchmarks/engine.py            # a readable report
    python benchmarks/engine.py --json     # one JSON object
    python benchmarks/engine.py --smoke    # a second or two: checks the benchmark runs (CI), figures not meant

Both sides run on one core: the process pins itself to one CPU (os.sched_setaffinity) and the Engine gets one
kernel thread, as OpenSpiel has one. A second random-play line, labelled, gives the Engine its kernel threads on
every CPU the process may use (measured first, before the pin): what a user's default `num_threads` gets, not a
like-for-like ratio. OpenSpiel (`pip install open_spiel`, the `bench` extra) is the reference: its
`GinRummyUtils(13, 4, 10).min_deadwood` per hand, and a random-play loop over `legal_actions()`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from hollywood_gin_env.engine.batched import Engine  # noqa: E402
from hollywood_gin_env.engine.sampling import sample_legal  # noqa: E402
from hollywood_gin_env.engine.threads import available_cpus  # noqa: E402
from hollywood_gin_env.rules.melds import min_deadwood_batch  # noqa: E402


def pin_one_core() -> None:
    """Run on a single CPU where the OS allows it."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def random_hands(count: int, size: int, seed: int) -> np.ndarray:
    """count random hands of `size` distinct cards, as card-id rows."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((count, 52)), axis=1)[:, :size]


def to_masks(hands: np.ndarray) -> np.ndarray:
    """int64 52-bit masks of card-id rows."""
    return np.bitwise_or.reduce(np.left_shift(np.int64(1), hands.astype(np.int64)), axis=1)


def rate(work, seconds: float) -> float:
    """Units per second of work(), repeated for at least `seconds` (work returns its unit count)."""
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        done += work()
    return done / (time.perf_counter() - start)


def our_solver_rate(seconds: float) -> float:
    """Minimum-deadwood hands/s of the batched numba solver on random 10-card hands."""
    masks = to_masks(random_hands(200_000, 10, 1))
    out = np.zeros(len(masks), dtype=np.int64)
    min_deadwood_batch(masks[:10], out[:10])  # compile / load from cache

    def work() -> int:
        min_deadwood_batch(masks, out)
        return len(masks)

    return rate(work, seconds)


def our_play_rate(seconds: float, num_threads: int, num_matches: int = 4096) -> float:
    """Decision steps/s of uniformly random legal play in num_matches batched matches, masks included."""
    engine = Engine(num_matches, num_threads=num_threads)
    engine.new_matches(seeds=np.arange(num_matches, dtype=np.uint64))
    rng = np.random.default_rng(0)

    def work() -> int:
        for _ in range(20):
            engine.step(sample_legal(engine.legal_mask, rng.random(num_matches)))
            if engine.done_now.any():
                engine.new_matches(selected=engine.done)
        return 20 * num_matches

    work()  # compile / load from cache
    return rate(work, seconds)


def openspiel_solver_rate(seconds: float) -> float:
    """OpenSpiel's GinRummyUtils(13, 4, 10).min_deadwood, hands/s, one call per hand."""
    from pyspiel import gin_rummy

    utils = gin_rummy.GinRummyUtils(13, 4, 10)
    hands = random_hands(20_000, 10, 1).tolist()

    def work() -> int:
        for hand in hands[:2000]:
            utils.min_deadwood(hand)
        return 2000

    return rate(work, seconds)


def openspiel_play_rate(seconds: float) -> float:
    """OpenSpiel gin_rummy random play: decision steps/s (chance nodes sampled, not counted)."""
    import pyspiel

    game = pyspiel.load_game("gin_rummy")
    rng = np.random.default_rng(0)
    state = game.new_initial_state()

    def work() -> int:
        nonlocal state
        steps = 0
        while steps < 500:
            if state.is_terminal():
                state = game.new_initial_state()
            elif state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
                steps += 1
        return steps

    return rate(work, seconds)


def measure(seconds: float) -> dict[str, float | None]:
    """Every figure, one core each unless labelled; OpenSpiel's are None if it is not installed."""
    cpus = available_cpus()
    every_cpu = our_play_rate(seconds, cpus)  # before the pin, so that the kernel threads have every CPU
    pin_one_core()
    figures: dict[str, float | None] = {
        "cpus": cpus,
        "solver_hands_per_s": our_solver_rate(seconds),
        "play_steps_per_s": our_play_rate(seconds, 1),
        "play_steps_per_s_every_cpu": every_cpu,
    }
    try:
        figures["openspiel_solver_hands_per_s"] = openspiel_solver_rate(seconds)
        figures["openspiel_play_steps_per_s"] = openspiel_play_rate(seconds)
    except ImportError:
        print("open_spiel is not installed (pip install open_spiel): no reference figures", file=sys.stderr)
        figures["openspiel_solver_hands_per_s"] = figures["openspiel_play_steps_per_s"] = None
    for ours, theirs, key in (
        ("solver_hands_per_s", "openspiel_solver_hands_per_s", "solver_ratio"),
        ("play_steps_per_s", "openspiel_play_steps_per_s", "play_ratio"),
        ("play_steps_per_s_every_cpu", "openspiel_play_steps_per_s", "play_ratio_every_cpu"),
    ):
        figures[key] = figures[ours] / figures[theirs] if figures[theirs] else None
    return figures


def main() -> None:
    """Parse the arguments, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement (default 3)")
    parser.add_argument("--smoke", action="store_true", help="a fraction of a second each (CI): figures not meant")
    args = parser.parse_args()
    figures = measure(0.05 if args.smoke else args.seconds)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{'figure (each side on one core unless labelled)':<52}{'hollywood-gin':>16}{'OpenSpiel':>14}{'ratio':>10}")
    every = f"random play, {figures['cpus']} kernel threads on {figures['cpus']} CPUs"
    for label, ours, theirs, ratio, note in (
        ("min-deadwood hands/s (10 cards)", "solver_hands_per_s", "openspiel_solver_hands_per_s", "solver_ratio", ""),
        ("random play decision steps/s", "play_steps_per_s", "openspiel_play_steps_per_s", "play_ratio", ""),
        (every, "play_steps_per_s_every_cpu", "openspiel_play_steps_per_s", "play_ratio_every_cpu", " (OpenSpiel: 1)"),
    ):
        theirs_text = f"{figures[theirs]:14,.0f}" if figures[theirs] else f"{'n/a':>14}"
        ratio_text = f"{figures[ratio]:9.1f}x" if figures[ratio] else f"{'n/a':>10}"
        print(f"{label:<52}{figures[ours]:16,.0f}{theirs_text}{ratio_text}{note}")


if __name__ == "__main__":
    main()
