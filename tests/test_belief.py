"""The action-conditioned belief (hollywood_gin_env/agents/belief.py): it deals only cards the player has not seen, in
the right numbers; its replay gives `expert`'s own decisions from the true deal; a known history has its known
likelihood; it is deterministic for a seed; bad options are refused by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import hollywood_gin_env.agents.belief as belief_module
from hollywood_gin_env.agents import ExpertAgent, GreedyAgent
from hollywood_gin_env.agents.belief import draw_hands, replay_mismatches, sample_belief
from hollywood_gin_env.cards import NUM_CARDS, parse_cards
from hollywood_gin_env.engine import Engine
from hollywood_gin_env.history import HandHistory, HistoryRecorder
from hollywood_gin_env.melds import min_deadwood_mask
from hollywood_gin_env.observation import (
    O_HAND,
    O_OPP_DISCARDED,
    O_OPP_TOOK,
    O_STOCK_SIZE,
    O_UNSEEN,
    OBS_SIZE,
    STOCK_SCALE,
    encode_rows,
)
from hollywood_gin_env.state import (
    ACTION_PASS,
    ACTION_TAKE,
    DISCARD_BASE,
    M_PLAYER,
    NUM_ACTIONS,
    S_DRAWN,
    S_HAND_OVER,
)
from hollywood_gin_env.threads import pool

VIEWER, OPPONENT = 0, 1


def mask_of(cards: list[int]) -> int:
    """Card mask of card ids."""
    return sum(1 << c for c in cards)


def plane(obs: np.ndarray, offset: int) -> int:
    """Card mask of a 0/1 plane of an observation."""
    return mask_of([int(c) for c in np.flatnonzero(obs[offset : offset + NUM_CARDS] > 0.5)])


def snapshots(viewer_agent, opponent_agent, seed: int, matches: int = 4, steps: int = 160) -> list[dict]:
    """At each of the viewer's (seat 0) decisions: its history, its observation and, from the engine, what the
    opponent was dealt, drew and holds, and how many of its decisions `expert` would have made otherwise."""
    engine = Engine(matches, num_threads=1)
    engine.new_matches(seeds=np.arange(seed, seed + matches, dtype=np.uint64))
    recorder = HistoryRecorder(engine, np.full(matches, VIEWER))
    expert = ExpertAgent(num_threads=1)
    s = engine.state
    dealt = [int(h) for h in s.hands[:, OPPONENT]]
    draws: list[list[int]] = [[] for _ in range(matches)]
    mine: list[list[int]] = [[] for _ in range(matches)]
    differ = [0] * matches
    obs = np.zeros((matches, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((matches, NUM_ACTIONS), dtype=np.int8)
    found = []
    for _ in range(steps):
        live = ~engine.done
        if not live.any():
            break
        players = engine.current_player.copy()
        encode_rows(pool(1), players, live, engine.arrays, engine.params, obs, mask)
        actions = np.zeros(matches, dtype=np.int64)
        for agent, seat in ((viewer_agent, VIEWER), (opponent_agent, OPPONENT)):
            rows = np.flatnonzero(live & (players == seat))
            if rows.size:
                actions[rows] = agent.act(obs[rows], mask[rows])
        for m in np.flatnonzero(live):
            if players[m] == OPPONENT:
                differ[m] += int(expert.act(obs[m : m + 1], mask[m : m + 1])[0] != actions[m])
            else:
                found.append(
                    {
                        "history": recorder.histories[m].copy(),
                        "obs": obs[m].copy(),
                        "holds": int(s.hands[m, OPPONENT]),
                        "dealt": dealt[m],
                        "draws": list(draws[m]),
                        "mine": list(mine[m]),
                        "differ": differ[m],
                    }
                )
        recorder.step(actions, live)
        for m in np.flatnonzero(live):
            if s.last_step[m, S_HAND_OVER] == 1:
                dealt[m], draws[m], mine[m], differ[m] = int(s.hands[m, OPPONENT]), [], [], 0
            elif s.last_step[m, S_DRAWN] >= 0:
                (draws if s.match[m, M_PLAYER] == OPPONENT else mine)[m].append(int(s.last_step[m, S_DRAWN]))
    return found


@pytest.fixture(scope="module")
def expert_games() -> list[dict]:
    """The viewer `greedy` against `expert`."""
    return snapshots(GreedyAgent(num_threads=1), ExpertAgent(num_threads=1), seed=5)


def test_the_recorder_keeps_the_viewers_draws_and_no_other_card(expert_games):
    """A history holds the cards the viewer drew, in order, and no card the opponent drew (those stay -1)."""
    assert len(expert_games) > 50
    for snap in expert_games:
        history = snap["history"]
        assert [d for d in history.drawn if d >= 0] == snap["mine"]
        assert history.unknown_cards() & snap["dealt"] == snap["dealt"]
        for card in snap["draws"]:
            assert (history.unknown_cards() >> card) & 1


@pytest.mark.parametrize("opponent", ["expert", "greedy"])
def test_the_replay_of_the_true_deal_counts_exactly_the_decisions_expert_would_have_made_otherwise(opponent):
    """Replayed from the opponent's true deal and draws, the history's decisions differ from `expert`'s exactly where
    `expert`, given the opponent's real observation, would have acted otherwise: none for `expert` itself."""
    agent = ExpertAgent(num_threads=1) if opponent == "expert" else GreedyAgent(num_threads=1)
    found = snapshots(GreedyAgent(num_threads=1), agent, seed=9, steps=120)
    counts = [replay_mismatches(s["history"], s["dealt"], s["draws"]) for s in found]
    assert counts == [s["differ"] for s in found]
    assert (max(counts) == 0) == (opponent == "expert")


