//! `lanecast._lanecast`: the compiled half of the Python package `lanecast`.
//!
//! It owns the bridge between numpy arrays and the Rust [`lanecast::Scene`]: building a scene
//! from geometry arrays, the queries (each releases the GIL and runs on a rayon pool of the
//! requested size), loading scene files and meshes, and the thread pools. Shapes and dtypes are
//! normalised by the pure-Python layer (`lanecast/__init__.py`) before they get here; this
//! module checks them again, so a direct call with bad arrays raises instead of misbehaving.
//!
//! Rays are read in place from the C-contiguous `(n, 6)` or `(n, 8)` float32 array (no
//! transposition, no copy) and results are written straight into the output columns, so the
//! memory a query takes is its output and nothing proportional to the input besides it.

use glam::Vec3;
use lanecast::bvh::Quality;
use lanecast::hit::NO_ID;
use lanecast::prim::{Aabb, Plane, Sphere};
use lanecast::scene::Geometry;
use lanecast::{ClosestPoint, Hit, Ray, RaySoa, Scene, SceneBuilder, SceneError, TriangleTest};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use rayon::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Rays or points per rayon task: large enough to amortise the task, small enough to balance.
/// Every run of `CHUNK` is its own task (`with_max_len(1)`): rayon's default split leaves
/// pieces of about a sixteenth of the input per thread, and one region of a ray set (camera
/// rays through geometry rather than sky) can cost far more than the rest.
const CHUNK: usize = 1024;
/// Most threads a query may ask for.
const MAX_THREADS: usize = 1024;

