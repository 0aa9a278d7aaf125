"""The trainer (PyTorch): `main` (the `hollywood-gin train` program), the training run, PPO learner and value head,
rollout storage, opponent pool, arena, warm start, config, run directory and TensorBoard logging.

Installed with the library (`pip install ".[train]"` brings torch, tensorboard and matplotlib); its name cannot
collide with another distribution's top-level package. Importing this package imports nothing; its modules import
torch.
"""
