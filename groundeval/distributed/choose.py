"""Choosing a backend by name: ``local`` (:class:`~groundeval.distributed.backend.LocalBackend`)
or ``ray`` (:class:`~groundeval.distributed.ray_backend.RayBackend`, imported only when asked
for). Above both: the Ray backend builds on the local one's types."""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from ..extras import install_command
from .backend import BACKENDS, Backend, LocalBackend


def ray_missing() -> str | None:
    """Why the Ray backend cannot run here (None when it can)."""
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        return (
            f"the 'ray' backend needs the 'ray' extra (module '{exc.name or 'ray'}' is not installed): "
            f"{install_command('ray')}"
        )
    return None


def get_backend(
    backend: str | Backend | None = None,
    *,
    address: str | None = None,
    workers: int | None = None,
    runtime_env: dict[str, Any] | None = None,
    flag: str = "--backend",
) -> Backend:
    """A backend by name (``local`` or ``ray``) or the given instance. ``address`` (else the
    ``RAY_ADDRESS`` variable, else a local Ray instance), ``workers`` and ``runtime_env`` are
    the Ray backend's; a missing Ray is a :class:`UsageError` naming the install command."""
    if backend is None or backend == "local":
        return LocalBackend()
    if not isinstance(backend, str):
        if isinstance(backend, Backend):
            return backend
        raise UsageError.single(
            flag, f"expected a backend name ({', '.join(BACKENDS)}) or a Backend, not {type(backend).__name__}"
        )
    if backend != "ray":
        raise UsageError.single(flag, f"unknown backend {backend!r}; expected one of {', '.join(BACKENDS)}")
    missing = ray_missing()
    if missing is not None:
        raise UsageError.single(flag, missing)
    from .ray_backend import RayBackend

    return RayBackend(address=address, workers=workers, runtime_env=runtime_env)
