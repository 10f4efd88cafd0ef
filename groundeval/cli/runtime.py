"""``groundeval tools`` (tool declarations) and ``groundeval serve`` (the MCP server)."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path

import click

from ..errors import ContractError, EpisodeInterrupt, UsageError
from .options import NumberRange, PackType, force_option, open_pack


@click.command()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["openai", "anthropic", "mcp"]),
    default="openai",
    show_default=True,
    help="Which agent stack's tool format to print.",
)
def tools(fmt: str) -> None:
    """Print the tool declarations (search_artifacts, fetch_artifact, submit_answer) as JSON."""
    from ..runtime.tools import tool_specs

    click.echo(json.dumps(tool_specs(fmt), indent=2, sort_keys=True))


def load_question_set(path: Path):
    """A ``questions.json`` file (the generator's format); bad bytes or fields are located errors."""
    from ..scoring.io import read_question_set

    return read_question_set(path)


def load_questions(path: Path):
    """The questions of a ``questions.json`` file."""
    return load_question_set(path).questions


TOKEN_ENV = "GROUNDEVAL_MCP_TOKEN"
MIN_TOKEN_CHARS = 16


def http_options(port: int):
    """The options of an MCP server served over HTTP (``groundeval serve``, ``worlds serve``):
    bind address and port, off-loopback consent, bearer tokens, extra Host/Origin names."""
    opts = [
        click.option(
            "--host",
            default="127.0.0.1",
            show_default=True,
            help="HTTP bind address. A non-loopback address needs --allow-remote and a token.",
        ),
        click.option("--port", default=port, show_default=True, type=int, help="HTTP port."),
        click.option(
            "--allow-remote", is_flag=True, help="Allow binding a non-loopback --host (needs a bearer token)."
        ),
        click.option(
            "--token-env",
            default=TOKEN_ENV,
            show_default=True,
            help="Environment variable holding the bearer token(s) HTTP clients must send (required off loopback, "
            "optional on it); several, separated by commas, are several principals: an episode answers only the "
            "token that started it.",
        ),
        click.option(
            "--allowed-host",
            "allowed_hosts",
            multiple=True,
            help="Extra Host header value to accept, e.g. eval.example.org:8765 or eval.example.org:* "
            "(loopback names are always accepted). Repeatable.",
        ),
        click.option(
            "--allowed-origin",
            "allowed_origins",
            multiple=True,
            help="Extra Origin header value to accept, e.g. https://eval.example.org. Repeatable.",
        ),
    ]

    def decorate(f):
        for opt in reversed(opts):
            f = opt(f)
        return f

    return decorate


def network_settings(host: str, allow_remote: bool, token_env: str) -> list[str] | None:
    """The bearer tokens to require (or None), refusing unsafe combinations with a clear error.

    A non-loopback address needs ``--allow-remote`` and at least one token (16 characters
    or more) in the environment variable ``token_env``; on loopback tokens are optional.
    Several tokens (separated by commas or spaces) are several principals: an episode
    started with one token cannot be driven with another."""
    import os
    import re

    from ..runtime.mcp_server import is_loopback

    tokens = [t for t in re.split(r"[,\s]+", os.environ.get(token_env, "")) if t] or None
    for t in tokens or ():
        if len(t) < MIN_TOKEN_CHARS:
            raise UsageError.single(f"${token_env}", f"a token is shorter than {MIN_TOKEN_CHARS} characters")
    if is_loopback(host):
        return tokens
    if not allow_remote:
        raise UsageError.single(
            "--host",
            f"{host} is not a loopback address: anyone who can reach it could "
            "run episodes. Pass --allow-remote and set a bearer token in "
            f"${token_env} to serve it",
        )
    if tokens is None:
        raise UsageError.single(
            "--host",
            f"serving {host} needs a bearer token: set ${token_env} "
            f"(at least {MIN_TOKEN_CHARS} characters; clients send "
            "'Authorization: Bearer <token>')",
        )
    return tokens


@click.command()
@click.argument("pack", type=PackType(Path))
@force_option
@click.option(
    "--questions",
    "questions_path",
    default=None,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="questions.json to serve (generated from PACK). Default: PACK's generated "
    "questions (--seed), cached (--questions-cache).",
)
@click.option(
    "--seed",
    type=int,
    default=None,
    help="Without --questions: the generator seed (default: the pack's evaluation seed).",
)
@click.option(
    "--questions-cache",
    "questions_cache",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Without --questions: the folder caching generated questions (default: "
    "$GROUNDEVAL_CACHE_DIR, else $XDG_CACHE_HOME/groundeval, else ~/.cache/groundeval).",
)
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio", show_default=True)
@http_options(port=8765)
@click.option(
    "--traces",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Append each finished episode's trace to this JSONL file (checked writable at start). Default: "
    "$GROUNDEVAL_TRACES_DIR, else $XDG_STATE_HOME/groundeval/traces, else ~/.local/state/groundeval/traces, "
    "in a file named by the pack, its digest and the questions (printed at start).",
)
@click.option("--no-traces", "no_traces", is_flag=True, help="Record nothing (traces are recorded by default).")
@click.option(
    "--resume-episodes",
    "resume_episodes",
    is_flag=True,
    help="stdio: at exit, keep the open episodes (in TRACES.open/) for the next server on the same traces "
    "file, which takes one back when a call names its id — for clients that start a server per call.",
)
@click.option(
    "--db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Reuse or create a DuckDB file for the pack.",
)
@click.option("--max-steps", default=30, show_default=True, type=click.IntRange(1, 10000))
@click.option(
    "--idle-timeout",
    default=1800.0,
    show_default=True,
    type=NumberRange(min=0, min_open=True),
    help="Seconds without a call after which an episode ends as 'abandoned' (and an HTTP session expires).",
)
@click.option(
    "--max-open-episodes",
    default=1000,
    show_default=True,
    type=click.IntRange(1),
    help="Episodes open at once; start_episode is refused beyond.",
)
def serve(
    pack: Path,
    force: bool,
    questions_path: Path | None,
    seed: int | None,
    questions_cache: Path | None,
    transport: str,
    host: str,
    port: int,
    allow_remote: bool,
    token_env: str,
    allowed_hosts: tuple[str, ...],
    allowed_origins: tuple[str, ...],
    traces: Path | None,
    no_traces: bool,
    resume_episodes: bool,
    db: Path | None,
    max_steps: int,
    idle_timeout: float,
    max_open_episodes: int,
) -> None:
    """Serve PACK's questions over MCP: list questions, start episodes, search, fetch, submit.

    Every finished episode's trace is appended to --traces (by default a file per pack and
    question set in the traces folder, printed at start). SIGTERM and SIGINT stop the server
    after writing the traces of the episodes still open."""
    _require_mcp(transport)
    _check_recording(transport, traces, no_traces, resume_episodes)
    from ..runtime.mcp_server import EpisodeHub

    tokens = network_settings(host, allow_remote, token_env) if transport == "http" else None
    if questions_path is not None and (seed is not None or questions_cache is not None):
        raise UsageError.single(
            "--questions",
            "--seed and --questions-cache apply only to generated questions: leave out --questions, or those options",
        )
    qs = load_question_set(questions_path) if questions_path is not None else None
    store = open_pack(pack, db=db, force=force)
    digest = store.digest
    if qs is None:
        from ..runtime.question_cache import cached_questions

        def note(message: str) -> None:
            click.echo(f"groundeval serve: {message}", err=True)

        served = cached_questions(store, seed=seed, cache_dir=questions_cache, report=note)
        qs = served.questions
        note(
            f"{len(qs.questions)} questions of {pack} (seed {qs.metadata.seed}), "
            + (
                f"{'read from' if served.hit else 'generated into'} the cache {served.path}"
                if served.path
                else "generated (not cached)"
            )
        )
    elif qs.metadata.contract_digest != digest:
        store.close()
        raise ContractError.single(
            str(questions_path),
            f"was generated from another contract (digest "
            f"{qs.metadata.contract_digest[:16]!r}; pack {pack} has {digest[:16]!r}); "
            "regenerate it with groundeval generate",
            field="metadata.contract_digest",
        )
    if traces is None and not no_traces:
        from ..runtime.question_cache import default_traces_path

        traces = default_traces_path(store, seed=qs.metadata.seed, questions_file=questions_path)
    hub = EpisodeHub(
        store,
        qs.questions,
        traces=traces,
        max_steps=max_steps,
        idle_timeout=idle_timeout,
        max_open=max_open_episodes,
        park=Path(f"{traces}.open") if resume_episodes and traces is not None else None,
    )
    if traces is not None:
        how = f" --questions {questions_path}" if questions_path is not None else f" --pack {pack}"
        click.echo(
            f"groundeval serve: recording traces in {traces} (score them: groundeval score {traces}{how})", err=True
        )
    else:
        click.echo("groundeval serve: --no-traces: episodes are not recorded", err=True)
    import sys

    network = dict(host=host, port=port, tokens=tokens, token_env=token_env)
    with stopped_by_signals() as stopped:
        try:
            _run(transport, hub, len(qs.questions), allowed_hosts, allowed_origins, **network)
        except BaseException as exc:
            if not _only_stopped(exc):
                raise
        finally:
            hub.close()  # idempotent: the transports close it too; this one also covers a stop mid-start
    code = 0
    if hub.unwritten:  # already reported one by one; the exit code says so too
        click.echo(f"error: {len(hub.unwritten)} episode trace(s) could not be written to {traces}", err=True)
        code = 1
    if stopped:
        import os

        kept = "parked for the next server" if resume_episodes else "written"
        click.echo(f"groundeval serve: stopped by signal {stopped[0]}; open episodes {kept}", err=True)
        store.close()
        sys.stdout.flush()
        sys.stderr.flush()
        # a stdio transport's reader may still block on stdin in a thread: do not wait for it
        os._exit(code or 128 + stopped[0])
    if code:
        sys.exit(code)


def _require_mcp(transport: str) -> None:
    """The mcp extra, or a one-line usage error (over stdio also answered to the client)."""
    from ..extras import install_command, missing_module

    missing = missing_module("mcp")
    if missing is not None:
        message = (
            f"groundeval serve: needs the 'mcp' extra (module '{missing}' is not installed): {install_command('mcp')}"
        )
        if transport == "stdio":
            tell_stdio_client(message)  # a host shows this, not "Connection closed"
        raise UsageError.single("groundeval serve", message.split(": ", 1)[1])


def _check_recording(transport: str, traces: Path | None, no_traces: bool, resume_episodes: bool) -> None:
    if traces is not None and no_traces:
        raise UsageError.single("--no-traces", "--traces names a file to record into: pass one or the other")
    if resume_episodes and (no_traces or transport != "stdio"):
        raise UsageError.single(
            "--resume-episodes",
            "keeps open episodes beside the traces file for the next stdio server: it needs --transport stdio "
            "and recorded traces (not --no-traces)",
        )


def _only_stopped(exc: BaseException) -> bool:
    """Whether ``exc`` is :class:`Stopped`, or a group (a task group's) holding only that."""
    if isinstance(exc, BaseExceptionGroup):
        return all(_only_stopped(e) for e in exc.exceptions)
    return isinstance(exc, Stopped)


def _run(transport, hub, n_questions, allowed_hosts, allowed_origins, *, host, port, tokens, token_env) -> None:
    import anyio
    from ..runtime.mcp_server import serve_http, serve_stdio

    if transport == "stdio":
        anyio.run(serve_stdio, hub)
    else:
        from ..runtime.mcp_server import is_loopback

        if not is_loopback(host):
            click.echo(
                f"WARNING: serving on {host}, reachable from other machines: every request must carry "
                f"the bearer token from ${token_env}; Host headers accepted: loopback"
                + (
                    f", {', '.join(allowed_hosts)}"
                    if allowed_hosts
                    else " only — add --allowed-host NAME:PORT for the name clients use"
                ),
                err=True,
            )
        click.echo(
            f"groundeval MCP server on http://{host}:{port}/mcp ({n_questions} questions"
            + (", bearer token required" if tokens else "")
            + ")",
            err=True,
        )

        async def main() -> None:
            await serve_http(
                hub, host, port, tokens=tokens, allowed_hosts=list(allowed_hosts), allowed_origins=list(allowed_origins)
            )

        anyio.run(main)


class Stopped(EpisodeInterrupt):
    """Raised in the main thread by SIGTERM or SIGINT while ``serve`` runs: it stops the
    server's episodes from outside (a BaseException, as KeyboardInterrupt is, so no
    ``except Exception`` on the way swallows it)."""


@contextmanager
def stopped_by_signals():
    """SIGTERM (Docker, systemd, hosts) and SIGINT both stop ``serve`` the same way: the
    signal raises :class:`Stopped` in the main thread, the transports unwind, and the open
    episodes' traces are written before the process exits 128 + the signal number. Yields
    a list that holds the signal number once one arrived."""
    import signal

    got: list[int] = []

    def stop(signum, _frame):
        if not got:
            got.append(signum)
            raise Stopped(signum)

    # uvicorn re-raises the signal it caught once it has shut down: by then this handler is back
    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield got
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def tell_stdio_client(message: str, wait: float = 10.0) -> None:
    """Without the SDK, answer a stdio MCP client's requests (``server/discover``,
    ``initialize``: whatever it tries) with a JSON-RPC error carrying ``message``, so a host
    shows why the server cannot start rather than "Connection closed"; until the client
    closes stdin or is silent for ``wait`` seconds. Only when stdin is a pipe or socket, as a
    host's is; the caller prints ``message`` on stderr as well."""
    import json
    import os
    import select
    import stat
    import sys

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return
        while select.select([sys.stdin], [], [], wait)[0]:
            line = sys.stdin.buffer.readline(1 << 20)
            if not line:
                return
            try:
                request = json.loads(line)
            except ValueError:
                continue
            if isinstance(request, dict) and "method" in request and request.get("id") is not None:
                error = {"code": -32603, "message": message}
                sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}) + "\n")
                sys.stdout.flush()
    except (AttributeError, OSError, ValueError):  # no usable stdin: the caller's stderr line says it
        return


