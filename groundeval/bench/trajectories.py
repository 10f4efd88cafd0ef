"""``groundeval bench --trajectories``: trajectories verified per second and peak memory.

A file of N trajectories is generated deterministically from a world's tasks (:func:`write_file`):
each record is a τ² simulation record (the shape τ² writes) of one task's gold actions or of one
of four perturbations (a write dropped, an argument changed, a write repeated, a recorded output
falsified), with the tool outputs the world itself gives, so about half are kept and half rejected
for the reasons a real file has. The file is then verified by ``groundeval trajectories verify`` in
a child process (all cores), timed, and its peak resident memory read from the kernel (the largest
of the command's processes). Run at two sizes, memory that does not grow with the file's length
is what "streams" means.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["run_trajectory_bench", "write_file"]


def _variants(world: Any, task: Any) -> list[tuple[str, list[Any]]]:
    gold = list(task.gold_actions)
    writes = [i for i, a in enumerate(gold) if world.manifest.tools[a.tool].kind == "write"]
    out: list[tuple[str, list[Any]]] = [("gold", gold)]
    if writes:
        i = writes[-1]
        out.append(("drop_write", gold[:i] + gold[i + 1 :]))
        a = gold[i]
        args = dict(a.arguments)
        for k in sorted(args):
            if isinstance(args[k], str):
                args[k] = args[k] + "-X"
                break
        out.append(("change_arg", gold[:i] + [a.model_copy(update={"arguments": args})] + gold[i + 1 :]))
        out.append(("extra_write", gold + [a]))
    out.append(("fabricated", gold))
    return out


def _template(world: Any, task: Any, name: str, actions: list[Any]) -> dict[str, Any]:
    """One τ²-shaped simulation record of ``actions`` on ``task``, outputs from the world."""
    from ..worlds.state import WorldToolError
    from ..worlds.tau2.state import USER_PREFIX

    ep = world.state_for(task).fork()
    messages: list[dict[str, Any]] = [{"role": "user", "content": task.user.opening}]
    try:
        for i, a in enumerate(actions):
            user = a.tool.startswith(USER_PREFIX)
            tool = a.tool[len(USER_PREFIX) :] if user else a.tool
            requestor = "user" if user else "assistant"
            try:
                out = ep.run(a.tool, world.manifest.tools[a.tool], a.arguments)
                content, error = (out if isinstance(out, str) else json.dumps(out)), False
            except WorldToolError as exc:
                content, error = f"Error: {exc}", True
            if name == "fabricated" and i == len(actions) - 1 and not error:
                content = json.dumps({"fabricated": True})
            cid = f"call_{i}"
            messages.append(
                {
                    "role": requestor,
                    "content": None,
                    "tool_calls": [{"id": cid, "name": tool, "arguments": a.arguments, "requestor": requestor}],
                }
            )
            messages.append({"role": "tool", "id": cid, "content": content, "requestor": requestor, "error": error})
    finally:
        ep.close()
    messages.append({"role": "assistant", "content": " ".join(task.required_outputs) or "Done."})
    return {
        "task_id": task.id,
        "termination_reason": "user_stop",
        "reward_info": {"reward": 1.0 if name == "gold" else 0.0},
        "messages": messages,
    }


def write_file(world: Any, n: int, path: str | Path) -> Path:
    """``n`` τ²-shaped trajectories of ``world``'s tasks, the same bytes for the same world and n."""
    templates = []
    for task in world.tasks:
        for name, actions in _variants(world, task):
            templates.append((name, json.dumps(_template(world, task, name, actions), sort_keys=True)))
    p = Path(path)
    with open(p, "w", encoding="utf-8") as fh:
        for i in range(n):
            name, body = templates[i % len(templates)]
            fh.write('{"id": "t%d-%s", ' % (i, name) + body[1:] + "\n")
    return p


def _world_name() -> str:
    from ..worlds.tau2 import available

    return "tau2:retail" if available() else str(Path(__file__).resolve().parents[2] / "tests" / "worlds" / "shop")


def run_trajectory_bench(
    sizes: tuple[int, ...] = (10_000, 100_000), world: str | None = None, workers: int | None = None
) -> dict[str, Any]:
    """Verify generated files of each size; rate and peak memory per size."""
    from ..trajectories.verify import load_world_named

    name = world or _world_name()
    w = load_world_named(name)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ge-traj-bench-") as tmp:
        for n in sizes:
            f = write_file(w, n, Path(tmp) / f"t{n}.jsonl")
            out = Path(tmp) / f"out{n}"
            cmd = _verify_command(f, name, out)
            if workers:
                cmd += ["-j", str(workers)]
            code = (
                "import resource, subprocess, sys, time, json\n"
                "t = time.perf_counter(); r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
                "dt = time.perf_counter() - t\n"
                "print(json.dumps({'rc': r.returncode, 'wall': dt, 'out': r.stdout[-400:], 'err': r.stderr[-400:],"
                " 'maxrss_kb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))\n"
            )
            t0 = time.perf_counter()
            res = json.loads(subprocess.run([sys.executable, "-c", code, *cmd], capture_output=True, text=True).stdout)
            startup = _startup(name)
            summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
            rows.append(
                {
                    "trajectories": n,
                    "file_mb": round(f.stat().st_size / 2**20, 1),
                    "wall_s": round(res["wall"], 2),
                    "startup_s": round(startup, 2),
                    "per_s": round(n / res["wall"], 1),
                    "per_s_after_startup": round(n / max(res["wall"] - startup, 1e-9), 1),
                    "peak_rss_mb": round(res["maxrss_kb"] / 1024, 1),
                    "kept": summary.get("kept"),
                    "rejected": summary.get("rejected"),
                    "exit": res["rc"],
                    "measured_s": round(time.perf_counter() - t0, 1),
                }
            )
            f.unlink()
    return {"world": name, "workers": workers or os.cpu_count(), "rows": rows}


def _startup(name: str) -> float:
    """Seconds the command takes on an empty-of-work file (imports, loading the world, workers)."""
    from ..trajectories.verify import load_world_named

    w = load_world_named(name)
    with tempfile.TemporaryDirectory() as tmp:
        f = write_file(w, 1, Path(tmp) / "one.jsonl")
        t = time.perf_counter()
        subprocess.run(_verify_command(f, name, Path(tmp) / "o"), capture_output=True)
        return time.perf_counter() - t


def render(result: dict[str, Any]) -> str:
    lines = [
        f"trajectories verify on {result['world']} ({result['workers']} workers)",
        "| trajectories | file MB | wall s | start-up s | per s | per s after start-up | peak RSS MB | kept | rejected |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['trajectories']:,} | {r['file_mb']} | {r['wall_s']} | {r['startup_s']} | {r['per_s']:,} | "
            f"{r['per_s_after_startup']:,} | {r['peak_rss_mb']} | {r['kept']} | {r['rejected']} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # python -m groundeval.bench.trajectories [N ...]
    sizes = tuple(int(x) for x in sys.argv[1:]) or (10_000, 100_000)
    print(render(run_trajectory_bench(sizes)))


def _verify_command(file: Path, world: str, out: Path) -> list[str]:
    """``groundeval trajectories verify FILE -w WORLD -o OUT`` as a fresh process of this Python."""
    return [
        sys.executable,
        "-m",
        "groundeval.cli.main",
        "trajectories",
        "verify",
        str(file),
        "-w",
        world,
        "-o",
        str(out),
    ]
