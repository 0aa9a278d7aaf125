"""Human play: the command parser (`commands`), hints (`hints`), the match session and its save file (`session`), the
terminal program (`terminal`, `hollywood-gin play`) and the browser page (`web`, `hollywood-gin play --web`); both
front ends drive the same session."""
