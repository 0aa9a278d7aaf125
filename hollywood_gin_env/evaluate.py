"""Benchmark agents: a round robin of full Hollywood matches with duplicate deals, batched through `Engine`.

Duplicate deals: matches 2j and 2j+1 of a pair get the same seed and the same first dealer, and agent A
sits in seat 0 in match 2j and in seat 1 in match 2j+1. The engine draws every shuffle from the match's
seeded stream and from nothing else, so hand k of both matches is dealt from the same deck: the first
hand is exactly mirrored (each seat gets the same cards, so A holds in one match what B holds in the
other). From hand 2 on the winner deals (R30), so the two matches deal hand k from the same deck to the
same seats only while they agree on who deals; they also differ in score and length. No deal sequence
can stay exact once the play differs, so this is the closest mirror the rules allow.

Illegal actions: an action outside the mask (or outside 0..106) is counted against its agent and
replaced by the lowest-numbered legal action, so the run goes on; the counts are in the table and JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
from tqdm import tqdm

from hollywood_gin_env.agents import AgentProtocol, load_agent
from hollywood_gin_env.atomic import atomic_write_text
from hollywood_gin_env.engine import Engine, as_actions
from hollywood_gin_env.observation import OBS_SIZE, encode_kernel
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.scoring import KIND_DEAD, KIND_GIN, KIND_KNOCK, KIND_UNDERCUT
from hollywood_gin_env.state import M_WINNER, NUM_ACTIONS, R_KIND, R_KNOCKER, R_POINTS, R_TURNS, R_WINNER

Z95 = 1.959963984540054
ELO_PER_NAT = 400.0 / np.log(10.0)
ILLEGAL_POLICY = "counted, and replaced by the lowest-numbered legal action"


@dataclass
class PairRecord:
    """Raw results of one pair, from agent A's side (A = `agent_a`)."""

    agent_a: str
    agent_b: str
    a_won: np.ndarray  # bool[M]: A won match m
    games: np.ndarray  # int64[M, 2]: games won by A and by B
    hands: np.ndarray  # int64[H, 5]: kind, winner (1 A, 0 B, -1 dead), knocker (1 A, 0 B, -1), A's net points, turns
    illegal: list[int] = field(default_factory=lambda: [0, 0])  # illegal actions of A and B
    decisions: list[int] = field(default_factory=lambda: [0, 0])
    seconds: float = 0.0


