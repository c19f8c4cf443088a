//! Adapters that put lanecast and three other Rust BVH crates behind one small interface, for
//! the `peers` benchmark (`cargo bench -p lanecast-peers --bench peers`).
//!
//! Every library gets the same triangles: the mesh as loaded by
//! [`lanecast::scene::mesh_io::load_mesh`], minus the triangles lanecast calls degenerate
//! ([`lanecast::prim::Triangle::is_degenerate`]; they can never be hit, and lanecast leaves
//! them out of its BVH). Every query takes a [`lanecast::Ray`] (`origin + t · dir`,
//! `t ∈ [t_min, t_max]`) and answers in units of `dir`; the conversion to each library's ray
//! type is part of the query.
//!
//! * [`Lanecast`]: [`Scene::intersect_with`] / [`Scene::occluded_with`] with [`Backend::Auto`]
//!   (x16 on AVX-512 builds, x8 with AVX).
//! * [`Obvhs`]: obvhs' compressed wide BVH (CWBVH, 8-wide), built with
//!   `build_cwbvh_from_tris(.., BvhBuildParams::medium_build(), ..)` as in the crate's
//!   `basic_cwbvh` example, triangles reordered to the BVH's `primitive_indices` (as in its
//!   `cornell_box_cwbvh` example). Closest hit: `CwBvh::ray_traverse`; occlusion:
//!   `CwBvh::ray_traverse_miss` (stops at the first hit). Triangle test:
//!   `obvhs::triangle::Triangle::intersect` (Möller–Trumbore, two-sided).
//! * [`Parry`]: a parry3d `TriMesh` built with `TriMesh::new` (no flags; its binned BVH).
//!   Closest hit: `RayCast::cast_local_ray(ray, t_max, solid = true)` (best-first BVH
//!   traversal with SIMD box tests; triangles are two-sided). Occlusion:
//!   `RayCast::intersects_local_ray`, which for a mesh is `cast_local_ray(..).is_some()`, a
//!   full closest-hit search: parry has no early-exit any-hit query for meshes.
//!   [`Parry::occluded_depth_first`] is an any-hit search written with parry's `Bvh::leaves`
//!   (no faster overall on these scenes: its box tests are scalar and unordered; for
//!   reference only).
//! * [`BvhCrate`]: the `bvh` crate's binary SAH BVH (`Bvh::build`) over triangles. The crate
//!   only enumerates shapes whose boxes a query touches, so the searches are written here
//!   with its public query API: closest hit walks `traverse_iterator` (depth-first) with a
//!   custom `IntersectsAabb` query that prunes boxes entered beyond the best hit so far
//!   (faster here than `nearest_traverse_iterator`, whose heap allocates per ray); occlusion
//!   walks it with a segment query (boxes entered before the segment's end) and stops at
//!   the first hit. The
//!   crate's own triangle test (`bvh::ray::Ray::intersects_triangle`) culls back faces and
//!   rejects `det < f32::EPSILON` (an absolute bound: grazing hits on small triangles are
//!   lost), so the triangle test is chosen by [`TriTest`]: a two-sided Möller–Trumbore
//!   (`det != 0`, the default) or the crate's test run on both windings.
//!
//! * `Embree` (feature `embree`): Embree 4 loaded at run time from `LANECAST_EMBREE_LIB`
//!   (the `embreex` wheel's `libembree4`; `benches/peers/with-embree.sh` sets it up), one
//!   triangle geometry, default (medium) build quality; `rtcIntersect1` / `rtcOccluded1`, and
//!   `rtcIntersect8` / `rtcOccluded8` for packets. At its defaults Embree builds a BVH8 over
//!   `Triangle4` leaves, tests triangles with Möller–Trumbore (two-sided) and boxes with a
//!   fused, non-conservative slab test. `Embree::build_robust` sets
//!   `RTC_SCENE_FLAG_ROBUST`, which selects `Triangle4v` leaves with Embree's watertight
//!   (Plücker) triangle test and conservative box tests: the guarantees lanecast's default
//!   gives (`kernels/common/scene.cpp` and `kernels/bvh/bvh8_factory.cpp` of Embree 4).
//!
//! All queries run on the calling thread. Builds too: obvhs is built without its `parallel`
//! feature, `bvh::Bvh::build` is the crate's sequential build (`build_par` is the rayon one),
//! parry builds sequentially; lanecast's builder uses rayon, so the bench builds it in a
//! one-thread pool.

#[cfg(feature = "embree")]
mod embree;
#[cfg(feature = "embree")]
pub use embree::{Built, Embree};

use glam::{Vec3, Vec3A};
use lanecast::scene::mesh_io::load_mesh;
use lanecast::{Backend, Ray, Scene, SceneBuilder};
use std::cell::Cell;
use std::path::Path;
use std::time::Duration;

