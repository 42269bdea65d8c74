"""The Dask settings ``occam.distributed`` recommends for the workers that hold its shards, and a
LocalCluster made with them (:func:`local_cluster`).

A worker of a data-parallel fit spends a sweep in one call into the engine, which releases the
GIL; Dask's own periodic work then runs beside it, on the same cores. By default every Dask
server (worker, nanny, scheduler) samples its threads' stacks every 10 ms for the dashboard's
profile (``distributed.worker.profile``), checks its event loop every 20 ms
(``distributed.admin.tick``) and reads the machine's counters every 0.5 s
(``distributed.admin.system-monitor``). With one worker per core nothing is left over for that
work, and it wakes the worker's process between the engine's passes. The settings below turn
the profiler off and make the other two rare; they change what the dashboard shows, not what
the fit computes (the same bits: the sums are exact, see ``_exactsum``).
"""

__all__ = ["cluster_config", "local_cluster"]


def cluster_config():
    """Dask configuration for a cluster running ``occam.distributed`` fits (a dict for
    ``dask.config.set``; for ``dask worker`` processes, the same keys in their YAML or as
    ``DASK_`` environment variables): the workers' statistical profiler off, the event loop's
    health check every second instead of every 20 ms, the system monitor every 10 s instead of
    every 0.5 s."""
    return {
        "distributed.worker.profile.enabled": False,
        "distributed.admin.tick.interval": "1s",
        "distributed.admin.tick.limit": "30s",
        "distributed.admin.system-monitor.interval": "10s",
    }


def local_cluster(workers, engine_threads=1, **kwargs):
    """A ``dask.distributed.LocalCluster`` of ``workers`` processes × 1 Dask thread for
    ``occam.distributed.fit``, made with :func:`cluster_config` (which its nannies pass on to the
    workers) and ``RAYON_NUM_THREADS=engine_threads`` in the workers' environment (the engine's
    own threads per worker: by default each worker's engine would use every core). ``kwargs``
    go to ``LocalCluster`` (e.g. ``memory_limit``, ``dashboard_address``) and override these."""
    import dask
    from dask.distributed import LocalCluster

    if workers < 1 or engine_threads < 1:
        from ._errors import UsageError
        raise UsageError(f"workers = {workers}, engine_threads = {engine_threads}: give 1 or more")
    env = dict(kwargs.pop("env", {}) or {})
    env.setdefault("RAYON_NUM_THREADS", str(engine_threads))
    opts = dict(n_workers=workers, threads_per_worker=1, processes=True, env=env)
    opts.update(kwargs)
    with dask.config.set(cluster_config()):
        return LocalCluster(**opts)
