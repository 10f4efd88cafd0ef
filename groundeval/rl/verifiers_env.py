"""A ``verifiers`` (0.4, ``verifiers.v1``) environment: the gated runtime as its tools,
groundeval's score components as its rubric. Extra ``verifiers``; install it in a venv of
its own (it pins ``mcp==2.0.0``, groundeval's ``mcp`` extra needs ``mcp>=2.3``).

The pieces, all exported for ``verifiers`` to load by id (after ``import groundeval.rl.verifiers_env``, the
id ``groundeval_verifiers`` names both the taskset and the harness):

* :class:`GroundevalTaskset` — one task per question of a pack (``--env.taskset.pack``);
  the prompt is the question's public view and its answer schema;
* :class:`GroundevalToolset` — an MCP tool server per rollout (``python -m`` this module)
  whose tools ``search_artifacts``, ``fetch_artifact`` and ``submit_answer`` are calls of a
  gated runtime :class:`~groundeval.runtime.episode.Episode`; after every call the episode's
  trace is written to the rollout state (``state.ge_trace``). **Every** ``tools/call`` reaches
  the episode as sent — a name it does not have, arguments of the wrong types (the MCP
  layer's own validation is bypassed) — and is recorded as :meth:`Episode.call` records it
  from the Python API (an ``invalid`` call); a client may put the model's raw arguments text
  in the request's ``_meta`` under :data:`ARGUMENTS_META`, so text that is not JSON is
  recorded as the text it was;
* :class:`GroundevalTask` — its reward (weight 1, what trainers optimise) is the RL reward
  ``rl_reward`` of :func:`groundeval.rl.reward.reward` (``v_rl = bad / (bad + 1)``: padding a
  path with harmless calls cannot raise it; the scorer's ``S_adj`` when no call is flagged);
  the metrics (unweighted) are ``s_adj``, ``rl_penalty``, ``s_answer``, ``s_traj``,
  ``s_combined``, ``penalty``, ``violation_rate``, every answer and trajectory component and
  the process score — all read from the recorded trace, the numbers ``groundeval score``
  gives the same trace;
* :class:`GroundevalChatHarness` — a minimal in-process chat loop (OpenAI-compatible
  chat completions through the rollout's interception endpoint, tools over MCP), so a
  rollout needs no program to download (the bundled harnesses install theirs with ``uv``).
  It sends every tool call the model makes to the tool server, by the name and with the
  arguments text the model wrote.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import verifiers.v1 as vf

from .verifiers_common import ARGUMENTS_META, ChatHarness, ChatHarnessConfig, sent_arguments

__all__ = ["ARGUMENTS_META", "GroundevalChatHarness", "GroundevalTask", "GroundevalTaskset", "GroundevalToolset"]

# verifiers loads a plugin by a bare module name (a dotted id is looked up under its own
# packages first, which fails): importing this module makes it loadable as PLUGIN_ID.
PLUGIN_ID = "groundeval_verifiers"
sys.modules.setdefault(PLUGIN_ID, sys.modules[__name__])
INSTRUCTIONS = (
    "Answer the question using only the tools. search_artifacts finds artifacts (metadata only); "
    "fetch_artifact reads one; submit_answer ends the episode with an answer object matching the "
    "answer schema. Cite the artifacts you relied on in evidence_artifacts."
)


class GroundevalData(vf.TaskData):
    """One question of one pack: what the tool server needs to open its episode."""

    pack: str
    question_id: str
    seed: int | None = None
    max_steps: int = 30


class GroundevalState(vf.State):
    """The rollout state the tool server keeps current: the recorded groundeval trace."""

    ge_trace: dict[str, Any] | None = None


class GroundevalToolsetConfig(vf.ToolsetConfig):
    pass


_OPEN: dict[tuple[str, int | None], Any] = {}


def _questions(pack: str, seed: int | None) -> Any:
    """``(store, questions)`` of a pack, loaded once per process: every rollout of a training
    run reads the same read-only store (the scorer and the tool server each hold one)."""
    import groundeval

    key = (str(pack), seed)
    if key not in _OPEN:
        store = groundeval.load(pack)
        _OPEN[key] = (store, groundeval.generate(store, seed=seed))
    return _OPEN[key]


class GroundevalToolset(vf.Toolset[GroundevalToolsetConfig, GroundevalState]):
    """The gated runtime as MCP tools, one episode per rollout."""

    TOOL_PREFIX = None  # the tools keep groundeval's own names

    def __init__(self, config: GroundevalToolsetConfig) -> None:
        super().__init__(config)
        self.store: Any = None
        self.episode: Any = None

    async def setup_task(self, task: Any) -> None:
        from ..runtime.episode import Episode

        store, qs = _questions(task.pack, task.seed)
        question = next(q for q in qs.questions if q.id == task.question_id)
        self.store = store
        self.episode = Episode(store, question, "tool", agent="verifiers", max_steps=task.max_steps)

    def _call(self, name: Any, arguments: Any) -> str:
        reply = self.episode.call(name, arguments)
        self.state.ge_trace = self.episode.trace.model_dump(mode="json")
        return json.dumps(reply, sort_keys=True, ensure_ascii=False)

    def register(self, mcp: Any) -> None:
        """The tools below are listed as declared (names, descriptions, argument schemas), but
        every ``tools/call`` — any name, any arguments — goes to :meth:`_serve_call`: the MCP
        server's own path would refuse an unknown name and arguments that fail the schema
        before the episode could record them."""
        super().register(mcp)
        mcp.call_tool = self._with_state(self._serve_call)

    async def _serve_call(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """One ``tools/call`` as the episode's call, recorded as sent (the raw arguments text
        of :data:`ARGUMENTS_META` when the request carries it, else its ``arguments``)."""
        from mcp.types import CallToolResult, TextContent

        if self.episode is None:
            text = "no groundeval episode: the tool server was started without a task"
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        text = self._call(name, sent_arguments(context, arguments))
        # A listed tool's reply fits its output schema ({"result": text}); a name the server
        # does not list has no schema, and its reply is an error result (MCP's unknown-tool
        # error would make the client retry, recording the call again).
        listed = name in _TOOL_NAMES
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content={"result": text} if listed else None,
            is_error=not listed,
        )

    # The three tools' signatures and docstrings are what ``tools/list`` tells the model; over MCP
    # their calls are served by ``_serve_call`` (the bodies serve direct Python calls only).
    @vf.tool
    async def search_artifacts(self, query: str, subsystem: str | None = None, limit: int = 10) -> str:
        """Full-text search over the artifacts you may see at the question's moment (metadata only)."""
        args: dict[str, Any] = {"query": query, "limit": limit}
        if subsystem is not None:
            args["subsystem"] = subsystem
        return self._call("search_artifacts", args)

    @vf.tool
    async def fetch_artifact(self, artifact_id: str) -> str:
        """Read one artifact in full, with the events that reference it up to the question's moment."""
        return self._call("fetch_artifact", {"artifact_id": artifact_id})

    @vf.tool
    async def submit_answer(self, answer: dict[str, Any]) -> str:
        """Submit the final answer: an object matching the question's answer schema."""
        return self._call("submit_answer", {"answer": answer})


