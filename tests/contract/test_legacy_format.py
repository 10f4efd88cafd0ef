"""The original GroundEval config.yaml: every key mapped or warned about, order-free, bad values located."""

from __future__ import annotations

import copy
import json
import random

import pytest
import yaml

from groundeval import verifier
from contract_cli import run_cli
from groundeval.cli.main import main
from groundeval.contract.legacy import NO_LIMIT_DAYS, ORIGINAL_SELECTOR_LIMIT, legacy_to_native
from groundeval.contract.manifest import load_manifest
from groundeval.store.store import Store
from legacy_packs import base_config, line_of, shuffled, write_pack

# --------------------------------------------------------------------------- helpers


def warnings_of(result, rule):
    return [f for f in result.findings if f.rule == rule]


def full_config() -> dict:
    """The base pack plus every other key of the original format (and a few unknown ones)."""
    cfg = base_config()
    cfg.update(
        {
            "events_file": "./log.jsonl",
            "perspective_actors": ["kim", "max"],
            "max_perspective_questions": 12,
            "max_counterfactual_questions": 6,
            "max_silence_questions": 4,
            "max_questions_per_actor": 3,
            "max_questions_per_event_type": 4,
            "max_links_per_spec": 2,
            "trivial_search_space": ["chat"],
            "seed": 7,
            "provider": "anthropic",
            "provider_path": "my.providers.Custom",
            "model": "claude-x",
            "api_key": "sk-secret-value",
            "api_key_env": "ANTHROPIC_API_KEY",
            "base_url": "http://localhost:9",
            "temperature": 0.2,
            "max_tokens": 256,
            "max_retries": 4,
            "llm_question_prose": True,
            "llm_model": "claude-prose",
            "agent": {"framework": "crewai", "agent_class": "pkg.Crew"},
            "task_contracts": [{"name": "t1", "preconditions": [{"check": "c"}]}],
            "groundeval": {"reviewed": True},
            "wandb_project": "x",  # unknown
        }
    )
    cfg["perspective"].update({"require_cross_subsystem_cases": True, "easy_ratio": 0.5, "foo": 1})
    cfg["roles"]["technician"]["shift"] = "night"  # unknown
    cfg["causal_links"][0]["link_field"] = "id"
    cfg["causal_links"][0]["weight"] = 2  # unknown
    cfg["causal_links"][0]["join"][0]["note"] = "x"  # unknown
    cfg["silence_pairs"][0]["search_space"][0]["boost"] = 3  # unknown
    cfg["silence_pairs"][0]["search_space"][1]["query_template"] = "leak {artifact_ids.helpdesk}"  # both templates
    return cfg


@pytest.fixture()
def full_pack(tmp_path):
    return write_pack(tmp_path / "full", full_config(), events_name="log.jsonl")


@pytest.fixture(scope="module")
def full_result(tmp_path_factory):
    root = write_pack(tmp_path_factory.mktemp("full") / "p", full_config(), events_name="log.jsonl")
    return root, verifier.verify(root, level=1)


# --------------------------------------------------------------------------- every key mapped


def test_the_original_shapes_load_and_map(tmp_path):
    paths = load_manifest(write_pack(tmp_path / "p"))
    m = paths.manifest
    assert paths.legacy and paths.artifacts_path.name == "artifacts" and paths.events_path.name == "events.jsonl"
    assert m.name == "p"
    assert [r.role for r in m.access.actors["kim"].roles] == ["technician"]  # "kim: technician"
    assert m.access.roles["technician"].broadcast_event_types == ["outage_reported"]
    p = m.evaluation.perspective
    assert (p.positive, p.negative_permission, p.negative_temporal) == (0.5, 0.25, 0.25)
    link, review = m.evaluation.causal_links
    assert link.max_gap_days == 1 and link.premise_template == "the outage had been reported"
    assert [(j.cause, j.effect) for j in link.join] == [("artifact_ids.helpdesk", "artifact_ids.helpdesk")]
    assert review.max_gap_days == NO_LIMIT_DAYS  # no max_gap_days: no window in the original
    pair = m.evaluation.silence_pairs[0]
    assert [(j.trigger, j.response) for j in pair.join] == [("artifact_ids.helpdesk", "artifact_ids.helpdesk")]
    assert pair.search_space == []
    assert [(s.subsystem, s.id_template, s.query_template, s.limit) for s in pair.search_space_selectors] == [
        ("wiki", None, "review {artifact_ids.helpdesk}", ORIGINAL_SELECTOR_LIMIT),
        ("helpdesk", "{artifact_ids.helpdesk}", None, ORIGINAL_SELECTOR_LIMIT),
    ]