def duplicate_deals(num_matches: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(seeds, first dealers, A's seat) per match: matches 2j and 2j+1 share a deal sequence, seats swapped."""
    if num_matches < 2 or num_matches % 2:
        raise ValueError(f"matches={num_matches} must be a positive even number (duplicate pairs)")
    rng = np.random.default_rng(seed)
    deal_seeds = rng.integers(0, 2**63, size=num_matches // 2, dtype=np.int64).astype(np.uint64)
    dealers = rng.integers(0, 2, size=num_matches // 2, dtype=np.int64)
    seat_a = np.tile(np.array([0, 1], dtype=np.int64), num_matches // 2)
    return np.repeat(deal_seeds, 2), np.repeat(dealers, 2), seat_a


def _choose(agent: AgentProtocol, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, int]:
    """The agent's actions for a batch with illegal ones replaced (see module docstring); their count."""
    actions = np.asarray(agent.act(obs, masks))
    if actions.shape != (obs.shape[0],):
        raise ValueError(f"agent {agent.name!r} returned actions of shape {actions.shape}, expected ({obs.shape[0]},)")
    actions = as_actions(actions, obs.shape[0], f"the actions of agent {agent.name!r}").copy()  # no float casts
    ok = (actions >= 0) & (actions < NUM_ACTIONS)
    ok[ok] = masks[np.flatnonzero(ok), actions[ok]] == 1
    if not ok.all():
        actions[~ok] = np.argmax(masks[~ok], axis=1)
    return actions, int((~ok).sum())


def _hand_rows(engine: Engine, ended: np.ndarray, seat_a: np.ndarray) -> np.ndarray:
    """One row per hand that just ended (see PairRecord.hands)."""
    last, a = engine.state.last_hand[ended], seat_a[ended]
    winner, knocker = last[:, R_WINNER], last[:, R_KNOCKER]
    winner_side = np.where(winner < 0, -1, (winner == a).astype(np.int64))
    knocker_side = np.where(knocker < 0, -1, (knocker == a).astype(np.int64))
    points = np.where(winner < 0, 0, np.where(winner == a, 1, -1) * last[:, R_POINTS])
    return np.stack([last[:, R_KIND], winner_side, knocker_side, points, last[:, R_TURNS]], axis=1)


class _Table:
    """The batch being played: the engine, A's seats, and the observation/action buffers."""

    def __init__(self, num_matches: int, seed: int, rules: Rules | None) -> None:
        seeds, dealers, self.seat_a = duplicate_deals(num_matches, seed)
        self.engine = Engine(num_matches, rules)
        self.engine.new_matches(seeds=seeds, first_dealers=dealers)
        self.obs = np.zeros((num_matches, OBS_SIZE), dtype=np.float32)
        self.masks = np.zeros((num_matches, NUM_ACTIONS), dtype=np.int8)
        self.actions = np.zeros(num_matches, dtype=np.int64)

    def step(self, agents: tuple[AgentProtocol, AgentProtocol], record: PairRecord) -> np.ndarray:
        """Every unfinished match takes one action of its player to act; returns the rows of hands that ended."""
        engine, active = self.engine, ~self.engine.done
        players = engine.current_player.copy()
        encode_kernel(players, active, engine.arrays, engine.params, self.obs, self.masks)
        for side, agent in enumerate(agents):
            rows = np.flatnonzero(active & ((players == self.seat_a) == (side == 0)))
            if rows.size:
                self.actions[rows], bad = _choose(agent, self.obs[rows], self.masks[rows])
                record.illegal[side] += bad
                record.decisions[side] += rows.size
        engine.step(self.actions, active)
        if engine.illegal[active].any():  # every action was checked against the mask above
            raise RuntimeError("the engine refused an action its own legal mask allowed")
        return _hand_rows(engine, engine.hand_over & active, self.seat_a)


def play_pair(agent_a: AgentProtocol, agent_b: AgentProtocol, num_matches: int, seed: int = 0,
              rules: Rules | None = None, progress: bool = False) -> PairRecord:  # fmt: skip
    """Play num_matches full matches (duplicate pairs) of A against B, all batched in one `Engine`."""
    start = time.perf_counter()
    table = _Table(num_matches, seed, rules)
    engine, seat_a = table.engine, table.seat_a
    record = PairRecord(agent_a.name, agent_b.name, np.zeros(0, bool), np.zeros((0, 2), np.int64), np.zeros((0, 5)))
    hands, desc = [], f"{agent_a.name} vs {agent_b.name}"
    with tqdm(total=num_matches, desc=desc, disable=not progress, leave=False, mininterval=0.5) as bar:
        while not engine.done.all():
            hands.append(table.step((agent_a, agent_b), record))
            bar.update(int(engine.done.sum()) - bar.n)
    game_winner = engine.state.game_winner[:, : engine.rules.num_games]
    record.a_won = engine.state.match[:, M_WINNER] == seat_a
    record.games = np.stack([(game_winner == seat_a[:, None]).sum(1), (game_winner == 1 - seat_a[:, None]).sum(1)], 1)
    record.hands = np.concatenate(hands) if hands else np.zeros((0, 5), dtype=np.int64)
    record.seconds = time.perf_counter() - start
    return record


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (95% by default)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, float(centre - half)), min(1.0, float(centre + half))


def bradley_terry(wins: np.ndarray, prior: float = 1.0, iters: int = 10000) -> tuple[np.ndarray, np.ndarray]:
    """Bradley–Terry ratings on the Elo scale (mean 0) and their standard errors, from wins[i, j].

    Fitted by Hunter's MM algorithm; `prior` virtual games, split evenly, are added to every pair that
    played (so a clean sweep stays finite). Errors come from the Fisher information (pseudo-inverse).
    """
    wins = np.asarray(wins, dtype=np.float64)
    played = (wins + wins.T) > 0
    w = wins + np.where(played, prior / 2.0, 0.0)
    n = w + w.T
    strength = np.ones(len(w))
    for _ in range(iters):
        denom = (n / (strength[:, None] + strength[None, :])).sum(axis=1)
        new = np.where(denom > 0, w.sum(axis=1) / np.maximum(denom, 1e-300), strength)
        new = np.exp(np.log(np.maximum(new, 1e-300)) - np.log(np.maximum(new, 1e-300)).mean())
        if np.max(np.abs(new - strength)) < 1e-13:
            strength = new
            break
        strength = new
    beta = np.log(strength)
    q = strength[:, None] / (strength[:, None] + strength[None, :])
    info = -n * q * q.T
    np.fill_diagonal(info, 0.0)
    np.fill_diagonal(info, -info.sum(axis=1))
    cov = np.linalg.pinv(info)
    return ELO_PER_NAT * (beta - beta.mean()), ELO_PER_NAT * np.sqrt(np.maximum(np.diag(cov), 0.0))


def summarize_pair(record: PairRecord) -> dict[str, Any]:
    """The per-pair figures of the report (module docstring of evaluate.py, README)."""
    m, hands = len(record.a_won), record.hands
    kind, winner, knocker, points, turns = (hands[:, k] for k in range(5))
    n_hands = max(len(hands), 1)
    scored = winner >= 0
    a_wins = int(record.a_won.sum())
    lo, hi = wilson_interval(a_wins, m)
    rate = lambda sel: float(sel.sum() / n_hands)  # noqa: E731
    games = record.games.sum(axis=0)
    return {
        "agent_a": record.agent_a, "agent_b": record.agent_b, "matches": m,
        "match_wins_a": a_wins, "match_win_rate": a_wins / m, "match_win_ci95": [lo, hi],
        "game_win_rate": float(games[0] / max(games.sum(), 1)),
        "hands": int(len(hands)), "hands_per_match": len(hands) / m,
        "hand_win_rate": float((winner[scored] == 1).mean()) if scored.any() else 0.0,
        "points_per_hand": float(points.mean()) if len(hands) else 0.0,
        "points_per_hand_se": float(points.std(ddof=1) / np.sqrt(len(hands))) if len(hands) > 1 else 0.0,
        "gin_rate": [rate((kind == KIND_GIN) & (knocker == s)) for s in (1, 0)],
        "knock_rate": [rate(np.isin(kind, (KIND_KNOCK, KIND_UNDERCUT)) & (knocker == s)) for s in (1, 0)],
        "undercut_rate": [rate((kind == KIND_UNDERCUT) & (winner == s)) for s in (1, 0)],
        "dead_hands": int((kind == KIND_DEAD).sum()), "dead_hand_rate": rate(kind == KIND_DEAD),
        "turns_per_hand": float(turns.mean()) if len(hands) else 0.0,
        "illegal_actions": list(record.illegal), "decisions": list(record.decisions),
        "seconds": round(record.seconds, 2),
    }  # fmt: skip


def _fresh(spec: str | AgentProtocol, seed: int) -> AgentProtocol:
    """The agent of a spec, reseeded (so each pair is reproducible on its own)."""
    agent = load_agent(spec)
    if hasattr(agent, "reset"):
        agent.reset(seed)
    return agent


def round_robin(specs: list[str | AgentProtocol], num_matches: int, seed: int = 0, rules: Rules | None = None,
                progress: bool = False, on_pair: Callable[[dict[str, Any]], object] | None = None,
                ) -> dict[str, Any]:  # fmt: skip
    """Every pair of agents plays num_matches duplicate matches; returns the report dict (see `--json`).

    `on_pair(summary)` is called as each pair finishes (the CLI keeps them to print after a Ctrl-C).
    """
    if len(specs) < 2:
        raise ValueError("a round robin needs at least two agents")
    rules = rules if rules is not None else Rules()
    names, pairs = [load_agent(spec).name for spec in specs], []
    if len(set(names)) != len(names):
        raise ValueError(f"agent names must differ, got {names}")
    wins = np.zeros((len(specs), len(specs)))
    for k, (i, j) in enumerate(combinations(range(len(specs)), 2)):
        seed_a, seed_b = (int(s) for s in np.random.SeedSequence([seed, k]).generate_state(2))
        agent_a, agent_b = _fresh(specs[i], seed_a), _fresh(specs[j], seed_b)
        summary = summarize_pair(play_pair(agent_a, agent_b, num_matches, seed, rules, progress))
        wins[i, j], wins[j, i] = summary["match_wins_a"], num_matches - summary["match_wins_a"]
        pairs.append(summary)
        if on_pair is not None:
            on_pair(summary)
    ratings, errors = bradley_terry(wins)
    rated = [{"agent": name, "rating": float(r), "se": float(e), "ci95": [float(r - Z95 * e), float(r + Z95 * e)]}
             for name, r, e in zip(names, ratings, errors, strict=True)]  # fmt: skip
    return {
        "seed": seed, "matches_per_pair": num_matches, "rules": rules.to_dict(),
        "duplicate_deals": True, "illegal_action_policy": ILLEGAL_POLICY, "pairs": pairs, "ratings": rated,
        "rating_method": "Bradley-Terry on match wins (MM fit, 1 virtual game per pair), Elo scale, mean 0, "
                         "errors from the Fisher information",
    }  # fmt: skip


def format_report(report: dict[str, Any]) -> str:
    """The readable tables of a round-robin report."""
    head = (
        f"{'A vs B':<24}{'match win A [95% CI]':>24}{'game win':>10}{'hand win':>10}{'pts/hand A':>14}"
        f"{'gin A/B':>12}{'knock A/B':>12}{'undercut A/B':>14}{'dead':>6}{'turns':>6}{'illegal':>9}{'time':>7}"
    )
    lines = [f"{report['matches_per_pair']} matches per pair (duplicate deals), seed {report['seed']}", head]
    pct = lambda pair: "/".join(f"{100 * x:.1f}" for x in pair)  # noqa: E731
    for p in report["pairs"]:
        lo, hi = p["match_win_ci95"]
        win = f"{100 * p['match_win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
        points = f"{p['points_per_hand']:+.2f} ± {p['points_per_hand_se']:.2f}"
        illegal = "/".join(str(x) for x in p["illegal_actions"])
        lines.append(
            f"{p['agent_a'] + ' vs ' + p['agent_b']:<24}{win:>24}"
            f"{100 * p['game_win_rate']:>9.1f}%{100 * p['hand_win_rate']:>9.1f}%{points:>14}"
            f"{pct(p['gin_rate']):>12}{pct(p['knock_rate']):>12}{pct(p['undercut_rate']):>14}"
            f"{100 * p['dead_hand_rate']:>5.1f}%{p['turns_per_hand']:>6.1f}{illegal:>9}{p['seconds']:>6.0f}s"
        )
    if report["ratings"]:  # an interrupted run reports its finished pairs only, without ratings
        lines += ["", "rating (Bradley-Terry, Elo scale, mean 0)   95% interval"]
    for r in sorted(report["ratings"], key=lambda r: -r["rating"]):
        lines.append(f"  {r['agent']:<20}{r['rating']:>+8.0f}   [{r['ci95'][0]:+.0f}, {r['ci95'][1]:+.0f}]")
    if any(sum(p["illegal_actions"]) for p in report["pairs"]):
        lines.append(f"WARNING: illegal actions were {ILLEGAL_POLICY} (column 'illegal', A/B)")
    return "\n".join(lines)


def check_writable(path: str) -> None:
    """ValueError unless a file can be written at path (checked before a run, so a long run never fails at the end)."""
    target = os.path.abspath(path)
    if os.path.isdir(target):
        raise ValueError(f"--json {path}: is a directory; give a file path such as {os.path.join(path, 'report.json')}")
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise ValueError(f"--json {path}: the folder {folder} does not exist")
    try:  # the report is written atomically: a temporary file in the same folder, then a rename
        with tempfile.NamedTemporaryFile(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".tmp"):
            pass
    except OSError as error:
        raise ValueError(f"--json {path}: cannot write in {folder} ({error.strerror or error})") from error


def main(argv: list[str] | None = None) -> int:
    """The `python evaluate.py` command line; returns the exit status (130 after Ctrl-C)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0], epilog="See README.md, 'Benchmarking'.")
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["expert", "greedy", "random"],
        help="agent specs: random, greedy, expert, checkpoint:PATH (at least two; default: %(default)s)",
    )
    parser.add_argument("--matches", type=int, default=2000,
                        help="matches per pair, even: duplicate pairs (default: %(default)s)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the agents (default: %(default)s)")
    parser.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE",
                        help="rule options, e.g. knock_limit=0 gin_bonus=20 (default: none, the standard rules; "
                             "see docs/RULES.md)")  # fmt: skip
    parser.add_argument("--json", metavar="PATH", help="also write the report as JSON to PATH (default: no JSON)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar (default: shown)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads for checkpoint agents; more than one oversubscribes a busy small "
                             "machine (default: %(default)s)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.threads < 1:
        parser.error(f"--threads={args.threads} must be at least 1")
    if any(str(spec).lower().startswith("checkpoint:") for spec in args.agents):
        import torch  # only checkpoint agents need it

        torch.set_num_threads(args.threads)
    finished: list[dict[str, Any]] = []
    try:
        if args.json:
            check_writable(args.json)
        rules = Rules.from_strings(args.rules)
        report = round_robin(args.agents, args.matches, args.seed, rules, progress=not args.no_progress,
                             on_pair=finished.append)  # fmt: skip
    except (ValueError, FileNotFoundError) as error:
        parser.error(str(error))
    except KeyboardInterrupt:
        total = len(args.agents) * (len(args.agents) - 1) // 2
        if finished:
            print(format_report({"matches_per_pair": args.matches, "seed": args.seed, "pairs": finished,
                                 "ratings": []}))  # fmt: skip
        print(f"interrupted: {len(finished)} of {total} pairs finished (shown above); no ratings"
              f"{' and no JSON' if args.json else ''} written", file=sys.stderr)  # fmt: skip
        return 130
    print(format_report(report))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2))
    return 0
