"""Support: what every layer may use and that knows nothing of the game: the numba configuration (`jit`), the
per-match random streams and their seeds (`streams`), atomic writes (`atomic`), reading a file a user names, with
limits (`userfiles`), tensor files (`tensorfile`: safetensors, the one reader and writer) and importing the modules a
user names (`imports`). It imports no other part of the package."""