def test_a_hand_made_history_has_its_known_likelihood():
    """The opponent (non-dealer) holds AS 2S 3S 4H 4D 4C 7C 8C KD QH (35 deadwood): `expert` takes the upcard 9C
    (a run: 10 left after the best discard) and passes KH (taking it lowers no deadwood); having taken 9C it knocks
    (its deadwood is at the limit); a discard of a card it does not hold is illegal."""
    theirs = mask_of(parse_cards("AS 2S 3S 4H 4D 4C 7C 8C KD QH"))
    mine = mask_of(parse_cards("2H 5H 8H JH 3D 6D 9D QD 5C QC"))

    def history(upcard: str, *actions: int) -> HandHistory:
        made = HandHistory(VIEWER, VIEWER, mine, parse_cards(upcard)[0])
        for action in actions:
            made.add(action)
        return made

    discard_king = DISCARD_BASE + parse_cards("KD")[0]
    assert replay_mismatches(history("9C", ACTION_TAKE), theirs, []) == 0
    assert replay_mismatches(history("9C", ACTION_PASS), theirs, []) == 1
    assert replay_mismatches(history("KH", ACTION_PASS), theirs, []) == 0
    assert replay_mismatches(history("KH", ACTION_TAKE), theirs, []) == 1
    assert replay_mismatches(history("9C", ACTION_TAKE, discard_king), theirs, []) == 1  # it would have knocked
    assert replay_mismatches(history("9C", ACTION_TAKE, DISCARD_BASE + parse_cards("5H")[0]), theirs, []) == -1


@pytest.mark.parametrize("model", ["expert", "none"])
def test_the_belief_deals_only_unseen_cards_in_the_right_numbers(expert_games, model):
    """Every particle's opponent holds ten cards: those it is known to have taken, the rest unseen by the viewer;
    its stock is the other unseen cards, as many as the observation's stock."""
    for snap in expert_games[::6]:
        obs = snap["obs"]
        took, unseen, own = plane(obs, O_OPP_TOOK), plane(obs, O_UNSEEN), plane(obs, O_HAND)
        stock = int(round(obs[O_STOCK_SIZE] * STOCK_SCALE))
        belief = sample_belief(snap["history"], model, particles=32, seed=1)
        assert belief.weights.sum() == pytest.approx(1.0)
        for hand, rest in zip(belief.hands.tolist(), belief.stocks.tolist(), strict=True):
            assert bin(hand).count("1") == 10 and hand & took == took
            assert hand & ~took & ~unseen == 0 and hand & own == 0
            assert rest == unseen & ~hand and bin(rest).count("1") == stock


