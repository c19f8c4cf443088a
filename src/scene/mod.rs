//! Scenes: geometries of spheres, boxes, triangles, indexed meshes and planes, built into
//! one BVH per primitive kind, and the queries over them (closest hit, any hit, packets,
//! batches, line of sight) in every backend.
//!
//! Geometry ids count from 0 in insertion order over all kinds; a primitive id is the index
//! inside its geometry (triangle index in a mesh, sphere index in a sphere set, else 0).
//! Degenerate triangles are kept out of the BVH and counted; planes stay outside the BVH.
//!
//! **Ties**: when two primitives are hit at exactly the same `t`, the one with the smaller
//! `(geom, prim)` is reported, in every backend.
//!
//! ```
//! use glam::Vec3;
//! use lanecast::scene::{Backend, SceneBuilder};
//! use lanecast::prim::{Aabb, Plane, Sphere};
//! use lanecast::Ray;
//!
//! let mut b = SceneBuilder::new();
//! let floor = b.add_plane(Plane::new(Vec3::Y, 0.0)).unwrap();
//! let ball = b.add_sphere(Sphere::new(Vec3::new(0.0, 1.0, 0.0), 1.0)).unwrap();
//! let mesh = b
//!     .add_mesh(&[[2.0, 0.0, -1.0], [4.0, 0.0, -1.0], [3.0, 2.0, -1.0]], &[[0, 1, 2]])
//!     .unwrap();
//! let scene = b.build();
//!
//! let down = Ray::new(Vec3::new(0.0, 5.0, 0.0), -Vec3::Y);
//! let hit = scene.intersect(&down).unwrap();
//! assert_eq!((hit.geom, hit.prim, hit.t), (ball, 0, 3.0));
//! assert_eq!(hit.normal, Vec3::Y);
//! let beside = Ray::new(Vec3::new(3.0, 0.5, 5.0), -Vec3::Z);
//! assert_eq!(scene.intersect_with(&beside, Backend::Scalar).unwrap().geom, mesh);
//! assert!(scene.occluded(&Ray::segment(Vec3::new(-5.0, 1.0, 0.0), Vec3::new(5.0, 1.0, 0.0))));
//! assert_eq!(scene.intersect(&Ray::new(Vec3::new(9.0, 1.0, 9.0), -Vec3::Y)).unwrap().geom, floor);
//! ```

pub mod file;
pub mod generate;
mod kind;
pub mod mesh_io;
mod query;

pub use kind::{KindBvh, Traceable};
pub use query::PacketScratch;

use crate::bvh::{BuildOptions, Quality};
use crate::error::SceneError;
use crate::prim::{Aabb, Plane, PlaneSoa, Sphere, Triangle};
use glam::Vec3;
use std::time::{Duration, Instant};

/// Which kernels and traversal a query uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// The reference: binary-BVH traversal and scalar kernels, one ray at a time.
    Scalar,
    /// 4-wide BVH, 4-lane kernels.
    X4,
    /// 8-wide BVH, 8-lane kernels.
    X8,
    /// The best for this build: `X8` when the lanes compiled to AVX, else `X4`.
    #[default]
    Auto,
}

impl Backend {
    /// `Auto` resolved for this build.
    pub fn resolve(self) -> Backend {
        match self {
            Backend::Auto if cfg!(target_feature = "avx") => Backend::X8,
            Backend::Auto => Backend::X4,
            b => b,
        }
    }
    /// Lower-case name (`scalar`, `x4`, `x8`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::X4 => "x4",
            Backend::X8 => "x8",
            Backend::Auto => "auto",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "scalar" => Ok(Backend::Scalar),
            "x4" => Ok(Backend::X4),
            "x8" => Ok(Backend::X8),
            "auto" => Ok(Backend::Auto),
            _ => Err(format!("unknown backend `{s}` (expected scalar, x4, x8 or auto)")),
        }
    }
}