def test_every_mapped_key_lands_in_the_native_model(full_pack):
    paths = load_manifest(full_pack)
    m, ev, ad = paths.manifest, paths.manifest.evaluation, paths.manifest.adapters
    assert paths.events_path.name == "log.jsonl"
    assert ev.perspective_actors == ["kim", "max"]
    assert (ev.max_perspective_questions, ev.max_counterfactual_questions, ev.max_silence_questions) == (12, 6, 4)
    assert (ev.max_per_actor, ev.max_per_event_type) == (3, 4)
    assert ev.seed == 7
    assert ev.perspective.require_cross_subsystem_cases is True
    assert (ev.easy_ratio, ev.medium_ratio, ev.hard_ratio) == (0.34, 0.33, 0.33)
    assert (
        ad.provider,
        ad.model,
        ad.api_key_env,
        ad.base_url,
        ad.temperature,
        ad.max_tokens,
        ad.max_retries,
        ad.llm_question_prose,
        ad.llm_model,
    ) == ("anthropic", "claude-x", "ANTHROPIC_API_KEY", "http://localhost:9", 0.2, 256, 4, True, "claude-prose")
    sel = ev.silence_pairs[0].search_space_selectors[1]
    assert (sel.id_template, sel.query_template) == ("{artifact_ids.helpdesk}", None)  # the original used the id
    assert "sk-secret-value" not in m.model_dump_json()


# Keys of the original format that cannot be honoured: exactly one GE107 each, at the key's line.
NOT_HONOURED = [
    ("output_dir", "output_dir:"),
    ("use_event_log_policy", "use_event_log_policy:"),
    ("max_links_per_spec", "max_links_per_spec:"),
    ("trivial_search_space", "trivial_search_space:"),
    ("provider_path", "provider_path:"),
    ("api_key", "api_key:"),
    ("agent", "agent:"),
    ("task_contracts", "task_contracts:"),
    ("groundeval", "groundeval:"),
    ("perspective.easy_ratio", "  easy_ratio: 0.5"),
    ("causal_links[0].link_field", "link_field:"),
    ("silence_pairs[0].search_space[1].query_template", "query_template: leak"),
]
# Keys the original format does not have: exactly one GE106 each, at the key's line.
UNKNOWN = [
    ("wandb_project", "wandb_project:"),
    ("roles.technician.shift", "shift:"),
    ("perspective.foo", "foo:"),
    ("causal_links[0].weight", "weight:"),
    ("causal_links[0].join[0].note", "note:"),
    ("silence_pairs[0].search_space[0].boost", "boost:"),
]


def _path(key: str) -> str:
    return "$." + key


@pytest.mark.parametrize("key, needle", NOT_HONOURED)
def test_each_unhonoured_key_is_one_located_warning(full_result, key, needle):
    root, result = full_result
    hits = [f for f in warnings_of(result, "GE107") if f.path == _path(key)]
    assert len(hits) == 1, [str(f) for f in warnings_of(result, "GE107")]
    f = hits[0]
    assert f.severity == "warning" and key.rsplit(".", 1)[-1].split("[")[0] in f.message
    assert f.file.endswith("config.yaml")
    assert f.line == line_of((root / "config.yaml").read_text(), needle)


@pytest.mark.parametrize("key, needle", UNKNOWN)
def test_each_unknown_key_is_one_located_warning(full_result, key, needle):
    root, result = full_result
    hits = [f for f in warnings_of(result, "GE106") if f.path == _path(key)]
    assert len(hits) == 1, [str(f) for f in warnings_of(result, "GE106")]
    f = hits[0]
    assert f.severity == "warning" and repr(key) in f.message
    assert f.line == line_of((root / "config.yaml").read_text(), needle)


