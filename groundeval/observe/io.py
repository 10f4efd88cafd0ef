"""Reading recorded runs from any of the formats groundeval understands, and writing them.

A path may hold OpenTelemetry spans (:mod:`.otel`), groundeval traces (``traces.jsonl``:
each trace becomes a run of its own tool calls) or observed runs groundeval wrote itself
(``kind: observed-run``). The format is recognised from the content, never the file name.
Written runs are canonical JSON (sorted keys), so the same run gives the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from ..errors import ContractError
from .model import ObservedCall, ObservedMessage, ObservedRun
from .otel import parse_documents, runs_from_documents

__all__ = ["Format", "read_runs", "run_from_trace", "run_json", "write_run"]

Format = Literal["auto", "otel", "trace", "run"]


def _detect(docs: list[Any]) -> str:
    first = docs[0]
    if isinstance(first, dict) and first.get("kind") == "observed-run":
        return "run"
    if isinstance(first, dict) and "question_id" in first and "calls" in first:
        return "trace"
    return "otel"


def run_from_trace(trace: Any) -> ObservedRun:
    """A groundeval :class:`~groundeval.trace.model.Trace` as an observed run (its gated calls)."""
    calls = [
        ObservedCall(
            index=i,
            tool=c.tool,
            agent=trace.agent,
            arguments=dict(c.arguments),
            result={"result_ids": list(c.result_ids), "status": c.status} if c.result_ids or c.status != "ok" else None,
            status="ok" if c.status == "ok" else "error",
            error=c.error,
        )
        for i, c in enumerate(trace.calls)
    ]
    messages = [
        ObservedMessage(
            role=str(m.get("role") or "assistant"),
            content=str(m.get("content") or m.get("text") or ""),
            agent=trace.agent,
        )
        for m in trace.messages
        if isinstance(m, dict) and (m.get("content") or m.get("text"))
    ]
    run_id = f"{trace.question_id}:{trace.agent or 'agent'}:{trace.mode}:{trace.trial}"
    return ObservedRun(
        run_id=run_id,
        source="trace",
        agents=[trace.agent] if trace.agent else [],
        calls=calls,
        messages=messages,
        final_answer=trace.final_answer,
    )


def read_runs(path: str | Path, fmt: Format = "auto") -> list[ObservedRun]:
    """Every run recorded in ``path``. Unreadable files are located :class:`ContractError`;
    spans that cannot be read are problems recorded on the run."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ContractError.single(str(p), f"not UTF-8 text (byte offset {exc.start})") from None
    docs = parse_documents(text, str(p))
    kind = _detect(docs) if fmt == "auto" else fmt
    if kind == "run":
        runs = []
        for i, d in enumerate(docs):
            try:
                runs.append(ObservedRun.model_validate(d))
            except ValidationError as exc:
                err = exc.errors()[0]
                raise ContractError.single(
                    str(p), err["msg"], record=str(i + 1), field=".".join(str(x) for x in err["loc"])
                ) from None
        return runs
    if kind == "trace":
        from ..trace.model import Trace

        runs = []
        for i, d in enumerate(docs):
            try:
                runs.append(run_from_trace(Trace.model_validate(d)))
            except ValidationError as exc:
                err = exc.errors()[0]
                raise ContractError.single(
                    str(p), err["msg"], line=i + 1, field=".".join(str(x) for x in err["loc"])
                ) from None
        return runs
    runs = runs_from_documents(docs, str(p))
    for r in runs:  # name runs after their file: one trace, the file's stem; several, stem#trace-id
        r.run_id = p.stem if len(runs) == 1 else f"{p.stem}#{r.run_id}"
    return runs


def run_json(run: ObservedRun) -> str:
    return json.dumps(run.model_dump(mode="json"), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_run(run: ObservedRun, path: str | Path) -> Path:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(run_json(run), encoding="utf-8")
    return p