/// What kind of geometry an id refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeomKind {
    /// A set of spheres (one sphere is a set of one).
    Spheres,
    /// A set of axis-aligned boxes.
    Boxes,
    /// A triangle mesh (one triangle is a mesh of one).
    Mesh,
    /// An infinite plane.
    Plane,
}

/// Per-geometry facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GeomInfo {
    /// Kind.
    pub kind: GeomKind,
    /// Number of primitives (including degenerate triangles).
    pub prims: u32,
    /// Degenerate triangles left out of the BVH.
    pub degenerate: u32,
}

/// Collects geometries, then builds a [`Scene`].
#[derive(Clone, Debug, Default)]
pub struct SceneBuilder {
    geoms: Vec<GeomInfo>,
    tris: Vec<Triangle>,
    tri_ids: Vec<[u32; 2]>,
    spheres: Vec<Sphere>,
    sphere_ids: Vec<[u32; 2]>,
    boxes: Vec<Aabb>,
    box_ids: Vec<[u32; 2]>,
    planes: Vec<Plane>,
    plane_ids: Vec<[u32; 2]>,
    options: BuildOptions,
}

fn invalid(geom: usize, what: String) -> SceneError {
    SceneError::InvalidShape { geom: geom as u32, what }
}

impl SceneBuilder {
    /// An empty builder with default build options (medium quality).
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the BVH build options.
    pub fn options(&mut self, options: BuildOptions) -> &mut Self {
        self.options = options;
        self
    }
    /// Sets the BVH quality preset.
    pub fn quality(&mut self, q: Quality) -> &mut Self {
        // The preset's own reinsertion effort comes with it; other options stay.
        self.options.quality = q;
        self.options.reinsertion = BuildOptions::with_quality(q).reinsertion;
        self
    }
    fn next_id(&self) -> u32 {
        self.geoms.len() as u32
    }
    /// Adds one sphere as a geometry; returns its id.
    pub fn add_sphere(&mut self, s: Sphere) -> Result<u32, SceneError> {
        self.add_spheres(&[s])
    }
    /// Adds a sphere set as one geometry (prim id = index in `set`).
    pub fn add_spheres(&mut self, set: &[Sphere]) -> Result<u32, SceneError> {
        let id = self.next_id();
        if let Some((i, s)) = set.iter().enumerate().find(|(_, s)| !s.is_valid()) {
            return Err(invalid(
                id as usize,
                format!("sphere {i} is invalid (centre {}, radius {})", s.center, s.radius),
            ));
        }
        self.spheres.extend_from_slice(set);
        self.sphere_ids.extend((0..set.len() as u32).map(|p| [id, p]));
        self.geoms.push(GeomInfo { kind: GeomKind::Spheres, prims: set.len() as u32, degenerate: 0 });
        Ok(id)
    }
    /// Adds one box as a geometry.
    pub fn add_box(&mut self, b: Aabb) -> Result<u32, SceneError> {
        self.add_boxes(&[b])
    }
    /// Adds a box set as one geometry (prim id = index in `set`).
    pub fn add_boxes(&mut self, set: &[Aabb]) -> Result<u32, SceneError> {
        let id = self.next_id();
        if let Some((i, b)) = set.iter().enumerate().find(|(_, b)| !b.is_valid()) {
            return Err(invalid(
                id as usize,
                format!("box {i} is invalid (min {}, max {}; needs finite min <= max)", b.min, b.max),
            ));
        }
        self.boxes.extend_from_slice(set);
        self.box_ids.extend((0..set.len() as u32).map(|p| [id, p]));
        self.geoms.push(GeomInfo { kind: GeomKind::Boxes, prims: set.len() as u32, degenerate: 0 });
        Ok(id)
    }
    /// Adds one triangle as a geometry (a degenerate one is accepted and counted).
    pub fn add_triangle(&mut self, t: Triangle) -> Result<u32, SceneError> {
        self.add_triangles(&[t])
    }
    /// Adds a triangle soup as one mesh geometry.
    pub fn add_triangles(&mut self, tris: &[Triangle]) -> Result<u32, SceneError> {
        let id = self.next_id();
        if let Some(i) = tris.iter().position(|t| !t.is_valid()) {
            return Err(invalid(id as usize, format!("triangle {i} has a non-finite vertex")));
        }
        let mut degenerate = 0;
        for (p, t) in tris.iter().enumerate() {
            if t.is_degenerate() {
                degenerate += 1;
            } else {
                self.tris.push(*t);
                self.tri_ids.push([id, p as u32]);
            }
        }
        self.geoms.push(GeomInfo { kind: GeomKind::Mesh, prims: tris.len() as u32, degenerate });
        Ok(id)
    }
    /// Adds an indexed triangle mesh as one geometry. `positions` and `indices` are plain
    /// arrays, so buffers can be passed with `bytemuck::cast_slice`. Prim id = triangle index.
    pub fn add_mesh(&mut self, positions: &[[f32; 3]], indices: &[[u32; 3]]) -> Result<u32, SceneError> {
        let id = self.next_id() as usize;
        if let Some(i) = positions.iter().position(|p| !Vec3::from(*p).is_finite()) {
            return Err(invalid(id, format!("vertex {i} is not finite: {:?}", positions[i])));
        }
        let mut tris = Vec::with_capacity(indices.len());
        for (k, ix) in indices.iter().enumerate() {
            let v = |j: usize| {
                positions.get(ix[j] as usize).map(|p| Vec3::from(*p)).ok_or_else(|| {
                    invalid(id, format!("triangle {k} uses vertex {} but there are {}", ix[j], positions.len()))
                })
            };
            tris.push(Triangle::new(v(0)?, v(1)?, v(2)?));
        }
        self.add_triangles(&tris)
    }
    /// Adds an infinite plane (kept outside the BVH).
    pub fn add_plane(&mut self, p: Plane) -> Result<u32, SceneError> {
        let id = self.next_id();
        if !p.is_valid() {
            return Err(invalid(
                id as usize,
                format!("plane is invalid (normal {}, d {}; needs a finite non-zero normal)", p.normal, p.d),
            ));
        }
        self.planes.push(p);
        self.plane_ids.push([id, 0]);
        self.geoms.push(GeomInfo { kind: GeomKind::Plane, prims: 1, degenerate: 0 });
        Ok(id)
    }
    /// Builds the BVHs.
    pub fn build(self) -> Scene {
        let start = Instant::now();
        let o = self.options;
        let (tris, (spheres, boxes)) = rayon::join(
            || KindBvh::build(self.tris, self.tri_ids, &o),
            || {
                rayon::join(
                    || KindBvh::build(self.spheres, self.sphere_ids, &o),
                    || KindBvh::build(self.boxes, self.box_ids, &o),
                )
            },
        );
        let bounds = tris.bvh8.bounds.union(&spheres.bvh8.bounds).union(&boxes.bvh8.bounds);
        Scene {
            geoms: self.geoms,
            tris,
            spheres,
            boxes,
            planes: PlaneSoa::from_slice(&self.planes),
            plane_ids: self.plane_ids,
            bounds,
            build_time: start.elapsed(),
            backend: Backend::Auto,
        }
    }
}

