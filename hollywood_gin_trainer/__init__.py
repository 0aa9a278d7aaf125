"""The trainer (PyTorch). Read `ppo` first: one PPO update top to bottom (the network, the setup, the rollout, credit
and per-player GAE, the epochs, TensorBoard logging). Around it: `config` (the typed config, its defaults the shipped
recipe), `advantages` (`[ppo] advantages`: the advantage estimate by reference, `@advantage_estimator`), `arena`
(the matches and who sits where), `pool` (the opponents), `privileged` (the critic's view of the hidden cards),
`warmstart` (behaviour cloning before PPO), `run` (`TrainingRun`: create, resume, save, evaluate),
`trainstate` (the training state in a safetensors file), `rundir` (the run directory's lock and leftovers), `main`
(the `hollywood-gin train` program), `workers` (the rollout on Ray), `forward` (`train.compile`).

Installed with the library (`pip install ".[train]"` brings torch, tensorboard, matplotlib, pydantic, tomli-w and
filelock); its name cannot collide with another distribution's top-level package. Importing this package imports
nothing; its modules import torch.
"""
