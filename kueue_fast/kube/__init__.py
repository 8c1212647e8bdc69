"""The Kubernetes side: the API client, informers, leader election, the read-only snapshot of a
live cluster, the CRDs, and cluster objects turned into the engine's state. Used by the
controller and by the offline commands that read a cluster.
"""
