"""``groundeval bench --matrix --original-python PY``: the original release's generator measured
beside ours on the original-format packs, run by a real second Python environment (a venv
holding a stand-in ``groundeval`` package with the original's entry point), never in our process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from groundeval.bench.matrix import _cell, _original_stage, matrix_markdown, measure, original_ratio, run_matrix
from groundeval.bench.original import original_config, original_unavailable
from groundeval.cli.main import main

# The stand-in answers the original's command line (python -m groundeval generate --config C
# --events E): it reads output_dir from the config, counts the events, holds 120 MB, burns
# 0.3 s of CPU and writes (events + 3) questions, so its row can be told from the launcher's.
_STAND_IN = {
    "groundeval/__init__.py": "",
    "groundeval/question_gen.py": "class QuestionGenerator:\n    pass\n",
    "groundeval/run.py": """
import json, sys, time
from pathlib import Path


def cmd_generate(config, events):
    lines = Path(config).read_text(encoding="utf-8").splitlines()
    out = Path(next(ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("output_dir:")))
    n = sum(1 for ln in open(events, encoding="utf-8") if ln.strip())
    ballast = bytearray(120 * 2**20)
    ballast[::4096] = b"\\x01" * len(range(0, len(ballast), 4096))
    t = time.process_time()
    while time.process_time() - t < 0.3:
        pass
    out.mkdir(parents=True, exist_ok=True)
    (out / "eval_questions.json").write_text(json.dumps({"questions": [{"i": i} for i in range(n + 3)]}))


def main():
    args = sys.argv[1:]
    assert args[0] == "generate", args
    cmd_generate(args[args.index("--config") + 1], args[args.index("--events") + 1])
