"""Benchmark agents: a round robin of full Hollywood matches with duplicate deals, in chunks, here or on Ray.

The matches, their deals and the chunks are `hollywood_gin_env.evaluation.duplicate`'s (its docstring explains the
duplicate deals and what an illegal action costs). `evaluate_pairs` plays pairs chunk by chunk in this
process or, with `Schedule(workers=K)`, as Ray tasks K at a time (`hollywood_gin_env.evaluation.ray_tasks`, imported
only then); the totals, and so every rate, interval, point figure and rating, are the same either way.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import combinations
from typing import Any

import numpy as np
from tqdm import tqdm

from hollywood_gin_env.agents import CHECKPOINT_PREFIX, AgentProtocol, load_agent, rules_in_play
from hollywood_gin_env.agents.loading import MAX_NAME, check_name, parse_agent_arg
from hollywood_gin_env.agents.torch_threads import (
    DEFAULT_TORCH_THREADS,
    MAX_TORCH_THREADS,
    check_torch_threads,
    torch_threads_for,
)
from hollywood_gin_env.evaluation.duplicate import (
    CHUNK_MATCHES,
    MAX_MATCHES,
    ChunkJob,
    EvaluationError,
    PairRecord,
    Schedule,
    check_local_workers,
    chunk_bounds,
    duplicate_deals,
    num_chunks,
    pair_jobs,
    play_chunk,
    play_job,
)
from hollywood_gin_env.evaluation.report import ILLEGAL_POLICY, format_report
from hollywood_gin_env.evaluation.stats import Z95, bradley_terry, points_standard_error, wilson_interval
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.atomic import AtomicWriteError, atomic_write_text, check_write_target
from hollywood_gin_env.support.imports import add_import_option, import_modules
from hollywood_gin_env.support.messages import ArgumentParser, install_hint, printable_message, shown_value

#: --chunk-matches at most: a chunk's matches are played at once (engine states, observations, an agent's batch)
MAX_CHUNK_MATCHES = 10_000
AgentSpec = str | AgentProtocol

__all__ = [
    "EvaluationError",
    "PairRecord",
    "Schedule",
    "bradley_terry",
    "agent_label",
    "agent_labels",
    "agents_rules",
    "check_name",
    "duplicate_deals",
    "evaluate_pairs",
    "parse_agent_arg",
    "play_pair",
    "points_standard_error",
    "round_robin",
    "summarize_pair",
    "wilson_interval",
    "without_timing",
]


def play_pair(
    agent_a: AgentSpec,
    agent_b: AgentSpec,
    num_matches: int,
    seed: int = 0,
    rules: Rules | None = None,
    progress: bool = False,
    chunk_matches: int = CHUNK_MATCHES,
    torch_threads: int | None = None,
) -> PairRecord:
    """Play num_matches duplicate matches of A against B here, chunk by chunk (the agents are not reseeded), under
    `rules` (default: the agents' own, `rules_in_play`), torch on `torch_threads` threads (default: the programs'
    choice, agents/torch_threads.py) for the agents it builds from specs and while the matches are played."""
    chunks = num_chunks(num_matches, chunk_matches)
    duplicate_deals(num_matches, seed, 0, 2)  # checks num_matches before any play
    torch_threads = check_torch_threads(torch_threads)
    agent_a, agent_b = (load_agent(spec, torch_threads=torch_threads, rules=rules) for spec in (agent_a, agent_b))
    rules = rules_in_play((agent_a, agent_b), rules)
    record = PairRecord(agent_a.name, agent_b.name)
    with (
        torch_threads_for(torch_threads),
        tqdm(
            total=num_matches,
            desc=f"{agent_a.name} vs {agent_b.name}",
            disable=not progress,
            leave=False,
            mininterval=0.5,
        ) as bar,
    ):
        for chunk in range(chunks):
            start, stop = chunk_bounds(num_matches, chunk_matches, chunk)
            record.merge(
                play_chunk(
                    (agent_a, agent_b),
                    num_matches,
                    seed,
                    start,
                    stop,
                    rules=rules,
                    on_step=lambda done, start=start: bar.update(start + done - bar.n),
                )
            )
    return record


def summarize_pair(record: PairRecord) -> dict[str, Any]:
    """The per-pair figures of the report (docs/EVALUATION.md), from the pair's totals."""
    m, n, games = record.matches, record.hands, record.games
    per_hand = lambda count: count / max(n, 1)  # noqa: E731
    lo, hi = wilson_interval(record.match_wins_a, m)
    return {
        "agent_a": record.agent_a,
        "agent_b": record.agent_b,
        "matches": m,
        "match_wins_a": record.match_wins_a,
        "match_win_rate": record.match_wins_a / m,
        "match_win_ci95": [lo, hi],
        "game_win_rate": games[0] / max(sum(games), 1),
        "hands": n,
        "hands_per_match": n / m,
        "hand_win_rate": record.hand_wins_a / record.scored_hands if record.scored_hands else 0.0,
        "points_per_hand": record.points / n if n else 0.0,
        "points_per_hand_se": points_standard_error(record.points, record.points_squared, n),
        "gin_rate": [per_hand(x) for x in record.gins],
        "knock_rate": [per_hand(x) for x in record.knocks],
        "undercut_rate": [per_hand(x) for x in record.undercuts],
        "dead_hands": record.dead_hands,
        "dead_hand_rate": per_hand(record.dead_hands),
        "turns_per_hand": record.turns / n if n else 0.0,
        "illegal_actions": list(record.illegal),
        "decisions": list(record.decisions),
        "aborted_matches": record.aborted,
        "seconds": round(record.seconds, 2),
        "act_seconds": [round(t, 3) for t in record.act_seconds],
        "decisions_per_second": [_rate(d, t) for d, t in zip(record.decisions, record.act_seconds, strict=True)],
    }


