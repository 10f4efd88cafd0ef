"""``groundeval bench`` reports every requested stage, and a missing component as unavailable."""

from __future__ import annotations

import json

from groundeval.bench import run as bench_run
from groundeval.cli.main import main


def test_bench_small_scale_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    try:
        main(
            [
                "bench",
                "--events",
                "400",
                "--stages",
                "synth,load,fetch,search",
                "--samples",
                "10",
                "--workdir",
                str(tmp_path / "w"),
                "--json",
                str(out),
            ]
        )
    except SystemExit as exc:
        assert exc.code in (0, None)
    data = json.loads(out.read_text())
    (run,) = data["runs"]
    assert run["events"] == 400
    st = run["stages"]
    assert set(st) == {"synth", "load", "fetch", "search"}
    assert st["synth"]["status"] == "ok" and st["synth"]["events"] == 400
    assert st["load"]["status"] == "ok" and st["load"]["events"] == 400
    for name in ("fetch", "search"):
        if st[name]["status"] == "ok":
            assert st[name]["calls"] > 0 and 0 <= st[name]["p50_ms"] <= st[name]["p99_ms"]
    assert data["machine"]["cores"] >= 1


def test_missing_component_is_unavailable(tmp_path, monkeypatch):
    real = bench_run._import

    def fake(module, attr):
        if module == "groundeval.graph.build":
            raise bench_run.Unavailable("not written yet")
        return real(module, attr)

    monkeypatch.setattr(bench_run, "_import", fake)
    res = bench_run.run_bench(scales=[300], stages=["synth", "load", "graph"], workdir=tmp_path)
    st = res["runs"][0]["stages"]
    assert st["graph"]["status"] == "unavailable"
    assert st["load"]["status"] == "ok"
