"""``groundeval bench --matrix``: each stage a fresh process measured from outside (wall, CPU,
peak RSS, load average), beside its floor, for both pack formats."""

from __future__ import annotations

import json
import sys

import pytest

from groundeval.bench.matrix import measure, run_matrix
from groundeval.cli.main import main


def test_measure_reports_one_child_alone():
    ballast = bytearray(300 * 2**20)  # a large parent must not lend its size to the child it measures
    ballast[::4096] = b"\x01" * len(range(0, len(ballast), 4096))
    r = measure([sys.executable, "-c", "x = bytearray(60 * 2**20); print(len(x))"])
    assert r["exit"] == 0 and r["stdout"].strip() == str(60 * 2**20)
    assert r["peak_rss_mb"] >= 60 and r["seconds"] > 0 and r["cpu_seconds"] >= 0 and r["load_avg"] >= 0
    small = measure([sys.executable, "-c", "pass"])
    assert small["peak_rss_mb"] < r["peak_rss_mb"]  # per child, not the maximum over all children
    assert small["peak_rss_mb"] < 200 and len(ballast) == 300 * 2**20


@pytest.mark.slow
def test_matrix_load_on_both_formats(tmp_path):
    res = run_matrix(scales=[400], formats=["native", "original"], stages=["load"], workdir=tmp_path)
    assert [(c["format"], c["events"]) for c in res["matrix"]] == [("native", 400), ("original", 400)]
    for cell in res["matrix"]:
        st = cell["stages"]
        assert st["load"]["status"] == "ok" and st["load"]["events"] == 400 and st["load"]["peak_rss_mb"] > 0
        assert st["info"]["status"] == "ok"
        floor = st["load_floor"]
        assert floor["events"] == 400 and floor["artifacts"] == cell["artifacts"] == st["load"]["artifacts"]
    assert res["machine"]["cores"] >= 1 and "load_avg_end" in res


def test_cli_matrix_writes_json(tmp_path, capsys):
    out = tmp_path / "m.json"
    try:
        main(
            [
                "bench",
                "--matrix",
                "--events",
                "300",
                "--format",
                "native",
                "--stages",
                "load",
                "--workdir",
                str(tmp_path / "w"),
                "--json",
                str(out),
            ]
        )
    except SystemExit as exc:
        assert exc.code in (0, None)
    data = json.loads(out.read_text())
    assert data["matrix"][0]["stages"]["load"]["status"] == "ok"
    assert "load (Store.open)" in capsys.readouterr().out