def test_the_expert_belief_holds_no_hand_expert_would_have_knocked_with(expert_games):
    """With eps = 0, once the opponent has discarded without knocking, no particle of positive weight holds a hand
    of deadwood 0 or between 3 (above expert's hold-for-gin limit) and 10, from which it would have knocked (nor
    does the opponent's true hand)."""
    late = [s for s in expert_games if plane(s["obs"], O_OPP_DISCARDED) and len(s["history"].actions) > 12][::4]
    checked = 0
    for snap in late:
        true_dw = min_deadwood_mask(snap["holds"])
        assert not (true_dw == 0 or 3 <= true_dw <= 10)
        belief = sample_belief(snap["history"], "expert", particles=96, eps=0.0, seed=2)
        dw = np.array([min_deadwood_mask(int(h)) for h in belief.hands])
        band = (dw == 0) | ((dw >= 3) & (dw <= 10))
        if belief.unexplained == 0:
            assert belief.weights[band].sum() == 0.0
            checked += 1
    assert checked >= 5


def test_tempering_to_eps_zero_leaves_only_deals_that_explain_every_decision(expert_games):
    """With eps tempered to 0 over the moves, every particle of positive weight is a deal from which `expert` makes
    each of the opponent's decisions (mismatches 0), while the untempered belief at eps 0.05 keeps some that do not;
    the cards stay the unseen ones."""
    late = [s for s in expert_games if len(s["history"].actions) > 16][::8][:6]
    loose_mismatched, checked = 0.0, 0
    for snap in late:
        loose = sample_belief(snap["history"], "expert", particles=256, eps=0.05, seed=5, moves=12)
        loose_mismatched += loose.weights[loose.mismatches > 0].sum()
        try:
            tempered = sample_belief(snap["history"], "expert", particles=256, eps=0.05, seed=5, moves=12, final_eps=0)
        except ValueError as error:  # too few particles to find a deal that explains everything: said, not hidden
            assert "final_eps=0" in str(error)
            continue
        checked += 1
        assert tempered.weights[tempered.mismatches > 0].sum() == 0.0
        loose_mismatched += loose.weights[loose.mismatches > 0].sum()
        unseen = plane(snap["obs"], O_UNSEEN) | plane(snap["obs"], O_OPP_TOOK)
        assert all(h & ~unseen == 0 for h in tempered.hands.tolist())
    assert checked >= 3 and loose_mismatched > 0.0


def test_the_cards_alone_give_every_unseen_card_the_same_chance(expert_games):
    """With model none the weighted particles (and their Metropolis moves) hold each unseen card with the chance
    hidden cards / unseen cards (every deal the cards allow is equally likely), whatever the opponent discarded."""
    snap = min(expert_games, key=lambda s: abs(len(s["history"].actions) - 20))
    obs = snap["obs"]
    took, unseen = plane(obs, O_OPP_TOOK), plane(obs, O_UNSEEN)
    belief = sample_belief(snap["history"], "none", particles=1000, seed=3, moves=16)
    cards = [c for c in range(NUM_CARDS) if (unseen >> c) & 1]
    chance = np.array([belief.weights[(belief.hands >> c) & 1 == 1].sum() for c in cards])
    expected = (10 - bin(took).count("1")) / len(cards)
    assert np.abs(chance - expected).max() < 0.06


