"""What groundeval's two ``verifiers`` environments share (packs: :mod:`.verifiers_env`, worlds:
:mod:`.verifiers_worlds`): how a tool server serves *every* ``tools/call`` to its episode as it
was sent, and how a harness sends the model's calls there. Extra ``verifiers`` (imported lazily:
imported by the two environments only).

* A client passes the model's arguments text, as written, in the request's ``_meta`` under
  :data:`ARGUMENTS_META`; the tool server gives the episode that text (parsed when it is JSON),
  so text that is not JSON reaches the trace as it was sent (:func:`sent_arguments`).
* :func:`send_call` is the harness side: any name the model wrote goes to the server listing it,
  and a name no server lists to groundeval's own server, whose episode records it;
  :func:`chat_loop` is the bundled harnesses' chat loop around it, :class:`ChatHarness` the
  harness both environments subclass.
"""

from __future__ import annotations

from typing import Any, ClassVar

import verifiers.v1 as vf
from verifiers.v1.runtimes import ProgramResult

__all__ = [
    "ARGUMENTS_META",
    "DONE_META",
    "ChatHarness",
    "ChatHarnessConfig",
    "chat_loop",
    "episode_over",
    "raw_arguments",
    "request_meta",
    "send_call",
    "sent_arguments",
]

# The request ``_meta`` key under which a client passes the model's arguments text as written.
ARGUMENTS_META = "groundeval/arguments"
MAX_TURNS = 64  # model replies per rollout, at most
# The reply ``_meta`` key by which a tool server says its episode is over (a world's user stopped).
DONE_META = "groundeval/done"


def request_meta(context: Any) -> Any:
    """The ``_meta`` of the ``tools/call`` request being served (None outside a request)."""
    try:
        return context.request_context.meta
    except (AttributeError, ValueError):  # no context, or a context with no request
        return None


def raw_arguments(context: Any, arguments: Any) -> Any:
    """The arguments as the model wrote them: the raw text of :data:`ARGUMENTS_META` when the
    request carries it, else ``arguments`` (for a caller that parses them itself, once)."""
    meta = request_meta(context)
    raw = meta.get(ARGUMENTS_META) if isinstance(meta, dict) else None
    return raw if isinstance(raw, str) else arguments


def sent_arguments(context: Any, arguments: Any) -> Any:
    """The arguments as the model sent them, as a value: :func:`raw_arguments`, a text parsed
    when it is JSON (else the text itself)."""
    from ..adapters.core import parse_arguments

    return parse_arguments(raw_arguments(context, arguments))


async def send_call(
    servers: dict[str, Any], dispatch: dict[str, tuple[str, str]], name: str, text: Any, home: str
) -> Any:
    """One tool call of the model, by the name and with the arguments it wrote (the text, or an
    object): to the server of that tool, and any name no server lists to ``home`` (the server
    whose episode records it). A text travels in the request's ``_meta``
    (:data:`ARGUMENTS_META`), and ``arguments`` carries it parsed when it is a JSON object.
    Returns the MCP ``CallToolResult``."""
    from ..adapters.core import parse_arguments

    parsed = parse_arguments(text)
    arguments = parsed if isinstance(parsed, dict) else {}
    server, tool = dispatch.get(name) or (home, name)
    meta = {ARGUMENTS_META: text} if isinstance(text, str) else None
    return await servers[server].run(lambda client: client.call_tool(tool, arguments, meta=meta))


def episode_over(result: Any) -> bool:
    """Whether a tool server's reply says its episode is over (:data:`DONE_META` in its ``_meta``)."""
    meta = getattr(result, "meta", None)
    return bool(meta.get(DONE_META)) if isinstance(meta, dict) else False


async def chat_loop(
    ctx: Any,
    endpoint: str,
    secret: str,
    mcp_urls: dict[str, str],
    system: str | None,
    prompt: Any,
    *,
    max_turns: int,
    home: str,
    say: str | None = None,
) -> None:
    """The bundled harnesses' in-process loop: chat completions through the rollout's endpoint,
    every tool call the model makes sent by :func:`send_call` (``home``: the tool whose server
    records names no server lists), its reply the tool message. Ends after ``max_turns`` model
    replies, when a reply says the episode is over (:func:`episode_over`), or on a reply without
    a tool call — unless ``say`` names the tool that talks to a simulated user: then a non-empty
    plain reply is sent to it as ``{"text": ...}`` and the user's answer is the next user message
    (an empty one ends the loop)."""
    import json
    from contextlib import AsyncExitStack

    from openai import AsyncOpenAI
    from verifiers.v1.harnesses.utils.mcp import connect_mcp, mcp_content_to_chat_content

    messages: list[dict[str, Any]] = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": prompt if isinstance(prompt, str) else str(prompt)}
    ]
    config = {"mcpServers": {name: {"url": url} for name, url in mcp_urls.items()}}
    client = AsyncOpenAI(base_url=endpoint, api_key=secret or "none")
    async with AsyncExitStack() as stack:
        tools, dispatch, servers = await connect_mcp(config, stack)
        server = dispatch[home][0]
        for _ in range(max_turns):
            reply = await client.chat.completions.create(model=ctx.model, messages=messages, tools=tools)
            message = reply.choices[0].message
            calls = message.tool_calls or []
            messages.append(
                {
                    "role": "assistant",
                    "content": message.content or "",
                    **({"tool_calls": [c.model_dump() for c in calls]} if calls else {}),
                }
            )
            if calls:
                over = False
                for call in calls:
                    result = await send_call(servers, dispatch, call.function.name, call.function.arguments, server)
                    content = mcp_content_to_chat_content(result.content)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
                    over = over or episode_over(result)
                if over:
                    break
                continue
            text = (message.content or "").strip()
            if say is None or not text:
                break
            result = await send_call(servers, dispatch, say, {"text": text}, server)
            if episode_over(result):
                break
            said = json.loads(mcp_content_to_chat_content(result.content))
            messages.append({"role": "user", "content": said["result"]["reply"]})
    await client.close()


class ChatHarnessConfig(vf.HarnessConfig):
    max_turns: int = MAX_TURNS


class ChatHarness(vf.Harness[ChatHarnessConfig]):
    """The in-process harness of both environments: :func:`chat_loop` with the subclass's
    ``HOME`` (the tool whose server records unlisted names) and ``SAY`` (the tool a plain reply
    is said with; None: a plain reply ends the rollout)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False
    HOME: ClassVar[str] = ""
    SAY: ClassVar[str | None] = None

    async def launch(
        self,
        ctx: Any,
        trace: Any,
        runtime: Any,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: Any,
        tool_interception_url: str | None = None,
    ) -> ProgramResult:
        system, prompt = self.resolve_prompt(data)
        await chat_loop(
            ctx,
            endpoint,
            secret,
            mcp_urls,
            system,
            prompt,
            max_turns=self.config.max_turns,
            home=self.HOME,
            say=self.SAY,
        )
        return ProgramResult(exit_code=0, stdout="", stderr="")
