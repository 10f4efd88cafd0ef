"""``eval`` on a pack the loader refuses: the refusal is its own ``Store.open``'s, so the
verifier goes straight to the lenient loader instead of trying that load a second time,
and reports exactly what ``verify`` reports on its own."""

from __future__ import annotations

import json

import pytest

from groundeval import api, verifier
from groundeval.errors import ContractError
from groundeval.store.store import Store

from verifier_drafts import PackDraft


@pytest.mark.slow
def test_a_refused_pack_is_loaded_once_and_reported_as_verify_reports_it(tmp_path, monkeypatch):
    d = PackDraft()
    d.events[1] = '{"id": "broken",'  # the loader stops at this line; the lenient loader reads on
    pack = d.write(tmp_path / "p")
    opened: list[object] = []
    real_open = Store.open.__func__

    def counting_open(cls, *args, **kwargs):
        opened.append(args[0])
        return real_open(cls, *args, **kwargs)

    monkeypatch.setattr(Store, "open", classmethod(counting_open))
    out = tmp_path / "run"
    with pytest.raises(ContractError):
        api.evaluate(pack, "oracle", out)
    assert len(opened) == 1
    monkeypatch.undo()
    alone = verifier.verify(pack, level=4).to_dict()
    assert alone["summary"]["error"] > 0
    assert json.loads((out / api.VERIFICATION).read_text()) == json.loads(json.dumps(alone, default=str))