/// A mesh as every library gets it: positions and non-degenerate triangles.
#[derive(Clone, Debug)]
pub struct Mesh {
    /// Vertex positions.
    pub positions: Vec<[f32; 3]>,
    /// Triangles (indices into `positions`), degenerate ones removed.
    pub indices: Vec<[u32; 3]>,
    /// Degenerate triangles removed.
    pub dropped: usize,
}

impl Mesh {
    /// Loads an OBJ or PLY file with lanecast's loader and drops degenerate triangles.
    pub fn load(path: &Path) -> Mesh {
        let m = load_mesh(path).unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()));
        let n = m.indices.len();
        let p = |i: u32| Vec3::from(m.positions[i as usize]);
        let indices: Vec<[u32; 3]> = m
            .indices
            .into_iter()
            .filter(|t| !lanecast::prim::Triangle::new(p(t[0]), p(t[1]), p(t[2])).is_degenerate())
            .collect();
        Mesh { dropped: n - indices.len(), positions: m.positions, indices }
    }
    /// Vertices of triangle `i`.
    pub fn triangle(&self, i: usize) -> [Vec3; 3] {
        self.indices[i].map(|k| Vec3::from(self.positions[k as usize]))
    }
    /// Number of triangles.
    pub fn len(&self) -> usize {
        self.indices.len()
    }
    /// True if there is no triangle.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }
}

/// What the benchmark asks of every library.
pub trait Peer {
    /// Library name.
    const NAME: &'static str;
    /// Closest hit `t` (units of `ray.dir`) in `[ray.t_min, ray.t_max]`, if any.
    fn closest(&self, ray: &Ray) -> Option<f32>;
    /// The closest hit with every field of the record the library hands back (normal,
    /// barycentrics, ids) folded into one number, `None` on a miss: what the timed loops
    /// call, so that an optimiser that sees only `t` read cannot drop the work a caller pays
    /// for. Libraries whose record is `t` alone keep this default.
    #[inline]
    fn closest_record(&self, ray: &Ray) -> Option<f32> {
        self.closest(ray)
    }
    /// True if anything is hit in `[ray.t_min, ray.t_max]`.
    fn occluded(&self, ray: &Ray) -> bool;
}

// ---------------------------------------------------------------------------------------
// lanecast

/// Every field of a lanecast hit folded into one number, read one by one as a caller reads
/// them (`t`, `u`, `v`, the normal, the ids and the kind).
#[inline(always)]
pub fn hit_checksum(h: &lanecast::Hit) -> f32 {
    let ids = h.geom ^ h.prim.rotate_left(8) ^ h.inst.rotate_left(16) ^ (h.kind as u32) << 24;
    h.t + h.u + h.v + h.normal.x + h.normal.y + h.normal.z + (ids & 0xff) as f32
}

/// lanecast with the 8-wide backend.
pub struct Lanecast {
    /// The built scene.
    pub scene: Scene,
}

impl Lanecast {
    /// A builder holding `mesh` (default, medium quality).
    pub fn builder(mesh: &Mesh) -> SceneBuilder {
        let mut b = SceneBuilder::new();
        b.add_mesh(&mesh.positions, &mesh.indices).expect("a valid mesh");
        b
    }
    /// Builds `mesh` at the default (medium) quality, on one thread.
    pub fn build(mesh: &Mesh, pool: &rayon::ThreadPool) -> Self {
        let b = Self::builder(mesh);
        Self { scene: pool.install(|| b.build().unwrap()) }
    }
}

impl Peer for Lanecast {
    const NAME: &'static str = "lanecast";
    #[inline]
    fn closest(&self, ray: &Ray) -> Option<f32> {
        self.scene.intersect_with(ray, Backend::Auto).map(|h| h.t)
    }
    #[inline]
    fn closest_record(&self, ray: &Ray) -> Option<f32> {
        self.scene.intersect_with(ray, Backend::Auto).map(|h| hit_checksum(&h))
    }
    #[inline]
    fn occluded(&self, ray: &Ray) -> bool {
        self.scene.occluded_with(ray, Backend::Auto)
    }
}

// ---------------------------------------------------------------------------------------
// obvhs

/// obvhs' CWBVH over its `Triangle`s (reordered to the BVH's primitive order).
pub struct Obvhs {
    /// The BVH.
    pub bvh: obvhs::cwbvh::CwBvh,
    /// Triangles in BVH order (`tris[k]` is primitive `bvh.primitive_indices[k]`).
    pub tris: Vec<obvhs::triangle::Triangle>,
}

