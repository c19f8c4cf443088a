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
//! let mut b = SceneBuilder::new().quality(lanecast::bvh::Quality::Medium);
//! let floor = b.add_plane(Plane::new(Vec3::Y, 0.0)).unwrap();
//! let ball = b.add_sphere(Sphere::new(Vec3::new(0.0, 1.0, 0.0), 1.0)).unwrap();
//! let mesh = b
//!     .add_mesh(&[[2.0, 0.0, -1.0], [4.0, 0.0, -1.0], [3.0, 2.0, -1.0]], &[[0, 1, 2]])
//!     .unwrap();
//! let scene = b.build().unwrap();
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

mod all;
mod best;
mod closest;
mod dynamic;
#[cfg(feature = "cli")]
pub mod file;
#[cfg(feature = "cli")]
pub mod generate;
mod instance;
mod kind;
#[cfg(feature = "cli")]
pub mod mesh_io;
mod query;
mod sweep;

pub use all::{CONTAINS_DIR, HitLists};
pub use closest::ClosestPoint;
pub use instance::{Instance, MAX_INSTANCES, check_transform};
pub use kind::{KindBvh, LeafPacket, LeafRay, Traceable};
pub use query::PacketScratch;
pub use sweep::{SphereSweep, SweepHit, plane_time_of_impact};

use crate::bvh::{BuildOptions, BvhError, Quality};
use crate::error::{LimitError, SceneError};
use crate::prim::{Aabb, Plane, PlaneSoa, Sphere, Triangle};
use crate::ray::ALL_BITS;
use glam::{Affine3A, Vec3};
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
    /// 16-wide BVH, 16-lane kernels (one `zmm` register each with AVX-512, two 8-lane
    /// halves without), for single rays and what is made of them: closest and any hit, all
    /// hits and counts, batches and line of sight, and the lanes of packets whose rays do not
    /// share an octant. Packets that traverse together, closest points and sweeps use the
    /// 8-wide tree and kernels, as with `X8`.
    X16,
    /// The best for this build: `X16` when the lanes compiled to AVX-512, `X8` when they
    /// compiled to AVX, else `X4`.
    #[default]
    Auto,
}

impl Backend {
    /// `Auto` resolved for this build.
    pub fn resolve(self) -> Backend {
        match self {
            Backend::Auto if cfg!(target_feature = "avx512f") => Backend::X16,
            Backend::Auto if cfg!(target_feature = "avx") => Backend::X8,
            Backend::Auto => Backend::X4,
            b => b,
        }
    }
    /// Lower-case name (`scalar`, `x4`, `x8`, `x16`, `auto`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::X4 => "x4",
            Backend::X8 => "x8",
            Backend::X16 => "x16",
            Backend::Auto => "auto",
        }
    }
}

/// A backend name that is not `scalar`, `x4`, `x8`, `x16` or `auto`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown backend `{0}` (expected scalar, x4, x8, x16 or auto)")]
pub struct UnknownBackend(pub String);

