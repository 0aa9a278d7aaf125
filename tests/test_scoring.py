"""The hand score and the Hollywood sheet through hollywood_gin_env.rules.scoring (RULES.md R22-R24, R31-R39, E9, E10).

The sheet of one match is the arrays of state.py without the leading axis: totals[3, 2], entries[3, 2],
game_winner[3] (-1 while open), game_net[3] and hand_wins[2]. Player A is 0 and B is 1.
"""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.rules.scoring import (
    KIND_GIN,
    KIND_KNOCK,
    KIND_UNDERCUT,
    credited_games,
    enter_hand,
    hand_score,
    series_result,
)

pytestmark = pytest.mark.nojit  # pure functions on tiny arrays: fast in plain Python too

A, B = 0, 1
OPEN = -1


class Sheet:
    """One match's score sheet and the rules it is kept under."""

    def __init__(self, rules: Rules | None = None) -> None:
        self.params = (rules or Rules()).to_params()
        self.totals = np.zeros((3, 2), dtype=np.int64)
        self.entries = np.zeros((3, 2), dtype=np.int64)
        self.game_winner = np.full(3, OPEN, dtype=np.int64)
        self.game_net = np.zeros(3, dtype=np.int64)
        self.hand_wins = np.zeros(2, dtype=np.int64)

    def win(self, player: int, points: int) -> tuple[list[int], list[int]]:
        """Enter a won hand; return the credited and the closed games as lists of game indices."""
        credited, closed = enter_hand(
            self.totals, self.entries, self.game_winner, self.game_net, self.hand_wins, player, points, self.params
        )
        return bits(credited), bits(closed)

    def game_totals(self) -> list[tuple[int, int]]:
        """(A, B) totals of G1, G2, G3."""
        return [(int(a), int(b)) for a, b in self.totals]

    def series_winner(self) -> int:
        """scoring.series_result: 0 or 1 once the series is over, else -1."""
        return int(series_result(self.game_winner, self.game_net, self.params))


def bits(mask: int) -> list[int]:
    """Game indices of a bit mask."""
    return [g for g in range(3) if int(mask) >> g & 1]


# --- R22-R24: the hand score --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "d", "rules", "expected"),
    [
        (2, 38, Rules(), (KIND_KNOCK, True, 36)),  # E1: 38 - 2
        (8, 3, Rules(), (KIND_UNDERCUT, False, 15)),  # E2: 10 + (8 - 3)
        (8, 3, Rules(undercut_bonus=25), (KIND_UNDERCUT, False, 30)),
        (7, 7, Rules(), (KIND_UNDERCUT, False, 10)),  # E3: a tie is an undercut, 10 + 0
        (7, 7, Rules(undercut_on_tie=False), (KIND_KNOCK, True, 0)),  # A3 outlier: the knocker takes 0
        (0, 0, Rules(), (KIND_GIN, True, 25)),  # E4: gin is never undercut, even by d = 0
        (0, 0, Rules(gin_bonus=20), (KIND_GIN, True, 20)),
        (0, 51, Rules(), (KIND_GIN, True, 76)),  # E5: 25 + 51
        (10, 11, Rules(), (KIND_KNOCK, True, 1)),  # the smallest knock win
        (10, 0, Rules(), (KIND_UNDERCUT, False, 20)),
    ],
)
def test_hand_score(k, d, rules, expected):
    """R22-R24: (kind, knocker wins, points) from the knocker's and the defender's deadwood."""
    kind, knocker_wins, points = hand_score(k, d, rules.to_params())
    assert (int(kind), bool(knocker_wins), int(points)) == expected


# --- E9: the Hollywood table ---------------------------------------------------------------------------------