_TOOL_NAMES = ("search_artifacts", "fetch_artifact", "submit_answer")


class GroundevalTaskConfig(vf.TaskConfig):
    toolset: GroundevalToolsetConfig = GroundevalToolsetConfig()


def _score(task: Any, trace: Any) -> dict[str, Any] | None:
    """The reward detail of the rollout's recorded groundeval trace (None: no call was made)."""
    from ..trace.model import Trace
    from .reward import reward

    data = getattr(trace.state, "ge_trace", None)
    if data is None:
        return None
    store, qs = _questions(task.pack, task.seed)
    question = next(q for q in qs.questions if q.id == task.question_id)
    detail = reward(question, Trace.model_validate(data), config=store.manifest.evaluation.scoring, detail=True)
    assert isinstance(detail, dict)
    return detail


class GroundevalTask(vf.Task[GroundevalData, GroundevalState, GroundevalTaskConfig]):
    """A groundeval question: gated tools, the scorer's rewards."""

    NEEDS_CONTAINER = False

    @classmethod
    def toolsets(cls, config: GroundevalTaskConfig) -> list[Any]:
        return [GroundevalToolset(config.toolset)]

    @vf.reward(weight=1.0)
    async def rl_reward(self, task: GroundevalData, trace: Any) -> float:
        """The RL reward of :func:`groundeval.rl.reward.reward` (``v_rl = bad / (bad + 1)``, so
        padding cannot raise it; ``S_adj`` when no call is flagged; 0.0 when no call was made)."""
        detail = _score(task, trace)
        return 0.0 if detail is None else float(detail["reward"])

    @vf.metric
    async def groundeval(self, task: GroundevalData, trace: Any) -> dict[str, float]:
        """Every score component as a metric (unweighted): the scorer's ``S_adj``, the RL
        penalty, the answer and trajectory terms, the penalty, v and the process score."""
        detail = _score(task, trace)
        if detail is None:
            return {}
        keys = ("s_adj", "rl_penalty", "s_answer", "s_traj", "s_combined", "penalty", "violation_rate")
        out = {k: float(detail[k]) for k in keys}
        out.update({f"answer.{k}": float(v) for k, v in detail["answer_components"].items()})
        out.update({f"traj.{k}": float(v) for k, v in detail["traj_components"].items()})
        out["process_score"] = float(detail["diagnostics"]["process_score"])
        return out


class GroundevalTasksetConfig(vf.TasksetConfig):
    pack: str = "tiny"
    seed: int | None = None
    max_steps: int = 30
    task: GroundevalTaskConfig = GroundevalTaskConfig()


class GroundevalTaskset(vf.Taskset[GroundevalTask, GroundevalTasksetConfig]):
    """One task per generated question of ``config.pack`` (question order)."""

    def load(self) -> Any:
        _store, qs = _questions(self.config.pack, self.config.seed)
        for q in qs.questions:
            public = q.public()
            prompt = (
                f"{INSTRUCTIONS}\n\nQuestion: {q.text}\nActor: {public.get('actor')}\n"
                f"As of: {public.get('as_of')}\nAnswer schema: "
                f"{json.dumps(q.answer_schema, sort_keys=True)}"
            )
            data = GroundevalData(
                id=q.id,
                name=q.id,
                prompt=prompt,
                pack=str(self.config.pack),
                question_id=q.id,
                seed=self.config.seed,
                max_steps=self.config.max_steps,
            )
            yield GroundevalTask(data, self.config.task)


GroundevalChatHarnessConfig = ChatHarnessConfig


class GroundevalChatHarness(ChatHarness):
    """Chat completions with tool calls until the model stops calling tools (in process)."""

    HOME = "submit_answer"


if __name__ == "__main__":
    GroundevalToolset.run()
