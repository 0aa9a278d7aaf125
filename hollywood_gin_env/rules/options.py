"""`Rules`: every option of docs/RULES.md §4, validated on construction and frozen.

The engine's kernels take the rules as one int64 parameter vector (`Rules.to_params()`), indexed
by the `P_*` constants below, so numba code never sees Python objects.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from hollywood_gin_env.support.messages import shown_text, shown_value

#: A22: a hand whose draws (stock or pile, both players counted) reach this many without a knock is dead. Only
#: take-and-discard cycles come near it: the stock allows 29 stock draws, and uniformly random play averages 58 turns.
MAX_HAND_TURNS = 200

# Indices into the parameter vector passed to the kernels.
P_KNOCK_LIMIT = 0
P_GIN_BONUS = 1
P_UNDERCUT_BONUS = 2
P_UNDERCUT_ON_TIE = 3
P_ALLOW_REDISCARD = 4
P_DEAD_STOCK = 5
P_LAST_DISCARD = 6
P_DEALER_RULE = 7
P_GAME_TARGET = 8
P_ENTRY_RULE = 9
P_SERIES_END = 10
P_SERIES_WINNER = 11
P_GAME_BONUS = 12
P_BOX_BONUS = 13
P_BOXES_TO_TARGET = 14
P_SHUTOUT = 15
P_NUM_GAMES = 16
NUM_PARAMS = 17

LAST_DISCARD_RULES = ("dead", "may_take_to_knock")
DEALER_RULES = ("winner_deals", "alternate", "loser_deals")
ENTRY_RULES = ("cascade", "win_count")
SERIES_ENDS = ("all_three_closed", "when_decided")
SERIES_WINNER_RULES = ("two_games", "net_points")
SHUTOUT_RULES = ("none", "double", "flat_100")

# The codes the kernels compare (params[P_*]): each choice's index in its tuple above, as Rules.to_params writes it.
LAST_DISCARD_DEAD, LAST_DISCARD_MAY_TAKE = (LAST_DISCARD_RULES.index(c) for c in ("dead", "may_take_to_knock"))
DEALER_WINNER_DEALS, DEALER_ALTERNATE, DEALER_LOSER_DEALS = (
    DEALER_RULES.index(c) for c in ("winner_deals", "alternate", "loser_deals")
)
ENTRY_CASCADE, ENTRY_WIN_COUNT = (ENTRY_RULES.index(c) for c in ("cascade", "win_count"))
SERIES_END_ALL_CLOSED, SERIES_END_WHEN_DECIDED = (SERIES_ENDS.index(c) for c in ("all_three_closed", "when_decided"))
SERIES_WINNER_TWO_GAMES, SERIES_WINNER_NET_POINTS = (SERIES_WINNER_RULES.index(c) for c in ("two_games", "net_points"))
SHUTOUT_NONE, SHUTOUT_DOUBLE, SHUTOUT_FLAT_100 = (SHUTOUT_RULES.index(c) for c in ("none", "double", "flat_100"))

_CHOICES: dict[str, tuple[Any, ...]] = {
    "last_discard_rule": LAST_DISCARD_RULES,
    "dealer_rule": DEALER_RULES,
    "hollywood_entry_rule": ENTRY_RULES,
    "hollywood_series_end": SERIES_ENDS,
    "series_winner_rule": SERIES_WINNER_RULES,
    "shutout_rule": SHUTOUT_RULES,
    # Only the automatic showdown is implemented: the action space has no meld or layoff actions
    # (docs/RULES.md A6, A7), so "declared" arrangements have no way in.
    "knocker_arrangement": ("auto",),
    "defender_layoff": ("auto_optimal",),
    # Big gin needs an action without a discard, which Discrete(107) does not have.
    "big_gin_bonus": (None,),
    # The rolling variant (a G4 opens when G1 closes) is not implemented; see docs/ENVIRONMENTS.md.
    "hollywood_rolling": (False,),
    "num_games": (1, 3),
    "dead_hand_stock_size": (2,),
}

# (low, high) inclusive bounds of the integer options.
_RANGES: dict[str, tuple[int, int]] = {
    "knock_limit": (0, 90),
    "gin_bonus": (0, 1000),
    "undercut_bonus": (1, 1000),
    "game_target": (1, 100000),
    "game_bonus": (0, 100000),
    "box_bonus": (0, 100000),
}

_BOOLS = ("undercut_on_tie", "allow_rediscard_taken_card", "boxes_count_toward_target")

_INT_TEXT = re.compile(r"[+-]?[0-9]+", flags=re.ASCII)

#: The key of a rules table (a config's [rules], Rules.from_dict) that names the preset its other keys change.
PRESET_KEY = "preset"
#: The named rule sets, each as its options that differ from the defaults (docs/RULES.md §4 gives their sources):
#: "hollywood" the defaults; "eaai" the EAAI-2021 gin rummy challenge's (one game to 100, undercut 25, the dealer
#: alternates); "openspiel" OpenSpiel gin_rummy's defaults as far as the action space allows (one scored hand: a
#: match ends at the first one; the card just taken may be thrown back; the last discard may be taken to knock);
#: "classic" one game to 100 with the usual bonuses (game 100, box 25 per hand won, a shutout doubled).
PRESETS: dict[str, dict[str, Any]] = {
    "hollywood": {},
    "eaai": {"num_games": 1, "undercut_bonus": 25, "dealer_rule": "alternate"},
    "openspiel": {
        "num_games": 1,
        "undercut_bonus": 25,
        "game_target": 1,
        "allow_rediscard_taken_card": True,
        "last_discard_rule": "may_take_to_knock",
    },
    "classic": {"num_games": 1, "undercut_bonus": 25, "game_bonus": 100, "box_bonus": 25, "shutout_rule": "double"},
}


@dataclass(frozen=True)
class Rules:
    """The rule options of docs/RULES.md §4 (defaults as there), `num_games` included (3 = Hollywood)."""

    knock_limit: int = 10
    gin_bonus: int = 25
    undercut_bonus: int = 10
    undercut_on_tie: bool = True
    big_gin_bonus: int | None = None
    allow_rediscard_taken_card: bool = False
    dead_hand_stock_size: int = 2
    last_discard_rule: str = "dead"
    knocker_arrangement: str = "auto"
    defender_layoff: str = "auto_optimal"
    dealer_rule: str = "winner_deals"
    game_target: int = 100
    hollywood_entry_rule: str = "cascade"
    hollywood_series_end: str = "all_three_closed"
    hollywood_rolling: bool = False
    series_winner_rule: str = "two_games"
    game_bonus: int = 0
    box_bonus: int = 0
    boxes_count_toward_target: bool = False
    shutout_rule: str = "none"
    num_games: int = 3

    def __post_init__(self) -> None:
        for name, allowed in _CHOICES.items():
            check_choice(name, getattr(self, name), allowed, what="rule ")
        for name, (low, high) in _RANGES.items():
            _check_int(name, getattr(self, name), low, high)
        for name in _BOOLS:
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"rule {name}={shown_value(value)} is not allowed: expected true or false")
        # Store plain Python values: numpy scalars would leak into to_dict(), JSON reports and checkpoints.
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.generic):
                object.__setattr__(self, f.name, value.item())
            elif isinstance(value, str) and type(value) is not str:
                object.__setattr__(self, f.name, str(value))

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Rules:
        """Rules of a named preset (PRESETS: "hollywood", "eaai", "openspiel", "classic"), keywords overriding it."""
        if not isinstance(name, str) or name not in PRESETS:
            raise ValueError(f"unknown rules preset {shown_value(name)}: allowed are {', '.join(PRESETS)}")
        return cls.from_dict({**PRESETS[name], **overrides})

    def describe(self) -> str:
        """The rules in a few words: a preset's name, with the keys that differ from it ("eaai, knock_limit=5")."""
        best, changed = "hollywood", None
        for name in PRESETS:
            diff = {k: v for k, v in self.to_dict().items() if v != getattr(Rules.preset(name), k)}
            if changed is None or len(diff) < len(changed):
                best, changed = name, diff
        return ", ".join([best, *(f"{key}={_shown_value(value)}" for key, value in changed.items())])

    @classmethod
    def from_strings(cls, pairs: list[str] | tuple[str, ...]) -> Rules:
        """Rules from "key=value" strings (as on a command line), values parsed as int, bool or text."""
        if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Iterable):
            # A bare "knock_limit=0" would otherwise be read character by character.
            raise ValueError(
                f"rule options {shown_value(pairs)} must be a list of 'key=value' strings, e.g. ['knock_limit=0']"
            )
        values: dict[str, Any] = {}
        for index, pair in enumerate(pairs):
            if not isinstance(pair, str):
                raise ValueError(f"rule option {shown_value(pair)} is not a 'key=value' string")
            key, sep, text = pair.partition("=")
            if not sep and index == 0 and pair.strip() in PRESETS:  # a bare first word: the preset the keys change
                key, text = PRESET_KEY, pair
            elif not sep:
                raise ValueError(
                    f"rule option {shown_value(pair)} is not of the form key=value, nor (first) a preset's name: "
                    f"{', '.join(PRESETS)}"
                )
            key = key.strip()
            if key in values:
                raise ValueError(
                    f"rule option {shown_value(key)} is given twice ({shown_value(pair)}); give each key once"
                )
            try:
                values[key] = _parse_value(text.strip())
            except ValueError:  # int() reads at most 4,300 digits (sys.get_int_max_str_digits)
                raise ValueError(
                    f"rule {shown_text(key)}={shown_text(text.strip())} is not allowed: a number of "
                    f"{len(text.strip()):,} digits is no rule's value"
                ) from None
        return cls.from_dict(values)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> Rules:
        """Rules from a dict of options, "preset" naming the preset the other keys change (default "hollywood"); an
        unknown key raises ValueError listing the known keys."""
        if not isinstance(values, dict):
            raise ValueError(f"rules {shown_value(values)} must be a table of options or a preset's name")
        if PRESET_KEY in values:
            values = dict(values)
            return cls.preset(values.pop(PRESET_KEY), **values)
        _check_keys(values)
        return cls(**values)

    @classmethod
    def from_spec(cls, spec: str | dict[str, Any] | Rules | None) -> Rules:
        """Rules from a preset's name, a dict of options (`from_dict`), a Rules (itself) or None (the defaults)."""
        if spec is None:
            return cls()
        if isinstance(spec, Rules):
            return spec
        if isinstance(spec, str):
            return cls.preset(spec)
        return cls.from_dict(spec)

    def to_dict(self) -> dict[str, Any]:
        """All options as a plain dict (for configs and checkpoints)."""
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> Rules:
        """A copy with some options changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_params(self) -> np.ndarray:
        """The int64 parameter vector the numba kernels read (indices P_*)."""
        params = np.zeros(NUM_PARAMS, dtype=np.int64)
        params[P_KNOCK_LIMIT] = self.knock_limit
        params[P_GIN_BONUS] = self.gin_bonus
        params[P_UNDERCUT_BONUS] = self.undercut_bonus
        params[P_UNDERCUT_ON_TIE] = int(self.undercut_on_tie)
        params[P_ALLOW_REDISCARD] = int(self.allow_rediscard_taken_card)
        params[P_DEAD_STOCK] = self.dead_hand_stock_size
        params[P_LAST_DISCARD] = LAST_DISCARD_RULES.index(self.last_discard_rule)
        params[P_DEALER_RULE] = DEALER_RULES.index(self.dealer_rule)
        params[P_GAME_TARGET] = self.game_target
        params[P_ENTRY_RULE] = ENTRY_RULES.index(self.hollywood_entry_rule)
        params[P_SERIES_END] = SERIES_ENDS.index(self.hollywood_series_end)
        params[P_SERIES_WINNER] = SERIES_WINNER_RULES.index(self.series_winner_rule)
        params[P_GAME_BONUS] = self.game_bonus
        params[P_BOX_BONUS] = self.box_bonus
        params[P_BOXES_TO_TARGET] = int(self.boxes_count_toward_target)
        params[P_SHUTOUT] = SHUTOUT_RULES.index(self.shutout_rule)
        params[P_NUM_GAMES] = self.num_games
        return params


def largest_param(name: str) -> int:
    """The largest value option `name` takes in `Rules.to_params()`: its range's top, its last choice, or 1 (bool)."""
    if name in _RANGES:
        return _RANGES[name][1]
    if name in _BOOLS:
        return 1
    choices = _CHOICES[name]
    if all(isinstance(c, int) and not isinstance(c, bool) for c in choices):
        return max(choices)
    return len(choices) - 1