/// The value of a missing id (`u32::MAX`), as Open3D's `RaycastingScene.INVALID_ID`.
#[pyo3::pyfunction]
fn invalid_id() -> u32 {
    NO_ID
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

fn scene_error(e: SceneError) -> PyErr {
    match &e {
        SceneError::File { message, .. }
            if message.starts_with("cannot open") || message.starts_with("cannot read") =>
        {
            PyOSError::new_err(e.to_string())
        }
        _ => value_error(e),
    }
}

/// Runs `f` on the global rayon pool (`nthreads == 0`, all cores) or on a pool of `nthreads`
/// threads. Pools belong to the calling thread (created once per size and kept while that
/// thread lives): two Python threads that each ask for `nthreads = 1` run on two threads at
/// once, instead of queueing for one shared worker.
fn on_pool<T: Send>(nthreads: usize, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    if nthreads == 0 {
        return Ok(f());
    }
    Ok(caller_pool(nthreads)?.install(f))
}

thread_local! {
    /// The calling thread's pools, by size.
    static POOLS: RefCell<HashMap<usize, Arc<rayon::ThreadPool>>> = RefCell::new(HashMap::new());
}

/// The calling thread's pool of `nthreads` threads, made on first use.
fn caller_pool(nthreads: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    if nthreads > MAX_THREADS {
        return Err(value_error(format!("nthreads must be 0 (all cores) or at most {MAX_THREADS}, got {nthreads}")));
    }
    if let Some(p) = POOLS.with_borrow(|pools| pools.get(&nthreads).cloned()) {
        return Ok(p);
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(nthreads)
        .thread_name(|i| format!("lanecast-{i}"))
        .build()
        .map_err(|e| PyOSError::new_err(format!("cannot start {nthreads} threads: {e}")))?;
    let p = Arc::new(p);
    POOLS.with_borrow_mut(|pools| pools.insert(nthreads, p.clone()));
    Ok(p)
}

/// An identifier of the pool a query with `nthreads` threads runs on from the calling thread
/// (0 for the global pool): equal for the same thread and size, different across threads.
#[pyfunction]
fn _pool_id(nthreads: usize) -> PyResult<usize> {
    if nthreads == 0 {
        return Ok(0);
    }
    Ok(Arc::as_ptr(&caller_pool(nthreads)?) as usize)
}

/// The C-contiguous rows of a 2-D float32 array whose row length is one of `cols`.
fn rows<'a>(name: &str, a: &'a PyReadonlyArray2<'_, f32>, cols: &[usize]) -> PyResult<(&'a [f32], usize)> {
    let shape = a.shape();
    if !cols.contains(&shape[1]) {
        return Err(value_error(format!("{name}: expected shape (n, {cols:?}), got {shape:?}")));
    }
    let s = a.as_slice().map_err(|_| value_error(format!("{name}: expected a C-contiguous, aligned array")))?;
    Ok((s, shape[1]))
}

/// Points `(n, 3)` as `Vec3`s, in place.
fn points<'a>(name: &str, a: &'a PyReadonlyArray2<'_, f32>) -> PyResult<&'a [Vec3]> {
    let (s, _) = rows(name, a, &[3])?;
    Ok(bytemuck::cast_slice(s))
}

/// The ray of record `r` (6 or 8 floats); 6-float records get `[tnear, tfar]`.
fn ray_of(r: &[f32], interval: (f32, f32)) -> Ray {
    let (t0, t1) = if r.len() == 8 { (r[6], r[7]) } else { interval };
    Ray::with_interval(Vec3::new(r[0], r[1], r[2]), Vec3::new(r[3], r[4], r[5]), t0, t1)
}

/// Columns of per-ray or per-point results, filled in parallel in input order.
struct Cols {
    t: Vec<f32>,
    geom: Vec<u32>,
    prim: Vec<u32>,
    uv: Vec<f32>,
    normal: Vec<f32>,
    point: Vec<f32>,
}

impl Cols {
    fn new(n: usize, with_points: bool) -> Self {
        Self {
            t: vec![f32::INFINITY; n],
            geom: vec![NO_ID; n],
            prim: vec![NO_ID; n],
            uv: vec![0.0; 2 * n],
            normal: vec![0.0; 3 * n],
            point: if with_points { vec![f32::INFINITY; 3 * n] } else { Vec::new() },
        }
    }

    /// Calls `f(i, row)` for every row, in parallel chunks.
    fn fill(&mut self, n: usize, f: impl Fn(usize, Row<'_>) + Sync) {
        let with_points = !self.point.is_empty();
        let mut dummy = vec![0.0f32; 0];
        let points: &mut [f32] = if with_points { &mut self.point } else { &mut dummy };
        let pchunk = if with_points { 3 * CHUNK } else { 1 };
        let nchunks = n.div_ceil(CHUNK);
        let mut pchunks: Vec<&mut [f32]> = points.chunks_mut(pchunk).collect();
        pchunks.resize_with(nchunks.max(pchunks.len()), Default::default);
        self.t
            .par_chunks_mut(CHUNK)
            .zip(self.geom.par_chunks_mut(CHUNK))
            .zip(self.prim.par_chunks_mut(CHUNK))
            .zip(self.uv.par_chunks_mut(2 * CHUNK))
            .zip(self.normal.par_chunks_mut(3 * CHUNK))
            .zip(pchunks.into_par_iter())
            .enumerate()
            .with_max_len(1)
            .for_each(|(c, (((((t, g), p), uv), nrm), pt))| {
                for k in 0..t.len() {
                    let row = Row {
                        t: &mut t[k],
                        geom: &mut g[k],
                        prim: &mut p[k],
                        uv: &mut uv[2 * k..2 * k + 2],
                        normal: &mut nrm[3 * k..3 * k + 3],
                        point: if with_points { Some(&mut pt[3 * k..3 * k + 3]) } else { None },
                    };
                    f(c * CHUNK + k, row);
                }
            });
    }

    fn set_hit(row: Row<'_>, h: &Hit) {
        *row.t = h.t;
        *row.geom = h.geom;
        *row.prim = h.prim;
        row.uv.copy_from_slice(&[h.u, h.v]);
        row.normal.copy_from_slice(&h.normal.to_array());
    }

    fn set_closest(row: Row<'_>, c: &ClosestPoint) {
        *row.t = c.distance;
        *row.geom = c.geom;
        *row.prim = c.prim;
        row.uv.copy_from_slice(&[c.u, c.v]);
        row.normal.copy_from_slice(&c.normal.to_array());
        if let Some(p) = row.point {
            p.copy_from_slice(&c.point.to_array());
        }
    }
}

/// One row of [`Cols`].
struct Row<'a> {
    t: &'a mut f32,
    geom: &'a mut u32,
    prim: &'a mut u32,
    uv: &'a mut [f32],
    normal: &'a mut [f32],
    point: Option<&'a mut [f32]>,
}

type HitArrays<'py> = (
    Bound<'py, PyArray1<f32>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray1<u32>>,
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray2<f32>>,
);

