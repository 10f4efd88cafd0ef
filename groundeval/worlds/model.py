"""The world contract's file formats: the manifest (``world.yaml``), a task (one line of
``tasks.jsonl``), the trace of one episode and its verdict.

A world is a folder: the state as tables, tools over it (each ``read`` or ``write``, SQL or a
Python callable), the policy the agent is given, policy rules (the task-contract rule set of
:mod:`groundeval.tasks.model`, reused as is) and tasks. Everything an episode does is kept in
its :class:`WorldTrace`; :class:`WorldVerdict` is computed from the world, the task and the
trace alone (``groundeval.worlds.verdict``). See ``docs/worlds.md``.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import Field, field_validator, model_validator

from ..models import StrictModel
from ..tasks.model import Decision, OrderRule, Role, ToolSpec

__all__ = [
    "STOP",
    "Action",
    "ArgSpec",
    "ConfirmRequest",
    "RowChange",
    "StateAdapter",
    "TableDef",
    "TableDiff",
    "ToolDef",
    "UserScript",
    "WorldCall",
    "WorldFlag",
    "WorldManifest",
    "WorldMessage",
    "WorldRules",
    "WorldTask",
    "WorldTrace",
    "WorldVerdict",
]

STOP = "###STOP###"
"""What the user says to end the conversation."""

JsonType = Literal["string", "number", "integer", "boolean", "object", "array"]
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check_name(v: str, what: str) -> str:
    if not _NAME.match(v):
        raise ValueError(f"{what} {v!r} is not a plain name (letters, digits, underscore; not starting with a digit)")
    return v


# --------------------------------------------------------------------------- the manifest


class TableDef(StrictModel):
    source: str = Field(description="File inside the world folder: .jsonl, .json (a list), .csv or .parquet.")
    key: list[str] = Field(min_length=1, description="Columns that identify a row (unique; rows are sorted by them).")
    columns: dict[str, Literal["string", "integer", "number", "boolean", "json"]] = Field(
        default_factory=dict,
        description="JSON tables: column types (default: read from the values; needed for an empty table).",
    )

    @field_validator("key")
    @classmethod
    def _plain(cls, v: list[str]) -> list[str]:
        for k in v:
            _check_name(k, "key column")
        return v


class ArgSpec(StrictModel):
    """One argument of a tool: becomes a property of the tool's JSON Schema."""

    type: JsonType = "string"
    description: str = ""
    required: bool = False
    enum: list[Any] | None = None
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None
    items: dict[str, Any] | None = Field(None, description="JSON Schema of an array's items.")