# (winner, points, credited games, G1, G2, G3 totals after the hand, games closed by the hand)
E9_ROWS = [
    (A, 30, [0], (30, 0), (0, 0), (0, 0), []),  # A's first win: G1
    (A, 25, [0, 1], (55, 0), (25, 0), (0, 0), []),  # A's second: G1 and G2
    (B, 12, [0], (55, 12), (25, 0), (0, 0), []),  # B's first: G1
    (A, 20, [0, 1, 2], (75, 12), (45, 0), (20, 0), []),  # A's third: all three
    (A, 28, [0, 1, 2], (103, 12), (73, 0), (48, 0), [0]),  # G1 reaches 103: closed, won by A
    (B, 15, [1], (103, 12), (73, 15), (48, 0), []),  # B's second: G1 is closed, so G2 only
    (B, 22, [1, 2], (103, 12), (73, 37), (48, 22), []),
    (A, 30, [1, 2], (103, 12), (103, 37), (78, 22), [1]),  # G2 to A: A has won two games
    (B, 45, [2], (103, 12), (103, 37), (78, 67), []),
    (B, 40, [2], (103, 12), (103, 37), (78, 107), [2]),  # G3 to B: A wins the series 2-1
]


@pytest.mark.parametrize("entry_rule", ["cascade", "win_count"])
def test_e9_table_row_by_row(entry_rule):
    """E9: every total after every hand, the closes, and the series after hand 10 (all three closed)."""
    sheet = Sheet(Rules(hollywood_entry_rule=entry_rule))
    for hand, (winner, points, credited, g1, g2, g3, closed) in enumerate(E9_ROWS, start=1):
        assert sheet.win(winner, points) == (credited, closed), f"hand {hand}"
        assert sheet.game_totals() == [g1, g2, g3], f"hand {hand}"
        expected_series = A if hand == 10 else -1  # the default plays on until G3 closes (R37)
        assert sheet.series_winner() == expected_series, f"hand {hand}"
    assert sheet.game_winner.tolist() == [A, A, B]
    # Entries ("boxes"): A won hands 1, 2, 4, 5 in G1; 2, 4, 5, 8 in G2; 4, 5, 8 in G3.
    # B won hand 3 in G1; 6, 7 in G2; 7, 9, 10 in G3.
    assert sheet.entries.tolist() == [[4, 1], [4, 2], [3, 3]]
    assert sheet.hand_wins.tolist() == [5, 5]


def test_e9_when_decided_ends_after_hand_8():
    """E9 with hollywood_series_end="when_decided": A's second game (G2, hand 8) ends the series."""
    sheet = Sheet(Rules(hollywood_series_end="when_decided"))
    for hand, (winner, points, *_rest) in enumerate(E9_ROWS[:8], start=1):
        sheet.win(winner, points)
        assert sheet.series_winner() == (A if hand == 8 else -1), f"hand {hand}"


def test_e9_src_check():
    """SRC's own example: Bob 10, Alexandra 18, Bob 30, Bob 4 gives Alexandra 18/0/0 and Bob 44/34/4."""
    bob, alexandra = A, B
    sheet = Sheet()
    for player, points in ((bob, 10), (alexandra, 18), (bob, 30), (bob, 4)):
        sheet.win(player, points)
    assert sheet.totals[:, alexandra].tolist() == [18, 0, 0]
    assert sheet.totals[:, bob].tolist() == [44, 34, 4]


E9_SETTLEMENTS = [
    # No bonuses (the default): G1 nets 103 - 12 = 91.
    (Rules(), 91),
    # Game 100, box 25: A 103 + 100 + 4 x 25 = 303 against B 12 + 1 x 25 = 37: 266. B has an entry,
    # so the shutout rule does not apply.
    (Rules(game_bonus=100, box_bonus=25, shutout_rule="double"), 266),
    # Box 20: A 103 + 100 + 80 = 283 against B 12 + 20 = 32: 251.
    (Rules(game_bonus=100, box_bonus=20, shutout_rule="flat_100"), 251),
]


@pytest.mark.parametrize(("rules", "net"), E9_SETTLEMENTS)
def test_e9_settlement_of_g1(rules, net):
    """R39, E9: G1's net to A when it closes at hand 5."""
    sheet = Sheet(rules)
    for winner, points, *_rest in E9_ROWS[:5]:
        sheet.win(winner, points)
    assert int(sheet.game_net[0]) == net


def test_e9_settlement_of_all_games_with_game_and_box_bonuses():
    """R39, E9 with a game bonus of 100 and a box bonus of 25, the other two games too.

    G2 to A: 103 + 100 + 4 x 25 = 303 against B 37 + 2 x 25 = 87: 216.
    G3 to B: 107 + 100 + 3 x 25 = 282 against A 78 + 3 x 25 = 153: 129.
    """
    sheet = Sheet(Rules(game_bonus=100, box_bonus=25, shutout_rule="double"))
    for winner, points, *_rest in E9_ROWS:
        sheet.win(winner, points)
    assert sheet.game_net.tolist() == [266, 216, 129]


