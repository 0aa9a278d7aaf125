"""Duplicate-deal matches of two agents, played chunk by chunk and added up into one pair's totals.

Duplicate deals: matches 2j and 2j+1 of a pair get the same seed and the same first dealer, and agent A
sits in seat 0 in match 2j and in seat 1 in match 2j+1. The engine draws every shuffle from the match's
seeded stream and from nothing else, so hand k of both matches is dealt from the same deck: the first
hand is exactly mirrored (each seat gets the same cards, so A holds in one match what B holds in the
other). From hand 2 on the winner deals (R30), so the two matches deal hand k from the same deck to the
same seats only while they agree on who deals; they also differ in score and length. No deal sequence
can stay exact once the play differs, so this is the closest mirror the rules allow.

Chunks: a pair's matches are played in chunks of `chunk_matches` (matches [start, stop), both even), each
batched in one `Engine`, and only totals are kept (`PairRecord`), so memory does not grow with the number
of matches. A chunk's deals come straight from the seed (`duplicate_deals(..., start, stop)`) without the
other chunks', so chunks can run in any order, in any process, with the same result. Agents are reseeded
for each chunk from (seed, pair index, chunk index) (`chunk_agent_seeds`).

Illegal actions: an action outside the mask (or outside 0..106) is counted against its agent and
replaced by the lowest-numbered legal action, so the run goes on; the counts are in the table and JSON.

Decision cap: the rules let a hand go on for ever (two agents that always take the face-up card never draw
from the stock), so a match that reaches `max_decisions` decisions (both players' together; default
MAX_MATCH_DECISIONS, twelve times the longest of 60 random-vs-random matches) is stopped there and counted
as aborted: a match won by neither (a draw for the match-win figures), its games closed so far kept, the hand in
play not scored. Real play never comes near it, so the rules of normal play are unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from hollywood_gin_env.agents import AgentProtocol
from hollywood_gin_env.agents.torch_threads import DEFAULT_TORCH_THREADS, check_torch_threads
from hollywood_gin_env.agents.torch_threads import MAX_TORCH_THREADS as MAX_TORCH_THREADS  # the trainer's bound too
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.observation import OBS_SIZE, encode_rows
from hollywood_gin_env.engine.threads import available_cpus, check_num_threads
from hollywood_gin_env.rules.actions import NUM_ACTIONS, as_actions
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.rules.scoring import KIND_DEAD, KIND_GIN, KIND_KNOCK, KIND_UNDERCUT
from hollywood_gin_env.support.imports import MODULE_NAME
from hollywood_gin_env.support.messages import shown_value
from hollywood_gin_env.support.streams import check_seed

MAX_MATCH_DECISIONS = 1_000_000  # random vs random (the longest real play): 32,000 a match, the longest of 60: 81,166
CHUNK_MATCHES = 1000  # matches per chunk: large enough to batch well, small enough to spread over workers
MAX_MATCHES = 100_000  # matches per pair: a win rate's 95% interval ±0.3 percentage points
#: The columns of a hand row (`play_hands`): the kind (scoring.KIND_*), the winner and the knocker (1 for A, 0 for B,
#: -1 for none: a dead hand), A's points (negative when B won them; 0 for a dead hand), the hand's turns.
HAND_COLUMNS = ("kind", "winner", "knocker", "points", "turns")
_LOW32 = np.uint64(0xFFFFFFFF)


def _two() -> list[int]:
    return [0, 0]


@dataclass
class PairRecord:
    """One pair's totals from agent A's side (A = `agent_a`); lists are [A, B]. Chunks add up with `merge`."""

    agent_a: str
    agent_b: str
    matches: int = 0
    match_wins_a: int = 0
    games: list[int] = field(default_factory=_two)  # games won
    hands: int = 0
    scored_hands: int = 0  # hands with a winner (not dead)
    hand_wins_a: int = 0
    points: int = 0  # A's net points, summed over hands
    points_squared: int = 0  # the sum of their squares (for the standard error)
    turns: int = 0
    gins: list[int] = field(default_factory=_two)
    knocks: list[int] = field(default_factory=_two)  # knocks and undercuts, by the knocker
    undercuts: list[int] = field(default_factory=_two)  # by the defender who undercut
    dead_hands: int = 0
    illegal: list[int] = field(default_factory=_two)  # illegal actions of A and B
    decisions: list[int] = field(default_factory=_two)
    aborted: int = 0  # matches stopped at the decision cap (module docstring), won by neither
    seconds: float = 0.0  # time spent playing, summed over chunks (wherever they ran)
    act_seconds: list[float] = field(default_factory=lambda: [0.0, 0.0])  # time inside A's and B's act calls

    def merge(self, other: PairRecord) -> PairRecord:
        """Add another chunk's totals of the same pair into this record; returns self."""
        if (other.agent_a, other.agent_b) != (self.agent_a, self.agent_b):
            raise ValueError(f"cannot merge {other.agent_a} vs {other.agent_b} into {self.agent_a} vs {self.agent_b}")
        for f in fields(self)[2:]:
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            setattr(
                self,
                f.name,
                [x + y for x, y in zip(mine, theirs, strict=True)] if isinstance(mine, list) else mine + theirs,
            )
        return self


