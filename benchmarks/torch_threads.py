"""The same evaluation through the Python API and through the command line, and with torch's own thread count.

`round_robin([A, B], M)` (the API, its defaults) and `hollywood-gin evaluate --agents A B --matches M` (the command
line, run in this process, its report discarded) both give the agents torch's `DEFAULT_TORCH_THREADS`
(hollywood_gin_env/agents/torch_threads.py): their times should agree. The third figure is the API told to use torch's
own default (one thread per core, `torch.get_num_threads()` at start): what a library that left torch alone would
cost. The three take turns for `--rounds` rounds, each going first in turn, and each keeps its best (a busy machine
slows them alike); the reports are checked to be equal.

    python benchmarks/torch_threads.py [--agents bot greedy] [--matches 200] [--rounds 3] [--json]
    python benchmarks/torch_threads.py --smoke   # seconds: checks the benchmark runs (CI); figures not meant
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time

import torch

from hollywood_gin_env.agents import DEFAULT_TORCH_THREADS
from hollywood_gin_env.evaluation import evaluate
from hollywood_gin_env.evaluation.evaluate import Schedule, round_robin, without_timing

TORCH_DEFAULT = torch.get_num_threads()  # torch's own count, read before anything sets it


def through_api(agents: list[str], matches: int, threads: int | None) -> tuple[float, dict]:
    """Seconds and report (less its timings) of round_robin; `threads` None: its defaults."""
    schedule = Schedule() if threads is None else Schedule(torch_threads=threads)
    begin = time.perf_counter()
    report = round_robin(agents, matches, seed=0, schedule=schedule)
    return time.perf_counter() - begin, without_timing(report)


def through_cli(agents: list[str], matches: int) -> tuple[float, dict]:
    """Seconds and report (less its timings, read back from its --json) of `evaluate` run in this process."""
    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory())
        stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        path = f"{folder}/report.json"
        begin = time.perf_counter()
        code = evaluate.main(["--agents", *agents, "--matches", str(matches), "--no-progress", "--json", path])
        seconds = time.perf_counter() - begin
        assert code == 0, f"evaluate exited {code}"
        with open(path) as file:
            return seconds, without_timing(json.load(file))


def main() -> None:
    """Print the three best times and their ratios to the command line's."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", nargs=2, default=["bot", "greedy"], help="one pair (default: %(default)s)")
    parser.add_argument("--matches", type=int, default=200, help="matches of the pair (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=3, help="measured rounds of each (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    parser.add_argument("--smoke", action="store_true", help="2 matches, one round (CI): figures not meant")
    args = parser.parse_args()
    if args.smoke:
        args.matches, args.rounds = 2, 1
    through_api(args.agents, 2, None)  # numba kernels, the bot's file and torch's threads started before timing
    runs = {
        "api": lambda: through_api(args.agents, args.matches, None),
        "cli": lambda: through_cli(args.agents, args.matches),
        "torch_default": lambda: through_api(args.agents, args.matches, TORCH_DEFAULT),
    }
    best, reports, names = {name: float("inf") for name in runs}, {}, list(runs)
    for round_ in range(args.rounds):
        for name in names[round_ % 3 :] + names[: round_ % 3]:  # each goes first in turn: no order favours one
            seconds, reports[name] = runs[name]()
            best[name] = min(best[name], seconds)
    assert reports["api"] == reports["cli"] == reports["torch_default"], "the reports differ"
    print(
        f"{' vs '.join(args.agents)}, {args.matches} matches, best of {args.rounds} rounds; torch threads: "
        f"{DEFAULT_TORCH_THREADS} (API and command line), {TORCH_DEFAULT} (torch's own default); reports equal"
    )
    for name, label in (("cli", "command line"), ("api", "Python API"), ("torch_default", "torch's default")):
        print(f"{label:>16}: {best[name]:6.2f} s  x{best[name] / best['cli']:.2f} the command line's")
    if args.json:
        figures = {f"{name}_s": seconds for name, seconds in best.items()}
        ratios = {"api_over_cli": best["api"] / best["cli"], "default_over_cli": best["torch_default"] / best["cli"]}
        print(json.dumps({**figures, **ratios, "torch_default_threads": TORCH_DEFAULT}))


if __name__ == "__main__":
    main()
