"""What Kueue's controllers do to the scheduler's state between two cycles, both engines.

Each case pins one rule of Kueue's code outside the scheduling cycle (the
workload controller, the queue manager, the scheduler cache) with a few
workloads and the public Cluster API; docs/state-between-cycles.md lists every
such rule and where kueue-fast follows it.
"""

from __future__ import annotations

import pytest
from builders import ENGINES, NO_LONGER_FITS, NOW, SECOND, build_state, cq, engine_marks, fq, wl

from kueue_fast import Cluster
from kueue_fast.api.model import LocalQueue

PARAMS = [pytest.param(e, marks=engine_marks(e)) for e in ENGINES]


@pytest.mark.parametrize("engine", PARAMS)
def test_deleting_a_pending_workload_requeues_the_parked_workloads_of_its_cohort(engine: str) -> None:
    """workload_controller.go Delete: QueueAssociatedInadmissibleWorkloadsAfter
    for every deleted workload the queue manager knows, pending ones included
    (manager.go: the tree of its LocalQueue's ClusterQueue)."""
    state = build_state(
        ["default"],
        [cq("a").cohort("co").flavor("default", cpu="4"), cq("b").cohort("co").flavor("default", cpu="0")],
        [
            wl("hold").request(cpu="4").reserve("a", "default", at=NOW),
            wl("p").queue("a").request(cpu="2").created(NOW + 1),
            wl("x").queue("b").request(cpu="1").created(NOW + 2),
        ],
    )
    cluster = Cluster(state, engine)
    first = cluster.run_cycle()
    assert sorted(first.attempted) == ["default/p", "default/x"] and first.newly_parked == 2
    assert cluster.run_cycle().heads == 0  # both parked
    cluster.remove_workload("default/x")  # deleted while pending
    assert cluster.run_cycle().attempted == ["default/p"]


@pytest.mark.parametrize("engine", PARAMS)
@pytest.mark.parametrize("how", ["finished", "evicted"])
def test_freeing_quota_requeues_the_tree_of_the_workloads_local_queue(engine: str, how: str) -> None:
    """manager.go QueueAssociatedInadmissibleWorkloadsAfter finds the ClusterQueue
    to requeue through the workload's LocalQueue (workloadAssignedQueues,
    localQueues); a stopped LocalQueue is not in the queue manager
    (localqueue_controller.go Update: DeleteLocalQueue), so quota freed by its
    workload requeues nothing: the parked workload waits for the next trigger."""
    state = build_state(
        ["default"],
        [cq("a").flavor("default", cpu="4")],
        [
            wl("done").queue("held").request(cpu="4").reserve("a", "default", at=NOW),
            wl("p").queue("a").request(cpu="4").created(NOW + 1),
            wl("other").queue("a").request(cpu="1").reserve("a", "default", at=NOW),
        ],
    )
    state.local_queues["default/held"] = LocalQueue("default", "held", "a", stop_policy="Hold")
    cluster = Cluster(state, engine, release_evictions=how == "finished")
    assert cluster.run_cycle().newly_parked == 1  # p: no room, no candidates
    if how == "finished":
        cluster.remove_workload("default/done")
    else:
        cluster.evict("default/done", "Deactivated", "evicted by the test")
        cluster.release_eviction("default/done")
    result = cluster.run_cycle()
    assert result.heads == 0 and cluster.decision("default/p").state == "pending"
    cluster.remove_workload("default/other")  # its LocalQueue is open: the tree is requeued
    assert cluster.run_cycle().admitted == ["default/p"]


@pytest.mark.parametrize("engine", PARAMS)
def test_readmission_restores_the_queue_order_timestamp_of_a_reclaimed_workload(engine: str) -> None:
    """Without PrioritySortingWithinCohort a workload preempted to reclaim
    while borrowing queues as if created just after its preemption
    (workload.go Ordering.GetQueueOrderTimestamp reads the Preempted
    condition); once admitted again that condition is False
    (SetQuotaReservation: resetActiveCondition) and its creation time counts
    again, here for withinClusterQueue: LowerOrNewerEqualPriority."""
    state = build_state(
        ["default"],
        [
            cq("x").cohort("co").flavor("default", cpu="2").preemption(within="LowerOrNewerEqualPriority"),
            cq("lender").cohort("co").flavor("default", cpu="4"),
            cq("y")
            .cohort("co")
            .flavor("default", cpu="2")
            .preemption(reclaim="LowerPriority", borrow_within="LowerPriority"),
        ],
        [
            wl("w").queue("x").request(cpu="8").created(NOW - 10 * SECOND).reserve("x", "default", at=NOW),
            wl("r").queue("y").priority(5).request(cpu="4").created(NOW),
        ],
        feature_gates={"PrioritySortingWithinCohort": False},
    )
    cluster = Cluster(state, engine)
    first = cluster.run_cycle()
    assert first.preempted == ["default/w"]
    assert cluster.decision("default/w").preemption_reason == "InCohortReclaimWhileBorrowing"
    assert cluster.run_cycle().admitted == ["default/r"]  # (w: no room, no candidates)
    cluster.remove_workload("default/r")
    assert cluster.run_cycle().admitted == ["default/w"]
    # Same priority, created after w but before w's preemption: not newer than w.
    cluster.add_workload(wl("p").queue("x").request(cpu="2").created(NOW - 5 * SECOND).obj())
    result = cluster.run_cycle()
    assert result.preempted == [] and cluster.decision("default/w").state == "admitted"