class ToolDef(StrictModel):
    kind: Literal["read", "write"]
    description: str = ""
    arguments: dict[str, ArgSpec] = Field(default_factory=dict)
    sql: str | list[str] | None = Field(
        None, description="One statement or a list, run in order; arguments are bound as $name parameters."
    )
    python: str | None = Field(
        None,
        description="'module:function' (a module of the world folder, or an importable dotted path); "
        "called as fn(state, **arguments) and returns a JSON-able result; raises WorldToolError for an error result.",
    )
    returns: Literal["one", "many", "none"] = Field(
        "many",
        description="SQL tools: the last statement's rows as one object (no row: an error result 'not found'), "
        "a list, or nothing.",
    )
    expect_rows: int | None = Field(
        None, ge=0, description="SQL writes: rows the write must change; otherwise an error result, state unchanged."
    )
    not_found: str = Field("not found", description="The error result of returns: one when there is no row.")
    tables: list[str] | None = Field(
        None,
        description="Tables a write may change (default: read from its SQL; every table for a Python tool).",
    )
    confirm_phrases: list[str] = Field(
        default_factory=list,
        description="Write tools: more ways a free-text confirmation request may name it ('refund', "
        "'report ... lost'); the tool's humanised name always counts.",
    )

    @model_validator(mode="after")
    def _one_implementation(self) -> ToolDef:
        if (self.sql is None) == (self.python is None):
            raise ValueError("a tool has exactly one of 'sql' or 'python'")
        if isinstance(self.sql, list) and not self.sql:
            raise ValueError("'sql' lists at least one statement")
        if self.expect_rows is not None and (self.kind != "write" or self.sql is None):
            raise ValueError("'expect_rows' applies to SQL write tools only")
        return self

    @property
    def statements(self) -> list[str]:
        if self.sql is None:
            return []
        return [self.sql] if isinstance(self.sql, str) else list(self.sql)

    def json_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (what OpenAI / Anthropic / MCP tool specs carry)."""
        props: dict[str, Any] = {}
        for name in sorted(self.arguments):
            a = self.arguments[name]
            p: dict[str, Any] = {"type": a.type}
            if a.description:
                p["description"] = a.description
            if a.enum is not None:
                p["enum"] = list(a.enum)
            if a.minimum is not None:
                p["minimum"] = a.minimum
            if a.maximum is not None:
                p["maximum"] = a.maximum
            if a.pattern is not None:
                p["pattern"] = a.pattern
            if a.items is not None:
                p["items"] = a.items
            props[name] = p
        return {
            "type": "object",
            "properties": props,
            "required": sorted(n for n, a in self.arguments.items() if a.required),
            "additionalProperties": False,
        }


class WorldRules(StrictModel):
    """The task-contract rule set (``groundeval.tasks.model``) applied to a world's tools.

    ``roles`` default to one role ``agent`` that may call every tool; ``tools`` holds the per-tool
    rules (argument rules, ``max_calls``, ``once_per``; its ``write`` flag is taken from the tool's
    ``kind``)."""

    roles: dict[str, Role] = Field(default_factory=dict)
    tools: dict[str, ToolSpec] = Field(default_factory=dict)
    forbidden_tools: list[str] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    order: list[OrderRule] = Field(default_factory=list)


class StateAdapter(StrictModel):
    adapter: str = Field(description="'module:function' called as fn(folder, manifest, **options) -> WorldState.")
    options: dict[str, Any] = Field(default_factory=dict)


class WorldManifest(StrictModel):
    kind: Literal["world"] = "world"
    version: Literal[1] = 1
    name: str
    description: str = ""
    policy: str = Field("policy.md", description="File holding the agent's instructions (the policy).")
    violation_mode: Literal["refuse", "apply"] = Field(
        "refuse",
        description="A call that breaks a policy rule: refuse = not run, the agent gets an error result; "
        "apply = run and flagged. Either way it is recorded and flagged (counts in v).",
    )
    tables: dict[str, TableDef]
    tools: dict[str, ToolDef]
    state: StateAdapter | None = Field(
        None, description="Build the state with an adapter (another engine's state) instead of DuckDB tables."
    )
    rules: WorldRules = Field(default_factory=WorldRules)
    confirm_before: list[str] = Field(
        default_factory=list, description="Write tools that need the user's explicit yes earlier in the conversation."
    )
    tasks: str = Field("tasks.jsonl", description="File of tasks: .jsonl (one per line) or .yaml (a list).")
    max_steps: int = Field(30, ge=1, description="Default tool-call budget of a task.")

    @field_validator("tables", "tools")
    @classmethod
    def _plain_names(cls, v: dict[str, Any]) -> dict[str, Any]:
        for name in v:
            _check_name(name, "name")
        return v

    @model_validator(mode="after")
    def _names_resolve(self) -> WorldManifest:
        if not self.tables:
            raise ValueError("a world has at least one table")
        known = set(self.tools)
        for name in self.confirm_before:
            if name not in known:
                raise ValueError(f"confirm_before names unknown tool {name!r}")
            if self.tools[name].kind != "write":
                raise ValueError(f"confirm_before names {name!r}, which is not a write tool")
        for name in list(self.rules.tools) + list(self.rules.forbidden_tools):
            if name not in known:
                raise ValueError(f"rules name unknown tool {name!r}")
        for role, r in self.rules.roles.items():
            for name in r.tools:
                if name not in known:
                    raise ValueError(f"role {role!r} names unknown tool {name!r}")
        for d in self.rules.decisions:
            if d.tool not in known:
                raise ValueError(f"decision names unknown tool {d.tool!r}")
        for t in self.tools.values():
            for table in t.tables or []:
                if table not in self.tables:
                    raise ValueError(f"a tool names unknown table {table!r}")
        return self


# --------------------------------------------------------------------------- tasks


class Action(StrictModel):
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    expect_error: bool = Field(
        False,
        description="Gold only: this call must give an error result (a check that fails); if it succeeds, the task is wrong.",
    )


class UserScript(StrictModel):
    """What the simulated user knows and will say."""

    persona: str = ""
    opening: str = Field(min_length=1, description="The user's first message.")
    goal: str | None = Field(None, description="What the user repeats once when not understood (default: opening).")
    facts: dict[str, Any] = Field(default_factory=dict, description="Revealed only when asked for (by key or alias).")
    fact_aliases: dict[str, list[str]] = Field(default_factory=dict)
    confirms: list[str] = Field(default_factory=list, description="Write tools the user says yes to.")
    declines: list[str] = Field(default_factory=list, description="Write tools the user says no to.")

    @model_validator(mode="after")
    def _consistent(self) -> UserScript:
        for k in self.fact_aliases:
            if k not in self.facts:
                raise ValueError(f"fact_aliases names unknown fact {k!r}")
        both = sorted(set(self.confirms) & set(self.declines))
        if both:
            raise ValueError(f"a tool is both confirmed and declined: {', '.join(both)}")
        return self


class WorldTask(StrictModel):
    id: str = Field(min_length=1)
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    user: UserScript
    gold_actions: list[Action] = Field(default_factory=list)
    ordered: list[tuple[str, str]] = Field(
        default_factory=list, description="Pairs (before, after) of tool names the agent must call in that order."
    )
    required_outputs: list[str] = Field(
        default_factory=list, description="Values the agent must tell the user (matched after normalisation)."
    )
    forbidden_tools: list[str] = Field(default_factory=list)
    max_steps: int | None = Field(None, ge=1, description="Tool-call budget (default: the world's).")


# --------------------------------------------------------------------------- the trace


class ConfirmRequest(StrictModel):
    tool: str
    arguments: dict[str, Any] | None = None


class WorldMessage(StrictModel):
    role: Literal["user", "assistant"]
    text: str
    step: int = Field(0, description="Tool calls made before this message.")
    confirm: ConfirmRequest | None = None
    done: bool = False


class WorldFlag(StrictModel):
    cls: str = Field(
        description="unknown_tool, invalid_arguments, unconfirmed_write, or a task-contract failure class "
        "(forbidden_tool, tool_outside_role, precondition_skipped, ...)."
    )
    message: str


class RowChange(StrictModel):
    key: dict[str, Any]
    before: dict[str, Any]
    after: dict[str, Any]


class TableDiff(StrictModel):
    added: list[dict[str, Any]] = Field(default_factory=list)
    removed: list[dict[str, Any]] = Field(default_factory=list)
    changed: list[RowChange] = Field(default_factory=list)


class WorldCall(StrictModel):
    step: int = Field(description="0-based index of the call in the episode.")
    by: Literal["agent", "user"] = Field(
        "agent", description="Who made the call: the agent, or the user with the user's own tools (tau2 telecom)."
    )
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    kind: Literal["read", "write", "unknown"]
    status: Literal["ok", "error", "refused", "invalid", "forbidden"]
    result: Any = None
    error: str | None = None
    flags: list[WorldFlag] = Field(default_factory=list)
    diff: dict[str, TableDiff] = Field(default_factory=dict, description="Rows this call changed, per table.")


class WorldTrace(StrictModel):
    kind: Literal["world-trace"] = "world-trace"
    version: Literal[1] = 1
    world: str
    world_digest: str = Field(description="Digest of the world's initial state.")
    task_id: str
    trial: int = 0
    agent: str
    simulator: str
    messages: list[WorldMessage] = Field(default_factory=list)
    calls: list[WorldCall] = Field(default_factory=list)
    final_digest: str
    ended_by: Literal["user_stop", "agent_done", "max_steps", "error"]
    error: str | None = None
    user_errors: list[str] = Field(default_factory=list)


# --------------------------------------------------------------------------- the verdict


FailureClass = Literal[
    "agent_error",
    "user_error",
    "wrong_end_state",
    "incomplete",
    "forbidden_side_effect",
    "policy_breach",
    "missing_output",
    "completed",
]
FAILURE_CLASSES: tuple[str, ...] = get_args(FailureClass)
"""Every failure class, most severe first: an episode's class is the first of these that applies."""


