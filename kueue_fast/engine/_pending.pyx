# distutils: language = c++
# cython: language_level=3
"""Pending model Workloads to the native engine's arrays, compiled: PendingFill,
the filling half of kueue_fast.engine.workloads.PendingBatch (whose Python
half computes a shape PendingFill has not met, through WorkloadCompiler)."""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 1

from cpython.object cimport PyObject

from kueue_fast.api import validation as v
from kueue_fast.engine.inputs import (
    BLOCK_NAMESPACE_MISMATCH,
    BLOCK_NONE,
    BLOCK_RESOURCES_INVALID,
    JOB_UID_LABEL,
    NAMESPACE_MISMATCH_MESSAGE,
)

cdef object INT32_MIN = v.INT32_MIN
cdef object INT32_MAX = v.INT32_MAX


from libc.stdint cimport int64_t
from libcpp.vector cimport vector
from cpython.dict cimport PyDict_GetItem


cdef class PendingFill:
    """The rows and memos of engine.workloads.PendingBatch.

    prepare() reads every workload once, in the dict's order (its objects lie
    in memory in input order: most of the cost is memory latency), into typed
    per-workload rows; rows() finds them by key and columns() gathers any run
    of them into the engine's arrays, with no Python object per workload.

    What depends only on a workload's pod sets and priority (its pod set rows,
    scheduling hash, resources error) is one shape, stored once. A workload
    whose pod sets all carry the template they were read from
    (PodSet.template_spec, set by fast_workload; trusted while the raw
    Workload still holds that very object) finds its shape by those
    templates' identities; any other through the exact key of _hash_key
    (PendingBatch._shape, in Python). The values are the ones
    WorkloadCompiler.compile gives."""

    cdef readonly object compiler
    cdef dict _trusted  # (priority, per pod set: name, count, reclaimable, minCount, id(template)) -> shape
    cdef dict _computed  # id(pod sets PendingBatch._shape gave) -> (those pod sets, shape)
    cdef list _kept  # the templates of _trusted's keys, so that their ids stay theirs
    cdef dict _queues  # (namespace, queue name) -> (cq, lq, block)
    cdef dict _names  # pod set name -> index into pod_set_names
    cdef dict _messages  # block message -> index into block_messages
    cdef dict _row_of  # key -> row, for the workloads prepare() met that the arrays carry
    cdef list _shape_of  # per shape: (pod sets, scheduling hash, resources error) as _shape gave them
    # per shape: scheduling hash, resources error (an index into block_messages, -1: none),
    # its pod sets sh_ps[s]:sh_ps[s+1]
    cdef vector[int64_t] sh_hash, sh_error, sh_ps
    # per pod set of a shape: count, minCount (-1: none), flavor class, name (index into
    # pod_set_names), its requests ps_rq[p]:ps_rq[p+1]
    cdef vector[int64_t] ps_count, ps_min, ps_class, ps_name, ps_rq
    cdef vector[int64_t] rq_resource, rq_amount
    # per row: ClusterQueue, LocalQueue, priority, queue timestamp, block, block message, shape
    cdef vector[int64_t] w_cq, w_lq, w_prio, w_ts, w_block, w_message, w_shape
    cdef list w_ns, w_name, w_uid

    def __init__(self, compiler):
        self.compiler = compiler
        self._trusted = {}
        self._computed = {}
        self._kept = []
        self._queues = {}
        self._names = {}
        self._messages = {}
        self._row_of = {}
        self._shape_of = []
        self.sh_ps.push_back(0)
        self.ps_rq.push_back(0)
        self.w_ns, self.w_name, self.w_uid = [], [], []

    def __len__(self):
        """How many rows prepare() made."""
        return self.w_shape.size()

    @property
    def pod_set_names(self):
        return list(self._names)

    @property
    def block_messages(self):
        return list(self._messages)

    def prepare(self, dict workloads):
        """Make the rows of ``workloads`` (key -> Workload), in their order,
        for the rows() and columns() that follow while they do not change."""
        cdef dict row_of = self._row_of
        cdef int64_t row
        for key, wl in workloads.items():
            row = self._row(key, wl)
            if row >= 0:
                row_of[key] = row

    def rows(self, list keys):
        """Per key, its row (numpy int64), -1 when compile() must add the workload."""
        import numpy as np

        out = np.empty(len(keys), dtype=np.int64)
        cdef int64_t[::1] o = out
        cdef dict row_of = self._row_of
        cdef PyObject* found
        cdef Py_ssize_t i
        for i in range(len(keys)):
            found = PyDict_GetItem(row_of, keys[i])
            o[i] = -1 if found == NULL else <int64_t><object>found
        return out

    def columns(self, const int64_t[::1] rows):
        """The rows' workloads as the fields of contract.WorkloadArrays."""
        import numpy as np

        cdef Py_ssize_t n = rows.shape[0], i, k, j, n_ps = 0, n_rq = 0
        cdef int64_t r, s, p, p0, p1
        cdef Py_ssize_t n_rows = self.w_shape.size()
        for i in range(n):
            r = rows[i]
            if r < 0 or r >= n_rows:
                raise IndexError(f"row {r} out of range")
            s = self.w_shape[r]
            p0, p1 = self.sh_ps[s], self.sh_ps[s + 1]
            n_ps += p1 - p0
            n_rq += self.ps_rq[p1] - self.ps_rq[p0]

        i64 = np.empty
        cq, lq, prio, ts, hsh, block, message = [i64(n, dtype=np.int64) for _ in range(7)]
        pso, rqo = i64(n + 1, dtype=np.int64), i64(n_ps + 1, dtype=np.int64)
        psc, psm, psf, psn = [i64(n_ps, dtype=np.int64) for _ in range(4)]
        rqr, rqa = i64(n_rq, dtype=np.int64), i64(n_rq, dtype=np.int64)
        cdef int64_t[::1] v_cq = cq, v_lq = lq, v_prio = prio, v_ts = ts, v_hash = hsh
        cdef int64_t[::1] v_block = block, v_message = message, v_pso = pso, v_rqo = rqo
        cdef int64_t[::1] v_psc = psc, v_psm = psm, v_psf = psf, v_psn = psn, v_rqr = rqr, v_rqa = rqa
        cdef list namespaces = [], names = [], uids = []
        cdef Py_ssize_t ps_at = 0, rq_at = 0
        v_pso[0] = 0
        v_rqo[0] = 0
        for i in range(n):
            r = rows[i]
            s = self.w_shape[r]
            v_cq[i] = self.w_cq[r]
            v_lq[i] = self.w_lq[r]
            v_prio[i] = self.w_prio[r]
            v_ts[i] = self.w_ts[r]
            v_hash[i] = self.sh_hash[s]
            v_block[i] = self.w_block[r]
            v_message[i] = self.w_message[r]
            namespaces.append(self.w_ns[r])
            names.append(self.w_name[r])
            uids.append(self.w_uid[r])
            for p in range(self.sh_ps[s], self.sh_ps[s + 1]):
                v_psc[ps_at] = self.ps_count[p]
                v_psm[ps_at] = self.ps_min[p]
                v_psf[ps_at] = self.ps_class[p]
                v_psn[ps_at] = self.ps_name[p]
                for j in range(self.ps_rq[p], self.ps_rq[p + 1]):
                    v_rqr[rq_at] = self.rq_resource[j]
                    v_rqa[rq_at] = self.rq_amount[j]
                    rq_at += 1
                ps_at += 1
                v_rqo[ps_at] = rq_at
            v_pso[i + 1] = ps_at
        return {
            "cluster_queue": cq,
            "priority": prio,
            "queue_ts": ts,
            "scheduling_hash": hsh,
            "pod_set_offsets": pso,
            "pod_set_count": psc,
            "pod_set_min_count": psm,
            "pod_set_flavor_class": psf,
            "request_offsets": rqo,
            "request_resource": rqr,
            "request_amount": rqa,
            "namespaces": namespaces,
            "names": names,
            "uids": uids,
            "pod_set_name": psn,
            "pod_set_names": list(self._names),
            "block": block,
            "block_message": message,
            "block_messages": list(self._messages),
            "local_queue": lq,
        }

    def shape(self, wl):
        """(pod sets, scheduling hash, resources error) of any workload (pending or
        admitted) as WorkloadCompiler.compile gives them, from the same memo as
        the rows; None when the memo cannot say (compile it). The pod sets are
        shared by every workload of the shape: not to be modified."""
        prio = wl.priority
        if type(prio) is not int or not (INT32_MIN <= prio <= INT32_MAX):
            return None
        cdef int64_t shape = self._trusted_shape(wl, wl.raw, prio)
        if shape == _UNTRUSTED:
            shape = self._computed_shape(wl)
        if shape < 0:
            return None
        return self._shape_of[shape]

    cdef int64_t _row(self, str key, object wl) except -2:
        """Append the workload's row; its index, or -1 when compile() must add it."""
        if wl.admission is not None or wl.admission_checks or not wl.active:
            return -1
        raw = wl.raw
        if raw and _job_uid(raw):
            return -1
        ns, queue_name = wl.namespace, wl.queue_name
        qkey = (ns, queue_name)
        queue = self._queues.get(qkey)
        if queue is None:
            c = self.compiler
            cq_id, _, selected = c._queue_of(ns, queue_name)
            lq_id = c._lq_id.get(f"{ns}/{queue_name}", -1)
            queue = (cq_id, lq_id, BLOCK_NONE if selected else BLOCK_NAMESPACE_MISMATCH)
            self._queues[qkey] = queue
        cq_id, lq_id, block = <tuple>queue
        prio = wl.priority
        if cq_id < 0 or type(prio) is not int or not (INT32_MIN <= prio <= INT32_MAX):
            return -1  # its unqueued reason lives in a WorkloadSpec only; the engine refuses it
        cdef int64_t shape = self._trusted_shape(wl, raw, prio)
        if shape == _UNTRUSTED:
            shape = self._computed_shape(wl)
        if shape < 0:
            return -1
        cdef int64_t message = -1
        if block == BLOCK_NAMESPACE_MISMATCH:
            message = self._message(NAMESPACE_MISMATCH_MESSAGE)
        elif self.sh_error[shape] >= 0:
            block, message = BLOCK_RESOURCES_INVALID, self.sh_error[shape]
        queue_ts = wl.creation_ns if wl.queue_order_ns is None else self.compiler._queue_ts(wl)
        self.w_cq.push_back(cq_id)
        self.w_lq.push_back(lq_id)
        self.w_prio.push_back(prio)
        self.w_ts.push_back(queue_ts)
        self.w_block.push_back(block)
        self.w_message.push_back(message)
        self.w_shape.push_back(shape)
        self.w_ns.append(ns)
        self.w_name.append(wl.name)
        self.w_uid.append(wl.uid or wl.key)
        return self.w_shape.size() - 1

    cdef int64_t _message(self, str text) except -1:
        idx = self._messages.get(text)
        if idx is None:
            idx = self._messages[text] = len(self._messages)
        return idx

    cdef int64_t _trusted_shape(self, object wl, object raw, object prio) except -3:
        """The shape of a workload whose pod sets all still hold the template they
        were read from (_REFUSED when the arrays cannot carry it), else _UNTRUSTED."""
        pod_sets = wl.pod_sets
        if type(pod_sets) is not list or type(raw) is not dict:
            return _UNTRUSTED
        spec = (<dict>raw).get("spec")
        if type(spec) is not dict:
            return _UNTRUSTED
        raw_sets = (<dict>spec).get("podSets")
        if type(raw_sets) is not list or len(<list>raw_sets) != len(<list>pod_sets):
            return _UNTRUSTED
        cdef list parts = [prio]
        cdef Py_ssize_t i
        for i in range(len(<list>pod_sets)):
            ps = (<list>pod_sets)[i]
            template_spec = ps.template_spec
            if template_spec is None:
                return _UNTRUSTED
            raw_ps = (<list>raw_sets)[i]
            if type(raw_ps) is not dict:
                return _UNTRUSTED
            template = (<dict>raw_ps).get("template")
            if type(template) is not dict or (<dict>template).get("spec") is not template_spec:
                return _UNTRUSTED
            name, count, reclaimable, min_count = ps.name, ps.count, ps.reclaimable, ps.min_count
            if (
                type(name) is not str
                or type(count) is not int
                or type(reclaimable) is not int
                or (min_count is not None and type(min_count) is not int)
            ):
                return _UNTRUSTED
            parts.append((name, count, reclaimable, min_count, id(template_spec)))
        key = tuple(parts)
        hit = self._trusted.get(key)
        if hit is not None:
            return hit
        # first met: through the exact key, so that equal templates not shared
        # (NaN, other loads) still cost one computation per value
        cdef int64_t shape = self._computed_shape(wl)
        if shape < 0:
            return _REFUSED
        self._kept.append([ps.template_spec for ps in pod_sets])
        self._trusted[key] = shape
        return shape

    cdef int64_t _computed_shape(self, object wl) except -3:
        """The shape PendingBatch._shape gives (_REFUSED: None)."""
        found = self._shape(wl)
        if found is None:
            return _REFUSED
        pod_sets, scheduling_hash, resources_error = found
        # _shape gives the same pod sets object for the same shape (its memo keeps it alive)
        hit = self._computed.get(id(pod_sets))
        if hit is not None and (<tuple>hit)[0] is pod_sets:
            return (<tuple>hit)[1]
        cdef int64_t shape = self.sh_hash.size()
        cdef dict names = self._names
        self.sh_hash.push_back(scheduling_hash)
        self.sh_error.push_back(self._message(resources_error) if resources_error else -1)
        for ps in <list>pod_sets:
            self.ps_count.push_back(ps.count)
            self.ps_min.push_back(-1 if ps.min_count is None else ps.min_count)
            self.ps_class.push_back(ps.flavor_class)
            idx = names.get(ps.name)
            if idx is None:
                idx = names[ps.name] = len(names)
            self.ps_name.push_back(idx)
            for r, a in ps.requests:
                self.rq_resource.push_back(r)
                self.rq_amount.push_back(a)
            self.ps_rq.push_back(self.rq_resource.size())
        self.sh_ps.push_back(self.ps_count.size())
        self._computed[id(pod_sets)] = (pod_sets, shape)
        self._shape_of.append(found)
        return shape


cdef int64_t _UNTRUSTED = -1  # _trusted_shape: not keyed by its templates
cdef int64_t _REFUSED = -2  # a shape the engine refuses in bulk


cdef bint _job_uid(object raw) except -1:
    """Whether the Workload carries a job-uid label (engine.workloads._job_uid)."""
    md = raw.get("metadata") or {}
    labels = md.get("labels")
    if not isinstance(labels, dict):
        return False
    uid = (<dict>labels).get(JOB_UID_LABEL)
    return isinstance(uid, str) and len(<str>uid) > 0
