"""The task contract: what an agent using its own tools must and must not do, in YAML.

It mirrors the three tracks for tools groundeval does not own: each role may call only its
tools (Perspective: stay in your lane), a decision call must come after the checks it
depends on (Silence: check before you claim), and a decision's fields must rest on a result
the run actually obtained (Counterfactual: the evidence must support the decision). Write
tools are first-class: how often they may run, which end state the run must leave (compared
by the SHA-256 of canonical JSON) and which writes are forbidden.

A contract drafted from observation carries ``reviewed: false`` and what was inferred; it
is scored only once a person has reviewed it (or with an explicit override).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from ..models import StrictModel

__all__ = [
    "ArgRule",
    "Decision",
    "EndState",
    "Evidence",
    "Handoff",
    "Inference",
    "OrderRule",
    "Precondition",
    "Role",
    "TaskContract",
    "ToolSpec",
    "Weights",
]

JsonType = Literal["string", "number", "integer", "boolean", "object", "array", "null"]
Relation = Literal["eq", "ne", "le", "lt", "ge", "gt", "in", "contains"]


class ArgRule(StrictModel):
    """A constraint on one argument. ``same_as`` (preconditions only) names an argument of the
    decision call whose value this one must equal."""

    required: bool = False
    type: JsonType | None = None
    equals: Any = None
    one_of: list[Any] | None = None
    pattern: str | None = None
    min: float | None = None
    max: float | None = None
    same_as: str | None = None


class ToolSpec(StrictModel):
    description: str = ""
    write: bool = Field(False, description="The tool changes records (a side effect).")
    arguments: dict[str, ArgRule] = Field(default_factory=dict)
    max_calls: int | None = Field(None, ge=0, description="At most this many successful calls per run.")
    once_per: list[str] | None = Field(
        None,
        description="At most one successful call per value of these arguments (a refund issued twice for one order).",
    )


class Role(StrictModel):
    agents: list[str] = Field(
        default_factory=list, description="Agent names acting in this role (default: the role's own name)."
    )
    tools: list[str] = Field(default_factory=list)


class Handoff(StrictModel):
    model_config = StrictModel.model_config | {"populate_by_name": True}

    from_: str = Field(alias="from")
    to: str


class Precondition(StrictModel):
    tool: str
    arguments: dict[str, ArgRule] = Field(default_factory=dict)
    status: Literal["ok", "any"] = "ok"


class Evidence(StrictModel):
    """The decision must rest on the latest earlier successful call of ``from`` (matching
    ``match``): its result at ``path`` must relate to the decision's ``field`` argument
    (``relation``) or equal ``equals``."""

    model_config = StrictModel.model_config | {"populate_by_name": True}

    from_: str = Field(alias="from")
    match: dict[str, ArgRule] = Field(default_factory=dict)
    path: str
    field: str | None = None
    relation: Relation = "eq"
    equals: Any = None

    @model_validator(mode="after")
    def _one_target(self) -> Evidence:
        if self.field is None and "equals" not in self.model_fields_set:
            raise ValueError("evidence needs a decision 'field' to compare with, or 'equals'")
        return self


class Decision(StrictModel):
    tool: str
    required: bool = True
    preconditions: list[Precondition] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)


class OrderRule(StrictModel):
    before: str
    after: str


class EndState(StrictModel):
    """The expected result of the run's writes. ``writes``: the successful write calls
    (tool and arguments, in order); ``records``: the records the harness reported
    (``end_state`` of the run). Each is compared by the SHA-256 of canonical JSON."""

    writes: list[dict[str, Any]] | None = None
    records: dict[str, Any] | None = None


class Inference(StrictModel):
    """One thing a draft inferred from observation, and how sure it is."""

    item: str
    confidence: Literal["high", "medium", "low"]
    why: str


class Weights(StrictModel):
    answer: float = Field(0.5, ge=0)
    trajectory: float = Field(0.5, ge=0)


class TaskContract(StrictModel):
    kind: Literal["task-contract"] = "task-contract"
    version: Literal[1] = 1
    task: str
    description: str = ""
    reviewed: bool = Field(
        False,
        description="A person has reviewed this contract; unreviewed contracts are not "
        "scored unless explicitly allowed.",
    )
    roles: dict[str, Role]
    tools: dict[str, ToolSpec] = Field(default_factory=dict)
    forbidden_tools: list[str] = Field(default_factory=list)
    handoffs: list[Handoff] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    order: list[OrderRule] = Field(default_factory=list)
    end_state: EndState | None = None
    weights: Weights = Field(default_factory=Weights)
    inferred: list[Inference] = Field(
        default_factory=list, description="What a draft inferred (kept after review as a record)."
    )

    @model_validator(mode="after")
    def _names_resolve(self) -> TaskContract:
        if not self.roles:
            raise ValueError("a contract names at least one role")
        known = set(self.tools) | {t for r in self.roles.values() for t in r.tools}
        for d in self.decisions:
            if d.tool not in known:
                raise ValueError(f"decision tool {d.tool!r} is not a tool of any role")
        for h in self.handoffs:
            for r in (h.from_, h.to):
                if r not in self.roles:
                    raise ValueError(f"handoff names unknown role {r!r}")
        return self

    def role_of(self, agent: str | None) -> str | None:
        """The role an agent acts in: listed in ``agents``, named like the role, or the only role."""
        for name, role in self.roles.items():
            if agent is not None and (agent in role.agents or (not role.agents and agent == name)):
                return name
        if len(self.roles) == 1 and (agent is None or not next(iter(self.roles.values())).agents):
            return next(iter(self.roles))
        return None
