"""The repository's `agents/` folder: an alias of the trainer, which is the installed package `hollywood_gin_trainer`
(arena, config, forward, main, options, pool, ppo, privileged, run, rundir, trainstate, warmstart, workers):
a top-level `agents` package in a wheel would shadow others of that name. `agents.run` (an attribute) is
`hollywood_gin_trainer.run`, loaded on first use; import the trainer's modules by their own name."""

import importlib


def __getattr__(name: str):
    """`agents.X` is `hollywood_gin_trainer.X` (the same module object, never a second copy)."""
    if name.startswith("_"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"hollywood_gin_trainer.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"hollywood_gin_trainer.{name}":
            raise  # the module is there but needs something missing (torch): say that, not "no attribute"
        raise AttributeError(
            f"module 'agents' has no attribute {name!r}: the trainer's modules are in hollywood_gin_trainer"
        ) from None
