"""The batched engine: N matches as struct-of-arrays numpy state (`state`, its columns in `columns`), advanced by
numba kernels (`kernels`) through `Engine` (`batched`) on kernel threads (`threads`); `Game`, one match over the
same kernels (`game`); the observation encoder (`observation`); uniform legal picks (`sampling`), the statistics of
ended hands (`handstats`), the checks of a state read from a file (`state_check`) and the first-compile notice
(`compile_notice`)."""