def _rate(decisions: int, seconds: float) -> float | None:
    """Decisions per second of an agent's own time (None where it made none or took no measurable time)."""
    return decisions / seconds if decisions and seconds > 0 else None


#: The report's figures that are times: the only ones two runs of the same seed may differ in.
TIMING_KEYS = ("seconds", "act_seconds", "decisions_per_second")


def without_timing(report: dict[str, Any]) -> dict[str, Any]:
    """The report (or one pair's summary) less its times, to compare two runs of the same seed; a copy."""
    strip = lambda d: {k: v for k, v in d.items() if k not in TIMING_KEYS}  # noqa: E731
    if "pairs" not in report:
        return strip(report)
    return {**report, "pairs": [strip(p) for p in report["pairs"]], "ratings": [strip(r) for r in report["ratings"]]}


def _chunk_jobs(
    pairs: Sequence[tuple[AgentSpec, AgentSpec]],
    names: list[tuple[str, str]],
    num_matches: int,
    seed: int,
    rules: Rules,
    schedule: Schedule,
) -> Iterator[ChunkJob]:
    """Every chunk of every pair, pair by pair, made as needed."""
    for k, (specs, pair_names) in enumerate(zip(pairs, names, strict=True)):
        yield from pair_jobs(
            specs,
            pair_names,
            num_matches,
            seed,
            rules,
            k,
            schedule.chunk_matches,
            schedule.torch_threads,
            schedule.env_threads,
            schedule.imports,
        )


def _play_here(jobs: Iterator[ChunkJob], on_result: Callable, on_step: Callable) -> None:
    """Play the jobs one after another in this process, building each pair's agents once; torch on the jobs'
    `torch_threads` while they play."""
    agents, pair = None, -1
    for job in jobs:
        if job.pair != pair:
            agents = tuple(
                load_agent(spec, num_threads=job.env_threads, torch_threads=job.torch_threads, rules=job.rules)
                for spec in job.specs
            )
            pair = job.pair
        with torch_threads_for(job.torch_threads):
            record = play_job(job, agents, on_step)
        on_result(job, record)


def spec_text(spec: AgentSpec) -> str:
    """The spec as the report shows it: the string as given (trimmed), or an agent object's name."""
    return spec.strip() if isinstance(spec, str) else load_agent(spec).name


