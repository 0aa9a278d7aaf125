"""The trainer's config (hollywood_gin_trainer/config.py): its defaults are the shipped recipe, every bad value is one
line naming the key, the value and what is allowed, wherever it comes from (a file, `--set`, a saved run), and what
a user names as a config is read within bounds."""

from __future__ import annotations

import math
import os
import stat
import sys
import threading
import tomllib
from pathlib import Path

import pytest

from hollywood_gin_trainer.config import (
    MAX_CONFIG_BYTES,
    RECIPE_NETWORK_KWARGS,
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


def test_the_network_arguments_are_the_recipes_for_cards_and_none_for_another_network_unless_given():
    """Absent, [model] network_kwargs are the recipe's for "cards" and none (the factory's defaults) for another
    network; given, they are the factory's arguments exactly; "cards"'s own keys in [model] (the shipped run's saved
    config's form) change the recipe's, or the table's, key by key; a written config names them in the table."""
    recipe = load_config(None).network_spec()
    assert recipe == {"name": "cards", "kwargs": RECIPE_NETWORK_KWARGS}
    assert load_config(None, ["model.network=mlp"]).network_spec() == {"name": "mlp", "kwargs": {}}
    given = load_config(None, ["model.network_kwargs={card_channels=8}"]).network_spec()
    assert given == {"name": "cards", "kwargs": {"card_channels": 8}}
    wider = load_config("configs/default.toml", ["model.card_channels=64"]).network_spec()
    assert wider == {"name": "cards", "kwargs": {**RECIPE_NETWORK_KWARGS, "card_channels": 64}}
    assert load_config(None, ["model.card_channels=64"]).network_spec() == wider
    config = load_config("configs/smoke.toml", ["model.lookahead_features=true"])
    written = tomllib.loads(to_toml(config))["model"]
    assert "lookahead_features" not in written and written["network_kwargs"]["lookahead_features"] is True
    assert config_from_dict(tomllib.loads(to_toml(config))) == config


USER_NETWORK = """
from hollywood_gin_env.agents.networks import MLPNetwork, network_factory

@network_factory
def small(width=8):
    return MLPNetwork([width], "relu")
"""


def test_a_config_file_imports_the_module_of_its_network_and_a_saved_config_does_not(tmp_path, monkeypatch):
    """A MODULE:FACTORY network in the user's own config (a file, --set) imports its module, the user's act; the
    same config read as a file's (a training state's: config_from_dict) resolves only once the module is imported,
    and its refusal names --import and imports nothing."""
    name = f"user_net_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(USER_NETWORK)
    monkeypatch.syspath_prepend(str(tmp_path))
    data = {"model": {"network": f"{name}:small", "network_kwargs": {"width": 4}}}
    try:
        with pytest.raises(ValueError, match=rf"module '{name}', which is not imported.*pass --import {name}"):
            config_from_dict(data)
        assert name not in sys.modules
        typed = load_config(None, [f"model.network={name}:small", "model.network_kwargs={width = 4}"])
        assert name in sys.modules and typed.network_spec() == {"name": f"{name}:small", "kwargs": {"width": 4}}
        assert config_from_dict(data) == typed
    finally:
        sys.modules.pop(name, None)


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
        ("model.hidden_sizes=[]", "[model]: network 'cards': hidden_sizes=[] must be a list of 1 to 8 ints"),
        ("model.hidden_sizes=[16,16,16,16,16,16,16,16,16]", "must be a list of 1 to 8 ints in 1..8192"),
        ("model.hidden_sizes=[8192, 8192]", "values; a network holds at most 50,000,000"),
        ("model.network=nowhere", "[model]: unknown network 'nowhere': use cards, mlp"),
        ("model.network=os:system", "which is not a function marked @network_factory or a torch.nn.Module class"),
        ("model.network=mlp", "[model]: network 'mlp': mlp() got an unexpected keyword argument 'card_channels'"),
        ("model.network=mlp|model.network_kwargs={hidden_sizes=[8]}|model.card_channels=8", "model.card_channels: an"),
        ("model.network=no_such_module_zz:net", "model.network='no_such_module_zz:net': cannot import the module"),
        ("model.network_kwargs={when=1979-05-27}", "[model]: network kwargs={'when': datetime.date(1979, 5, 27)}"),
        ("model.network_kwargs=[1]", "model.network_kwargs=[1] is not allowed: input should be a valid dictionary"),
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