def test_model_self_with_expert_as_the_policy_is_the_expert_belief(expert_games):
    """model=self given `expert`'s choices as one-hot probabilities, with eps = 0, weighs every particle as
    model=expert with eps = 0 does, and its Metropolis moves keep the same deals: the same particles and weights for
    the same seed, with and without moves."""
    expert = ExpertAgent(num_threads=1)

    def one_hot(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        out = np.zeros((obs.shape[0], NUM_ACTIONS))
        out[np.arange(obs.shape[0]), expert.act(obs, masks)] = 1.0
        return out

    for snap in expert_games[5::40]:
        for moves in (0, 3):
            mine = sample_belief(snap["history"], "self", particles=48, eps=0.0, seed=4, policy=one_hot, moves=moves)
            theirs = sample_belief(snap["history"], "expert", particles=48, eps=0.0, seed=4, moves=moves)
            assert np.array_equal(mine.hands, theirs.hands) and np.allclose(mine.weights, theirs.weights)


def test_the_belief_is_the_same_on_one_thread_and_on_three(expert_games):
    """The particles' replays split over kernel threads give the very particles, weights and mismatches of one
    thread (each particle draws from its own stream), moves and tempering included."""
    snap = max(expert_games, key=lambda s: len(s["history"].actions))
    options = {"particles": 200, "eps": 0.05, "seed": 6, "moves": 4, "final_eps": 0.001}
    one = sample_belief(snap["history"], "expert", num_threads=1, **options)
    three = sample_belief(snap["history"], "expert", num_threads=3, **options)
    assert np.array_equal(one.hands, three.hands) and np.array_equal(one.stocks, three.stocks)
    assert np.array_equal(one.weights, three.weights) and np.array_equal(one.mismatches, three.mismatches)


def test_the_belief_is_deterministic_for_a_seed(expert_games):
    """The same seed gives the same particles and weights; another seed other particles."""
    history = expert_games[-1]["history"]
    first, again = (sample_belief(history, particles=32, seed=7) for _ in range(2))
    other = sample_belief(history, particles=32, seed=8)
    assert np.array_equal(first.hands, again.hands) and np.array_equal(first.weights, again.weights)
    assert not np.array_equal(first.hands, other.hands)
    assert np.array_equal(draw_hands(first, 10, seed=1)[0], draw_hands(again, 10, seed=1)[0])


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"model": "foo"}, "model='foo'"),
        ({"model": "self"}, "model='self'"),
        ({"particles": 0}, "particles=0"),
        ({"particles": 2.5}, "particles=2.5"),
        ({"eps": 1.5}, "eps=1.5"),
        ({"eps": -0.1}, "eps=-0.1"),
        ({"seed": -1}, "seed=-1"),
        ({"moves": -1}, "moves=-1"),
        ({"num_threads": 0}, "num_threads=0"),
        ({"num_threads": 1025}, "num_threads=1025"),
        ({"final_eps": -0.1, "moves": 2}, "final_eps=-0.1"),
        ({"final_eps": 0.5, "eps": 0.1, "moves": 2}, "final_eps=0.5"),
        ({"final_eps": 0.0, "moves": 0}, "final_eps=0.0"),
        ({"final_eps": 0.0, "model": "none", "moves": 2}, "final_eps=0.0"),
    ],
)
def test_bad_belief_options_are_refused_by_name(expert_games, options, named):
    """A bad model, particle count, eps or seed raises ValueError naming it."""
    with pytest.raises(ValueError, match=named.replace(".", r"\.")):
        sample_belief(expert_games[0]["history"], **options)


def test_a_bad_history_is_refused_by_name():
    """A history with a wrong seat, a hand of other than ten cards, an upcard in the hand or an action outside the
    action ids is refused with an error naming the value."""
    hand = mask_of(list(range(10)))
    with pytest.raises(ValueError, match="viewer=2"):
        HandHistory(2, 0, hand, 20)
    with pytest.raises(ValueError, match="hand="):
        HandHistory(0, 0, mask_of(list(range(9))), 20)
    with pytest.raises(ValueError, match="upcard=3"):
        HandHistory(0, 0, hand, 3)
    with pytest.raises(ValueError, match="action=107"):
        HandHistory(0, 0, hand, 20).add(107)


def test_the_probe_script_prints_its_options():
    """scripts/belief_probe.py --help names its seed options and exits 0 (it imports what it measures with)."""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, str(root / "scripts" / "belief_probe.py"), "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "--seed" in done.stdout and "--belief-seed" in done.stdout and "--moves" in done.stdout


def _run_script(name: str, *args: str) -> subprocess.CompletedProcess:
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, str(root / "scripts" / name), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(root)},
        timeout=600,
    )


