"""JSON over HTTP for the provider adapters: retries with backoff, Retry-After, timeouts.

Plain ``httpx`` (imported lazily) rather than the vendors' SDKs: one retry policy we
control and test, and any OpenAI- or Anthropic-compatible server works unchanged.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from dataclasses import dataclass, field
from datetime import timezone
from typing import Any, Callable

from ..errors import ProviderError

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
FATAL_STATUS = frozenset({401, 403, 404})


def _import_httpx():
    try:
        import httpx
    except ImportError:  # pragma: no cover - depends on the install (get_agent checks it first)
        raise ProviderError(
            "the LLM adapters need the 'openai' or 'anthropic' extra (module 'httpx' is not "
            "installed): pip install 'groundeval[openai]'",
            fatal=True,
        ) from None
    return httpx


def transport_reason(exc: BaseException) -> str:
    """A transport failure in words: connection refused, host not found, reset, or the error itself."""
    text = str(exc) or type(exc).__name__
    low = text.lower()
    if "refused" in low:
        return "connection refused"
    if any(
        k in low
        for k in (
            "name or service not known",
            "nodename nor servname",
            "getaddrinfo",
            "name resolution",
            "no address associated",
        )
    ):
        return "host name not found"
    if "reset" in low:
        return "connection reset"
    return text


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = time.time() if now is None else now
    return max(0.0, when.timestamp() - now)


@dataclass
class RetryPolicy:
    """Exponential backoff with jitter; a server's Retry-After wins (capped at ``max_delay``)."""

    retries: int = 4
    base_delay: float = 0.5
    max_delay: float = 30.0
    seed: int = 0
    _rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_delay)
        backoff = self.base_delay * (2**attempt)
        return min(self.max_delay, backoff * (0.5 + self._rng.random() / 2))


@dataclass
class JsonClient:
    """POSTs JSON to one base URL. ``deadline`` (a monotonic time) bounds every wait."""

    base_url: str
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    sleep: Callable[[float], None] = time.sleep
    cache: Any = None  # a groundeval.agents.cache.ResponseCache: replies by request digest (opt-in)
    _client: Any = field(default=None, init=False, repr=False)
    _reached: bool = field(default=False, init=False, repr=False)  # any HTTP response so far

    def _http(self):
        if self._client is None:
            httpx = _import_httpx()
            self._client = httpx.Client(base_url=self.base_url.rstrip("/") + "/", headers=self.headers)
        return self._client

    def post(self, path: str, payload: dict[str, Any], *, deadline: float | None = None) -> tuple[dict, dict]:
        """Returns ``(body, info)``; ``info`` has ``attempts`` and ``retries``. Raises :class:`ProviderError`.
        With a ``cache``, a request sent before is answered from it (no network call), and a 2xx
        answer is kept in it."""
        if self.cache is None:
            return self._send(path, payload, deadline)
        key = self.cache.key(self.base_url, path, payload)
        cached = self.cache.get(key)
        if cached is not None:
            return cached
        body, info = self._send(path, payload, deadline)
        if isinstance(body, dict):
            self.cache.put(key, body, info)
        return body, info

    def _send(self, path: str, payload: dict[str, Any], deadline: float | None) -> tuple[dict, dict]:
        httpx = _import_httpx()
        client = self._http()
        # ASCII JSON: text a model sent back with lone surrogates (which UTF-8 cannot hold)
        # returns to it as the same \uXXXX escapes instead of failing the request
        body_bytes = json.dumps(payload, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")
        last = "no attempt made"
        status = None
        unreachable = False
        for attempt in range(self.policy.retries + 1):
            timeout = self.timeout
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0:
                    raise ProviderError(f"episode deadline reached ({last})", status=status)
            retry_after = None
            try:
                resp = client.post(
                    path.lstrip("/"), content=body_bytes, timeout=timeout, headers={"content-type": "application/json"}
                )
            except httpx.ConnectTimeout:
                last, status, unreachable = (
                    f"cannot connect to {self.base_url}: timed out after {timeout:.1f}s",
                    None,
                    True,
                )
            except httpx.TimeoutException:
                last, status, unreachable = f"no answer from {self.base_url} within {timeout:.1f}s", None, False
            except httpx.ConnectError as exc:
                last, status, unreachable = f"cannot connect to {self.base_url}: {transport_reason(exc)}", None, True
            except httpx.TransportError as exc:
                last, status, unreachable = (
                    f"transport error talking to {self.base_url}: {transport_reason(exc)}",
                    None,
                    False,
                )
            else:
                self._reached = True
                unreachable = False
                status = resp.status_code
                if 200 <= status < 300:
                    try:
                        body = resp.json()
                    except ValueError:
                        raise ProviderError(f"HTTP {status} with a body that is not JSON", status=status) from None
                    return body, {"attempts": attempt + 1, "retries": attempt}
                last = f"HTTP {status} from {self.base_url}: {_error_text(resp)}"
                if status not in RETRY_STATUS:
                    raise ProviderError(last, status=status, fatal=status in FATAL_STATUS)
                retry_after = retry_after_seconds(resp.headers.get("retry-after"))
            if attempt == self.policy.retries:
                break
            wait = self.policy.delay(attempt, retry_after)
            if deadline is not None and time.monotonic() + wait >= deadline:
                raise ProviderError(f"episode deadline reached while backing off ({last})", status=status)
            self.sleep(wait)
        # a provider this client never reached is a configuration error (wrong URL, server down):
        # fatal, so the run stops with the cause instead of failing every episode the same way
        raise ProviderError(
            f"gave up after {self.policy.retries + 1} attempts: {last}",
            status=status,
            fatal=unreachable and not self._reached,
        )

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _error_text(resp) -> str:
    try:
        body = resp.json()
    except ValueError:
        return resp.text[:300]
    err = body.get("error") if isinstance(body, dict) else None
    if isinstance(err, dict):
        return str(err.get("message") or err)[:300]
    return str(err or body)[:300]