# --- E10, R36: shutout entry, cascade against win_count ------------------------------------------------------


@pytest.mark.parametrize(
    ("entry_rule", "b_rows"),
    [
        # cascade: B's first win is entered in the lowest open game, G2; the second in G2 and G3 (R36).
        ("cascade", [([1], [(105, 0), (65, 20), (30, 0)]), ([1, 2], [(105, 0), (65, 35), (30, 15)])]),
        # win_count: win #1 maps to the closed G1, so nothing is entered; win #2 goes to G2 only.
        ("win_count", [([], [(105, 0), (65, 0), (30, 0)]), ([1], [(105, 0), (65, 15), (30, 0)])]),
    ],
)
def test_e10_shutout_entry(entry_rule, b_rows):
    """E10: A +40, A +35, A +30 close G1 at 105/0 with B shut out; then B +20 and B +15."""
    sheet = Sheet(Rules(hollywood_entry_rule=entry_rule))
    assert sheet.win(A, 40) == ([0], [])
    assert sheet.win(A, 35) == ([0, 1], [])
    assert sheet.win(A, 30) == ([0, 1, 2], [0])
    assert sheet.game_totals() == [(105, 0), (65, 0), (30, 0)]
    for points, (credited, totals) in zip((20, 15), b_rows, strict=True):
        assert sheet.win(B, points) == (credited, [])
        assert sheet.game_totals() == totals
    assert sheet.hand_wins.tolist() == [3, 2]  # a win entered nowhere still counts as a win (A12)


@pytest.mark.parametrize(
    ("rules", "net"),
    [
        # Game 100, box 25: A 105 + 100 + 3 x 25 = 280 against 0 with no entries; shutout "double" gives 560.
        (Rules(game_bonus=100, box_bonus=25, shutout_rule="double"), 560),
        # flat_100 with game 100, box 25: 280 + 100 = 380.
        (Rules(game_bonus=100, box_bonus=25, shutout_rule="flat_100"), 380),
        # Box 20 and flat_100: 105 + 100 + 3 x 20 = 265, + 100 for the shutout = 365.
        (Rules(game_bonus=100, box_bonus=20, shutout_rule="flat_100"), 365),
        # No bonuses, no shutout rule: 105.
        (Rules(), 105),
    ],
)
def test_e10_settlement(rules, net):
    """R39, E10: G1's settlement when B is shut out."""
    sheet = Sheet(rules)
    for points in (40, 35, 30):
        sheet.win(A, points)
    assert int(sheet.game_net[0]) == net


def test_r36_credited_games_after_a_shutout():
    """R36 through credited_games: B, with no entries anywhere, wins after G1 closed: first entry in G2."""
    params = Rules().to_params()
    entries = np.array([[3, 0], [2, 0], [1, 0]], dtype=np.int64)
    game_winner = np.array([A, OPEN, OPEN], dtype=np.int64)
    assert bits(credited_games(entries, game_winner, 1, B, params)) == [1]
    # A with entries in G1 and G2 is credited in G2 and G3.
    assert bits(credited_games(entries, game_winner, 4, A, params)) == [1, 2]
    # Under win_count, B's win #1 goes nowhere.
    assert bits(credited_games(entries, game_winner, 1, B, Rules(hollywood_entry_rule="win_count").to_params())) == []


# --- R33-R35: overshoot, closed games, several closes on one hand ---------------------------------------------


def test_r33_overshoot_is_kept():
    """R33: 95 + 30 = 125 in G1, not capped at 100; G2 gets the 30 too (A's second win)."""
    sheet = Sheet()
    sheet.win(A, 95)
    assert sheet.win(A, 30) == ([0, 1], [0])
    assert sheet.game_totals()[0] == (125, 0)
    assert int(sheet.game_net[0]) == 125


