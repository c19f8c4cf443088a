"""``lanecast.dask`` on a two-worker ``distributed.LocalCluster`` (loopback only): the answers equal
the in-process ones bit for bit, and each worker process builds the scene once."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SCENES, rays_at

import lanecast

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'lanecast[dask]')")
distributed = pytest.importorskip("distributed", reason="distributed is not installed")
ldask = pytest.importorskip("lanecast.dask")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    )
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_line_of_sight_on_a_cluster_equals_in_process(client, monkeypatch):
    scene = lanecast.Scene.from_file(SCENES / "city.toml")
    n = 1_000_000
    rng = np.random.default_rng(99)
    lo, hi = scene.bounds()
    a = rng.uniform(lo, hi, (n, 3)).astype(np.float32)
    b = rng.uniform(lo, hi, (n, 3)).astype(np.float32)
    expected = scene.line_of_sight(a, b)
    assert 0.05 < expected.mean() < 0.95
    client.run(ldask.clear_cache)
    da_a = da.from_array(a, chunks=(n // 16, 3))
    da_b = da.from_array(b, chunks=(n // 16, 3))
    got = ldask.line_of_sight(scene, da_a, da_b)
    assert got.chunks == ((n // 16,) * 16,) and got.dtype == np.bool_
    pickled = []
    state = lanecast.Scene.__getstate__
    monkeypatch.setattr(lanecast.Scene, "__getstate__", lambda self: pickled.append(1) or state(self))
    np.testing.assert_array_equal(got.compute(), expected)
    # Once with the graph (the client may pickle the graph twice: to size it, then to send it).
    assert 1 <= len(pickled) <= 2, f"the scene was pickled {len(pickled)} times for 16 chunks"
    builds = client.run(ldask.build_count)
    assert sorted(builds.values()) == [1, 1], f"builds per worker: {builds}"
    # A second query on the same scene reuses the workers' cached builds.
    again = ldask.line_of_sight(scene, da_b, da_a).compute()
    np.testing.assert_array_equal(again, scene.line_of_sight(b, a))
    assert sorted(client.run(ldask.build_count).values()) == [1, 1]


def test_cast_rays_and_occlusions_on_a_cluster_equal_in_process(client):
    scene = lanecast.Scene.from_file(SCENES / "bunny.toml")
    rays = rays_at(scene.build(), 40_000, seed=8, width=8)
    d = da.from_array(rays, chunks=(5_000, 8))
    got = ldask.cast_rays(scene, d)
    ref = scene.cast_rays(rays)
    assert set(got) == set(ref)
    for k in ref:
        np.testing.assert_array_equal(got[k].compute(), ref[k], err_msg=k)
    np.testing.assert_array_equal(ldask.test_occlusions(scene, d).compute(), scene.test_occlusions(rays))


def test_bad_dask_input_is_a_clear_error():
    scene = lanecast.Scene.default()
    with pytest.raises(ValueError, match=r"rays: expected a dask array of shape \(n, 6 or 8\)"):
        ldask.cast_rays(scene, da.zeros((10, 5), chunks=5))
    with pytest.raises(ValueError, match="same shape"):
        ldask.line_of_sight(scene, da.zeros((10, 3)), da.zeros((9, 3)))
