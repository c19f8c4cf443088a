//! The kernel table: every kernel of [`crate::kernel`] with a seeded pool of [`PAIRS`] pairs
//! and one pass over that pool per variant (scalar, x4, x8, x16 and, for some kernels,
//! autovec).
//! `lanecast bench` and the criterion bench `benches/kernels.rs` both iterate [`kernels`].

use crate::kernel::{
    aabb_triangle, closest_point, moving_aabb_aabb, moving_sphere_aabb, moving_sphere_sphere, moving_sphere_triangle,
    overlap, ray_aabb, ray_plane, ray_sphere, ray_triangle, segment_capsule, segment_sphere, watertight,
};
use crate::lanes::{F32x4, F32x8, F32x16, Lanes, Mask};
use crate::prim::{Aabb, Capsule, Plane, Primitive, Soa, Sphere, Triangle};
use crate::ray::{Ray, RayColumn, RayPacket, RaySoa};
use crate::rng::Rng;
use crate::vec3x::Vec3x;
use glam::Vec3;
use std::fmt;
use std::hint::black_box;

/// Pairs per pool: a multiple of 16, so every lane of every pass is live, and small enough for
/// a pool to stay in L1/L2.
pub const PAIRS: usize = 4096;
const _: () = assert!(PAIRS.is_multiple_of(16));

/// One way of running a kernel over its pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// The `*_scalar` reference, one pair at a time, reading array-of-structs copies
    /// (`Vec<Ray>`, `Vec<Sphere>`, …) of the pool.
    Scalar,
    /// The `*_lanes` kernel on [`F32x4`], over lanes `i..i + 4` of the pool's columns: rays
    /// made into a packet from the [`RaySoa`]'s columns (the slices `Autovec` reads) by
    /// [`RayPacket::new`], as a caller holding its own column buffers makes them (so the
    /// packet's validity mask and the loads are part of the cost), primitives loaded from
    /// their [`Soa`] ([`Soa::lanes`]).
    X4,
    /// The same on [`F32x8`].
    X8,
    /// The same on [`F32x16`] (one AVX-512 register per column where the build has it).
    X16,
    /// The lanes math written as a plain scalar loop over the same `&[f32]` columns, left to
    /// the compiler to vectorise (ray–sphere, ray–box and ray–triangle only).
    Autovec,
}

impl Variant {
    /// Every variant, in report order.
    pub const ALL: [Variant; 5] = [Variant::Scalar, Variant::X4, Variant::X8, Variant::X16, Variant::Autovec];

    /// The name used in reports and as criterion function name: `scalar`, `x4`, `x8`, `x16`
    /// or `autovec`.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Scalar => "scalar",
            Variant::X4 => "x4",
            Variant::X8 => "x8",
            Variant::X16 => "x16",
            Variant::Autovec => "autovec",
        }
    }
}

/// One entry of the kernel table: a name, a seeded pool of [`PAIRS`] pairs ("lane `i` of the
/// first column block against lane `i` of the second") built once, and a pass over the whole
/// pool per [`Variant`].
///
/// A pass counts the pairs that hit (or overlap) and, for kernels that return a value, stores
/// one digest of each pair's result (e.g. `t`, or `t + u + v` for triangles) into an output
/// column owned by the entry, as a real caller would store its results. The pools are drawn so
/// that roughly 30–60 % of the pairs hit.
pub struct Kernel {
    name: &'static str,
    passes: Box<dyn Passes>,
    out: Vec<f32>,
}

impl Kernel {
    fn new<K: KernelDef>(seed: u64) -> Self {
        let pool = K::pool(&mut Rng::new(seed));
        Kernel { name: K::NAME, passes: Box::new(Entry::<K> { pool }), out: vec![0.0; PAIRS] }
    }

    /// The kernel's name, e.g. `ray_triangle`: the `query` of its `lanecast bench` rows and
    /// its criterion group.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Pairs in the pool (always [`PAIRS`]): the work of one pass.
    pub fn pairs(&self) -> usize {
        PAIRS
    }

    /// The variants this kernel has, in [`Variant::ALL`] order: always scalar, x4, x8 and
    /// x16; autovec for ray–sphere, ray–box and ray–triangle.
    pub fn variants(&self) -> &'static [Variant] {
        if self.passes.has_autovec() { &Variant::ALL } else { &Variant::ALL[..4] }
    }

    /// Runs one pass of `variant` over the whole pool and returns how many pairs hit, or `None`
    /// (doing nothing) if this kernel has no such variant.
    pub fn run(&mut self, variant: Variant) -> Option<u32> {
        self.passes.run(variant, &mut self.out)
    }
}

/// Two variants of one kernel timed in turns ([`Kernel::paired`]): the speed of the first
/// over the second's, per round, summarised.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    /// Rounds timed (one ratio each).
    pub rounds: usize,
    /// The median ratio (the lower middle one for an even count of rounds): above 1 when the
    /// first variant is faster.
    pub median: f64,
    /// The lower and upper quartiles of the ratios (the ratios at a quarter and three
    /// quarters of the sorted list, rounded down).
    pub quartiles: (f64, f64),
    /// The smallest and largest ratio.
    pub range: (f64, f64),
    /// The hits of the two variants' last passes (what [`Kernel::run`] returns).
    pub hits: (u32, u32),
}

impl Kernel {
    /// Times variants `a` and `b` in turns: `rounds` rounds, each the best of `passes` passes
    /// of one variant and then of the other (the order swapped every round), and the ratio
    /// `best(b) / best(a)` (`a`'s speed over `b`'s) of every round. On a host whose speed
    /// drifts over seconds, which a benchmark that runs one variant after the other reads as
    /// a difference between them, the drift is common to both halves of a round. `None` if
    /// the kernel lacks either variant, or `rounds` or `passes` is 0.
    pub fn paired(&mut self, a: Variant, b: Variant, rounds: usize, passes: usize) -> Option<Paired> {
        let has = self.variants();
        if !has.contains(&a) || !has.contains(&b) || rounds == 0 || passes == 0 {
            return None;
        }
        let mut hits = (0, 0);
        let best = |k: &mut Kernel, v: Variant, hit: &mut u32| {
            let mut t = f64::INFINITY;
            for _ in 0..passes {
                let start = std::time::Instant::now();
                *hit = black_box(k.run(black_box(v)))?;
                t = t.min(start.elapsed().as_secs_f64());
            }
            // A pass too short for the clock counts as the clock's resolution.
            Some(t.max(1e-9))
        };
        let mut ratios = Vec::with_capacity(rounds);
        for r in 0..rounds {
            let (ta, tb) = if r % 2 == 0 {
                let ta = best(self, a, &mut hits.0)?;
                (ta, best(self, b, &mut hits.1)?)
            } else {
                let tb = best(self, b, &mut hits.1)?;
                (best(self, a, &mut hits.0)?, tb)
            };
            ratios.push(tb / ta);
        }
        ratios.sort_by(f64::total_cmp);
        let at = |q: usize| ratios[(q * (rounds - 1)) / 4];
        Some(Paired { rounds, median: at(2), quartiles: (at(1), at(3)), range: (ratios[0], ratios[rounds - 1]), hits })
    }
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel").field("name", &self.name).field("variants", &self.variants()).finish()
    }
}