def test_r34_closed_game_takes_no_entries():
    """R34: once G1 is closed, nobody's win changes it."""
    sheet = Sheet()
    sheet.win(A, 60)
    sheet.win(B, 10)
    sheet.win(A, 50)  # G1 110/10 closes
    closed = sheet.totals[0].copy(), sheet.entries[0].copy(), int(sheet.game_net[0])
    for player, points in ((A, 30), (B, 40), (B, 25), (A, 5)):
        credited, _ = sheet.win(player, points)
        assert 0 not in credited
        assert (sheet.totals[0].tolist(), sheet.entries[0].tolist(), int(sheet.game_net[0])) == (
            closed[0].tolist(),
            closed[1].tolist(),
            closed[2],
        )
    assert int(sheet.game_winner[0]) == A


def test_r35_three_games_close_on_one_hand():
    """R35: A +10, +10, +10 then +90: G1 120, G2 110, G3 100 all close on the fourth hand, all won by A."""
    sheet = Sheet()
    for _ in range(3):
        sheet.win(A, 10)
    assert sheet.game_totals() == [(30, 0), (20, 0), (10, 0)]
    assert sheet.win(A, 90) == ([0, 1, 2], [0, 1, 2])
    assert sheet.game_totals() == [(120, 0), (110, 0), (100, 0)]
    assert sheet.game_winner.tolist() == [A, A, A]
    assert sheet.series_winner() == A


def test_r34_reaching_exactly_the_target_closes():
    """R34: A +50, A +50 reaches exactly 100 in G1, which closes (>= target) while G2 holds 50.

    Then A +50: G2 100 closes; G3 gets 50. The series (default) waits for G3.
    """
    sheet = Sheet()
    sheet.win(A, 50)
    assert sheet.win(A, 50) == ([0, 1], [0])
    assert sheet.win(A, 50) == ([1, 2], [1])
    assert sheet.game_totals() == [(100, 0), (100, 0), (50, 0)]
    assert sheet.series_winner() == -1


# --- Options: boxes toward the target, one game, net points ----------------------------------------------------


def test_boxes_count_toward_target():
    """R39 option: with box 25 counted toward 100, A's 30 + 30 (60 + 2 x 25 = 110) closes G1 on hand 2.

    The sheet keeps the real total 60; the net is 60 + 2 x 25 = 110 (no game bonus, B has no box).
    """
    rules = Rules(box_bonus=25, boxes_count_toward_target=True)
    sheet = Sheet(rules)
    assert sheet.win(A, 30) == ([0], [])  # 30 + 25 = 55
    assert sheet.win(A, 30) == ([0, 1], [0])
    assert sheet.game_totals()[0] == (60, 0)
    assert int(sheet.game_net[0]) == 110
    plain = Sheet(Rules(box_bonus=25))
    plain.win(A, 30)
    assert plain.win(A, 30) == ([0, 1], [])  # boxes not counted: 60 < 100


def test_num_games_1_is_plain_gin_to_100():
    """num_games=1: every win goes to G1 only; A 60 + 50 = 110 against B 30 ends the match for A."""
    sheet = Sheet(Rules(num_games=1))
    assert sheet.win(A, 60) == ([0], [])
    assert sheet.win(B, 30) == ([0], [])
    assert sheet.series_winner() == -1
    assert sheet.win(A, 50) == ([0], [0])
    assert sheet.game_totals() == [(110, 30), (0, 0), (0, 0)]
    assert sheet.series_winner() == A
    assert int(sheet.game_net[0]) == 80


# B +90; A +100 (G1 100/90: A nets 10); B +90 (G2); A +100 (G2 100/90: A nets 10, A has two games);
# B +200 (G3 0/200: B nets 200). By games A wins 2-1; by net points B wins 200 to 20.
NET_POINTS_ROWS = [(B, 90, [0]), (A, 100, [0]), (B, 90, [1]), (A, 100, [1]), (B, 200, [2])]


@pytest.mark.parametrize(("rule", "winner"), [("two_games", A), ("net_points", B)])
def test_series_winner_rule(rule, winner):
    """R37 / A14: series_winner_rule="net_points" gives the series to the larger total net (R39)."""
    sheet = Sheet(Rules(series_winner_rule=rule))
    for player, points, credited in NET_POINTS_ROWS:
        assert sheet.win(player, points)[0] == credited
    assert sheet.game_winner.tolist() == [A, A, B]
    assert sheet.game_net.tolist() == [10, 10, 200]
    assert sheet.series_winner() == winner
