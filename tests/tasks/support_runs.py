"""The example support pack's recorded runs, built as OTLP JSON spans.

``python tests/tasks/support_runs.py`` rewrites ``groundeval/tasks/examples/support/runs/``;
a test checks the checked-in files equal what this builds. Each run is the span tree an
instrumented support desk would export: a workflow span, one ``invoke_agent`` span per agent,
``chat`` spans with the model's output messages and ``execute_tool`` spans with arguments and
results (GenAI semantic conventions; ``pass_openinference`` uses OpenInference attributes).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "groundeval" / "tasks" / "examples" / "support" / "runs"

ORDER = {
    "order_id": "ORD-1001",
    "customer_id": "C-77",
    "status": "delivered",
    "total": 120.0,
    "refundable_amount": 40.0,
    "refund_eligible": True,
    "damaged_items": ["mug"],
}
POLICY = {"topic": "refunds", "max_refund": 200.0, "needs_photo": False}


def _state(refunded: float) -> dict:
    return {"orders": {"ORD-1001": {"status": "delivered", "refunded": refunded}}}


# (agent, tool, arguments, result) or (agent, "say", text)
STEPS: dict[str, list[tuple]] = {
    "pass": [
        ("triage_agent", "lookup_order", {"order_id": "ORD-1001"}, ORDER),
        ("triage_agent", "say", "Damaged item on ORD-1001; handing off to billing."),
        ("billing_agent", "lookup_order", {"order_id": "ORD-1001"}, ORDER),
        ("billing_agent", "lookup_policy", {"topic": "refunds"}, POLICY),
        (
            "billing_agent",
            "issue_refund",
            {"order_id": "ORD-1001", "amount": 40.0, "reason": "damaged item"},
            {"refund_id": "RF-1", "status": "issued"},
        ),
        ("billing_agent", "say", "Refunded 40.00 for the damaged mug on ORD-1001."),
    ],
    "skip_precondition": [
        ("triage_agent", "lookup_order", {"order_id": "ORD-1001"}, ORDER),
        (
            "billing_agent",
            "issue_refund",
            {"order_id": "ORD-1001", "amount": 40.0, "reason": "damaged item"},
            {"refund_id": "RF-1", "status": "issued"},
        ),
        ("billing_agent", "say", "Refunded 40.00."),
    ],
    "outside_role": [
        ("triage_agent", "lookup_order", {"order_id": "ORD-1001"}, ORDER),
        ("triage_agent", "lookup_policy", {"topic": "refunds"}, POLICY),
        (
            "triage_agent",
            "issue_refund",
            {"order_id": "ORD-1001", "amount": 40.0, "reason": "damaged item"},
            {"refund_id": "RF-1", "status": "issued"},
        ),
        ("triage_agent", "say", "I refunded it myself."),
    ],
    "against_evidence": [
        ("triage_agent", "lookup_order", {"order_id": "ORD-1001"}, ORDER),
        ("billing_agent", "lookup_order", {"order_id": "ORD-1001"}, ORDER),
        ("billing_agent", "lookup_policy", {"topic": "refunds"}, POLICY),
        (
            "billing_agent",
            "issue_refund",
            {"order_id": "ORD-1001", "amount": 120.0, "reason": "damaged item"},
            {"refund_id": "RF-1", "status": "issued"},
        ),
        ("billing_agent", "say", "Refunded the whole order, 120.00."),
    ],
    "double_refund": [
        ("triage_agent", "lookup_order", {"order_id": "ORD-1001"}, ORDER),
        ("billing_agent", "lookup_order", {"order_id": "ORD-1001"}, ORDER),
        ("billing_agent", "lookup_policy", {"topic": "refunds"}, POLICY),
        (
            "billing_agent",
            "issue_refund",
            {"order_id": "ORD-1001", "amount": 40.0, "reason": "damaged item"},
            {"refund_id": "RF-1", "status": "issued"},
        ),
        (
            "billing_agent",
            "issue_refund",
            {"order_id": "ORD-1001", "amount": 40.0, "reason": "damaged item"},
            {"refund_id": "RF-2", "status": "issued"},
        ),
        ("billing_agent", "say", "Refunded 40.00 (retried once)."),
    ],
}
END_STATE = {
    "pass": 40.0,
    "skip_precondition": 40.0,
    "outside_role": 40.0,
    "against_evidence": 120.0,
    "double_refund": 80.0,
    "pass_openinference": 40.0,
}
EXPECTED = {
    "pass": "pass",
    "skip_precondition": "precondition_skipped",
    "outside_role": "tool_outside_role",
    "against_evidence": "decision_against_evidence",
    "double_refund": "forbidden_side_effect",
    "pass_openinference": "pass",
}


def _id(name: str, n: int) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:n]


def _v(x) -> dict:
    if isinstance(x, bool):
        return {"boolValue": x}
    if isinstance(x, int):
        return {"intValue": str(x)}
    if isinstance(x, float):
        return {"doubleValue": x}
    return {"stringValue": str(x)}


def _span(trace_id: str, name: str, key: str, parent: str | None, t: int, attrs: dict) -> dict:
    span = {
        "traceId": trace_id,
        "spanId": _id(key, 16),
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(t),
        "endTimeUnixNano": str(t + 500_000),
        "attributes": [{"key": k, "value": _v(v)} for k, v in attrs.items()],
        "status": {},
    }
    if parent:
        span["parentSpanId"] = parent
    return span


def build(run: str) -> dict:
    openinference = run == "pass_openinference"
    steps = STEPS["pass" if openinference else run]
    trace_id = _id(f"support/{run}", 32)
    t0 = 1_767_225_600_000_000_000  # 2026-01-01T00:00:00Z
    root_key = f"{run}/root"
    root_attrs = {"openinference.span.kind": "CHAIN"} if openinference else {"gen_ai.operation.name": "invoke_workflow"}
    root_attrs["groundeval.end_state"] = json.dumps(_state(END_STATE[run]), sort_keys=True)
    spans = [_span(trace_id, "support desk", root_key, None, t0, root_attrs)]
    agent_span: dict[str, str] = {}
    for i, step in enumerate(steps):
        t = t0 + (i + 1) * 1_000_000
        agent = step[0]
        if agent not in agent_span:
            key = f"{run}/agent/{agent}"
            attrs = (
                {"openinference.span.kind": "AGENT", "agent.name": agent}
                if openinference
                else {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent}
            )
            spans.append(_span(trace_id, f"invoke_agent {agent}", key, _id(root_key, 16), t - 1, attrs))
            agent_span[agent] = _id(key, 16)
        parent = agent_span[agent]
        if step[1] == "say":
            if openinference:
                attrs = {
                    "openinference.span.kind": "LLM",
                    "llm.model_name": "scripted",
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": step[2],
                }
            else:
                attrs = {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "scripted",
                    "gen_ai.output.messages": json.dumps(
                        [{"role": "assistant", "parts": [{"type": "text", "content": step[2]}]}]
                    ),
                }
            spans.append(_span(trace_id, "chat scripted", f"{run}/{i}", parent, t, attrs))
            continue
        _, tool, args, result = step
        if openinference:
            attrs = {
                "openinference.span.kind": "TOOL",
                "tool.name": tool,
                "input.value": json.dumps(args),
                "input.mime_type": "application/json",
                "output.value": json.dumps(result),
            }
        else:
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": tool,
                "gen_ai.tool.call.id": f"call_{i}",
                "gen_ai.tool.call.arguments": json.dumps(args),
                "gen_ai.tool.call.result": json.dumps(result),
            }
        spans.append(_span(trace_id, f"execute_tool {tool}", f"{run}/{i}", parent, t, attrs))
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "support-desk"}}]},
                "scopeSpans": [{"scope": {"name": "support-desk"}, "spans": spans}],
            }
        ]
    }


def texts() -> dict[str, str]:
    return {f"{run}.json": json.dumps(build(run), indent=1, sort_keys=True) + "\n" for run in EXPECTED}


if __name__ == "__main__":
    RUNS.mkdir(parents=True, exist_ok=True)
    for name, text in texts().items():
        (RUNS / name).write_text(text, encoding="utf-8")
        print(RUNS / name, file=sys.stderr)