fn hit_arrays(py: Python<'_>, c: Cols, n: usize) -> PyResult<HitArrays<'_>> {
    Ok((
        PyArray1::from_vec(py, c.t),
        PyArray1::from_vec(py, c.geom),
        PyArray1::from_vec(py, c.prim),
        PyArray1::from_vec(py, c.uv).reshape([n, 2])?,
        PyArray1::from_vec(py, c.normal).reshape([n, 3])?,
    ))
}

/// Collects `(kind, a, b)` geometry records into a builder. Kinds and arrays:
/// `"mesh"`: vertices `(n, 3)` f32, triangles `(m, 3)` u32; `"spheres"`: `(n, 4)` f32
/// (centre, radius); `"boxes"`: `(n, 6)` f32 (min, max); `"plane"`: `(1, 4)` f32 (normal, d,
/// the plane `normal · x = d`).
fn add_geometry(
    b: &mut SceneBuilder,
    kind: &str,
    a: &PyReadonlyArray2<'_, f32>,
    idx: Option<&PyReadonlyArray2<'_, u32>>,
) -> PyResult<u32> {
    let r = match kind {
        "mesh" => {
            let (v, _) = rows("vertices", a, &[3])?;
            let idx = idx.ok_or_else(|| value_error("a mesh needs its triangles"))?;
            if idx.shape()[1] != 3 {
                return Err(value_error(format!("triangles: expected shape (m, 3), got {:?}", idx.shape())));
            }
            let t = idx.as_slice().map_err(|_| value_error("triangles: expected a C-contiguous, aligned array"))?;
            b.add_mesh(bytemuck::cast_slice(v), bytemuck::cast_slice(t))
        }
        "spheres" => {
            let (s, _) = rows("spheres", a, &[4])?;
            let set: Vec<Sphere> = s.chunks_exact(4).map(|c| Sphere::new(Vec3::new(c[0], c[1], c[2]), c[3])).collect();
            b.add_spheres(&set)
        }
        "boxes" => {
            let (s, _) = rows("boxes", a, &[6])?;
            let set: Vec<Aabb> = s
                .chunks_exact(6)
                .map(|c| Aabb::new(Vec3::new(c[0], c[1], c[2]), Vec3::new(c[3], c[4], c[5])))
                .collect();
            b.add_boxes(&set)
        }
        "plane" => {
            let (s, _) = rows("plane", a, &[4])?;
            if s.len() != 4 {
                return Err(value_error(format!("plane: expected shape (1, 4), got {:?}", a.shape())));
            }
            b.add_plane(Plane::new(Vec3::new(s[0], s[1], s[2]), s[3]))
        }
        other => return Err(value_error(format!("unknown geometry kind {other:?}"))),
    };
    r.map_err(scene_error)
}

/// Checks one geometry record as [`build`] would, without building anything; returns nothing
/// or raises `ValueError` naming the first invalid primitive.
#[pyfunction]
#[pyo3(signature = (kind, a, b=None))]
fn check_geometry(kind: &str, a: PyReadonlyArray2<'_, f32>, b: Option<PyReadonlyArray2<'_, u32>>) -> PyResult<()> {
    add_geometry(&mut SceneBuilder::new(), kind, &a, b.as_ref()).map(|_| ())
}

/// Builds a scene from geometry records (see `add_geometry`), with the GIL released during
/// the BVH build.
#[pyfunction]
#[pyo3(signature = (geometries, triangle_test="watertight", quality="medium"))]
#[allow(clippy::type_complexity)]
fn build(
    py: Python<'_>,
    geometries: Vec<(String, PyReadonlyArray2<'_, f32>, Option<PyReadonlyArray2<'_, u32>>)>,
    triangle_test: &str,
    quality: &str,
) -> PyResult<Built> {
    let test = match triangle_test {
        "watertight" => TriangleTest::Watertight,
        "moller_trumbore" => TriangleTest::MollerTrumbore,
        o => return Err(value_error(format!("triangle_test must be 'watertight' or 'moller_trumbore', got {o:?}"))),
    };
    let q = match quality {
        "fast" => Quality::Fast,
        "medium" => Quality::Medium,
        "high" => Quality::High,
        o => return Err(value_error(format!("quality must be 'fast', 'medium' or 'high', got {o:?}"))),
    };
    let mut b = SceneBuilder::new().quality(q).triangle_test(test);
    for (kind, a, idx) in &geometries {
        add_geometry(&mut b, kind, a, idx.as_ref())?;
    }
    let scene = py.detach(|| b.build()).map_err(scene_error)?;
    Ok(Built { scene })
}

type Records<'py> = Vec<(String, Bound<'py, PyArray2<f32>>, Option<Bound<'py, PyArray2<u32>>>)>;

/// The geometries of a builder as records `build` takes back.
fn records<'py>(py: Python<'py>, b: &SceneBuilder) -> PyResult<Records<'py>> {
    let mut out = Vec::new();
    for g in b.geometries() {
        out.push(match g {
            Geometry::Mesh(tris) => {
                let v: Vec<f32> = tris.iter().flat_map(|t| t.v).flat_map(|p| p.to_array()).collect();
                let m = tris.len();
                let idx: Vec<u32> = (0..3 * m as u32).collect();
                (
                    "mesh".into(),
                    PyArray1::from_vec(py, v).reshape([3 * m, 3])?,
                    Some(PyArray1::from_vec(py, idx).reshape([m, 3])?),
                )
            }
            Geometry::Spheres(s) => {
                let v: Vec<f32> = s.iter().flat_map(|s| [s.center.x, s.center.y, s.center.z, s.radius]).collect();
                ("spheres".into(), PyArray1::from_vec(py, v).reshape([s.len(), 4])?, None)
            }
            Geometry::Boxes(s) => {
                let v: Vec<f32> = s.iter().flat_map(|b| [b.min.to_array(), b.max.to_array()]).flatten().collect();
                ("boxes".into(), PyArray1::from_vec(py, v).reshape([s.len(), 6])?, None)
            }
            Geometry::Plane(p) => {
                let v = vec![p.normal.x, p.normal.y, p.normal.z, p.d];
                ("plane".into(), PyArray1::from_vec(py, v).reshape([1, 4])?, None)
            }
        });
    }
    Ok(out)
}

