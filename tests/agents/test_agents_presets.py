"""Named presets for OpenAI-compatible servers (issue 32 item 6): ``vllm:``, ``ollama:``,
``lmstudio:``, ``openrouter:``, ``together:``, ``groq:`` are the OpenAI adapter with the server's
base URL and key variable. Each one runs a real episode against the local scripted server."""

from __future__ import annotations

import json

import pytest
from test_agents_adapters import oa_reply, question

from groundeval.agents.presets import PRESETS
from groundeval.agents.registry import get_agent
from groundeval.agents.runner import run_episode
from groundeval.cli.main import main
from groundeval.errors import UsageError
from groundeval.store.store import Store

DOCUMENTED = {  # docs/agents.md, "Presets"
    "vllm": ("http://localhost:8000/v1", "VLLM_API_KEY"),
    "ollama": ("http://localhost:11434/v1", "OLLAMA_API_KEY"),
    "lmstudio": ("http://localhost:1234/v1", "LMSTUDIO_API_KEY"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
}


@pytest.fixture(scope="module")
def store(tiny_pack):
    s = Store.open(tiny_pack)
    yield s
    s.close()


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch):
    for name in PRESETS:
        monkeypatch.delenv(PRESETS[name].key_env, raising=False)
        monkeypatch.delenv(f"{name.upper()}_BASE_URL", raising=False)


def test_every_preset_has_its_documented_url_and_key_variable(monkeypatch):
    assert {n: (p.base_url, p.key_env) for n, p in PRESETS.items()} == DOCUMENTED
    for name, (url, env) in DOCUMENTED.items():
        monkeypatch.setenv(env, "k")
        agent = get_agent(f"{name}:some-model")
        assert agent.name == f"{name}:some-model" and agent.provider == name
        assert agent.settings()["base_url"] == url  # nothing sent: the URL the agent would call


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_each_preset_runs_an_episode_against_the_local_server(name, scripted_server, store, monkeypatch):
    env = DOCUMENTED[name][1]
    monkeypatch.setenv(env, f"key-for-{name}")
    monkeypatch.setenv(f"{name.upper()}_BASE_URL", scripted_server.url + "/v1")  # the environment override
    answer = {"could_actor_have_known": True, "evidence_artifacts": ["JIRA-42"]}
    scripted_server.add(
        oa_reply([("fetch_artifact", json.dumps({"artifact_id": "JIRA-42"}))]),
        oa_reply([("submit_answer", json.dumps({"answer": answer}))]),
    )
    trace = run_episode(store, question(), get_agent(f"{name}:tiny-model", retries=0), max_steps=4)
    assert trace.status == "completed" and trace.final_answer == answer and trace.agent == f"{name}:tiny-model"
    paths = [r[0] for r in scripted_server.requests]
    assert paths == ["/v1/chat/completions"] * 2
    assert all(r[1]["authorization"] == f"Bearer key-for-{name}" for r in scripted_server.requests)
    assert all(r[2]["model"] == "tiny-model" for r in scripted_server.requests)


@pytest.mark.parametrize("name", ["openrouter", "together", "groq"])
def test_a_hosted_preset_without_its_key_is_refused_at_once(name):
    with pytest.raises(UsageError, match=rf"needs an API key in \${DOCUMENTED[name][1]}"):
        get_agent(f"{name}:m")


def test_the_command_line_overrides_a_presets_url_and_key(scripted_server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MY_KEY", "sk-mine")
    scripted_server.add(*[oa_reply([("submit_answer", json.dumps({"answer": {"exists": True}}))])] * 4)
    out = tmp_path / "o"
    args = ["run", "tiny", "--agent", "ollama:qwen", "--base-url", scripted_server.url + "/v1"]
    args += ["--api-key-env", "MY_KEY", "--out", str(out), "-q", "--track", "silence", "--retries", "0"]
    try:
        main(args)
    except SystemExit as exc:
        assert not exc.code
    assert scripted_server.requests and all(r[0] == "/v1/chat/completions" for r in scripted_server.requests)
    assert scripted_server.requests[0][1]["authorization"] == "Bearer sk-mine"
    info = json.loads((out / "run.json").read_text())
    assert info["agent"]["name"] == "ollama:qwen"


def test_a_local_preset_without_a_key_sends_no_authorization(scripted_server, store):
    answer = {"could_actor_have_known": True, "evidence_artifacts": []}
    scripted_server.add(oa_reply([("submit_answer", json.dumps({"answer": answer}))]))
    trace = run_episode(store, question(), get_agent("vllm:m", base_url=scripted_server.url, retries=0), max_steps=2)
    assert trace.status == "completed" and "authorization" not in scripted_server.requests[0][1]
