"""Helpers and fixtures of the controller tests (conftest.py imports the fixtures):
the in-process API server, controllers
talking to it through the official client, and a harness that runs the same
end-to-end flows against a real cluster when KUEUE_FAST_TEST_KUBECONFIG
names one.

Warnings: pytest runs with ``-W error``. The kubernetes client and urllib3
emit none on the paths used here today; if a future version does, filter it
here narrowly with the reason.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

try:  # the native engine may not be built yet: test with the reference one then
    import kueue_fast.engine.native  # type: ignore[import-not-found]  # noqa: F401
except ImportError:
    os.environ.setdefault("KUEUE_FAST_ENGINE", "reference")

from fake_apiserver import FakeAPIServer  # noqa: E402

from kueue_fast.commands import manifests  # noqa: E402
from kueue_fast.controller.reconciler import Controller, Options  # noqa: E402
from kueue_fast.kube.client import (
    ADMISSION_CHECKS,
    CLUSTER_QUEUES,
    COHORTS,
    JOBS,
    JOBSETS,
    LOCAL_QUEUES,
    NAMESPACES,
    NODES,
    POD_PRIORITY_CLASSES,
    PODS,
    PRIORITY_CLASSES,
    RESOURCE_FLAVORS,
    TOPOLOGIES,
    WORKLOADS,
    ApiError,
    KubeClient,
    Resource,
)

REAL_KUBECONFIG = os.environ.get("KUEUE_FAST_TEST_KUBECONFIG")
JOBSET_CRD = Path(__file__).resolve().parent.parent / "data" / "jobset-crd.yaml"
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False)
TEST_IMAGE = os.environ.get("KUEUE_FAST_TEST_IMAGE", "busybox:1.36")
TEST_AGENT = "kueue-fast-tests/1"
JSON = dict[str, Any]


def wait_for(cond: Callable[[], Any], timeout: float = 15.0, interval: float = 0.02, what: str = "") -> Any:
    """Poll until ``cond()`` is truthy; return its value."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = cond()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what or cond}: last value {last!r}")


# --- object builders ----------------------------------------------------------------------------


def flavor(
    name: str, node_labels: dict[str, str] | None = None, tolerations: list[JSON] | None = None
) -> JSON:
    spec: JSON = {}
    if node_labels:
        spec["nodeLabels"] = node_labels
    if tolerations:
        spec["tolerations"] = tolerations
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": name},
        "spec": spec,
    }


def cluster_queue(
    name: str,
    quotas: dict[str, dict[str, str]],
    *,
    cohort: str | None = None,
    preemption: JSON | None = None,
    namespace_selector: JSON | None = None,
    stop_policy: str | None = None,
    borrowing_limit: dict[str, str] | None = None,
) -> JSON:
    """quotas: flavor -> resource -> nominal quota (one resource group)."""
    resources = sorted({r for q in quotas.values() for r in q})
    spec: JSON = {
        "namespaceSelector": {} if namespace_selector is None else namespace_selector,
        "resourceGroups": [
            {
                "coveredResources": resources,
                "flavors": [
                    {
                        "name": f,
                        "resources": [
                            {
                                "name": r,
                                "nominalQuota": q.get(r, "0"),
                                **(
                                    {"borrowingLimit": borrowing_limit[r]}
                                    if borrowing_limit and r in borrowing_limit
                                    else {}
                                ),
                            }
                            for r in resources
                        ],
                    }
                    for f, q in quotas.items()
                ],
            }
        ],
    }
    if cohort:
        spec["cohortName"] = cohort
    if preemption:
        spec["preemption"] = preemption
    if stop_policy:
        spec["stopPolicy"] = stop_policy
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": spec,
    }


def local_queue(ns: str, name: str, cq: str) -> JSON:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"clusterQueue": cq},
    }


def priority_class(name: str, value: int) -> JSON:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": name},
        "value": value,
    }


def job(
    ns: str,
    name: str,
    queue: str | None,
    cpu: str = "1",
    *,
    parallelism: int = 1,
    suspend: bool = True,
    priority: str | None = None,
    node_selector: dict[str, str] | None = None,
    tolerations: list[JSON] | None = None,
) -> JSON:
    labels = {}
    if queue:
        labels["kueue.x-k8s.io/queue-name"] = queue
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    pod: JSON = {
        "restartPolicy": "Never",
        "containers": [
            {
                "name": "main",
                "image": TEST_IMAGE,
                "command": ["sh", "-c", "exit 0"],
                "resources": {"requests": {"cpu": cpu}},
            }
        ],
    }
    if node_selector:
        pod["nodeSelector"] = node_selector
    if tolerations:
        pod["tolerations"] = tolerations
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {
            "parallelism": parallelism,
            "completions": parallelism,
            "suspend": suspend,
            "template": {"spec": pod},
        },
    }


