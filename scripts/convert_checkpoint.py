"""Convert a policy saved with torch.save (a `.pt` checkpoint, format version 4) to a `.safetensors` one.

Run: `python scripts/convert_checkpoint.py OLD.pt NEW.safetensors`. The weights are copied exactly, so the new file
plays the same moves; the policy config and the plain-data keys beside it (the training record) go into the new
file's metadata. A run's last.pt is converted as the policy it holds: its training state is not, so a run resumes
only from a last file written by this version.

The old file is read with `torch.load(weights_only=True)`, which unpickles: convert only a file you trust (your own
runs' policies). Files from anyone else should come as `.safetensors`, which load without running or unpickling
anything.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

from hollywood_gin_env.agents.checkpoint import save_checkpoint
from hollywood_gin_env.agents.policy import build_policy, check_policy_config

#: keys of the old format that are not metadata: the weights and the format's own fields
NOT_METADATA = ("format", "version", "config", "state_dict")
OLD_FORMAT, OLD_VERSION = "hollywood-gin-policy", 4


def convert(old: str, new: str) -> list[str]:
    """Write the policy of the torch.save checkpoint `old` to `new`; the keys left out (not plain data: a run's
    training state)."""
    data = torch.load(old, map_location="cpu", weights_only=True)
    if not isinstance(data, dict) or not {"config", "state_dict"} <= set(data):
        raise ValueError(f"{old} is not a hollywood-gin policy checkpoint (a dict with 'config' and 'state_dict')")
    if data.get("format", OLD_FORMAT) != OLD_FORMAT or data.get("version") != OLD_VERSION:
        raise ValueError(f"{old}: this converter reads format {OLD_FORMAT!r} version {OLD_VERSION} only")
    config = check_policy_config(data["config"], where=f"{old}: config")
    policy = build_policy(config)
    policy.load_state_dict(data["state_dict"])  # strict: every parameter, each of the shape the config needs
    metadata = {key: value for key, value in data.items() if key not in NOT_METADATA and _plain(value)}
    save_checkpoint(new, policy, config, **metadata)
    return sorted(set(data) - set(NOT_METADATA) - set(metadata))


def _plain(value: object) -> bool:
    """True for JSON data (no tensors)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def main() -> int:
    """Convert one file; 0 on success, 1 with one line on stderr otherwise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", help="the torch.save checkpoint (.pt)")
    parser.add_argument("new", help="the safetensors checkpoint to write (.safetensors)")
    args = parser.parse_args()
    try:
        left_out = convert(args.old, args.new)
    except (OSError, ValueError, RuntimeError, KeyError) as error:
        print(f"convert_checkpoint: {' '.join(str(error).split())}", file=sys.stderr)
        return 1
    print(f"wrote {args.new}" + (f" (left out, not plain data: {', '.join(left_out)})" if left_out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
