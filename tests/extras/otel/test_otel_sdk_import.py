"""Spans recorded by the real OpenTelemetry SDK import into runs that score as expected.

A small support desk (an in-memory order store, the tools that read and change it) is driven
by scripted agents and instrumented the way the GenAI semantic conventions describe:
``invoke_agent`` spans per agent, ``execute_tool`` spans with ``gen_ai.tool.*`` attributes,
``chat`` spans with output messages, and the store's final state as ``groundeval.end_state``.
The spans come out of the SDK's in-memory exporter and are written in two forms a user would
have on disk: the SDK's own span JSON (``ReadableSpan.to_json``) and OTLP JSON (the OTLP
protobuf encoder's request as protobuf JSON). SDK imports are inside the tests so the
directory's conftest can skip it with a reason when the extra is missing."""

from __future__ import annotations

import copy
import json

import pytest

from groundeval.cli.main import main
from groundeval.observe import read_runs
from groundeval.tasks import example, load_contract, score_run

PACK = example("support")
ORDERS = {
    "ORD-1001": {
        "order_id": "ORD-1001",
        "customer_id": "C-77",
        "status": "delivered",
        "total": 120.0,
        "refundable_amount": 40.0,
        "refund_eligible": True,
        "damaged_items": ["mug"],
    }
}
POLICY = {"refunds": {"topic": "refunds", "max_refund": 200.0, "needs_photo": False}}

T, B = "triage_agent", "billing_agent"
LOOKUP = ("lookup_order", {"order_id": "ORD-1001"})
POLICY_CALL = ("lookup_policy", {"topic": "refunds"})
REFUND = ("issue_refund", {"order_id": "ORD-1001", "amount": 40.0, "reason": "damaged item"})
SCRIPTS = {
    "pass": [(T, [LOOKUP]), (B, [LOOKUP, POLICY_CALL, REFUND])],
    "skip_precondition": [(T, [LOOKUP]), (B, [REFUND])],
    "outside_role": [(T, [LOOKUP, POLICY_CALL, REFUND])],
    "against_evidence": [(T, [LOOKUP]), (B, [LOOKUP, POLICY_CALL, ("issue_refund", {**REFUND[1], "amount": 120.0})])],
    "double_refund": [(T, [LOOKUP]), (B, [LOOKUP, POLICY_CALL, REFUND, REFUND])],
}
EXPECTED = {
    "pass": "pass",
    "skip_precondition": "precondition_skipped",
    "outside_role": "tool_outside_role",
    "against_evidence": "decision_against_evidence",
    "double_refund": "forbidden_side_effect",
}


class Desk:
    """The support desk's own tools over an in-memory store (what the agent really changes)."""

    def __init__(self) -> None:
        self.orders = copy.deepcopy(ORDERS)
        self.refunded: dict[str, float] = {}

    def call(self, tool: str, args: dict):
        if tool == "lookup_order":
            return self.orders[args["order_id"]]
        if tool == "lookup_policy":
            return POLICY[args["topic"]]
        if tool == "issue_refund":
            self.refunded[args["order_id"]] = self.refunded.get(args["order_id"], 0.0) + args["amount"]
            return {"refund_id": f"RF-{len(self.refunded)}", "status": "issued"}
        raise KeyError(tool)

    def state(self) -> dict:
        return {
            "orders": {
                k: {"status": o["status"], "refunded": self.refunded.get(k, 0.0)} for k, o in self.orders.items()
            }
        }


def record(script) -> list:
    """Run a script under a real TracerProvider; the finished spans from the in-memory exporter."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("support-desk")
    desk = Desk()
    with tracer.start_as_current_span("support desk", attributes={"gen_ai.operation.name": "invoke_workflow"}) as root:
        for agent, calls in script:
            with tracer.start_as_current_span(
                f"invoke_agent {agent}",
                attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent},
            ):
                for i, (tool, args) in enumerate(calls):
                    with tracer.start_as_current_span(
                        f"execute_tool {tool}",
                        attributes={
                            "gen_ai.operation.name": "execute_tool",
                            "gen_ai.tool.name": tool,
                            "gen_ai.tool.call.id": f"{agent}-{i}",
                            "gen_ai.tool.type": "function",
                            "gen_ai.tool.call.arguments": json.dumps(args),
                        },
                    ) as span:
                        span.set_attribute("gen_ai.tool.call.result", json.dumps(desk.call(tool, args)))
                with tracer.start_as_current_span(
                    "chat scripted", attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted"}
                ) as chat:
                    chat.set_attribute(
                        "gen_ai.output.messages",
                        json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": f"{agent} done"}]}]),
                    )
        root.set_attribute("groundeval.end_state", json.dumps(desk.state()))
    provider.shutdown()
    return list(exporter.get_finished_spans())


def sdk_json(spans) -> str:
    return "[" + ",\n".join(s.to_json() for s in spans) + "]"


def otlp_json(spans) -> str:
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return MessageToJson(encode_spans(spans))


@pytest.mark.parametrize("name", sorted(SCRIPTS))
@pytest.mark.parametrize("form", ["sdk", "otlp"])
def test_sdk_spans_import_and_score_as_expected(name, form, tmp_path):
    spans = record(SCRIPTS[name])
    path = tmp_path / f"{name}.json"
    path.write_text(sdk_json(spans) if form == "sdk" else otlp_json(spans))
    (run,) = read_runs(path)
    assert run.problems == [] and run.run_id == name
    want = [(agent, tool, args) for agent, calls in SCRIPTS[name] for tool, args in calls]
    assert [(c.agent, c.tool, c.arguments) for c in run.calls] == want
    assert all(isinstance(c.result, dict) for c in run.calls)
    assert run.final_answer == SCRIPTS[name][-1][0] + " done"
    s = score_run(load_contract(PACK), run)
    assert s.failure_class == EXPECTED[name], s.violations


def test_both_forms_give_the_same_run_and_the_cli_scores_them(tmp_path, capsys):
    spans = record(SCRIPTS["pass"])
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "sdk.json").write_text(sdk_json(spans))
    (tmp_path / "a" / "otlp.json").write_text(otlp_json(spans))
    a, b = (read_runs(tmp_path / "a" / f)[0] for f in ("sdk.json", "otlp.json"))
    keep = {
        "calls": {"__all__": {"index", "tool", "agent", "arguments", "result", "status", "call_id"}},
        "agents": True,
        "final_answer": True,
        "end_state": True,
        "messages": True,
    }
    assert a.model_dump(include=keep) == b.model_dump(include=keep)
    main(["tasks", "score", "support", str(tmp_path / "a")])  # exit 0: returns without SystemExit
    assert capsys.readouterr().out.count(" pass ") == 2


def test_an_error_span_is_an_errored_call(tmp_path):
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import Status, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span(
        "invoke_agent billing_agent", attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": B}
    ):
        with tracer.start_as_current_span(
            "execute_tool issue_refund",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "issue_refund",
                "gen_ai.tool.call.arguments": json.dumps(REFUND[1]),
            },
        ) as span:
            span.set_status(Status(StatusCode.ERROR, "payment gateway down"))
    provider.shutdown()
    (tmp_path / "e.json").write_text(otlp_json(exporter.get_finished_spans()))
    (run,) = read_runs(tmp_path / "e.json")
    assert [(c.status, c.error) for c in run.calls] == [("error", "payment gateway down")]
    assert score_run(load_contract(PACK), run).failure_class == "no_decision"