/// A built scene. Queries live in this type's other `impl` blocks (see `query.rs`).
#[derive(Clone, Debug)]
pub struct Scene {
    geoms: Vec<GeomInfo>,
    pub(crate) tris: KindBvh<Triangle>,
    pub(crate) spheres: KindBvh<Sphere>,
    pub(crate) boxes: KindBvh<Aabb>,
    pub(crate) planes: PlaneSoa,
    pub(crate) plane_ids: Vec<[u32; 2]>,
    bounds: Aabb,
    build_time: Duration,
    backend: Backend,
}

/// Size and shape facts of a built scene.
#[derive(Clone, Debug)]
pub struct SceneStats {
    /// Geometries.
    pub geoms: usize,
    /// Triangles in the BVH.
    pub triangles: usize,
    /// Spheres.
    pub spheres: usize,
    /// Boxes.
    pub boxes: usize,
    /// Planes.
    pub planes: usize,
    /// Degenerate triangles left out.
    pub degenerate: usize,
    /// Binary BVH nodes over all kinds.
    pub nodes2: usize,
    /// 8-wide nodes over all kinds.
    pub nodes8: usize,
    /// Leaves (binary tree) over all kinds.
    pub leaves: usize,
    /// Deepest binary tree.
    pub depth: usize,
    /// SAH cost of the binary trees (traversal 1, intersection 1 per primitive, relative to
    /// the root area), summed over kinds.
    pub sah_cost: f32,
    /// Build time.
    pub build_time: Duration,
    /// Bytes of everything a scene keeps (three trees, primitives, ids).
    pub bytes: usize,
    /// Bytes the 8-wide traversal touches (8-wide nodes, primitives, ids).
    pub bytes_x8: usize,
}

