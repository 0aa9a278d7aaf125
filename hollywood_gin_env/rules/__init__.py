"""The rules: card ids and masks (`cards`, `bits`), the action ids (`actions`), the exact meld solver (`melds`), the
showdown (`showdown`), scoring and the Hollywood sheet (`scoring`), `Rules` (`options`) and the chance to win a match
from a sheet (`win_chance`). Pure functions on card masks and small arrays; no gymnasium, no torch."""
