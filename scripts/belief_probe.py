"""Measure beliefs of the opponent's hidden cards on positions from the shipped bot's games against `expert`.

Run: `python scripts/belief_probe.py --positions 150 --seed 11 --belief-seed 0` (the bot plays seat 0 in even matches,
seat 1 in odd ones; every knock-legal discard decision of the bot and a share of its other discard decisions are
kept until there are `--positions` of each kind). At each position three beliefs are drawn: `uniform` (the search
agent's with tilt 0: the opponent's hidden cards drawn uniformly from the unseen ones), `tilted` (the search agent's
default, tilt 0.25) and `expert` (hollywood_gin_env/agents/belief.py with model=expert, one row per `--eps`). For each
it prints, per decision kind, with standard errors over positions:

- impossible: the weighted share of sampled opponent hands that `expert` could not hold, having discarded at least
  once this hand without knocking: deadwood 0, or above `expert`'s hold-for-gin limit (2) and at most the knock
  limit. The true hands' share is printed beside it (it should be about 0: the test is the right one).
- bits: the cross-entropy of the true hand under the belief's card marginals, per hidden card: with h the number of
  the opponent's hidden cards (not known taken), U the unseen cards and m_c the belief's chance that it holds card c,
  q_c = ((1 - s) m_c + s h / |U|) / h (a distribution over U; s = `--smooth`, a floor for cards no sample holds),
  bits = -mean over the true hidden cards of log2 q_c. The uniform belief's exact value is log2 |U|.
- deadwood: the belief's mean deadwood of the opponent's hand (its ten cards) against the true hand's.

Tune on one `--seed`, report on another: the games, the positions and the beliefs are deterministic for the seeds.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import NamedTuple

import numpy as np

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.agents.belief import belief_with_retries
from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS, W_GIN_HOLD
from hollywood_gin_env.agents.search import consistent, deal_all
from hollywood_gin_env.atomic import atomic_write_text
from hollywood_gin_env.cards import NUM_CARDS
from hollywood_gin_env.engine import Engine
from hollywood_gin_env.history import HandHistory, HistoryRecorder
from hollywood_gin_env.melds import min_deadwood_mask
from hollywood_gin_env.observation import O_OPP_DISCARDED, O_OPP_TOOK, O_SEAT, O_UNSEEN, OBS_SIZE, encode_rows
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.state import KNOCK_BASE, M_PHASE, NUM_ACTIONS, PHASE_DISCARD, EngineState
from hollywood_gin_env.threads import pool

KINDS = ("knock-legal", "discard")
COUNTS = ("unexplained", "retries")  # per-position counts, not figures to average
DEFAULT_BOT = "bot"  # the shipped bot (hollywood_gin_env/data/hollywood-ppo.pt)


class Position(NamedTuple):
    """One decision of the bot: what it saw, its legal actions and its choice, and the opponent's true hand."""

    kind: str
    history: HandHistory
    obs: np.ndarray
    true_hand: int
    mask: np.ndarray
    action: int


def deadwoods(hands: np.ndarray) -> np.ndarray:
    """The minimum deadwood of each hand (card masks)."""
    return np.array([min_deadwood_mask(int(hand)) for hand in hands], dtype=np.int64)


def plane(obs: np.ndarray, offset: int) -> int:
    """Card mask of a 0/1 plane of an observation."""
    return int(sum(1 << c for c in np.flatnonzero(obs[offset : offset + NUM_CARDS] > 0.5)))