/// The kernel table, one entry per kernel of [`crate::kernel`], each with its seeded pool
/// built (deterministically: the same pools on every call):
///
/// | name | scalar reference (the `*_lanes` twin sits beside it) |
/// |---|---|
/// | `ray_sphere_test` | [`ray_sphere::test_scalar`] |
/// | `ray_sphere` | [`ray_sphere::intersect_scalar`] |
/// | `segment_sphere_crossings` | [`segment_sphere::crossings_scalar`] |
/// | `ray_aabb` | [`ray_aabb::intersect_scalar`] |
/// | `ray_triangle` | [`ray_triangle::intersect_scalar`] (Möller–Trumbore) |
/// | `ray_triangle_watertight` | [`watertight::intersect_scalar`] |
/// | `ray_plane` | [`ray_plane::intersect_scalar`] |
/// | `aabb_triangle_sat` | [`aabb_triangle::overlap_scalar`] |
/// | `sphere_aabb` | [`overlap::sphere_aabb_scalar`] |
/// | `aabb_aabb` | [`overlap::aabb_aabb_scalar`] |
/// | `moving_sphere_sphere` | [`moving_sphere_sphere::time_of_impact_scalar`] |
/// | `segment_capsule` | [`segment_capsule::intersect_scalar`] |
/// | `moving_sphere_aabb` | [`moving_sphere_aabb::time_of_impact_scalar`] |
/// | `moving_aabb_aabb` | [`moving_aabb_aabb::time_of_impact_scalar`] |
/// | `moving_sphere_triangle` | [`moving_sphere_triangle::sweep_scalar`] |
/// | `closest_point_triangle` | [`closest_point::triangle_scalar`] |
/// | `closest_point_sphere` | [`closest_point::sphere_scalar`] |
/// | `closest_point_aabb` | [`closest_point::aabb_scalar`] |
///
/// `ray_sphere_test` and `ray_sphere` run over the same pool, as do `ray_triangle` and
/// `ray_triangle_watertight`. The closest-point kernels have no miss: a pair "hits" when the
/// point is within [`NEAR`] of the shape's surface, and the digest is the squared distance.
pub fn kernels() -> Vec<Kernel> {
    vec![
        Kernel::new::<RaySphereTest>(1),
        Kernel::new::<RaySphereIntersect>(1), // same pool as the test
        Kernel::new::<SegmentSphereCrossings>(2),
        Kernel::new::<RayAabb>(3),
        Kernel::new::<RayTriangle>(4),
        Kernel::new::<RayTriangleWatertight>(4), // same pool as Möller–Trumbore
        Kernel::new::<RayPlane>(5),
        Kernel::new::<AabbTriangleSat>(6),
        Kernel::new::<SphereAabb>(7),
        Kernel::new::<AabbAabb>(8),
        Kernel::new::<MovingSphereSphere>(9),
        Kernel::new::<SegmentCapsule>(10),
        Kernel::new::<MovingSphereAabb>(11),
        Kernel::new::<MovingAabbAabb>(12),
        Kernel::new::<ClosestPointTriangle>(13),
        Kernel::new::<ClosestPointSphere>(14),
        Kernel::new::<ClosestPointAabb>(15),
        Kernel::new::<MovingSphereTriangle>(16),
    ]
}

/// The passes of one kernel over its pool, behind one indirect call per pass.
trait Passes: Send + Sync {
    fn run(&self, variant: Variant, out: &mut [f32]) -> Option<u32>;
    fn has_autovec(&self) -> bool;
}

/// A kernel with its pool.
struct Entry<K: KernelDef> {
    pool: K::Pool,
}

impl<K: KernelDef> Passes for Entry<K> {
    fn run(&self, variant: Variant, out: &mut [f32]) -> Option<u32> {
        // As opaque to the optimiser as a caller's own data: the pool is read and the output
        // column written on every pass.
        let (p, out) = (black_box(&self.pool), black_box(out));
        Some(match variant {
            Variant::Scalar => run_scalar::<K>(p, out),
            Variant::X4 => K::pass::<F32x4>(p, out),
            Variant::X8 => K::pass::<F32x8>(p, out),
            Variant::X16 => K::pass::<F32x16>(p, out),
            Variant::Autovec => K::AUTOVEC?(p, out),
        })
    }
    fn has_autovec(&self) -> bool {
        K::AUTOVEC.is_some()
    }
}

// ---------------------------------------------------------------------------------------
// Pools: every input once as array-of-structs (for `scalar`) and once as columns.

struct Rays {
    v: Vec<Ray>,
    soa: RaySoa,
}

impl Rays {
    fn new(v: Vec<Ray>) -> Self {
        let soa = RaySoa::from_rays(&v);
        Self { v, soa }
    }
    /// The eight columns `ox oy oz dx dy dz t_min t_max`, each `n` long.
    fn cols(&self, n: usize) -> [&[f32]; 8] {
        use RayColumn::*;
        let names = [Ox, Oy, Oz, Dx, Dy, Dz, TMin, TMax];
        std::array::from_fn(|k| &self.soa.column(names[k])[..n])
    }
}

struct Prims<P: Primitive> {
    v: Vec<P>,
    soa: Soa<P>,
}

impl<P: Primitive> Prims<P> {
    fn new(v: Vec<P>) -> Self {
        let soa = Soa::from_slice(&v);
        Self { v, soa }
    }
    /// The first `K` columns, each `n` long.
    fn cols<const K: usize>(&self, n: usize) -> [&[f32]; K] {
        std::array::from_fn(|c| &self.soa.column(c)[..n])
    }
}

/// Points or velocities.
struct Points {
    v: Vec<Vec3>,
    cols: [Vec<f32>; 3],
}

impl Points {
    fn new(v: Vec<Vec3>) -> Self {
        let cols = [0, 1, 2].map(|k| v.iter().map(|p| p[k]).collect());
        Self { v, cols }
    }
    #[inline(always)]
    fn lanes<L: Lanes>(&self, i: usize) -> Vec3x<L> {
        Vec3x::load(&self.cols[0], &self.cols[1], &self.cols[2], i)
    }
}

/// `PAIRS` seeded samples.
fn gen_pool<T>(rng: &mut Rng, f: impl FnMut(&mut Rng) -> T) -> Vec<T> {
    let mut f = f;
    (0..PAIRS).map(|_| f(rng)).collect()
}

/// Rays from 4–16 units away towards `target`, aimed up to `jitter` off per axis. 15 % point
/// away; directions are not unit length (`t = 1 / k` at the aim point) and half the rays end
/// at a finite `t_max` somewhere around the aim point.
fn ray_towards(rng: &mut Rng, target: Vec3, jitter: f32) -> Ray {
    let origin = target + rng.unit_vec3() * rng.range(4.0, 16.0);
    let aim = target + rng.vec3(-jitter, jitter);
    let k = rng.range(0.25, 4.0);
    let away = if rng.f32() < 0.15 { -1.0 } else { 1.0 };
    let t_max = if rng.f32() < 0.5 { f32::INFINITY } else { rng.range(0.6, 2.0) / k };
    Ray::with_interval(origin, (aim - origin) * (k * away), 0.0, t_max)
}

