"""What `expert` and the lookahead inputs pay to score a hand's discards: all eleven at once (`discard_lookaheads`,
one meld-solver pass over hand + u per unseen card u) against one at a time (`lookahead(hand - c)` for each card c,
the way they scored them before; the reference, in the same run and the same compiled loop).

Positions: the 11-card hands of the discard phase in seeded matches of `expert` against itself. Both ways take turns
for `--rounds` rounds and each keeps its best; the two must agree to the last bit (checked on every position). Also
printed: `expert`'s decisions/s and the lookahead inputs' rows/s on the observations of those matches, one core.

    python benchmarks/expert.py [--matches 40] [--seconds 2] [--rounds 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

import _one_core  # first: it sets one thread per library before numpy loads

# isort: split
import numba  # noqa: E402
import numpy as np  # noqa: E402

from hollywood_gin_env.agents.expert import (  # noqa: E402
    SCRATCH_SHAPE,
    ExpertAgent,
    discard_lookaheads,
    lookahead,
    lookahead_of,
)
from hollywood_gin_env.agents.lookahead_planes import lookahead_planes  # noqa: E402
from hollywood_gin_env.cards import to_mask  # noqa: E402
from hollywood_gin_env.game import Game  # noqa: E402
from hollywood_gin_env.observation import OBS_LAYOUT  # noqa: E402
from hollywood_gin_env.threads import KernelThreads  # noqa: E402

HAND, UNSEEN = OBS_LAYOUT["hand"][0], OBS_LAYOUT["unseen"][0]
LIMIT = 10  # the default rules' knock limit


@numba.njit(nogil=True)
def one_at_a_time(hands: np.ndarray, unseens: np.ndarray, out: np.ndarray) -> None:
    """out[i, :, c] = lookahead(hands[i] - c) for each card c of hands[i]: eleven solver passes per unseen card."""
    scratch = np.zeros(SCRATCH_SHAPE, dtype=np.int64)
    for i in range(hands.shape[0]):
        for c in range(52):
            if (hands[i] >> c) & 1:
                out[i, 0, c], out[i, 1, c], out[i, 2, c] = lookahead(hands[i] & ~(1 << c), unseens[i], LIMIT, scratch)


@numba.njit(nogil=True)
def all_at_once(hands: np.ndarray, unseens: np.ndarray, out: np.ndarray) -> None:
    """The same figures from one `discard_lookaheads` per hand: one solver pass per unseen card."""
    scratch = np.zeros(SCRATCH_SHAPE, dtype=np.int64)
    for i in range(hands.shape[0]):
        n = discard_lookaheads(hands[i], unseens[i], LIMIT, scratch)
        for c in range(52):
            if (hands[i] >> c) & 1:
                out[i, 0, c], out[i, 1, c], out[i, 2, c] = lookahead_of(scratch, n, c)


def positions(matches: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(11-card hands, their unseen cards, every observation, every action mask) of `expert` self-play."""
    expert, hands, unseens, observations, masks = ExpertAgent(num_threads=1), [], [], [], []
    for match in range(matches):
        game = Game(seed=match)
        while not game.done:
            view = game.observation(game.current_player)
            obs = view["observation"]
            observations.append(obs)
            masks.append(view["action_mask"])
            hand = to_mask(np.flatnonzero(obs[HAND : HAND + 52] > 0.5))
            if hand.bit_count() == 11:
                hands.append(hand)
                unseens.append(to_mask(np.flatnonzero(obs[UNSEEN : UNSEEN + 52] > 0.5)))
            game.step(int(expert.act(obs[None], view["action_mask"][None])[0]))
    as_int = np.array(hands, dtype=np.int64), np.array(unseens, dtype=np.int64)
    return *as_int, np.stack(observations), np.stack(masks)


def best_rate(run, count: int, seconds: float) -> float:
    """The best of count / elapsed over repeated calls of run() within `seconds`."""
    best, start = 0.0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        t0 = time.perf_counter()
        run()
        best = max(best, count / (time.perf_counter() - t0))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=40, help="expert self-play matches that give the positions")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per way and round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each way keeps its best")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--smoke", action="store_true", help="two matches, one short round (CI): figures not meant")
    args = parser.parse_args()
    if args.smoke:
        args.matches, args.seconds, args.rounds = 2, 0.05, 1
    _one_core.pin_one_core()
    hands, unseens, observations, masks = positions(args.matches)
    reference, fast = np.zeros((len(hands), 3, 52)), np.zeros((len(hands), 3, 52))
    one_at_a_time(hands, unseens, reference)  # compile, and the figures to compare
    all_at_once(hands, unseens, fast)
    if not np.array_equal(reference, fast):
        raise SystemExit("discard_lookaheads differs from lookahead one card at a time")
    slow, quick = 0.0, 0.0
    for _ in range(args.rounds):  # the two ways take turns, so a busy spell hurts both
        slow = max(slow, best_rate(lambda: one_at_a_time(hands, unseens, reference), len(hands), args.seconds))
        quick = max(quick, best_rate(lambda: all_at_once(hands, unseens, fast), len(hands), args.seconds))
    expert, threads = ExpertAgent(num_threads=1), KernelThreads(1)
    expert.act(observations[:8], masks[:8])
    lookahead_planes(observations[:8], threads)
    decisions = best_rate(lambda: expert.act(observations, masks), len(masks), args.seconds * args.rounds)
    rows = best_rate(lambda: lookahead_planes(observations, threads), len(masks), args.seconds * args.rounds)
    result = {
        "hands": len(hands),
        "one_at_a_time_hands_per_s": round(slow),
        "all_at_once_hands_per_s": round(quick),
        "all_at_once_ratio": round(quick / slow, 3),
        "expert_decisions_per_s": round(decisions),
        "lookahead_rows_per_s": round(rows),
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{len(hands):,} eleven-card hands of expert self-play ({args.matches} matches), one core")
    print(f"one discard at a time (reference)  {slow:12,.0f} hands/s")
    print(f"all eleven at once                 {quick:12,.0f} hands/s   {result['all_at_once_ratio']:.2f}x")
    print(f"expert, every decision             {decisions:12,.0f} decisions/s")
    print(f"lookahead inputs, every row        {rows:12,.0f} rows/s")


if __name__ == "__main__":
    main()