def served_questions_option(f):
    """``--questions`` / ``--questions-cache`` of ``score``: the questions file, or (with
    ``--pack``) the pack's cached generation the traces answer, as ``serve`` cached it."""
    f = click.option(
        "--questions-cache",
        "questions_cache",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Without --questions: the folder serve cached the pack's questions in (default as for serve).",
    )(f)
    return click.option(
        "--questions",
        "-q",
        "questions_path",
        default=None,
        type=click.Path(dir_okay=False, path_type=Path),
        help="The questions.json the traces answer. Default with --pack: the pack's cached generation "
        "(the questions 'groundeval serve PACK' served) holding every question the traces answer.",
    )(f)


def served_questions(pack: str | None, traces: Path, cache_dir: Path | None) -> Path:
    """The cached questions file of ``pack`` that ``traces`` answer (for ``score`` without
    ``--questions``); a located error naming what was looked at when there is none."""
    from ..runtime.question_cache import default_cache_dir, find_cached_questions
    from ..store.store import Store

    if pack is None:
        raise UsageError.single(
            "--questions",
            "give the questions.json the traces answer, or --pack PACK to score against the questions "
            "'groundeval serve PACK' generated and cached",
        )
    ids: set[str] = set()
    try:
        with open(traces, "rb") as fh:
            for line in fh:
                try:
                    qid = json.loads(line).get("question_id")
                except (ValueError, AttributeError):
                    continue  # scoring reports it, located
                if isinstance(qid, str):
                    ids.add(qid)
    except FileNotFoundError:
        raise ContractError.single(str(traces), "no such file") from None
    store = Store.open(pack)
    try:
        found, seen = find_cached_questions(store, ids, cache_dir=cache_dir)
        digest = store.digest
    finally:
        store.close()
    if found is None:
        where = (cache_dir if cache_dir is not None else default_cache_dir()) / "questions"
        raise UsageError.single(
            "--questions",
            f"no cached questions of pack {pack} (digest {digest[:16]}) in {where} hold the "
            f"{len(ids)} question(s) {traces} answers ({len(seen)} cached generation(s) of this pack there); "
            "pass --questions FILE",
        )
    return found
