"""Re-scoring's default path reads each trace as a msgspec struct (``decode_trace``) and
scores it with the same ``score``: the same facts, scores and score lines as the model path
(``Trace.model_validate_json`` then ``score``), the same kept trace fields, and the same
located errors for bad lines, repeated keys and another contract's traces."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_scoring_properties import QUESTIONS, cases

from groundeval.errors import ContractError
from groundeval.scoring.io import TraceRef, iter_rescore_lines, score_line
from groundeval.scoring.lines import check_trace_line, rescore_trace
from groundeval.scoring.score import _SCORE_FIELDS, path_facts, score
from groundeval.trace.io import TraceKeys, trace_line
from groundeval.trace.model import Trace, decode_trace

QMAP = {q.id: q for q in QUESTIONS}
KEPT = TraceRef._KEPT
TIMINGS = ("started", "ended", "total_ms", "call_latency_ms")


def kept(t, f: str):
    """Field ``f`` of a trace or its reference; timings as their values (a model or a struct)."""
    v = getattr(t, f)
    return tuple(getattr(v, k) for k in TIMINGS) if f == "timings" else v


def _both(line: str | bytes) -> tuple[Trace, object]:
    return Trace.model_validate_json(line), decode_trace(line.encode() if isinstance(line, str) else line)


@settings(max_examples=300, deadline=None)
@given(cases(), st.booleans())
def test_same_facts_and_score_as_the_model(case, sparse):
    q, trace = case
    line = trace_line(trace)
    if sparse:  # the optional fields at a default-like value left out of the line, as older writers did
        line = json.dumps(_sparse(json.loads(line)))
    model, struct = _both(line)
    assert path_facts(struct) == path_facts(model)
    a, b = score(q, struct), score(q, model)
    assert a.__dict__.keys() == b.__dict__.keys() == _SCORE_FIELDS  # the scorer sets every field
    assert a == b and score_line(a) == score_line(b)
    assert a.__pydantic_fields_set__ == b.__pydantic_fields_set__
    ref, full = TraceRef.of_struct(struct, b""), TraceRef(model, b"")
    for f in KEPT:
        assert kept(ref, f) == kept(full, f), f


REQUIRED = {"question_id", "track", "mode", "actor", "as_of", "contract_digest", "index", "tool", "status"}
REQUIRED |= {"call_index", "answer", "valid"}


def _drop(obj: dict) -> dict:
    return {k: v for k, v in obj.items() if k in REQUIRED or v not in ([], {}, None, 0)}


def _sparse(data: dict) -> dict:
    """The trace's dict without its optional fields that hold an empty, null or zero value
    (in the trace, its calls, submissions and timings)."""
    out = _drop(data)
    for name in ("calls", "submissions"):
        if name in out:
            out[name] = [_drop(x) for x in out[name]]
    if "timings" in out:
        out["timings"] = _drop(out["timings"])
    return out


def _lines(batch) -> bytes:
    return "".join(trace_line(t) + "\n" for _q, t in batch).encode()


def _model_path(path, digest=None):
    keys, out = TraceKeys(path), []
    for n, line in enumerate(path.read_bytes().splitlines(keepends=True), 1):
        if line.isspace():
            continue
        t = check_trace_line(path, n, line, digest)
        keys.add(t, n)
        out.append((t, rescore_trace(t, QMAP), line))
    return out


def _outcome(fn):
    try:
        return fn(), None
    except ContractError as exc:
        return None, str(exc)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.lists(cases(), min_size=1, max_size=6),
    st.lists(st.tuples(st.integers(0, 20), st.sampled_from([b'{"x":1}\n', b"\n", b"  \n", b"{\n", b"\xff\n"]))),
    st.booleans(),
    st.sampled_from([None, "0" * 64, "f" * 64]),
)
def test_the_same_stream_and_errors_as_the_model_path(tmp_path_factory, batch, junk, repeat, digest):
    """Whole files, with junk lines, a repeated trace or another contract's digest: the struct
    path yields what the model path yields, or raises the same located error."""
    raw = _lines(batch)
    lines = raw.splitlines(keepends=True)
    if repeat:
        lines.append(lines[0])
    for at, text in junk:
        lines.insert(min(at, len(lines)), text)
    path = tmp_path_factory.mktemp("data") / "traces.jsonl"
    path.write_bytes(b"".join(lines))
    got, err = _outcome(lambda: list(iter_rescore_lines(path, QMAP, contract_digest=digest, workers=0)))
    want, want_err = _outcome(lambda: _model_path(path, digest))
    assert err == want_err
    if got is None:
        return
    assert len(got) == len(want)
    for (r, s1, l1), (t, s2, l2) in zip(got, want):
        assert l1 == l2 and s1 == s2 and (s1 is None or score_line(s1) == score_line(s2))
        assert all(kept(r, f) == kept(t, f) for f in KEPT)
        assert r.calls == t.calls and r.submissions == t.submissions  # the rest, parsed from the line when read
        assert TraceRef(r, l1) is r


def test_another_profile_takes_the_model_path(tmp_path):
    q, t = QUESTIONS[0], None
    from scoring_builders import trace

    t = trace(q, [], None)
    path = tmp_path / "t.jsonl"
    path.write_text(trace_line(t) + "\n")
    ((got, s, _line),) = iter_rescore_lines(path, QMAP, profile="paper", workers=0)
    assert isinstance(got, Trace) and s.profile == "paper"


@pytest.mark.parametrize("profile", [None, "default"])
def test_the_default_profile_reads_structs(tmp_path, profile):
    from scoring_builders import trace

    q = QUESTIONS[0]
    path = tmp_path / "t.jsonl"
    path.write_text(trace_line(trace(q, [], None)) + "\n")
    ((got, s, _line),) = iter_rescore_lines(path, QMAP, profile=profile, workers=0)
    assert isinstance(got, TraceRef) and s == score(q, trace(q, [], None))


def test_scores_share_one_fields_set_that_nothing_changes():
    """Scores built by the scorer share one fields set (all fields): assigning a field, a
    copy with an update, a deep copy and a pickle round trip leave it as it was."""
    import copy
    import pickle

    from scoring_builders import trace

    from groundeval.scoring.model import QuestionScore
    from groundeval.scoring.score import EVERY_FIELD

    q = QUESTIONS[0]
    a, b = score(q, trace(q, [], None)), score(q, trace(q, [], {"exists": True}))
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__ is EVERY_FIELD
    a.s_adj = 0.5
    c = b.model_copy(update={"s_traj": 0.25})
    d = copy.deepcopy(b)
    e = pickle.loads(pickle.dumps(b))
    assert EVERY_FIELD == set(QuestionScore.model_fields)
    assert c.__pydantic_fields_set__ is not EVERY_FIELD and c.s_traj == 0.25 and b.s_traj != 0.25
    assert d == b == e and score_line(e) == score_line(b)


def test_a_reference_reads_its_line_again_and_refuses_a_changed_file(tmp_path):
    """The references of the struct path hold where their line is: a field not kept is read
    from the file again; a file changed since (another trace there) is a located error."""
    from scoring_builders import trace

    q1, q2 = QUESTIONS[0], QUESTIONS[1]
    t1, t2 = trace(q1, [], None), trace(q2, [], {"exists": True})
    path = tmp_path / "t.jsonl"
    path.write_text("\n" + trace_line(t1) + "\n\n" + trace_line(t2) + "\n")
    refs = [r for r, _s, _line in iter_rescore_lines(path, QMAP, workers=0)]
    assert all(type(r._line) is tuple for r in refs)
    assert refs[1].final_answer == {"exists": True} and refs[1].calls == t2.calls
    path.write_text("\n" + trace_line(t2) + "\n\n" + trace_line(t1) + "\n")
    with pytest.raises(ContractError, match="changed while it was read"):
        _ = refs[0].calls