def collect(bot_spec: str, per_kind: int, seed: int, matches: int, discard_share: float) -> list[Position]:
    """`per_kind` positions of each kind from the bot's matches against expert (module docstring)."""
    rules = Rules()
    bot, expert = load_agent(bot_spec, seed=seed, num_threads=1), load_agent("expert", num_threads=1)
    engine = Engine(matches, rules, num_threads=1)
    next_seed = seed * 1_000_003
    engine.new_matches(seeds=np.arange(next_seed, next_seed + matches, dtype=np.uint64))
    next_seed += matches
    seats = np.arange(matches) % 2
    recorder = HistoryRecorder(engine, seats)
    threads = pool(1)
    rng = np.random.default_rng(seed)
    obs = np.zeros((matches, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((matches, NUM_ACTIONS), dtype=np.int8)
    found: dict[str, list[Position]] = {kind: [] for kind in KINDS}
    while min(len(v) for v in found.values()) < per_kind:
        players = engine.current_player.copy()
        live = ~engine.done
        encode_rows(threads, players, live, engine.arrays, engine.params, obs, mask)
        actions = np.zeros(matches, dtype=np.int64)
        mine = np.flatnonzero(live & (players == seats))
        theirs = np.flatnonzero(live & (players != seats))
        if mine.size:
            actions[mine] = bot.act(obs[mine], mask[mine])
        if theirs.size:
            actions[theirs] = expert.act(obs[theirs], mask[theirs])
        for m in mine:
            if engine.state.match[m, M_PHASE] != PHASE_DISCARD:
                continue
            kind = KINDS[0] if mask[m, KNOCK_BASE:].any() else KINDS[1]
            if (kind == KINDS[0] or rng.random() < discard_share) and len(found[kind]) < per_kind:
                true_hand = int(engine.state.hands[m, 1 - seats[m]])
                history, seen, legal = recorder.histories[m].copy(), obs[m].copy(), mask[m].copy()
                found[kind].append(Position(kind, history, seen, true_hand, legal, int(actions[m])))
        recorder.step(actions, live)
        done = engine.done.copy()
        if done.any():
            count = int(done.sum())
            engine.new_matches(done, seeds=_seeds_for(done, next_seed))
            next_seed += count
            recorder.begin(done)
    return found[KINDS[0]] + found[KINDS[1]]


def _seeds_for(selected: np.ndarray, start: int) -> np.ndarray:
    seeds = np.zeros(selected.size, dtype=np.uint64)
    seeds[selected] = np.arange(start, start + int(selected.sum()), dtype=np.uint64)
    return seeds


def search_belief(obs: np.ndarray, samples: int, tilt: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(opponent hands, weights) of the search agent's belief (search.determinise) at one observation."""
    state = EngineState.allocate(samples)
    rows = np.zeros(samples, dtype=np.int64)
    with np.errstate(over="ignore"):
        deal_all(obs[None], rows, np.arange(samples), np.array([seed], dtype=np.uint64), tilt, state.arrays(),
                 Rules().to_params())  # fmt: skip
    them = 1 - int(round(obs[O_SEAT]))
    return state.hands[:, them].copy(), np.full(samples, 1.0 / samples)


def measure(position: Position, hands: np.ndarray, weights: np.ndarray, smooths: list[float]) -> dict[str, float]:
    """impossible share, bits per hidden card (one per smoothing) and mean deadwood of one belief at one position."""
    obs = position.obs
    took, unseen = plane(obs, O_OPP_TOOK), plane(obs, O_UNSEEN)
    limit = Rules().knock_limit
    dw = deadwoods(hands)
    discarded = plane(obs, O_OPP_DISCARDED) != 0
    band = (dw == 0) | ((dw > DEFAULT_WEIGHTS[W_GIN_HOLD]) & (dw <= limit))
    out = {"impossible": float(weights @ band) if discarded else np.nan, "deadwood": float(weights @ dw)}
    cards = np.flatnonzero([(unseen >> c) & 1 for c in range(NUM_CARDS)])
    held = ((hands[:, None] >> cards[None, :]) & 1).astype(np.float64)
    marginal = weights @ held
    hidden = position.true_hand & ~took
    truth = np.array([(hidden >> int(c)) & 1 for c in cards], dtype=bool)
    h = int(truth.sum())
    bad = (hands & ~(unseen | took)) != 0
    out["card_inconsistent"] = float(weights @ bad)
    for s in smooths:
        q = ((1 - s) * marginal + s * h / cards.size) / h
        with np.errstate(divide="ignore"):
            out[f"bits@{s:g}"] = float(-np.log2(q[truth]).mean()) if h else np.nan
    return out


def summarise(values: list[float]) -> tuple[float, float]:
    """Mean and standard error, NaNs left out."""
    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return np.nan, np.nan
    return float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else np.nan


def main() -> None:
    """Collect positions, draw the beliefs, print the table (and write --out as JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=150, help="positions of each kind (default 150)")
    parser.add_argument("--seed", type=int, default=11, help="seed of the games and positions (default 11)")
    parser.add_argument("--belief-seed", type=int, default=0, help="seed of the beliefs' samples (default 0)")
    parser.add_argument("--particles", type=int, default=512, help="particles of the expert belief (default 512)")
    parser.add_argument("--eps", default="0.05", help="comma-separated eps values of the expert belief")
    parser.add_argument("--moves", type=int, default=8, help="Metropolis moves of the expert belief (default 8)")
    parser.add_argument("--final-eps", type=float, help="temper the expert belief's eps to this over its moves")
    parser.add_argument("--self-moves", type=int, default=0, help="Metropolis moves of the self row (default 0)")
    parser.add_argument("--self-eps", default="", help="comma-separated eps values of a model=self row (the bot)")
    parser.add_argument("--samples", type=int, default=512, help="samples of the uniform and tilted beliefs")
    parser.add_argument("--tilt", type=float, default=0.25, help="the tilted belief's tilt (default 0.25)")
    parser.add_argument("--smooth", default="0.02", help="comma-separated floors s of the bits (default 0.02)")
    parser.add_argument("--bot", default=DEFAULT_BOT, help=f"the bot's agent spec (default {DEFAULT_BOT})")
    parser.add_argument("--matches", type=int, default=32, help="matches played at once (default 32)")
    parser.add_argument("--discard-share", type=float, default=0.1, help="share of plain discards kept (0.1)")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    eps_values = [float(e) for e in args.eps.split(",") if e]
    smooths = [float(s) for s in args.smooth.split(",")]
    start = time.perf_counter()
    positions = collect(args.bot, args.positions, args.seed, args.matches, args.discard_share)
    played = time.perf_counter() - start
    print(f"{len(positions)} positions in {played:.1f} s of play (seed {args.seed})")
    self_eps = [float(e) for e in args.self_eps.split(",") if e]
    tempered = "" if args.final_eps is None else f">{args.final_eps:g}"
    models = [("expert", e, f"expert eps={e:g}{tempered} m{args.moves}") for e in eps_values] + [
        ("self", e, f"self eps={e:g} m{args.self_moves}") for e in self_eps
    ]
    beliefs = ["true", "uniform", f"tilted {args.tilt:g}"] + [name for _, _, name in models]
    policy = load_agent(args.bot, num_threads=1).probabilities if self_eps else None
    rows: dict[tuple[str, str], list[dict[str, float]]] = {(k, b): [] for k in KINDS for b in beliefs}
    seconds = dict.fromkeys(beliefs, 0.0)
    for i, position in enumerate(positions):
        if not consistent(position.obs):
            raise AssertionError(f"position {i}: the observation's unseen cards do not add up")
        seed = args.belief_seed * 1_000_003 + i
        rows[position.kind, "true"].append(measure(position, np.array([position.true_hand]), np.ones(1), smooths))
        for name, tilt in (("uniform", 0.0), (beliefs[2], args.tilt)):
            t0 = time.perf_counter()
            hands, weights = search_belief(position.obs, args.samples, tilt, seed)
            seconds[name] += time.perf_counter() - t0
            rows[position.kind, name].append(measure(position, hands, weights, smooths))
        for model, eps, name in models:
            t0 = time.perf_counter()
            given = policy if model == "self" else None
            moves = args.moves if model == "expert" else args.self_moves
            final_eps = args.final_eps if model == "expert" else None
            belief, retries = belief_with_retries(
                position.history, seed, model=model, particles=args.particles, eps=eps, policy=given, moves=moves,
                final_eps=final_eps,
            )  # fmt: skip
            seconds[name] += time.perf_counter() - t0
            figures = measure(position, belief.hands, belief.weights, smooths)
            figures["unexplained"], figures["retries"] = belief.unexplained, retries
            figures["mismatched"] = float(belief.weights @ (belief.mismatches > 0))  # expert: 0 for an exact belief
            rows[position.kind, name].append(figures)
    report = {"args": vars(args), "play_s": played, "total_s": time.perf_counter() - start, "seconds": seconds}
    for kind in KINDS:
        count = len(rows[kind, "true"])
        print(f"\n{kind}: {count} positions")
        print(f"{'belief':<18} {'impossible':>16} " + " ".join(f"{'bits@' + f'{s:g}':>16}" for s in smooths)
              + f" {'deadwood':>14} {'s/position':>10}")  # fmt: skip
        for name in beliefs:
            table = rows[kind, name]
            cells = {key: summarise([r[key] for r in table]) for key in table[0] if key not in COUNTS}
            report[f"{kind}/{name}"] = cells
            line = f"{name:<18} {_cell(cells['impossible'], 3):>16} "
            line += " ".join(f"{_cell(cells[f'bits@{s:g}'], 3):>16}" for s in smooths)
            line += f" {_cell(cells['deadwood'], 2):>14} {seconds[name] / max(len(positions), 1):>10.3f}"
            if "mismatched" in cells:
                line += f"  mismatched {_cell(cells['mismatched'], 3)}"
            if cells["card_inconsistent"][0] > 0:
                line += f"  card-inconsistent {cells['card_inconsistent'][0]:.4f}"
            retried = sum(r.get("retries", 0) > 0 for r in table)
            print(line + (f"  ({retried} positions retried with more particles)" if retried else ""))
        for name in beliefs[1:]:
            pairs = zip(rows[kind, name], rows[kind, "true"], strict=True)
            diffs = [r["deadwood"] - t["deadwood"] for r, t in pairs]
            report[f"{kind}/{name}"]["deadwood_minus_true"] = summarise(diffs)
            print(f"{name} deadwood minus true: {_cell(summarise(diffs), 2)}")
    print(f"\ntotal {report['total_s']:.1f} s")
    if args.out:
        atomic_write_text(args.out, json.dumps(report, indent=1, default=float))


def _cell(pair: tuple[float, float], digits: int) -> str:
    mean, error = pair
    return f"{mean:.{digits}f} ± {error:.{digits}f}"


if __name__ == "__main__":
    main()
