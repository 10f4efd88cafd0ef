"""Question prose from a language model that cannot leak (optional; the ``openai`` or
``anthropic`` extra).

Templates invite memorisation, so a model may reword each question. It is a ready
``prose`` callable for :func:`groundeval.questions.generate.generate`: the generator
hands it answer-neutral scaffolding, and whatever text it returns still goes through
the generator's own leakage check (answer-side ids and ground-truth vocabulary), with
``PROSE_ATTEMPTS`` tries before the template is kept; ``meta.text_source`` records which.

What the model is sent (never the label, the truth, the bucket or an answer-side id):
the track, the template's question text (answer-neutral by construction: one wording
serves "yes" and "no"), the actor and as-of where the template shows them, the subject
reference texts, the phrases to keep verbatim, a style, and on a retry the reasons the
previous attempt was rejected.

What :func:`check_prose` demands of every reply, on top of the generator's check:

* 15–80 words, one question ending with ``?``;
* every subject reference text verbatim (so the uniqueness guarantee of
  ``subjects.py`` holds: the words that name exactly one event are all there), the
  actor and the as-of verbatim where the template shows them, and every other slot
  the template fills without a reference (a gap, a response type, a hint) verbatim;
* nothing the template does not show: no token with a digit (ids, dates, counts), no
  event or artifact id, actor, role, subsystem or event-type name of the pack that is
  not in the template text;
* none of the leakage validator's answer-leaking phrases and no normative or
  answer-hinting phrase (:data:`NORMATIVE_PHRASES`) the template does not use;
* no circular counterfactual (the effect reference must say something the cause's does not).

Replies are cached by the sha256 of (what is sent, model, seed, attempt) under the cache
dir — ``prose_cache`` / ``--prose-cache``, else ``$GROUNDEVAL_CACHE_DIR/prose``, else
``$XDG_CACHE_HOME/groundeval/prose``, else ``~/.cache/groundeval/prose`` — so a re-run
writes byte-identical questions without calling the provider.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import GroundevalError
from ..questions.leakage import circular, leaks

PROMPT_VERSION = "1"
MIN_WORDS, MAX_WORDS = 15, 80
STYLES = ("plain and direct", "formal", "conversational", "concise, like a ticket comment")

SYSTEM_PROMPT = (
    "You reword one evaluation question at a time. Keep its meaning exactly: same actor, same "
    "date, same events, same question. Copy every phrase listed under 'keep verbatim' character "
    "for character. Do not add names, ids, dates, numbers, systems, teams or any fact that is not "
    "in the question, do not hint at the answer, do not judge anyone, and do not answer. Reply with "
    f"the reworded question only: one sentence of {MIN_WORDS} to {MAX_WORDS} words ending with '?'."
)

# Normative or answer-hinting wording a question must not add (matched as whole words,
# case-insensitively); the leakage validator's LEAKING_PHRASES are checked as well.
NORMATIVE_PHRASES = (
    "should",
    "should have",
    "ought",
    "must have",
    "failed to",
    "neglected",
    "forgot",
    "obviously",
    "clearly",
    "surely",
    "of course",
    "definitely",
    "certainly",
    "no doubt",
    "as expected",
    "predictably",
    "unfortunately",
    "fortunately",
    "blame",
    "at fault",
    "mistake",
    "negligent",
    "negligence",
    "properly",
    "correctly",
    "wrongly",
    "rightly",
    "answer",
    "hint",
    "trick",
    "spoiler",
    "yes or no",
    "true or false",
    "no access",
    "had access",
    "lacked access",
    "without access",
    "not allowed",
    "not permitted",
    "permission",
    "permissions",
    "restricted",
    "restriction",
    "confidential",
    "private",
    "secret",
    "blocked",
    "forbidden",
    "not yet",
    "had not yet",
    "already",
    "too early",
    "too late",
    "in advance",
    "beforehand",
    "later on",
    "never",
    "nobody",
    "no one",
    "nothing",
    "missing",
    "absent",
    "absence",
    "silence",
    "silent",
    "ignored",
    "skipped",
    "overlooked",
    "causal",
    "caused",
    "because",
    "therefore",
    "consequently",
    "as a result",
    "coincidence",
    "coincidental",
    "unrelated",
    "independent",
    "mechanism",
)

_TOKEN = re.compile(r"[\w-]+")
_QUOTES = ('""', "''", "``", "\u201c\u201d", "\u2018\u2019", "**")


def _canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _sha(data: Any) -> str:
    return hashlib.sha256(_canonical(data).encode("utf-8")).hexdigest()


def _tokens(text: str) -> list[str]:
    return [t.strip("-") for t in _TOKEN.findall(text.lower()) if t.strip("-")]


def _phrase_re(phrases: Iterable[str]) -> re.Pattern[str]:
    terms = sorted({p for p in phrases if p}, key=lambda p: (-len(p), p))
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(t) for t in terms) + r")(?![\w-])", re.IGNORECASE)


_NORMATIVE = _phrase_re(NORMATIVE_PHRASES)


class NameIndex:
    """The pack's names a question must not add: event and artifact ids, actors (ids and
    display names), roles, subsystems and event types (as the text shows them). Matched as
    whole token sequences, case-insensitively."""

    def __init__(self, names: dict[str, Iterable[str]] | None = None):
        self._first: dict[str, set[tuple[str, ...]]] = {}
        self.kind: dict[tuple[str, ...], str] = {}
        for kind, values in sorted((names or {}).items()):
            for v in values:
                toks = tuple(_tokens(str(v)))
                if toks:
                    self._first.setdefault(toks[0], set()).add(toks)
                    self.kind.setdefault(toks, kind)

    @classmethod
    def from_store(cls, store: Any) -> "NameIndex":
        from ..questions.sql import pack_names
        from ..questions.text import humanize

        names = pack_names(store)
        names["event type"] = [humanize(t) for t in names["event type"]]
        return cls(names)

    def found(self, text: str) -> set[tuple[str, ...]]:
        toks = _tokens(text)
        out = set()
        for i, t in enumerate(toks):
            for cand in self._first.get(t, ()):
                if tuple(toks[i : i + len(cand)]) == cand:
                    out.add(cand)
        return out


def required_phrases(request: dict[str, Any]) -> list[str]:
    """What a reworded question must show verbatim: the subject reference texts, the actor
    and as-of where the template shows them, and every other slot the template fills that
    holds no reference (a gap, a response type, a hint). A request without ``references``
    (an older generator or a custom track) keeps every slot verbatim."""
    slots = {k: str(v) for k, v in (request.get("slots") or {}).items()}
    refs = [str(r) for r in request.get("references") or [] if str(r).strip()]
    keep = list(refs)
    for key in sorted(slots):
        value = slots[key].strip().strip("()").strip()
        if not value:
            continue
        if refs and any(r in slots[key] for r in refs):
            continue  # its reference is kept; the words around it may be reworded
        keep.append(value)
    out: list[str] = []
    for p in keep:
        if p not in out:
            out.append(p)
    return out


def clean(text: str) -> str:
    """The model's reply as question text: one line, no wrapping quotes or label."""
    text = " ".join(str(text).split())
    changed = True
    while changed and text:
        changed = False
        for label in ("Question:", "Reworded question:", "Rewritten question:"):
            if text.lower().startswith(label.lower()):
                text, changed = text[len(label) :].strip(), True
        for q in _QUOTES:
            a, b = q[: len(q) // 2], q[len(q) // 2 :]
            if text.startswith(a) and text.endswith(b) and len(text) > len(q):
                text, changed = text[len(a) : len(text) - len(b)].strip(), True
    return text


def _shown(phrase: str) -> re.Pattern[str]:
    """``phrase`` exactly, not as part of a longer word or id (``bob`` is not in ``dm-bob-alice``)."""
    left = r"(?<![\w-])" if re.match(r"[\w-]", phrase[:1]) else ""
    right = r"(?![\w-])" if re.match(r"[\w-]", phrase[-1:]) else ""
    return re.compile(left + re.escape(phrase) + right)


def check_prose(text: str, request: dict[str, Any], names: NameIndex | None = None) -> list[str]:
    """Reasons the reworded question is rejected (empty when it is accepted), each
    ``"<kind>: <detail>"`` with kind one of ``length``, ``form``, ``missing``, ``leak``,
    ``normative``, ``adds``, ``circular``. The generator then applies its own check
    (answer-side ids, ground-truth vocabulary) as well."""
    reasons: list[str] = []
    template = str(request.get("text") or "")
    words = len(text.split())
    if not MIN_WORDS <= words <= MAX_WORDS:
        reasons.append(f"length: {words} words (needs {MIN_WORDS}-{MAX_WORDS})")
    if not text.endswith("?"):
        reasons.append("form: not one question ending with '?'")
    keep = required_phrases(request)
    for phrase in keep:
        if not _shown(phrase).search(text):
            reasons.append(f"missing: does not keep {phrase!r} verbatim")
    # what is left once the kept phrases are taken out: it may show nothing the template does not
    rest = text
    for phrase in sorted(keep, key=len, reverse=True):
        rest = _shown(phrase).sub(" ", rest)
    reasons += [f"leak: {r}" for r in leaks(rest)]
    shown = {m.lower() for m in _NORMATIVE.findall(template)}
    for m in sorted({m.lower() for m in _NORMATIVE.findall(rest)} - shown):
        reasons.append(f"normative: normative or answer-hinting phrase {m!r}")
    extra = names.found(rest) - names.found(template) if names is not None else set()
    for toks in sorted(extra):
        reasons.append(f"adds: the {names.kind[toks]} {' '.join(toks)!r} (not in the question)")
    named = {toks[0] for toks in extra if len(toks) == 1}
    template_tokens = set(_tokens(template))
    for tok in sorted({t for t in _tokens(rest) if any(c.isdigit() for c in t)} - template_tokens - named):
        reasons.append(f"adds: {tok!r} (a number, date or id the question does not show)")
    refs = [str(r) for r in request.get("references") or []]
    if len(refs) >= 2 and _distinct_references(request.get("track")) and circular(refs[0], refs[1]):
        reasons.append("circular: the effect restates the premise")
    return reasons


def _distinct_references(track: Any) -> bool:
    """Whether the track names two events that must not restate each other (``Track.distinct_references``)."""
    from ..tracks import get, is_registered

    return is_registered(track) and get(track).distinct_references


def default_cache_dir() -> Path:
    """``$GROUNDEVAL_CACHE_DIR/prose``, else ``$XDG_CACHE_HOME/groundeval/prose``, else
    ``~/.cache/groundeval/prose``."""
    from ..runtime.question_cache import default_cache_dir as base

    return base() / "prose"


class ReplyCache:
    """Model replies on disk, one JSON file per sha256 key (``<dir>/<key[:2]>/<key>.json``),
    written atomically. A file that cannot be read is a miss; one that cannot be written is
    counted and skipped (the run goes on)."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        self.write_errors = 0

    def path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            data = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("key") == key else None

    def put(self, key: str, record: dict[str, Any]) -> None:
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps({**record, "key": key}, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
            os.replace(tmp, path)
        except OSError:
            self.write_errors += 1


@dataclass
class ProseStats:
    """What a :class:`ProseWriter` did: requests sent, cache hits, replies it accepted and why
    it rejected the others (the generator may still reject an accepted one)."""

    requests: int = 0
    cache_hits: int = 0
    accepted: int = 0
    rejected: int = 0
    provider_errors: int = 0
    reasons: Counter = field(default_factory=Counter)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "cache_hits": self.cache_hits,
            "accepted": self.accepted,
            "rejected": self.rejected,
            "provider_errors": self.provider_errors,
            "reasons": dict(sorted(self.reasons.items())),
        }


class ProseRejected(GroundevalError):
    """A reply the validator rejected (the generator then tries again, then keeps the template)."""


class ProseWriter:
    """The ``prose`` callable for :func:`~groundeval.questions.generate.generate`.

    ``model``: a :class:`~groundeval.agents.complete.TextModel` (or any object with
    ``name`` and ``complete(system, user)`` returning an object with ``text``, or a string).
    ``seed`` is the generation seed (part of the cache key). ``names``: the pack's names
    (:meth:`NameIndex.from_store`) a question must not add. A provider error that cannot go
    away (bad key, unknown model, unreachable server) stops further requests: every later
    question keeps its template and ``fatal`` holds the error."""

    def __init__(
        self,
        model: Any,
        *,
        seed: int,
        cache_dir: str | Path | None = None,
        names: NameIndex | None = None,
        model_name: str | None = None,
    ):
        self.model = model
        self.model_name = model_name or getattr(model, "name", None) or repr(model)
        self.seed = seed
        self.cache = ReplyCache(cache_dir if cache_dir is not None else default_cache_dir())
        self.names = names
        self.stats = ProseStats()
        self.fatal: Exception | None = None
        self._attempts: Counter = Counter()
        self._last: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    # -- the request sent ---------------------------------------------------------------------

    def scaffolding(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer-neutral facts the model sees (never the label or the truth)."""
        slots = request.get("slots") or {}
        data: dict[str, Any] = {
            "track": request.get("track"),
            "question": request.get("text"),
            "subject_references": list(request.get("references") or []),
            "keep_verbatim": required_phrases(request),
        }
        if "actor" in slots:
            data["actor"] = slots["actor"]
        if "as_of" in slots:
            data["as_of"] = slots["as_of"]
        pick = int(_sha({"seed": self.seed, "question": data["question"]}), 16) % len(STYLES)
        data["style"] = STYLES[pick]
        return data

    @staticmethod
    def user_prompt(scaffolding: dict[str, Any], previous: list[str] | None) -> str:
        lines = [
            "Reword this question in a " + scaffolding["style"] + " style.",
            "",
            "Question: " + str(scaffolding["question"]),
        ]
        if scaffolding.get("actor"):
            lines.append("Actor (keep as written): " + str(scaffolding["actor"]))
        if scaffolding.get("as_of"):
            lines.append("As of (keep as written): " + str(scaffolding["as_of"]))
        lines += ["", "Keep verbatim:"] + [f"- {p}" for p in scaffolding["keep_verbatim"]]
        if previous:
            lines += ["", "Your previous wording was rejected:"] + [f"- {r}" for r in previous]
        return "\n".join(lines)

    # -- the callable -------------------------------------------------------------------------

    def __call__(self, request: dict[str, Any]) -> str:
        from ..errors import ProviderError

        scaffold = self.scaffolding(request)
        base = _sha(scaffold)
        with self._lock:
            attempt = self._attempts[base]
            self._attempts[base] += 1
            previous = self._last.get(base) if attempt else None
        user = self.user_prompt(scaffold, previous)
        key = _sha(
            {
                "prompt_version": PROMPT_VERSION,
                "system": SYSTEM_PROMPT,
                "user": user,
                "scaffolding": scaffold,
                "model": self.model_name,
                "seed": self.seed,
                "attempt": attempt,
            }
        )
        hit = self.cache.get(key)
        if hit is not None and isinstance(hit.get("text"), str):
            self.stats.cache_hits += 1
            raw = hit["text"]
        else:
            if self.fatal is not None:
                raise ProseRejected(f"provider stopped: {self.fatal}")
            self.stats.requests += 1
            try:
                reply = self.model.complete(SYSTEM_PROMPT, user)
            except ProviderError as exc:
                self.stats.provider_errors += 1
                if exc.fatal:
                    self.fatal = exc
                raise
            raw = reply if isinstance(reply, str) else str(getattr(reply, "text", "") or "")
            self.cache.put(
                key,
                {"model": self.model_name, "seed": self.seed, "attempt": attempt, "scaffolding": scaffold, "text": raw},
            )
        text = clean(raw)
        reasons = check_prose(text, request, self.names)
        with self._lock:
            # a retry after an accepted reply means the generator's own check rejected it
            self._last[base] = reasons or ["it gave the answer away or named something the question must not"]
        if reasons:
            self.stats.rejected += 1
            self.stats.reasons.update({r.split(":")[0] for r in reasons})
            raise ProseRejected("; ".join(reasons))
        self.stats.accepted += 1
        return text


def prose_writer(
    spec: str,
    *,
    store: Any,
    seed: int | None = None,
    cache_dir: str | Path | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    temperature: float | None = 0.7,
    max_tokens: int | None = 300,
    timeout: float | None = None,
    retries: int | None = None,
) -> ProseWriter:
    """A :class:`ProseWriter` over ``provider:model`` for the pack open in ``store``
    (``seed``: the generation seed, default the pack's)."""
    from ..agents.complete import text_model

    model = text_model(
        spec,
        option="--prose",
        base_url=base_url,
        api_key_env=api_key_env,
        temperature=temperature,
        max_tokens=max_tokens,
        timeout=timeout,
        retries=retries,
    )
    seed = store.manifest.evaluation.seed if seed is None else seed
    return ProseWriter(model, seed=seed, cache_dir=cache_dir, names=NameIndex.from_store(store))


def generate_with_prose(
    store: Any,
    prose: str | ProseWriter,
    *,
    seed: int | None = None,
    cache_dir: str | Path | None = None,
    **model_opts: Any,
):
    """``generate(store, seed=seed, prose=...)`` with a model's prose: returns the question set
    and the writer (its ``stats``). A provider error that stops all requests (bad key, unknown
    model, unreachable server) raises a one-line :class:`~groundeval.errors.UsageError` instead of quietly
    keeping every template."""
    from ..errors import UsageError
    from ..questions.generate import generate

    seed = store.manifest.evaluation.seed if seed is None else seed
    writer = (
        prose
        if isinstance(prose, ProseWriter)
        else prose_writer(prose, store=store, seed=seed, cache_dir=cache_dir, **model_opts)
    )
    try:
        qs = generate(store, seed=seed, prose=writer)
    finally:
        close: Callable[[], None] | None = getattr(writer.model, "close", None)
        if close is not None:
            close()
    if writer.fatal is not None:
        raise UsageError.single("--prose", f"{writer.model_name}: {writer.fatal}")
    return qs, writer


__all__ = [
    "MIN_WORDS",
    "MAX_WORDS",
    "NORMATIVE_PHRASES",
    "NameIndex",
    "ProseRejected",
    "ProseStats",
    "ProseWriter",
    "ReplyCache",
    "check_prose",
    "clean",
    "default_cache_dir",
    "generate_with_prose",
    "prose_writer",
    "required_phrases",
]