/// A point 3–10 units from `target` and a motion towards `target` (up to `jitter` off per
/// axis) that covers 50–150 % of the way in the unit time step.
fn approach(rng: &mut Rng, target: Vec3, jitter: f32) -> (Vec3, Vec3) {
    let p = target + rng.unit_vec3() * rng.range(3.0, 10.0);
    let aim = target + rng.vec3(-jitter, jitter);
    (p, (aim - p) * rng.range(0.5, 1.5))
}

fn sphere_pool(rng: &mut Rng) -> (Rays, Prims<Sphere>) {
    let pairs = gen_pool(rng, |rng| {
        let s = Sphere::new(rng.vec3(-50.0, 50.0), rng.range(0.5, 2.0));
        (ray_towards(rng, s.center, 1.1 * s.radius), s)
    });
    let (rays, spheres) = pairs.into_iter().unzip();
    (Rays::new(rays), Prims::new(spheres))
}

fn aabb_pool(rng: &mut Rng) -> (Rays, Prims<Aabb>) {
    let pairs = gen_pool(rng, |rng| {
        let c = rng.vec3(-50.0, 50.0);
        let e = rng.vec3(0.5, 2.0);
        (ray_towards(rng, c, 2.0), Aabb::new(c - e, c + e))
    });
    let (rays, boxes) = pairs.into_iter().unzip();
    (Rays::new(rays), Prims::new(boxes))
}

fn triangle_pool(rng: &mut Rng) -> (Rays, Prims<Triangle>) {
    let pairs = gen_pool(rng, |rng| {
        let c = rng.vec3(-50.0, 50.0);
        let mut v = || c + rng.vec3(-2.0, 2.0);
        let tri = Triangle::new(v(), v(), v());
        let centroid = (tri.v[0] + tri.v[1] + tri.v[2]) / 3.0;
        (ray_towards(rng, centroid, 0.6), tri)
    });
    let (rays, tris) = pairs.into_iter().unzip();
    (Rays::new(rays), Prims::new(tris))
}

// ---------------------------------------------------------------------------------------
// Kernels.

/// `Some(v)`: a digest of the pair's result to store; `None`: the kernel only answers hit/miss.
type Scalar = (bool, Option<f32>);
type LanesOut<L> = (<L as Lanes>::Mask, Option<L>);
/// A plain SoA loop: fills `out` (when the kernel has a value) and returns the hit count.
type Autovec<P> = Option<fn(&P, &mut [f32]) -> u32>;

/// One kernel of the table: its name, how its pool is drawn, and one pair (scalar) or one
/// packet of pairs (lanes) of a pass.
trait KernelDef: 'static {
    const NAME: &'static str;
    type Pool: Send + Sync + 'static;
    fn pool(rng: &mut Rng) -> Self::Pool;
    /// Pair `i` through the scalar reference.
    fn scalar(p: &Self::Pool, i: usize) -> Scalar;
    /// A pass of the lanes kernel over the pool, `L::N` pairs at a time ([`ray_pass`] or
    /// [`index_pass`]): the pairs that hit.
    fn pass<L: Lanes>(p: &Self::Pool, out: &mut [f32]) -> u32;
    const AUTOVEC: Autovec<Self::Pool> = None;
}

const INF: f32 = f32::INFINITY;

/// `t` of a scalar `Option<f32>` result, `+inf` for a miss (like the lanes kernels).
fn t_of(t: Option<f32>) -> Scalar {
    (t.is_some(), Some(t.unwrap_or(INF)))
}

struct RaySphereTest;
impl KernelDef for RaySphereTest {
    const NAME: &'static str = "ray_sphere_test";
    type Pool = (Rays, Prims<Sphere>);
    fn pool(rng: &mut Rng) -> Self::Pool {
        sphere_pool(rng)
    }
    #[inline(always)]
    fn scalar((r, s): &Self::Pool, i: usize) -> Scalar {
        (ray_sphere::test_scalar(&r.v[i], &s.v[i]), None)
    }
    #[inline(always)]
    fn pass<L: Lanes>((r, s): &Self::Pool, out: &mut [f32]) -> u32 {
        ray_pass::<L>(r, out, |rays, i| (ray_sphere::test_lanes(rays, &s.soa.lanes::<L>(i)), None))
    }
    const AUTOVEC: Autovec<Self::Pool> = Some(autovec_ray_sphere_test);
}

struct RaySphereIntersect;
impl KernelDef for RaySphereIntersect {
    const NAME: &'static str = "ray_sphere";
    type Pool = (Rays, Prims<Sphere>);
    fn pool(rng: &mut Rng) -> Self::Pool {
        sphere_pool(rng)
    }
    #[inline(always)]
    fn scalar((r, s): &Self::Pool, i: usize) -> Scalar {
        t_of(ray_sphere::intersect_scalar(&r.v[i], &s.v[i]))
    }
    #[inline(always)]
    fn pass<L: Lanes>((r, s): &Self::Pool, out: &mut [f32]) -> u32 {
        ray_pass::<L>(r, out, |rays, i| {
            let (hit, t) = ray_sphere::intersect_lanes(rays, &s.soa.lanes::<L>(i));
            (hit, Some(t))
        })
    }
    const AUTOVEC: Autovec<Self::Pool> = Some(autovec_ray_sphere_intersect);
}

struct SegmentSphereCrossings;
impl KernelDef for SegmentSphereCrossings {
    const NAME: &'static str = "segment_sphere_crossings";
    type Pool = (Rays, Prims<Sphere>);
    /// Segments from outside that stop short of, inside or beyond the sphere.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let s = Sphere::new(rng.vec3(-50.0, 50.0), rng.range(0.5, 2.0));
            let a = s.center + rng.unit_vec3() * rng.range(3.0, 10.0);
            let aim = s.center + rng.vec3(-1.2, 1.2) * s.radius;
            let b = a + (aim - a) * rng.range(0.7, 1.5);
            (Ray::segment(a, b), s)
        });
        let (rays, spheres) = pairs.into_iter().unzip();
        (Rays::new(rays), Prims::new(spheres))
    }
    /// Digest: `t_enter + t_exit` plus the components of both normals.
    #[inline(always)]
    fn scalar((r, s): &Self::Pool, i: usize) -> Scalar {
        let x = segment_sphere::crossings_scalar(&r.v[i], &s.v[i]);
        let part = |c: Option<segment_sphere::Crossing>| c.map_or(INF, |c| c.t + c.normal.x + c.normal.y + c.normal.z);
        (x.count() > 0, Some(part(x.enter) + part(x.exit)))
    }
    #[inline(always)]
    fn pass<L: Lanes>((r, s): &Self::Pool, out: &mut [f32]) -> u32 {
        ray_pass::<L>(r, out, |rays, i| {
            let x = segment_sphere::crossings_lanes(rays, &s.soa.lanes::<L>(i));
            let sum = |n: Vec3x<L>| n.x + n.y + n.z;
            let digest = x.t_enter + sum(x.n_enter) + x.t_exit + sum(x.n_exit);
            (x.enter | x.exit, Some(digest))
        })
    }
}