def _shown_value(value: Any) -> str:
    """An option's value as a config writes it: true/false, null, a number or a word."""
    if isinstance(value, bool):
        return str(value).lower()
    return "null" if value is None else str(value)


def _check_keys(values: dict[str, Any]) -> None:
    """ValueError naming an unknown option and listing the known keys."""
    known = {f.name for f in fields(Rules)}
    for key in values:
        if key not in known:
            raise ValueError(
                f"unknown rule option {shown_text(key) if isinstance(key, str) else shown_value(key)}="
                f"{shown_value(values[key])}: allowed keys are "
                f"{', '.join(sorted(known))}"
            )


def _validated_init(init: Any) -> Any:
    """Wrap the dataclass __init__ so Rules(foo=1) raises the ValueError of from_dict, not a TypeError."""

    @functools.wraps(init)
    def __init__(self: Rules, *args: Any, **kwargs: Any) -> None:  # noqa: N807
        _check_keys(kwargs)
        if len(args) > len(fields(Rules)):
            raise ValueError(f"Rules takes at most {len(fields(Rules))} options, got {len(args)} positional values")
        init(self, *args, **kwargs)

    return __init__


Rules.__init__ = _validated_init(Rules.__init__)  # type: ignore[method-assign]


def check_choice(name: str, value: Any, allowed: tuple[Any, ...], what: str = "") -> None:
    """The one option validator (rules, env arguments): ValueError naming `what name=value` and the allowed values.

    A value matches a choice of its own kind only: True is not 1, 1.0 is not 1, and "1" is not 1.
    """
    if isinstance(value, bool) and not all(isinstance(a, bool) for a in allowed):
        ok = False
    else:
        ok = any(value is a or (value == a and _same_kind(value, a)) for a in allowed)
    if not ok:
        shown = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{what}{name}={shown_value(value)} is not allowed: allowed values are {shown}")


def _same_kind(value: Any, allowed: Any) -> bool:
    """True if value and an allowed choice are both text, or both integers (numpy scalars included)."""
    if isinstance(allowed, str):
        return isinstance(value, str)
    if isinstance(allowed, bool):
        return isinstance(value, (bool, np.bool_))
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_int(name: str, value: Any, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
        raise ValueError(f"rule {name}={shown_value(value)} is not allowed: expected an integer in {low}..{high}")


def _parse_value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    # ASCII digits only: int() would also accept "٣" or "1_0", which no command line means as a number.
    if _INT_TEXT.fullmatch(text):
        return int(text)
    return text