impl Scene {
    /// Geometry facts, indexed by geometry id.
    pub fn geoms(&self) -> &[GeomInfo] {
        &self.geoms
    }
    /// Box around everything except planes (empty if there is nothing finite).
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }
    /// The backend used by [`Scene::intersect`] and friends (default `Auto`).
    pub fn backend(&self) -> Backend {
        self.backend
    }
    /// Sets the default backend.
    pub fn set_backend(&mut self, b: Backend) {
        self.backend = b;
    }
    /// Checks every BVH (parents contain children, every primitive reachable exactly once,
    /// depth fits the stack).
    pub fn validate(&self) -> Result<(), crate::bvh::validate::BvhError> {
        self.tris.validate()?;
        self.spheres.validate()?;
        self.boxes.validate()?;
        Ok(())
    }
    /// Counts, tree shape, cost and memory.
    pub fn stats(&self) -> SceneStats {
        fn shape(nodes: &[crate::bvh::Node2]) -> (usize, usize, f32) {
            if nodes.is_empty() {
                return (0, 0, 0.0);
            }
            let root = nodes[0].aabb().surface_area().max(f32::MIN_POSITIVE);
            let (mut leaves, mut depth, mut cost) = (0, 0, 0.0);
            let mut stack = vec![(0usize, 1usize)];
            while let Some((i, d)) = stack.pop() {
                depth = depth.max(d);
                let n = &nodes[i];
                let a = n.aabb().surface_area() / root;
                if n.is_leaf() {
                    leaves += 1;
                    cost += a * n.count as f32;
                } else {
                    cost += a;
                    stack.push((n.index as usize, d + 1));
                    stack.push((n.index as usize + 1, d + 1));
                }
            }
            (leaves, depth, cost)
        }
        let mut st = SceneStats {
            geoms: self.geoms.len(),
            triangles: self.tris.len(),
            spheres: self.spheres.len(),
            boxes: self.boxes.len(),
            planes: self.planes.len(),
            degenerate: self.geoms.iter().map(|g| g.degenerate as usize).sum(),
            nodes2: 0,
            nodes8: 0,
            leaves: 0,
            depth: 0,
            sah_cost: 0.0,
            bytes_x8: self.tris.bytes_x8() + self.spheres.bytes_x8() + self.boxes.bytes_x8(),
            build_time: self.build_time,
            bytes: self.tris.bytes_total()
                + self.spheres.bytes_total()
                + self.boxes.bytes_total()
                + self.planes.padded_len() * 16,
        };
        for (n2, n8) in [
            (&self.tris.bvh2, self.tris.bvh8.nodes.len()),
            (&self.spheres.bvh2, self.spheres.bvh8.nodes.len()),
            (&self.boxes.bvh2, self.boxes.bvh8.nodes.len()),
        ] {
            let (l, d, c) = shape(n2);
            st.nodes2 += n2.len();
            st.nodes8 += n8;
            st.leaves += l;
            st.depth = st.depth.max(d);
            st.sah_cost += c;
        }
        st
    }
}
