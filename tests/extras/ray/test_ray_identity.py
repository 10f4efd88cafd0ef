"""``--backend ray`` gives the local backend's bytes: traces (question order, content), scores
and reports, through the CLI and the Python API, on bundled packs (a 100K-event synthetic org:
test_ray_100k.py). Wall-clock ``timings`` are the only fields allowed to differ, as between two
local runs; they are cleared before scoring, as the golden test does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from groundeval import api
from groundeval.agents.registry import get_agent
from groundeval.cli.main import main
from groundeval.trace.io import read_traces, trace_line
from groundeval.trace.model import Timings

OUTPUTS = ("scores.jsonl", "report.json", "report.md", "report.html")


def no_timings(path: Path) -> list[str]:
    """Each trace line with its wall-clock timings cleared (canonical JSON otherwise untouched)."""
    return [trace_line(t.model_copy(update={"timings": Timings()})) for t in read_traces(path)]


def clear_timings(path: Path) -> None:
    path.write_text("".join(x + "\n" for x in no_timings(path)), encoding="utf-8")


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def score_both(capsys, traces: Path, questions: Path, tmp: Path, *extra: str) -> dict[str, dict[str, bytes]]:
    outs = {}
    for backend in ("local", "ray"):
        out = tmp / f"scored-{backend}"
        code, _o, err = cli(
            capsys,
            "score",
            traces,
            "--questions",
            questions,
            "--out",
            out,
            "--backend",
            backend,
            "--bootstrap",
            "200",
            *extra,
        )
        assert code == 0, err
        outs[backend] = {name: (out / name).read_bytes() for name in OUTPUTS}
    return outs


@pytest.mark.parametrize(
    "pack,agents",
    [
        ("tiny", [("oracle", "tool"), ("keyword", "tool"), ("leaky", "tool"), ("keyword", "context")]),
        ("cybersecurity", [("oracle", "tool"), ("keyword", "tool")]),
    ],
)
def test_run_and_score_give_the_local_bytes(ray_backend, tmp_path, capsys, pack, agents):
    for agent, mode in agents:
        local = api.run(pack, agent, tmp_path / f"local-{agent}-{mode}", mode=mode, concurrency=2)
        remote = api.run(
            pack,
            agent,
            tmp_path / f"ray-{agent}-{mode}",
            mode=mode,
            backend=ray_backend,
            db=tmp_path / f"{pack}.duckdb",
        )
        assert no_timings(remote) == no_timings(local), (agent, mode)
        assert (remote.parent / "questions.json").read_bytes() == (local.parent / "questions.json").read_bytes()
        info = json.loads((remote.parent / "run.json").read_text())
        assert info["settings"]["backend"] == "ray" and info["settings"]["workers"] == 2
        assert info["status"] == "completed"
        # the same traces (timings cleared) score to the same bytes on either backend
        clear_timings(local)
        outs = score_both(capsys, local, local.parent / "questions.json", tmp_path / f"s-{agent}-{mode}")
        assert outs["ray"] == outs["local"], (agent, mode)


def test_cli_run_with_ray_backend(ray_backend, tmp_path, capsys):
    """The command line end to end (joins the session's Ray instance; --workers 2 of its 2 CPUs)."""
    code, out, err = cli(
        capsys,
        "run",
        "tiny",
        "--agent",
        "keyword",
        "--out",
        tmp_path / "ray",
        "--backend",
        "ray",
        "--workers",
        "2",
        "--concurrency",
        "2",
        "--db",
        tmp_path / "tiny.duckdb",
        "-q",
    )
    assert code == 0, err
    assert "21/21 episodes (completed 21)" in out
    code, _, err = cli(capsys, "run", "tiny", "--agent", "keyword", "--out", tmp_path / "local", "-q")
    assert code == 0, err
    assert no_timings(tmp_path / "ray" / "traces.jsonl") == no_timings(tmp_path / "local" / "traces.jsonl")
    code, _, err = cli(
        capsys,
        "run",
        "tiny",
        "--agent",
        "keyword",
        "--out",
        tmp_path / "x",
        "--backend",
        "ray",
        "--workers",
        "64",
        "-q",
    )
    assert code == 2 and "--workers: 64 workers, but the Ray cluster has 2 CPUs" in err and "Traceback" not in err


def test_trials_resume_across_backends(ray_backend, tmp_path):
    """A run started locally and resumed on Ray (and the reverse) ends as the all-local run."""
    full = api.run("tiny", "keyword", tmp_path / "full", trials=2)
    for first, then in (("local", ray_backend), (ray_backend, "local")):
        out = tmp_path / f"mixed-{first if isinstance(first, str) else 'ray'}"
        path = api.run("tiny", "keyword", out, trials=2, backend=first)
        kept = path.read_text().splitlines(keepends=True)[:9]
        path.write_text("".join(kept))
        api.run("tiny", "keyword", out, trials=2, resume=True, backend=then)
        assert no_timings(path) == no_timings(full)


def test_evaluate_with_ray_backend(ray_backend, tmp_path):
    local = api.evaluate("tiny", "oracle", tmp_path / "local")
    remote = api.evaluate("tiny", "oracle", tmp_path / "ray", backend=ray_backend)
    for name in ("verification.json", "questions.json", "scores.jsonl"):
        assert (remote.out_dir / name).read_bytes() == (local.out_dir / name).read_bytes(), name
    assert no_timings(remote.out_dir / "traces.jsonl") == no_timings(local.out_dir / "traces.jsonl")
    assert remote.report.overall.run_s_adj == local.report.overall.run_s_adj == 1.0


def test_api_score_and_pickled_agent_objects(ray_backend, tmp_path):
    """An agent object (not a name) is pickled to the workers; api.score(backend=...) keeps the order."""
    local = api.run("tiny", get_agent("keyword"), tmp_path / "local")
    remote = api.run("tiny", get_agent("keyword"), tmp_path / "ray", backend=ray_backend)
    assert no_timings(remote) == no_timings(local)
    qs = api.load_questions(local.parent / "questions.json")
    traces = list(reversed(read_traces(local)))
    want = [s.model_dump_json() for s in api.score(qs, traces)]
    assert [s.model_dump_json() for s in api.score(qs, traces, backend=ray_backend)] == want
    from groundeval.distributed import LocalBackend
    from groundeval.distributed.ray_backend import RayBackend

    small = RayBackend(workers=2, chunk_lines=4)  # many chunks, merged in order
    assert [s.model_dump_json() for s in api.score(qs, traces, backend=small)] == want
    qmap, digest = {q.id: q for q in qs.questions}, qs.metadata.contract_digest

    def stream(backend):
        return [
            (t.question_id, t.trial, s.model_dump_json(), line)
            for t, s, line in backend.rescore(local, qmap, contract_digest=digest)
        ]

    assert stream(small) == stream(LocalBackend())
