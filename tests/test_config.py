"""The trainer's config (hollywood_gin_trainer/config.py): its defaults are the shipped recipe, every bad value is one
line naming the key, the value and what is allowed, wherever it comes from (a file, `--set`, a saved run), and what
a user names as a config is read within bounds."""

from __future__ import annotations

import math
import os
import stat
import threading
import tomllib
from pathlib import Path

import pytest

from hollywood_gin_trainer.config import (
    MAX_CONFIG_BYTES,
    SECTIONS,
    Config,
    config_from_dict,
    load_config,
    parse_override,
    to_toml,
)

SMOKE = "configs/smoke.toml"


def test_the_defaults_are_the_shipped_recipe_of_configs_default_toml():
    """`hollywood-gin train` with no file trains the recipe: every default equals configs/default.toml, and the
    shipped run's saved config (docs/shipped-run/config.toml) is that recipe too."""
    recipe = load_config("configs/default.toml").to_dict()
    assert load_config(None).to_dict() == recipe == Config().to_dict()
    assert load_config("docs/shipped-run/config.toml").to_dict() == recipe


@pytest.mark.parametrize("path", sorted(Path("configs").glob("*.toml")), ids=lambda p: p.name)
def test_every_shipped_config_loads_and_writes_back_to_itself(path):
    """Each recipe is within every bound, and tomli-w's TOML of it reads back as the same config."""
    config = load_config(str(path))
    assert config_from_dict(tomllib.loads(to_toml(config))) == config


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("train.lrr=1", "unknown key train.lrr (value 1); [train] allows: seed, updates, lr"),
        ("bogus.x=1", "unknown config section [bogus]"),
        ("train.updates=1.5", "train.updates=1.5 is not allowed: input should be a valid integer"),
        ("train.updates=0", "train.updates=0 is not allowed: input should be greater than or equal to 1"),
        ("train.seed=true", "train.seed=True is not allowed: input should be a valid integer"),
        ("train.lr=nan", "train.lr=nan is not allowed: input should be a finite number"),
        ("ppo.clip_coef=inf", "ppo.clip_coef=inf is not allowed: input should be a finite number"),
        ("env.reward='points'", "env.reward='points' is not allowed: input should be 'hand', 'game', 'match' or"),
        ("ppo.clip_vloss=1", "ppo.clip_vloss=1 is not allowed: input should be a valid boolean"),
        ("model.hidden_sizes=[]", "model.hidden_sizes=[] is not allowed: list should have at least 1 item"),
        ("model.hidden_sizes=[16,16,16,16,16,16,16,16,16]", "list should have at most 8 items"),
        ("model.hidden_sizes=[8192, 8192]", "parameters; a policy has at most 50,000,000"),
        ("eval.opponents=['a=expert', 'a=greedy']", "eval.opponents: agents 'expert' and 'greedy' are both labelled"),
        ("eval.opponents=['']", "eval.opponents[0]='' is not allowed: string should have at least 1 character"),
        ("eval.opponents=[]", "eval.opponents=[] is not allowed: list should have at least 1 item"),
        ("eval.matches=5", "eval.matches=5 must be even"),
        ("eval.matches=100002", "eval.matches=100002 is not allowed: input should be less than or equal to 100000"),
        ("train.torch_threads=257", "train.torch_threads=257 is not allowed: input should be less than or equal"),
        ("train.env_threads=0", "train.env_threads=0 is not allowed: input should be greater than or equal to 1"),
        ("warmstart.decisions=2000001", "warmstart.decisions=2000001 is not allowed: input should be less than"),
        ("warmstart.teacher_weights=[1.0]", "warmstart.teacher_weights=[1.0]: give 9 numbers"),
        ("env.num_envs=8192|ppo.rollout_steps=4096", "decisions per rollout: allowed at most 1,048,576"),
        ("selfplay.opponents={self=1e308, snapshots=1e308}", "sum to inf; the sum must be finite and above"),
        ("selfplay.opponents={self=0.0, expert=0}", "selfplay.opponents: the weights sum to 0.0; the sum must be"),
        ("selfplay.opponents={self=-0.5}", "selfplay.opponents.self=-0.5 is not allowed: input should be greater"),
        ("selfplay.opponents={}", "selfplay.opponents={} is not allowed: dictionary should have at least 1 item"),
        ("selfplay.opponents={self='x'}", "selfplay.opponents.self='x' is not allowed: input should be a valid num"),
        (
            "selfplay.opponents={" + ", ".join(f"a{k}=expert" for k in range(17)).replace("=expert", "=1") + "}",
            "dictionary should have at most 16 items",
        ),
        ("model.critic_playout=true", 'set model.critic="privileged"'),
        ("rules.knock_limit=99", "knock_limit"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_key_the_value_and_what_is_allowed(override, message):
    with pytest.raises(ValueError) as error:
        load_config("configs/quick.toml", override.split("|"))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_every_float_field_refuses_nan():
    """pydantic's allow_inf_nan=False holds for every float field of every section, nested lists and tables
    included."""
    fields = [
        (section, key)
        for section, kind in SECTIONS.items()
        for key, info in kind.__pydantic_fields__.items()
        if "float" in str(info.annotation)
    ]
    assert len(fields) >= 15
    nested = {"teacher_weights": [math.nan] * 9, "opponents": {"self": math.nan}}
    for section, key in fields:
        value = nested.get(key, math.nan)
        with pytest.raises(ValueError, match="finite number"):
            config_from_dict({section: {key: value}})


def test_set_values_are_toml_or_bare_words_and_nest_no_deeper_than_the_parser_can_read():
    """`--set train.seed=[[[...` 50,000 deep is one line, not a RecursionError; so is an oversized value."""
    assert parse_override("train.lr=1e-4") == (["train", "lr"], 1e-4)
    assert parse_override("warmstart.teacher=greedy") == (["warmstart", "teacher"], "greedy")
    with pytest.raises(ValueError, match="section.key=value"):
        parse_override("lr=1e-4")
    for deep in ("[" * 50_000 + "]" * 50_000, "{a=" * 50_000 + "1" + "}" * 50_000):
        with pytest.raises(ValueError, match="nests arrays or tables too deep to read"):
            load_config(SMOKE, [f"train.seed={deep}"])
    with pytest.raises(ValueError, match="a config holds at most"):
        load_config(SMOKE, ["train.seed=" + "1" * (MAX_CONFIG_BYTES + 1)])


def _device(folder: Path) -> str:
    path = str(folder / "zero")
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    return path


@pytest.mark.parametrize("kind", ["device", "fifo", "directory", "oversized", "deep"])
def test_a_config_file_that_is_no_config_is_refused_at_once(tmp_path, kind):
    """A device (/dev/zero's numbers), a FIFO (no writer ever comes), a directory, a file over 1 MiB, a file nested
    100,000 deep: each is one line naming the path, without reading past the bound or waiting."""
    path = tmp_path / "config.toml"
    if kind == "device":
        path = Path(_device(tmp_path))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "oversized":
        path.write_bytes(b"#" * (MAX_CONFIG_BYTES + 1))
    else:
        path.write_text("[train]\nseed = " + "[" * 100_000 + "]" * 100_000 + "\n")
    outcome: list[BaseException] = []
    reader = threading.Thread(target=lambda: outcome.append(pytest.raises(ValueError, load_config, str(path)).value))
    reader.start()
    reader.join(20)
    if reader.is_alive():
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"reading a {kind} as a config did not return")
    assert str(path) in str(outcome[0]) or kind == "deep", outcome[0]
    assert "\n" not in str(outcome[0])


def test_a_config_saved_with_a_byte_order_mark_is_read_as_without_it(tmp_path):
    """Some editors (Notepad) start a UTF-8 file with a byte order mark: the config reads the same as without it."""
    text = Path(SMOKE).read_text(encoding="utf-8")
    marked = tmp_path / "marked.toml"
    marked.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert load_config(str(marked)) == load_config(SMOKE)


def test_an_absent_env_threads_is_left_out_of_the_written_config_and_a_set_count_is_kept():
    assert load_config(None).train.env_threads is None and "env_threads" not in to_toml(load_config(None))
    assert "env_threads = 3" in to_toml(load_config(None, ["train.env_threads=3"])).splitlines()