def test_no_other_warnings_and_nothing_fails(full_result):
    _root, result = full_result
    assert len(warnings_of(result, "GE107")) == len(NOT_HONOURED)
    assert len(warnings_of(result, "GE106")) == len(UNKNOWN)
    assert not result.errors, [str(f) for f in result.errors]


def test_secrets_are_not_echoed(full_result):
    _root, result = full_result
    assert all("sk-secret-value" not in f.message for f in result.findings)


def test_a_key_at_its_default_is_not_reported(tmp_path):
    cfg = base_config()
    del cfg["output_dir"]
    cfg.update(
        {
            "use_event_log_policy": False,
            "trivial_search_space": [],
            "max_links_per_spec": None,
            "max_perspective_questions": None,
            "seed": None,
        }
    )
    result = verifier.verify(write_pack(tmp_path / "p", cfg), level=1)
    assert warnings_of(result, "GE106") + warnings_of(result, "GE107") == []
    ev = load_manifest(tmp_path / "p").manifest.evaluation
    assert ev.max_perspective_questions == 60 and ev.seed == 42  # null means the default


def test_use_event_log_policy_false_means_subsystems_only(tmp_path):
    cfg = base_config()
    cfg["use_event_log_policy"] = False
    roles = load_manifest(write_pack(tmp_path / "off", cfg)).manifest.access.roles
    assert all(r.broadcast_event_types == [] for r in roles.values())
    cfg["use_event_log_policy"] = True
    roles = load_manifest(write_pack(tmp_path / "on", cfg)).manifest.access.roles
    assert roles["manager"].broadcast_event_types == ["repair_done"]


def test_the_unmapped_keys_name_themselves():
    mapped = legacy_to_native(full_config(), "p")
    keys = {n.key for n in mapped.notes}
    assert keys == {k for k, _ in NOT_HONOURED} | {k for k, _ in UNKNOWN}
    assert {n.key for n in mapped.notes if not n.known} == {k for k, _ in UNKNOWN}


# --------------------------------------------------------------------------- key order


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_key_order_does_not_matter(tmp_path, seed):
    cfg = full_config()
    a = write_pack(tmp_path / "a", cfg, events_name="log.jsonl")
    b = write_pack(tmp_path / "b", shuffled(cfg, random.Random(seed)), events_name="log.jsonl")
    assert (b / "config.yaml").read_text() != (a / "config.yaml").read_text()
    ma, mb = load_manifest(a).manifest, load_manifest(b).manifest
    assert ma.model_dump() == mb.model_dump() | {"name": ma.name}
    sa, sb = Store.open(a), Store.open(b)
    try:
        assert sa.digest == sb.digest
    finally:
        sa.close()
        sb.close()
    ra, rb = verifier.verify(a, level=1), verifier.verify(b, level=1)
    assert sorted((f.rule, f.path, f.message) for f in ra.findings) == sorted(
        (f.rule, f.path, f.message) for f in rb.findings
    )


# --------------------------------------------------------------------------- bad values


def _set(cfg: dict, path: tuple, value) -> None:
    node = cfg
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


BAD = [
    (("perspective", "positive_ratio"), "high", "positive_ratio: high", "perspective.positive_ratio", "valid number"),
    (("use_event_log_policy",), "sometimes", "use_event_log_policy:", "use_event_log_policy", "expected true or false"),
    (
        ("max_questions_per_actor",),
        0,
        "max_questions_per_actor:",
        "max_questions_per_actor",
        "greater than or equal to 1",
    ),
    (("causal_links", 1, "max_gap_days"), -2, "max_gap_days: -2", "causal_links[1].max_gap_days", "greater than 0"),
    (("artifacts_dir",), 5, "artifacts_dir:", "artifacts_dir", "expected a path"),
    (
        ("silence_pairs", 0, "search_space", 0, "subsystem"),
        7,
        "subsystem: 7",
        "silence_pairs[0].search_space[0].subsystem",
        "valid string",
    ),
    (("actors", "kim"), 42, "kim: 42", "actors.kim", ""),
]