impl std::str::FromStr for Backend {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Self, UnknownBackend> {
        match s {
            "scalar" => Ok(Backend::Scalar),
            "x4" => Ok(Backend::X4),
            "x8" => Ok(Backend::X8),
            "x16" => Ok(Backend::X16),
            "auto" => Ok(Backend::Auto),
            _ => Err(UnknownBackend(s.to_owned())),
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
    /// Degenerate triangles ([`Triangle::is_degenerate`]; see [`TriangleTest`] for whether the
    /// trees keep them).
    pub degenerate: u32,
    /// Mask: rays see the geometry only when their mask shares a bit with it (default
    /// [`ALL_BITS`]; see [`SceneBuilder::set_mask`]).
    pub mask: u32,
}

/// One geometry as a [`SceneBuilder`] holds it ([`SceneBuilder::geometries`]): its primitives
/// in prim-id order, as they were added (a mesh as its triangles, after indexing).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Geometry<'a> {
    /// A sphere set.
    Spheres(&'a [Sphere]),
    /// A box set.
    Boxes(&'a [Aabb]),
    /// A triangle mesh (degenerate triangles included).
    Mesh(&'a [Triangle]),
    /// An infinite plane.
    Plane(&'a Plane),
}

/// Collects geometries, then builds a [`Scene`].
///
/// Settings chain: `SceneBuilder::new().quality(Quality::High)`; geometries are added through
/// `&mut self` and return their id; [`SceneBuilder::build`] consumes the builder.
#[derive(Clone, Debug, Default)]
#[must_use = "a builder does nothing until `build` is called"]
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
    /// `(geom, vertex count, indices)` of the meshes added with `add_mesh`.
    mesh_indices: Vec<MeshIndices>,
    instances: Vec<Instance>,
    options: BuildOptions,
    triangle_test: TriangleTest,
}

/// A mesh's `(geometry id, vertex count, index buffer)`, kept for [`Scene::update_positions`].
type MeshIndices = (u32, usize, Vec<[u32; 3]>);

/// The ray–triangle test of a scene's queries.
///
/// [`TriangleTest::Watertight`] (the default) never lets a ray slip between the triangles
/// of a closed mesh and counts a crossing through a shared edge or vertex once (see
/// [`crate::kernel::watertight`]); [`TriangleTest::MollerTrumbore`] is the classic test,
/// which can miss or double-count such rays, for users who want its speed on coherent rays
/// more than those guarantees (the README gives the measured difference). With
/// Möller–Trumbore, degenerate triangles ([`Triangle::is_degenerate`]) are left out of the
/// trees; the watertight test keeps them, as it resolves every triangle exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TriangleTest {
    /// Woop, Benthin & Wald (2013) with the tie rule of [`crate::kernel::watertight`].
    #[default]
    Watertight,
    /// Möller & Trumbore (1997), [`crate::kernel::ray_triangle`].
    MollerTrumbore,
}

fn invalid(geom: u32, what: String) -> SceneError {
    SceneError::InvalidShape { geom, what }
}

/// Most geometries a scene can hold: ids are u32 and `u32::MAX` means "no geometry".
pub const MAX_GEOMETRIES: usize = u32::MAX as usize;
/// Most primitives one geometry can hold: prim ids are u32 and `u32::MAX` means "none".
pub const MAX_PRIMS_PER_GEOMETRY: usize = u32::MAX as usize;

/// Checks that one more geometry of `prims` primitives fits the id space of a scene that has
/// `geoms` geometries; returns the new geometry's id.
///
/// # Errors
/// [`LimitError::TooManyGeometries`] or [`LimitError::TooManyInGeometry`].
pub fn check_geometry_limits(geoms: usize, prims: usize) -> Result<u32, LimitError> {
    if geoms >= MAX_GEOMETRIES {
        return Err(LimitError::TooManyGeometries { count: geoms.saturating_add(1), max: MAX_GEOMETRIES });
    }
    if prims > MAX_PRIMS_PER_GEOMETRY {
        return Err(LimitError::TooManyInGeometry { count: prims, max: MAX_PRIMS_PER_GEOMETRY });
    }
    // Both fit: geoms < u32::MAX.
    Ok(geoms as u32)
}

/// A set of one shape kind as the builder stores it: spheres or boxes (triangles have their
/// own path for degenerate ones, planes stay outside the trees).
trait SetKind: crate::prim::Primitive + core::fmt::Debug {
    const KIND: GeomKind;
    const NAME: &'static str;
    fn store(b: &mut SceneBuilder) -> (&mut Vec<Self>, &mut Vec<[u32; 2]>);
    fn describe(&self) -> String;
}

impl SetKind for Sphere {
    const KIND: GeomKind = GeomKind::Spheres;
    const NAME: &'static str = "sphere";
    fn store(b: &mut SceneBuilder) -> (&mut Vec<Self>, &mut Vec<[u32; 2]>) {
        (&mut b.spheres, &mut b.sphere_ids)
    }
    fn describe(&self) -> String {
        format!("centre {}, radius {}", self.center, self.radius)
    }
}

impl SetKind for Aabb {
    const KIND: GeomKind = GeomKind::Boxes;
    const NAME: &'static str = "box";
    fn store(b: &mut SceneBuilder) -> (&mut Vec<Self>, &mut Vec<[u32; 2]>) {
        (&mut b.boxes, &mut b.box_ids)
    }
    fn describe(&self) -> String {
        format!("min {}, max {}; needs finite min <= max", self.min, self.max)
    }
}

impl SceneBuilder {
    /// An empty builder with default build options (medium quality).
    pub fn new() -> Self {
        Self::default()
    }
    /// Sets the mask of geometry `geom` (default [`ALL_BITS`]): every query then tests its
    /// primitives only for rays whose mask shares a bit with `mask` ([`crate::Ray::mask`],
    /// per lane in packets), as in Embree. Point queries and sweeps use [`ALL_BITS`], so a
    /// geometry with mask 0 is invisible to every query.
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] when there is no geometry `geom`.
    pub fn set_mask(&mut self, geom: u32, mask: u32) -> Result<(), SceneError> {
        let n = self.geoms.len();
        let g = self
            .geoms
            .get_mut(geom as usize)
            .ok_or_else(|| invalid(geom, format!("no such geometry (there are {n})")))?;
        g.mask = mask;
        Ok(())
    }
    /// Places geometry `geom` with the affine `transform` (local → world) and returns the
    /// instance id (0, 1, … in the order added). The geometry becomes a *prototype*: it is
    /// built once into trees of its own and seen only where instances place it, not by
    /// itself (place it with [`Affine3A::IDENTITY`] too to keep it where it is). Hits through
    /// an instance report the geometry's id, the primitive's id and the instance's id
    /// ([`crate::Hit::inst`]); `t` stays in world units and normals are carried back by
    /// the inverse transpose. See [`check_transform`] for the transforms each kind accepts.
    ///
    /// ```
    /// use glam::{Affine3A, Vec3};
    /// use lanecast::prim::Sphere;
    /// use lanecast::{Ray, SceneBuilder};
    ///
    /// let mut b = SceneBuilder::new();
    /// let ball = b.add_sphere(Sphere::new(Vec3::ZERO, 1.0)).unwrap();
    /// let left = b.add_instance(ball, Affine3A::from_translation(Vec3::new(-5.0, 0.0, 0.0))).unwrap();
    /// let right = b.add_instance(ball, Affine3A::from_scale(Vec3::splat(2.0)) * Affine3A::IDENTITY).unwrap();
    /// let scene = b.build().unwrap();
    ///
    /// let h = scene.intersect(&Ray::new(Vec3::new(-5.0, 9.0, 0.0), -Vec3::Y)).unwrap();
    /// assert_eq!((h.geom, h.inst, h.t, h.normal), (ball, left, 8.0, Vec3::Y));
    /// let h = scene.intersect(&Ray::new(Vec3::new(0.0, 9.0, 0.0), -Vec3::Y)).unwrap();
    /// assert_eq!((h.inst, h.t), (right, 7.0)); // the sphere of radius 2
    /// ```
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] for an unknown geometry; [`SceneError::InvalidInstance`]
    /// for a transform [`check_transform`] refuses; [`SceneError::Limit`] past
    /// [`MAX_INSTANCES`].
    pub fn add_instance(&mut self, geom: u32, transform: Affine3A) -> Result<u32, SceneError> {
        let n = self.geoms.len();
        let info =
            self.geoms.get(geom as usize).ok_or_else(|| invalid(geom, format!("no such geometry (there are {n})")))?;
        let id = instance::next_instance_id(self.instances.len())?;
        check_transform(info.kind, &transform).map_err(|w| instance::bad_instance(id, w))?;
        self.instances.push(Instance { geom, transform, mask: ALL_BITS });
        Ok(id)
    }
    /// Sets the mask of instance `inst` (see [`Instance::mask`]).
    ///
    /// # Errors
    /// [`SceneError::InvalidInstance`] for an unknown instance.
    pub fn set_instance_mask(&mut self, inst: u32, mask: u32) -> Result<(), SceneError> {
        let n = self.instances.len();
        let i = self
            .instances
            .get_mut(inst as usize)
            .ok_or_else(|| instance::bad_instance(inst, format!("no such instance (there are {n})")))?;
        i.mask = mask;
        Ok(())
    }
    /// Instances added so far, indexed by id.
    pub fn instances(&self) -> &[Instance] {
        &self.instances
    }
    /// Sets the BVH build options.
    pub fn options(mut self, options: BuildOptions) -> Self {
        self.options = options;
        self
    }
    /// Sets the BVH quality preset (all build options from [`BuildOptions::with_quality`]).
    pub fn quality(mut self, q: Quality) -> Self {
        self.options = BuildOptions::with_quality(q);
        self
    }
    /// Sets the ray–triangle test of the scene's queries (default
    /// [`TriangleTest::Watertight`]).
    pub fn triangle_test(mut self, test: TriangleTest) -> Self {
        self.triangle_test = test;
        self
    }
    /// Geometries added so far, indexed by id.
    pub fn geoms(&self) -> &[GeomInfo] {
        &self.geoms
    }
    /// Every geometry added so far, in id order, with its primitives: enough to add them
    /// again to another builder (or to hand them to another process) and get the same ids.
    pub fn geometries(&self) -> Vec<Geometry<'_>> {
        let (mut t, mut s, mut b, mut p) = (0, 0, 0, 0);
        let take = |at: &mut usize, n: u32| {
            let r = *at..*at + n as usize;
            *at = r.end;
            r
        };
        self.geoms
            .iter()
            .map(|g| match g.kind {
                GeomKind::Spheres => Geometry::Spheres(&self.spheres[take(&mut s, g.prims)]),
                GeomKind::Boxes => Geometry::Boxes(&self.boxes[take(&mut b, g.prims)]),
                GeomKind::Mesh => Geometry::Mesh(&self.tris[take(&mut t, g.prims)]),
                GeomKind::Plane => Geometry::Plane(&self.planes[take(&mut p, 1).start]),
            })
            .collect()
    }
    /// The build options in effect.
    pub fn build_options(&self) -> &BuildOptions {
        &self.options
    }
    fn next_id(&self, prims: usize, what: &'static str) -> Result<u32, SceneError> {
        check_geometry_limits(self.geoms.len(), prims).map_err(|source| SceneError::Limit { what, source })
    }
    /// The one path of sphere and box sets.
    fn add_set<P: SetKind>(&mut self, set: &[P]) -> Result<u32, SceneError> {
        let id = self.next_id(set.len(), P::NAME)?;
        if let Some((i, s)) = set.iter().enumerate().find(|(_, s)| !s.is_valid()) {
            return Err(invalid(id, format!("{} {i} is invalid ({})", P::NAME, s.describe())));
        }
        let (prims, ids) = P::store(self);
        prims.extend_from_slice(set);
        // `next_id` checked that every index fits a u32.
        ids.extend((0..set.len()).map(|p| [id, p as u32]));
        self.geoms.push(GeomInfo { kind: P::KIND, prims: set.len() as u32, degenerate: 0, mask: ALL_BITS });
        Ok(id)
    }
    /// Adds one sphere as a geometry; returns its id.
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] for a NaN/infinite number or a negative radius;
    /// [`SceneError::Limit`] past [`MAX_GEOMETRIES`].
    pub fn add_sphere(&mut self, s: Sphere) -> Result<u32, SceneError> {
        self.add_set(&[s])
    }
    /// Adds a sphere set as one geometry (prim id = index in `set`).
    ///
    /// # Errors
    /// As [`SceneBuilder::add_sphere`], for the first invalid sphere; also past
    /// [`MAX_PRIMS_PER_GEOMETRY`].
    pub fn add_spheres(&mut self, set: &[Sphere]) -> Result<u32, SceneError> {
        self.add_set(set)
    }
    /// Adds one box as a geometry.
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] for a non-finite corner or `min > max`;
    /// [`SceneError::Limit`] past [`MAX_GEOMETRIES`].
    pub fn add_box(&mut self, b: Aabb) -> Result<u32, SceneError> {
        self.add_set(&[b])
    }
    /// Adds a box set as one geometry (prim id = index in `set`).
    ///
    /// # Errors
    /// As [`SceneBuilder::add_box`], for the first invalid box; also past
    /// [`MAX_PRIMS_PER_GEOMETRY`].
    pub fn add_boxes(&mut self, set: &[Aabb]) -> Result<u32, SceneError> {
        self.add_set(set)
    }
    /// Adds one triangle as a geometry (a degenerate one is accepted and counted).
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] for a non-finite vertex; [`SceneError::Limit`].
    pub fn add_triangle(&mut self, t: Triangle) -> Result<u32, SceneError> {
        self.add_triangles(&[t])
    }
    /// Adds a triangle soup as one mesh geometry. Degenerate triangles are counted
    /// ([`GeomInfo::degenerate`]); see [`TriangleTest`] for whether the trees keep them.
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] for a non-finite vertex; [`SceneError::Limit`].
    pub fn add_triangles(&mut self, tris: &[Triangle]) -> Result<u32, SceneError> {
        let id = self.next_id(tris.len(), "triangle")?;
        if let Some(i) = tris.iter().position(|t| !t.is_valid()) {
            return Err(invalid(id, format!("triangle {i} has a non-finite vertex")));
        }
        let degenerate = tris.iter().filter(|t| t.is_degenerate()).count() as u32;
        self.tris.extend_from_slice(tris);
        // `next_id` checked that every index fits a u32.
        self.tri_ids.extend((0..tris.len()).map(|p| [id, p as u32]));
        self.geoms.push(GeomInfo { kind: GeomKind::Mesh, prims: tris.len() as u32, degenerate, mask: ALL_BITS });
        Ok(id)
    }
    /// Adds an indexed triangle mesh as one geometry. `positions` and `indices` are plain
    /// arrays, so buffers can be passed with `bytemuck::cast_slice`. Prim id = triangle index.
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] for a non-finite vertex or an index past `positions`;
    /// [`SceneError::Limit`].
    pub fn add_mesh(&mut self, positions: &[[f32; 3]], indices: &[[u32; 3]]) -> Result<u32, SceneError> {
        let id = self.next_id(indices.len(), "triangle")?;
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
        let id = self.add_triangles(&tris)?;
        self.mesh_indices.push((id, positions.len(), indices.to_vec()));
        Ok(id)
    }
    /// Adds an infinite plane (kept outside the BVH).
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] for a non-finite number or a zero normal;
    /// [`SceneError::Limit`].
    pub fn add_plane(&mut self, p: Plane) -> Result<u32, SceneError> {
        let id = self.next_id(1, "plane")?;
        if !p.is_valid() {
            return Err(invalid(
                id,
                format!("plane is invalid (normal {}, d {}; needs a finite non-zero normal)", p.normal, p.d),
            ));
        }
        self.planes.push(p);
        self.plane_ids.push([id, 0]);
        self.geoms.push(GeomInfo { kind: GeomKind::Plane, prims: 1, degenerate: 0, mask: ALL_BITS });
        Ok(id)
    }
    /// Builds the BVHs (one per primitive kind, in parallel).
    ///
    /// # Errors
    /// [`SceneError::Limit`] when one kind has more primitives than a BVH can index
    /// ([`crate::bvh::MAX_PRIMITIVES`], 2^27).
    pub fn build(mut self) -> Result<Scene, SceneError> {
        let geom_masks: Vec<u32> = self.geoms.iter().map(|g| g.mask).collect();
        let start = Instant::now();
        let o = self.options;
        let protos = self.build_prototypes()?;
        let limit = |what| move |source| SceneError::Limit { what, source };
        let (tri_list, tri_ids) = match self.triangle_test {
            TriangleTest::Watertight => (self.tris, self.tri_ids),
            TriangleTest::MollerTrumbore => {
                self.tris.into_iter().zip(self.tri_ids).filter(|(t, _)| !t.is_degenerate()).unzip()
            }
        };
        let (tris, (spheres, boxes)) = rayon::join(
            || KindBvh::build(tri_list, tri_ids, &o).map_err(limit("triangles")),
            || {
                rayon::join(
                    || KindBvh::build(self.spheres, self.sphere_ids, &o).map_err(limit("spheres")),
                    || KindBvh::build(self.boxes, self.box_ids, &o).map_err(limit("boxes")),
                )
            },
        );
        let (tris, spheres, boxes) = (tris?, spheres?, boxes?);
        let inst = instance::Instances::new(&self.instances, protos, &o)?;
        let bounds = tris.bounds.union(&spheres.bounds).union(&boxes.bounds).union(&inst.bounds);
        Ok(Scene {
            geoms: self.geoms,
            tris,
            spheres,
            boxes,
            planes: PlaneSoa::from_slice(&self.planes),
            plane_ids: self.plane_ids,
            mesh_indices: self.mesh_indices,
            masked: geom_masks.iter().any(|&m| m != ALL_BITS),
            geom_masks,
            options: o,
            bounds,
            build_time: start.elapsed(),
            backend: Backend::Auto,
            triangle_test: self.triangle_test,
            inst,
        })
    }

    /// Builds each placed geometry alone (as geometry 0 of a scene of its own) and takes its
    /// primitives out of the lists the scene's own trees are built from.
    fn build_prototypes(&mut self) -> Result<Vec<(u32, Scene)>, SceneError> {
        let mut placed: Vec<u32> = self.instances.iter().map(|i| i.geom).collect();
        placed.sort_unstable();
        placed.dedup();
        if placed.is_empty() {
            return Ok(Vec::new());
        }
        let geometries = self.geometries();
        let mut protos = Vec::with_capacity(placed.len());
        for &g in &placed {
            let mut b = SceneBuilder::new().options(self.options).triangle_test(self.triangle_test);
            match geometries[g as usize] {
                Geometry::Spheres(s) => b.add_spheres(s),
                Geometry::Boxes(x) => b.add_boxes(x),
                Geometry::Mesh(t) => b.add_triangles(t),
                Geometry::Plane(p) => b.add_plane(*p),
            }
            .map_err(|e| match e {
                SceneError::InvalidShape { what, .. } => invalid(g, what),
                e => e,
            })?;
            b.geoms[0].mask = self.geoms[g as usize].mask;
            if let Some((_, n, ix)) = self.mesh_indices.iter().find(|m| m.0 == g) {
                b.mesh_indices.push((0, *n, ix.clone()));
            }
            protos.push((g, b.build()?));
        }
        let keep = |ids: &[u32; 2]| placed.binary_search(&ids[0]).is_err();
        fn retain<P>(prims: &mut Vec<P>, ids: &mut Vec<[u32; 2]>, keep: impl Fn(&[u32; 2]) -> bool) {
            let mut k = ids.iter().map(&keep);
            prims.retain(|_| k.next().unwrap_or(true));
            ids.retain(keep);
        }
        retain(&mut self.tris, &mut self.tri_ids, keep);
        retain(&mut self.spheres, &mut self.sphere_ids, keep);
        retain(&mut self.boxes, &mut self.box_ids, keep);
        Ok(protos)
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
    mesh_indices: Vec<MeshIndices>,
    /// Each geometry's mask (as in `geoms`), where the queries read it.
    pub(crate) geom_masks: Vec<u32>,
    /// True when some geometry's mask is not [`ALL_BITS`].
    masked: bool,
    options: BuildOptions,
    bounds: Aabb,
    build_time: Duration,
    backend: Backend,
    triangle_test: TriangleTest,
    /// Placed copies of geometries (two-level queries, `instance.rs`).
    pub(crate) inst: instance::Instances,
}