def jobset(
    ns: str,
    name: str,
    queue: str | None,
    replicated: list[tuple[str, int, int, str]],
    *,
    suspend: bool = True,
    priority: str | None = None,
    node_selector: dict[str, str] | None = None,
) -> JSON:
    """A JobSet; ``replicated``: (name, replicas, parallelism, cpu per pod) per replicated job."""
    labels = {}
    if queue:
        labels["kueue.x-k8s.io/queue-name"] = queue
    if priority:
        labels["kueue.x-k8s.io/priority-class"] = priority
    rjobs = []
    for rname, replicas, parallelism, cpu in replicated:
        pod: JSON = {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "main",
                    "image": TEST_IMAGE,
                    "command": ["sh", "-c", "exit 0"],
                    "resources": {"requests": {"cpu": cpu}},
                }
            ],
        }
        if node_selector:
            pod["nodeSelector"] = dict(node_selector)
        rjobs.append(
            {
                "name": rname,
                "replicas": replicas,
                "template": {
                    "spec": {
                        "parallelism": parallelism,
                        "completions": parallelism,
                        "template": {"spec": pod},
                    }
                },
            }
        )
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"suspend": suspend, "replicatedJobs": rjobs},
    }


def pod_priority_class(name: str, value: int, global_default: bool = False) -> JSON:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": global_default,
    }


RES_BY_KIND = {
    "AdmissionCheck": ADMISSION_CHECKS,
    "ResourceFlavor": RESOURCE_FLAVORS,
    "ClusterQueue": CLUSTER_QUEUES,
    "Cohort": COHORTS,
    "LocalQueue": LOCAL_QUEUES,
    "WorkloadPriorityClass": PRIORITY_CLASSES,
    "Workload": WORKLOADS,
    "Namespace": NAMESPACES,
    "Job": JOBS,
    "JobSet": JOBSETS,
    "PriorityClass": POD_PRIORITY_CLASSES,
    "Topology": TOPOLOGIES,
    "Node": NODES,
    "Pod": PODS,
}


# --- harness ---------------------------------------------------------------------------------------


