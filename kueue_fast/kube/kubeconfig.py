"""Which cluster the client talks to: the kubeconfig, context or in-cluster
configuration, found as controller-runtime finds it, and the one-line
KubeconfigError when none can be used."""

from __future__ import annotations

import os
from typing import Any

from ..api.errors import InputError


class KubeconfigError(InputError):
    """A kubeconfig, context or in-cluster configuration that cannot be used
    (the CLI prints it on one line and exits with status 2)."""


def _one_line(e: BaseException | str) -> str:
    return " ".join(str(e).split())


def load_config(kubeconfig: str | None = None, context: str | None = None) -> Any:
    """The client configuration, found in controller-runtime's order
    (``pkg/client/config.GetConfig``): ``kubeconfig``, ``$KUBECONFIG``, the
    in-cluster service account (in a pod), ``~/.kube/config``. A ``context``
    means a kubeconfig: it skips the in-cluster configuration."""
    from kubernetes import client, config

    cfg = client.Configuration()
    env = os.environ.get("KUBECONFIG") or None
    path = kubeconfig or env
    if path is None and os.environ.get("KUBERNETES_SERVICE_HOST") and context is None:
        try:
            config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        except Exception as e:  # the client's own exceptions and I/O errors alike
            raise KubeconfigError(
                "",
                "",
                f"{_one_line(e)} (in a pod without a service account token? mount one, or pass --kubeconfig)",
                source="in-cluster configuration",
            ) from None
        return cfg
    if path is None:
        default = os.path.expanduser("~/.kube/config")
        if not os.path.exists(default):
            raise KubeconfigError(
                "",
                "",
                "no cluster configuration: not in a pod, $KUBECONFIG is not set and "
                f"{default} does not exist; pass --kubeconfig PATH",
            )
        path = default
    source = "$KUBECONFIG" if path == env and not kubeconfig else f"kubeconfig {path}"
    files = [p for p in path.split(os.pathsep) if p] if path == env else [path]
    missing = [p for p in files if not os.path.exists(p)]
    if kubeconfig and missing:
        raise KubeconfigError("", "", "no such file", source=source)
    if len(missing) == len(files):  # client-go skips missing files of $KUBECONFIG, not all of them
        raise KubeconfigError("", "", f"no such file: {', '.join(missing)}", source=source)
    try:
        contexts, _ = config.list_kube_config_contexts(config_file=path)  # type: ignore[no-untyped-call]
        names = [str(c.get("name")) for c in contexts or []]
        if context is not None and context not in names:
            raise KubeconfigError(
                "",
                "",
                f'context "{context}" not found (contexts: {", ".join(names) or "none"})',
                source=source,
            )
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=path, context=context, client_configuration=cfg, persist_config=False
        )
    except KubeconfigError:
        raise
    except Exception as e:  # YAML errors, the client's ConfigException, unreadable files...
        raise KubeconfigError("", "", _one_line(e), source=source) from None
    return cfg