/// Size and shape facts of a built scene.
#[derive(Clone, Debug)]
pub struct SceneStats {
    /// Geometries.
    pub geoms: usize,
    /// Triangles in the BVH (with [`TriangleTest::MollerTrumbore`], degenerate ones are
    /// left out).
    pub triangles: usize,
    /// Spheres.
    pub spheres: usize,
    /// Boxes.
    pub boxes: usize,
    /// Planes.
    pub planes: usize,
    /// Degenerate triangles ([`Triangle::is_degenerate`]), kept in the BVH or not as
    /// [`TriangleTest`] says.
    pub degenerate: usize,
    /// Binary BVH nodes over all kinds.
    pub nodes2: usize,
    /// 8-wide nodes over all kinds (0 while the 8-wide trees are not made: see
    /// [`SceneStats::bytes_x8`]).
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
    /// Bytes of everything a scene keeps (the trees made so far, primitives, ids).
    pub bytes: usize,
    /// Bytes the 8-wide traversal touches (8-wide nodes, primitives, ids), once the scene has
    /// its 8-wide trees (from the build where `Backend::Auto` resolves to `X8` or `X4`, else
    /// from the first query that walks them); `None` before.
    pub bytes_x8: Option<usize>,
    /// Bytes the 16-wide traversal touches (16-wide nodes, primitives, ids), once the scene
    /// has its 16-wide trees (from the build where `Backend::Auto` resolves to `X16`, else
    /// from the first `X16` query); `None` before.
    pub bytes_x16: Option<usize>,
}