@pytest.mark.parametrize("engine", PARAMS)
def test_a_preemptor_without_candidates_reserves_capacity_under_prioritize_preemptor_workloads(
    engine: str,
) -> None:
    """scheduler.go reserveCapacityForUnreclaimablePreempt: a head that needs
    preemption and finds no candidates reserves its quota when its
    ClusterQueue cannot always reclaim, or (PrioritizePreemptorWorkloads) when
    it is the ClusterQueue's preemptor, whose mark lasts until it is admitted
    (cluster_queue.go delete)."""
    state = build_state(
        ["default"],
        [
            cq("a").cohort("co").strict_fifo().flavor("default", cpu="4").preemption("LowerPriority", "Any"),
            cq("b").cohort("co").flavor("default", cpu="0"),
        ],
        [
            wl("v").request(cpu="2").reserve("a", "default", at=NOW),
            wl("p").queue("a").priority(5).request(cpu="4").created(NOW + 1),
        ],
        feature_gates={"PrioritizePreemptorWorkloads": True},
    )
    cluster = Cluster(state, engine)
    assert cluster.run_cycle().preempted == ["default/v"]  # p is a's preemptor now
    cluster.add_workload(wl("big").queue("a").priority(100).request(cpu="2").created(NOW + 2).obj())
    assert cluster.run_cycle().admitted == ["default/big"]  # StrictFIFO: big is the head, not p
    cluster.add_workload(wl("x").queue("b").request(cpu="2").created(NOW + 3).obj())
    # p goes first (a preemptor), needs preemption, has no candidate and
    # reserves a's quota for itself: x cannot borrow it.
    assert cluster.run_cycle().admitted == []
    assert cluster.decision("default/x").message == NO_LONGER_FITS


@pytest.mark.parametrize("engine", PARAMS)
def test_an_eviction_outdates_flavor_scans_before_its_job_stops(engine: str) -> None:
    """Evict writes Evicted=True while the victim still holds its quota; the
    workload controller re-adds it to the cache (workload_controller.go Update,
    default case: cache.AddOrUpdateWorkload), which moves its ClusterQueue's
    AllocatableResourceGeneration (clusterqueue.go deleteWorkload). A flavor
    scan recorded in that ClusterQueue before is outdated two cycles later
    (scheduler.go lastAssignmentOutdated), even if the victim's job has not
    stopped yet (release_evictions=False, as the controller runs)."""
    state = build_state(
        ["f0", "f1"],
        [
            cq("y")
            .cohort("co")
            .flavor("f0", cpu="2")
            .preemption(reclaim="LowerPriority", borrow_within="LowerPriority"),
            cq("lender").cohort("co").flavor("f0", cpu="6"),
            cq("z").cohort("co").resource_group(fq("f0", cpu="0"), fq("f1", cpu="2")),
        ],
        [
            wl("v").request(cpu="6").reserve("z", "f0", at=NOW),
            wl("p").queue("y").priority(5).request(cpu="8").created(NOW + 1),
            wl("z").queue("z").priority(1).request(cpu="2").created(NOW + 2),
        ],
    )
    cluster = Cluster(state, engine, release_evictions=False)
    # p reclaims v; z fitted f0 (borrowing: the scan stops there) but no longer
    # does after p: skipped, its scan recorded at f0.
    first = cluster.run_cycle()
    assert first.preempted == ["default/v"] and cluster.decision("default/z").message == NO_LONGER_FITS
    cluster.add_workload(wl("h").queue("z").priority(10).request(cpu="100").created(NOW + 3).obj())
    assert sorted(cluster.run_cycle().attempted) == ["default/h", "default/p"]  # h: z's head, parked
    # z again, two cycles after its scan: outdated, it starts over at f0 and
    # no longer fits after p; resuming at f1 would have admitted it there.
    third = cluster.run_cycle()
    assert third.admitted == [] and cluster.decision("default/z").message == NO_LONGER_FITS


@pytest.mark.parametrize("engine", PARAMS)
def test_bulk_cycles_give_a_readmitted_workload_its_creation_time_back(engine: str) -> None:
    """As above, through the engine's bulk loop (run_until_stable without a
    per-cycle callback): the workload's spec, which a reconfigure re-adds,
    carries its creation time again once it is admitted again."""
    state = build_state(
        ["default"],
        [
            cq("x").cohort("co").flavor("default", cpu="2"),
            cq("lender").cohort("co").flavor("default", cpu="4"),
            cq("y")
            .cohort("co")
            .flavor("default", cpu="2")
            .preemption(reclaim="LowerPriority", borrow_within="LowerPriority"),
        ],
        [
            wl("w").queue("x").request(cpu="8").created(NOW - 10 * SECOND).reserve("x", "default", at=NOW),
            wl("r").queue("y").priority(5).request(cpu="4").created(NOW),
        ],
        feature_gates={"PrioritySortingWithinCohort": False},
    )
    cluster = Cluster(state, engine)
    cluster.run_until_stable()
    assert cluster.decision("default/r").state == "admitted"
    assert cluster.decision("default/w").state == "pending"
    assert cluster.engine.spec(cluster.wid_of("default/w")).queue_ts > NOW  # moved past its preemption
    cluster.remove_workload("default/r")
    cluster.run_until_stable()
    assert cluster.decision("default/w").state == "admitted"
    assert cluster.engine.spec(cluster.wid_of("default/w")).queue_ts == NOW - 10 * SECOND
