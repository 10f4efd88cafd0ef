"""Shortcut audit: how well answer-blind strategies answer a question set, per track.

A set is only informative when none of these beats a coin by much:

* **trivial** (in-sample, an upper bound for any strategy that reads only that surface
  feature): always yes, always no, the majority label per actor, per event type and
  per template;
* **learned** (held-out, k-fold cross-validation): a multinomial naive Bayes over the
  question *text* alone, and the majority label per (event type, template);
* **shared identifier**: "yes" iff the text repeats an id-like token or shows two
  id-like tokens with the same number (the shape of a counterfactual whose premise and
  effect name one incident). A rule that is reliably wrong is as informative as one
  that is right, so its score is the better of its accuracy and 1 - accuracy.

Everything is a pure function of the questions: folds come from a SHA-256 of the
question id (never ``hash()`` or input order), questions are processed in id order,
and floats are rounded to 4 places, so the audit is byte-identical whatever the
question order or ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter, defaultdict
from typing import Any, Callable, Hashable, Iterable, Sequence

from ..tracks import get as get_track
from .model import Question

TRIVIAL = ("always_yes", "always_no", "majority_per_actor", "majority_per_event_type", "majority_per_template")
STRATEGIES = TRIVIAL  # kept name: the fixed strategies
LEARNED = ("naive_bayes", "majority_per_event_type_template")
RULES = ("shared_identifier",)
ALL_STRATEGIES = TRIVIAL + LEARNED + RULES

FOLDS = 5
LOO_BELOW = 25  # fewer questions than this: leave-one-out instead of k-fold

_WORD = re.compile(r"[a-z0-9]+")
_CANDIDATE = re.compile(r"[A-Za-z0-9]+(?:[-_./][A-Za-z0-9]+)*")
_LETTER = re.compile(r"[A-Za-z]")
_DIGITS = re.compile(r"[0-9]+")


def label_of(q: Question) -> bool:
    """The question's yes/no answer, as its track reads it off the truth."""
    return get_track(q.ground_truth.track).label(q.ground_truth)


# --------------------------------------------------------------------------- text features


def id_tokens(text: str) -> list[str]:
    """Id-like tokens in order: runs of letters/digits (joined by ``-_./``) holding at least
    one letter and one digit — ``INC-42``, ``CRM-1001``, ``v1.1``, ``e7``. Pure numbers
    (dates, times, counts) are not identifiers."""
    return [t for t in _CANDIDATE.findall(text) if _LETTER.search(t) and _DIGITS.search(t)]


def id_shape(token: str) -> str:
    """``INC-00679`` -> ``AAA-99999``: letters to A, digits to 9, separators kept."""
    return "".join("9" if c.isdigit() else "A" if c.isalpha() else c for c in token)


def _numeric_part(token: str) -> tuple[str, ...]:
    return tuple(str(int(d)) for d in _DIGITS.findall(token))


def shares_identifier(text: str) -> bool:
    """True iff the text names some id-like token twice (case-insensitive) or two id-like
    tokens with the same numeric part (``INC-42`` and ``PM-42``)."""
    seen: set[str] = set()
    numbers: dict[tuple[str, ...], str] = {}
    for tok in id_tokens(text):
        key = tok.upper()
        if key in seen:
            return True
        seen.add(key)
        num = _numeric_part(tok)
        if num in numbers:
            return True
        numbers[num] = key
    return False


def text_features(text: str) -> list[str]:
    """Lowercased word unigrams and bigrams, plus the shape of each id-like token."""
    words = _WORD.findall(text.lower())
    feats = [f"w:{w}" for w in words]
    feats += [f"b:{a} {b}" for a, b in zip(words, words[1:])]
    feats += [f"s:{id_shape(t)}" for t in id_tokens(text)]
    return feats


# --------------------------------------------------------------------------- strategies


def _majority(items: list[tuple[Any, bool]]) -> float:
    groups: dict[Any, Counter] = defaultdict(Counter)
    for key, label in items:
        groups[key][label] += 1
    return sum(max(c.values()) for c in groups.values()) / len(items)


def _fold_of(qid: str, k: int) -> int:
    return int(hashlib.sha256(qid.encode("utf-8")).hexdigest()[:16], 16) % k


def folds(qs: Sequence[Question], k: int = FOLDS, loo_below: int = LOO_BELOW) -> list[int]:
    """Fold index per question (``qs`` in canonical order): leave-one-out below
    ``loo_below`` questions, else ``k`` folds from a SHA-256 of the question id."""
    if len(qs) < loo_below:
        return list(range(len(qs)))
    return [_fold_of(q.id, k) for q in qs]


def _pick(scores: dict[bool, float], fallback: bool) -> bool:
    if scores[True] == scores[False]:
        return fallback
    return scores[True] > scores[False]


def _fallback(labels: Counter) -> bool:
    """The training majority label; a tie answers yes."""
    return labels[True] >= labels[False]