def agent_label(spec: AgentSpec) -> str:
    """An agent's default label in the report: NAME of a NAME=SPEC, a checkpoint's file stem, the spec otherwise (an
    object: its name)."""
    text = spec_text(spec)
    name, plain = parse_agent_arg(text) if isinstance(spec, str) else (None, text)
    if name is not None:
        return check_name(name)
    if isinstance(spec, str) and plain.lower().startswith(CHECKPOINT_PREFIX):
        return os.path.splitext(os.path.basename(plain[len(CHECKPOINT_PREFIX) :].rstrip("/\\")))[0] or plain
    return plain


def agent_labels(specs: Sequence[AgentSpec], names: Sequence[str | None] | None = None) -> list[str]:
    """Each agent's label in the report: its name if given (`check_name`), else `agent_label`; ValueError for a
    label that is not printable or that two agents share, naming them."""
    names = [None] * len(specs) if names is None else list(names)
    if len(names) != len(specs):
        raise ValueError(f"{len(names)} names for {len(specs)} agents: give one name (or None) per agent")
    labels, seen = [], {}
    for spec, name in zip(specs, names, strict=True):
        label = check_name(name) if name is not None else agent_label(spec)
        if not label or not label.isprintable():
            shown = shown_value(spec_text(spec))
            raise ValueError(f"agent {shown} has no printable label ({shown_value(label)}): name it, NAME=SPEC")
        if label in seen:
            first, second = shown_value(seen[label]), shown_value(spec_text(spec))
            raise ValueError(
                f"agents {first} and {second} are both labelled {shown_value(label)}: name them apart with NAME=SPEC, "
                f"e.g. a={first[1:-1]} b={second[1:-1]}"
            )
        seen[label] = spec_text(spec)
        labels.append(label)
    return labels


def agents_rules(specs: Iterable[AgentSpec], rules: Rules | None = None, torch_threads: int | None = None) -> Rules:
    """The rules the agents play under: `rules` if given, else those they were trained under (`rules_in_play`:
    ValueError in one line when two differ). Builds every spec once, which checks each before any chunk runs."""
    agents = [load_agent(spec, torch_threads=torch_threads, rules=rules) for spec in {id(s): s for s in specs}.values()]
    return rules_in_play(agents, rules)


def _agent_names(
    pairs: Sequence[tuple[AgentSpec, AgentSpec]], names: Sequence[tuple[str, str]] | None
) -> list[tuple[str, str]]:
    """The pairs' labels: given, or each agent's `agent_label`."""
    if names is None:
        return [(agent_label(a), agent_label(b)) for a, b in pairs]
    if len(names) != len(pairs):
        raise ValueError(f"{len(names)} pairs of names for {len(pairs)} pairs of agents")
    return [tuple(pair_names) for pair_names in names]


def _ray_runner(schedule: Schedule) -> Callable:
    """`evaluate_ray.play_on_ray`, or a ValueError saying how to install Ray."""
    try:
        from hollywood_gin_env.evaluation.ray_tasks import play_on_ray  # imports ray
    except ImportError as error:
        if error.name != "ray":
            raise
        raise ValueError(
            f"workers={schedule.workers} needs Ray: {install_hint('ray')} (workers=1 plays here, without it)"
        ) from None
    return play_on_ray


def evaluate_pairs(
    pairs: Sequence[tuple[AgentSpec, AgentSpec]],
    num_matches: int,
    seed: int = 0,
    rules: Rules | None = None,
    schedule: Schedule | None = None,
    progress: bool = False,
    on_pair: Callable[[PairRecord], object] | None = None,
    names: Sequence[tuple[str, str]] | None = None,
) -> list[PairRecord]:
    """Each pair's num_matches duplicate matches, in chunks, here or on Ray (`schedule`); the same totals either way.

    Agents are specs (any `load_agent` reads; objects too when workers = 1). The matches are played under `rules`,
    by default the rules the agents were trained under (`agents_rules`; one set for the whole run). The records name
    the agents by `names` (one pair of labels per pair), by default each agent's `agent_label`. Pair k's agents are
    reset for chunk c with `chunk_agent_seeds(seed, k, c)`. `on_pair(record)` is called as each pair completes.
    Raises EvaluationError when a chunk fails or times out on Ray, ValueError for bad arguments.
    """
    schedule = schedule if schedule is not None else Schedule()
    duplicate_deals(num_matches, seed, 0, 2)  # checks num_matches and the seed before anything is built
    rules = agents_rules([spec for pair in pairs for spec in pair], rules, schedule.torch_threads)
    return _played(pairs, num_matches, seed, rules, schedule, progress, on_pair, _agent_names(pairs, names))