class WorldVerdict(StrictModel):
    kind: Literal["world-verdict"] = "world-verdict"
    version: Literal[1] = 1
    world: str
    task_id: str
    trial: int = 0
    agent: str
    failure_class: FailureClass
    classes: list[str] = Field(default_factory=list, description="Every class that applies, in order.")
    reward: float = Field(description="0 or 1, as tau2: final state matches the gold replay and every output said.")
    score: float = Field(description="Partial credit: mean of the components (0 for an errored or empty episode).")
    components: dict[str, float]
    violation_rate: float
    penalty: float = Field(description="(1 - v)^2")
    s_adj: float
    state_match: bool
    expected_digest: str
    final_digest: str
    state_diff: dict[str, TableDiff] = Field(
        default_factory=dict, description="Expected (before) vs actual (after) final state, per table."
    )
    missing_actions: list[Action] = Field(default_factory=list, description="Gold writes not among successful calls.")
    extra_writes: list[Action] = Field(default_factory=list, description="Successful writes the gold does not make.")
    order_violations: list[str] = Field(default_factory=list)
    replay_problems: list[str] = Field(
        default_factory=list,
        description="The trace's writes do not replay to its final digest (a forged or corrupted trace: agent_error).",
    )
    missing_outputs: list[str] = Field(default_factory=list)
    user_errors: list[str] = Field(
        default_factory=list,
        description="What the user said that its task does not support, reported whether or not the episode is "
        "classed user_error (it is only when the agent's record was clean up to the first of them).",
    )
    flags: list[dict[str, Any]] = Field(default_factory=list, description="Flagged calls: {step, cls, message}.")
    n_calls: int
    n_flagged: int
    turns: int = Field(description="Assistant messages.")
    efficiency: float = Field(description="(C_T - C_F) / (C_T + C_F); 1 when both are 0.")
    observation_alignment: float = Field(
        description="Share of values the agent stated (ids, numbers) found in tool results or the user's words."
    )
