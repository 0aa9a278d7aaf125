"""How a match looks to a person, from plain values: the `Position` record (`position`), moves and hand ends in words
(`words`), the text renderer (`render`) and the picture (`picture`). It reads a `Position` and an event log, never an
engine, so `str(Game)`, the envs' render modes and both front ends draw with it."""