@pytest.mark.parametrize("path, value, needle, field, message", BAD, ids=[b[3] for b in BAD])
def test_bad_values_are_located_errors(tmp_path, capsys, path, value, needle, field, message):
    cfg = base_config()
    _set(cfg, path, value)
    root = write_pack(tmp_path / "p", cfg)
    line = line_of((root / "config.yaml").read_text(), needle)
    code, err = run_cli(["info", str(root)], capsys)
    assert code == 2
    assert "Traceback" not in err
    assert f"config.yaml:{line} field '{field}" in err, err
    assert message in err


def test_a_missing_selector_subsystem_points_at_the_selector(tmp_path, capsys):
    cfg = base_config()
    del cfg["silence_pairs"][0]["search_space"][1]["subsystem"]
    root = write_pack(tmp_path / "p", cfg)
    code, err = run_cli(["info", str(root)], capsys)
    line = line_of((root / "config.yaml").read_text(), "id_template:")
    assert code == 2 and "Traceback" not in err
    assert f"config.yaml:{line} field 'silence_pairs[0].search_space[1].subsystem': Field required" in err


def test_both_perspective_names_with_different_values_is_an_error(tmp_path, capsys):
    cfg = base_config()
    cfg["perspective"]["positive"] = 0.6
    root = write_pack(tmp_path / "p", cfg)
    code, err = run_cli(["info", str(root)], capsys)
    assert code == 2
    assert (
        f"config.yaml:{line_of((root / 'config.yaml').read_text(), 'positive_ratio')} "
        "field 'perspective.positive_ratio': conflicts with perspective.positive" in err
    )


def test_the_verifier_locates_bad_values_too(tmp_path):
    cfg = base_config()
    cfg["perspective"]["negative_temporal_ratio"] = "lots"
    cfg["use_event_log_policy"] = "maybe"
    root = write_pack(tmp_path / "p", cfg)
    text = (root / "config.yaml").read_text()
    result = verifier.verify(root, level=1)
    where = {(f.path, f.line) for f in result.by_rule("GE102")}
    assert ("$.perspective.negative_temporal_ratio", line_of(text, "negative_temporal_ratio")) in where
    assert ("$.use_event_log_policy", line_of(text, "use_event_log_policy")) in where


# --------------------------------------------------------------------------- tolerance and end to end


def test_a_join_resolving_on_no_trigger_is_a_warning_only_in_the_original_format(tmp_path):
    cfg = base_config()
    cfg["silence_pairs"][0]["join"] = [{"cause": "artifact_ids.wiki", "effect": "artifact_ids.wiki"}]
    legacy = verifier.verify(write_pack(tmp_path / "orig", cfg), level=2)
    assert [f.severity for f in legacy.by_rule("GE204")] == ["warning"]
    native_root = write_pack(tmp_path / "native", cfg)
    native = legacy_to_native(cfg, "native").native
    (native_root / "config.yaml").unlink()
    (native_root / "groundeval.yaml").write_text(yaml.safe_dump(native, sort_keys=False))
    assert [f.severity for f in verifier.verify(native_root, level=2).by_rule("GE204")] == ["error"]


def _cli_ok(args: list[str]) -> None:
    """Run the CLI in-process; success either returns or exits 0."""
    try:
        main(args)
    except SystemExit as exc:
        assert exc.code in (0, None), exc.code


def test_generate_and_oracle_eval_run_on_an_original_pack(tmp_path):
    root = write_pack(tmp_path / "p")
    _cli_ok(["generate", str(root), "-o", str(tmp_path / "q.json")])
    questions = json.loads((tmp_path / "q.json").read_text())["questions"]
    by_track = {t: sum(q["track"] == t for q in questions) for t in ("perspective", "counterfactual", "silence")}
    assert by_track["perspective"] > 0 and by_track["silence"] > 0
    # the silence pair's selectors were read from the mapping search_space entries
    silence = [q for q in questions if q["track"] == "silence"]
    assert {q["bucket"] for q in silence} == {"absence", "presence"}
    _cli_ok(["eval", str(root), "--agent", "oracle", "-q", "-o", str(tmp_path / "run")])
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["overall"]["n"] == len(questions)
    assert report["overall"]["accuracy"] == 1.0


def test_the_original_pack_fixture_is_unchanged_by_the_mapping():
    cfg = copy.deepcopy(base_config())
    legacy_to_native(cfg, "p")
    assert cfg == base_config()  # the mapping never edits its input
