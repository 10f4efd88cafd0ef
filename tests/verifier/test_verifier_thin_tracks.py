"""One-sided and under-filled tracks are verifier findings with their reason, and no shortcut
figure is printed where the questions are too few to support it (issue 30, item 6).

Shapes the other tests did not build: original-format packs whose Counterfactual spec has no
distractor pair at all (every cause is followed only by its own effect inside the gap), and
whose Silence pair has no response at all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from groundeval import verifier
from groundeval.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "contract"))
from legacy_packs import base_config, write_pack  # noqa: E402

PACKS = Path(__file__).resolve().parents[2] / "domain_packs"
BUNDLED = sorted(p.parent.name for p in PACKS.glob("*/groundeval.yaml"))


def _no_distractor(root: Path) -> Path:
    """The review spec's only distractor (repair e08 -> review e12, three days on) falls outside a
    one-day gap: every Counterfactual question is then a causal link."""
    cfg = base_config()
    cfg["causal_links"][1]["max_gap_days"] = 1
    return write_pack(root, cfg)


def _no_response(root: Path) -> Path:
    write_pack(root)
    path = root / "events.jsonl"
    lines = [x for x in path.read_text().splitlines() if json.loads(x)["type"] != "review_written"]
    path.write_text("\n".join(lines) + "\n")
    return root


def test_a_track_without_distractors_is_one_sided_with_the_reason(tmp_path):
    result = verifier.verify(_no_distractor(tmp_path / "p"), level=4)
    (f,) = result.by_rule("GE411")
    assert f.severity == "warning"
    assert (
        f.message.startswith("counterfactual: all ") and " question(s) are yes: no distractor pair exists" in f.message
    )
    assert "review_follows_repair" in f.hint and "repair_follows_outage" in f.hint  # the specs without a negative
    assert not [x for x in result.by_rule("GE402") if x.message.startswith("counterfactual:")]  # said once


def test_a_silence_pair_without_responses_is_one_sided_with_the_reason(tmp_path):
    result = verifier.verify(_no_response(tmp_path / "p"), level=4)
    silence = [f for f in result.by_rule("GE411") if f.message.startswith("silence:")]
    assert [f.message.split(": ", 2)[1:] for f in silence] == [
        ["all 3 question(s) are no", "no presence exists: no trigger has a joined response within max_gap_days"]
    ]
    under = [f for f in result.by_rule("GE412") if f.message.startswith("silence:")]
    assert under and "the log yields 3 absences, 0 presences" in under[0].message


def test_small_tracks_print_no_shortcut_figure(tmp_path, capsys):
    root = write_pack(tmp_path / "p")
    assert main(["generate", str(root), "-o", str(tmp_path / "q.json")]) in (0, None)
    err = capsys.readouterr().err
    rows = [line for line in err.splitlines() if line.startswith("│ ")]
    assert rows and all("too few (< 30)" in r and "0." not in r and "1.00" not in r for r in rows), rows


@pytest.mark.parametrize("pack", [pytest.param(p, marks=() if p == "tiny" else pytest.mark.slow) for p in BUNDLED])
def test_every_bundled_track_has_both_labels(pack):
    result = verifier.verify(PACKS / pack, level=4)
    assert not result.by_rule("GE411"), [f.message for f in result.by_rule("GE411")]
    buckets = result.stats["generation"]["buckets"]
    yes = {"perspective": {"positive"}, "counterfactual": {"positive"}, "silence": {"presence"}}
    for track, counts in buckets.items():
        labels = {b in yes[track] for b, n in counts.items() if n}
        assert labels == {True, False}, (pack, track, counts)
