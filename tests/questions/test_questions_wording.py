"""Every question true on its face (issue 30, items 2, 5 and 9): the words of a question say
what its label means.

* Counterfactual: the premise is that the cause did not happen, never glossed by a template
  saying it did; an original-format spec's templates (the cause and the effect as they
  happened) are never shown; a native outcome template is an example of a different outcome.
  Every Counterfactual text of every bundled pack and of original-format packs is read.
* Perspective: the texts speak of access *at* as-of (the cone's), and an actor who took part
  in the event by as-of is never told they could not have known about it.
* Silence: "a"/"an" as written English ("an 'incident thread' event").
"""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

import pytest

from groundeval.questions.generate import generate
from groundeval.questions.text import with_article
from groundeval.store.store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "contract"))
from legacy_packs import base_config, write_pack  # noqa: E402

PACKS = Path(__file__).resolve().parents[2] / "domain_packs"
BUNDLED = sorted(p.parent.name for p in PACKS.glob("*/groundeval.yaml"))
# generating a domain pack takes ~3 s on a busy machine: tiny in the default run, the rest marked slow
BY_SPEED = [pytest.param(p, marks=() if p == "tiny" else pytest.mark.slow) for p in BUNDLED]


def original_legal_shape() -> dict:
    """The facilities pack with templates shaped as the original release's: the premise and the
    outcome describe the cause and the effect as they happened, in the pluperfect."""
    cfg = base_config()
    links = cfg["causal_links"]
    links[0]["premise_template"] = "the tenant representative had reported the outage to the help desk"
    links[0]["outcome_template"] = "a technician would have started the repair within the hour"
    links[1]["premise_template"] = "the repair had been completed and signed off"
    links[1]["outcome_template"] = "the manager would have written a review"
    # a negative for every spec: repairs are also started for the wrong ticket
    return cfg


def _generate(root: Path):
    store = Store.open(root)
    try:
        return store.manifest, generate(store)
    finally:
        store.close()


def _check_counterfactual(manifest, qs) -> int:
    specs = {s.name: s for s in manifest.evaluation.causal_links}
    n = 0
    for q in qs.questions:
        if q.track != "counterfactual":
            continue
        n += 1
        spec = specs[q.meta["spec"]] if "spec" in q.meta else specs[q.ground_truth.causal_mechanism]
        assert "(that is," not in q.text and "would it be that" not in q.text, q.text
        assert q.text.count("had not happened") == 1, q.text
        if spec.premise_template:
            assert spec.premise_template.strip() not in q.text, q.text
        outcome = (spec.outcome_template or "").strip().rstrip(".")
        if spec.templates_as_happened:
            assert not outcome or outcome not in q.text, q.text
            assert "For instance" not in q.text, q.text
        elif outcome and "{" not in outcome and "For instance" in q.text:
            assert q.text.endswith(f"? For instance: {outcome}."), q.text
    return n


@pytest.mark.parametrize("pack", BY_SPEED)
def test_every_counterfactual_text_of_a_bundled_pack(pack):
    manifest, qs = _generate(PACKS / pack)
    assert _check_counterfactual(manifest, qs) > 0


@pytest.mark.parametrize("config", [base_config, original_legal_shape], ids=["facilities", "legal_shape"])
def test_every_counterfactual_text_of_an_original_pack(tmp_path, config):
    root = write_pack(tmp_path / "orig", config())
    manifest, qs = _generate(root)
    assert all(s.templates_as_happened for s in manifest.evaluation.causal_links)
    assert _check_counterfactual(manifest, qs) > 0


def test_a_native_placeholder_free_premise_is_not_a_gloss(tmp_path, tiny_pack):
    """A native spec's placeholder-free premise template was shown as "(that is, ...)" after
    "had not happened"; it is never shown now, and its outcome template is the example."""
    import shutil

    import yaml

    root = tmp_path / "tiny"
    shutil.copytree(tiny_pack, root)
    manifest = yaml.safe_load((root / "groundeval.yaml").read_text())
    for link in manifest["evaluation"]["causal_links"]:
        link["premise_template"] = "the escalation had been handled by the support lead"
        link["outcome_template"] = "the incident would have been resolved later"
    (root / "groundeval.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    m, qs = _generate(root)
    texts = [q.text for q in qs.questions if q.track == "counterfactual"]
    assert texts and _check_counterfactual(m, qs) == len(texts)
    assert all(t.endswith("? For instance: the incident would have been resolved later.") for t in texts)


@pytest.mark.parametrize("pack", ["tiny", pytest.param("legal", marks=pytest.mark.slow)])
def test_perspective_never_tells_a_participant_they_could_not_have_known(pack):
    store = Store.open(PACKS / pack)
    try:
        qs = generate(store)
        rows = store.query("SELECT event_id, actor FROM event_actors ORDER BY ALL")
        times = dict(store.query("SELECT id, ts FROM events ORDER BY id"))
    finally:
        store.close()
    took_part = set(rows)
    persp = [q for q in qs.questions if q.track == "perspective"]
    assert persp and qs.metadata.skipped["perspective"].get("actor_took_part", 0) > 0
    for q in persp:
        assert " on or before " not in q.text and " at " in q.text.replace("At ", " at "), q.text
        eid = q.ground_truth.target_event_id
        if not q.ground_truth.could_actor_have_known and times[eid] <= q.as_of:
            assert (eid, q.actor) not in took_part, (q.text, q.bucket)


@pytest.mark.parametrize("pack", ["tiny", pytest.param("cybersecurity", marks=pytest.mark.slow)])
def test_silence_articles_read_as_written(pack):
    _, qs = _generate(PACKS / pack)
    texts = [q.text for q in qs.questions if q.track == "silence"]
    assert texts
    for t in texts:
        assert not re.search(r"\ba '[aeiouAEIOU]", t), t
        assert not re.search(r"\ban '[^aeiouAEIOU]", t), t


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("'incident thread' event", "an 'incident thread' event"),
        ("'postmortem written' event", "a 'postmortem written' event"),
        ("'Escalation' event", "an 'Escalation' event"),
        ("'42 review' event", "a '42 review' event"),
    ],
)
def test_with_article(phrase, expected):
    assert with_article(phrase) == expected


def test_the_original_mapping_marks_templates_as_happened():
    from groundeval.contract.legacy import legacy_to_native

    native = legacy_to_native(copy.deepcopy(base_config()), "p").native
    assert all(link["templates_as_happened"] for link in native["evaluation"]["causal_links"])
