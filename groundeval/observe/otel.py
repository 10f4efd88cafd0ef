"""OpenTelemetry spans -> observed runs, without the OpenTelemetry SDK.

Reads what exporters write: OTLP JSON (``resourceSpans`` / ``scopeSpans`` / ``spans``,
attributes as ``{key, value: {stringValue|intValue|...}}``, one document or one per line as
the collector's file exporter writes), the SDK's ``ReadableSpan.to_json()`` objects (a JSON
list, or concatenated as the console exporter prints them) and plain span lists with flat
attribute maps. One run per trace id.

Two vocabularies are understood:

* OpenTelemetry GenAI semantic conventions: ``gen_ai.operation.name`` (``execute_tool``,
  ``chat``, ``invoke_agent``...), ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``, ``gen_ai.agent.name``,
  ``gen_ai.input.messages`` / ``gen_ai.output.messages``;
* OpenInference: ``openinference.span.kind`` (``TOOL``, ``LLM``, ``AGENT``, ``CHAIN``),
  ``tool.name``, ``input.value`` / ``output.value``, ``agent.name``, ``graph.node.id``,
  ``llm.output_messages.<i>.message.role|content``.

``groundeval.end_state`` (a JSON object on any span) is groundeval's own attribute for a
harness that can report the records a run changed. Anything that cannot be read is a
located :class:`ImportProblem` on the run; only a file that is not JSON at all is an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..errors import ContractError
from .model import ImportProblem, ObservedCall, ObservedMessage, ObservedRun

__all__ = ["parse_documents", "runs_from_documents", "runs_from_spans", "spans_from_documents"]

TOOL_OPERATIONS = {"execute_tool"}
LLM_OPERATIONS = {"chat", "text_completion", "generate_content"}
AGENT_NAME_KEYS = ("gen_ai.agent.name", "agent.name", "graph.node.id")


@dataclass
class Span:
    """One span, normalised from whichever export format it came in."""

    where: str
    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int  # ns since the epoch (0 when unknown)
    order: int  # position in the file: the tie-break after start
    attributes: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


# --------------------------------------------------------------------------- reading documents


def parse_documents(text: str, source: str) -> list[Any]:
    """The JSON documents in ``text``: one document, JSON lines, or concatenated objects.

    Text that holds no JSON is a located :class:`ContractError` (line and column)."""
    decoder = json.JSONDecoder()
    docs: list[Any] = []
    pos, n = 0, len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= n:
            break
        try:
            doc, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise ContractError.single(source, f"not JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
        docs.append(doc)
    if not docs:
        raise ContractError.single(source, "no spans: the file is empty")
    return docs


def _otlp_value(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    if not isinstance(v, dict) or len(v) != 1:
        raise ValueError(
            "an OTLP value is an object with one of stringValue, intValue, doubleValue, boolValue, "
            "arrayValue, kvlistValue, bytesValue"
        )
    ((kind, x),) = v.items()
    if kind == "stringValue":
        return str(x)
    if kind == "intValue":
        return int(x)
    if kind == "doubleValue":
        return float(x)
    if kind == "boolValue":
        return bool(x)
    if kind == "arrayValue":
        return [_otlp_value(i) for i in (x or {}).get("values", [])]
    if kind == "kvlistValue":
        return {kv["key"]: _otlp_value(kv.get("value", {})) for kv in (x or {}).get("values", [])}
    if kind == "bytesValue":
        return str(x)
    raise ValueError(f"unknown OTLP value kind {kind!r}")


def _attributes(raw: Any, where: str, problems: list[ImportProblem]) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, dict):
        return dict(raw)
    if isinstance(raw, list):  # OTLP key/value list
        out: dict[str, Any] = {}
        for i, kv in enumerate(raw):
            try:
                out[str(kv["key"])] = _otlp_value(kv.get("value", {}))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                problems.append(ImportProblem(where=f"{where} attributes[{i}]", message=f"unreadable attribute: {exc}"))
        return out
    problems.append(
        ImportProblem(where=f"{where} attributes", message="attributes are neither an object nor a key/value list")
    )
    return {}


def _hex(x: Any) -> str:
    s = "" if x is None else str(x)
    return s[2:] if s.startswith("0x") else s


def _time_ns(x: Any) -> int:
    if x is None or x == "":
        return 0
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return int(x)
    s = str(x)
    if s.isdigit():
        return int(s)
    dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
    return int(dt.timestamp()) * 1_000_000_000 + dt.microsecond * 1000


def _span(raw: Any, where: str, order: int, problems: list[ImportProblem]) -> Span | None:
    if not isinstance(raw, dict):
        problems.append(ImportProblem(where=where, message="a span must be a JSON object"))
        return None
    ctx = raw.get("context") if isinstance(raw.get("context"), dict) else {}
    trace_id = _hex(raw.get("traceId", raw.get("trace_id", ctx.get("trace_id"))))
    span_id = _hex(raw.get("spanId", raw.get("span_id", ctx.get("span_id"))))
    name = raw.get("name")
    if not isinstance(name, str):
        problems.append(ImportProblem(where=where, message="span has no name"))
        name = ""
    if not span_id:
        problems.append(ImportProblem(where=where, message="span has no span id; it is kept without a parent link"))
        span_id = f"#{order}"
    parent = _hex(raw.get("parentSpanId", raw.get("parent_id", raw.get("parent_span_id")))) or None
    try:
        start = _time_ns(raw.get("startTimeUnixNano", raw.get("start_time")))
    except (TypeError, ValueError, OverflowError):
        problems.append(ImportProblem(where=where, message="unreadable start time; ordered by position in the file"))
        start = 0
    attrs = _attributes(raw.get("attributes"), where, problems)
    status = raw.get("status") if isinstance(raw.get("status"), dict) else {}
    code = status.get("code", status.get("status_code"))
    error = None
    if code in (2, "2", "ERROR", "STATUS_CODE_ERROR") or attrs.get("error.type"):
        error = str(status.get("message") or status.get("description") or attrs.get("error.type") or "error")
    return Span(
        where=where,
        trace_id=trace_id or "unknown",
        span_id=span_id,
        parent_id=parent,
        name=name,
        start=start,
        order=order,
        attributes=attrs,
        error=error,
    )


def spans_from_documents(docs: Iterable[Any], source: str) -> tuple[list[Span], list[ImportProblem]]:
    """Every span in the documents, normalised, with the problems met (never raises)."""
    spans: list[Span] = []
    problems: list[ImportProblem] = []

    def add(raw: Any, where: str) -> None:
        s = _span(raw, where, len(spans), problems)
        if s is not None:
            spans.append(s)

    def items(x: Any, where: str) -> list[Any]:
        if isinstance(x, list):
            return x
        if x is not None:
            problems.append(ImportProblem(where=where, message="expected a JSON list here"))
        return []

    for d, doc in enumerate(docs):
        if isinstance(doc, dict) and "resourceSpans" in doc:
            at = f"{source}: document {d + 1} resourceSpans"
            for r, rs in enumerate(items(doc["resourceSpans"], at)):
                scopes = rs.get("scopeSpans", rs.get("instrumentationLibrarySpans")) if isinstance(rs, dict) else None
                for s, ss in enumerate(items(scopes, f"{at}[{r}].scopeSpans")):
                    spans_at = f"{at}[{r}].scopeSpans[{s}].spans"
                    for i, raw in enumerate(items(ss.get("spans") if isinstance(ss, dict) else None, spans_at)):
                        add(raw, f"{spans_at}[{i}]")
        elif isinstance(doc, dict) and isinstance(doc.get("spans"), list):
            for i, raw in enumerate(doc["spans"]):
                add(raw, f"{source}: document {d + 1} spans[{i}]")
        elif isinstance(doc, list):
            for i, raw in enumerate(doc):
                add(raw, f"{source}: document {d + 1} [{i}]")
        else:
            add(doc, f"{source}: document {d + 1}")
    return spans, problems


# --------------------------------------------------------------------------- spans -> runs


def _json_value(value: Any) -> tuple[Any, bool]:
    """``value`` decoded when it is a JSON string (else as is), and whether decoding failed."""
    if not isinstance(value, str):
        return value, False
    text = value.strip()
    if not text or text[0] not in '{["' and text not in ("true", "false", "null") and not _numberish(text):
        return value, False
    try:
        return json.loads(text), False
    except ValueError:
        return value, text[0] in "{["


def _numberish(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _operation(s: Span) -> str:
    op = s.attributes.get("gen_ai.operation.name")
    if isinstance(op, str) and op:
        return op
    kind = s.attributes.get("openinference.span.kind")
    if isinstance(kind, str):
        return {"TOOL": "execute_tool", "LLM": "chat", "AGENT": "invoke_agent"}.get(kind.upper(), kind.lower())
    if s.name.startswith("execute_tool"):
        return "execute_tool"
    return ""


def _agent(s: Span, by_id: dict[str, Span]) -> str | None:
    seen: set[str] = set()
    cur: Span | None = s
    while cur is not None and cur.span_id not in seen:
        seen.add(cur.span_id)
        for key in AGENT_NAME_KEYS:
            v = cur.attributes.get(key)
            if isinstance(v, str) and v:
                return v
        if _operation(cur) == "invoke_agent" and cur is not s:
            rest = cur.name.split(" ", 1)
            if len(rest) == 2 and rest[0] == "invoke_agent" and rest[1]:
                return rest[1]
        cur = by_id.get(cur.parent_id) if cur.parent_id else None
    return None


def _messages(s: Span, agent: str | None, problems: list[ImportProblem]) -> list[ObservedMessage]:
    out: list[ObservedMessage] = []
    raw = s.attributes.get("gen_ai.output.messages")
    if raw is not None:
        value, bad = _json_value(raw)
        if bad or not isinstance(value, list):
            problems.append(
                ImportProblem(
                    where=f"{s.where} ({s.name})", message="gen_ai.output.messages is not a JSON list of messages"
                )
            )
        else:
            for m in value:
                if not isinstance(m, dict):
                    continue
                parts = m.get("parts") if isinstance(m.get("parts"), list) else []
                text = "".join(
                    str(p.get("content", "")) for p in parts if isinstance(p, dict) and p.get("type") == "text"
                )
                if text:
                    out.append(ObservedMessage(role=str(m.get("role") or "assistant"), content=text, agent=agent))
    i = 0
    while (
        f"llm.output_messages.{i}.message.role" in s.attributes
        or f"llm.output_messages.{i}.message.content" in s.attributes
    ):
        content = s.attributes.get(f"llm.output_messages.{i}.message.content")
        if isinstance(content, str) and content:
            role = s.attributes.get(f"llm.output_messages.{i}.message.role") or "assistant"
            out.append(ObservedMessage(role=str(role), content=content, agent=agent))
        i += 1
    return out


def _tool_call(s: Span, index: int, agent: str | None, problems: list[ImportProblem]) -> ObservedCall:
    a = s.attributes
    where = f"{s.where} ({s.name})"
    tool = a.get("gen_ai.tool.name") or a.get("tool.name")
    if not isinstance(tool, str) or not tool:
        rest = s.name.split(" ", 1)
        tool = rest[1] if len(rest) == 2 and rest[0] == "execute_tool" else ""
        if not tool:
            problems.append(
                ImportProblem(where=where, message="tool span names no tool (gen_ai.tool.name / tool.name)")
            )
            tool = "<unknown>"
    raw_args = next((a[k] for k in ("gen_ai.tool.call.arguments", "input.value", "tool.parameters") if k in a), None)
    args, bad = _json_value(raw_args)
    if raw_args is not None and (bad or not isinstance(args, dict)):
        problems.append(
            ImportProblem(where=where, message="tool call arguments are not a JSON object; recorded under '_raw'")
        )
        args = {"_raw": raw_args if isinstance(raw_args, str) else json.dumps(raw_args, sort_keys=True, default=str)}
    raw_result = next((a[k] for k in ("gen_ai.tool.call.result", "output.value") if k in a), None)
    result, bad = _json_value(raw_result)
    if bad:
        problems.append(
            ImportProblem(where=where, message="tool call result looks like JSON but does not parse; kept as text")
        )
    call_id = a.get("gen_ai.tool.call.id") or a.get("tool_call.id")
    return ObservedCall(
        index=index,
        tool=tool,
        agent=agent,
        arguments=args or {},
        result=result,
        status="error" if s.error else "ok",
        error=s.error,
        call_id=str(call_id) if call_id is not None else None,
        span_id=s.span_id,
    )


def _final_answer(spans: list[Span], messages: list[ObservedMessage]) -> Any:
    roots = [s for s in spans if _operation(s) in ("invoke_agent", "chain", "invoke_workflow")]
    for s in sorted(roots, key=lambda x: (x.parent_id is not None, -x.start, x.order)):
        raw = s.attributes.get("output.value")
        if raw is None:
            raw = s.attributes.get("groundeval.final_answer")
        if raw is not None:
            return _json_value(raw)[0]
    for s in spans:
        if "groundeval.final_answer" in s.attributes:
            return _json_value(s.attributes["groundeval.final_answer"])[0]
    assistant = [m for m in messages if m.role == "assistant"]
    return assistant[-1].content if assistant else None


def runs_from_spans(spans: list[Span], problems: list[ImportProblem] | None = None) -> list[ObservedRun]:
    """One :class:`ObservedRun` per trace id, in order of the traces' first span."""
    by_trace: dict[str, list[Span]] = {}
    for s in spans:
        by_trace.setdefault(s.trace_id, []).append(s)
    shared = list(problems or [])
    runs = []
    for trace_id, group in by_trace.items():
        group.sort(key=lambda s: (s.start, s.order))
        by_id = {s.span_id: s for s in group}
        probs = list(shared)
        calls: list[ObservedCall] = []
        messages: list[ObservedMessage] = []
        agents: list[str] = []
        end_state = None
        for s in group:
            if s.parent_id and s.parent_id not in by_id:
                probs.append(
                    ImportProblem(
                        where=f"{s.where} ({s.name})", message=f"parent span {s.parent_id} is not in the file"
                    )
                )
            op = _operation(s)
            agent = _agent(s, by_id)
            if agent and agent not in agents and op in TOOL_OPERATIONS | LLM_OPERATIONS | {"invoke_agent"}:
                agents.append(agent)
            if op in TOOL_OPERATIONS:
                calls.append(_tool_call(s, len(calls), agent, probs))
            elif op in LLM_OPERATIONS:
                messages.extend(_messages(s, agent, probs))
            if "groundeval.end_state" in s.attributes:
                value, bad = _json_value(s.attributes["groundeval.end_state"])
                if bad or not isinstance(value, dict):
                    probs.append(
                        ImportProblem(
                            where=f"{s.where} ({s.name})", message="groundeval.end_state is not a JSON object"
                        )
                    )
                else:
                    end_state = value
        if not calls:
            probs.append(
                ImportProblem(
                    where=group[0].where.split(":")[0],
                    message=f"trace {trace_id} has no tool "
                    "call spans (gen_ai.operation.name = execute_tool, or openinference.span.kind "
                    "= TOOL)",
                )
            )
        runs.append(
            ObservedRun(
                run_id=trace_id,
                source="otel",
                agents=agents,
                calls=calls,
                messages=messages,
                final_answer=_final_answer(group, messages),
                end_state=end_state,
                problems=probs,
            )
        )
    return runs


def runs_from_documents(docs: list[Any], source: str) -> list[ObservedRun]:
    spans, problems = spans_from_documents(docs, source)
    if not spans:
        return [
            ObservedRun(
                run_id="empty",
                source="otel",
                problems=[*problems, ImportProblem(where=source, message="no spans found")],
            )
        ]
    return runs_from_spans(spans, problems)
