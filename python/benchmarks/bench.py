"""lanecast from Python beside embreex (Embree 4) and Open3D's RaycastingScene.

    python python/benchmarks/bench.py [--rays 1048576] [--repeat 3] [--scenes bunny sponza]

For each scene (the mesh alone, no floor) and ray set (``primary``: a pinhole image from the
scene file's camera; ``incoherent``: random origins in the scene box towards random points of
it), it times ``cast_rays`` and ``test_occlusions`` (best of ``--repeat``) at 1 thread and at all
cores, and prints Mrays/s as a Markdown table. Engines that are not installed are listed as such.
embreex loops over ``rtcIntersect1``/``rtcOccluded1`` on one thread; it has no thread setting.

It also prints the overhead of the Python call over the Rust batch API (``Scene::intersect_batch``
/ ``occluded_batch`` timed inside Rust on the same rays, already in lanecast's column layout).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import lanecast

ROOT = Path(__file__).resolve().parents[2]


def best(f, repeat):
    t = []
    for _ in range(repeat):
        s = time.perf_counter()
        f()
        t.append(time.perf_counter() - s)
    return min(t)


def ray_sets(name, v, n, rng):
    scene_file = lanecast.Scene.from_file(ROOT / "scenes" / f"{name}.toml")
    cam = scene_file.camera
    side = int(round(np.sqrt(n)))
    primary = lanecast.create_rays_pinhole(
        2 * np.degrees(np.arctan(np.tan(np.radians(cam["fov_y_deg"]) / 2))),  # square image: fov_x = fov_y
        cam["look_at"], cam["eye"], cam["up"], side, side,
    ).reshape(-1, 6)
    lo, hi = v.min(0), v.max(0)
    o = rng.uniform(lo, hi, (n, 3))
    d = rng.uniform(lo, hi, (n, 3)) - o
    incoherent = np.ascontiguousarray(np.concatenate([o, d], 1), np.float32)
    return {"primary": np.ascontiguousarray(primary), "incoherent": incoherent}


def engines(v, t, all_threads):
    out = {}
    s = lanecast.Scene()
    s.add_triangles(v, t)
    s.build()
    for nt, label in ((1, "1"), (0, str(all_threads))):
        out[f"lanecast ({label} thr)"] = (
            lambda r, nt=nt: s.cast_rays(r, nthreads=nt),
            lambda r, nt=nt: s.test_occlusions(r, nthreads=nt),
        )
    try:
        from embreex import rtcore_scene
        from embreex.mesh_construction import TriangleMesh

        es = rtcore_scene.EmbreeScene()
        TriangleMesh(es, v, t.astype(np.int32))

        def e_cast(r):
            return es.run(np.ascontiguousarray(r[:, :3]), np.ascontiguousarray(r[:, 3:6]), output=1)

        def e_occ(r):
            return es.run(np.ascontiguousarray(r[:, :3]), np.ascontiguousarray(r[:, 3:6]), query="OCCLUDED")

        out["embreex (1 thr)"] = (e_cast, e_occ)
    except ImportError:
        out["embreex: not installed"] = None
    try:
        import open3d as o3d

        for nt, label in ((1, "1"), (0, str(all_threads))):
            os_ = o3d.t.geometry.RaycastingScene(nthreads=nt)
            os_.add_triangles(o3d.core.Tensor(v), o3d.core.Tensor(t))
            out[f"open3d ({label} thr)"] = (
                lambda r, s=os_, nt=nt: s.cast_rays(o3d.core.Tensor(r), nthreads=nt),
                lambda r, s=os_, nt=nt: s.test_occlusions(o3d.core.Tensor(r), nthreads=nt),
            )
    except ImportError:
        out["open3d-cpu: not installed"] = None
    return s, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rays", type=int, default=1 << 20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--scenes", nargs="+", default=["bunny", "sponza"])
    a = ap.parse_args()
    cores = os.cpu_count() or 1
    print(f"lanes: {lanecast.SIMD}; {cores} cores; {a.rays} rays per set; best of {a.repeat}; Mrays/s\n")
    print("| scene | rays | engine | cast_rays | test_occlusions |")
    print("|---|---|---|---:|---:|")
    overhead = []
    for name in a.scenes:
        v, t = lanecast.load_mesh(ROOT / "scenes" / f"{name}.ply")
        sets = ray_sets(name, v, a.rays, np.random.default_rng(1))
        s, es = engines(v, t, cores)
        for set_name, r in sets.items():
            for label, fns in es.items():
                if fns is None:
                    print(f"| {name} | {set_name} | {label} | — | — |")
                    continue
                cast, occ = fns
                tc, to = best(lambda: cast(r), a.repeat), best(lambda: occ(r), a.repeat)
                n = r.shape[0]
                print(f"| {name} | {set_name} | {label} | {n / tc / 1e6:.2f} | {n / to / 1e6:.2f} |")
            for nt in (1, 0):
                py_c = best(lambda: s.cast_rays(r, nthreads=nt), a.repeat)
                rs_c = min(s._rust_batch_seconds(r, False, nt) for _ in range(a.repeat))
                py_o = best(lambda: s.test_occlusions(r, nthreads=nt), a.repeat)
                rs_o = min(s._rust_batch_seconds(r, True, nt) for _ in range(a.repeat))
                overhead.append((name, set_name, nt or cores, py_c / rs_c, py_o / rs_o))
    print("\nPython call over the Rust batch API, same rays (time ratio; 1.00 = no overhead):\n")
    print("| scene | rays | threads | cast_rays / intersect_batch | test_occlusions / occluded_batch |")
    print("|---|---|---:|---:|---:|")
    for name, set_name, nt, c, o in overhead:
        print(f"| {name} | {set_name} | {nt} | {c:.3f} | {o:.3f} |")


if __name__ == "__main__":
    main()