def _played(
    pairs: Sequence[tuple[AgentSpec, AgentSpec]],
    num_matches: int,
    seed: int,
    rules: Rules,
    schedule: Schedule,
    progress: bool,
    on_pair: Callable[[PairRecord], object] | None,
    names: list[tuple[str, str]],
) -> list[PairRecord]:
    """`evaluate_pairs` once its agents are checked, its rules chosen and its labels known."""
    records, left = [PairRecord(a, b) for a, b in names], [num_chunks(num_matches, schedule.chunk_matches)] * len(pairs)
    merged = [0]
    with tqdm(
        total=len(pairs) * num_matches,
        disable=not progress,
        leave=False,
        mininterval=0.5,
        desc=f"{schedule.workers} workers" if schedule.workers > 1 else "matches",
    ) as bar:

        def on_result(job: ChunkJob, record: PairRecord) -> None:
            records[job.pair].merge(record)
            merged[0] += record.matches
            bar.update(merged[0] - bar.n)
            left[job.pair] -= 1
            if left[job.pair] == 0 and on_pair is not None:
                on_pair(records[job.pair])

        jobs = _chunk_jobs(pairs, names, num_matches, seed, rules, schedule)
        if schedule.workers == 1:
            _play_here(jobs, on_result, lambda done: bar.update(merged[0] + done - bar.n))
        else:
            _ray_runner(schedule)(jobs, schedule, on_result)
    return records


def match_wins(count: int, index: Sequence[tuple[int, int]], pairs: Sequence[dict[str, Any]]) -> np.ndarray:
    """wins[i, j], the matches agent i won against agent j, from the pairs' summaries (pair k is agents index[k]);
    a match aborted at the decision cap is won by neither (docs/EVALUATION.md)."""
    wins = np.zeros((count, count))
    for (i, j), pair in zip(index, pairs, strict=True):
        wins[i, j] = pair["match_wins_a"]
        wins[j, i] = pair["matches"] - pair["match_wins_a"] - pair["aborted_matches"]
    return wins


def round_robin(
    specs: list[AgentSpec],
    num_matches: int,
    seed: int = 0,
    rules: Rules | None = None,
    progress: bool = False,
    on_pair: Callable[[dict[str, Any]], object] | None = None,
    schedule: Schedule | None = None,
    names: Sequence[str | None] | None = None,
) -> dict[str, Any]:
    """Every pair of agents plays num_matches duplicate matches; returns the report dict (see `--json`).

    `names` labels the agents in the report (None for an agent: `agent_label`, a checkpoint's file stem);
    labels must differ. The matches are played under `rules`, by default the rules the agents were trained under
    (`agents_rules`). `on_pair(summary)` is called as each pair finishes (the CLI keeps them to print after a
    Ctrl-C).
    """
    if len(specs) < 2:
        raise ValueError("a round robin needs at least two agents")
    schedule = schedule if schedule is not None else Schedule()
    names = agent_labels(specs, names)
    duplicate_deals(num_matches, seed, 0, 2)  # checks num_matches and the seed before anything is built
    rules = agents_rules(specs, rules, schedule.torch_threads)
    index = list(combinations(range(len(specs)), 2))
    report_pair = None if on_pair is None else lambda record: on_pair(summarize_pair(record))
    records = _played(
        [(specs[i], specs[j]) for i, j in index],
        num_matches,
        seed,
        rules,
        schedule,
        progress,
        report_pair,
        [(names[i], names[j]) for i, j in index],
    )
    pairs = [summarize_pair(r) for r in records]
    ratings, errors = bradley_terry(match_wins(len(specs), index, pairs))
    # each agent's own speed over all its pairs: decisions made and the time inside its act calls
    made, took = np.zeros(len(specs)), np.zeros(len(specs))
    for (i, j), record in zip(index, records, strict=True):
        made[[i, j]] += record.decisions
        took[[i, j]] += record.act_seconds
    rated = [
        {"agent": name, "rating": float(r), "se": float(e), "ci95": [float(r - Z95 * e), float(r + Z95 * e)],
         "decisions_per_second": _rate(int(d), float(t))}
        for name, r, e, d, t in zip(names, ratings, errors, made, took, strict=True)
    ]  # fmt: skip
    return {
        "seed": seed,
        "matches_per_pair": num_matches,
        "chunk_matches": schedule.chunk_matches,
        "rules": rules.to_dict(),
        "rules_summary": rules.describe(),
        "duplicate_deals": True,
        "illegal_action_policy": ILLEGAL_POLICY,
        "agents": [{"name": name, "spec": spec_text(spec)} for name, spec in zip(names, specs, strict=True)],
        "pairs": pairs,
        "ratings": rated,
        "rating_method": "Bradley-Terry on match wins (MM fit, 1 virtual game per pair), Elo scale, mean 0, "
        "errors from the Fisher information",
    }


