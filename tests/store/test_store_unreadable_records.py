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