struct RayAabb;
impl KernelDef for RayAabb {
    const NAME: &'static str = "ray_aabb";
    type Pool = (Rays, Prims<Aabb>);
    fn pool(rng: &mut Rng) -> Self::Pool {
        aabb_pool(rng)
    }
    /// Digest: `t_enter`.
    #[inline(always)]
    fn scalar((r, b): &Self::Pool, i: usize) -> Scalar {
        t_of(ray_aabb::intersect_scalar(&r.v[i], &b.v[i]).map(|(t0, _)| t0))
    }
    #[inline(always)]
    fn pass<L: Lanes>((r, b): &Self::Pool, out: &mut [f32]) -> u32 {
        ray_pass::<L>(r, out, |rays, i| {
            let (hit, t0, _) = ray_aabb::intersect_lanes(rays, &b.soa.lanes::<L>(i));
            (hit, Some(t0))
        })
    }
    const AUTOVEC: Autovec<Self::Pool> = Some(autovec_ray_aabb);
}

struct RayTriangle;
impl KernelDef for RayTriangle {
    const NAME: &'static str = "ray_triangle";
    type Pool = (Rays, Prims<Triangle>);
    fn pool(rng: &mut Rng) -> Self::Pool {
        triangle_pool(rng)
    }
    /// Digest: `t + u + v`.
    #[inline(always)]
    fn scalar((r, t): &Self::Pool, i: usize) -> Scalar {
        t_of(ray_triangle::intersect_scalar(&r.v[i], &t.v[i]).map(|h| h.t + h.u + h.v))
    }
    #[inline(always)]
    fn pass<L: Lanes>((r, t): &Self::Pool, out: &mut [f32]) -> u32 {
        ray_pass::<L>(r, out, |rays, i| {
            let (hit, t, u, v) = ray_triangle::intersect_lanes(rays, &t.soa.lanes::<L>(i));
            (hit, Some(t + u + v))
        })
    }
    const AUTOVEC: Autovec<Self::Pool> = Some(autovec_ray_triangle);
}

struct RayTriangleWatertight;
impl KernelDef for RayTriangleWatertight {
    const NAME: &'static str = "ray_triangle_watertight";
    type Pool = (Rays, Prims<Triangle>);
    fn pool(rng: &mut Rng) -> Self::Pool {
        triangle_pool(rng)
    }
    /// Digest: `t + u + v`.
    #[inline(always)]
    fn scalar((r, t): &Self::Pool, i: usize) -> Scalar {
        t_of(watertight::intersect_scalar(&r.v[i], &t.v[i]).map(|h| h.t + h.u + h.v))
    }
    /// `N` rays against `N` triangles, the set-up of the rays included.
    #[inline(always)]
    fn pass<L: Lanes>((r, t): &Self::Pool, out: &mut [f32]) -> u32 {
        ray_pass::<L>(r, out, |rays, i| {
            let rays = watertight::ShearedLanes::new(rays);
            let (hit, t, u, v) = watertight::intersect_lanes(&rays, &t.soa.lanes::<L>(i));
            (hit, Some(t + u + v))
        })
    }
    const AUTOVEC: Autovec<Self::Pool> = None;
}

struct RayPlane;
impl KernelDef for RayPlane {
    const NAME: &'static str = "ray_plane";
    type Pool = (Rays, Prims<Plane>);
    /// Random planes and random rays near them; half the rays end at a finite `t_max`.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let p0 = rng.vec3(-50.0, 50.0);
            let n = rng.unit_vec3() * rng.range(0.5, 2.0);
            let origin = p0 + rng.vec3(-20.0, 20.0);
            let t_max = if rng.f32() < 0.5 { INF } else { rng.range(5.0, 30.0) };
            let dir = rng.unit_vec3() * rng.range(0.5, 2.0);
            (Ray::with_interval(origin, dir, 0.0, t_max), Plane::new(n, n.dot(p0)))
        });
        let (rays, planes) = pairs.into_iter().unzip();
        (Rays::new(rays), Prims::new(planes))
    }
    #[inline(always)]
    fn scalar((r, p): &Self::Pool, i: usize) -> Scalar {
        t_of(ray_plane::intersect_scalar(&r.v[i], &p.v[i]))
    }
    #[inline(always)]
    fn pass<L: Lanes>((r, p): &Self::Pool, out: &mut [f32]) -> u32 {
        ray_pass::<L>(r, out, |rays, i| {
            let (hit, t) = ray_plane::intersect_lanes(rays, &p.soa.lanes::<L>(i));
            (hit, Some(t))
        })
    }
}

struct AabbTriangleSat;
impl KernelDef for AabbTriangleSat {
    const NAME: &'static str = "aabb_triangle_sat";
    type Pool = (Prims<Aabb>, Prims<Triangle>);
    /// Triangles of size ~4 whose centroid is up to 2.5 off the box centre per axis.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let c = rng.vec3(-50.0, 50.0);
            let e = rng.vec3(0.5, 2.0);
            let g = c + rng.vec3(-2.5, 2.5);
            let mut v = || g + rng.vec3(-2.0, 2.0);
            (Aabb::new(c - e, c + e), Triangle::new(v(), v(), v()))
        });
        let (boxes, tris) = pairs.into_iter().unzip();
        (Prims::new(boxes), Prims::new(tris))
    }
    #[inline(always)]
    fn scalar((b, t): &Self::Pool, i: usize) -> Scalar {
        (aabb_triangle::overlap_scalar(&b.v[i], &t.v[i]), None)
    }
    #[inline(always)]
    fn pass<L: Lanes>((b, t): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| {
            let hit = aabb_triangle::overlap_lanes(&b.soa.lanes::<L>(i), &t.soa.lanes::<L>(i));
            (hit, None)
        })
    }
}

struct SphereAabb;
impl KernelDef for SphereAabb {
    const NAME: &'static str = "sphere_aabb";
    type Pool = (Prims<Sphere>, Prims<Aabb>);
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let c = rng.vec3(-50.0, 50.0);
            let e = rng.vec3(0.5, 2.0);
            let s = Sphere::new(c + rng.vec3(-3.0, 3.0), rng.range(0.3, 1.5));
            (s, Aabb::new(c - e, c + e))
        });
        let (spheres, boxes) = pairs.into_iter().unzip();
        (Prims::new(spheres), Prims::new(boxes))
    }
    #[inline(always)]
    fn scalar((s, b): &Self::Pool, i: usize) -> Scalar {
        (overlap::sphere_aabb_scalar(&s.v[i], &b.v[i]), None)
    }
    #[inline(always)]
    fn pass<L: Lanes>((s, b): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| (overlap::sphere_aabb_lanes(&s.soa.lanes::<L>(i), &b.soa.lanes::<L>(i)), None))
    }
}

