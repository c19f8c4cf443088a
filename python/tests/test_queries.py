"""Every query of ``lanecast.Scene`` against the Rust API's answers (through the ``lanecast``
command line and its ``.npy`` files), and against answers known analytically."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import SCENES, points_near, rays_at

import lanecast

INV = lanecast.INVALID_ID


def _cli_hits(cli, tmp_path, scene_file, rays, *extra):
    src, out = tmp_path / "rays.npy", tmp_path / "hits.npy"
    np.save(src, rays)
    cli("cast", scene_file, "--rays", src, "--out", out, *extra)
    return np.load(out)


@pytest.mark.parametrize("width", [6, 8])
@pytest.mark.parametrize("name", ["bunny", "default"])
def test_cast_rays_equals_the_rust_batch(cli, tmp_path, name, width):
    scene = lanecast.Scene.from_file(SCENES / f"{name}.toml")
    rays = rays_at(scene, 20_000, seed=7 + width, width=width)
    rays[::97, 3] = np.nan  # invalid rays: misses in both
    h = scene.cast_rays(rays)
    ref = _cli_hits(cli, tmp_path, SCENES / f"{name}.toml", rays)
    assert 0.1 < np.isfinite(h["t_hit"]).mean() < 0.95, "the ray set should mix hits and misses"
    np.testing.assert_array_equal(h["t_hit"], ref["t"])
    np.testing.assert_array_equal(h["geometry_ids"], ref["geom"])
    np.testing.assert_array_equal(h["primitive_ids"], ref["prim"])
    np.testing.assert_array_equal(h["primitive_uvs"], np.stack([ref["u"], ref["v"]], axis=1))
    np.testing.assert_array_equal(h["primitive_normals"], np.stack([ref["nx"], ref["ny"], ref["nz"]], axis=1))
    assert (h["geometry_ids"][::97] == INV).all() and np.isinf(h["t_hit"][::97]).all()


def test_line_of_sight_equals_the_rust_batch(cli, tmp_path, bunny):
    rng = np.random.default_rng(3)
    lo, hi = bunny.bounds()
    a = rng.uniform(lo, hi, (20_000, 3)).astype(np.float32)
    b = rng.uniform(lo, hi, (20_000, 3)).astype(np.float32)
    seg, out = tmp_path / "seg.npy", tmp_path / "vis.npy"
    np.save(seg, np.concatenate([a, b], axis=1))
    cli("los", SCENES / "bunny.toml", "--segments", seg, "--out", out)
    vis = bunny.line_of_sight(a, b)
    assert vis.dtype == np.bool_ and 0.05 < vis.mean() < 0.95
    np.testing.assert_array_equal(vis, np.load(out))


def test_occlusions_agree_with_closest_hits(bunny):
    rays = rays_at(bunny, 20_000, seed=11)
    hit = np.isfinite(bunny.cast_rays(rays)["t_hit"])
    np.testing.assert_array_equal(bunny.test_occlusions(rays), hit)
    # An interval that ends before the closest hit sees nothing; one that covers it does.
    t = bunny.cast_rays(rays)["t_hit"]
    k = np.flatnonzero(hit)[:2000]
    r8 = np.concatenate([rays[k], np.zeros((k.size, 1), np.float32), (t[k] * 0.999)[:, None]], axis=1)
    assert not bunny.test_occlusions(r8).any()
    assert bunny.test_occlusions(rays[k], tnear=0.0, tfar=float(np.max(t[k])) * 1.001).all()
    with pytest.raises(ValueError, match="carry their own"):
        bunny.test_occlusions(r8, tfar=1.0)


def test_count_and_list_intersections_equal_the_rust_batch(cli, tmp_path, bunny):
    rays = rays_at(bunny, 5_000, seed=5)
    src, cnt, lst = tmp_path / "r.npy", tmp_path / "c.npy", tmp_path / "l.npy"
    np.save(src, rays)
    cli("count", SCENES / "bunny.toml", "--rays", src, "--out", cnt)
    cli("cast", SCENES / "bunny.toml", "--rays", src, "--all", "--out", lst)
    counts = bunny.count_intersections(rays)
    np.testing.assert_array_equal(counts, np.load(cnt))
    assert counts.max() >= 2
    li = bunny.list_intersections(rays)
    ref = np.load(lst)
    np.testing.assert_array_equal(np.diff(li["ray_splits"]), counts)
    np.testing.assert_array_equal(li["ray_ids"], ref["ray"])
    np.testing.assert_array_equal(li["t_hit"], ref["t"])
    np.testing.assert_array_equal(li["geometry_ids"], ref["geom"])
    np.testing.assert_array_equal(li["primitive_ids"], ref["prim"])
    np.testing.assert_array_equal(li["primitive_uvs"], np.stack([ref["u"], ref["v"]], 1))
    np.testing.assert_array_equal(li["primitive_normals"], np.stack([ref["nx"], ref["ny"], ref["nz"]], 1))
    # The first listed hit of each ray is its closest hit.
    first = li["ray_splits"][:-1][counts > 0]
    np.testing.assert_array_equal(li["t_hit"][first], bunny.cast_rays(rays)["t_hit"][counts > 0])


@pytest.mark.parametrize("signed", [False, True])
def test_closest_points_equal_the_rust_batch(cli, tmp_path, bunny, signed):
    p = points_near(bunny, 5_000, seed=2)
    src, out = tmp_path / "p.npy", tmp_path / "c.npy"
    np.save(src, p)
    cli("closest", SCENES / "bunny.toml", "--points", src, "--out", out, *(["--signed"] if signed else []))
    ref = np.load(out)
    c = bunny.compute_closest_points(p)
    np.testing.assert_array_equal(c["points"], np.stack([ref["x"], ref["y"], ref["z"]], 1))
    np.testing.assert_array_equal(c["geometry_ids"], ref["geom"])
    np.testing.assert_array_equal(c["primitive_ids"], ref["prim"])
    np.testing.assert_array_equal(c["primitive_uvs"], np.stack([ref["u"], ref["v"]], 1))
    dist = bunny.compute_signed_distance(p) if signed else bunny.compute_distance(p)
    np.testing.assert_array_equal(dist, ref["distance"])
    np.testing.assert_array_equal(np.abs(dist), c["distance"])
    if signed:
        assert (dist < 0).any() and (dist > 0).any()


def test_occupancy_equals_the_rust_batch(cli, tmp_path, bunny):
    p = points_near(bunny, 20_000, seed=4)
    src, out = tmp_path / "p.npy", tmp_path / "in.npy"
    np.save(src, p)
    cli("inside", SCENES / "bunny.toml", "--points", src, "--out", out)
    occ = bunny.compute_occupancy(p)
    assert occ.dtype == np.float32 and 0.01 < occ.mean() < 0.9
    np.testing.assert_array_equal(occ, np.load(out).astype(np.float32))
    np.testing.assert_array_equal(occ == 1.0, bunny.compute_signed_distance(p) < 0)


def test_analytic_answers():
    s = lanecast.Scene()
    assert s.add_spheres([[0, 0, 0]], 1.0) == 0
    assert s.add_boxes([[3, -1, -1]], [[4, 1, 1]]) == 1
    assert s.add_plane([0, 1, 0], -5.0) == 2
    assert s.add_triangles([[10, -1, 0], [12, -1, 0], [10, 1, 0]], [[0, 1, 2]]) == 3
    rays = np.array(
        [
            [0, 0, -5, 0, 0, 2],  # sphere, t = 2 (units of |dir| = 2)
            [3.5, 0, -5, 0, 0, 1],  # box face z = -1 at t = 4
            [0, 0, 0, 0, -1, 0],  # from inside the solid sphere: hit at t = tmin = 0
            [20, 0, 0, 0, -1, 0],  # plane y = -5 at t = 5
            [10.5, -0.5, -3, 0, 0, 1],  # triangle at t = 3, u = 0.25, v = 0.25
            [50, 50, 50, 0, 1, 0],  # nothing
        ],
        np.float32,
    )
    h = s.cast_rays(rays)
    np.testing.assert_allclose(h["t_hit"][:5], [2, 4, 0, 5, 3], rtol=1e-6)
    assert np.isinf(h["t_hit"][5])
    np.testing.assert_array_equal(h["geometry_ids"], [0, 1, 0, 2, 3, INV])
    np.testing.assert_array_equal(h["primitive_ids"], [0, 0, 0, 0, 0, INV])
    np.testing.assert_allclose(h["primitive_uvs"][4], [0.25, 0.25], atol=1e-6)
    np.testing.assert_allclose(h["primitive_normals"][0], [0, 0, -1], atol=1e-6)
    np.testing.assert_allclose(h["primitive_normals"][1], [0, 0, -1], atol=1e-6)
    np.testing.assert_allclose(np.abs(h["primitive_normals"][4]), [0, 0, 1], atol=1e-6)
    assert (h["primitive_normals"][5] == 0).all()
    np.testing.assert_array_equal(s.test_occlusions(rays), [True] * 5 + [False])
    # Solids count once; ray 2 also crosses the plane below.
    np.testing.assert_array_equal(s.count_intersections(rays), [1, 1, 2, 1, 1, 0])
    np.testing.assert_allclose(s.compute_distance([[0, 3, 0], [3.5, 0, 0]]), [2, 0.5], rtol=1e-6)
    np.testing.assert_allclose(s.compute_signed_distance([[0, 0.5, 0], [3.5, 0, 0]]), [-0.5, -0.5], rtol=1e-6)
    np.testing.assert_array_equal(s.compute_occupancy([[0, 0.5, 0], [3.5, 0, 0], [2, 0, 0]]), [1, 1, 0])
    np.testing.assert_array_equal(
        s.line_of_sight([[0, 0, -5], [0, 3, -5]], [[0, 0, 5], [0, 3, 5]]), [False, True]
    )
    cp = s.compute_closest_points([[0, 3, 0]])
    np.testing.assert_allclose(cp["points"][0], [0, 1, 0], atol=1e-6)
    assert cp["geometry_ids"][0] == 0


def test_empty_scene_and_empty_inputs():
    s = lanecast.Scene()
    h = s.cast_rays(np.zeros((3, 6), np.float32) + [0, 0, 0, 1, 0, 0])
    assert np.isinf(h["t_hit"]).all() and (h["geometry_ids"] == INV).all()
    assert np.isinf(s.compute_distance([[0, 0, 0]])).all()
    full = lanecast.Scene.default()
    for scene in (s, full):
        e = scene.cast_rays(np.zeros((0, 6), np.float32))
        assert e["t_hit"].shape == (0,) and e["primitive_uvs"].shape == (0, 2) and e["primitive_normals"].shape == (0, 3)
        assert scene.test_occlusions(np.zeros((0, 8), np.float32)).shape == (0,)
        assert scene.count_intersections(np.zeros((0, 0, 6), np.float32)).shape == (0, 0)
        li = scene.list_intersections(np.zeros((0, 6), np.float32))
        assert li["ray_splits"].tolist() == [0] and li["t_hit"].shape == (0,)
        assert scene.compute_closest_points(np.zeros((0, 3), np.float32))["points"].shape == (0, 3)
        assert scene.line_of_sight(np.zeros((0, 3)), np.zeros((0, 3))).shape == (0,)


def test_leading_shapes_are_kept(bunny):
    rays = rays_at(bunny, 4 * 5 * 6, seed=9).reshape(4, 5, 6, 6)
    h = bunny.cast_rays(rays)
    flat = bunny.cast_rays(rays.reshape(-1, 6))
    assert h["t_hit"].shape == (4, 5, 6) and h["primitive_uvs"].shape == (4, 5, 6, 2)
    assert h["primitive_normals"].shape == (4, 5, 6, 3) and h["geometry_ids"].shape == (4, 5, 6)
    np.testing.assert_array_equal(h["t_hit"].reshape(-1), flat["t_hit"])
    assert bunny.test_occlusions(rays).shape == (4, 5, 6)
    assert bunny.count_intersections(rays).shape == (4, 5, 6)
    p = points_near(bunny, 12, seed=1).reshape(3, 4, 3)
    assert bunny.compute_distance(p).shape == (3, 4)
    assert bunny.compute_closest_points(p)["points"].shape == (3, 4, 3)
    assert bunny.line_of_sight(p, p[::-1]).shape == (3, 4)
    single = bunny.cast_rays(rays[0, 0, 0])
    assert single["t_hit"].shape == () and single["primitive_normals"].shape == (3,)


def test_other_dtypes_and_layouts_give_the_same_answers(bunny):
    rays = rays_at(bunny, 3_000, seed=21)
    ref = bunny.cast_rays(rays)["t_hit"]
    variants = {
        "float64": rays.astype(np.float64),
        "big-endian": rays.astype(">f4"),
        "fortran": np.asfortranarray(rays),
        "strided view": np.concatenate([rays, rays], axis=1)[:, :6],
        "non-contiguous view": np.repeat(rays, 2, axis=0)[::2],
        "list": rays[:50].tolist(),
        "misaligned": np.frombuffer(b"\0" + rays.tobytes(), np.float32, rays.size, offset=1).reshape(rays.shape),
    }
    for name, v in variants.items():
        got = bunny.cast_rays(v)["t_hit"]
        np.testing.assert_array_equal(got, ref[: len(got)], err_msg=name)


@pytest.mark.parametrize(
    "bad, exc, words",
    [
        (np.zeros((4, 5), np.float32), ValueError, ["rays", "(..., 6) or (..., 8)", "(4, 5)"]),
        (np.zeros(6, bool), TypeError, ["rays", "dtype bool"]),
        (np.zeros((2, 6), np.complex64), TypeError, ["rays", "complex64"]),
        (np.array([["a"] * 6]), TypeError, ["rays", "<U1"]),
        (np.float32(1.0), ValueError, ["rays", "shape ()"]),
        ([[1, 2, 3], [1, 2]], ValueError, ["rays"]),
    ],
)
def test_bad_rays_raise_clear_errors(bunny, bad, exc, words):
    for f in (bunny.cast_rays, bunny.test_occlusions, bunny.count_intersections, bunny.list_intersections):
        with pytest.raises(exc) as e:
            f(bad)
        for w in words:
            assert w in str(e.value), (w, str(e.value))


def test_bad_points_and_arguments_raise_clear_errors(bunny):
    with pytest.raises(ValueError, match=r"query_points.*\(\.\.\., 3\).*\(5, 2\)"):
        bunny.compute_distance(np.zeros((5, 2), np.float32))
    with pytest.raises(ValueError, match="same shape"):
        bunny.line_of_sight(np.zeros((5, 3)), np.zeros((4, 3)))
    with pytest.raises(TypeError, match="object"):
        bunny.compute_occupancy(np.array([[None, 1, 2]], dtype=object))
    for bad in (-1, 1.5, "2", True, 10**6):
        with pytest.raises(ValueError, match="nthreads"):
            bunny.cast_rays(np.zeros((1, 6), np.float32), nthreads=bad)


def test_nan_and_infinite_input_are_misses(bunny):
    rays = rays_at(bunny, 64, seed=1)
    rays[0, 0] = np.nan
    rays[1, 4] = np.inf
    rays[2, 3:] = 0  # zero direction
    rays[3, 3:] = -0.0
    h = bunny.cast_rays(rays)
    assert np.isinf(h["t_hit"][:4]).all() and (h["geometry_ids"][:4] == INV).all()
    assert not bunny.test_occlusions(rays[:4]).any()
    assert (bunny.count_intersections(rays[:4]) == 0).all()
    r8 = np.concatenate([rays, np.zeros((64, 2), np.float32)], 1)
    r8[:, 7] = np.inf
    r8[4, 6], r8[4, 7] = 2.0, 1.0  # tmin > tmax
    r8[5, 6] = np.nan
    assert not bunny.test_occlusions(r8[4:6]).any()
    p = np.array([[np.nan, 0, 0], [np.inf, 0, 0]], np.float32)
    assert np.isinf(bunny.compute_distance(p)).all()
    assert (bunny.compute_closest_points(p)["geometry_ids"] == INV).all()
    assert (bunny.compute_occupancy(p) == 0).all()


def test_thread_counts_give_the_same_answers(bunny):
    rays = rays_at(bunny, 50_000, seed=13)
    ref = bunny.cast_rays(rays, nthreads=1)
    for n in (0, 2, 3):
        got = bunny.cast_rays(rays, nthreads=n)
        for k in ref:
            np.testing.assert_array_equal(got[k], ref[k], err_msg=f"{k} with nthreads={n}")


def test_invalid_geometry_is_rejected_with_its_reason():
    s = lanecast.Scene()
    with pytest.raises(ValueError, match="indices must lie in"):
        s.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 3]])
    with pytest.raises(ValueError, match="indices must lie in"):
        s.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, -1]])
    with pytest.raises(ValueError, match="not finite"):
        s.add_triangles([[0, 0, 0], [1, np.nan, 0], [0, 1, 0]], [[0, 1, 2]])
    with pytest.raises(TypeError, match="integer"):
        s.add_triangles([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0.0, 1.0, 2.0]])
    with pytest.raises(ValueError, match="sphere 1 is invalid"):
        s.add_spheres([[0, 0, 0], [1, 1, 1]], [1.0, -2.0])
    with pytest.raises(ValueError, match="radii"):
        s.add_spheres([[0, 0, 0], [1, 1, 1]], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="box 0 is invalid"):
        s.add_boxes([[1, 1, 1]], [[0, 0, 0]])
    with pytest.raises(ValueError, match="plane is invalid"):
        s.add_plane([0, 0, 0], 1.0)
    with pytest.raises(ValueError, match="triangle_test"):
        lanecast.Scene(triangle_test="fast")
    assert s.geometry_count == 0, "a rejected geometry takes no id"


def test_scene_files_errors_name_the_file(tmp_path):
    with pytest.raises(OSError, match="nope.toml"):
        lanecast.Scene.from_file(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[[sphere]]\ncenter = [0, 0]\nradius = 1\n")
    with pytest.raises(ValueError, match=r"bad\.toml:2"):
        lanecast.Scene.from_file(bad)
    with pytest.raises(OSError, match="missing.obj"):
        lanecast.load_mesh(tmp_path / "missing.obj")


def test_load_mesh_and_add_triangles_give_the_file_scene(bunny):
    v, t = lanecast.load_mesh(SCENES / "bunny.ply")
    assert v.shape == (34_834, 3) and t.shape == (69_451, 3) and t.dtype == np.uint32
    s = lanecast.Scene()
    s.add_triangles(v, t)
    s.add_plane([0, 1, 0], 0.0329)
    rays = rays_at(bunny, 10_000, seed=17)
    a, b = s.cast_rays(rays), bunny.cast_rays(rays)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_added_arrays_are_copied():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    s = lanecast.Scene()
    s.add_triangles(v, [[0, 1, 2]])
    v[:] = 100
    assert s.cast_rays([0.2, 0.2, -1, 0, 0, 1])["t_hit"] == 1.0


def test_create_rays_pinhole_geometry():
    rays = lanecast.create_rays_pinhole(90.0, [0, 0, -1], [0, 0, 0], [0, 1, 0], 4, 2)
    assert rays.shape == (2, 4, 6) and rays.dtype == np.float32
    assert (rays[..., :3] == 0).all()
    d = rays[..., 3:]
    np.testing.assert_allclose(d[..., 2], -1.0, rtol=1e-6)  # unit length along the view axis
    # 90 degrees horizontal over 4 pixels: pixel centres at x = -0.75, -0.25, 0.25, 0.75.
    np.testing.assert_allclose(d[0, :, 0], [-0.75, -0.25, 0.25, 0.75], rtol=1e-6)
    np.testing.assert_allclose(d[:, 0, 1], [0.25, -0.25], rtol=1e-6)  # row 0 is the top
    s = lanecast.Scene()
    s.add_plane([0, 0, 1], -3.0)
    np.testing.assert_allclose(s.cast_rays(rays)["t_hit"], 3.0, rtol=1e-6)  # depth, not distance
    with pytest.raises(ValueError, match="up"):
        lanecast.create_rays_pinhole(60, [0, 1, 0], [0, 0, 0], [0, 1, 0], 4, 4)
    assert lanecast.Scene.create_rays_pinhole is not None


def test_moller_trumbore_scene_is_a_real_option(bunny):
    mt = lanecast.Scene.from_file(SCENES / "bunny.toml", triangle_test="moller_trumbore")
    rays = rays_at(bunny, 20_000, seed=23)
    a, b = mt.cast_rays(rays), bunny.cast_rays(rays)
    same = a["primitive_ids"] == b["primitive_ids"]
    assert same.mean() > 0.999
    np.testing.assert_allclose(a["t_hit"][same], b["t_hit"][same], rtol=1e-5)
