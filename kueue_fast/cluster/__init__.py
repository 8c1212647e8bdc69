"""The embedding API: :class:`~kueue_fast.cluster.cluster.Cluster`, Kueue's scheduler over a set of
Kueue objects, with what Kueue's controllers do between cycles (admission checks, PodsReady) and
the statuses Kueue writes.
"""