class Harness:
    """One cluster (fake or real) for one test: a client of its own, names
    unique to the test, controllers started on demand and stopped after."""

    def __init__(self, kubeconfig: str, fake: FakeAPIServer | None, tmp: Path) -> None:
        self.kubeconfig = kubeconfig
        self.fake = fake
        self.tmp = tmp
        self.kube = KubeClient.from_config(kubeconfig, qps=1000, burst=1000, user_agent=TEST_AGENT)
        self.suffix = "" if fake else "-" + uuid.uuid4().hex[:6]
        self.controllers: list[Controller] = []
        self.created: list[tuple[Resource, str, str | None]] = []
        self.lease_ns = self.name("kueue-system")
        self._ids = itertools.count()
        self.created_crd = ""

    @property
    def real(self) -> bool:
        return self.fake is None

    def name(self, base: str) -> str:
        """A cluster-wide name unique to this test (on a real cluster)."""
        return f"{base}{self.suffix}"

    # objects
    def create(self, obj: JSON) -> JSON:
        res = RES_BY_KIND[obj["kind"]]
        ns = obj["metadata"].get("namespace")
        out = self.kube.create(res, obj, ns)
        self.created.append((res, obj["metadata"]["name"], ns))
        return out

    def namespace(self, base: str, labels: dict[str, str] | None = None) -> str:
        name = self.name(base)
        self.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}
        )
        return name

    def get(self, res: Resource, name: str, ns: str | None = None) -> JSON | None:
        try:
            return self.kube.get(res, name, ns)
        except ApiError as e:
            if e.status == 404:
                return None
            raise

    def patch(
        self, res: Resource, name: str, patch: JSON, ns: str | None = None, sub: str | None = None
    ) -> JSON:
        return self.kube.patch(res, name, patch, namespace=ns, sub=sub)

    def delete(self, res: Resource, name: str, ns: str | None = None) -> None:
        try:
            self.kube.delete(res, name, ns, propagation="Background")
        except ApiError as e:
            if e.status != 404:
                raise

    def workloads(self, ns: str) -> list[JSON]:
        return self.kube.list(WORKLOADS, namespace=ns)["items"]

    def workload_of(self, ns: str, job_name: str) -> JSON | None:
        j = self.get(JOBS, job_name, ns)
        if j is None:
            return None
        from kueue_fast.controller.job_kinds import workload_name

        return self.get(WORKLOADS, workload_name(job_name, j["metadata"]["uid"]), ns)

    def finish_job(self, ns: str, name: str, failed: bool = False) -> None:
        if self.fake is not None:
            self.fake.finish_job(ns, name, failed=failed)
            return
        # a real Job controller runs the pods (`exit 0`) to completion
        wait_for(
            lambda: any(
                c.get("type") == "Complete" and c.get("status") == "True"
                for c in ((self.get(JOBS, name, ns) or {}).get("status") or {}).get("conditions") or []
            ),
            timeout=180,
            what=f"Job {ns}/{name} to complete",
        )

    def ensure_jobset_crd(self) -> None:
        """JobSet's CRD (tests/data), installed when the cluster lacks it."""
        import yaml

        crd = next(d for d in yaml.safe_load_all(JOBSET_CRD.read_text()) if d)
        if self.fake is not None:
            self.fake.install_crd(crd)
            return
        if self.get(CRDS, crd["metadata"]["name"]) is None:
            self.kube.create(CRDS, crd)
            self.created_crd = crd["metadata"]["name"]
            wait_for(lambda: self._served(JOBSETS), timeout=60, what="the JobSet CRD to be served")

    def _served(self, res: Resource) -> bool:
        try:
            self.kube.list(res, limit=1)
        except ApiError:
            return False
        return True

    def finish_jobset(self, ns: str, name: str, failed: bool = False) -> None:
        """What JobSet's controller writes when the JobSet's jobs are done."""
        if self.fake is not None:
            self.fake.finish_jobset(ns, name, failed=failed)
            return
        ctype = "Failed" if failed else "Completed"
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        cond = {
            "type": ctype,
            "status": "True",
            "reason": "Test",
            "message": "done",
            "lastTransitionTime": now,
        }
        self.patch(
            JOBSETS, name, {"status": {"conditions": [cond], "terminalState": ctype}}, ns, sub="status"
        )

    # controllers
    def controller(self, **kw: Any) -> Controller:
        identity = kw.pop("identity", f"ctl-{next(self._ids)}")
        client_kw = {k: kw.pop(k) for k in ("qps", "burst") if k in kw}
        opts = Options(
            identity=identity,
            lease_namespace=kw.pop("lease_namespace", self.lease_ns),
            lease_duration=kw.pop("lease_duration", 2.0),
            renew_deadline=kw.pop("renew_deadline", 1.5),
            retry_period=kw.pop("retry_period", 0.2),
            missing_kind_retry=kw.pop("missing_kind_retry", 0.3),
            status_interval=kw.pop("status_interval", 0.2),
            pending_interval=kw.pop("pending_interval", 0.2),
            workers=kw.pop("workers", 4),
            **kw,
        )
        client = KubeClient.from_config(
            self.kubeconfig,
            backoff_base=0.01,
            backoff_max=0.1,
            max_retries=3,
            user_agent=f"kueue-fast-controller/{identity}",
            **{"qps": 1000, "burst": 1000, **client_kw},
        )
        ctl = Controller(client, opts).start()
        self.controllers.append(ctl)
        return ctl

    def close(self) -> None:
        for c in self.controllers:
            c.stop(release_lease=False) if not c.client.closed else None
        if self.real:
            # the controller is gone: take its finalizers off, or deletions would hang
            for res, name, _ in self.created:
                if res is NAMESPACES:
                    for w in self.kube.list(WORKLOADS, namespace=name)["items"]:
                        if w["metadata"].get("finalizers"):
                            try:
                                self.patch(
                                    WORKLOADS, w["metadata"]["name"], {"metadata": {"finalizers": None}}, name
                                )
                            except ApiError:
                                pass
            for res, name, ns in reversed(self.created):
                obj = self.get(res, name, ns)
                if obj is not None and obj["metadata"].get("finalizers") and res is not NAMESPACES:
                    try:
                        self.patch(res, name, {"metadata": {"finalizers": None}}, ns)
                    except ApiError:
                        pass
                self.delete(res, name, ns)
            if self.created_crd:
                self.delete(CRDS, self.created_crd)
        self.kube.close()


@pytest.fixture
def fake_api() -> Iterator[FakeAPIServer]:
    api = FakeAPIServer(crds=manifests.crds(), bookmark_interval=0.2)
    api.start()
    try:
        yield api
    finally:
        api.stop()


def _harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "real":
        if not REAL_KUBECONFIG:
            pytest.skip("KUEUE_FAST_TEST_KUBECONFIG names no cluster")
        h = Harness(REAL_KUBECONFIG, None, tmp_path)
        h.namespace("kueue-system")
        try:
            yield h
        finally:
            h.close()
        return
    api = FakeAPIServer(crds=manifests.crds(), bookmark_interval=0.2)
    api.start()
    h = Harness(api.write_kubeconfig(str(tmp_path / "kubeconfig")), api, tmp_path)
    h.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": h.lease_ns}})
    try:
        yield h
    finally:
        h.close()
        api.stop()
    # every write of the flow fits the CRDs kueue-fast ships: nothing was pruned
    assert not api.pruned, f"fields the CRDs' schemas do not keep: {api.pruned[:10]}"


@pytest.fixture(params=["fake", "real"])
def cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    """The end-to-end flows run on the in-process API server, and on a real
    cluster when KUEUE_FAST_TEST_KUBECONFIG is set."""
    yield from _harness(request, tmp_path)


@pytest.fixture(params=["fake"])
def fake_cluster(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    """Flows that need fault injection or a simulated Job controller."""
    yield from _harness(request, tmp_path)