struct AabbAabb;
impl KernelDef for AabbAabb {
    const NAME: &'static str = "aabb_aabb";
    type Pool = (Prims<Aabb>, Prims<Aabb>);
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let c = rng.vec3(-50.0, 50.0);
            let (ea, eb) = (rng.vec3(0.5, 2.0), rng.vec3(0.3, 1.5));
            let cb = c + rng.vec3(-3.0, 3.0);
            (Aabb::new(c - ea, c + ea), Aabb::new(cb - eb, cb + eb))
        });
        let (a, b) = pairs.into_iter().unzip();
        (Prims::new(a), Prims::new(b))
    }
    #[inline(always)]
    fn scalar((a, b): &Self::Pool, i: usize) -> Scalar {
        (overlap::aabb_aabb_scalar(&a.v[i], &b.v[i]), None)
    }
    #[inline(always)]
    fn pass<L: Lanes>((a, b): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| (overlap::aabb_aabb_lanes(&a.soa.lanes::<L>(i), &b.soa.lanes::<L>(i)), None))
    }
}

struct MovingSphereSphere;
impl KernelDef for MovingSphereSphere {
    const NAME: &'static str = "moving_sphere_sphere";
    type Pool = (Prims<Sphere>, Points, Prims<Sphere>, Points);
    /// `b` drifts randomly; `a` moves towards `b` relative to it.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let cb = rng.vec3(-50.0, 50.0);
            let (ca, rel) = approach(rng, cb, 2.0);
            let vb = rng.vec3(-1.0, 1.0);
            let (ra, rb) = (rng.range(0.3, 1.5), rng.range(0.3, 1.5));
            (Sphere::new(ca, ra), vb + rel, Sphere::new(cb, rb), vb)
        });
        (
            Prims::new(pairs.iter().map(|p| p.0).collect()),
            Points::new(pairs.iter().map(|p| p.1).collect()),
            Prims::new(pairs.iter().map(|p| p.2).collect()),
            Points::new(pairs.iter().map(|p| p.3).collect()),
        )
    }
    #[inline(always)]
    fn scalar((a, va, b, vb): &Self::Pool, i: usize) -> Scalar {
        t_of(moving_sphere_sphere::time_of_impact_scalar(&a.v[i], va.v[i], &b.v[i], vb.v[i]))
    }
    #[inline(always)]
    fn pass<L: Lanes>((a, va, b, vb): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| {
            let (hit, t) = moving_sphere_sphere::time_of_impact_lanes(
                &a.soa.lanes::<L>(i),
                va.lanes(i),
                &b.soa.lanes::<L>(i),
                vb.lanes(i),
            );
            (hit, Some(t))
        })
    }
}

struct SegmentCapsule;
impl KernelDef for SegmentCapsule {
    const NAME: &'static str = "segment_capsule";
    type Pool = (Points, Points, Prims<Capsule>);
    /// Segments `p → q` from 3–10 units away that stop short of, in or beyond the capsule.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let c = rng.vec3(-50.0, 50.0);
            let cap = Capsule::new(c + rng.vec3(-2.0, 2.0), c + rng.vec3(-2.0, 2.0), rng.range(0.3, 1.0));
            let (p, v) = approach(rng, (cap.a + cap.b) * 0.5, 1.0);
            (p, p + v, cap)
        });
        (
            Points::new(pairs.iter().map(|p| p.0).collect()),
            Points::new(pairs.iter().map(|p| p.1).collect()),
            Prims::new(pairs.iter().map(|p| p.2).collect()),
        )
    }
    #[inline(always)]
    fn scalar((p, q, c): &Self::Pool, i: usize) -> Scalar {
        t_of(segment_capsule::intersect_scalar(p.v[i], q.v[i], &c.v[i]))
    }
    #[inline(always)]
    fn pass<L: Lanes>((p, q, c): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| {
            let (hit, t) = segment_capsule::intersect_lanes(p.lanes(i), q.lanes(i), &c.soa.lanes::<L>(i));
            (hit, Some(t))
        })
    }
}

struct MovingSphereAabb;
impl KernelDef for MovingSphereAabb {
    const NAME: &'static str = "moving_sphere_aabb";
    type Pool = (Prims<Sphere>, Points, Prims<Aabb>);
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let c = rng.vec3(-50.0, 50.0);
            let e = rng.vec3(0.5, 2.0);
            let (p, v) = approach(rng, c, 3.0);
            (Sphere::new(p, rng.range(0.2, 1.0)), v, Aabb::new(c - e, c + e))
        });
        (
            Prims::new(pairs.iter().map(|p| p.0).collect()),
            Points::new(pairs.iter().map(|p| p.1).collect()),
            Prims::new(pairs.iter().map(|p| p.2).collect()),
        )
    }
    #[inline(always)]
    fn scalar((s, v, b): &Self::Pool, i: usize) -> Scalar {
        t_of(moving_sphere_aabb::time_of_impact_scalar(&s.v[i], v.v[i], &b.v[i]))
    }
    #[inline(always)]
    fn pass<L: Lanes>((s, v, b): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| {
            let (hit, t) =
                moving_sphere_aabb::time_of_impact_lanes(&s.soa.lanes::<L>(i), v.lanes(i), &b.soa.lanes::<L>(i));
            (hit, Some(t))
        })
    }
}

struct MovingSphereTriangle;
impl KernelDef for MovingSphereTriangle {
    const NAME: &'static str = "moving_sphere_triangle";
    type Pool = (Prims<Sphere>, Points, Prims<Triangle>);
    /// Spheres from 3–10 units away moving towards a triangle of up to 4 units, stopping
    /// short of, at or beyond it.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let c = rng.vec3(-50.0, 50.0);
            let tri = Triangle::new(c + rng.vec3(-2.0, 2.0), c + rng.vec3(-2.0, 2.0), c + rng.vec3(-2.0, 2.0));
            let (p, v) = approach(rng, c, 1.0);
            (Sphere::new(p, rng.range(0.3, 1.2)), v, tri)
        });
        (
            Prims::new(pairs.iter().map(|p| p.0).collect()),
            Points::new(pairs.iter().map(|p| p.1).collect()),
            Prims::new(pairs.iter().map(|p| p.2).collect()),
        )
    }
    #[inline(always)]
    fn scalar((s, v, t): &Self::Pool, i: usize) -> Scalar {
        let sphere = &s.v[i];
        t_of(moving_sphere_triangle::sweep_scalar(sphere.center, sphere.radius, v.v[i], &t.v[i]).map(|c| c.toi))
    }
    #[inline(always)]
    fn pass<L: Lanes>((s, v, t): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| {
            let sphere = s.soa.lanes::<L>(i);
            let (hit, toi, _, _) =
                moving_sphere_triangle::sweep_lanes(sphere.center, sphere.radius, v.lanes(i), &t.soa.lanes::<L>(i));
            (hit, Some(toi))
        })
    }
}

