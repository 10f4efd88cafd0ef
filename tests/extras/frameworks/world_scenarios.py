"""World episodes every framework plays against the scripted model, and how their traces are judged.

A scenario is one task of the test world ``tests/worlds/shop`` and what the model does in it, in
order: calls to world tools (arguments an object, or raw text sent as it is), ``say_to_user``
calls, and final outputs (``FINAL``: the framework's answer, which ``converse`` says to the user).
Played through a framework, the episode must leave the trace the same steps leave through the
Python API (``WorldEpisode.call`` / ``WorldEpisode.say``), and get the same verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_server import Turn, call, say

from groundeval.worlds.episode import WorldEpisode
from groundeval.worlds.model import STOP
from groundeval.worlds.verdict import verdict

SHOP = Path(__file__).resolve().parents[2] / "worlds" / "shop"
SAY = "say_to_user"
FINAL = "final"


@dataclass(frozen=True)
class WorldScenario:
    task: str
    steps: list[tuple[str, Any]]
    failure_class: str
    invalid: tuple[tuple[str, Any], ...] = ()  # the invalid calls the trace must hold, as recorded

    def script(self) -> list[Turn]:
        """What the model sends, tool calls through the request's ``tools`` (native tool calling)."""
        return [say(arg) if name == FINAL else call(name, arg) for name, arg in self.steps]

    def react_script(self) -> list[Turn]:
        """The same as ReAct text (CrewAI): ``Action:`` / ``Action Input:``, ``Final Answer:``."""
        return [
            say(f"Thought: I now know the final answer\nFinal Answer: {arg}")
            if name == FINAL
            else say(
                f"Thought: I call {name}.\nAction: {name}\nAction Input: {arg if isinstance(arg, str) else json.dumps(arg)}"
            )
            for name, arg in self.steps
        ]

    @property
    def tool_calls(self) -> int:
        return sum(1 for name, _ in self.steps if name != FINAL)


def talks_through_tool() -> WorldScenario:
    """A refund with confirmation, every word to the user through ``say_to_user``."""
    refund = {"order_id": "O-1001", "reason": "damaged"}
    return WorldScenario(
        "refund-damaged",
        [
            (SAY, {"text": "Could you tell me your order id and the reason?"}),
            ("get_order", {"order_id": "O-1001"}),
            (
                SAY,
                {
                    "text": "I can refund order O-1001 (reason: damaged). Shall I proceed?",
                    "confirm": {"tool": "refund_order", "arguments": refund},
                },
            ),
            ("refund_order", refund),
            (SAY, {"text": "Order O-1001 is refunded. Is there anything else I can help with?", "done": True}),
            (FINAL, "Goodbye."),  # after the user left: never said
        ],
        "completed",
    )


def final_output() -> WorldScenario:
    """A cancellation where the framework's final output is each message to the user."""
    return WorldScenario(
        "cancel-pending",
        [
            (FINAL, "Could you tell me your order id?"),
            ("get_order", {"order_id": "O-1002"}),
            (FINAL, "I can cancel your order O-1002. Shall I proceed?"),
            ("cancel_order", {"order_id": "O-1002"}),
            (FINAL, "Order O-1002 is cancelled. Is there anything else I can help with?"),
        ],
        "completed",
    )


def invalid_calls() -> WorldScenario:
    """An unknown tool name and arguments that are not JSON, then the right read and answer."""
    return WorldScenario(
        "status-only",
        [
            (SAY, {"text": "Could you tell me your order id?"}),
            ("track_parcel", {"order_id": "O-1003"}),
            ("get_order", '{"order_id": "O-10'),
            ("get_order", {"order_id": "O-1003"}),
            (SAY, {"text": "Order O-1003 is shipped. Is there anything else I can help with?", "done": True}),
            (FINAL, "Goodbye."),
        ],
        "policy_breach",
        invalid=(("track_parcel", {"order_id": "O-1003"}), ("get_order", {"_": '{"order_id": "O-10'})),
    )


def not_objects() -> WorldScenario:
    """Argument texts that are JSON but not an object (a list, null), then the right read and answer."""
    return WorldScenario(
        "status-only",
        [
            (SAY, {"text": "Could you tell me your order id?"}),
            ("get_order", '["O-1003"]'),
            ("get_order", "null"),
            ("get_order", {"order_id": "O-1003"}),
            (SAY, {"text": "Order O-1003 is shipped. Is there anything else I can help with?", "done": True}),
            (FINAL, "Goodbye."),
        ],
        "policy_breach",
        invalid=(("get_order", {"_": ["O-1003"]}), ("get_order", {})),
    )


SCENARIOS = [talks_through_tool, final_output, invalid_calls]


def _as_sent(arg: Any) -> Any:
    """What the model sent, as the Python API takes it: a JSON text decoded, any other text as it is."""
    if not isinstance(arg, str):
        return arg
    try:
        return json.loads(arg)
    except ValueError:
        return arg


def direct_trace(world, scenario: WorldScenario):
    """The same steps through the Python API (a final output is said unless the user has left)."""
    ep = WorldEpisode(world, world.task(scenario.task), agent="direct")
    for name, arg in scenario.steps:
        if name == FINAL:
            if not ep.done:
                ep.say(arg)
        elif name == SAY:
            ep.say(arg["text"], confirm=arg.get("confirm"), done=arg.get("done", False))
        else:
            ep.call(name, _as_sent(arg))
    return ep.finish()


def assert_same_as_direct(world, scenario: WorldScenario, trace) -> None:
    """The framework's episode is the Python API's, call for call and message for message, and
    gets the same verdict."""
    assert trace.error is None, trace.error
    direct = direct_trace(world, scenario)
    assert trace.model_dump(exclude={"agent"}) == direct.model_dump(exclude={"agent"})
    assert trace.ended_by == "user_stop" and STOP in trace.messages[-1].text
    task = world.task(scenario.task)
    framework_verdict, direct_verdict = verdict(world, task, trace), verdict(world, task, direct)
    assert framework_verdict.model_dump(exclude={"agent"}) == direct_verdict.model_dump(exclude={"agent"})
    assert framework_verdict.failure_class == scenario.failure_class
    if scenario.failure_class == "completed":
        assert framework_verdict.reward == 1.0
    assert tuple((c.tool, c.arguments) for c in trace.calls if c.status == "invalid") == scenario.invalid