def test_the_search_gate_refuses_an_unknown_belief_or_kind_by_name():
    """scripts/search_gate.py --beliefs names the bad belief and the ones allowed, --kinds the bad kind and the
    ones allowed, --self-moves a count out of range, and exits with an error."""
    done = _run_script("search_gate.py", "--beliefs", "tilted,psychic")
    assert done.returncode == 2
    assert "psychic" in done.stderr and "expert" in done.stderr
    done = _run_script("search_gate.py", "--kinds", "discard,bluff")
    assert done.returncode == 2 and "--kinds 'discard,bluff'" in done.stderr and "knock-legal, discard" in done.stderr
    done = _run_script("search_gate.py", "--self-moves", "99")
    assert done.returncode == 2 and "--self-moves 99" in done.stderr


def test_the_search_gate_resumes_only_a_report_of_the_same_options(tmp_path):
    """--resume needs --out, a report this script wrote, and the options that wrote it: otherwise it exits with an
    error naming what is missing or differs, before any play."""
    out = tmp_path / "gate.json"
    done = _run_script("search_gate.py", "--resume")
    assert done.returncode == 2 and "--out" in done.stderr
    out.write_text("{not json")
    done = _run_script("search_gate.py", "--resume", "--out", str(out))
    assert done.returncode == 2 and "not a report" in done.stderr
    out.write_text(json.dumps({"positions": [], "seconds": {}, "total_s": 1.0, "args": {"budget": 1000}}))
    done = _run_script("search_gate.py", "--resume", "--out", str(out), "--budget", "500")
    assert done.returncode == 2 and "--budget" in done.stderr


def test_the_search_gate_reports_a_saved_run_by_kind_and_hand_age_without_playing(tmp_path):
    """--report-only prints each kind's mean gain with its standard error, the mean gain where the search changed the
    bot's choice, and the split by the hand's age, from --out's records alone; a file that is not such a report is
    refused by name."""
    out = tmp_path / "gate.json"

    def record(kind: str, actions: int, gain: float) -> dict:
        return {"kind": kind, "candidates": 3, "labels": [0.0, gain, -1.0], "actions": actions, "self@2": gain,
                "self@2/changed": gain != 0, "best label": max(gain, 0.0)}  # fmt: skip

    records = [record("knock-legal", 30, 2.0), record("knock-legal", 30, 0.0), record("discard", 5, 1.0)]
    records.append(record("discard", 5, -1.0))
    report = {"args": {"beliefs": "self", "z": "2"}, "seconds": {}, "total_s": 9.0, "positions": records}
    out.write_text(json.dumps(report))
    done = _run_script("search_gate.py", "--report-only", "--out", str(out))
    assert done.returncode == 0, done.stderr
    printed = " ".join(done.stdout.split())
    assert "knock-legal: 2 positions" in printed and "discard: 2 positions" in printed
    assert "self@2 +1.000 ± 1.000 0.50 +2.000 ± nan" in printed  # the knock's two gains: 2 and 0, one changed
    assert "actions 24-35 2 positions: self@2 +1.000 ± 1.000" in printed
    # the discards' gains 1 and -1, both changed
    assert "self@2 +0.000 ± 1.000 1.00 +0.000 ± 1.000 actions 0-11 2 positions: self@2 +0.000 ± 1.000" in printed
    out.write_text(json.dumps({**report, "positions": [{"kind": "bluff"}]}))
    done = _run_script("search_gate.py", "--report-only", "--out", str(out))
    assert done.returncode == 2 and "not a report" in done.stderr