def naive_bayes_cv(docs: Sequence[list[str]], labels: Sequence[bool], fold: Sequence[int]) -> float:
    """Held-out accuracy of a multinomial naive Bayes (Laplace smoothing on prior and
    likelihood; features unseen in training are ignored)."""
    total: dict[bool, Counter] = {True: Counter(), False: Counter()}
    for d, y in zip(docs, labels):
        total[y].update(d)
    by_fold: dict[int, list[int]] = defaultdict(list)
    for i, f in enumerate(fold):
        by_fold[f].append(i)
    correct = 0
    for f in sorted(by_fold):
        held = by_fold[f]
        counts = {c: total[c].copy() for c in (True, False)}
        n_class = Counter(labels)
        for i in held:
            counts[labels[i]].subtract(docs[i])
            n_class[labels[i]] -= 1
        n_train = n_class[True] + n_class[False]
        vocab = {w for c in (True, False) for w, n in counts[c].items() if n > 0}
        size = {c: sum(n for n in counts[c].values() if n > 0) for c in (True, False)}
        fallback = _fallback(n_class)
        for i in held:
            scores = {}
            for c in (True, False):
                s = math.log((n_class[c] + 1) / (n_train + 2))
                denom = size[c] + len(vocab)
                for w in docs[i]:
                    if w in vocab:
                        s += math.log((counts[c][w] + 1) / denom)
                scores[c] = s
            correct += _pick(scores, fallback) == labels[i]
    return correct / len(docs)


def grouped_majority_cv(keys: Sequence[Hashable], labels: Sequence[bool], fold: Sequence[int]) -> float:
    """Held-out accuracy of the training majority label per key (unseen or tied key:
    the overall training majority)."""
    by_fold: dict[int, list[int]] = defaultdict(list)
    for i, f in enumerate(fold):
        by_fold[f].append(i)
    correct = 0
    for f in sorted(by_fold):
        held = set(by_fold[f])
        groups: dict[Hashable, Counter] = defaultdict(Counter)
        overall: Counter = Counter()
        for i, (k, y) in enumerate(zip(keys, labels)):
            if i not in held:
                groups[k][y] += 1
                overall[y] += 1
        fallback = _fallback(overall)
        for i in sorted(held):
            g = groups.get(keys[i])
            guess = fallback if not g or g[True] == g[False] else g[True] > g[False]
            correct += guess == labels[i]
    return correct / len(labels)


def _rule_accuracy(rule: Callable[[str], bool], qs: Sequence[Question], labels: Sequence[bool]) -> float:
    return sum(rule(q.text) == y for q, y in zip(qs, labels)) / len(qs)


# --------------------------------------------------------------------------- the audit


def _r(x: float) -> float:
    return round(x, 4)


def audit_track(qs: Sequence[Question], *, k: int = FOLDS, loo_below: int = LOO_BELOW) -> dict[str, Any]:
    """The audit row of one track's questions (any order)."""
    qs = sorted(qs, key=lambda q: (q.id, q.text, label_of(q), q.model_dump_json()))
    labels = [label_of(q) for q in qs]
    n = len(qs)
    yes = sum(labels) / n
    row: dict[str, Any] = {
        "questions": n,
        "always_yes": _r(yes),
        "always_no": _r(1 - yes),
        "majority_per_actor": _r(_majority([(q.actor, y) for q, y in zip(qs, labels)])),
        "majority_per_event_type": _r(_majority([(q.meta.get("event_type"), y) for q, y in zip(qs, labels)])),
        "majority_per_template": _r(_majority([(q.template_id, y) for q, y in zip(qs, labels)])),
    }
    row["best_trivial"] = max(row[s] for s in TRIVIAL)
    fold = folds(qs, k, loo_below)
    row["cv"] = "leave-one-out" if n < loo_below else f"{k}-fold"
    row["naive_bayes"] = _r(naive_bayes_cv([text_features(q.text) for q in qs], labels, fold))
    row["majority_per_event_type_template"] = _r(
        grouped_majority_cv([(str(q.meta.get("event_type")), q.template_id) for q in qs], labels, fold)
    )
    row["best_learned"] = max(row[s] for s in LEARNED)
    acc = _rule_accuracy(shares_identifier, qs, labels)
    row["shared_identifier_accuracy"] = _r(acc)
    row["shared_identifier_flipped"] = _r(1 - acc)
    row["shared_identifier"] = max(row["shared_identifier_accuracy"], row["shared_identifier_flipped"])
    row["best_shortcut"] = max(row[s] for s in ALL_STRATEGIES)
    row["best_strategy"] = next(s for s in ALL_STRATEGIES if row[s] == row["best_shortcut"])
    return row


def shortcut_audit(questions: Iterable[Question], *, k: int = FOLDS, loo_below: int = LOO_BELOW) -> dict[str, Any]:
    """Audit rows per track (sorted by track name)."""
    by_track: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_track[q.track].append(q)
    return {track: audit_track(by_track[track], k=k, loo_below=loo_below) for track in sorted(by_track)}


def shortcut_problems(
    audit: dict[str, Any], *, limit: float = 0.60, min_questions: int = 30, floor: dict[str, float] | None = None
) -> list[tuple[str, str, dict[str, Any]]]:
    """Tracks whose best shortcut beats the bar: ``(track, "over" | "too_few", row)``.

    The bar of a track is ``limit``, raised to the share of the majority label the
    configuration requests (``floor``), since a requested skew is not a text shortcut.
    ``too_few``: over the bar but with fewer than ``min_questions`` questions.
    """
    out = []
    for track in sorted(audit):
        row = audit[track]
        if not isinstance(row, dict) or not row.get("questions") or "best_shortcut" not in row:
            continue
        bar = max(limit, (floor or {}).get(track, 0.0))
        if row["best_shortcut"] > bar + 1e-9:
            out.append((track, "over" if row["questions"] >= min_questions else "too_few", dict(row, bar=bar)))
    return out