struct MovingAabbAabb;
impl KernelDef for MovingAabbAabb {
    const NAME: &'static str = "moving_aabb_aabb";
    type Pool = (Prims<Aabb>, Points, Prims<Aabb>, Points);
    /// `b` drifts randomly; `a` moves towards `b` relative to it.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let cb = rng.vec3(-50.0, 50.0);
            let (ca, rel) = approach(rng, cb, 3.0);
            let vb = rng.vec3(-1.0, 1.0);
            let (ea, eb) = (rng.vec3(0.3, 1.5), rng.vec3(0.3, 1.5));
            (Aabb::new(ca - ea, ca + ea), vb + rel, Aabb::new(cb - eb, cb + eb), vb)
        });
        (
            Prims::new(pairs.iter().map(|p| p.0).collect()),
            Points::new(pairs.iter().map(|p| p.1).collect()),
            Prims::new(pairs.iter().map(|p| p.2).collect()),
            Points::new(pairs.iter().map(|p| p.3).collect()),
        )
    }
    /// Digest: `t_first`.
    #[inline(always)]
    fn scalar((a, va, b, vb): &Self::Pool, i: usize) -> Scalar {
        let r = moving_aabb_aabb::time_of_impact_scalar(&a.v[i], va.v[i], &b.v[i], vb.v[i]);
        t_of(r.map(|(t0, _)| t0))
    }
    #[inline(always)]
    fn pass<L: Lanes>((a, va, b, vb): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| {
            let (hit, t0, _) = moving_aabb_aabb::time_of_impact_lanes(
                &a.soa.lanes::<L>(i),
                va.lanes(i),
                &b.soa.lanes::<L>(i),
                vb.lanes(i),
            );
            (hit, Some(t0))
        })
    }
}

/// Distance within which a closest-point pair counts as a hit in the pass counts.
pub const NEAR: f32 = 1.0;

/// `(hit, digest)` of a closest-point pair from its squared distance.
#[inline(always)]
fn near_scalar(d2: f32) -> Scalar {
    (d2 <= NEAR * NEAR, Some(d2))
}
#[inline(always)]
fn near_lanes<L: Lanes>(d2: L) -> LanesOut<L> {
    (d2.le(L::splat(NEAR * NEAR)), Some(d2))
}

struct ClosestPointTriangle;
impl KernelDef for ClosestPointTriangle {
    const NAME: &'static str = "closest_point_triangle";
    type Pool = (Points, Prims<Triangle>);
    /// Triangles as for `ray_triangle`; points up to 3 units from the centroid.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let c = rng.vec3(-50.0, 50.0);
            let mut v = || c + rng.vec3(-2.0, 2.0);
            let tri = Triangle::new(v(), v(), v());
            let centroid = (tri.v[0] + tri.v[1] + tri.v[2]) / 3.0;
            (centroid + rng.unit_vec3() * rng.range(0.0, 3.0), tri)
        });
        (Points::new(pairs.iter().map(|p| p.0).collect()), Prims::new(pairs.iter().map(|p| p.1).collect()))
    }
    #[inline(always)]
    fn scalar((p, t): &Self::Pool, i: usize) -> Scalar {
        let (q, _, _) = closest_point::triangle_scalar(p.v[i], &t.v[i]);
        near_scalar(closest_point::distance_squared_scalar(p.v[i], q))
    }
    #[inline(always)]
    fn pass<L: Lanes>((p, t): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| {
            let pl = p.lanes::<L>(i);
            let (q, _, _) = closest_point::triangle_lanes(pl, &t.soa.lanes::<L>(i));
            near_lanes(closest_point::distance_squared_lanes(pl, q))
        })
    }
}

struct ClosestPointSphere;
impl KernelDef for ClosestPointSphere {
    const NAME: &'static str = "closest_point_sphere";
    type Pool = (Points, Prims<Sphere>);
    /// Points inside and around spheres of radius 0.5–2.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let s = Sphere::new(rng.vec3(-50.0, 50.0), rng.range(0.5, 2.0));
            (s.center + rng.unit_vec3() * rng.range(0.0, s.radius + 3.0), s)
        });
        (Points::new(pairs.iter().map(|p| p.0).collect()), Prims::new(pairs.iter().map(|p| p.1).collect()))
    }
    #[inline(always)]
    fn scalar((p, s): &Self::Pool, i: usize) -> Scalar {
        let (q, _) = closest_point::sphere_scalar(p.v[i], &s.v[i]);
        near_scalar(closest_point::distance_squared_scalar(p.v[i], q))
    }
    #[inline(always)]
    fn pass<L: Lanes>((p, s): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| {
            let pl = p.lanes::<L>(i);
            let (q, _) = closest_point::sphere_lanes(pl, &s.soa.lanes::<L>(i));
            near_lanes(closest_point::distance_squared_lanes(pl, q))
        })
    }
}

struct ClosestPointAabb;
impl KernelDef for ClosestPointAabb {
    const NAME: &'static str = "closest_point_aabb";
    type Pool = (Points, Prims<Aabb>);
    /// Points inside and around boxes of half extents 0.5–2.
    fn pool(rng: &mut Rng) -> Self::Pool {
        let pairs = gen_pool(rng, |rng| {
            let c = rng.vec3(-50.0, 50.0);
            let e = rng.vec3(0.5, 2.0);
            (c + rng.vec3(-2.5, 2.5), Aabb::new(c - e, c + e))
        });
        (Points::new(pairs.iter().map(|p| p.0).collect()), Prims::new(pairs.iter().map(|p| p.1).collect()))
    }
    #[inline(always)]
    fn scalar((p, b): &Self::Pool, i: usize) -> Scalar {
        let (q, _) = closest_point::aabb_scalar(p.v[i], &b.v[i]);
        near_scalar(closest_point::distance_squared_scalar(p.v[i], q))
    }
    #[inline(always)]
    fn pass<L: Lanes>((p, b): &Self::Pool, out: &mut [f32]) -> u32 {
        index_pass::<L>(out, |i| {
            let pl = p.lanes::<L>(i);
            let (q, _) = closest_point::aabb_lanes(pl, &b.soa.lanes::<L>(i));
            near_lanes(closest_point::distance_squared_lanes(pl, q))
        })
    }
}

// ---------------------------------------------------------------------------------------
// Plain SoA loops: the lanes math in ordinary scalar Rust (glam `Vec3` is three plain f32),
// `&`/`|` instead of `&&`/`||` and `if` only as selects, so the loop vectoriser can take it.

/// The [`RayPacket`](crate::RayPacket) validity rule for one ray.
#[inline(always)]
fn ray_valid(o: Vec3, d: Vec3, t_min: f32, t_max: f32) -> bool {
    let dd = d.dot(d);
    o.is_finite() & d.is_finite() & (dd > 0.0) & (dd < INF) & t_min.is_finite() & (t_min <= t_max)
}

/// The lanes `min`/`max` rule: the second operand when either is NaN.
#[inline(always)]
fn min2(a: f32, b: f32) -> f32 {
    if a < b { a } else { b }
}
#[inline(always)]
fn max2(a: f32, b: f32) -> f32 {
    if a > b { a } else { b }
}