/// A scene file's camera as `(eye, look_at, up, fov_y_deg, width, height)`.
type CameraTuple = ([f32; 3], [f32; 3], [f32; 3], f32, u32, u32);

/// Loads a TOML scene file: its geometry records (meshes as triangle soups) and its camera.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn load_scene(py: Python<'_>, path: std::path::PathBuf) -> PyResult<(Records<'_>, Option<CameraTuple>)> {
    let file = py.detach(|| lanecast::scene::file::load_scene_file(&path)).map_err(scene_error)?;
    let cam =
        file.camera.map(|c| (c.eye.to_array(), c.look_at.to_array(), c.up.to_array(), c.fov_y_deg, c.width, c.height));
    Ok((records(py, &file.builder)?, cam))
}

/// The built-in default scene's geometry records and camera.
#[pyfunction]
fn default_scene(py: Python<'_>) -> PyResult<(Records<'_>, Option<CameraTuple>)> {
    let file = lanecast::scene::file::default_scene();
    let cam =
        file.camera.map(|c| (c.eye.to_array(), c.look_at.to_array(), c.up.to_array(), c.fov_y_deg, c.width, c.height));
    Ok((records(py, &file.builder)?, cam))
}

/// Loads an OBJ or PLY mesh: `(vertices (n, 3) float32, triangles (m, 3) uint32)`.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn load_mesh(
    py: Python<'_>,
    path: std::path::PathBuf,
) -> PyResult<(Bound<'_, PyArray2<f32>>, Bound<'_, PyArray2<u32>>)> {
    let m = py.detach(|| lanecast::scene::mesh_io::load_mesh(Path::new(&path))).map_err(scene_error)?;
    let (n, k) = (m.positions.len(), m.indices.len());
    let v: Vec<f32> = bytemuck::cast_slice(&m.positions).to_vec();
    let i: Vec<u32> = bytemuck::cast_slice(&m.indices).to_vec();
    Ok((PyArray1::from_vec(py, v).reshape([n, 3])?, PyArray1::from_vec(py, i).reshape([k, 3])?))
}

/// A built scene. Immutable and shared between threads; every query releases the GIL.
#[pyclass(frozen, module = "lanecast._lanecast")]
struct Built {
    scene: Scene,
}

#[pymethods]
impl Built {
    /// Number of geometries.
    fn geometry_count(&self) -> usize {
        self.scene.geoms().len()
    }

    /// `(min, max)` corners of the scene's box (planes excluded).
    fn bounds(&self) -> ([f32; 3], [f32; 3]) {
        let b = self.scene.bounds();
        (b.min.to_array(), b.max.to_array())
    }

