"""A small checkpoint cannot ask for a big allocation.

Tensors with stride 0 (`torch.zeros(1).expand(...)`) match every expected shape, so an 8 KB file with `hidden_sizes =
[8192] * 40` could ask for 5-10 GB. So the config's layers and parameter count are bounded, every tensor must be
dense, contiguous and fit its own storage, storages must not overlap, and files over 1 GiB are refused before
`torch.load`; all of it before any network is built, each a one-line ValueError. Memory is measured in a child process
(its peak RSS). The zip's records may not declare more bytes uncompressed than the file holds (torch.load inflates a
compressed record whole, before any check), parameter names must be strings, and a device is named as not a
regular file.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
import zipfile

import pytest

torch = pytest.importorskip("torch")

from hollywood_gin_env.agents import load_agent  # noqa: E402
from hollywood_gin_env.agents.policy import (  # noqa: E402
    CHECKPOINT_VERSION,
    MAX_CHECKPOINT_BYTES,
    MAX_LAYERS,
    MAX_PARAMETERS,
    build_policy,
    check_policy_config,
    expected_shapes,
    load_checkpoint,
)

#: A child that only fails to load a checkpoint must not grow its peak RSS by more than this.
ALLOCATION_BOUND_MB = 150


def hollow_checkpoint(path, hidden_sizes):
    """A checkpoint whose every tensor is one float expanded (stride 0) to the shape the config expects."""
    config = {"arch": "cards", "hidden_sizes": hidden_sizes, "card_channels": 8}
    full = {
        **config,
        "obs_size": 567,
        "num_actions": 107,
        "activation": "relu",
        "take_features": False,
        "lookahead_features": False,
        "deterministic": True,
    }
    with torch.device("meta"):
        shapes = {name: tuple(t.shape) for name, t in build_policy(full).state_dict().items()}
    state = {name: torch.zeros(1).expand(shape) for name, shape in shapes.items()}
    torch.save(
        {"format": "hollywood-gin-policy", "version": CHECKPOINT_VERSION, "config": config, "state_dict": state}, path
    )
    return path


CHILD = textwrap.dedent(
    """
    import json, resource, sys
    from hollywood_gin_env.agents import load_agent
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        load_agent("checkpoint:" + sys.argv[1])
        error = None
    except ValueError as e:
        error = str(e)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"error": error, "grew_mb": (after - before) / 1024}))
    """
)


def load_in_child(path) -> dict:
    """Load `path` with load_agent in a child whose address space is capped at 4 GiB (so a regression fails fast
    instead of swapping): its ValueError message and how much its peak RSS grew."""
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"
    child = subprocess.run(
        [sys.executable, "-c", limit + CHILD, str(path)], capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 0, child.stderr[-2000:]
    return json.loads(child.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "hidden_sizes, fragment",
    [
        ([8192] * 40, f"at most {MAX_LAYERS} hidden layers"),
        ([8192] * 3, "parameters"),
        ([256, 256], "stride|contiguous|storage"),
    ],
)
def test_hollow_checkpoints_are_refused_before_any_allocation(tmp_path, hidden_sizes, fragment):
    path = hollow_checkpoint(tmp_path / "hollow.pt", hidden_sizes)
    assert os.path.getsize(path) < 64 * 1024
    result = load_in_child(path)
    assert result["error"] is not None and __import__("re").search(fragment, result["error"]), result
    assert str(path) in result["error"]
    assert result["grew_mb"] < ALLOCATION_BOUND_MB, result


def test_config_bounds_name_the_limits():
    with pytest.raises(ValueError, match=f"at most {MAX_LAYERS} hidden layers"):
        check_policy_config({"hidden_sizes": [4] * (MAX_LAYERS + 1)})
    with pytest.raises(ValueError, match=f"{MAX_PARAMETERS:,}"):
        check_policy_config({"hidden_sizes": [8192, 8192]})
    check_policy_config({"hidden_sizes": [4] * MAX_LAYERS})
    full = check_policy_config({"hidden_sizes": [2048, 2048], "card_channels": 256})
    assert sum(torch.Size(s).numel() for s in expected_shapes(full).values()) <= MAX_PARAMETERS


def _good_state():
    config = check_policy_config({"hidden_sizes": [16]})
    return config, build_policy(config).state_dict()


def _save(path, config, state):
    torch.save(
        {"format": "hollywood-gin-policy", "version": CHECKPOINT_VERSION, "config": config, "state_dict": state}, path
    )
    return path


def test_tensors_sharing_one_storage_are_refused(tmp_path):
    config, state = _good_state()
    weight = state["torso.0.weight"]
    flat = torch.zeros(weight.numel() + 8)
    state["torso.0.weight"] = flat[: weight.numel()].view(weight.shape)
    state["torso.0.bias"] = flat[4 : 4 + state["torso.0.bias"].numel()]  # overlaps the weight's last elements
    with pytest.raises(ValueError, match="overlap"):
        load_checkpoint(_save(tmp_path / "shared.pt", config, state))


def test_transposed_and_strided_views_are_refused(tmp_path):
    config, state = _good_state()
    weight = state["torso.0.weight"]
    state["torso.0.weight"] = torch.zeros(weight.shape[1], weight.shape[0]).t()
    with pytest.raises(ValueError, match="contiguous"):
        load_checkpoint(_save(tmp_path / "t.pt", config, state))


def test_views_into_a_larger_storage_that_fit_load(tmp_path):
    """Separate slices of one storage (what torch.save keeps of views) load: they fit and do not overlap."""
    config, state = _good_state()
    weight, bias = state["torso.0.weight"], state["torso.0.bias"]
    flat = torch.cat([weight.reshape(-1), bias])
    state["torso.0.weight"], state["torso.0.bias"] = flat[: weight.numel()].view(weight.shape), flat[weight.numel() :]
    policy, _ = load_checkpoint(_save(tmp_path / "views.pt", config, state))
    assert torch.equal(policy.state_dict()["torso.0.bias"], bias)


def test_files_over_the_size_bound_are_refused_before_reading(tmp_path):
    path = tmp_path / "huge.pt"
    with open(path, "wb") as f:
        f.truncate(MAX_CHECKPOINT_BYTES + 1)  # sparse: nothing is written
    with pytest.raises(ValueError, match="GiB"):
        load_agent(f"checkpoint:{path}")


# --- a small file that would inflate to gigabytes -------------------------------------------------------------------

#: What the crafted record inflates to: far more than its file, small enough that a regression costs one test 300 MB.
BOMB_BYTES = 300 << 20


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """(path, the crafted record's name) of one zip bomb, built once for the tests below (deflating takes seconds)."""
    return zip_bomb(tmp_path_factory.mktemp("bomb") / "bomb.pt")


def zip_bomb(path, record_bytes=BOMB_BYTES):
    """A real checkpoint whose largest tensor record is replaced by `record_bytes` zeros, deflated (under 1 MB).

    torch.save stores records uncompressed; torch.load inflates a compressed one whole, before any check."""
    config, state = _good_state()
    plain = path.with_name("plain.pt")
    _save(plain, config, state)
    with zipfile.ZipFile(plain) as source:
        records = source.infolist()
        largest = max(records, key=lambda record: record.file_size)
        with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as bomb:
            for record in records:
                if record is not largest:
                    bomb.writestr(record, source.read(record))  # as it was: stored
                    continue
                with bomb.open(record.filename, "w", force_zip64=True) as out:  # deflated as it is written
                    chunk = bytes(1 << 20)
                    for _ in range(record_bytes >> 20):
                        out.write(chunk)
    return path, largest.filename


def test_a_record_declaring_more_than_its_file_is_refused_before_inflating(bomb, monkeypatch):
    path, record = bomb
    assert os.path.getsize(path) < 1 << 20
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load ran on the crafted file"))
    for load in (load_checkpoint, lambda p: load_agent(f"checkpoint:{p}")):
        with pytest.raises(ValueError) as error:
            load(path)
        message = str(error.value)
        assert str(path) in message and repr(record) in message and "uncompressed" in message
        assert "refused before inflating" in message and "\n" not in message


def test_the_training_state_is_read_by_the_same_checked_reader(bomb, tmp_path, monkeypatch):
    """train.py --resume reads last.pt through read_checkpoint too: the crafted file is refused by name."""
    from hollywood_gin_trainer.trainstate import load_training

    shutil.copyfile(bomb[0], tmp_path / "last.pt")
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load ran on the crafted file"))
    with pytest.raises(ValueError, match="refused before inflating"):
        load_training(tmp_path)


def test_an_ordinary_checkpoint_passes_the_record_check(tmp_path):
    config, state = _good_state()
    policy, _ = load_checkpoint(_save(tmp_path / "fine.pt", config, state))
    assert torch.equal(policy.state_dict()["torso.0.bias"], state["torso.0.bias"])


def test_a_state_dict_key_that_is_not_a_name_is_refused_by_name(tmp_path):
    config, state = _good_state()
    state[7] = state.pop("torso.0.bias")
    with pytest.raises(ValueError, match=r"state_dict key 7 is not a parameter name") as error:
        load_checkpoint(_save(tmp_path / "int_key.pt", config, state))
    assert str(tmp_path / "int_key.pt") in str(error.value)


def test_a_device_as_a_checkpoint_is_named_as_not_a_regular_file(tmp_path):
    """A character device given as a checkpoint (a private copy of /dev/zero, 1 5) is named as not a regular file."""
    node = str(tmp_path / "zero")
    try:
        os.mknod(node, stat.S_IFCHR | 0o600, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    with pytest.raises(ValueError, match="character device, not a regular file") as error:
        load_agent(f"checkpoint:{node}")
    assert node in str(error.value)


def test_a_zip_whose_directory_cannot_be_read_is_refused(tmp_path, monkeypatch):
    """Its records cannot be checked, so it is not handed to torch.load (whose reader may still accept it)."""
    config, state = _good_state()
    path = _save(tmp_path / "cut.pt", config, state)
    data = path.read_bytes()
    path.write_bytes(data[:-30])  # the end of the central directory cut off
    monkeypatch.setattr(torch, "load", lambda *a, **k: pytest.fail("torch.load ran on an unchecked zip"))
    with pytest.raises(ValueError, match="is not a readable checkpoint \\(its zip directory"):
        load_checkpoint(path)
