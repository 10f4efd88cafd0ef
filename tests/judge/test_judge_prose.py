"""Question prose from a model (issue 16, part 1), against a real local provider server:
leaking prose is rejected and retried, then the template is kept; clean prose is accepted;
a cached re-run makes no request and writes the same bytes; without --prose nothing changes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
from judge_llm import chat_reply

from groundeval import api
from groundeval.agents.complete import text_model
from groundeval.cli.main import main
from groundeval.errors import ContractError
from groundeval.questions.generate import PROSE_ATTEMPTS, generate
from groundeval.questions.io import write_questions
from groundeval.judge.prose import NameIndex, ProseWriter, check_prose, clean, generate_with_prose, required_phrases


def _cli(*args: str) -> int:
    try:
        main(list(args))
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


@pytest.fixture(scope="module")
def tiny_store(tiny_pack):
    store = api.open_pack(tiny_pack)
    yield store
    store.close()


def _question(body) -> str:
    user = body["messages"][-1]["content"]
    return next(line[len("Question: ") :] for line in user.splitlines() if line.startswith("Question: "))


def _attempt(body) -> int:
    return 1 if "previous wording was rejected" in body["messages"][-1]["content"] else 0


def _writer(server, store, cache, **kw) -> ProseWriter:
    model = text_model("openai:prose-model", option="--prose", base_url=server.url, retries=0, temperature=0.7)
    return ProseWriter(
        model, seed=store.manifest.evaluation.seed, cache_dir=cache, names=NameIndex.from_store(store), **kw
    )


def _reworded(question: str) -> str:
    return "Put simply, " + question[0].lower() + question[1:]


def _bytes(qs, path) -> bytes:
    write_questions(qs, path)
    return path.read_bytes()


# ----------------------------------------------------------------------------- the validator


def test_templates_pass_the_prose_validator(tiny_store):
    requests = []

    def capture(request):
        requests.append(request)
        raise RuntimeError("capture only")

    generate(tiny_store, prose=capture)
    names = NameIndex.from_store(tiny_store)
    assert requests and all(r["references"] for r in requests)
    for r in requests:
        assert [x for x in check_prose(r["text"], r, names) if not x.startswith("length")] == []
        for ref in r["references"]:
            assert ref in r["text"]


def test_validator_rules(tiny_store):
    names = NameIndex.from_store(tiny_store)
    request = {
        "track": "perspective",
        "text": "Based only on what bob could access as of 2026-03-07 16:00 UTC, "
        "could bob have known about the 'meeting held' event?",
        "slots": {"actor": "bob", "target": "the 'meeting held' event", "as_of": "2026-03-07 16:00 UTC"},
        "references": ["the 'meeting held' event"],
    }
    ok = (
        "Considering only the sources bob could read on or before 2026-03-07 16:00 UTC, would bob have been "
        "able to learn about the 'meeting held' event?"
    )
    assert check_prose(ok, request, names) == []
    assert required_phrases(request) == ["the 'meeting held' event", "bob", "2026-03-07 16:00 UTC"]

    def kinds(text):
        return {r.split(":")[0] for r in check_prose(text, request, names)}

    assert kinds(ok.replace("the 'meeting held' event", "the meeting")) == {"missing"}
    assert kinds(ok.replace("2026-03-07 16:00 UTC", "March 7")) == {"missing", "adds"}  # '7' is new
    assert kinds(ok.replace("bob have", "dm-bob-alice have")) == {"adds"}  # 'bob' is still shown once
    assert kinds(ok.replace("?", ", as recorded in ZD-7?")) == {"adds"}  # an artifact id
    assert kinds(ok.replace("?", ", or in zendesk?")) == {"adds"}  # a subsystem
    assert kinds(ok.replace("?", ", which alice attended?")) == {"adds"}  # another actor
    assert kinds(ok.replace("?", " on 2026-03-01?")) == {"adds"}  # a date the question does not show
    assert kinds(ok.replace("would bob", "obviously, would bob")) == {"normative"}
    assert kinds(ok.replace("would bob", "given access denied, would bob")) == {"leak"}
    assert kinds(ok.replace("would bob", "in the negative_temporal case, would bob")) == {"leak"}
    assert kinds("Could bob have known about the 'meeting held' event by 2026-03-07 16:00 UTC?") == {"length"}
    assert kinds(ok[:-1] + ".") == {"form"}
    assert clean('  "Question: ' + ok + '"\n') == ok


def test_counterfactual_must_not_be_circular():
    ref = "the 'deploy finished' event (service api)"
    request = {
        "track": "counterfactual",
        "text": f"Suppose {ref} had not happened. Would {ref} have turned out differently?",
        "slots": {"premise": f"{ref} had not happened", "effect": ref, "hint": ""},
        "references": [ref, ref],
    }
    assert any(r.startswith("circular") for r in check_prose(request["text"], request))


# ----------------------------------------------------------------------------- against the server


def test_leaking_prose_is_rejected_retried_then_the_template_is_kept(llm_server, tiny_store, tmp_path):
    """Attempt 1 names an artifact id, attempt 2 the label, attempt 3 a normative phrase: all
    rejected, every question keeps its template — byte-identical to generating without prose."""
    leaks = {}

    def responder(body):
        q = _question(body)
        n = leaks[q] = leaks.get(q, 0) + 1
        text = {
            1: q[:-1] + ", judging from ZD-7 and PM-42?",
            2: "Could not have known: " + q,
            3: "Obviously, and as they should have, " + q[0].lower() + q[1:],
        }[min(n, 3)]
        return chat_reply(text)

    llm_server.responder = responder
    writer = _writer(llm_server, tiny_store, tmp_path / "cache")
    qs = generate(tiny_store, prose=writer)
    assert {q.meta["text_source"] for q in qs.questions} == {"template"}
    n = len(qs.questions)
    assert len(llm_server.requests) == PROSE_ATTEMPTS * n and set(leaks.values()) == {PROSE_ATTEMPTS}
    assert writer.stats.accepted == 0 and writer.stats.rejected == PROSE_ATTEMPTS * n
    assert {"adds", "leak", "normative"} <= set(writer.stats.reasons)
    assert _bytes(qs, tmp_path / "prose.json") == _bytes(generate(tiny_store), tmp_path / "plain.json")
    # a retry tells the model why, and no request carries the answer
    retries = [b for b in llm_server.bodies() if _attempt(b)]
    assert len(retries) == (PROSE_ATTEMPTS - 1) * n
    assert any("zd-7" in b["messages"][-1]["content"] for b in retries)
    sent = json.dumps(llm_server.bodies())
    for word in (
        "ground_truth",
        "could_actor_have_known",
        "negative_permission",
        "negative_temporal",
        "expected_search_space",
        "resolution_triggers_postmortem",
        "no_causal_link",
        '"label"',
    ):
        assert word not in sent


def test_the_generator_also_rejects_answer_side_ids(llm_server, tiny_store, tmp_path):
    """Without the pack's names the prose validator cannot know that 'dm-bob-alice' is an
    artifact id (it has no digit); the generator's own leakage check still rejects it where
    it is on the answer side, and keeps the template there."""
    llm_server.responder = lambda body: chat_reply(_reworded(_question(body))[:-1] + " (see dm-bob-alice)?")
    writer = ProseWriter(text_model("openai:m", base_url=llm_server.url, retries=0), seed=0, cache_dir=tmp_path / "c")
    qs = generate(tiny_store, seed=0, prose=writer)
    answer_side = [q for q in qs.questions if "dm-bob-alice" in json.dumps(q.ground_truth.model_dump())]
    assert answer_side and all(q.meta["text_source"] == "template" for q in answer_side)
    assert all("dm-bob-alice" not in q.text for q in answer_side)
    assert writer.stats.accepted >= PROSE_ATTEMPTS * len(answer_side)  # the writer passed them; generate did not
    # with the pack's names the writer rejects the id everywhere
    strict = _writer(llm_server, tiny_store, tmp_path / "c2")
    qs = generate(tiny_store, prose=strict)
    assert {q.meta["text_source"] for q in qs.questions} == {"template"} and strict.stats.accepted == 0


def test_clean_prose_is_accepted_and_recorded(llm_server, tiny_store, tmp_path):
    llm_server.responder = lambda body: chat_reply(_reworded(_question(body)))
    writer = _writer(llm_server, tiny_store, tmp_path / "cache")
    qs = generate(tiny_store, prose=writer)
    plain = generate(tiny_store)
    assert {q.meta["text_source"] for q in qs.questions} == {"prose"}
    assert len(llm_server.requests) == len(qs.questions) == len(plain.questions)
    assert all(q.text.startswith("Put simply, ") for q in qs.questions)
    assert sorted(_reworded(q.text) for q in plain.questions) == sorted(q.text for q in qs.questions)
    # same truths and subjects, new texts (and so new ids)
    assert Counter(json.dumps(q.meta["subjects"], sort_keys=True) for q in qs.questions) == Counter(
        json.dumps(q.meta["subjects"], sort_keys=True) for q in plain.questions
    )
    body = llm_server.bodies()[0]
    assert body["model"] == "prose-model" and "tools" not in body
    assert "Keep verbatim:" in body["messages"][1]["content"]


def test_retried_then_accepted(llm_server, tiny_store, tmp_path):
    def responder(body):
        q = _question(body)
        return chat_reply(_reworded(q) if _attempt(body) else q[:-1] + " in jira?")

    llm_server.responder = responder
    writer = _writer(llm_server, tiny_store, tmp_path / "cache")
    qs = generate(tiny_store, prose=writer)
    assert {q.meta["text_source"] for q in qs.questions} == {"prose"}
    assert len(llm_server.requests) == 2 * len(qs.questions)
    assert writer.stats.rejected == writer.stats.accepted == len(qs.questions)


def test_cached_rerun_makes_no_request_and_writes_the_same_bytes(llm_server, tiny_store, tmp_path):
    llm_server.responder = lambda body: chat_reply(_reworded(_question(body)) if _attempt(body) else "Yes.")
    cache = tmp_path / "cache"
    first = _bytes(generate(tiny_store, prose=_writer(llm_server, tiny_store, cache)), tmp_path / "a.json")
    sent = len(llm_server.requests)
    assert sent > 0
    llm_server.responder = lambda body: (500, {"error": {"message": "must not be called"}})
    writer = _writer(llm_server, tiny_store, cache)
    again = _bytes(generate(tiny_store, prose=writer), tmp_path / "b.json")
    assert len(llm_server.requests) == sent and writer.stats.requests == 0 and writer.stats.cache_hits == sent
    assert again == first
    # another seed is another cache key: the provider is asked again
    other = _writer(llm_server, tiny_store, cache)
    other.seed = 12345
    generate(tiny_store, seed=12345, prose=other)
    assert other.stats.requests > 0


def test_cli_prose_and_without_prose_nothing_changes(llm_server, tiny_pack, tmp_path, capsys):
    assert _cli("generate", str(tiny_pack), "-o", str(tmp_path / "plain.json")) == 0
    store = api.open_pack(tiny_pack)
    try:
        assert (tmp_path / "plain.json").read_bytes() == _bytes(generate(store), tmp_path / "api.json")
    finally:
        store.close()
    # every reply leaks: all templates kept, byte-identical to no --prose
    llm_server.responder = lambda body: chat_reply("The answer is no: " + _question(body))
    assert (
        _cli(
            "generate",
            str(tiny_pack),
            "-o",
            str(tmp_path / "leaky.json"),
            "--prose",
            "openai:m",
            "--prose-base-url",
            llm_server.url,
            "--prose-cache",
            str(tmp_path / "c1"),
        )
        == 0
    )
    assert (tmp_path / "leaky.json").read_bytes() == (tmp_path / "plain.json").read_bytes()
    assert "0 of 21 questions reworded" in capsys.readouterr().err.replace("\n", " ")
    # clean replies: reworded, and a second run from the cache is identical without a request
    llm_server.responder = lambda body: chat_reply(_reworded(_question(body)))
    for name in ("p1.json", "p2.json"):
        assert (
            _cli(
                "generate",
                str(tiny_pack),
                "-o",
                str(tmp_path / name),
                "--prose",
                "openai:m",
                "--prose-base-url",
                llm_server.url,
                "--prose-cache",
                str(tmp_path / "c2"),
            )
            == 0
        )
    err = capsys.readouterr().err
    assert "21 of 21 questions reworded" in err and "0 requests, 21 cached" in err
    assert (tmp_path / "p1.json").read_bytes() == (tmp_path / "p2.json").read_bytes()
    data = json.loads((tmp_path / "p1.json").read_text())
    assert {q["meta"]["text_source"] for q in data["questions"]} == {"prose"}


def test_an_unreachable_provider_stops_generation(tiny_store, tmp_path):
    writer = ProseWriter(
        text_model("openai:m", base_url="http://127.0.0.1:9", retries=0), seed=0, cache_dir=tmp_path / "c"
    )
    with pytest.raises(ContractError, match=r"--prose: openai:m: .*connection refused"):
        generate_with_prose(tiny_store, writer, seed=0)
    assert writer.stats.requests == 1  # stopped after the first fatal error


@pytest.mark.parametrize(
    "args", [["generate", "tiny", "--prose", "openai:m"], ["judge", ".", "--judge", "anthropic:m"]]
)
def test_missing_extra_is_one_line(tmp_path, args):
    code = f"import sys\nsys.modules['httpx'] = None\nfrom groundeval.cli.main import main\nmain({args!r})\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    extra = args[3].split(":")[0]
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: {args[2]} {args[3]}: needs the '{extra}' extra (module 'httpx' "
        f"is not installed): pip install 'groundeval[{extra}]'"
    ]