/// Mirrors [`ray_sphere::test_lanes`].
#[inline(never)]
fn autovec_ray_sphere_test((rays, spheres): &(Rays, Prims<Sphere>), _out: &mut [f32]) -> u32 {
    let n = PAIRS;
    let [ox, oy, oz, dx, dy, dz, t0, t1] = rays.cols(n);
    let [cx, cy, cz, rad] = spheres.cols(n);
    let mut hits = 0;
    for i in 0..n {
        let (o, d) = (Vec3::new(ox[i], oy[i], oz[i]), Vec3::new(dx[i], dy[i], dz[i]));
        let m = o + d * t0[i] - Vec3::new(cx[i], cy[i], cz[i]);
        let c = m.dot(m) - rad[i] * rad[i];
        let b = m.dot(d);
        let a = d.dot(d);
        let len = t1[i] - t0[i];
        let vertex_inside = -b <= a * len;
        let disc = a * (rad[i] * rad[i]) - m.cross(d).length_squared();
        let line_hits = (0.0..INF).contains(&disc);
        let end_inside = (a * len + (b + b)) * len + c <= 0.0;
        let approach = (b <= 0.0) & ((vertex_inside & line_hits) | (!vertex_inside & end_inside));
        let hit = ray_valid(o, d, t0[i], t1[i]) & ((c <= 0.0) | approach);
        hits += hit as u32;
    }
    hits
}

/// Mirrors [`ray_sphere::intersect_lanes`].
#[inline(never)]
fn autovec_ray_sphere_intersect((rays, spheres): &(Rays, Prims<Sphere>), out: &mut [f32]) -> u32 {
    let n = PAIRS;
    let [ox, oy, oz, dx, dy, dz, t0, t1] = rays.cols(n);
    let [cx, cy, cz, rad] = spheres.cols(n);
    let out = &mut out[..n];
    let mut hits = 0;
    for i in 0..n {
        let (o, d) = (Vec3::new(ox[i], oy[i], oz[i]), Vec3::new(dx[i], dy[i], dz[i]));
        let m = o + d * t0[i] - Vec3::new(cx[i], cy[i], cz[i]);
        let r2 = rad[i] * rad[i];
        let c = m.dot(m) - r2;
        let b = m.dot(d);
        let a = d.dot(d);
        let disc = a * r2 - m.cross(d).length_squared();
        let s = c / (disc.sqrt() - b);
        let inside = c <= 0.0;
        let outside_hit = (b <= 0.0) & (0.0..INF).contains(&disc) & (s >= 0.0);
        let t = t0[i] + if inside { 0.0 } else { s };
        let hit = ray_valid(o, d, t0[i], t1[i]) & (inside | outside_hit) & (t <= t1[i]) & (t < INF);
        out[i] = if hit { t } else { INF };
        hits += hit as u32;
    }
    hits
}

/// Mirrors [`ray_aabb::intersect_lanes`] (the branchless slab test).
#[inline(never)]
fn autovec_ray_aabb((rays, boxes): &(Rays, Prims<Aabb>), out: &mut [f32]) -> u32 {
    let n = PAIRS;
    let [ox, oy, oz, dx, dy, dz, t0, t1] = rays.cols(n);
    let [x0, y0, z0, x1, y1, z1] = boxes.cols(n);
    let out = &mut out[..n];
    let mut hits = 0;
    for i in 0..n {
        let (o, d) = (Vec3::new(ox[i], oy[i], oz[i]), Vec3::new(dx[i], dy[i], dz[i]));
        let (lo, hi) = (Vec3::new(x0[i], y0[i], z0[i]), Vec3::new(x1[i], y1[i], z1[i]));
        let inv = d.recip();
        let (mut t_enter, mut t_exit) = (t0[i], t1[i]);
        for k in 0..3 {
            let neg = inv[k] < 0.0;
            let near = (if neg { hi[k] } else { lo[k] } - o[k]) * inv[k];
            let far = (if neg { lo[k] } else { hi[k] } - o[k]) * inv[k];
            t_enter = max2(near, t_enter);
            t_exit = min2(far, t_exit);
        }
        let hit = ray_valid(o, d, t0[i], t1[i]) & (t_enter <= t_exit) & (t_enter < INF);
        out[i] = if hit { t_enter } else { INF };
        hits += hit as u32;
    }
    hits
}

/// Mirrors [`ray_triangle::intersect_lanes`] (Möller–Trumbore without early exits, one
/// division, the degeneracy test of [`Triangle::is_degenerate`]).
#[inline(never)]
fn autovec_ray_triangle((rays, tris): &(Rays, Prims<Triangle>), out: &mut [f32]) -> u32 {
    let n = PAIRS;
    let [ox, oy, oz, dx, dy, dz, t0, t1] = rays.cols(n);
    let [ax, ay, az, bx, by, bz, cx, cy, cz] = tris.cols(n);
    let out = &mut out[..n];
    let mut hits = 0;
    for i in 0..n {
        let (o, d) = (Vec3::new(ox[i], oy[i], oz[i]), Vec3::new(dx[i], dy[i], dz[i]));
        let v0 = Vec3::new(ax[i], ay[i], az[i]);
        let e1 = Vec3::new(bx[i], by[i], bz[i]) - v0;
        let e2 = Vec3::new(cx[i], cy[i], cz[i]) - v0;
        let n2 = e1.cross(e2).length_squared();
        let bound = (Triangle::SLIVER * Triangle::SLIVER) * (e1.length_squared() * e2.length_squared());
        let solid = (n2 > bound) & (n2 < INF) & (bound < INF);
        let p = d.cross(e2);
        let det = e1.dot(p);
        let inv_det = 1.0 / det;
        let s = o - v0;
        let u = s.dot(p) * inv_det;
        let q = s.cross(e1);
        let v = d.dot(q) * inv_det;
        let t = e2.dot(q) * inv_det;
        let hit = ray_valid(o, d, t0[i], t1[i])
            & solid
            & (det != 0.0)
            & (0.0..=1.0).contains(&u)
            & (v >= 0.0)
            & (u + v <= 1.0)
            & (t >= t0[i])
            & (t <= t1[i])
            & (t < INF);
        out[i] = if hit { t + u + v } else { INF };
        hits += hit as u32;
    }
    hits
}

// ---------------------------------------------------------------------------------------
// Drivers.

#[inline(never)]
fn run_scalar<K: KernelDef>(p: &K::Pool, out: &mut [f32]) -> u32 {
    let mut hits = 0;
    for (i, o) in out.iter_mut().enumerate() {
        let (hit, v) = K::scalar(p, i);
        hits += hit as u32;
        if let Some(v) = v {
            *o = v;
        }
    }
    hits
}

/// A pass that loads pairs `i..i + N` at `i` for every multiple `i` of `N` (pools without
/// rays).
#[inline(never)]
fn index_pass<L: Lanes>(out: &mut [f32], mut pairs: impl FnMut(usize) -> LanesOut<L>) -> u32 {
    let mut hits = 0;
    for (k, o) in out.chunks_exact_mut(L::N).enumerate() {
        let (hit, v) = pairs(k * L::N);
        hits += hit.bitmask().count_ones();
        if let Some(v) = v {
            v.store(o);
        }
    }
    hits
}

