"""Matches and decisions per second of the evaluator, in this process (--workers 1) and on a local Ray (K workers).

For each K the same pairs are played `--rounds` times, taking turns, and each K keeps its best round (a busy
machine slows them alike). For K > 1 the Ray start is timed apart: one local Ray with K CPUs is started once
and a first, unmeasured round warms its workers (process start, numba cache load); `evaluate.py --workers K`
pays both once per command. The reports of every K are checked to be equal before anything is printed.

    python benchmarks/evaluate.py [--agents expert greedy] [--matches 400] [--chunk-matches 200] [--workers 1 2]
    python benchmarks/evaluate.py --smoke   # seconds: checks the benchmark runs, Ray included (CI); figures not meant
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time

import _one_core  # noqa: F401  (first: it sets one thread per library before numpy loads)

# isort: split
from hollywood_gin_env.evaluation.evaluate import Schedule, evaluate_pairs, summarize_pair, without_timing  # noqa: E402


def play(pairs: list[tuple[str, str]], matches: int, schedule: Schedule) -> tuple[float, list[dict]]:
    """Seconds of one evaluation and its summaries (less their timings)."""
    start = time.perf_counter()
    records = evaluate_pairs(pairs, matches, seed=0, schedule=schedule)
    seconds = time.perf_counter() - start
    return seconds, [without_timing(summarize_pair(r)) for r in records]


def main() -> None:
    """Print one line per K: best seconds, matches/s, decisions/s, and the Ray start."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", nargs=2, default=["expert", "greedy"], help="one pair (default: %(default)s)")
    parser.add_argument("--matches", type=int, default=400, help="matches of the pair (default: %(default)s)")
    parser.add_argument("--chunk-matches", type=int, default=200, help="matches per chunk (default: %(default)s)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="values of K (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds per K (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--smoke", action="store_true", help="20 matches, one round (CI): figures not meant")
    args = parser.parse_args()
    if args.smoke:
        args.matches, args.chunk_matches, args.rounds = 20, 10, 1
    pairs = [tuple(args.agents)]
    play(pairs, 2, Schedule())  # numba kernels and heuristic tables loaded here before timing
    ray_start, ray_k = None, max(args.workers)
    if ray_k > 1:
        import ray

        begin = time.perf_counter()
        options = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
        ray.init(address="local", num_cpus=ray_k, **options)
        ray_start = time.perf_counter() - begin
        play(pairs, args.matches, Schedule(workers=ray_k, chunk_matches=args.chunk_matches))  # warms the workers
    best, reports = {k: float("inf") for k in args.workers}, {}
    for _ in range(args.rounds):
        for k in args.workers:
            seconds, reports[k] = play(pairs, args.matches, Schedule(workers=k, chunk_matches=args.chunk_matches))
            best[k] = min(best[k], seconds)
    assert all(report == reports[args.workers[0]] for report in reports.values()), "the workers' reports differ"
    decisions = sum(reports[args.workers[0]][0]["decisions"])
    print(
        f"{' vs '.join(args.agents)}, {args.matches} matches in chunks of {args.chunk_matches}, {decisions} "
        f"decisions; {os.cpu_count()} CPUs; best of {args.rounds} rounds; reports equal for every K"
    )
    figures = []
    for k in args.workers:
        rate, speedup = args.matches / best[k], best[args.workers[0]] / best[k]
        per_s = decisions / best[k]
        figures.append({"workers": k, "seconds": best[k], "matches_per_s": rate, "decisions_per_s": per_s})
        print(
            f"workers {k}: {best[k]:6.2f} s  {rate:7.1f} matches/s  {per_s:9.0f} decisions/s  "
            f"x{speedup:.2f}" + (" (in this process, no Ray)" if k == 1 else "")
        )
    if ray_start is not None:
        print(
            f"Ray start (local, {ray_k} CPUs): {ray_start:.1f} s, paid once per evaluate.py command, as is the "
            f"workers' warm-up (the first round, not counted)"
        )
    if args.json:
        print(json.dumps({"figures": figures, "ray_start_s": ray_start}))


if __name__ == "__main__":
    main()
