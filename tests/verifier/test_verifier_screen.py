"""Shape screening on a helper (``verifier.rules.screen``): the helper answers a record's facts
exactly when the in-process checks find nothing in it, and a pack checked with the helper
reports what it reports in one process."""

from __future__ import annotations

import json
import select
import shutil
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval import verifier
from groundeval.helper_process import HelperProcess
from groundeval.verifier.context import PackContext, Record
from groundeval.verifier.rules import screen, screen_helper, shape
from test_verifier_shape_cache import ARTIFACT_KEYS, EVENT_KEYS, edit, edited_draft, record
from verifier_drafts import TINY

BASE = {"id": "e1", "type": "t", "timestamp": "2026-03-01T00:00:00Z", "subsystem": "jira", "title": "x"}


def _in_process(kind: str, text: str) -> tuple | None:
    """The facts when the in-process loop would keep the record past its own checks, else None."""
    rec = Record(kind, "f", 1, text)
    data, error = rec.parse_once()
    if error is not None or not isinstance(data, dict):
        return None
    if kind == "event":
        data = shape._without_null_links(data)
    if shape.schema_errors(kind, data) or (kind == "event" and not data["id"].strip()):
        return None
    return rec._facts


texts = st.one_of(
    st.sampled_from(["{", "[1]", '{"id": 1,}', "null", '"x"', '{"id": NaN}', '{"id": "\\ud800"}']),
    st.one_of(record(EVENT_KEYS + ARTIFACT_KEYS), record(EVENT_KEYS + ARTIFACT_KEYS).map(lambda r: {**BASE, **r})).map(
        json.dumps
    ),
)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(kind=st.sampled_from(["event", "artifact"]), batch=st.lists(texts, max_size=20))
def test_the_helper_answers_facts_exactly_for_passing_records(kind, batch):
    assert screen_helper.screen(kind, batch) == [_in_process(kind, t) for t in batch]


def _verify(pack: Path, monkeypatch, helper: bool) -> dict:
    monkeypatch.setenv(screen.ENV, "1" if helper else "0")
    monkeypatch.setattr(screen, "CHUNK", 3)  # several chunks on the helper's half
    try:
        return verifier.verify(pack, level=2).to_dict()
    finally:
        monkeypatch.undo()


@pytest.mark.slow
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(edit, min_size=0, max_size=6))
def test_pack_checked_with_the_helper_reports_the_same(monkeypatch, edits):
    d = edited_draft(edits)
    d.events += [dict(e, id=f"{e['id']}-copy") for e in d.events if isinstance(e, dict)]  # a longer second half
    tmp = Path(tempfile.mkdtemp(prefix="ge-screen-"))
    try:
        pack = d.write(tmp / "p")
        with_helper = _verify(pack, monkeypatch, True)
        one_process = _verify(pack, monkeypatch, False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert json.dumps(with_helper, sort_keys=True) == json.dumps(one_process, sort_keys=True)


def test_records_come_out_in_order_and_a_dead_helper_leaves_its_chunks_here(monkeypatch):
    ctx = PackContext(TINY)
    records = [Record("event", r.file, n, r.text) for n, r in enumerate(list(ctx.events) * 5)]
    monkeypatch.setenv(screen.ENV, "1")
    monkeypatch.setattr(screen, "CHUNK", 4)
    monkeypatch.setattr(screen, "MODULE", "groundeval.no_such_helper_module")  # starts, then dies at once
    out = [rec for rec, _ in screen.screened(records, "event")]
    assert out == records


def test_a_check_that_stops_early_does_not_wait_for_the_helper(monkeypatch):
    """A helper caught writing an answer nobody reads ends by itself on the closed pipe: it is
    not left blocked until ``close`` gives up waiting and kills it (a wall-clock bound would
    flake on a loaded machine; the kill is what a waiting close ends with)."""
    started: list[HelperProcess] = []

    class Recorded(HelperProcess):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    ctx = PackContext(TINY)
    records = [Record("event", r.file, n, r.text) for n, r in enumerate(list(ctx.events) * 3000)]
    monkeypatch.setenv(screen.ENV, "1")
    monkeypatch.setattr(screen, "CHUNK", len(records))  # one answer larger than a pipe holds
    monkeypatch.setattr(screen, "HelperProcess", Recorded)
    out = screen.screened(records, "event")
    next(out)
    (helper,) = started
    select.select([helper.proc.stdout], [], [], 300)  # its answer has begun: it blocks on the full pipe
    out.close()  # as when the check raises
    assert helper.proc.returncode is not None  # close waited for it to end
    assert helper.proc.returncode != -signal.SIGKILL  # and it ended by itself, not killed after the grace period