/// A pass over a pool with rays: the packet of rays `i..i + N` made from the pool's ray
/// columns (as a caller holding its own column buffers makes it: [`RayPacket::new`], the
/// validity mask included), pairs `i..i + N` of the rest loaded at `i` by `pairs`. Its own
/// loop, not [`index_pass`] with a closure that makes the packets: the eight column slices
/// then travel in the closure through memory, and x16 `ray_aabb` measured 0.89× `autovec`
/// instead of 1.03–1.06×.
#[inline(never)]
fn ray_pass<L: Lanes>(rays: &Rays, out: &mut [f32], mut pairs: impl FnMut(&RayPacket<L>, usize) -> LanesOut<L>) -> u32 {
    let [ox, oy, oz, dx, dy, dz, t0, t1] = rays.cols(PAIRS);
    let out = &mut out[..PAIRS];
    let mut hits = 0;
    for i in (0..PAIRS).step_by(L::N) {
        let load = |c: &[f32]| L::load(&c[i..i + L::N]);
        let packet = RayPacket::new(
            Vec3x::new(load(ox), load(oy), load(oz)),
            Vec3x::new(load(dx), load(dy), load(dz)),
            load(t0),
            load(t1),
            L::Mask::splat(true), // every lane a pair: `PAIRS` is a multiple of 16
        );
        let (hit, v) = pairs(&packet, i);
        hits += hit.bitmask().count_ones();
        if let Some(v) = v {
            v.store(&mut out[i..i + L::N]);
        }
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Largest accepted difference in hit count between a lanes pass and the scalar pass: the
    /// lanes kernels may flip hit/miss where the answer is within rounding of the boundary, and
    /// `tests/common` accepts such flips on random input up to a fraction of 1e-3.
    const MAX_FLIPS: u32 = (PAIRS / 1000) as u32;

    fn find<'a>(table: &'a mut [Kernel], name: &str) -> &'a mut Kernel {
        table.iter_mut().find(|k| k.name() == name).unwrap_or_else(|| panic!("no kernel {name}"))
    }

    #[test]
    fn paired_times_both_variants_in_every_round() {
        let mut table = kernels();
        let k = find(&mut table, "ray_aabb");
        let want = (k.run(Variant::X16).unwrap(), k.run(Variant::Autovec).unwrap());
        let p = k.paired(Variant::X16, Variant::Autovec, 7, 2).expect("ray_aabb has both variants");
        assert_eq!(p.rounds, 7);
        assert_eq!(p.hits, want, "every round runs both variants' passes");
        let ((lo, hi), (q1, q3)) = (p.range, p.quartiles);
        assert!(0.0 < lo && lo <= q1 && q1 <= p.median && p.median <= q3 && q3 <= hi && hi.is_finite(), "{p:?}");
        assert_eq!(k.paired(Variant::X16, Variant::Autovec, 0, 1), None, "no rounds");
        assert_eq!(k.paired(Variant::X16, Variant::Autovec, 3, 0), None, "no passes");
        let k = find(&mut table, "aabb_aabb");
        assert_eq!(k.paired(Variant::X16, Variant::Autovec, 3, 1), None, "a kernel without autovec");
    }

    #[test]
    fn table_has_the_spec_kernels_and_their_variants() {
        let table = kernels();
        let names: Vec<&str> = table.iter().map(Kernel::name).collect();
        for spec in ["ray_sphere", "ray_aabb", "ray_triangle", "aabb_triangle_sat"] {
            assert!(names.contains(&spec), "{spec} missing from {names:?}");
        }
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "duplicate names in {names:?}");
        for k in &table {
            let autovec = ["ray_sphere_test", "ray_sphere", "ray_aabb", "ray_triangle"].contains(&k.name());
            let want: &[Variant] = if autovec { &Variant::ALL } else { &Variant::ALL[..4] };
            assert_eq!(k.variants(), want, "{}", k.name());
            assert_eq!(k.pairs(), PAIRS);
        }
        let wanted: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
        assert_eq!(wanted, ["scalar", "x4", "x8", "x16", "autovec"]);
    }

    #[test]
    fn every_pass_counts_the_same_hits_and_30_to_60_percent_hit() {
        let (lo, hi) = ((PAIRS as f64 * 0.3) as u32, (PAIRS as f64 * 0.6) as u32);
        for mut k in kernels() {
            let name = k.name();
            let scalar = k.run(Variant::Scalar).unwrap();
            eprintln!("{name:<26} scalar hits {scalar} of {PAIRS}");
            assert!((lo..=hi).contains(&scalar), "{name}: scalar pass hits {scalar} of {PAIRS}");
            let x4 = k.run(Variant::X4).unwrap();
            let x8 = k.run(Variant::X8).unwrap();
            let x16 = k.run(Variant::X16).unwrap();
            assert_eq!(x4, x8, "{name}: the x4 and x8 passes run the same lanes code on the same pairs");
            assert_eq!(x4, x16, "{name}: the x4 and x16 passes run the same lanes code on the same pairs");
            assert!(x4.abs_diff(scalar) <= MAX_FLIPS, "{name}: x4 hits {x4}, scalar {scalar}");
            match k.run(Variant::Autovec) {
                Some(a) => assert!(a.abs_diff(scalar) <= MAX_FLIPS, "{name}: autovec hits {a}, scalar {scalar}"),
                None => assert!(!k.variants().contains(&Variant::Autovec), "{name}"),
            }
        }
    }

    #[test]
    fn passes_store_one_digest_per_pair() {
        // Kernels that only answer hit/miss have no digest to store.
        let hit_only = ["ray_sphere_test", "aabb_triangle_sat", "sphere_aabb", "aabb_aabb"];
        for mut k in kernels() {
            let mut digests = Vec::new();
            for &v in k.variants() {
                k.out.fill(f32::NAN);
                k.run(v).unwrap();
                if hit_only.contains(&k.name()) {
                    assert!(k.out.iter().all(|d| d.is_nan()), "{} {v:?} stored digests", k.name());
                } else {
                    let hits = k.out.iter().filter(|d| d.is_finite()).count();
                    assert!(!k.out.iter().any(|d| d.is_nan()), "{} {v:?}: a pair without a digest", k.name());
                    assert!(hits > PAIRS / 10, "{} {v:?}: {hits} finite digests", k.name());
                }
                digests.push((v, k.out.clone()));
            }
            // x4, x8 and x16 run the same lanes code on the same pairs.
            let bits = |v: Variant| {
                digests.iter().find(|d| d.0 == v).unwrap().1.iter().map(|d| d.to_bits()).collect::<Vec<_>>()
            };
            assert!(bits(Variant::X4) == bits(Variant::X8), "{}: x4 and x8 digests differ", k.name());
            assert!(bits(Variant::X4) == bits(Variant::X16), "{}: x4 and x16 digests differ", k.name());
        }
    }

    #[test]
    fn pools_are_seeded() {
        let (mut a, mut b) = (kernels(), kernels());
        for (ka, kb) in a.iter_mut().zip(&mut b) {
            ka.run(Variant::X8);
            kb.run(Variant::X8);
            assert!(ka.out.iter().zip(&kb.out).all(|(x, y)| x.to_bits() == y.to_bits()), "{}", ka.name());
        }
        // The boolean sphere test and the closest-hit sphere kernel share one pool.
        let test = find(&mut a, "ray_sphere_test").run(Variant::Scalar).unwrap();
        let closest = find(&mut a, "ray_sphere").run(Variant::Scalar).unwrap();
        assert!(test.abs_diff(closest) <= MAX_FLIPS, "ray_sphere_test hits {test}, ray_sphere {closest}");
    }
}
