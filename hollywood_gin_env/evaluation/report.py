"""The readable report of a round robin: the results, how each pair played, the ratings (`format_report`)."""

from __future__ import annotations

from typing import Any

#: What becomes of an action outside the mask (evaluation/duplicate.py plays it so); the JSON and the warning say it.
ILLEGAL_POLICY = "counted, and replaced by the lowest-numbered legal action"


#: The report's two tables after the pair column: (header, width) of the results, then of how the pair played.
RESULT_COLUMNS = (("match win A [95% CI]", 24), ("game win", 10), ("hand win", 10), ("pts/hand A", 14))
PLAY_COLUMNS = (
    ("gin A/B", 12),
    ("knock A/B", 12),
    ("undercut A/B", 14),
    ("dead", 6),
    ("turns", 6),
    ("illegal", 9),
    ("time", 7),
)


def _result_cells(p: dict[str, Any]) -> list[str]:
    lo, hi = p["match_win_ci95"]
    return [
        f"{100 * p['match_win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]",
        f"{100 * p['game_win_rate']:.1f}%",
        f"{100 * p['hand_win_rate']:.1f}%",
        f"{p['points_per_hand']:+.2f} ± {p['points_per_hand_se']:.2f}",
    ]


def _play_cells(p: dict[str, Any]) -> list[str]:
    pct = lambda pair: "/".join(f"{100 * x:.1f}" for x in pair)  # noqa: E731
    return [
        pct(p["gin_rate"]),
        pct(p["knock_rate"]),
        pct(p["undercut_rate"]),
        f"{100 * p['dead_hand_rate']:.1f}%",
        f"{p['turns_per_hand']:.1f}",
        "/".join(str(x) for x in p["illegal_actions"]),
        f"{p['seconds']:.0f}s",
    ]


def _table(labels: list[str], width: int, columns: tuple, rows: list[list[str]]) -> list[str]:
    """A header and one line per pair: the pair left-aligned in `width`, each cell right-aligned in its column."""
    head = f"{'A vs B':<{width}}" + "".join(f"{name:>{size}}" for name, size in columns)
    return [head] + [
        f"{label:<{width}}" + "".join(f"{cell:>{size}}" for cell, (_, size) in zip(cells, columns, strict=True))
        for label, cells in zip(labels, rows, strict=True)
    ]


def format_report(report: dict[str, Any]) -> str:
    """The readable tables of a round-robin report: the results, then how each pair played, then the ratings; the
    name columns widen to the longest name (two names of up to MAX_NAME characters fit 120 columns)."""
    pairs = report["pairs"]
    labels = [f"{p['agent_a']} vs {p['agent_b']}" for p in pairs]
    width = max([24] + [len(label) + 2 for label in labels])
    lines = [f"{report['matches_per_pair']} matches per pair (duplicate deals), seed {report['seed']}"]
    if report.get("rules_summary"):
        lines[0] += f", rules: {report['rules_summary']}"
    lines += _table(labels, width, RESULT_COLUMNS, [_result_cells(p) for p in pairs])
    lines += [""] + _table(labels, width, PLAY_COLUMNS, [_play_cells(p) for p in pairs])
    title = "rating (Bradley-Terry, Elo scale, mean 0)"
    name_width = max([len(title) - 10] + [len(r["agent"]) + 2 for r in report["ratings"]])
    if report["ratings"]:  # an interrupted run reports its finished pairs only, without ratings
        lines += ["", f"{title:<{name_width + 10}}   {'95% interval':<16}{'decisions/s':>11}"]
    for r in sorted(report["ratings"], key=lambda r: -r["rating"]):
        interval = f"[{r['ci95'][0]:+.0f}, {r['ci95'][1]:+.0f}]"
        speed = r.get("decisions_per_second")  # absent from reports written before it was measured
        speed = "" if speed is None else f"{speed:,.0f}" if speed >= 10 else f"{speed:.2g}"
        lines.append(f"  {r['agent']:<{name_width}}{r['rating']:>+8.0f}   {interval:<16}{speed:>11}")
    if any(sum(p["illegal_actions"]) for p in pairs):
        lines.append(f"WARNING: illegal actions were {ILLEGAL_POLICY} (column 'illegal', A/B)")
    for p in report["pairs"]:
        if p.get("aborted_matches"):
            lines.append(
                f"WARNING: {p['agent_a']} vs {p['agent_b']}: {p['aborted_matches']} matches were stopped at the cap "
                "on decisions per match (never ending; counted as won by neither; docs/EVALUATION.md)"
            )
    return "\n".join(lines)