""",
    "groundeval/__main__.py": "from groundeval.run import main\n\nmain()\n",
}


def _second_python(tmp_path: Path) -> str:
    """A real venv (not ours: it cannot see our groundeval) whose ``groundeval`` is the stand-in."""
    src = tmp_path / "original-src"
    for rel, text in _STAND_IN.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text, encoding="utf-8")
    venv = tmp_path / "venv-original"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    site = subprocess.run(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "original-standin.pth").write_text(str(src) + "\n", encoding="utf-8")
    return str(py)


def _original_pack(root: Path) -> Path:
    """An original-format pack in the shapes our synth writes and the original does not read."""
    pack = root / "pack"
    (pack / "artifacts" / "jira").mkdir(parents=True)
    cfg = {
        "name": "p",
        "timezone": "UTC",
        "actors": {
            "ana": [{"role": "eng", "until": "2026-05-02T00:00:00Z"}, {"role": "ops", "since": "2026-05-02T00:00:00Z"}],
            "bot": {"role": "ops", "system": True},
            "cho": "eng",
        },
        "roles": {"eng": {"subsystems": ["jira"]}, "ops": {"subsystems": ["jira", "slack"]}},
        "causal_links": [],
        "silence_pairs": [
            {
                "trigger_event_type": "incident_opened",
                "response_event_type": "incident_resolved",
                "join": [{"trigger": "facts.incident_id", "response": "facts.incident_id"}],
                "search_space": [{"subsystem": "jira", "id_template": "{artifact_ids.jira}"}],
            }
        ],
        "seed": 3,
    }
    (pack / "config.yaml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    events = [
        {"id": f"e{i}", "type": t, "timestamp": f"2026-05-0{i}T08:00:00Z", "actors": ["ana"], "artifact_ids": {}}
        for i, t in ((1, "incident_opened"), (2, "incident_resolved"), (3, "incident_opened"))
    ]
    (pack / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    (pack / "artifacts" / "jira" / "J-1.json").write_text('{"timestamp": "2026-05-01T08:00:00Z"}', encoding="utf-8")
    return pack


def test_original_config_is_what_the_original_reads(tmp_path):
    pack = _original_pack(tmp_path)
    cfg = yaml.safe_load(original_config(pack, tmp_path / "run").read_text(encoding="utf-8"))
    assert "name" not in cfg and "timezone" not in cfg  # the original's config check rejects unknown keys
    assert cfg["actors"] == {"ana": "eng", "bot": "ops", "cho": "eng"}  # one role name per actor
    assert cfg["silence_pairs"][0]["join"] == [{"cause": "facts.incident_id", "effect": "facts.incident_id"}]
    assert cfg["silence_pairs"][0]["search_space"] == [{"subsystem": "jira", "id_template": "{artifact_ids.jira}"}]
    assert Path(cfg["artifacts_dir"]) == (pack / "artifacts").resolve() and cfg["seed"] == 3
    assert Path(cfg["output_dir"]) == (tmp_path / "run" / "eval_output").resolve()


def test_original_row_measures_the_second_python_and_the_ratio_divides_the_cells(tmp_path):
    py = _second_python(tmp_path)
    assert original_unavailable(py) is None
    pack = _original_pack(tmp_path)
    res: dict = {"generate": _cell(measure([sys.executable, "-c", "x = bytearray(40 * 2**20)"]), 3)}

    def stage(name, cmd, cwd=None):
        r = measure(cmd, cwd=cwd)
        res[name] = _cell(r, 3)
        return r

    _original_stage(stage, res, "original", pack, tmp_path / "run", py, None)
    orig, ours, ratio = res["original_generate"], res["generate"], res["original_ratio"]
    assert orig["status"] == "ok" and orig["questions"] == 3 + 3  # the stand-in's own output, read back
    assert orig["cpu_seconds"] >= 0.25 and orig["peak_rss_mb"] >= 120  # that process, not the launcher
    assert ours["peak_rss_mb"] < orig["peak_rss_mb"]
    assert ratio == {
        "status": "ok",
        "speed_x": round(orig["seconds"] / ours["seconds"], 2),
        "cpu_x": round(orig["cpu_seconds"] / ours["cpu_seconds"], 2) if ours["cpu_seconds"] else None,
        "memory_x": round(ours["peak_rss_mb"] / orig["peak_rss_mb"], 2),
    }
    assert ratio["memory_x"] < 1
    md = matrix_markdown({"matrix": [{"format": "original", "events": 3, "stages": res}]})
    row = next(ln for ln in md.splitlines() if ln.startswith("| ours vs original |"))
    assert f"memory {ratio['memory_x']:.2f}×" in row


def test_original_rows_unavailable_without_a_usable_python(tmp_path):
    assert original_unavailable(None) == "no --original-python given"
    ours = original_unavailable(sys.executable)  # our environment: its groundeval is not the original
    assert ours is not None and "not importable" in ours
    res: dict = {"generate": {"status": "ok", "seconds": 1.0, "cpu_seconds": 1.0, "peak_rss_mb": 100.0}}
    _original_stage(lambda *a, **k: pytest.fail("nothing runs"), res, "original", tmp_path, tmp_path, None, ours)
    assert res["original_generate"] == {"status": "unavailable", "note": ours}
    assert res["original_ratio"]["status"] == "unavailable"
    native: dict = {}
    _original_stage(lambda *a, **k: pytest.fail("nothing runs"), native, "native", tmp_path, tmp_path, "py", None)
    assert native == {}  # the original cannot read a native pack: no row at all
    assert original_ratio(res["generate"], {"status": "error"})["status"] == "unavailable"
    md = matrix_markdown({"matrix": [{"format": "original", "events": 1, "stages": res}]})
    assert "| original generate | unavailable |" in md and "| ours vs original | unavailable |" in md


@pytest.mark.slow
def test_matrix_runs_the_original_beside_generate_on_original_packs_only(tmp_path, capsys):
    py = _second_python(tmp_path)
    out = tmp_path / "m.json"
    args = ["bench", "--matrix", "--events", "300", "--stages", "generate", "--workdir", str(tmp_path / "w")]
    try:
        main([*args, "--original-python", py, "--json", str(out)])
    except SystemExit as exc:
        assert exc.code in (0, None)
    native, original = (c["stages"] for c in json.loads(out.read_text())["matrix"])
    assert "original_generate" not in native and "original_ratio" not in native
    assert original["generate"]["status"] == "ok" and original["original_generate"]["status"] == "ok"
    assert original["original_generate"]["questions"] == 300 + 3
    assert original["original_ratio"]["speed_x"] == round(
        original["original_generate"]["seconds"] / original["generate"]["seconds"], 2
    )
    assert "ours vs original" in capsys.readouterr().out
    without = run_matrix(scales=[300], formats=["original"], stages=["generate"], workdir=tmp_path / "w")
    assert without["matrix"][0]["stages"]["original_generate"]["status"] == "unavailable"
