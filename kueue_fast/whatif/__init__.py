"""What if? Several configurations of the cluster on one frozen trace.

* ``compare``: configurations side by side, with deltas against the first;
* ``sweep``: a grid of changes to a base, expanded from a YAML spec;
* ``overrides``: ``--set KIND/NAME.PATH=VALUE`` and patch files; ``diff``:
  what differs between two configurations, in the same path syntax;
* ``sources``: configurations from files or the live cluster (``live``:
  ``kube/snapshot.py``, read-only);
* ``runner``: the simulations in this process, on a local process pool or on
  a Dask cluster; ``results``: what each returns (compact, picklable);
  ``plan``: what compare and sweep share.

The CLI imports these lazily (``args`` has no heavy imports).
"""
