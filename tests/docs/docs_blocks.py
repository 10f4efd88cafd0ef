"""Extract the fenced code blocks of the README and ``docs/*.md`` (see ``docs/README.md``
for the convention, repeated here):

* ```` ```python ```` and ```` ```bash ```` blocks are **run**, in order, in one temporary folder
  per page, with ``groundeval`` on ``PATH`` and the bundled packs available by name
  (``groundeval eval tiny``); a block fails on a non-zero exit. Python blocks run as a script
  in a fresh interpreter, bash blocks with ``bash -e -o pipefail``.
* ```` ```json ````, ```` ```jsonl ````, ```` ```yaml ```` and ```` ```toml ```` blocks are **parsed**.
* An HTML comment on the line just before the fence changes that:
  ``<!-- not-run: REASON -->`` skips the block (the reason is required and shown), and
  ``<!-- file: PATH -->`` writes the block to ``PATH`` in the page's folder instead of running
  it (later blocks use it: a module, a manifest, an events file).
* Untagged blocks and ```` ```text ```` are output, layouts or synopses: never run.
* Every Python block, run or not, must compile and use no undefined name.
"""

from __future__ import annotations

import builtins
import re
import symtable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

RUN = ("python", "bash")
PARSE = ("json", "jsonl", "yaml", "toml")
TEXT = ("", "text")
LANGUAGES = RUN + PARSE + TEXT

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
DIRECTIVE = re.compile(r"^<!--\s*(not-run|file)\s*:\s*(.*?)\s*-->$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    directive: str | None = None  # "not-run" | "file"
    argument: str = ""

    @property
    def where(self) -> str:
        page = self.page.relative_to(REPO) if self.page.is_relative_to(REPO) else self.page
        return f"{page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = [x.strip() for x in text[: m.start()].splitlines() if x.strip()]
        directive, argument = None, ""
        if before:
            d = DIRECTIVE.match(before[-1])
            if d:
                directive, argument = d.group(1), d.group(2)
        out.append(Block(page, line, m.group(1).lower(), m.group(2), directive, argument))
    return out


def undefined_names(code: str) -> list[str]:
    """Names a Python block reads but never defines, imports or gets from builtins."""
    if re.search(r"^\s*from\s+\S+\s+import\s+\*", code, re.M):
        return []
    table = symtable.symtable(code, "<doc block>", "exec")
    defined = {
        s.get_name()
        for s in table.get_symbols()
        if s.is_assigned() or s.is_imported() or s.is_namespace() or s.is_parameter()
    }
    known = defined | set(dir(builtins)) | {"__name__", "__file__"}
    missing: set[str] = set()

    def walk(t: symtable.SymbolTable, top: bool) -> None:
        for s in t.get_symbols():
            if not s.is_referenced():
                continue
            global_ref = (top and not (s.is_assigned() or s.is_imported() or s.is_namespace())) or (
                not top and s.is_global() and not s.is_declared_global()
            )
            if global_ref and s.get_name() not in known:
                missing.add(s.get_name())
        for child in t.get_children():
            walk(child, False)

    walk(table, True)
    return sorted(missing)