impl Scene {
    /// Geometry facts, indexed by geometry id.
    pub fn geoms(&self) -> &[GeomInfo] {
        &self.geoms
    }
    /// Box around everything except planes, instances included (empty if there is nothing
    /// finite).
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
    /// The ray–triangle test of this scene's queries.
    pub fn triangle_test(&self) -> TriangleTest {
        self.triangle_test
    }
    /// Checks every BVH (parents contain children, every primitive reachable exactly once,
    /// depth fits the stack).
    ///
    /// # Errors
    /// The first problem found.
    pub fn validate(&self) -> Result<(), BvhError> {
        self.tris.validate()?;
        self.spheres.validate()?;
        self.boxes.validate()?;
        self.inst.validate()
    }
    /// Changes the mask of geometry `geom` of a built scene (see [`SceneBuilder::set_mask`]);
    /// no rebuild needed.
    ///
    /// # Errors
    /// [`SceneError::InvalidShape`] when there is no geometry `geom`.
    pub fn set_mask(&mut self, geom: u32, mask: u32) -> Result<(), SceneError> {
        let n = self.geoms.len();
        let g = self
            .geoms
            .get_mut(geom as usize)
            .ok_or_else(|| invalid(geom, format!("no such geometry (there are {n})")))?;
        g.mask = mask;
        self.geom_masks[geom as usize] = mask;
        if let Some(k) = self.inst.proto_of(geom) {
            self.inst.protos[k].1.set_mask(0, mask)?;
        }
        self.masked = self.geom_masks.iter().any(|&m| m != ALL_BITS);
        Ok(())
    }
    /// The mask test of a query by a ray with mask `ray_mask`: `None` when it admits every
    /// geometry (no geometry mask set and an all-bits ray), the fast path.
    #[inline(always)]
    pub(crate) fn mask_filter(&self, ray_mask: u32) -> Option<best::MaskFilter<'_>> {
        (self.masked || ray_mask != ALL_BITS).then_some(best::MaskFilter { masks: &self.geom_masks, ray: ray_mask })
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
            bytes_x8: [self.tris.bytes_x8(), self.spheres.bytes_x8(), self.boxes.bytes_x8()].into_iter().sum(),
            bytes_x16: [self.tris.bytes_x16(), self.spheres.bytes_x16(), self.boxes.bytes_x16()]
                .into_iter()
                .sum::<Option<usize>>(),
            build_time: self.build_time,
            bytes: self.tris.bytes_total()
                + self.spheres.bytes_total()
                + self.boxes.bytes_total()
                + self.planes.padded_len() * 16,
        };
        for (n2, n8) in [
            (&self.tris.bvh2, self.tris.nodes8()),
            (&self.spheres.bvh2, self.spheres.nodes8()),
            (&self.boxes.bvh2, self.boxes.nodes8()),
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
