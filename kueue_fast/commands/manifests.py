"""``kueue-fast manifests``: the CRDs and the deployment, as YAML on stdout."""

from __future__ import annotations

import argparse
import json
import re
import sys
from importlib import resources
from typing import Any

import yaml

DEFAULT_NAMESPACE = "kueue-system"
DEFAULT_IMAGE = "kueue-fast:0.1.0"


def _read(name: str) -> str:
    return resources.files("kueue_fast.controller").joinpath("data", name).read_text(encoding="utf-8")


class _NoAliases(yaml.SafeDumper):
    """Shared sub-objects written out each time (no &id001 anchors)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def crds() -> list[dict[str, Any]]:
    """Kueue's kinds kueue-fast reads, from the loader's field definitions (kube/crds.py)."""
    from ..kube import crds as generated

    return generated.crds()


def crds_yaml() -> str:
    from ..kube import crds as generated

    docs = yaml.dump_all(crds(), Dumper=_NoAliases, sort_keys=False, width=100, explicit_start=True)
    return generated.HEADER + docs


def deploy_yaml(namespace: str = DEFAULT_NAMESPACE, image: str = DEFAULT_IMAGE) -> str:
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", namespace) or len(namespace) > 63:
        raise ValueError(f"invalid namespace name {namespace!r}")
    if not image or any(c.isspace() for c in image):
        raise ValueError(f"invalid image {image!r}")
    return _read("deploy.yaml").replace("${NAMESPACE}", namespace).replace("${IMAGE}", image)


def deploy(namespace: str = DEFAULT_NAMESPACE, image: str = DEFAULT_IMAGE) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(deploy_yaml(namespace, image)) if d]


def run(args: argparse.Namespace) -> int:
    """`kueue-fast manifests crds|deploy [-o yaml|json]`."""
    image = args.image
    if args.what == "deploy" and image is None:
        image = DEFAULT_IMAGE
        print(
            f"warning: --image not given: the Deployment runs {image}, which no registry serves; build "
            "the image from the repository's Dockerfile, push it, and pass --image REGISTRY/kueue-fast:TAG",
            file=sys.stderr,
        )
    try:
        if getattr(args, "output", "yaml") == "json":
            items = crds() if args.what == "crds" else deploy(args.namespace, image)
            doc = {"apiVersion": "v1", "kind": "List", "items": items}
            sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        elif args.what == "crds":
            sys.stdout.write(crds_yaml())
        else:
            sys.stdout.write(deploy_yaml(args.namespace, image))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
