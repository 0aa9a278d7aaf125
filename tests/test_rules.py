"""Tests of hollywood_gin_env.rules.options: defaults (RULES.md §4), validation, presets, the kernel parameters."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from hollywood_gin_env.rules import options as rules_module
from hollywood_gin_env.rules.options import Rules

pytestmark = pytest.mark.nojit  # every test here is fast in pure Python too

#: RULES.md §4, written out by hand (num_games is the engine's extra: 3 = Hollywood).
SPEC_DEFAULTS = {
    "knock_limit": 10,
    "gin_bonus": 25,
    "undercut_bonus": 10,
    "undercut_on_tie": True,
    "big_gin_bonus": None,
    "allow_rediscard_taken_card": False,
    "dead_hand_stock_size": 2,
    "last_discard_rule": "dead",
    "knocker_arrangement": "auto",
    "defender_layoff": "auto_optimal",
    "dealer_rule": "winner_deals",
    "game_target": 100,
    "hollywood_entry_rule": "cascade",
    "hollywood_series_end": "all_three_closed",
    "hollywood_rolling": False,
    "series_winner_rule": "two_games",
    "game_bonus": 0,
    "box_bonus": 0,
    "boxes_count_toward_target": False,
    "shutout_rule": "none",
}


def test_defaults_equal_rules_md_section_4():
    """Rules() holds exactly the §4 defaults (plus num_games=3)."""
    assert Rules().to_dict() == {**SPEC_DEFAULTS, "num_games": 3}


def test_defaults_are_the_exact_types():
    """Defaults keep their types: bools are bool, ints are int (not bool), None stays None."""
    r = Rules()
    assert r.undercut_on_tie is True and r.allow_rediscard_taken_card is False
    assert type(r.knock_limit) is int and r.big_gin_bonus is None


def test_rules_is_frozen_and_hashable():
    """Assigning to a field raises FrozenInstanceError; equal rules hash equal."""
    r = Rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.knock_limit = 0  # type: ignore[misc]
    assert r == Rules() and hash(r) == hash(Rules())
    assert Rules(gin_bonus=20) != r


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("knock_limit", 0),
        ("gin_bonus", 20),
        ("undercut_bonus", 25),
        ("undercut_bonus", 20),
        ("undercut_on_tie", False),
        ("allow_rediscard_taken_card", True),
        ("last_discard_rule", "may_take_to_knock"),
        ("dealer_rule", "alternate"),
        ("dealer_rule", "loser_deals"),
        ("game_target", 125),
        ("game_target", 150),
        ("hollywood_entry_rule", "win_count"),
        ("hollywood_series_end", "when_decided"),
        ("series_winner_rule", "net_points"),
        ("game_bonus", 100),
        ("box_bonus", 20),
        ("box_bonus", 25),
        ("boxes_count_toward_target", True),
        ("shutout_rule", "double"),
        ("shutout_rule", "flat_100"),
        ("num_games", 1),
        ("knock_limit", np.int64(5)),
    ],
)
def test_supported_alternatives_are_accepted(key, value):
    """Each implemented §4 alternative constructs, and to_dict/from_dict round-trips it."""
    r = Rules(**{key: value})
    assert getattr(r, key) == value
    assert Rules.from_dict(r.to_dict()) == r


# (key, bad value, fragments the message must contain besides the key and the value's repr)
BAD_VALUES = [
    ("dealer_rule", "winner", ["'winner_deals'", "'alternate'", "'loser_deals'"]),
    ("last_discard_rule", "Dead", ["'dead'", "'may_take_to_knock'"]),
    ("hollywood_entry_rule", "cascading", ["'cascade'", "'win_count'"]),
    ("hollywood_series_end", 2, ["'all_three_closed'", "'when_decided'"]),
    ("series_winner_rule", None, ["'two_games'", "'net_points'"]),
    ("shutout_rule", "flat100", ["'none'", "'double'", "'flat_100'"]),
    # Not implemented (rules.py: no action for them in Discrete(107)); rejected with the allowed value.
    ("knocker_arrangement", "declared", ["'auto'"]),
    ("defender_layoff", "declared", ["'auto_optimal'"]),
    ("big_gin_bonus", 31, ["None"]),
    ("hollywood_rolling", True, ["False"]),
    ("dead_hand_stock_size", 3, ["2"]),
    ("num_games", 2, ["1", "3"]),
    ("num_games", True, ["1", "3"]),
    # Integers: out of range, bool given for an int, wrong type.
    ("knock_limit", -1, ["0..90"]),
    ("knock_limit", 91, ["0..90"]),
    ("knock_limit", True, ["0..90"]),
    ("knock_limit", 10.0, ["0..90"]),
    ("knock_limit", "10", ["0..90"]),
    ("gin_bonus", -5, ["0..1000"]),
    ("gin_bonus", False, ["0..1000"]),
    ("undercut_bonus", 0, ["1..1000"]),
    ("game_target", 0, ["1..100000"]),
    ("game_bonus", -1, ["0..100000"]),
    ("box_bonus", True, ["0..100000"]),
    # Bools: an int or a string is not a bool.
    ("undercut_on_tie", 1, ["true or false"]),
    ("allow_rediscard_taken_card", "false", ["true or false"]),
    ("boxes_count_toward_target", 0, ["true or false"]),
]


@pytest.mark.parametrize(("key", "value", "allowed"), BAD_VALUES)
def test_bad_value_names_key_value_and_allowed(key, value, allowed):
    """A bad value raises ValueError whose message names the key, the value and what is allowed."""
    with pytest.raises(ValueError) as info:
        Rules(**{key: value})
    message = str(info.value)
    assert key in message
    assert repr(value) in message
    for fragment in allowed:
        assert fragment in message, f"{fragment!r} not in {message!r}"


@pytest.mark.parametrize(("key", "value", "allowed"), BAD_VALUES)
def test_bad_value_through_from_dict(key, value, allowed):
    """from_dict validates like the constructor."""
    with pytest.raises(ValueError, match=key):
        Rules.from_dict({key: value})


def test_replace_validates_again():
    """replace() returns a validated copy and never mutates the original."""
    r = Rules()
    assert r.replace(knock_limit=0).knock_limit == 0
    assert r.knock_limit == 10
    with pytest.raises(ValueError, match="knock_limit"):
        r.replace(knock_limit=-1)


@pytest.mark.parametrize("build", [Rules.from_dict, lambda d: Rules.from_strings([f"{k}={v}" for k, v in d.items()])])
def test_unknown_key_is_rejected(build):
    """An unknown key raises ValueError naming the key, its value, and listing the allowed keys."""
    with pytest.raises(ValueError) as info:
        build({"knock_limt": 10})
    message = str(info.value)
    assert "knock_limt=10" in message
    for key in ("knock_limit", "gin_bonus", "shutout_rule", "num_games"):
        assert key in message


def test_from_strings_parses_ints_bools_none_and_text():
    """key=value strings parse ints, true/false, null/none and plain text; blanks around parts are ignored."""
    r = Rules.from_strings(
        [
            "knock_limit=0",
            "undercut_on_tie=false",
            "big_gin_bonus=null",
            " dealer_rule = alternate ",
            "gin_bonus=20",
        ]
    )
    assert r == Rules(knock_limit=0, undercut_on_tie=False, dealer_rule="alternate", gin_bonus=20)
    assert Rules.from_strings(["allow_rediscard_taken_card=True"]).allow_rediscard_taken_card is True
    assert Rules.from_strings([]) == Rules()


@pytest.mark.parametrize(
    ("pair", "fragments"),
    [
        ("knock_limit=ten", ["knock_limit", "'ten'", "0..90"]),
        ("knock_limit=true", ["knock_limit", "True", "0..90"]),
        ("undercut_on_tie=1", ["undercut_on_tie", "1", "true or false"]),
        ("dealer_rule=Winner", ["dealer_rule", "'Winner'", "'winner_deals'"]),
        ("knock_limit", ["'knock_limit'", "key=value"]),
    ],
)
def test_from_strings_bad_values(pair, fragments):
    """from_strings errors name the key, the parsed value and the allowed values (or the expected form)."""
    with pytest.raises(ValueError) as info:
        Rules.from_strings([pair])
    for fragment in fragments:
        assert fragment in str(info.value)


def test_presets_change_only_their_keys():
    """Presets: hollywood = Rules(); eaai = one game to 100, undercut 25, the dealer alternating; openspiel = one game
    to 1 (a match is one scored hand), undercut 25, the card just taken may be thrown back, the last discard may be
    taken to knock; classic = one game to 100, undercut 25, game 100, box 25, a
    shutout doubled; every other option keeps its default."""
    assert Rules.preset("hollywood") == Rules()
    expected = {
        "eaai": {"num_games": 1, "undercut_bonus": 25, "dealer_rule": "alternate"},
        "openspiel": {
            "num_games": 1,
            "undercut_bonus": 25,
            "game_target": 1,
            "allow_rediscard_taken_card": True,
            "last_discard_rule": "may_take_to_knock",
        },
        "classic": {
            "num_games": 1,
            "undercut_bonus": 25,
            "game_bonus": 100,
            "box_bonus": 25,
            "shutout_rule": "double",
        },
    }
    default = Rules().to_dict()
    for name, changes in expected.items():
        preset = Rules.preset(name).to_dict()
        assert {k: v for k, v in preset.items() if v != default[k]} == changes, name


def test_preset_overrides_and_unknown_preset():
    """Overrides apply on top of a preset (validated); an unknown preset name is an error naming it and the four."""
    assert Rules.preset("classic", game_target=150).game_target == 150
    assert Rules.preset("eaai", gin_bonus=20).gin_bonus == 20
    with pytest.raises(ValueError, match="knock_limit"):
        Rules.preset("eaai", knock_limit=-1)
    with pytest.raises(ValueError) as info:
        Rules.preset("gra")
    for fragment in ("'gra'", "hollywood", "eaai", "openspiel", "classic"):
        assert fragment in str(info.value)


def test_a_preset_is_named_in_a_table_in_strings_and_in_a_description():
    """`preset` in a rules table and a bare first word of `--rules` name the preset the other keys change; describe()
    names the nearest preset and the keys that differ from it."""
    assert Rules.from_dict({"preset": "eaai", "knock_limit": 5}) == Rules.preset("eaai", knock_limit=5)
    assert Rules.from_strings(["eaai", "knock_limit=5"]) == Rules.preset("eaai", knock_limit=5)
    assert Rules.from_spec("classic") == Rules.preset("classic")
    assert Rules.preset("eaai").describe() == "eaai"
    assert Rules.preset("eaai", knock_limit=5).describe() == "eaai, knock_limit=5"
    assert Rules(gin_bonus=20).describe() == "hollywood, gin_bonus=20"
    with pytest.raises(ValueError, match="preset"):
        Rules.from_strings(["knock_limit=5", "eaai"])  # a preset comes first or not at all


def test_param_indices_are_a_permutation():
    """The P_* indices are distinct and cover 0..NUM_PARAMS-1."""
    indices = sorted(v for k, v in vars(rules_module).items() if k.startswith("P_"))
    assert indices == list(range(rules_module.NUM_PARAMS))


def test_to_params_defaults():
    """to_params() of the defaults: an int64 vector with each option at its P_* index."""
    params = Rules().to_params()
    assert params.dtype == np.int64 and params.shape == (rules_module.NUM_PARAMS,)
    m = rules_module
    expected = {
        m.P_KNOCK_LIMIT: 10,
        m.P_GIN_BONUS: 25,
        m.P_UNDERCUT_BONUS: 10,
        m.P_UNDERCUT_ON_TIE: 1,
        m.P_ALLOW_REDISCARD: 0,
        m.P_DEAD_STOCK: 2,
        m.P_LAST_DISCARD: 0,
        m.P_DEALER_RULE: 0,
        m.P_GAME_TARGET: 100,
        m.P_ENTRY_RULE: 0,
        m.P_SERIES_END: 0,
        m.P_SERIES_WINNER: 0,
        m.P_GAME_BONUS: 0,
        m.P_BOX_BONUS: 0,
        m.P_BOXES_TO_TARGET: 0,
        m.P_SHUTOUT: 0,
        m.P_NUM_GAMES: 3,
    }
    assert {i: int(params[i]) for i in range(len(params))} == expected


def test_to_params_alternatives():
    """Choice options become their index in the option tuple; ints and bools are copied."""
    m = rules_module
    r = Rules(
        knock_limit=0,
        gin_bonus=20,
        undercut_bonus=25,
        undercut_on_tie=False,
        allow_rediscard_taken_card=True,
        last_discard_rule="may_take_to_knock",
        dealer_rule="loser_deals",
        game_target=150,
        hollywood_entry_rule="win_count",
        hollywood_series_end="when_decided",
        series_winner_rule="net_points",
        game_bonus=100,
        box_bonus=20,
        boxes_count_toward_target=True,
        shutout_rule="flat_100",
        num_games=1,
    )
    params = r.to_params()
    assert params[m.P_KNOCK_LIMIT] == 0
    assert params[m.P_GIN_BONUS] == 20
    assert params[m.P_UNDERCUT_BONUS] == 25
    assert params[m.P_UNDERCUT_ON_TIE] == 0
    assert params[m.P_ALLOW_REDISCARD] == 1
    assert params[m.P_LAST_DISCARD] == 1
    assert params[m.P_DEALER_RULE] == 2
    assert params[m.P_GAME_TARGET] == 150
    assert params[m.P_ENTRY_RULE] == 1
    assert params[m.P_SERIES_END] == 1
    assert params[m.P_SERIES_WINNER] == 1
    assert params[m.P_GAME_BONUS] == 100
    assert params[m.P_BOX_BONUS] == 20
    assert params[m.P_BOXES_TO_TARGET] == 1
    assert params[m.P_SHUTOUT] == 2
    assert params[m.P_NUM_GAMES] == 1
    assert Rules(dealer_rule="alternate").to_params()[m.P_DEALER_RULE] == 1
    assert Rules(shutout_rule="double").to_params()[m.P_SHUTOUT] == 1
