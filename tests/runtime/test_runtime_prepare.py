"""``evaluate`` builds the runtime's indexes in a thread while the verifier checks the pack:
the run's files are the same as when every index is built on first use."""

from __future__ import annotations

import json

import pytest

from groundeval import api
from groundeval.runtime import search_sql
from groundeval.synth.generate import write_org

SAME = ("verification.json", "questions.json", "scores.jsonl", "report.json")


def _traces(path):
    """The traces without their timings (wall-clock, so never equal twice)."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        t = json.loads(line)
        t.pop("timings", None)
        out.append(t)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("style", ["default", "paper"])
def test_eval_with_the_runtime_prepared_beside_writes_the_same_run(tmp_path, monkeypatch, style):
    pack = tmp_path / "org"
    write_org(pack, events=3000, seed=5, jobs=1, style=style)
    calls = []
    real = search_sql.prepare
    monkeypatch.setattr(search_sql, "prepare", lambda store: (calls.append(1), real(store)))
    api.evaluate(pack, "oracle", tmp_path / "beside")
    assert calls == [1]
    monkeypatch.setattr(search_sql, "prepare", lambda store: None)
    api.evaluate(pack, "oracle", tmp_path / "on_use")
    for name in SAME:
        assert (tmp_path / "beside" / name).read_bytes() == (tmp_path / "on_use" / name).read_bytes(), name
    assert _traces(tmp_path / "beside" / "traces.jsonl") == _traces(tmp_path / "on_use" / "traces.jsonl")
