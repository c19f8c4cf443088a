"""lanecast for Python: ray casting, line of sight and mesh queries on numpy arrays.

The :class:`Scene` API follows Open3D's ``RaycastingScene``: the same method names, argument
names and array shapes where the concepts match (``cast_rays``, ``test_occlusions``,
``count_intersections``, ``list_intersections``, ``compute_closest_points``,
``compute_distance``, ``compute_signed_distance``, ``compute_occupancy``,
``create_rays_pinhole``). Where lanecast differs, the method's docstring says so.

Arrays
------
Rays are ``(..., 6)`` (origin, direction) or ``(..., 8)`` (origin, direction, tmin, tmax)
float32; points are ``(..., 3)``. Results keep the leading shape of the input. C-contiguous
float32 input is read in place, without a copy. Other float or integer dtypes, other byte
orders and non-contiguous views are converted once to a C-contiguous float32 copy (the cost of
one ``numpy.require(a, np.float32, ['C', 'A'])``: 4 bytes per number, one pass;
misaligned buffers, as unpickling can give, are copied too). Booleans, complex numbers,
strings and objects raise ``TypeError``; a wrong shape raises ``ValueError``. Both name the
argument, the expected shape and dtype, and what was given.

Invalid rays (NaN or infinite numbers, a zero direction, ``tmin > tmax``) are misses, never
errors. ``t_hit`` is in units of the ray direction's length (directions are not normalised).

Threads
-------
Every query releases the GIL and runs on lanecast's rayon pool: ``nthreads=0`` uses all cores,
``nthreads=k`` a pool of ``k`` threads (created once per size and calling thread, and reused):
two Python threads that each ask for ``nthreads=1`` run on two cores at once.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _lanecast

__all__ = ["Scene", "INVALID_ID", "SIMD", "load_mesh", "create_rays_pinhole"]

#: The id of a miss (``2**32 - 1``), as Open3D's ``RaycastingScene.INVALID_ID``.
INVALID_ID: int = _lanecast.invalid_id()
#: The instruction set lanecast's lanes were compiled for (e.g. ``"avx2+fma"``).
SIMD: str = _lanecast.SIMD

_Record = Tuple[str, np.ndarray, Optional[np.ndarray]]


def _array(name: str, a: Any, dtype: type, last: Sequence[int], what: str) -> np.ndarray:
    """``a`` as a C-contiguous ``dtype`` array whose last axis is one of ``last``.

    Raises TypeError for a dtype that is not a real number, ValueError for a wrong shape.
    """
    try:
        arr = np.asarray(a)
    except (ValueError, TypeError) as e:
        raise ValueError(f"{name}: expected {what}, got something numpy cannot read as an array ({e})") from None
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name}: expected {what} of a real number dtype (float32 is read without a copy), got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.shape[-1] not in last:
        raise ValueError(f"{name}: expected {what}, got shape {arr.shape}")
    # C order and aligned: an array rebuilt from a byte stream (pickle, Dask frames) can be
    # misaligned, and Rust reads the data as a slice of f32.
    return np.require(arr, dtype=dtype, requirements=["C", "A"])


def _rays(rays: Any) -> Tuple[np.ndarray, Tuple[int, ...]]:
    """Rays as ``(n, 6|8)`` float32 rows and the leading shape."""
    r = _array("rays", rays, np.float32, (6, 8), "float32 rays of shape (..., 6) or (..., 8)")
    return r.reshape(-1, r.shape[-1]), r.shape[:-1]


def _points(name: str, p: Any) -> Tuple[np.ndarray, Tuple[int, ...]]:
    """Points as ``(n, 3)`` float32 rows and the leading shape."""
    a = _array(name, p, np.float32, (3,), "float32 points of shape (..., 3)")
    return a.reshape(-1, 3), a.shape[:-1]


def _threads(nthreads: int) -> int:
    if isinstance(nthreads, bool) or not isinstance(nthreads, (int, np.integer)) or nthreads < 0:
        raise ValueError(f"nthreads: expected an int >= 0 (0 = all cores), got {nthreads!r}")
    return int(nthreads)


def _hits(arrays: tuple, lead: Tuple[int, ...]) -> Dict[str, np.ndarray]:
    t, g, p, uv, n = arrays
    return {
        "t_hit": t.reshape(lead),
        "geometry_ids": g.reshape(lead),
        "primitive_ids": p.reshape(lead),
        "primitive_uvs": uv.reshape(lead + (2,)),
        "primitive_normals": n.reshape(lead + (3,)),
    }


def load_mesh(path: "os.PathLike[str] | str") -> Tuple[np.ndarray, np.ndarray]:
    """Loads an OBJ or PLY triangle mesh as ``(vertices (n, 3) float32, triangles (m, 3) uint32)``.

    Errors name the file and, where known, the line: ``OSError`` when it cannot be read,
    ``ValueError`` for a malformed file.
    """
    return _lanecast.load_mesh(os.fspath(path))


def create_rays_pinhole(
    fov_deg: float,
    center: Sequence[float],
    eye: Sequence[float],
    up: Sequence[float],
    width_px: int,
    height_px: int,
) -> np.ndarray:
    """Rays of a pinhole camera, shape ``(height_px, width_px, 6)`` float32, as Open3D's.

    ``fov_deg`` is the horizontal field of view (as in Open3D); the camera at ``eye`` looks at
    ``center`` with ``up`` pointing up in the image. Row 0 is the top of the image. Each
    direction has length 1 along the viewing axis (``dir = forward + x*right + y*up'`` with
    ``x, y`` on the image plane at distance 1), so ``t_hit`` of ``cast_rays`` is the depth along
    the viewing axis, not the distance. Pixel ``(i, j)`` is sampled at its centre
    (``j + 0.5, i + 0.5``); Open3D samples the pixel corner ``(j, i)``.
    """
    eye_v = np.asarray(eye, dtype=np.float64).reshape(3)
    fwd = np.asarray(center, dtype=np.float64).reshape(3) - eye_v
    if not (np.isfinite(fov_deg) and 0.0 < fov_deg < 180.0):
        raise ValueError(f"fov_deg: expected a number in (0, 180), got {fov_deg}")
    if int(width_px) <= 0 or int(height_px) <= 0:
        raise ValueError(f"width_px, height_px: expected positive sizes, got {width_px} x {height_px}")
    norm = np.linalg.norm(fwd)
    if not np.isfinite(norm) or norm == 0.0:
        raise ValueError("center: must differ from eye (the viewing direction is zero)")
    fwd /= norm
    right = np.cross(fwd, np.asarray(up, dtype=np.float64).reshape(3))
    rn = np.linalg.norm(right)
    if not np.isfinite(rn) or rn == 0.0:
        raise ValueError("up: must not be parallel to the viewing direction (center - eye)")
    right /= rn
    true_up = np.cross(right, fwd)
    w, h = int(width_px), int(height_px)
    half_w = np.tan(np.radians(fov_deg) / 2.0)
    pix = 2.0 * half_w / w  # size of one pixel on the image plane at distance 1
    xs = (np.arange(w) + 0.5 - w / 2.0) * pix
    ys = (h / 2.0 - np.arange(h) - 0.5) * pix
    d = fwd[None, None, :] + xs[None, :, None] * right[None, None, :] + ys[:, None, None] * true_up[None, None, :]
    out = np.empty((h, w, 6), dtype=np.float32)
    out[..., :3] = eye_v
    out[..., 3:] = d
    return out


class Scene:
    """A scene of triangle meshes, sphere sets, box sets and planes, and its BVH.

    Geometries get ids ``0, 1, 2, ...`` in the order they are added. The BVH is built by
    :meth:`build`, or on the first query after a change. A scene pickles as its geometry
    arrays and options (not as a compiled object) and rebuilds on first use after unpickling,
    so it can be handed to Dask, Ray or ``multiprocessing`` as it is.

    ``triangle_test`` is ``"watertight"`` (the default: no ray slips between the triangles of
    a closed mesh, and a crossing through a shared edge counts once) or ``"moller_trumbore"``;
    ``quality`` is ``"fast"``, ``"medium"`` (default) or ``"high"``.
    """

    INVALID_ID: int = INVALID_ID

    def __init__(self, triangle_test: str = "watertight", quality: str = "medium") -> None:
        if triangle_test not in ("watertight", "moller_trumbore"):
            raise ValueError(f"triangle_test must be 'watertight' or 'moller_trumbore', got {triangle_test!r}")
        if quality not in ("fast", "medium", "high"):
            raise ValueError(f"quality must be 'fast', 'medium' or 'high', got {quality!r}")
        self._triangle_test = triangle_test
        self._quality = quality
        self._records: List[_Record] = []
        self._built: Optional[_lanecast.Built] = None
        self._key: Optional[str] = None
        #: The scene file's camera as a dict (``eye``, ``look_at``, ``up``, ``fov_y_deg``,
        #: ``width``, ``height``), or None.
        self.camera: Optional[Dict[str, Any]] = None

    # ---------------------------------------------------------------- building

    def _add(self, kind: str, a: np.ndarray, b: Optional[np.ndarray] = None) -> int:
        _lanecast.check_geometry(kind, a, b)
        self._records.append((kind, a, b))
        self._built = None
        self._key = None
        return len(self._records) - 1

    def add_triangles(self, vertices: Any, triangles: Any) -> int:
        """Adds a triangle mesh; returns its geometry id.

        ``vertices`` is ``(n, 3)`` float32, ``triangles`` ``(m, 3)`` integer indices into it
        (stored as uint32). Primitive id = triangle row. Open3D's ``add_triangles(mesh)``
        overload, taking an Open3D mesh object, does not exist here: pass its arrays. The
        arrays are copied, so changing them later does not change the scene.
        """
        v = np.array(_array("vertices", vertices, np.float32, (3,), "float32 vertices of shape (n, 3)"), copy=True).reshape(-1, 3)
        t = np.asarray(triangles)
        if t.dtype.kind not in "iu":
            raise TypeError(f"triangles: expected integer indices of shape (m, 3), got dtype {t.dtype}")
        if t.ndim != 2 or t.shape[1] != 3:
            raise ValueError(f"triangles: expected integer indices of shape (m, 3), got shape {t.shape}")
        if t.size and (t.min() < 0 or t.max() >= v.shape[0]):
            raise ValueError(f"triangles: indices must lie in [0, {v.shape[0]}), got [{t.min()}, {t.max()}]")
        return self._add("mesh", v, np.array(t, dtype=np.uint32, order="C", copy=True))

    def add_spheres(self, centers: Any, radii: Any) -> int:
        """Adds a set of spheres ``centers (n, 3)``, ``radii (n,)`` (or one radius for all);
        returns its geometry id. Primitive id = row. Spheres are solid for
        :meth:`compute_occupancy` and for line of sight starting inside."""
        c = _array("centers", centers, np.float32, (3,), "float32 centres of shape (n, 3)").reshape(-1, 3)
        r = np.asarray(radii)
        if r.dtype.kind not in "fiu":
            raise TypeError(f"radii: expected real numbers, got dtype {r.dtype}")
        r = np.broadcast_to(r.astype(np.float32), (c.shape[0],)) if r.ndim == 0 else r.astype(np.float32)
        if r.shape != (c.shape[0],):
            raise ValueError(f"radii: expected shape ({c.shape[0]},) or a scalar, got shape {r.shape}")
        return self._add("spheres", np.ascontiguousarray(np.concatenate([c, r[:, None]], axis=1)))

    def add_boxes(self, min_corners: Any, max_corners: Any) -> int:
        """Adds a set of axis-aligned boxes ``min_corners (n, 3)``, ``max_corners (n, 3)``;
        returns its geometry id. Primitive id = row. Boxes are solid."""
        lo = _array("min_corners", min_corners, np.float32, (3,), "float32 corners of shape (n, 3)").reshape(-1, 3)
        hi = _array("max_corners", max_corners, np.float32, (3,), "float32 corners of shape (n, 3)").reshape(-1, 3)
        if lo.shape != hi.shape:
            raise ValueError(f"min_corners and max_corners must have the same shape, got {lo.shape} and {hi.shape}")
        return self._add("boxes", np.ascontiguousarray(np.concatenate([lo, hi], axis=1)))

    def add_plane(self, normal: Sequence[float], d: float) -> int:
        """Adds the infinite plane ``normal · x = d``; returns its geometry id."""
        n = _array("normal", normal, np.float32, (3,), "a float32 normal of shape (3,)")
        if n.shape != (3,):
            raise ValueError(f"normal: expected shape (3,), got {n.shape}")
        return self._add("plane", np.array([[n[0], n[1], n[2], d]], dtype=np.float32))

    @classmethod
    def from_file(cls, path: "os.PathLike[str] | str", triangle_test: str = "watertight", quality: str = "medium") -> "Scene":
        """A scene from a lanecast TOML scene file (meshes, spheres, boxes, planes, generators;
        see the README's scene format). Geometry ids follow the file order, as in the CLI.
        Meshes are kept as triangle soups. The file's ``[camera]`` is in :attr:`camera`.

        Raises ``OSError`` if a file cannot be read and ``ValueError`` naming the file and line
        for a malformed one.
        """
        records, cam = _lanecast.load_scene(os.fspath(path))
        return cls._from_records(records, cam, triangle_test, quality)

    @classmethod
    def default(cls) -> "Scene":
        """The built-in default scene (the one ``lanecast render`` draws without arguments)."""
        records, cam = _lanecast.default_scene()
        return cls._from_records(records, cam, "watertight", "medium")

    @classmethod
    def _from_records(cls, records: list, cam: Optional[tuple], triangle_test: str, quality: str) -> "Scene":
        s = cls(triangle_test, quality)
        s._records = [(k, a, b) for k, a, b in records]
        if cam is not None:
            eye, look_at, up, fov, w, h = cam
            s.camera = {"eye": eye, "look_at": look_at, "up": up, "fov_y_deg": fov, "width": w, "height": h}
        return s

    def build(self) -> "Scene":
        """Builds the BVH now (queries build it on first use otherwise); returns ``self``.

        The GIL is released during the build.
        """
        if self._built is None:
            self._built = _lanecast.build(self._records, self._triangle_test, self._quality)
        return self

    def _scene(self) -> "_lanecast.Built":
        return self.build()._built  # type: ignore[return-value]

    @property
    def geometry_count(self) -> int:
        """Number of geometries added."""
        return len(self._records)

    @property
    def geometries(self) -> List[Tuple[str, np.ndarray, Optional[np.ndarray]]]:
        """The geometry records ``(kind, a, b)`` in id order: ``("mesh", vertices, triangles)``,
        ``("spheres", (n, 4) centre+radius, None)``, ``("boxes", (n, 6) min+max, None)``,
        ``("plane", (1, 4) normal+d, None)``. Read-only views of the scene's own copies."""
        out = []
        for k, a, b in self._records:
            a = a.view()
            a.flags.writeable = False
            if b is not None:
                b = b.view()
                b.flags.writeable = False
            out.append((k, a, b))
        return out

    def content_hash(self) -> str:
        """A hash of the geometry arrays and options: equal scenes have equal hashes.

        ``lanecast.dask`` keys each worker's cache of built scenes by it.
        """
        if self._key is None:
            h = hashlib.blake2b(digest_size=20)
            h.update(f"{self._triangle_test}/{self._quality}/{len(self._records)}".encode())
            for k, a, b in self._records:
                for part in (a, b):
                    if part is None:
                        h.update(b"-")
                        continue
                    h.update(f"{k}{part.dtype.str}{part.shape}".encode())
                    h.update(memoryview(np.ascontiguousarray(part)).cast("B"))
            self._key = h.hexdigest()
        return self._key

    def __dask_tokenize__(self) -> Tuple[str, str]:
        """Dask's token for this scene: its content hash (no pickling to tokenize)."""
        return ("lanecast.Scene", self.content_hash())

    def __getstate__(self) -> Dict[str, Any]:
        return {
            "records": self._records,
            "triangle_test": self._triangle_test,
            "quality": self._quality,
            "camera": self.camera,
        }

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(state["triangle_test"], state["quality"])  # type: ignore[misc]
        for k, a, b in state["records"]:
            aligned = None if b is None else np.require(b, np.uint32, ["C", "A"])
            self._add(k, np.require(a, np.float32, ["C", "A"]), aligned)
        self.camera = state["camera"]

    def __repr__(self) -> str:
        kinds = ", ".join(k for k, _, _ in self._records)
        return f"lanecast.Scene([{kinds}], triangle_test={self._triangle_test!r}, quality={self._quality!r})"

    # ---------------------------------------------------------------- queries

    def cast_rays(self, rays: Any, nthreads: int = 0) -> Dict[str, np.ndarray]:
        """The closest hit of every ray.

        ``rays`` is ``(..., 6)`` or ``(..., 8)`` (with ``tmin, tmax``; 6-column rays use
        ``[0, inf)``). Returns a dict of arrays with the leading shape of ``rays``: ``t_hit``
        (float32, ``inf`` on a miss), ``geometry_ids`` and ``primitive_ids`` (uint32,
        ``INVALID_ID`` on a miss), ``primitive_uvs`` (``(..., 2)``: barycentric weights of a
        triangle's 2nd and 3rd vertex, 0 for other shapes), ``primitive_normals`` (``(..., 3)``
        unit geometric normal, zeros on a miss). Ties at equal ``t`` go to the lowest
        ``(geometry, primitive)``.
        """
        r, lead = _rays(rays)
        return _hits(self._scene().cast_rays(r, _threads(nthreads)), lead)

    def test_occlusions(self, rays: Any, tnear: Optional[float] = None, tfar: Optional[float] = None, nthreads: int = 0) -> np.ndarray:
        """Whether anything is hit with ``tnear <= t <= tfar`` (default ``[0, inf)``), as bool
        with the leading shape of ``rays``. ``(..., 8)`` rays carry their own interval, and
        passing ``tnear``/``tfar`` with them is a ``ValueError``.
        """
        r, lead = _rays(rays)
        if r.shape[1] == 8 and (tnear is not None or tfar is not None):
            raise ValueError("test_occlusions: rays of shape (..., 8) carry their own [tmin, tmax]; do not pass tnear/tfar")
        t0 = 0.0 if tnear is None else float(tnear)
        t1 = float("inf") if tfar is None else float(tfar)
        return self._scene().test_occlusions(r, t0, t1, _threads(nthreads)).reshape(lead)

    def line_of_sight(self, a: Any, b: Any, nthreads: int = 0) -> np.ndarray:
        """Whether ``a[i]`` sees ``b[i]``: nothing is hit strictly between them (the end points
        themselves excluded, with a relative margin of 1e-5 of the segment). ``a`` and ``b``
        are ``(..., 3)`` of the same shape; returns bool of the leading shape. A segment that
        starts inside a sphere or a box is blocked. Not in Open3D.
        """
        pa, lead = _points("a", a)
        pb, lead_b = _points("b", b)
        if lead != lead_b:
            raise ValueError(f"a and b must have the same shape, got {lead + (3,)} and {lead_b + (3,)}")
        return self._scene().line_of_sight(pa, pb, _threads(nthreads)).reshape(lead)

    def count_intersections(self, rays: Any, nthreads: int = 0) -> np.ndarray:
        """How many surfaces each ray crosses in its interval (uint32; Open3D gives int32).
        With the watertight test, a crossing through a shared edge or vertex counts once."""
        r, lead = _rays(rays)
        return self._scene().count_intersections(r, _threads(nthreads)).reshape(lead)

    def list_intersections(self, rays: Any, nthreads: int = 0) -> Dict[str, np.ndarray]:
        """Every hit of every ray, in Open3D's flat (CSR) layout.

        Returns ``ray_splits`` (``(n + 1,)`` uint64: the hits of ray ``i`` are
        ``ray_splits[i]:ray_splits[i+1]``), ``ray_ids`` (uint64, the ray of each hit, as an
        index into the flattened rays), ``t_hit``, ``geometry_ids``, ``primitive_ids``,
        ``primitive_uvs`` (``(k, 2)``) and ``primitive_normals`` (``(k, 3)``; Open3D has no
        normals here). Each ray's hits are sorted by ``t``. The rays are copied once into
        lanecast's column layout (32 bytes per ray).
        """
        r, _ = _rays(rays)
        splits, ray_ids, hits = self._scene().list_intersections(r, _threads(nthreads))
        out = _hits(hits, (hits[0].shape[0],))
        out["ray_splits"] = splits
        out["ray_ids"] = ray_ids
        return out

    def compute_closest_points(self, query_points: Any, nthreads: int = 0) -> Dict[str, np.ndarray]:
        """The closest surface point to each query point.

        Returns ``points`` (``(..., 3)``), ``geometry_ids``, ``primitive_ids``,
        ``primitive_uvs``, ``primitive_normals`` (as Open3D) and also ``distance``. An empty
        scene or a non-finite query point gives ``inf`` points and ``INVALID_ID``. Spheres,
        boxes and planes count as surfaces too.
        """
        p, lead = _points("query_points", query_points)
        pts, hits = self._scene().compute_closest_points(p, _threads(nthreads))
        out = _hits(hits, lead)
        out["distance"] = out.pop("t_hit")
        out["points"] = pts.reshape(lead + (3,))
        return out

    def compute_distance(self, query_points: Any, nthreads: int = 0) -> np.ndarray:
        """Unsigned distance (float32) to the nearest surface; ``inf`` for an empty scene."""
        p, lead = _points("query_points", query_points)
        return self._scene().compute_distance(p, False, _threads(nthreads)).reshape(lead)

    def compute_signed_distance(self, query_points: Any, nthreads: int = 0) -> np.ndarray:
        """Distance, negative inside (as :meth:`compute_occupancy` decides inside). The sign
        comes from the watertight crossing parity, so it is exact for closed, consistently
        oriented meshes; Open3D's ``nsamples`` voting is not needed and not offered."""
        p, lead = _points("query_points", query_points)
        return self._scene().compute_distance(p, True, _threads(nthreads)).reshape(lead)

    def compute_occupancy(self, query_points: Any, nthreads: int = 0) -> np.ndarray:
        """1.0 inside, 0.0 outside (float32, as Open3D): inside a sphere or box, or inside a
        mesh by the parity of crossings along a fixed direction (exact for closed meshes)."""
        p, lead = _points("query_points", query_points)
        return self._scene().contains(p, _threads(nthreads)).astype(np.float32).reshape(lead)

    @staticmethod
    def create_rays_pinhole(
        fov_deg: float, center: Sequence[float], eye: Sequence[float], up: Sequence[float], width_px: int, height_px: int
    ) -> np.ndarray:
        """See :func:`lanecast.create_rays_pinhole`."""
        return create_rays_pinhole(fov_deg, center, eye, up, width_px, height_px)

    def bounds(self) -> Tuple[np.ndarray, np.ndarray]:
        """``(min, max)`` corners of the box around every bounded geometry (planes excluded)."""
        lo, hi = self._scene().bounds()
        return np.array(lo, dtype=np.float32), np.array(hi, dtype=np.float32)

    def _rust_batch_seconds(self, rays: Any, occlusion: bool = False, nthreads: int = 0) -> float:
        """Seconds the Rust batch API takes on these rays (for the overhead bench)."""
        r, _ = _rays(rays)
        return self._scene().rust_batch_seconds(r, occlusion, _threads(nthreads))
