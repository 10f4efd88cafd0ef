"""``groundeval tools`` (tool declarations) and ``groundeval serve`` (the MCP server)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import ContractError


@click.command()
@click.option("--format", "fmt", type=click.Choice(["openai", "anthropic", "mcp"]), default="openai",
              show_default=True, help="Which agent stack's tool format to print.")
def tools(fmt: str) -> None:
    """Print the tool declarations (search_artifacts, fetch_artifact, submit_answer) as JSON."""
    from ..runtime.tools import tool_specs

    click.echo(json.dumps(tool_specs(fmt), indent=2, sort_keys=True))


def load_questions(path: Path):
    """Questions from a ``questions.json`` file (the generator's format)."""
    try:
        from ..questions.io import read_questions
    except ImportError:  # the questions area's reader is optional here
        read_questions = None
    if read_questions is not None:
        return read_questions(path).questions
    from pydantic import ValidationError

    from ..questions.model import QuestionSet

    try:
        return QuestionSet.model_validate_json(path.read_text(encoding="utf-8")).questions
    except (OSError, ValidationError) as exc:
        raise ContractError.single(str(path), f"not a questions file: {str(exc).splitlines()[0]}") from None


@click.command()
@click.argument("pack", type=click.Path(exists=True, path_type=Path))
@click.option("--questions", "questions_path", required=True, type=click.Path(exists=True, dir_okay=False,
              path_type=Path), help="questions.json to serve.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address (loopback by default).")
@click.option("--port", default=8765, show_default=True, type=int, help="HTTP port.")
@click.option("--traces", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Append each finished episode's trace to this JSONL file.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Reuse or create a DuckDB file for the pack.")
@click.option("--max-steps", default=30, show_default=True, type=click.IntRange(1, 10000))
def serve(pack: Path, questions_path: Path, transport: str, host: str, port: int, traces: Path | None,
          db: Path | None, max_steps: int) -> None:
    """Serve PACK's questions over MCP: list questions, start episodes, search, fetch, submit."""
    import anyio

    from ..runtime.mcp_server import EpisodeHub, serve_http, serve_stdio
    from ..store.store import Store

    questions = load_questions(questions_path)
    store = Store.open(pack, db=db)
    hub = EpisodeHub(store, questions, traces=traces, max_steps=max_steps)
    if transport == "stdio":
        anyio.run(serve_stdio, hub)
    else:
        click.echo(f"groundeval MCP server on http://{host}:{port}/mcp ({len(questions)} questions)", err=True)
        anyio.run(serve_http, hub, host, port)
