"""Bulk queries on a Dask cluster: ``line_of_sight``, ``cast_rays`` and ``test_occlusions`` over
``dask.array`` inputs chunked along the first axis (``pip install 'lanecast[dask]'``).

How it works
------------
* The scene travels to the workers once, as its plain numpy geometry arrays: one
  ``dask.delayed`` object per call, which the scheduler sends to each worker that runs a chunk
  (and keeps there while the graph runs). With a ``distributed`` client, ``client.scatter(scene,
  broadcast=True)`` beforehand ships it once for many calls; pass the future as ``scene``.
* Each worker *process* keeps the scenes it has built in a cache keyed by
  :meth:`lanecast.Scene.content_hash`, so the BVH is built once per process, not per chunk or
  per call. :func:`build_count` tells how many builds a process has done.
* Each chunk is one batch query on the worker, with ``nthreads`` rayon threads (default 1: one
  thread per Dask worker thread; raise it for workers with one thread and several cores).
* Results are dask arrays with the input's chunks along the first axis; nothing is computed
  until you call ``.compute()``.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional

import numpy as np

from . import Scene

try:
    import dask
    import dask.array as da
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("lanecast.dask needs dask: pip install 'lanecast[dask]'") from e

__all__ = ["line_of_sight", "cast_rays", "test_occlusions", "build_count", "clear_cache"]

_lock = threading.Lock()
_cache: Dict[str, Scene] = {}
_builds = 0
#: Scenes kept per process; the least recently added is dropped beyond it.
CACHE_SIZE = 4


def _built(scene: Scene) -> Scene:
    """This process's built copy of ``scene`` (built once per content hash)."""
    global _builds
    key = scene.content_hash()
    with _lock:
        hit = _cache.get(key)
        if hit is not None:
            return hit
        scene.build()
        _builds += 1
        _cache[key] = scene
        while len(_cache) > CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        return scene


def build_count() -> int:
    """How many scenes this process has built for ``lanecast.dask`` (for tests and tuning:
    run it on every worker with ``client.run(lanecast.dask.build_count)``)."""
    return _builds


def clear_cache() -> None:
    """Drops this process's cached scenes and resets :func:`build_count`."""
    global _builds
    with _lock:
        _cache.clear()
        _builds = 0


def _check_chunks(name: str, x: Any, width: tuple) -> "da.Array":
    arr = x if isinstance(x, da.Array) else da.asarray(x)
    if arr.ndim != 2 or arr.shape[1] not in width:
        raise ValueError(f"{name}: expected a dask array of shape (n, {' or '.join(map(str, width))}), got {arr.shape}")
    if len(arr.chunks[1]) != 1:
        arr = arr.rechunk({1: -1})
    return arr


def _scene_arg(scene: Any) -> Any:
    """A delayed handle on the scene, so the graph carries it once, not once per chunk."""
    if isinstance(scene, Scene):
        return dask.delayed(scene, pure=True)
    return scene  # a distributed Future from client.scatter, or an existing Delayed


def _los_block(a: np.ndarray, b: np.ndarray, scene: Scene, nthreads: int) -> np.ndarray:
    return _built(scene).line_of_sight(a, b, nthreads=nthreads)


def _occ_block(r: np.ndarray, scene: Scene, nthreads: int, tnear: Optional[float], tfar: Optional[float]) -> np.ndarray:
    return _built(scene).test_occlusions(r, tnear=tnear, tfar=tfar, nthreads=nthreads)


def _cast_block(r: np.ndarray, scene: Scene, nthreads: int) -> np.ndarray:
    h = _built(scene).cast_rays(r, nthreads=nthreads)
    out = np.empty((r.shape[0], 9), dtype=np.float32)
    out[:, 0] = h["t_hit"]
    out[:, 1] = h["geometry_ids"].view(np.float32)
    out[:, 2] = h["primitive_ids"].view(np.float32)
    out[:, 3:5] = h["primitive_uvs"]
    out[:, 5:8] = h["primitive_normals"]
    out[:, 8] = 0
    return out


def _as_u32(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x).view(np.uint32)


def line_of_sight(scene: Any, a: Any, b: Any, nthreads: int = 1) -> "da.Array":
    """Whether ``a[i]`` sees ``b[i]`` (see :meth:`lanecast.Scene.line_of_sight`), as a bool
    dask array chunked like ``a``. ``a`` and ``b`` are ``(n, 3)`` with the same chunks (``b``
    is rechunked to ``a``'s if needed)."""
    a = _check_chunks("a", a, (3,))
    b = _check_chunks("b", b, (3,))
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    if b.chunks != a.chunks:
        b = b.rechunk(a.chunks)
    return da.map_blocks(_los_block, a, b, _scene_arg(scene), nthreads, dtype=bool, drop_axis=1, chunks=(a.chunks[0],), meta=np.empty((0,), bool))


def test_occlusions(scene: Any, rays: Any, tnear: Optional[float] = None, tfar: Optional[float] = None, nthreads: int = 1) -> "da.Array":
    """Any hit along each ray (see :meth:`lanecast.Scene.test_occlusions`), as a bool dask
    array chunked like ``rays`` (``(n, 6)`` or ``(n, 8)``)."""
    r = _check_chunks("rays", rays, (6, 8))
    return da.map_blocks(_occ_block, r, _scene_arg(scene), nthreads, tnear, tfar, dtype=bool, drop_axis=1, chunks=(r.chunks[0],), meta=np.empty((0,), bool))


# Keep pytest from collecting the public function above as a test when a test module imports it.
test_occlusions.__test__ = False  # type: ignore[attr-defined]


def cast_rays(scene: Any, rays: Any, nthreads: int = 1) -> Dict[str, "da.Array"]:
    """Closest hits (see :meth:`lanecast.Scene.cast_rays`) as a dict of dask arrays chunked
    like ``rays``: ``t_hit``, ``geometry_ids``, ``primitive_ids`` (uint32),
    ``primitive_uvs`` (n, 2), ``primitive_normals`` (n, 3). One task per chunk computes all of
    them (they share one packed block)."""
    r = _check_chunks("rays", rays, (6, 8))
    packed = da.map_blocks(_cast_block, r, _scene_arg(scene), nthreads, dtype=np.float32, chunks=(r.chunks[0], (9,)), meta=np.empty((0, 0), np.float32))
    return {
        "t_hit": packed[:, 0],
        "geometry_ids": packed[:, 1].map_blocks(_as_u32, dtype=np.uint32, meta=np.empty((0,), np.uint32)),
        "primitive_ids": packed[:, 2].map_blocks(_as_u32, dtype=np.uint32, meta=np.empty((0,), np.uint32)),
        "primitive_uvs": packed[:, 3:5],
        "primitive_normals": packed[:, 5:8],
    }
