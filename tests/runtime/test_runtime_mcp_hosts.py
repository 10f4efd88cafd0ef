"""MCP for hosts (issue 17 items 5 and 6), through real ``groundeval serve`` processes and the
MCP SDK client: the documented ``mcpServers`` snippet started exactly as written, an episode
driven through the prompt and the resources, tool titles / annotations / output schemas,
spec errors for unknown tools and invalid arguments, and ``serve PACK`` without
``--questions`` (generated, seeded, cached)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from runtime_questions import at, make_question

from groundeval.questions.generate import generate
from groundeval.questions.io import read_questions
from groundeval.runtime.mcp_server import UNKNOWN_EPISODE, EpisodeHub, build_server
from groundeval.runtime.question_cache import cache_path, cached_questions
from groundeval.trace.io import read_traces

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "integration.md"
BIN = Path(sys.executable).parent


def documented_servers() -> dict[str, dict]:
    """The host snippets of docs/integration.md: every ```json block naming a groundeval server."""
    found = {}
    for block in re.findall(r"^```json\n(.*?)^```", DOCS.read_text(encoding="utf-8"), re.S | re.M):
        data = json.loads(block)
        for key in ("mcpServers", "servers"):
            if "groundeval" in data.get(key, {}):
                found[key] = data[key]["groundeval"]
    return found


def _env(tmp_path: Path) -> dict[str, str]:
    """The host's environment: groundeval on PATH (as the docs require) and a private cache."""
    return {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "GROUNDEVAL_CACHE_DIR": str(tmp_path / "cache"),
    }


def _value(schema: dict):
    """A value of a JSON Schema as small as possible (what a model would fill in)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _value(props.get(k, {})) for k in schema.get("required", [])}
    return {"boolean": True, "string": "x", "integer": 0, "number": 0, "array": [], "null": None}.get(kind, "x")


async def drive_as_a_host(client: Client) -> dict:
    """What a host does: read the resources, pick the prompt, let the model call the tools."""
    out: dict = {}
    tools = {t.name: t for t in (await client.list_tools()).tools}
    for t in tools.values():  # what hosts show and decide on
        assert t.title and t.annotations is not None and t.output_schema["type"] == "object"
        assert t.annotations.open_world_hint is False
    assert tools["fetch_artifact"].annotations.read_only_hint is True
    assert tools["submit_answer"].annotations.read_only_hint is False
    assert tools["end_episode"].annotations.destructive_hint is True
    out["tools"] = tools

    listing = await client.list_resources()
    uris = [r.uri for r in listing.resources]
    assert uris[0] == "groundeval://questions" and all(r.mime_type == "application/json" for r in listing.resources)
    questions = json.loads((await client.read_resource("groundeval://questions")).contents[0].text)["questions"]
    assert questions and all("ground_truth" not in q and "answer_schema" not in q for q in questions)
    first = questions[0]
    assert first["uri"] in uris
    view = json.loads((await client.read_resource(first["uri"])).contents[0].text)
    assert view["question_id"] == first["question_id"] and view["answer_schema"]["type"] == "object"
    assert "ground_truth" not in view
    schema_uri = f"groundeval://answer-schemas/{first['track']}"
    assert json.loads((await client.read_resource(schema_uri)).contents[0].text) == view["answer_schema"]
    with pytest.raises(MCPError):
        await client.read_resource("groundeval://questions/no-such-question")
    out["questions"] = questions

    # the prompt starts an episode: the next question nobody has answered here
    (prompt,) = (await client.list_prompts()).prompts
    assert prompt.name == "answer_question" and not any(a.required for a in prompt.arguments)
    got = await client.get_prompt("answer_question", {"agent": "host-test"})
    eid, qid = got.meta["groundeval/episode_id"], got.meta["groundeval/question_id"]
    assert qid == first["question_id"]
    text = got.messages[0].content.text
    assert got.messages[0].role == "user" and eid in text and view["text"] in text
    assert json.dumps(view["answer_schema"], indent=2, sort_keys=True) in text
    second = await client.get_prompt("answer_question", {})  # the first is open: the next one
    assert second.meta["groundeval/question_id"] == questions[1]["question_id"]

    # the model's calls, with the episode id the prompt gave
    hits = await client.call_tool("search_artifacts", {"episode_id": eid, "query": "incident"})
    assert not hits.is_error and hits.structured_content["status"] == "ok"
    bad = await client.call_tool("fetch_artifact", {"episode_id": eid, "artifact_id": 7})
    assert bad.is_error and bad.structured_content == {"status": "invalid", "error": "artifact_id must be a string"}
    for args in ({"episode_id": eid}, {}):  # unknown tool: the spec's error, with or without an episode
        with pytest.raises(MCPError) as err:
            await client.call_tool("read_minds", args)
        assert err.value.code == -32602 and err.value.message == "Unknown tool: read_minds"
    wrong = await client.call_tool("submit_answer", {"episode_id": eid, "answer": {"nonsense": 1}})
    assert wrong.is_error and wrong.structured_content["accepted"] is False and wrong.structured_content["errors"]
    answer = _value(view["answer_schema"])
    jsonschema.validate(answer, view["answer_schema"])
    done = await client.call_tool("submit_answer", {"episode_id": eid, "answer": answer})
    assert not done.is_error and done.structured_content == {"accepted": True, "status": "ok"}
    after = await client.call_tool("fetch_artifact", {"episode_id": eid, "artifact_id": "x"})
    assert after.is_error  # the episode is over
    out.update(episode=eid, question_id=qid, answer=answer)
    return out


def test_docs_give_host_snippets_for_claude_desktop_cursor_and_vscode():
    servers = documented_servers()
    assert set(servers) == {"mcpServers", "servers"}
    assert servers["servers"]["type"] == "stdio"
    assert servers["mcpServers"]["command"] == servers["servers"]["command"] == "groundeval"
    assert servers["mcpServers"]["args"] == servers["servers"]["args"]


def test_the_documented_snippet_serves_an_episode_through_prompt_and_resources(tmp_path):
    snippet = documented_servers()["mcpServers"]
    host_dir = tmp_path / "host"  # hosts start servers in a folder of their own
    host_dir.mkdir()
    params = StdioServerParameters(
        command=snippet["command"],
        args=list(snippet["args"]),
        env={**_env(tmp_path), **snippet.get("env", {})},
        cwd=str(host_dir),
    )

    async def main():
        async with Client(params) as client:
            return await drive_as_a_host(client)

    got = anyio.run(main)
    assert got["answer"] is not None
    # serve PACK without --questions generated the pack's questions, seeded and cached
    (cached,) = (tmp_path / "cache" / "questions").glob("*.json")
    qs = read_questions(cached)
    assert [q["question_id"] for q in got["questions"]] == [q.id for q in qs.questions]
    assert list(host_dir.iterdir()) == []  # nothing written into the host's folder


def test_traces_added_as_the_docs_say_are_recorded_and_score(tmp_path):
    snippet = documented_servers()["mcpServers"]
    traces = tmp_path / "traces.jsonl"
    params = StdioServerParameters(
        command=snippet["command"],
        args=[*snippet["args"], "--traces", str(traces)],
        env=_env(tmp_path),
        cwd=str(tmp_path),
    )

    async def main():
        async with Client(params) as client:
            return await drive_as_a_host(client)

    got = anyio.run(main)
    written = {t.question_id: t for t in read_traces(traces)}
    trace = written[got["question_id"]]
    assert trace.agent == "host-test" and trace.status == "completed" and trace.final_answer == got["answer"]
    assert [(c.tool, c.status) for c in trace.calls] == [
        ("search_artifacts", "ok"),
        ("fetch_artifact", "invalid"),
        ("read_minds", "invalid"),
        ("submit_answer", "invalid"),
        ("submit_answer", "ok"),
    ]
    # the second prompt's episode was open at shutdown: written as no_answer
    assert len(written) == 2 and sum(t.status == "no_answer" for t in written.values()) == 1
    # the traces score against the cached questions (the path the server printed)
    (cached,) = (tmp_path / "cache" / "questions").glob("*.json")
    from groundeval.cli.main import main as cli

    try:
        cli(["score", str(traces), "--questions", str(cached), "--out", str(tmp_path / "scored")])
    except SystemExit as exc:
        assert not exc.code
    assert len((tmp_path / "scored" / "scores.jsonl").read_text().splitlines()) == 2


# ----------------------------------------------------------------------------- in process


def test_context_mode_advertises_get_context_and_prompt_modes(tiny_store):
    hub = EpisodeHub(tiny_store, [make_question(actor="carol", as_of=at(9), qid="q-carol")])

    async def main():
        async with Client(build_server(hub)) as client:
            started = await client.call_tool("start_episode", {"question_id": "q-carol", "mode": "context"})
            tool_mode = await client.call_tool("start_episode", {"question_id": "q-carol"})
            ctx = await client.call_tool("get_context", {"episode_id": started.structured_content["episode_id"]})
            searched = await client.call_tool(
                "search_artifacts", {"episode_id": started.structured_content["episode_id"], "query": "x"}
            )
            prompt = await client.get_prompt("answer_question", {"question_id": "q-carol", "mode": "context"})
            with pytest.raises(MCPError) as unknown_q:
                await client.get_prompt("answer_question", {"question_id": "nope"})
            with pytest.raises(MCPError) as no_more:
                await client.get_prompt("answer_question", {})  # every question has an open episode
            with pytest.raises(MCPError) as unknown_p:
                await client.get_prompt("other", {})
            return started, tool_mode, ctx, searched, prompt, unknown_q.value, no_more.value, unknown_p.value

    started, tool_mode, ctx, searched, prompt, unknown_q, no_more, unknown_p = anyio.run(main)
    assert started.structured_content["tools"] == ["get_context", "submit_answer"]
    assert tool_mode.structured_content["tools"] == ["search_artifacts", "fetch_artifact", "submit_answer"]
    assert not ctx.is_error and isinstance(ctx.structured_content["context"], list)
    assert searched.is_error and "not available in context mode" in searched.structured_content["error"]
    assert "- get_context:" in prompt.messages[0].content.text
    assert "search_artifacts" not in prompt.messages[0].content.text
    assert unknown_q.code == unknown_p.code == no_more.code == -32602
    hub.close()


def test_every_reply_matches_its_tools_output_schema(tiny_store):
    """Refusals included: the schema's second alternative is the {status, error} reply."""
    from groundeval.runtime.tools import mcp_tools

    schemas = {t["name"]: t["output_schema"] for t in mcp_tools()}
    hub = EpisodeHub(
        tiny_store,
        [
            make_question(actor="carol", as_of=at(9), qid="q-carol"),
            make_question("counterfactual", actor="alice", as_of=at(5), qid="q-cf"),
        ],
    )
    replies = [("list_questions", hub.call("list_questions", {}))]
    eid = hub.call("start_episode", {"question_id": "q-carol"})["episode_id"]
    cid = hub.call("start_episode", {"question_id": "q-cf", "mode": "context"})["episode_id"]
    replies.append(("get_context", hub.call("get_context", {"episode_id": cid})))
    for tool, args in [
        ("search_artifacts", {"query": "staffing"}),
        ("search_artifacts", {"query": "x", "subsystem": "jira"}),
        ("search_artifacts", {"query": 3}),
        ("fetch_artifact", {"artifact_id": "HR-1"}),
        ("fetch_artifact", {"artifact_id": "JIRA-42"}),
        ("fetch_artifact", {"artifact_id": "nope"}),
        ("submit_answer", {"answer": {"could_actor_have_known": "maybe"}}),
        ("submit_answer", {"answer": {"could_actor_have_known": True}}),
    ]:
        replies.append((tool, hub.call(tool, {"episode_id": eid, **args})))
    replies.append(("end_episode", hub.call("end_episode", {"episode_id": cid})))
    statuses = set()
    for tool, reply in replies:
        jsonschema.validate(reply, schemas[tool])
        statuses.add(reply.get("status"))
    for schema in schemas.values():  # what the server answers for a hub error (e.g. a finished episode)
        jsonschema.validate({"status": "error", "error": UNKNOWN_EPISODE}, schema)
    assert {"ok", "denied", "invalid", "not_found", "ended"} <= statuses
    ok_fetch = next(r for t, r in replies if t == "fetch_artifact" and r["status"] == "ok")
    with pytest.raises(jsonschema.ValidationError):  # the schema says something: a reply without its parts fails
        jsonschema.validate({k: v for k, v in ok_fetch.items() if k != "artifact"}, schemas["fetch_artifact"])
    hub.close()


# ----------------------------------------------------------------------------- the question cache


def test_question_cache_is_keyed_by_digest_and_seed_and_survives_damage(tiny_store, tmp_path):
    told: list[str] = []
    first = cached_questions(tiny_store, cache_dir=tmp_path, report=told.append)
    seed = tiny_store.manifest.evaluation.seed
    assert not first.hit and first.path == cache_path(tmp_path, tiny_store.digest, seed)
    assert first.path.name.startswith(f"{tiny_store.digest}-seed{seed}-v")
    assert first.questions == generate(tiny_store, seed=seed)  # the public generator's questions
    data = first.path.read_bytes()
    again = cached_questions(tiny_store, cache_dir=tmp_path, report=told.append)
    assert again.hit and again.questions == first.questions and first.path.read_bytes() == data and told == []
    other = cached_questions(tiny_store, seed=seed + 1, cache_dir=tmp_path)
    assert not other.hit and other.path != first.path and other.questions.metadata.seed == seed + 1
    first.path.write_text("{ not json", encoding="utf-8")  # damaged: regenerated, same bytes again
    fixed = cached_questions(tiny_store, cache_dir=tmp_path, report=told.append)
    assert not fixed.hit and fixed.path.read_bytes() == data and "cannot be read" in told[0]


def test_question_cache_unwritable_serves_uncached(tiny_store, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    told: list[str] = []
    served = cached_questions(tiny_store, cache_dir=blocker, report=told.append)
    assert served.path is None and not served.hit and served.questions.questions
    assert told and "serving them uncached" in told[0]


def test_default_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    from groundeval.runtime.question_cache import default_cache_dir

    monkeypatch.setenv("GROUNDEVAL_CACHE_DIR", str(tmp_path / "a"))
    assert default_cache_dir() == tmp_path / "a"
    monkeypatch.delenv("GROUNDEVAL_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "groundeval"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home() / ".cache" / "groundeval"


def test_serve_refuses_seed_or_cache_with_a_questions_file(tiny_pack, tmp_path):
    from runtime_mcp_helpers import run_serve, write_questions

    from groundeval.store.store import Store

    store = Store.open(tiny_pack)
    try:
        questions = write_questions(tmp_path / "q.json", [make_question(qid="q1")], store.digest)
    finally:
        store.close()
    code, err = run_serve(tiny_pack, questions, "--seed", "3")
    assert code == 2 and "--seed and --questions-cache apply only to generated questions" in err
    assert "Traceback" not in err


def test_resources_are_listed_in_pages_with_a_cursor(tiny_store):
    questions = [make_question(actor="carol", as_of=at(9), qid=f"q-{i:03d}") for i in range(150)]
    hub = EpisodeHub(tiny_store, questions)

    async def main():
        async with Client(build_server(hub)) as client:
            pages, cursor = [], None
            while True:
                page = await client.list_resources(cursor=cursor)
                pages.append([r.uri for r in page.resources])
                cursor = page.next_cursor
                if cursor is None:
                    break
            with pytest.raises(MCPError):
                await client.list_resources(cursor="not-a-cursor")
            return pages

    pages = anyio.run(main)
    # the questions list, one answer schema (all share it), then every question once
    assert [len(p) for p in pages] == [100, 52]
    uris = [u for p in pages for u in p]
    assert uris[:2] == ["groundeval://questions", "groundeval://answer-schemas/perspective"]
    assert uris[2:] == [f"groundeval://questions/q-{i:03d}" for i in range(150)]
    hub.close()
