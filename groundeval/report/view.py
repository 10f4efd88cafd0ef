"""``groundeval view FOLDER``: a static, local browser of every run under a folder.

One self-contained HTML file (``FOLDER/index.html`` by default): the runs in a table that a text
box filters, each linking to its own ``report.html``; pick two runs and every question they share
is shown side by side — S_adj and failure class of each, what changed, and which tool calls one
made that the other did not. It reads files only (``report.json``, ``scores.jsonl``,
``traces.jsonl``) and needs no server; the data is embedded as JSON and drawn by a small script
with ``textContent`` (an agent's text is never markup). Runs are ordered by folder and the file
holds no clock, so the same folder gives the same bytes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import ContractError
from ..scoring.io import read_scores
from ..scoring.model import RunReport
from ..trace.io import read_traces

REPORT, SCORES, TRACES = "report.json", "scores.jsonl", "traces.jsonl"


def run_folders(root: Path) -> Iterator[Path]:
    """Every folder under ``root`` (itself included) holding a ``report.json``, in path order."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        if REPORT in files:
            yield Path(folder)


def _target(arguments: dict[str, Any]) -> str:
    for key in ("artifact_id", "query", "answer"):
        if key in arguments:
            text = json.dumps(arguments[key], sort_keys=True, ensure_ascii=False)
            return text if len(text) <= 80 else text[:77] + "..."
    return ""


def _call(c: Any) -> str:
    """One call as one comparable line: tool, main argument, status, flags."""
    flags = f" [{', '.join(c.flags)}]" if c.flags else ""
    return f"{c.tool}({_target(c.arguments)}) {c.status}{flags}"


def run_entry(folder: Path, root: Path) -> dict[str, Any]:
    """What the viewer shows of one run: its figures and, per question, its score and calls."""
    try:
        report = RunReport.model_validate_json((folder / REPORT).read_bytes())
    except ValueError as exc:
        raise ContractError.single(str(folder / REPORT), f"not a groundeval report.json ({str(exc).splitlines()[0]})")
    scores = read_scores(folder / SCORES) if (folder / SCORES).is_file() else []
    traces = read_traces(folder / TRACES) if (folder / TRACES).is_file() else []
    calls = {(t.question_id, t.trial): [_call(c) for c in t.calls] for t in traces}
    questions: dict[str, Any] = {}
    for s in sorted(scores, key=lambda s: (s.track, s.question_id, s.trial)):
        key = s.question_id if s.trial == 0 else f"{s.question_id}#{s.trial}"
        questions[key] = {
            "track": s.track,
            "bucket": s.bucket,
            "s_adj": s.s_adj,
            "class": s.failure_class,
            "failures": s.failures,
            "calls": calls.get((s.question_id, s.trial), []),
        }
    o = report.overall
    rel = folder.relative_to(root).as_posix() or "."
    return {
        "path": rel,
        "report": f"{rel}/report.html" if (folder / "report.html").is_file() else None,
        "agent": report.agent or "",
        "mode": report.mode or "",
        "digest": (report.contract_digest or "")[:12],
        "n": o.n,
        "run_s_adj": o.run_s_adj,
        "accuracy": o.accuracy,
        "violation_rate": o.run_violation_rate,
        "tier": o.compliance_tier,
        "errored": report.errored_episodes,
        "empty": report.empty_episodes,
        "questions": questions,
    }