def num_chunks(num_matches: int, chunk_matches: int) -> int:
    """How many chunks a pair of num_matches matches is played in."""
    if chunk_matches < 2 or chunk_matches % 2:
        raise ValueError(f"chunk_matches={chunk_matches} must be a positive even number (duplicate pairs)")
    return -(-num_matches // chunk_matches)


def chunk_bounds(num_matches: int, chunk_matches: int, chunk: int) -> tuple[int, int]:
    """Matches [start, stop) of chunk number `chunk`."""
    start = chunk * chunk_matches
    return start, min(num_matches, start + chunk_matches)


def chunk_agent_seeds(seed: int, pair: int, chunk: int) -> tuple[int, int]:
    """The seeds agents A and B are reset with for one chunk of pair number `pair`."""
    a, b = np.random.SeedSequence([seed, pair, chunk]).generate_state(2)
    return int(a), int(b)


def _stream_words(seed: int, first: int, count: int) -> np.ndarray:
    """Words first..first+count-1 of the 64-bit PCG64 stream of `numpy.random.default_rng(seed)`."""
    bits = np.random.default_rng(seed).bit_generator
    bits.advance(first)
    return bits.random_raw(count)


def duplicate_deals(
    num_matches: int,
    seed: int,
    start: int = 0,
    stop: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(seeds, first dealers, A's seat) of matches [start, stop): 2j and 2j+1 share a deal sequence, seats swapped.

    Pair j's seed is word j of the seed's PCG64 stream shifted right by one; its first dealer is bit 31 of
    32-bit half-word j (low half first) of the words after the num_matches / 2 seed words. These are the
    values `rng.integers(0, 2**63, P)` then `rng.integers(0, 2, P)` draw, as the evaluator did before it
    played in chunks, so earlier reports replay; any slice is computed without the rest (PCG64 `advance`).
    """
    stop, seed = num_matches if stop is None else stop, check_seed(seed)
    if not 2 <= num_matches <= MAX_MATCHES or num_matches % 2:
        raise ValueError(
            f"matches={num_matches} is not allowed: use an even number from 2 to {MAX_MATCHES:,} (duplicate pairs)"
        )
    if not (0 <= start < stop <= num_matches) or start % 2 or stop % 2:
        raise ValueError(f"matches [{start}, {stop}) must be an even, non-empty slice of 0..{num_matches}")
    first, last = start // 2, stop // 2
    seeds = _stream_words(seed, first, last - first) >> np.uint64(1)
    words = _stream_words(seed, num_matches // 2 + first // 2, (last + 1) // 2 - first // 2)
    halves = np.stack([words & _LOW32, words >> np.uint64(32)], axis=1).reshape(-1)
    dealers = (halves[first % 2 : first % 2 + last - first] >> np.uint64(31)).astype(np.int64)
    seat_a = np.tile(np.array([0, 1], dtype=np.int64), last - first)
    return np.repeat(seeds, 2), np.repeat(dealers, 2), seat_a


def _choose(agent: AgentProtocol, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, int]:
    """The agent's actions for a batch with illegal ones replaced (see module docstring); their count."""
    actions = np.asarray(agent.act(obs, masks))
    if actions.shape != (obs.shape[0],):
        raise ValueError(
            f"agent {shown_value(agent.name)} returned actions of shape {actions.shape}, expected ({obs.shape[0]},)"
        )
    source = f"the actions of agent {shown_value(agent.name)}"
    actions = as_actions(actions, obs.shape[0], source).copy()  # no float casts
    ok = (actions >= 0) & (actions < NUM_ACTIONS)
    ok[ok] = masks[np.flatnonzero(ok), actions[ok]] == 1
    if not ok.all():
        actions[~ok] = np.argmax(masks[~ok], axis=1)
    return actions, int((~ok).sum())


def _hand_rows(engine: Engine, ended: np.ndarray, seat_a: np.ndarray) -> np.ndarray:
    """One row per hand that just ended (`HAND_COLUMNS`)."""
    last, a = engine.state.last_hand[ended], seat_a[ended]
    winner, knocker = last[:, col.R_WINNER], last[:, col.R_KNOCKER]
    winner_side = np.where(winner < 0, -1, (winner == a).astype(np.int64))
    knocker_side = np.where(knocker < 0, -1, (knocker == a).astype(np.int64))
    points = np.where(winner < 0, 0, np.where(winner == a, 1, -1) * last[:, col.R_POINTS])
    return np.stack([last[:, col.R_KIND], winner_side, knocker_side, points, last[:, col.R_TURNS]], axis=1)


def _add_hands(record: PairRecord, rows: np.ndarray) -> None:
    """Add a chunk's hand rows (see `_hand_rows`) to the record's totals."""
    kind, winner, knocker, points, turns = (rows[:, k].astype(np.int64) for k in range(len(HAND_COLUMNS)))
    sides = (1, 0)  # A, B as the rows code them
    record.hands += len(rows)
    record.scored_hands += int((winner >= 0).sum())
    record.hand_wins_a += int((winner == 1).sum())
    record.points += int(points.sum())
    record.points_squared += int((points * points).sum())
    record.turns += int(turns.sum())
    knocked = np.isin(kind, (KIND_KNOCK, KIND_UNDERCUT))
    for s, side in enumerate(sides):
        record.gins[s] += int(((kind == KIND_GIN) & (knocker == side)).sum())
        record.knocks[s] += int((knocked & (knocker == side)).sum())
        record.undercuts[s] += int(((kind == KIND_UNDERCUT) & (winner == side)).sum())
    record.dead_hands += int((kind == KIND_DEAD).sum())


class _Batch:
    """The matches being played: the engine, A's seats, and the observation/action buffers."""

    def __init__(
        self,
        deals: tuple[np.ndarray, np.ndarray, np.ndarray],
        rules: Rules | None,
        max_decisions: int = MAX_MATCH_DECISIONS,
        num_threads: int | None = None,
    ) -> None:
        seeds, dealers, self.seat_a = deals
        self.max_decisions = max_decisions
        self.decisions = np.zeros(len(seeds), dtype=np.int64)  # per match, both players
        self.aborted = np.zeros(len(seeds), dtype=np.bool_)
        self.engine = Engine(len(seeds), rules, num_threads)
        self.engine.new_matches(seeds=seeds, first_dealers=dealers)
        self.obs = np.zeros((len(seeds), OBS_SIZE), dtype=np.float32)
        self.masks = np.zeros((len(seeds), NUM_ACTIONS), dtype=np.int8)
        self.actions = np.zeros(len(seeds), dtype=np.int64)

    def step(self, agents: tuple[AgentProtocol, AgentProtocol], record: PairRecord) -> np.ndarray:
        """Every unfinished match takes one action of its player to act; returns the rows of hands that ended. A
        match that reaches max_decisions is aborted (module docstring)."""
        engine, active = self.engine, ~self.engine.done & ~self.aborted
        players = engine.current_player.copy()
        encode_rows(engine.threads, players, active, engine.arrays, engine.params, self.obs, self.masks)
        for side, agent in enumerate(agents):
            rows = np.flatnonzero(active & ((players == self.seat_a) == (side == 0)))
            if rows.size:
                begin = time.perf_counter()
                self.actions[rows], bad = _choose(agent, self.obs[rows], self.masks[rows])
                record.act_seconds[side] += time.perf_counter() - begin
                record.illegal[side] += bad
                record.decisions[side] += rows.size
        engine.step(self.actions, active)
        if engine.illegal[active].any():  # every action was checked against the mask above
            raise RuntimeError("the engine refused an action its own legal mask allowed")
        self.decisions[active] += 1
        self.aborted |= active & ~engine.done & (self.decisions >= self.max_decisions)
        return _hand_rows(engine, engine.hand_over & active, self.seat_a)

    @property
    def finished(self) -> bool:
        """True when every match is over or aborted."""
        return bool((self.engine.done | self.aborted).all())

    def add_matches(self, record: PairRecord) -> None:
        """Add the finished batch's match and game results to the record."""
        state, seat_a = self.engine.state, self.seat_a
        game_winner = state.game_winner[:, : self.engine.rules.num_games]
        record.matches += len(seat_a)
        record.aborted += int(self.aborted.sum())
        record.match_wins_a += int((state.match[:, col.M_WINNER] == seat_a).sum())
        record.games[0] += int((game_winner == seat_a[:, None]).sum())
        record.games[1] += int((game_winner == 1 - seat_a[:, None]).sum())


def play_hands(
    agents: tuple[AgentProtocol, AgentProtocol],
    num_matches: int,
    seed: int,
    start: int,
    stop: int,
    rules: Rules | None = None,
    on_step: Callable[[int], object] | None = None,
    num_threads: int | None = None,
    names: tuple[str, str] | None = None,
    max_decisions: int = MAX_MATCH_DECISIONS,
) -> tuple[PairRecord, np.ndarray]:
    """Play matches [start, stop) as `play_chunk` does: the record of their matches, games and decisions (no hand
    totals yet), and one row per hand played (columns `HAND_COLUMNS`: A's side is 1, B's 0)."""
    if type(max_decisions) is not int or max_decisions < 1:
        raise ValueError(f"max_decisions={shown_value(max_decisions)} is not allowed: use a whole number >= 1")
    deals = duplicate_deals(num_matches, seed, start, stop)
    batch = _Batch(deals, rules, max_decisions=max_decisions, num_threads=num_threads)
    record, hands = PairRecord(*(names or (agents[0].name, agents[1].name))), []
    while not batch.finished:
        hands.append(batch.step(agents, record))
        if on_step is not None:
            on_step(int((batch.engine.done | batch.aborted).sum()))
    batch.add_matches(record)
    return record, np.concatenate(hands) if hands else np.zeros((0, len(HAND_COLUMNS)), dtype=np.int64)


def play_chunk(
    agents: tuple[AgentProtocol, AgentProtocol], num_matches: int, seed: int, start: int, stop: int, **options: Any
) -> PairRecord:
    """Matches [start, stop) of num_matches duplicate matches of A against B, batched in one `Engine`: the record of
    their matches, games, decisions and hands, and the seconds they took.

    `options` are `play_hands`' (`rules`, `on_step`, `num_threads`, `names`, `max_decisions`): `on_step(finished)`
    is called after every step with the number of this chunk's matches finished (or aborted at `max_decisions`
    decisions: module docstring); the engine runs on `num_threads` kernel threads (default: the process's), and the
    results do not depend on it; the record names the agents `names` (the report's labels), by default the agents'
    own names.
    """
    begin = time.perf_counter()
    record, hands = play_hands(agents, num_matches, seed, start, stop, **options)
    _add_hands(record, hands)
    record.seconds = time.perf_counter() - begin
    return record


#: The memory a Ray worker takes, as measured: 436-445 MB resident with torch, the kernels and a share of the smoke
#: config's or the recipe's matches loaded, about 460 MB once it has played (8 rollout workers: 3.7 GB).
WORKER_BYTES = 512 * 2**20


def available_memory() -> int | None:
    """Bytes of memory new processes may take (Linux's MemAvailable), or None where the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def local_workers_bound() -> tuple[int, str]:
    """(the most Ray workers a local Ray on this machine holds, the rule in words): one per CPU this process may use,
    and one per WORKER_BYTES of the memory available, at least one. A cluster (a Ray address) has its own bound."""
    cpus, memory = available_cpus(), available_memory()
    rule = f"one per CPU this process may use: {cpus}"
    if memory is None:
        return cpus, rule
    by_memory = max(1, memory // WORKER_BYTES)
    rule += f"; one per {WORKER_BYTES >> 20} MiB of the {memory / 2**30:.1f} GiB of memory available: {by_memory}"
    return min(cpus, by_memory), rule


def check_local_workers(workers: int, name: str) -> None:
    """ValueError naming `name` and the bound unless a local Ray on this machine holds `workers` workers
    (`local_workers_bound`'s rule)."""
    most, rule = local_workers_bound()
    if workers > most:
        raise ValueError(
            f"{name}={workers}: a local Ray on this machine holds at most {most} workers ({rule}); give at most "
            f"{most}, or join a Ray cluster with --ray-address"
        )


class EvaluationError(RuntimeError):
    """An evaluation that cannot finish: a chunk failed, its worker died too often, or no result came in time."""


@dataclass(frozen=True)
class Schedule:
    """Where a pair's chunks run: in this process (workers = 1, no Ray), or as Ray tasks, `workers` at a time."""

    workers: int = 1  # chunks played at once; 1 plays them here, one after another, without importing Ray
    ray_address: str | None = None  # a running Ray cluster to join (`ray start --head`); None starts a local Ray
    chunk_matches: int = CHUNK_MATCHES  # matches per chunk (even); agents are reseeded per chunk, so it is a result
    chunk_timeout: float = 600.0  # seconds a chunk may take from its submission before the evaluation stops
    max_retries: int = 2  # times Ray reruns a chunk whose worker died (killed, out of memory)
    torch_threads: int = DEFAULT_TORCH_THREADS  # torch threads of the agents while they act, in each process
    task_cpus: float = 1.0  # CPUs Ray reserves for a chunk (less, to share a Ray whose actors hold the CPUs)
    env_threads: int | None = None  # kernel threads of the engine and the agents, in each process; None: its CPUs
    imports: tuple[str, ...] = ()  # modules each Ray worker imports before it builds agents (a program's --import)

    def __post_init__(self) -> None:
        if self.env_threads is not None:
            check_num_threads(self.env_threads, "env_threads")
        check_torch_threads(self.torch_threads)
        for name, low, high in (("workers", 1, None), ("max_retries", 0, None)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= (high or value):
                allowed = f"of at least {low}" if high is None else f"from {low} to {high}"
                raise ValueError(f"{name}={shown_value(value)} is not allowed: use an integer {allowed}")
        num_chunks(2, self.chunk_matches)  # checks it is even and positive
        for name in ("chunk_timeout", "task_cpus"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
                raise ValueError(f"{name}={shown_value(value)} must be a finite number above 0")
        imports = self.imports
        if isinstance(imports, str) or not all(isinstance(n, str) and MODULE_NAME.fullmatch(n) for n in imports):
            raise ValueError(
                f"imports={shown_value(imports)} is not allowed: give a tuple of module names, e.g. ('mine',)"
            )
        object.__setattr__(self, "imports", tuple(imports))
        if self.ray_address is not None and self.workers == 1:
            raise ValueError(
                f"ray_address={shown_value(self.ray_address)} needs workers of 2 or more (1 runs here, without Ray)"
            )


@dataclass(frozen=True)
class ChunkJob:
    """One chunk of one pair: everything a worker needs to play it (agents as spec strings or objects)."""

    specs: tuple[object, object]
    names: tuple[str, str]
    num_matches: int
    seed: int
    rules: Rules
    pair: int
    chunk: int
    chunks: int  # of this pair
    start: int
    stop: int
    torch_threads: int = DEFAULT_TORCH_THREADS
    env_threads: int | None = None
    imports: tuple[str, ...] = ()  # modules a Ray worker imports before it builds the agents

    def describe(self) -> str:
        """Names the chunk in errors: which pair, which chunk, which matches."""
        return (
            f"chunk {self.chunk + 1} of {self.chunks} of {self.names[0]} vs {self.names[1]} "
            f"(matches {self.start}-{self.stop - 1})"
        )


def pair_jobs(
    specs: tuple[object, object],
    names: tuple[str, str],
    num_matches: int,
    seed: int,
    rules: Rules,
    pair: int = 0,
    chunk_matches: int = CHUNK_MATCHES,
    torch_threads: int = DEFAULT_TORCH_THREADS,
    env_threads: int | None = None,
    imports: tuple[str, ...] = (),
) -> Iterator[ChunkJob]:
    """The chunks of one pair's num_matches duplicate matches, in order (made as needed)."""
    chunks = num_chunks(num_matches, chunk_matches)
    for c in range(chunks):
        yield ChunkJob(
            tuple(specs),
            tuple(names),
            num_matches,
            seed,
            rules,
            pair,
            c,
            chunks,
            *chunk_bounds(num_matches, chunk_matches, c),
            torch_threads,
            env_threads,
            tuple(imports),
        )


def play_job(
    job: ChunkJob, agents: tuple[AgentProtocol, AgentProtocol], on_step: Callable[[int], object] | None = None
) -> PairRecord:
    """Reseed the agents for the job's chunk (`chunk_agent_seeds`) and play it; the record takes the job's names."""
    for agent, agent_seed in zip(agents, chunk_agent_seeds(job.seed, job.pair, job.chunk), strict=True):
        if hasattr(agent, "reset"):
            agent.reset(agent_seed)
    return play_chunk(
        agents,
        job.num_matches,
        job.seed,
        job.start,
        job.stop,
        rules=job.rules,
        on_step=on_step,
        num_threads=job.env_threads,
        names=job.names,
    )