impl Obvhs {
    /// The mesh as obvhs triangles.
    pub fn triangles(mesh: &Mesh) -> Vec<obvhs::triangle::Triangle> {
        (0..mesh.len())
            .map(|i| {
                let [a, b, c] = mesh.triangle(i);
                obvhs::triangle::Triangle { v0: a.into(), v1: b.into(), v2: c.into() }
            })
            .collect()
    }
    /// Builds with the crate's `medium_build` preset (its examples' choice).
    pub fn build(tris: &[obvhs::triangle::Triangle]) -> Self {
        let bvh = obvhs::cwbvh::builder::build_cwbvh_from_tris(
            tris,
            obvhs::BvhBuildParams::medium_build(),
            &mut Duration::default(),
        );
        let tris = bvh.primitive_indices.iter().map(|&i| tris[i as usize]).collect();
        Self { bvh, tris }
    }
    #[inline]
    fn ray(ray: &Ray) -> obvhs::ray::Ray {
        obvhs::ray::Ray::new(Vec3A::from(ray.origin), Vec3A::from(ray.dir), ray.t_min, ray.t_max)
    }
}

impl Peer for Obvhs {
    const NAME: &'static str = "obvhs";
    #[inline]
    fn closest(&self, ray: &Ray) -> Option<f32> {
        let mut hit = obvhs::ray::RayHit::none();
        self.bvh.ray_traverse(Self::ray(ray), &mut hit, |r, id| self.tris[id].intersect(r)).then_some(hit.t)
    }
    #[inline]
    fn occluded(&self, ray: &Ray) -> bool {
        !self.bvh.ray_traverse_miss(Self::ray(ray), |r, id| self.tris[id].intersect(r))
    }
}

// ---------------------------------------------------------------------------------------
// parry3d

/// A parry3d `TriMesh`.
pub struct Parry {
    /// The mesh (with its BVH).
    pub mesh: parry3d::shape::TriMesh,
}

impl Parry {
    /// The mesh as parry vertices and indices.
    pub fn buffers(mesh: &Mesh) -> (Vec<parry3d::math::Vector>, Vec<[u32; 3]>) {
        (mesh.positions.iter().map(|p| parry3d::math::Vector::new(p[0], p[1], p[2])).collect(), mesh.indices.clone())
    }
    /// `TriMesh::new` (no flags: the default).
    pub fn build(vertices: Vec<parry3d::math::Vector>, indices: Vec<[u32; 3]>) -> Self {
        Self { mesh: parry3d::shape::TriMesh::new(vertices, indices).expect("a valid mesh") }
    }
    #[inline]
    fn ray(ray: &Ray) -> parry3d::query::Ray {
        let (o, d) = (ray.origin, ray.dir);
        parry3d::query::Ray::new(parry3d::math::Vector::new(o.x, o.y, o.z), parry3d::math::Vector::new(d.x, d.y, d.z))
    }
    /// Occlusion by a depth-first walk of the mesh BVH (`Bvh::leaves`, pruned with
    /// `BvhNode::cast_ray`) that stops at the first triangle hit (for reference: it is no
    /// faster overall than parry's own `intersects_local_ray` on these scenes).
    pub fn occluded_depth_first(&self, ray: &Ray) -> bool {
        use parry3d::query::RayCast;
        let r = Self::ray(ray);
        let t_max = ray.t_max;
        self.mesh
            .bvh()
            .leaves(|node| node.cast_ray(&r, t_max) <= t_max)
            .any(|i| self.mesh.triangle(i).intersects_local_ray(&r, t_max))
    }
}

impl Peer for Parry {
    const NAME: &'static str = "parry3d";
    #[inline]
    fn closest(&self, ray: &Ray) -> Option<f32> {
        use parry3d::query::RayCast;
        // Parry rays start at t = 0; every ray set here has t_min = 0.
        self.mesh.cast_local_ray(&Self::ray(ray), ray.t_max, true)
    }
    #[inline]
    fn occluded(&self, ray: &Ray) -> bool {
        use parry3d::query::RayCast;
        self.mesh.intersects_local_ray(&Self::ray(ray), ray.t_max)
    }
}

// ---------------------------------------------------------------------------------------
// bvh

type P3 = nalgebra::Point3<f32>;

/// A triangle as the `bvh` crate's shape.
#[derive(Clone, Copy, Debug)]
pub struct BvhTri {
    /// Vertices.
    pub v: [P3; 3],
    node: usize,
}

impl bvh::aabb::Bounded<f32, 3> for BvhTri {
    fn aabb(&self) -> bvh::aabb::Aabb<f32, 3> {
        bvh::aabb::Aabb::empty().grow(&self.v[0]).grow(&self.v[1]).grow(&self.v[2])
    }
}

