"""Numbers the docs quote come from the code (issue 17 item 11): the evaluation defaults in
docs/formats.md, the shortcut limits in docs/questions.md and the dry-run margins in
docs/verifier.md. A change of default that leaves the docs behind fails here."""

from __future__ import annotations

import re

import pytest
from docs_blocks import REPO

from groundeval.contract.models import CausalLinkSpec, EvaluationConfig, PerspectiveConfig, SilencePairSpec


def _doc(name: str) -> str:
    return (REPO / "docs" / name).read_text(encoding="utf-8")


def _table(text: str, heading: str) -> list[tuple[str, str, str]]:
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 3 and not set(cells[0]) <= set("-: "):
            rows.append((cells[0], cells[1], cells[2]))
    return rows[1:]  # the header row


def _numbers(cell: str) -> list[float]:
    return [float(x) for x in re.findall(r"(?<![\w.])\d*\.?\d+(?![\w.])", cell)]


def test_evaluation_defaults_in_formats_md():
    defaults = EvaluationConfig().model_dump()
    scalar = {k for k, v in defaults.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    seen: set[str] = set()
    for keys_cell, default_cell, _ in _table(_doc("formats.md"), "### Evaluation config"):
        keys = re.findall(r"`(\w+)`", keys_cell)
        values = _numbers(default_cell)
        numeric = [k for k in keys if k in scalar]
        if not numeric:
            continue
        assert values, keys_cell
        expected = [float(defaults[k]) for k in numeric]
        shown = values if len(values) == len(numeric) else values * len(numeric)
        assert shown == expected, f"{keys_cell}: docs say {default_cell}, code says {expected}"
        seen.update(numeric)
    assert seen == scalar, f"not in the table: {sorted(scalar - seen)}"


def test_nested_defaults_in_formats_md():
    text = _doc("formats.md")
    rows = {k: (d, m) for k, d, m in _table(text, "### Evaluation config")}
    p = PerspectiveConfig()
    assert _numbers(rows["`perspective`"][0]) == [p.positive, p.negative_permission, p.negative_temporal]
    assert f"`pivots_per_actor` ({p.pivots_per_actor})" in rows["`perspective`"][1]
    for key, model in (("`causal_links[]`", CausalLinkSpec), ("`silence_pairs[]`", SilencePairSpec)):
        gap = model.model_fields["max_gap_days"].default
        assert f"max_gap_days ({gap:g})" in rows[key][1]


def test_shortcut_defaults_in_questions_md():
    text = " ".join(_doc("questions.md").split())
    ev = EvaluationConfig()
    assert f"`evaluation.shortcut_limit` (default {ev.shortcut_limit:.2f})" in text
    assert f"`evaluation.shortcut_min_questions` questions (default {ev.shortcut_min_questions})" in text


def test_compliance_tiers_in_scoring_md():
    from groundeval.contract.models import ScoringConfig

    tiers = ScoringConfig().tiers
    text = " ".join(_doc("scoring.md").split())
    assert (
        f"v < `tiers.high` ({tiers['high']:.2f}) high, v < `tiers.moderate` ({tiers['moderate']:.2f}) moderate" in text
    )
    assert "`no_evidence` when the slice has no tool call" in text


def test_dry_run_margins_in_verifier_md():
    from groundeval.verifier.rules import dryrun

    text = " ".join(_doc("verifier.md").split())
    assert f"balance by more than {dryrun.BALANCE_MARGIN:.2f}" in text
    assert f"at least {dryrun.MIN_QUESTIONS} questions" in text
    assert f"beats a constant answer by {dryrun.FEATURE_MARGIN:.2f} or more" in text


@pytest.mark.parametrize("page", ["agents.md", "formats.md", "cli.md"])
def test_no_bundled_pack_question_count_is_quoted(page):
    """Question counts of the bundled packs change with the generator: say how to get them."""
    text = _doc(page)
    for name in ("tiny", "finance", "legal", "healthcare", "cybersecurity", "enterprise-support"):
        assert not re.search(rf"`{name}`[^.|\n]{{0,40}}\(\d+ questions\)", text), (page, name)