def check_writable(path: str) -> None:
    """ValueError unless a file can be written at path (checked before a run, so a long run never fails at the end)."""
    target = os.path.abspath(path)
    if os.path.isdir(target):
        raise ValueError(f"--json {path}: is a directory; give a file path such as {os.path.join(path, 'report.json')}")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise ValueError(f"--json {path}: the folder {folder} does not exist")
    check_write_target(target)  # a symlink or a device there would be replaced by the report
    try:  # the report is written atomically: a temporary file in the same folder, then a rename
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".tmp"):
            pass
    except OSError as error:
        raise ValueError(f"--json {path}: cannot write in {folder} ({error.strerror or error})") from error


#: How the program is typed where no caller says (the console command; `python evaluate.py` passes its own).
PROG = "hollywood-gin evaluate"


def _parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The command line's options; `prog` is the command as the user typed it, for usage and errors."""
    parser = ArgumentParser(
        prog=prog, description=__doc__.split("\n")[0], epilog="See docs/EVALUATION.md and docs/SCALING.md."
    )
    add = parser.add_argument
    # fmt: off
    add("--agents", nargs="+", default=["expert", "greedy", "random"], metavar="[NAME=]SPEC",
        help="agents: random, greedy, expert, bot (the shipped bot), checkpoint:PATH, module:attr (your agent "
             "class or @agent_factory function), a name an installed package registers; each "
             "optionally named for the report (mine=checkpoint:runs/x/policy.safetensors; "
             f"1-{MAX_NAME} letters, digits, _ . + -; default label: a checkpoint's file stem, else the spec); at "
             "least two (default: %(default)s)")
    add("--matches", type=int, default=2000, help=f"matches per pair, even (duplicate pairs), at most {MAX_MATCHES:,} "
        "(default: %(default)s)")
    add("--seed", type=int, default=0, help="seeds the deals and the agents (default: %(default)s)")
    add("--rules", nargs="*", default=None, metavar="[PRESET] KEY=VALUE",
        help="the rules to play under: a preset (hollywood, eaai, openspiel, classic) and/or options, e.g. eaai "
             "knock_limit=5 (default: the rules the agents were trained under, hollywood if none records any; "
             "see docs/RULES.md)")
    add_import_option(parser, "your agents' or networks' code; Ray workers import it too")
    add("--json", metavar="PATH", help="also write the report as JSON to PATH (default: no JSON)")
    add("--no-progress", action="store_true", help="hide the progress bar (default: shown)")
    add("--threads", type=int, default=DEFAULT_TORCH_THREADS, help="torch threads of the agents while they act (in "
        f"each worker), 1 to {MAX_TORCH_THREADS}; more than one oversubscribes a busy small machine (default: "
        "%(default)s)")
    add("--env-threads", type=int, default=None, metavar="N", help="threads of the engine and the heuristics in this "
        "process (or in each worker); the results are the same for every N (default: the CPUs it may use)")
    add("--workers", type=int, default=1, help="chunks played at once as Ray tasks (needs the [ray] extra); 1 plays "
        "them here without Ray; the results are the same (default: %(default)s)")
    add("--ray-address", metavar="ADDRESS", help="join this running Ray cluster, e.g. 10.0.0.1:6379 (default: start "
        "a local Ray with --workers CPUs)")
    add("--chunk-matches", type=int, default=CHUNK_MATCHES, metavar="N", help="matches per chunk, even; agents are "
        "reseeded per chunk, so random agents' results depend on it (default: %(default)s)")
    add("--chunk-timeout", type=float, default=600.0, metavar="SECONDS",
        help="stop if a chunk on Ray gives no result this long after it was sent (default: %(default)s)")
    add("--retries", type=int, default=2, help="reruns of a chunk whose Ray worker died (default: %(default)s)")
    # fmt: on
    return parser


