"""The simulated user: the :class:`UserSimulator` protocol, the deterministic simulator, and the
check of anything a simulator says against its task.

The deterministic simulator plays a task from its script with no model, so an episode is
byte-reproducible. On each agent message, in this order: answers a request for confirmation of
a write it knows (yes for ``confirms``, no for ``declines``); reveals every fact the message asks
for (by key, humanised key or alias) as ``key: value`` lines; ends the conversation
(:data:`~groundeval.worlds.model.STOP`) when the agent says it is done; otherwise repeats its
goal once, then ends.
"""

from __future__ import annotations

import re
from typing import Any, Protocol, runtime_checkable

from ..tasks.score import canonical_json
from .model import STOP, WorldMessage, WorldTask
from .tools import humanise

__all__ = [
    "DeterministicUser",
    "UserSession",
    "UserSimulator",
    "asked_confirmation",
    "fact_text",
    "is_yes",
    "statement_errors",
]

CONFIRM_WORDS = ("confirm", "proceed", "shall i", "should i", "do you want me to", "may i", "go ahead")
DONE_WORDS = ("anything else",)


@runtime_checkable
class UserSession(Protocol):
    """One conversation."""

    def reply(self, message: WorldMessage) -> str: ...


@runtime_checkable
class UserSimulator(Protocol):
    name: str

    def session(self, task: WorldTask, write_tools: list[str] | dict[str, list[str]]) -> UserSession:
        """``write_tools``: the world's write tools, or a map of each to its ``confirm_phrases``."""
        ...


def _norm(text: str) -> str:
    return " ".join(text.casefold().replace("_", " ").split())


def _mentions(text: str, phrase: str) -> bool:
    p = _norm(phrase)
    return bool(p) and re.search(r"(?<![0-9a-z])" + re.escape(p) + r"(?![0-9a-z])", text) is not None


def _loose(phrase: str) -> re.Pattern[str]:
    """The phrase's words in order, up to two other words between them ("cancel your order"
    for "cancel order"); ``...`` in a phrase allows up to six."""
    parts = []
    for w in _norm(phrase).split():
        if w == "...":
            parts.append(None)
        else:
            parts.append(re.escape(w))
    out, gap = "", r"(?:\s+\S+){0,2}\s+"
    for i, p in enumerate(parts):
        if p is None:
            gap = r"(?:\s+\S+){0,6}\s+"
            continue
        out += (gap if i and out else "") + p
        gap = r"(?:\s+\S+){0,2}\s+"
    return re.compile(r"(?<![0-9a-z])" + out + r"(?![0-9a-z])")


def asked_confirmation(message: WorldMessage, write_tools: list[str] | dict[str, list[str]]) -> str | None:
    """The write tool an agent message asks the user to confirm, or None. ``write_tools`` may
    map each tool to its ``confirm_phrases``."""
    if message.confirm is not None:
        return message.confirm.tool
    text = _norm(message.text)
    if not any(w in text for w in CONFIRM_WORDS):
        return None
    phrases = write_tools if isinstance(write_tools, dict) else {}
    for tool in sorted(write_tools, key=lambda t: (-len(t), t)):
        names = [tool, humanise(tool), *phrases.get(tool, [])]
        if any(_loose(n).search(text) for n in names):
            return tool
    return None


def fact_text(key: str, value: Any) -> str:
    return f"{key}: {value if isinstance(value, str) else canonical_json(value)}"


def is_yes(text: str) -> bool:
    """The reply starts with the word "yes" ("Yesterday ..." is no yes)."""
    return re.match(r"yes\b", _norm(text)) is not None


class _Session:
    def __init__(self, task: WorldTask, write_tools: list[str] | dict[str, list[str]]):
        self.task = task
        phrases = write_tools if isinstance(write_tools, dict) else {}
        names = sorted(set(write_tools) | set(task.user.confirms) | set(task.user.declines))
        self.write_tools = {t: list(phrases.get(t, [])) for t in names}
        self.repeated = False

    def reply(self, message: WorldMessage) -> str:
        u = self.task.user
        tool = asked_confirmation(message, self.write_tools)
        if tool is not None and tool in u.confirms:
            return "yes"
        if tool is not None and tool in u.declines:
            return "no"
        text = _norm(message.text)
        lines = []
        for key, value in u.facts.items():
            names = [key, humanise(key), *u.fact_aliases.get(key, [])]
            if any(_mentions(text, n) for n in names):
                lines.append(fact_text(key, value))
        if lines:
            return "\n".join(lines)
        if message.done or any(w in text for w in DONE_WORDS):
            return STOP
        if not self.repeated:
            self.repeated = True
            return u.goal or u.opening
        return STOP


class DeterministicUser:
    """The default simulator: plays the task's script; never says what the task does not."""

    name = "deterministic"

    def session(self, task: WorldTask, write_tools: list[str] | dict[str, list[str]]) -> UserSession:
        return _Session(task, write_tools)


def statement_errors(task: WorldTask, reply: str, asked: str | None) -> list[str]:
    """What a user's reply says that its task does not support: a yes to a write the task does
    not confirm, a no to one it does not decline, a fact given with another value."""
    u = task.user
    out: list[str] = []
    if reply.strip() in (u.opening.strip(), (u.goal or u.opening).strip()):
        return out  # the script's own words
    text = _norm(reply)
    if asked is not None:
        if is_yes(text) and asked not in u.confirms:
            out.append(f"the user confirmed {asked}, which the task does not confirm")
        if re.match(r"no\b", text) and asked not in u.declines:
            out.append(f"the user declined {asked}, which the task does not decline")
    for key, given, want_text in wrong_facts(task, reply):
        out.append(f"the user gave {key} as {given!r}; the task says {want_text!r}")
    return out


def wrong_facts(task: WorldTask, reply: str) -> list[tuple[str, str, str]]:
    """``(key, value given, value the task says)`` for each ``key: value`` line of a user's
    reply naming one of its task's facts with another value."""
    u = task.user
    names = {}
    for key in u.facts:
        for n in [key, humanise(key), *u.fact_aliases.get(key, [])]:
            names[_norm(n)] = key
    out = []
    for line in reply.splitlines():
        m = re.match(r"^\s*([^:]{1,60}):\s*(.+?)\s*$", line)
        if m is None:
            continue
        key = names.get(_norm(m.group(1)))
        if key is None:
            continue
        want = u.facts[key]
        want_text = want if isinstance(want, str) else canonical_json(want)
        if _norm(m.group(2)) != _norm(str(want_text)):
            out.append((key, m.group(2), str(want_text)))
    return out


def provoked(task: WorldTask, reply: str, said: str) -> bool:
    """Whether a wrong fact of the user's ``reply`` is one the agent had already ``said``: a value
    put in the user's mouth (a leading question) is the agent's doing, not the user's error."""
    text = _norm(said)
    return any(_norm(given) in text for _, given, _ in wrong_facts(task, reply))
