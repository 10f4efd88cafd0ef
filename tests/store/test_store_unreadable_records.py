"""A record DuckDB reads but Python's ``json`` cannot (an integer past Python's 4,300-digit
limit, nesting past the recursion limit) has no digest: ``Store.open`` refuses it as a located
problem, as the verifier's GE111 does (``malformed JSON: ...``), not with a bare traceback."""

from __future__ import annotations

import pytest

from groundeval.errors import ContractError
from groundeval.store.store import Store

MANIFEST = "name: odd\ntimezone: UTC\nsources:\n  events: events.jsonl\n  artifacts: artifacts.jsonl\n"
EVENT = '{{"id": "e{n}", "type": "t", "timestamp": "2024-01-01T00:00:00Z", "facts": {{"x": {value}}}}}'
ARTIFACT = '{{"id": "A{n}", "subsystem": "jira", "timestamp": "2024-01-01T00:00:00Z", "x": {value}}}'
ODD = {"huge": "9" * 5000, "deep": "[" * 3000 + "]" * 3000}


@pytest.mark.parametrize("odd", sorted(ODD))
@pytest.mark.parametrize("source", ["events", "artifacts"])
def test_record_python_cannot_read_is_a_located_problem(tmp_path, source, odd):
    lines = {
        "events": [EVENT.format(n=n, value=1) for n in range(3)],
        "artifacts": [ARTIFACT.format(n=n, value=1) for n in range(3)],
    }
    template = EVENT if source == "events" else ARTIFACT
    lines[source][1] = template.format(n=1, value=ODD[odd])
    (tmp_path / "groundeval.yaml").write_text(MANIFEST)
    for name, rows in lines.items():
        (tmp_path / f"{name}.jsonl").write_text("\n".join(rows) + "\n")
    with pytest.raises(ContractError) as err:
        Store.open(tmp_path)
    (problem,) = err.value.problems
    assert (problem.file, problem.line) == (str(tmp_path / f"{source}.jsonl"), 2)
    assert problem.message.startswith("malformed JSON: ")


@pytest.mark.parametrize("broken", ["artifacts", "digest"])
def test_a_failed_load_stops_the_digest_thread_and_leaves_no_database(tmp_path, broken):
    """The events' digest is running on its thread when the artifacts are refused (or the
    artifacts' digest fails): the error is the located one, the thread is gone, no file is left."""
    import threading

    events = [EVENT.format(n=n, value=1) for n in range(50)]
    artifacts = [ARTIFACT.format(n=n, value=1) for n in range(3)]
    artifacts[2] = "{not json" if broken == "artifacts" else ARTIFACT.format(n=2, value=ODD["huge"])
    pack = tmp_path / "pack"
    pack.mkdir()
    (pack / "groundeval.yaml").write_text(MANIFEST)
    (pack / "events.jsonl").write_text("\n".join(events) + "\n")
    (pack / "artifacts.jsonl").write_text("\n".join(artifacts) + "\n")
    with pytest.raises(ContractError) as err:
        Store.open(pack, db=tmp_path / "store.duckdb")
    assert [(p.file, p.line) for p in err.value.problems] == [(str(pack / "artifacts.jsonl"), 3)]
    assert not [t for t in threading.enumerate() if t.name.startswith("groundeval-digest")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pack"]