def build(root: str | Path, skipped: list[str] | None = None) -> str:
    """The viewer's HTML for every run under ``root``. A ``report.json`` that is not a run's
    (a world's, a file of another tool) is left out and its reason added to ``skipped``."""
    root = Path(root)
    if not root.is_dir():
        raise ContractError.single(str(root), "not a folder")
    runs = []
    for folder in run_folders(root):
        try:
            runs.append(run_entry(folder, root))
        except ContractError as exc:
            if skipped is not None:
                skipped.append(str(exc))
    if not runs:
        raise ContractError.single(str(root), f"holds no run (no {REPORT} of a run in it or below it)")
    data = json.dumps({"runs": runs}, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    data = data.replace("<", "\\u003c")  # nothing in the data can close the script element
    return PAGE.replace("__DATA__", data)


def write(root: str | Path, out: str | Path | None = None, skipped: list[str] | None = None) -> Path:
    path = Path(out) if out is not None else Path(root) / "index.html"
    text = build(root, skipped)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ContractError.single(str(path), f"cannot write: {exc.strerror or exc}") from None
    return path


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>groundeval runs</title>
<style>
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,sans-serif;margin:0;padding:12px;color:#1b1b1b;max-width:100%}
h1{font-size:1.3rem;margin:.2rem 0 .6rem}h2{font-size:1.1rem;margin:1rem 0 .4rem}
input[type=search]{width:100%;max-width:28rem;padding:.4rem;font-size:1rem}
.wrap{position:relative;max-width:100%}
.scroll{overflow-x:auto;max-width:100%;-webkit-overflow-scrolling:touch}
.hint{display:none;font-size:.8rem;color:#555;margin:.2rem 0}
.wrap.overflows .hint{display:block}
table{border-collapse:collapse;font-size:.9rem}
td,th{border:1px solid #d0d0d0;padding:.25rem .45rem;text-align:left;vertical-align:top;white-space:nowrap}
td.num{text-align:right}
tr.picked td{background:#eef4ff}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:6px}
.side{min-width:0;border:1px solid #ddd;padding:6px;overflow-wrap:anywhere}
.side h3{font-size:.9rem;margin:0 0 .3rem}
.call{font-family:ui-monospace,monospace;font-size:.8rem;white-space:pre-wrap;overflow-wrap:anywhere}
.only{background:#fff3cd}
.q{border-top:2px solid #bbb;margin-top:.6rem;padding-top:.4rem}
.q .head{font-weight:600;overflow-wrap:anywhere}
.changed{color:#a40000}
@media (max-width:600px){.pair{grid-template-columns:1fr}}
</style></head><body>
<h1>groundeval runs</h1>
<p><input type="search" id="filter" placeholder="filter runs: agent, folder, mode, tier" aria-label="filter runs">
<span id="count"></span></p>
<div class="wrap" id="runs-wrap"><p class="hint">&larr; the table scrolls sideways &rarr;</p>
<div class="scroll"><table id="runs"><thead><tr><th>A</th><th>B</th><th>run</th><th>agent</th><th>mode</th>
<th>questions</th><th>run S_adj</th><th>accuracy</th><th>v</th><th>compliance</th><th>errored</th><th>empty</th>
</tr></thead><tbody></tbody></table></div></div>
<h2 id="diff-title">Compare two runs: pick A and B above</h2>
<div id="diff-summary"></div>
<div id="diff"></div>
<script type="application/json" id="data">__DATA__</script>
<script>
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const runs = DATA.runs;
let pick = {A: runs.length > 1 ? 0 : null, B: runs.length > 1 ? 1 : null};
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}
function fmt(x) { return typeof x === "number" ? x.toFixed(3) : String(x); }
function hint(wrap) {
  const s = wrap.querySelector(".scroll");
  wrap.classList.toggle("overflows", s.scrollWidth > s.clientWidth + 1);
}
function drawRuns() {
  const body = document.querySelector("#runs tbody");
  body.textContent = "";
  const needle = document.getElementById("filter").value.trim().toLowerCase();
  let shown = 0;
  runs.forEach((r, i) => {
    const hay = [r.path, r.agent, r.mode, r.tier, r.digest].join(" ").toLowerCase();
    if (needle && !hay.includes(needle)) return;
    shown += 1;
    const tr = el("tr");
    tr.dataset.index = String(i);
    if (pick.A === i || pick.B === i) tr.className = "picked";
    for (const side of ["A", "B"]) {
      const td = el("td"), box = el("input");
      box.type = "radio"; box.name = "pick" + side; box.checked = pick[side] === i;
      box.setAttribute("aria-label", "run " + side + ": " + r.path);
      box.addEventListener("change", () => { pick[side] = i; drawRuns(); drawDiff(); });
      td.appendChild(box); tr.appendChild(td);
    }
    const name = el("td");
    if (r.report) { const a = el("a", r.path); a.href = r.report; name.appendChild(a); } else name.textContent = r.path;
    tr.appendChild(name);
    tr.appendChild(el("td", r.agent)); tr.appendChild(el("td", r.mode));
    tr.appendChild(el("td", r.n, "num"));
    for (const k of ["run_s_adj", "accuracy", "violation_rate"]) tr.appendChild(el("td", fmt(r[k]), "num"));
    tr.appendChild(el("td", r.tier));
    tr.appendChild(el("td", r.errored, "num")); tr.appendChild(el("td", r.empty, "num"));
    body.appendChild(tr);
  });
  document.getElementById("count").textContent = shown + " of " + runs.length + " runs";
  hint(document.getElementById("runs-wrap"));
}
function onlyIn(mine, theirs) {
  const left = new Map();
  for (const c of theirs) left.set(c, (left.get(c) || 0) + 1);
  return mine.map(c => { const n = left.get(c) || 0; if (n > 0) { left.set(c, n - 1); return false; } return true; });
}
function side(run, q, other) {
  const box = el("div", null, "side");
  box.appendChild(el("h3", run.path + " · " + run.agent));
  if (!q) { box.appendChild(el("p", "not in this run")); return box; }
  box.appendChild(el("div", "S_adj " + fmt(q.s_adj) + " · " + q["class"]));
  const marks = onlyIn(q.calls, other ? other.calls : []);
  q.calls.forEach((c, i) => box.appendChild(el("div", "#" + i + " " + c, "call" + (marks[i] ? " only" : ""))));
  if (!q.calls.length) box.appendChild(el("div", "(no tool calls)", "call"));
  return box;
}
function drawDiff() {
  const out = document.getElementById("diff"), summary = document.getElementById("diff-summary");
  out.textContent = ""; summary.textContent = "";
  if (pick.A === null || pick.B === null) return;
  const a = runs[pick.A], b = runs[pick.B];
  document.getElementById("diff-title").textContent = "A: " + a.path + "  vs  B: " + b.path;
  const ids = Array.from(new Set(Object.keys(a.questions).concat(Object.keys(b.questions)))).sort();
  let changed = 0, callsDiffer = 0;
  for (const id of ids) {
    const qa = a.questions[id], qb = b.questions[id];
    const differ = !qa || !qb || qa.s_adj !== qb.s_adj || qa["class"] !== qb["class"] ||
      JSON.stringify(qa.calls) !== JSON.stringify(qb.calls);
    if (!differ) continue;
    changed += 1;
    if (!qa || !qb || JSON.stringify(qa.calls) !== JSON.stringify(qb.calls)) callsDiffer += 1;
    const q = qa || qb, box = el("div", null, "q");
    box.dataset.question = id;
    const delta = qa && qb ? " · ΔS_adj " + (qb.s_adj - qa.s_adj >= 0 ? "+" : "") + (qb.s_adj - qa.s_adj).toFixed(3) : "";
    box.appendChild(el("div", id + " · " + q.track + "/" + q.bucket + delta, "head" + (qa && qb && qa["class"] !== qb["class"] ? " changed" : "")));
    const pair = el("div", null, "pair");
    pair.appendChild(side(a, qa, qb)); pair.appendChild(side(b, qb, qa));
    box.appendChild(pair); out.appendChild(box);
  }
  summary.textContent = changed + " of " + ids.length + " questions differ; calls differ on " + callsDiffer +
    " (highlighted: calls the other run did not make)";
}
document.getElementById("filter").addEventListener("input", drawRuns);
window.addEventListener("resize", () => hint(document.getElementById("runs-wrap")));
drawRuns(); drawDiff();
</script>
</body></html>
"""