@pytest.mark.slow  # plays out positions with the bot (about 40 s)
def test_the_search_gate_rates_each_position_against_the_bots_own_choice(tmp_path):
    """A tiny gate run writes one record per position with each belief's gain at each z; a search that keeps the
    bot's action gains exactly 0, and one that changes it gains its candidate's label minus the bot's; a run of
    fewer positions, resumed with more, ends with the same records, and so does a run of one kind's positions
    resumed with both kinds."""
    out = tmp_path / "gate.json"
    arguments = (
        "--positions", "2", "--budget", "24", "--labels", "8", "--true-budget", "24", "--seed", "5", "--z", "0",
        "--out", str(out),
    )  # fmt: skip
    done = _run_script("search_gate.py", *arguments)
    assert done.returncode == 0, done.stderr
    assert "knock-legal: 2 positions" in done.stdout and "discard: 2 positions" in done.stdout
    records = json.loads(out.read_text())["positions"]
    assert len(records) == 4 and [r["position"] for r in records] == [0, 1, 2, 3]
    for record in records:
        labels = record["labels"]
        assert len(labels) == record["candidates"] >= 2
        for name in ("tilted", "expert", "true", "self", "self-bot"):
            gain = record[f"{name}@0"]
            if record[f"{name}@0/changed"]:
                assert any(abs(gain - (label - labels[0])) < 1e-9 for label in labels[1:])
            else:
                assert gain == 0.0
    # A run of one position a kind, resumed with two, ends with the very records of the whole run of two: a run's
    # positions are the first of a longer run's.
    shorter = tmp_path / "shorter.json"
    one = [("1" if a == "2" and i == 1 else str(shorter) if a == str(out) else a) for i, a in enumerate(arguments)]
    done = _run_script("search_gate.py", *one)
    assert done.returncode == 0, done.stderr
    assert json.loads(shorter.read_text())["positions"] == records[:2]
    extended = [str(shorter) if a == str(out) else a for a in arguments]
    again = _run_script("search_gate.py", *extended, "--resume")
    assert again.returncode == 0, again.stderr
    assert "resuming after 2 positions" in again.stdout
    assert json.loads(shorter.read_text())["positions"] == records
    # A report of more positions than asked for is refused by name.
    done = _run_script("search_gate.py", *one, "--resume")
    assert done.returncode == 2 and "already holds position 3; use at least 2" in done.stderr
    # --kinds discard plays the discard positions alone, with the figures a run of both kinds has there; resumed
    # with both kinds, the run fills in the others.
    only = tmp_path / "discards.json"
    done = _run_script("search_gate.py", *[str(only) if a == str(shorter) else a for a in one], "--kinds", "discard")
    assert done.returncode == 0, done.stderr
    assert json.loads(only.read_text())["positions"] == [records[1]]
    done = _run_script("search_gate.py", *[str(only) if a == str(out) else a for a in arguments], "--resume")
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(only.read_text())["positions"], key=lambda r: r["position"]) == records


def test_the_retry_doubles_the_particles_until_a_particle_survives(monkeypatch):
    """belief_with_retries: a sampler that leaves no particle below 2048 is retried with 1024, then 2048 particles
    and its belief returned with the count of retries; past the limit the error reaches the caller."""
    asked = []

    def fake(history, seed, particles, **options):
        asked.append(particles)
        if particles < 2048:
            raise ValueError("sample_belief: no particle of ... holds cards that allow action 3")
        return "belief"

    monkeypatch.setattr(belief_module, "sample_belief", fake)
    assert belief_module.belief_with_retries(None, 0, particles=512, model="expert") == ("belief", 2)
    assert asked == [512, 1024, 2048]
    monkeypatch.setattr(belief_module, "MAX_RETRY_PARTICLES", 1024)
    with pytest.raises(ValueError, match="no particle"):
        belief_module.belief_with_retries(None, 0, particles=512, model="expert")


def test_the_gate_records_in_the_repository_are_reports_the_script_reads_and_resumes():
    """docs/data's gate records (what docs/EVALUATION.md cites and a later run resumes from) are reports of
    search_gate.py: --report-only prints both kinds from each, and their options are the documented run's."""
    root = Path(__file__).resolve().parents[1]
    for name, belief in (("gate13_selfbot.json", "self-bot"), ("gate13_self.json", "self")):
        path = root / "docs" / "data" / name
        done = _run_script("search_gate.py", "--report-only", "--out", str(path))
        assert done.returncode == 0, done.stderr
        assert "knock-legal: " in done.stdout and "discard: " in done.stdout and f"{belief}@2" in done.stdout
        args = json.loads(path.read_text())["args"]
        assert (args["seed"], args["budget"], args["beliefs"], args["self_eps"]) == (13, 1000, belief, 0.1)
