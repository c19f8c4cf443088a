"""What the Python package promises beyond single answers: pickling, bounded memory, no growth
over many calls, the GIL released during queries, and agreement with Embree (embreex)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
import textwrap

import numpy as np
import pytest
from conftest import SCENES, rays_at

import lanecast


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_pickle_round_trip_rebuilds_the_same_scene(bunny):
    s = lanecast.Scene.from_file(SCENES / "default.toml")
    s.add_spheres([[9, 9, 9]], 0.5)
    blob = pickle.dumps(s)
    assert b"Built" not in blob, "a scene pickles as arrays, not as the compiled object"
    back = pickle.loads(blob)
    assert back.content_hash() == s.content_hash() and back.camera == s.camera
    assert back.geometry_count == s.geometry_count
    rays = rays_at(s, 5_000, seed=3)
    a, b = s.cast_rays(rays), back.cast_rays(rays)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    other = lanecast.Scene.from_file(SCENES / "default.toml")
    assert other.content_hash() != s.content_hash()
    other.add_spheres([[9, 9, 9]], 0.5)
    assert other.content_hash() == s.content_hash()


def test_memory_stays_bounded_on_huge_inputs(tmp_path):
    """A query on 4M rays takes its outputs and little more: no copy of the rays, no per-ray
    temporaries. Measured as the peak RSS of a fresh process."""
    n = 4_000_000
    script = textwrap.dedent(
        f"""
        import resource, numpy as np, lanecast
        s = lanecast.Scene.from_file({str(SCENES / "bunny.toml")!r}).build()
        rng = np.random.default_rng(0)
        rays = np.empty(({n}, 6), np.float32)
        rays[:, :3] = rng.uniform(-0.2, 0.2, ({n}, 3))
        rays[:, 3:] = rng.normal(size=({n}, 3))
        s.cast_rays(rays[:1000]); s.test_occlusions(rays[:1000])
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        h = s.cast_rays(rays)
        peak_cast = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - base
        del h
        o = s.test_occlusions(rays)
        print(peak_cast, o.sum())
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    peak = int(out[0])
    outputs = n * (4 + 4 + 4 + 8 + 12)  # t, two ids, uv, normal
    # A copy of the rays into columns (32 bytes per ray) would add 128 MB.
    assert peak < outputs + 48 * 2**20, f"cast_rays on {n} rays raised the peak RSS by {peak / 2**20:.0f} MiB"


def test_no_memory_growth_over_1000_calls(bunny):
    rays = rays_at(bunny, 2_000, seed=1)
    pts = rays[:, :3].copy()

    def round_of_calls():
        bunny.cast_rays(rays)
        bunny.test_occlusions(rays)
        bunny.list_intersections(rays[:200])
        bunny.compute_closest_points(pts[:200])

    for _ in range(100):
        round_of_calls()
    before = _rss_bytes()
    for _ in range(1000):
        round_of_calls()
    grown = _rss_bytes() - before
    # One call's outputs are ~100 kB; a leak of one of them per call would be ~100 MB.
    assert grown < 8 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 1000 rounds of calls"


def test_the_gil_is_released_during_queries(bunny):
    """While one thread is inside a long query, another thread keeps running Python code.

    The query thread reads a counter that the other thread increments just before and just
    after the compiled call. With the GIL held through the call, the counter could only move
    at the two switch points around it (the switch interval is set to 0.1 ms, so a few thousand
    steps at most); with the GIL released it moves for the whole query (millions of steps).
    """
    rays, _ = lanecast._rays(rays_at(bunny, 1_500_000, seed=5))
    built = bunny._scene()
    state = {"k": 0, "stop": False}
    running = threading.Event()
    seen = []

    def count():
        running.set()
        while not state["stop"]:
            state["k"] += 1

    def query():
        running.wait()
        before = state["k"]
        built.cast_rays(rays, 1)
        seen.append(state["k"] - before)
        state["stop"] = True

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        threads = [threading.Thread(target=count), threading.Thread(target=query)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert seen[0] > 100_000, f"only {seen[0]} Python steps ran during the query"


def test_agrees_with_embree_on_the_bunny(bunny):
    embreex = pytest.importorskip("embreex", reason="embreex (Embree 4) does not install here")
    from embreex import rtcore_scene
    from embreex.mesh_construction import TriangleMesh

    v, t = lanecast.load_mesh(SCENES / "bunny.ply")
    es = rtcore_scene.EmbreeScene()
    TriangleMesh(es, v, t.astype(np.int32))
    only = lanecast.Scene()
    only.add_triangles(v, t)
    n = 100_000
    rays = rays_at(only, n, seed=2024)
    o, d = np.ascontiguousarray(rays[:, :3]), np.ascontiguousarray(rays[:, 3:])
    ref = es.run(o, d, output=1)
    h = only.cast_rays(rays)
    ours_hit = h["geometry_ids"] != lanecast.INVALID_ID
    theirs_hit = ref["geomID"] >= 0
    assert 0.2 < ours_hit.mean() < 0.9
    same = (ours_hit == theirs_hit) & (~ours_hit | (h["primitive_ids"].astype(np.int64) == ref["primID"]))
    assert same.mean() >= 0.9999, f"{(~same).sum()} of {n} rays differ from Embree"
    both = ours_hit & theirs_hit
    np.testing.assert_allclose(h["t_hit"][both], ref["tfar"][both], rtol=1e-4)
    occ = es.run(o, d, query="OCCLUDED") >= 0
    assert (only.test_occlusions(rays) == occ).mean() >= 0.9999
    del embreex


def test_each_python_thread_gets_its_own_pool():
    """Two Python threads asking for ``nthreads=1`` must not queue for one shared worker (they
    did, when pools were shared by size: two threads together took as long as one after the
    other). Each calling thread has its own pool of each size, and keeps it."""
    from lanecast import _lanecast

    ids = {}
    # Both threads stay alive until both have their pools (a dead thread's pools are freed,
    # and a new pool could reuse the address).
    both = threading.Barrier(2)

    def probe(name):
        ids[name] = (_lanecast._pool_id(1), _lanecast._pool_id(1), _lanecast._pool_id(2), _lanecast._pool_id(0))
        both.wait()

    threads = [threading.Thread(target=probe, args=(k,)) for k in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a1, a1_again, a2, a0), (b1, _, b2, b0) = ids["a"], ids["b"]
    assert a1 == a1_again != 0, "a thread keeps its pool"
    assert a1 != b1 and a2 != b2, "two threads never share a pool"
    assert a1 != a2 and a0 == b0 == 0, "one pool per size; 0 is the global pool"
    with pytest.raises(ValueError, match="at most 1024"):
        _lanecast._pool_id(1025)