impl bvh::bounding_hierarchy::BHShape<f32, 3> for BvhTri {
    fn set_bh_node_index(&mut self, i: usize) {
        self.node = i;
    }
    fn bh_node_index(&self) -> usize {
        self.node
    }
}

/// Ray–triangle test used with the `bvh` crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TriTest {
    /// Two-sided Möller–Trumbore without an epsilon (`det != 0`), written here.
    #[default]
    MollerTrumbore,
    /// The crate's `Ray::intersects_triangle` (back-face culling, `det >= f32::EPSILON`),
    /// called on both windings to make it two-sided.
    Crate,
}

/// The `bvh` crate's BVH over [`BvhTri`]s.
pub struct BvhCrate {
    /// The BVH.
    pub bvh: bvh::bvh::Bvh<f32, 3>,
    /// The shapes (in input order; the BVH refers to them by index).
    pub tris: Vec<BvhTri>,
    /// Triangle test.
    pub test: TriTest,
}

/// A `bvh` query: boxes entered no later than `t_max` (which a closest-hit search lowers).
struct Bounded<'a> {
    ray: &'a bvh::ray::Ray<f32, 3>,
    t_max: Cell<f32>,
}

impl bvh::aabb::IntersectsAabb<f32, 3> for Bounded<'_> {
    #[inline]
    fn intersects_aabb(&self, aabb: &bvh::aabb::Aabb<f32, 3>) -> bool {
        self.ray.intersection_slice_for_aabb(aabb).is_some_and(|(t0, _)| t0 <= self.t_max.get())
    }
}

impl BvhCrate {
    /// The mesh as `bvh` shapes.
    pub fn shapes(mesh: &Mesh) -> Vec<BvhTri> {
        (0..mesh.len()).map(|i| BvhTri { v: mesh.triangle(i).map(|p| P3::new(p.x, p.y, p.z)), node: 0 }).collect()
    }
    /// `Bvh::build` (the crate's sequential SAH build).
    pub fn build(mut tris: Vec<BvhTri>, test: TriTest) -> Self {
        let bvh = bvh::bvh::Bvh::build(&mut tris);
        Self { bvh, tris, test }
    }
    /// The crate's ray (unit direction) and the factor from its distances to units of `dir`.
    #[inline]
    fn ray(ray: &Ray) -> (bvh::ray::Ray<f32, 3>, f32) {
        let (o, d) = (ray.origin, ray.dir);
        (bvh::ray::Ray::new(P3::new(o.x, o.y, o.z), nalgebra::Vector3::new(d.x, d.y, d.z)), 1.0 / d.length())
    }
    /// Distance along the crate's (unit) ray to the triangle, if hit at a distance `> 0`.
    #[inline]
    fn hit(&self, r: &bvh::ray::Ray<f32, 3>, t: &BvhTri) -> Option<f32> {
        let [a, b, c] = &t.v;
        let d = match self.test {
            TriTest::Crate => r.intersects_triangle(a, b, c).distance.min(r.intersects_triangle(a, c, b).distance),
            TriTest::MollerTrumbore => {
                let (e1, e2) = (b - a, c - a);
                let p = r.direction.cross(&e2);
                let det = e1.dot(&p);
                if det == 0.0 {
                    return None;
                }
                let inv = 1.0 / det;
                let s = r.origin - a;
                let u = s.dot(&p) * inv;
                if !(0.0..=1.0).contains(&u) {
                    return None;
                }
                let q = s.cross(&e1);
                let v = r.direction.dot(&q) * inv;
                if v < 0.0 || u + v > 1.0 {
                    return None;
                }
                e2.dot(&q) * inv
            }
        };
        (d > 0.0 && d.is_finite()).then_some(d)
    }
}

impl Peer for BvhCrate {
    const NAME: &'static str = "bvh";
    #[inline]
    fn closest(&self, ray: &Ray) -> Option<f32> {
        let (r, scale) = Self::ray(ray);
        let q = Bounded { ray: &r, t_max: Cell::new(ray.t_max / scale) };
        let mut found = false;
        for t in self.bvh.traverse_iterator(&q, &self.tris) {
            if let Some(d) = self.hit(&r, t).filter(|&d| d <= q.t_max.get()) {
                q.t_max.set(d);
                found = true;
            }
        }
        found.then(|| q.t_max.get() * scale)
    }
    #[inline]
    fn occluded(&self, ray: &Ray) -> bool {
        let (r, scale) = Self::ray(ray);
        let t_max = ray.t_max / scale;
        let q = Bounded { ray: &r, t_max: Cell::new(t_max) };
        self.bvh.traverse_iterator(&q, &self.tris).any(|t| self.hit(&r, t).is_some_and(|d| d <= t_max))
    }
}
