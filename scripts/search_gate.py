"""The search's position gate: does search over a belief choose better than the shipped bot, at the bot's own
decisions against `expert`, rated by play-outs from the true state?

Run: `python scripts/search_gate.py --positions 100 --seed 13 --budget 1000` (docs/EVALUATION.md has the figures).
With `--out` the report is written after every chunk of positions, and `--resume` goes on from it (the same options
required: the positions and their seeds are those of one whole run, so the records are too). `--positions` may grow
on resuming: a run's positions are the first of any longer run's (the matches and draws that find them do not depend
on how many are wanted), so a gate can be extended a session at a time. `--kinds discard` (or `knock-legal`) plays
only that kind's positions, e.g. to go on with the one kind whose gate is still open; each record keeps its
position's index, so its figures are those a run of both kinds gives at that position.

Positions: the bot's discard-phase decisions in its matches against `expert` (belief_probe.collect: every
knock-legal one and a share of the others, `--positions` of each kind, from `--seed`). Candidates: the bot's action
first, then `expert`'s, the legal knock with the least deadwood and `expert`'s `--candidates` best discards
(search.candidate_table). Every play-out plays a candidate and then the hand to its end with the bot playing its
own seat and `expert` the opponent's (`rollout_scores` with `opponent`); its value is the hand's points for the bot
(won +, lost -, dead 0). At each position:

- labels: `--labels` play-outs of each candidate from the true state: the opponent's true hand, the stock's order
  drawn afresh each time (neither player knows it), the same orders for every candidate.
- each belief: `--budget` play-outs of each candidate on deals drawn from it (the opponent's hand from the belief,
  the rest of the unseen cards as the stock in a random order), the same deals for every candidate. The search
  plays the candidate with the best mean if it beats the bot's action by more than z standard errors of their
  paired differences (search.confident_best), for each z of `--z`. Beliefs: `tilted` (the search agent's default,
  tilt 0.25), `expert` (agents/belief.py, model=expert, its measured options unless `--particles`, `--eps`,
  `--moves`, `--final-eps` say otherwise: opponent-specific, the model of this very opponent), `true` (the true
  hand with other stock orders than the labels': the ceiling no belief passes, what knowing the opponent's hand would
  give), `self` (model=self: the bot's own policy as the model of the opponent, `--self-eps`, `--self-moves`:
  the belief the issue asks for against any opponent; its play-outs still let `expert` play the opponent) and
  `self-bot` (the same belief, the same deals, and the bot playing the opponent in the play-outs as well: what
  `search:belief=self,policy=bot,base=bot,decisions=discard` does, knowing nothing of `expert`). A belief's deals
  are seeded by its place in `--beliefs`.

The gain of a choice is its candidate's label minus the bot's action's label (0 where the search keeps the bot's
action); printed per kind and belief with its standard error over positions, and the share of positions where the
search changed the bot's choice. The issue's gate: about +0.3 points at knock-legal decisions, +0.1 at discards.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from belief_probe import (  # scripts/ is on the path when run as a script
    KINDS,
    Position,
    collect,
    summarise,
)

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.agents.belief import (
    MAX_MOVES,
    MEASURED,
    belief_with_retries,
    check_belief_options,
    check_final_eps,
    draw_hands,
)
from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS
from hollywood_gin_env.agents.search import (
    candidate_table,
    confident_best,
    consistent,
    deal_all,
    put_first,
    rollout_scores,
)
from hollywood_gin_env.atomic import atomic_write_text
from hollywood_gin_env.observation import O_SEAT
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.state import EngineState
from hollywood_gin_env.threads import pool

BELIEFS = ("tilted", "expert", "true", "self", "self-bot")
#: The beliefs whose play-outs let the bot play the opponent's seat too (the others: `expert`, the true opponent).
BOT_PLAYS_OPPONENT = ("self-bot",)
TILT = 0.25


def deal_seed(seed: int, position: int, part: int) -> np.uint64:
    """The stock-order seed of one position's labels (part 0) or one belief's deals (part 1 + its index)."""
    mixed = np.random.SeedSequence([seed, position, part]).generate_state(2, dtype=np.uint32)
    return np.uint64(int(mixed[0]) | (int(mixed[1]) << 32))


def belief_hands(name: str, position: Position, count: int, seed: int, options: dict) -> np.ndarray | None:
    """`count` opponent hands from the belief `name` (None for `tilted`: the search's own deal draws them); the
    expert and self beliefs with options[name] (sample_belief's)."""
    if name == "true":
        return np.full(count, position.true_hand, dtype=np.int64)
    if name in ("expert", "self"):
        belief, _ = belief_with_retries(position.history, seed, **options[name])
        hands, _ = draw_hands(belief, count, seed=seed)
        return hands.astype(np.int64)
    return None


def play(parts: list[tuple], cands: np.ndarray, counts: np.ndarray, bot, params, threads) -> list:
    """Values (candidates x deals) of every part: (row, observation, seed, tilt, hands or None, deals, the agent
    that plays the opponent's seat), the parts with the same opponent played out together."""
    out: list = [None] * len(parts)
    for opponent in {id(part[6]): part[6] for part in parts}.values():
        mine = [k for k, part in enumerate(parts) if part[6] is opponent]
        values = play_against([parts[k] for k in mine], cands, counts, bot, opponent, params, threads)
        for k, value in zip(mine, values, strict=True):
            out[k] = value
    return out


def play_against(parts: list[tuple], cands: np.ndarray, counts: np.ndarray, bot, opponent, params, threads) -> list:
    """`play`'s values of parts that share one opponent."""
    sizes = [int(counts[row]) * deals for row, _, _, _, _, deals, _ in parts]
    state = EngineState.allocate(sum(sizes))
    arrays, firsts, seats, start = state.arrays(), np.zeros(sum(sizes), dtype=np.int64), np.zeros(sum(sizes)), 0
    for (row, obs, seed, tilt, hands, deals, _), size in zip(parts, sizes, strict=True):
        view = tuple(a[start : start + size] for a in arrays)
        n = int(counts[row])
        rollout_of = np.tile(np.arange(deals), n)  # candidate-major: the same deals for every candidate
        given = None if hands is None else np.tile(hands, n)
        with np.errstate(over="ignore"):
            deal_all(obs[None], np.zeros(size, dtype=np.int64), rollout_of, np.array([seed]), tilt, view, params, given)
        firsts[start : start + size] = np.repeat(cands[row, :n], deals)
        seats[start : start + size] = int(round(obs[O_SEAT]))
        start += size
    values = rollout_scores(arrays, firsts, seats.astype(np.int64), bot, params, threads, opponent=opponent)
    out, start = [], 0
    for (row, _, _, _, _, deals, _), size in zip(parts, sizes, strict=True):
        out.append(values[start : start + size].reshape(int(counts[row]), deals))
        start += size
    return out


def chosen(parser: argparse.ArgumentParser, option: str, value: str, allowed: tuple[str, ...]) -> list[str]:
    """The names of a comma-separated option, or a parser error naming the value and the allowed names."""
    names = [n for n in value.split(",") if n]
    if not names or any(n not in allowed for n in names):
        parser.error(f"{option} {value!r}: use a comma-separated list of {', '.join(allowed)}")
    return names


def main() -> None:
    """Collect positions, label them, run the searches, print the gains (and write --out as JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=100, help="positions of each kind (default 100)")
    parser.add_argument("--seed", type=int, default=13, help="seed of the games and positions (default 13)")
    parser.add_argument("--search-seed", type=int, default=0, help="seed of the labels' and beliefs' deals")
    parser.add_argument("--labels", type=int, default=64, help="label play-outs per candidate (default 64)")
    parser.add_argument("--budget", type=int, default=1000, help="play-outs per candidate per belief (default 1000)")
    parser.add_argument("--true-budget", type=int, default=256, help="play-outs per candidate, belief true (256)")
    parser.add_argument("--candidates", type=int, default=3, help="expert's best discards added (default 3)")
    parser.add_argument("--z", default="0,1,2", help="comma-separated confidence gates (default 0,1,2)")
    parser.add_argument("--beliefs", default=",".join(BELIEFS), help=f"comma-separated, of {', '.join(BELIEFS)}")
    parser.add_argument("--particles", type=int, default=MEASURED["particles"], help="the expert belief's particles")
    parser.add_argument("--eps", type=float, default=MEASURED["eps"], help="the expert belief's eps")
    parser.add_argument("--moves", type=int, default=MEASURED["moves"], help="the expert belief's Metropolis moves")
    parser.add_argument("--final-eps", type=float, help="temper the expert belief's eps to this over its moves")
    parser.add_argument("--self-eps", type=float, default=0.1, help="the self belief's eps (default 0.1)")
    parser.add_argument("--self-moves", type=int, default=16, help="the self belief's moves (default 16)")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated, of {', '.join(KINDS)} (both)")
    parser.add_argument("--chunk", type=int, default=2, help="positions played out at once (default 2)")
    parser.add_argument("--threads", type=int, default=2, help="kernel threads (default 2)")
    parser.add_argument("--out", help="write the per-position figures as JSON here")
    parser.add_argument("--resume", action="store_true", help="go on from the positions --out already holds")
    parser.add_argument("--report-only", action="store_true", help="print the figures of --out's report; no play")
    args = parser.parse_args()
    if args.report_only:
        try:
            report = read_report(args.out)
        except ValueError as error:
            parser.error(str(error))
        beliefs, zs = report_cells(report)
        print_report(report, beliefs, zs)
        return
    zs = [float(z) for z in args.z.split(",")]
    beliefs = chosen(parser, "--beliefs", args.beliefs, BELIEFS)
    kinds = chosen(parser, "--kinds", args.kinds, KINDS)
    for name in ("positions", "labels", "budget", "true_budget", "chunk", "threads"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} {getattr(args, name)}: use a whole number of at least 1")
    expert = {"model": "expert", "particles": args.particles, "eps": args.eps, "moves": args.moves}
    expert["final_eps"] = args.final_eps
    try:
        check_belief_options("expert", args.particles, args.eps)
        check_belief_options("self", args.particles, args.self_eps)
        if args.final_eps is not None:
            check_final_eps(args.final_eps, args.eps, "expert", args.moves)
    except ValueError as error:
        parser.error(str(error))
    for name in ("moves", "self_moves"):
        if not 0 <= getattr(args, name) <= MAX_MOVES:
            parser.error(f"--{name.replace('_', '-')} {getattr(args, name)}: use a whole number in 0..{MAX_MOVES}")
    records, seconds, before = [], {"labels": 0.0, "belief expert": 0.0, "play-outs": 0.0}, 0.0
    if args.resume:
        try:
            records, seconds, before = resumed(args)
        except ValueError as error:
            parser.error(str(error))
        print(f"resuming after {len(records)} positions of {args.out}", flush=True)
    start = time.perf_counter()
    found = collect("bot", args.positions, args.seed, 32, 0.1)
    positions = [p for pair in zip(*([p for p in found if p.kind == k] for k in KINDS), strict=True) for p in pair]
    print(f"{len(positions)} positions in {time.perf_counter() - start:.1f} s of play (seed {args.seed})", flush=True)
    done = {position_index(j, r) for j, r in enumerate(records)}
    if done and max(done) >= len(positions):
        parser.error(
            f"--positions {args.positions}: {args.out} already holds position {max(done)}; use at least "
            f"{max(done) // 2 + 1}"
        )
    todo = [i for i, p in enumerate(positions) if i not in done and p.kind in kinds]
    params, threads = Rules().to_params(), pool(args.threads)
    bot, opponent = load_agent("bot", num_threads=args.threads), load_agent("expert", num_threads=args.threads)
    own = {"model": "self", "particles": args.particles, "eps": args.self_eps, "moves": args.self_moves}
    options = {"expert": expert, "self": {**own, "policy": bot.probabilities}}
    obs = np.stack([p.obs for p in positions])
    masks = np.stack([p.mask for p in positions])
    cands, counts, ok = candidate_table(obs, masks, args.candidates, DEFAULT_WEIGHTS)
    put_first(cands, counts, np.array([p.action for p in positions], dtype=np.int64))
    if not ok.all():
        raise AssertionError("a position's unseen cards do not add up")
    for lo in range(0, len(todo), args.chunk):
        parts, owners = [], []
        for i in todo[lo : lo + args.chunk]:
            position = positions[i]
            if not consistent(position.obs):
                raise AssertionError(f"position {i}: the observation's unseen cards do not add up")
            label_hands = np.full(args.labels, position.true_hand, dtype=np.int64)
            seed = deal_seed(args.search_seed, i, 0)
            parts.append((i, position.obs, seed, 0.0, label_hands, args.labels, opponent))
            owners.append((i, "labels"))
            drawn: dict[str, np.ndarray | None] = {}  # self and self-bot share one belief (the same options and seed)
            for b, name in enumerate(beliefs):
                deals = args.true_budget if name == "true" else args.budget
                model = "self" if name == "self-bot" else name
                t0 = time.perf_counter()
                if model not in drawn:
                    drawn[model] = belief_hands(model, position, deals, args.search_seed * 1_000_003 + i, options)
                seconds[f"belief {model}"] = seconds.get(f"belief {model}", 0.0) + time.perf_counter() - t0
                against = bot if name in BOT_PLAYS_OPPONENT else opponent
                parts.append(
                    (i, position.obs, deal_seed(args.search_seed, i, 1 + b), TILT, drawn[model], deals, against)
                )
                owners.append((i, name))
        t0 = time.perf_counter()
        values = play(parts, cands, counts, bot, params, threads)
        seconds["play-outs"] += time.perf_counter() - t0
        by_position: dict[int, dict[str, np.ndarray]] = {}
        for (i, name), v in zip(owners, values, strict=True):
            by_position.setdefault(i, {})[name] = v
        for i, table in by_position.items():
            label = table["labels"].mean(axis=1)
            record = {"position": i, "kind": positions[i].kind, "candidates": int(counts[i]), "labels": label.tolist()}
            record["actions"] = int(positions[i].history.events().shape[0])  # the hand's age at the decision
            for name in beliefs:
                for z in zs:
                    choice = confident_best(table[name], z)
                    record[f"{name}@{z:g}"] = float(label[choice] - label[0])
                    record[f"{name}@{z:g}/changed"] = choice != 0
            record["best label"] = float(label.max() - label[0])
            records.append(record)
        left = len(todo) - lo - len(by_position)
        print(f"{len(records)} positions done, {left} to go, {time.perf_counter() - start:.0f} s", flush=True)
        elapsed = before + time.perf_counter() - start
        report = {"args": vars(args), "seconds": seconds, "total_s": elapsed, "positions": records}
        if args.out:  # after every chunk, so a stopped run keeps what it measured
            atomic_write_text(args.out, json.dumps(report, indent=1, default=float))
    elapsed = before + time.perf_counter() - start
    print_report({"args": vars(args), "seconds": seconds, "total_s": elapsed, "positions": records}, beliefs, zs)


#: The options that do not change what a run measures: a run may go on with other values of them (`positions`: a
#: run's positions are the first of a longer run's; `kinds`: each position's figures are the same either way).
FREE_OPTIONS = ("positions", "kinds", "chunk", "threads", "out", "resume")


def position_index(place: int, record: dict) -> int:
    """The index of a record's position among the run's; records written before it was kept are in that order."""
    return int(record.get("position", place))


def resumed(args: argparse.Namespace) -> tuple[list, dict, float]:
    """(records, seconds, total_s) of the report at --out, written by a run with the same options (FREE_OPTIONS
    aside); ValueError naming what is missing or differs."""
    report = read_report(args.out, "--resume")
    records, seconds, total, earlier = report["positions"], report["seconds"], report["total_s"], report["args"]
    ours = {k: v for k, v in vars(args).items() if k not in FREE_OPTIONS}
    # An option the earlier run did not have yet ran at its default, the value that reproduces it.
    differs = sorted(k for k, v in ours.items() if k in earlier and earlier[k] != v)
    if differs:
        raise ValueError(f"--resume: {args.out} was written with other --{', --'.join(differs)}")
    return records, seconds, float(total)


def read_report(path: str | None, option: str = "--report-only") -> dict:
    """The report this script wrote at `path`; ValueError naming the option and what is wrong."""
    if not path:
        raise ValueError(f"{option}: give the report as --out")
    try:
        with open(path, encoding="utf-8") as handle:
            report = json.load(handle)
        records, seconds, total, args = report["positions"], report["seconds"], report["total_s"], report["args"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{option}: {path} is not a report of this script ({error})") from None
    shapes = (
        isinstance(records, list),
        isinstance(seconds, dict),
        isinstance(total, (int, float)),
        isinstance(args, dict),
    )
    if not all(shapes) or not all(isinstance(r, dict) and r.get("kind") in KINDS for r in records):
        raise ValueError(f"{option}: {path} is not a report of this script")
    return report


def report_cells(report: dict) -> tuple[list[str], list[float]]:
    """The beliefs and z values whose gains the report's records hold, in the order of the run's options."""
    args = report["args"]
    try:
        beliefs = [b for b in str(args["beliefs"]).split(",") if b in BELIEFS]
        zs = [float(z) for z in str(args["z"]).split(",")]
    except (KeyError, ValueError) as error:
        raise ValueError(f"the report's options are not this script's ({error})") from None
    if not all(f"{b}@{z:g}" in r for r in report["positions"] for b in beliefs for z in zs):
        raise ValueError("the report's records lack a gain its options name")
    return beliefs, zs


def print_report(report: dict, beliefs: list[str], zs: list[float]) -> None:
    """The gains per kind and belief (module docstring), adding each cell to the report."""
    records, seconds = report["positions"], report["seconds"]
    for kind in KINDS:
        rows = [r for r in records if r["kind"] == kind]
        if not rows:
            continue
        print(f"\n{kind}: {len(rows)} positions, {np.mean([r['candidates'] for r in rows]):.2f} candidates")
        print(f"{'search':<16} {'gain (points)':>18} {'changed':>8} {'gain where changed':>20}")
        best = summarise([r["best label"] for r in rows])
        print(f"{'best label':<16} {best[0]:>+9.3f} ± {best[1]:.3f} {'':>8}  (the labels' own best: biased up)")
        for name in beliefs:
            for z in zs:
                key = f"{name}@{z:g}"
                mean, error = summarise([r[key] for r in rows])
                changed = np.mean([r[f"{key}/changed"] for r in rows])
                # An unbiased search gains where it overrides the bot at z > 0; a loss there is its model's bias.
                where = summarise([r[key] for r in rows if r[f"{key}/changed"]])
                cell = {"gain": mean, "error": error, "changed": float(changed), "where changed": where}
                report[f"{kind}/{key}"] = cell
                print(f"{key:<16} {mean:>+9.3f} ± {error:.3f} {changed:>8.2f} {where[0]:>+11.3f} ± {where[1]:.3f}")
        print_by_age(rows, beliefs, max(zs))
    print(f"\ntotal {report['total_s']:.0f} s; " + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items()))


#: Bounds of the hand's age (actions of both players before the decision) that the gains are split by.
AGE_BOUNDS = (12, 24, 36)


def print_by_age(rows: list[dict], beliefs: list[str], z: float) -> None:
    """Each belief's gain at z by the hand's age at the decision (where in the hand the search's edge is)."""
    edges = (0, *AGE_BOUNDS, None)
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        part = [r for r in rows if r["actions"] >= lo and (hi is None or r["actions"] < hi)]
        if not part:
            continue
        span = f"actions {lo}+" if hi is None else f"actions {lo}-{hi - 1}"
        cells = []
        for name in beliefs:
            mean, error = summarise([r[f"{name}@{z:g}"] for r in part])
            cells.append(f"{name}@{z:g} {mean:+.3f} ± {error:.3f}")
        print(f"  {span:<14} {len(part):>5} positions: " + "; ".join(cells))


if __name__ == "__main__":
    main()