def _interrupted(args: argparse.Namespace, rules: Rules, finished: list[dict[str, Any]]) -> int:
    """After Ctrl-C: the finished pairs' lines, one line on stderr, status 130."""
    total = len(args.agents) * (len(args.agents) - 1) // 2
    if finished:
        partial = {"matches_per_pair": args.matches, "seed": args.seed, "rules_summary": rules.describe()}
        print(format_report({**partial, "pairs": finished, "ratings": []}))
    print(
        f"interrupted: {len(finished)} of {total} pairs finished (shown above); no ratings"
        f"{' and no JSON' if args.json else ''} written",
        file=sys.stderr,
    )
    return 130


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """The `hollywood-gin evaluate` command line (`prog`: how it was typed); returns the exit status (1 when the run
    fails, 130 after Ctrl-C)."""
    parser = _parser(prog)
    args = parser.parse_args(argv)
    if args.chunk_matches > MAX_CHUNK_MATCHES:  # Schedule checks the low end (positive, even)
        parser.error(
            f"--chunk-matches={args.chunk_matches} is over the limit of {MAX_CHUNK_MATCHES:,}: a chunk's matches are "
            "played at once, in memory"
        )
    names, specs = zip(*(parse_agent_arg(item) for item in args.agents), strict=True)
    finished: list[dict[str, Any]] = []
    rules = Rules()
    try:
        if args.json:
            check_writable(args.json)
        import_modules(args.imports)
        schedule = Schedule(
            args.workers,
            args.ray_address,
            args.chunk_matches,
            args.chunk_timeout,
            args.retries,
            args.threads,
            env_threads=args.env_threads,
            imports=tuple(args.imports),
        )
        if args.workers > 1 and args.ray_address is None:  # a local Ray: what this machine holds
            check_local_workers(args.workers, "--workers")
        duplicate_deals(args.matches, args.seed, 0, 2)  # the match count and the seed, before any agent is built
        rules = agents_rules(specs, None if args.rules is None else Rules.from_strings(args.rules), args.threads)
        report = round_robin(
            list(specs),
            args.matches,
            args.seed,
            rules,
            progress=not args.no_progress,
            on_pair=finished.append,
            schedule=schedule,
            names=list(names),
        )
    except (ValueError, FileNotFoundError) as error:
        parser.error(str(error))
    except EvaluationError as error:
        print(printable_message(f"{prog}: evaluation stopped: {error}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return _interrupted(args, rules, finished)
    print(format_report(report))
    if args.json:
        try:
            atomic_write_text(args.json, json.dumps(report, indent=2))
        except AtomicWriteError as error:  # a full disk: the report above stands, its message says what was kept
            print(printable_message(f"{prog}: {error}"), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":  # python -m hollywood_gin_env.evaluation.evaluate
    try:
        code = main(prog="python -m hollywood_gin_env.evaluation.evaluate")
    except KeyboardInterrupt:  # Ctrl-C before the run; main() handles it during the run
        print("interrupted", file=sys.stderr)
        code = 130
    raise SystemExit(code)