    /// Closest hits: `(t_hit, geometry_ids, primitive_ids, primitive_uvs, primitive_normals)`.
    fn cast_rays<'py>(
        &self,
        py: Python<'py>,
        rays: PyReadonlyArray2<'py, f32>,
        nthreads: usize,
    ) -> PyResult<HitArrays<'py>> {
        let (data, w) = rows("rays", &rays, &[6, 8])?;
        let n = data.len() / w;
        let cols = py.detach(|| {
            on_pool(nthreads, || {
                let mut c = Cols::new(n, false);
                c.fill(n, |i, row| {
                    let ray = ray_of(&data[i * w..(i + 1) * w], (0.0, f32::INFINITY));
                    Cols::set_hit(row, &self.scene.intersect(&ray).unwrap_or(Hit::MISS));
                });
                c
            })
        })?;
        hit_arrays(py, cols, n)
    }

    /// Any hit in `[tnear, tfar]` (6-float rays) or the ray's own interval (8-float rays).
    fn test_occlusions<'py>(
        &self,
        py: Python<'py>,
        rays: PyReadonlyArray2<'py, f32>,
        tnear: f32,
        tfar: f32,
        nthreads: usize,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let (data, w) = rows("rays", &rays, &[6, 8])?;
        let out = py.detach(|| {
            on_pool(nthreads, || {
                let mut out = vec![false; data.len() / w];
                out.par_chunks_mut(CHUNK).zip(data.par_chunks(CHUNK * w)).with_max_len(1).for_each(|(o, d)| {
                    for (o, r) in o.iter_mut().zip(d.chunks_exact(w)) {
                        *o = self.scene.occluded(&ray_of(r, (tnear, tfar)));
                    }
                });
                out
            })
        })?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// Whether `a[i]` sees `b[i]` (the segment's end points excluded).
    fn line_of_sight<'py>(
        &self,
        py: Python<'py>,
        a: PyReadonlyArray2<'py, f32>,
        b: PyReadonlyArray2<'py, f32>,
        nthreads: usize,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let (pa, pb) = (points("a", &a)?, points("b", &b)?);
        if pa.len() != pb.len() {
            return Err(value_error(format!("a and b must have the same length, got {} and {}", pa.len(), pb.len())));
        }
        let out = py.detach(|| on_pool(nthreads, || self.scene.line_of_sight(pa, pb)))?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// Number of surfaces each ray crosses in its interval.
    fn count_intersections<'py>(
        &self,
        py: Python<'py>,
        rays: PyReadonlyArray2<'py, f32>,
        nthreads: usize,
    ) -> PyResult<Bound<'py, PyArray1<u32>>> {
        let (data, w) = rows("rays", &rays, &[6, 8])?;
        let out = py.detach(|| {
            on_pool(nthreads, || {
                let mut out = vec![0u32; data.len() / w];
                out.par_chunks_mut(CHUNK).zip(data.par_chunks(CHUNK * w)).with_max_len(1).for_each(|(o, d)| {
                    for (o, r) in o.iter_mut().zip(d.chunks_exact(w)) {
                        *o = self.scene.count_intersections(&ray_of(r, (0.0, f32::INFINITY)));
                    }
                });
                out
            })
        })?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// Every hit of every ray: `(ray_splits, ray_ids, t_hit, geometry_ids, primitive_ids,
    /// primitive_uvs, primitive_normals)`.
    #[allow(clippy::type_complexity)]
    fn list_intersections<'py>(
        &self,
        py: Python<'py>,
        rays: PyReadonlyArray2<'py, f32>,
        nthreads: usize,
    ) -> PyResult<(Bound<'py, PyArray1<u64>>, Bound<'py, PyArray1<u64>>, HitArrays<'py>)> {
        let (data, w) = rows("rays", &rays, &[6, 8])?;
        let lists = py.detach(|| {
            on_pool(nthreads, || {
                let soa = RaySoa::from_interleaved(data, w).unwrap_or_default();
                self.scene.intersect_all_batch(&soa)
            })
        })?;
        let h = &lists.hits;
        let m = h.len();
        let mut c = Cols::new(0, false);
        c.t = h.t[..m].to_vec();
        c.geom = h.geom[..m].to_vec();
        c.prim = h.prim[..m].to_vec();
        c.uv = h.u[..m].iter().zip(&h.v[..m]).flat_map(|(&u, &v)| [u, v]).collect();
        c.normal = (0..m).flat_map(|k| [h.nx[k], h.ny[k], h.nz[k]]).collect();
        Ok((PyArray1::from_vec(py, lists.ray_splits), PyArray1::from_vec(py, lists.ray_ids), hit_arrays(py, c, m)?))
    }

    /// Closest surface points: `(points, distance, geometry_ids, primitive_ids, primitive_uvs,
    /// primitive_normals)`.
    #[allow(clippy::type_complexity)]
    fn compute_closest_points<'py>(
        &self,
        py: Python<'py>,
        query_points: PyReadonlyArray2<'py, f32>,
        nthreads: usize,
    ) -> PyResult<(Bound<'py, PyArray2<f32>>, HitArrays<'py>)> {
        let p = points("query_points", &query_points)?;
        let n = p.len();
        let mut cols = py.detach(|| {
            on_pool(nthreads, || {
                let mut c = Cols::new(n, true);
                c.fill(n, |i, row| {
                    Cols::set_closest(row, &self.scene.closest_point(p[i]).unwrap_or(ClosestPoint::MISS))
                });
                c
            })
        })?;
        let pts = PyArray1::from_vec(py, std::mem::take(&mut cols.point)).reshape([n, 3])?;
        Ok((pts, hit_arrays(py, cols, n)?))
    }

    /// Unsigned (`signed = false`) or signed distance to the nearest surface.
    fn compute_distance<'py>(
        &self,
        py: Python<'py>,
        query_points: PyReadonlyArray2<'py, f32>,
        signed: bool,
        nthreads: usize,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let p = points("query_points", &query_points)?;
        let out = py.detach(|| {
            on_pool(nthreads, || {
                let mut out = vec![0f32; p.len()];
                out.par_chunks_mut(CHUNK).zip(p.par_chunks(CHUNK)).with_max_len(1).for_each(|(o, ps)| {
                    for (o, &q) in o.iter_mut().zip(ps) {
                        *o = if signed { self.scene.signed_distance(q) } else { self.scene.distance(q) };
                    }
                });
                out
            })
        })?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// Whether each point is inside (crossing parity; solid spheres and boxes).
    fn contains<'py>(
        &self,
        py: Python<'py>,
        query_points: PyReadonlyArray2<'py, f32>,
        nthreads: usize,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let p = points("query_points", &query_points)?;
        let out = py.detach(|| {
            on_pool(nthreads, || {
                let mut out = vec![false; p.len()];
                self.scene.contains_batch(p, &mut out);
                out
            })
        })?;
        Ok(PyArray1::from_vec(py, out))
    }

    /// Seconds the Rust batch API (`Scene::intersect_batch`, or `occluded_batch` when
    /// `occlusion`) takes on these rays, after they were put into a `RaySoa` (not timed):
    /// the reference the Python call's overhead is measured against.
    fn rust_batch_seconds(
        &self,
        py: Python<'_>,
        rays: PyReadonlyArray2<'_, f32>,
        occlusion: bool,
        nthreads: usize,
    ) -> PyResult<f64> {
        let (data, w) = rows("rays", &rays, &[6, 8])?;
        py.detach(|| {
            on_pool(nthreads, || {
                let soa = RaySoa::from_interleaved(data, w).unwrap_or_default();
                let start = Instant::now();
                if occlusion {
                    let mut out = vec![false; soa.len()];
                    self.scene.occluded_batch(&soa, &mut out);
                    std::hint::black_box(&out);
                } else {
                    let mut out = lanecast::HitSoa::default();
                    self.scene.intersect_batch(&soa, &mut out);
                    std::hint::black_box(&out);
                }
                start.elapsed().as_secs_f64()
            })
        })
    }
}

/// The compiled module `lanecast._lanecast`.
#[pymodule]
fn _lanecast(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Built>()?;
    m.add_function(wrap_pyfunction!(build, m)?)?;
    m.add_function(wrap_pyfunction!(check_geometry, m)?)?;
    m.add_function(wrap_pyfunction!(load_scene, m)?)?;
    m.add_function(wrap_pyfunction!(default_scene, m)?)?;
    m.add_function(wrap_pyfunction!(load_mesh, m)?)?;
    m.add_function(wrap_pyfunction!(invalid_id, m)?)?;
    m.add_function(wrap_pyfunction!(_pool_id, m)?)?;
    m.add("SIMD", lanecast::lanes::instruction_set())?;
    Ok(())
}
