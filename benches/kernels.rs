//! Throughput of every kernel: the scalar reference against its 4- and 8-lane twins.
//!
//! Each kernel is a criterion group named after it (`ray_sphere_test`, `ray_aabb`, …) with
//! the functions
//!
//! * `scalar`: the `*_scalar` reference, one pair at a time, reading array-of-structs
//!   copies (`Vec<Ray>`, `Vec<Sphere>`, …) of the pool;
//! * `x4` / `x8`: the `*_lanes` kernel on [`F32x4`] / [`F32x8`], loading lane `i..i + N` of
//!   the pool's [`RaySoa`] / [`Soa`] columns (so the packet validity mask and the loads are
//!   part of the cost, as for a real caller);
//! * `autovec` (ray–sphere, ray–box and ray–triangle only): the lanes math written as a plain
//!   scalar loop over the same `&[f32]` columns, left to the compiler to vectorise.
//!
//! Every function of a group runs over the same seeded pool of [`PAIRS`] pairs ("lane `i` of
//! the rays against lane `i` of the primitives"), small enough to stay in L1/L2, with a mix of
//! roughly 30–60 % hits; the hit rates are printed to stderr before the groups run. Each pass
//! counts the hits and, for kernels that return a time, stores one digest of the results per
//! pair (e.g. `t`, or `t + u + v` for triangles) into an output column; the pool and the output
//! go through [`black_box`]. Throughput is reported in pairs (`Throughput::Elements`).
//!
//! Run everything (a few minutes), or one group:
//!
//! ```text
//! cargo bench --bench kernels
//! cargo bench --bench kernels -- ray_aabb
//! ```
//!
//! Results land in criterion's default place, `target/criterion/<group>/<function>/`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use glam::Vec3;
use lanecast::kernel::{
    aabb_triangle, moving_aabb_aabb, moving_sphere_aabb, moving_sphere_sphere, overlap, ray_aabb, ray_plane,
    ray_sphere, ray_triangle, segment_capsule, segment_sphere,
};
use lanecast::prim::{Aabb, Capsule, Plane, Primitive, Soa, Sphere, Triangle};
use lanecast::ray::RayColumn;
use lanecast::rng::Rng;
use lanecast::vec3x::Vec3x;
use lanecast::{F32x4, F32x8, Lanes, Mask, Ray, RaySoa};
use std::hint::black_box;
use std::time::Duration;

/// Pairs per pool (a multiple of 8, so every lane is live).
const PAIRS: usize = 4096;
const _: () = assert!(PAIRS % 8 == 0);

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

trait Kernel {
    const NAME: &'static str;
    type Pool;
    fn pool(rng: &mut Rng) -> Self::Pool;
    /// Pair `i` through the scalar reference.
    fn scalar(p: &Self::Pool, i: usize) -> Scalar;
    /// Pairs `i..i + L::N` through the lanes kernel.
    fn lanes<L: Lanes>(p: &Self::Pool, i: usize) -> LanesOut<L>;
    const AUTOVEC: Autovec<Self::Pool> = None;
}

const INF: f32 = f32::INFINITY;

/// `t` of a scalar `Option<f32>` result, `+inf` for a miss (like the lanes kernels).
fn t_of(t: Option<f32>) -> Scalar {
    (t.is_some(), Some(t.unwrap_or(INF)))
}

struct RaySphereTest;
impl Kernel for RaySphereTest {
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
    fn lanes<L: Lanes>((r, s): &Self::Pool, i: usize) -> LanesOut<L> {
        (ray_sphere::test_lanes(&r.soa.packet::<L>(i), &s.soa.lanes::<L>(i)), None)
    }
    const AUTOVEC: Autovec<Self::Pool> = Some(autovec_ray_sphere_test);
}

struct RaySphereIntersect;
impl Kernel for RaySphereIntersect {
    const NAME: &'static str = "ray_sphere_intersect";
    type Pool = (Rays, Prims<Sphere>);
    fn pool(rng: &mut Rng) -> Self::Pool {
        sphere_pool(rng)
    }
    #[inline(always)]
    fn scalar((r, s): &Self::Pool, i: usize) -> Scalar {
        t_of(ray_sphere::intersect_scalar(&r.v[i], &s.v[i]))
    }
    #[inline(always)]
    fn lanes<L: Lanes>((r, s): &Self::Pool, i: usize) -> LanesOut<L> {
        let (hit, t) = ray_sphere::intersect_lanes(&r.soa.packet::<L>(i), &s.soa.lanes::<L>(i));
        (hit, Some(t))
    }
    const AUTOVEC: Autovec<Self::Pool> = Some(autovec_ray_sphere_intersect);
}

struct SegmentSphereCrossings;
impl Kernel for SegmentSphereCrossings {
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
    fn lanes<L: Lanes>((r, s): &Self::Pool, i: usize) -> LanesOut<L> {
        let x = segment_sphere::crossings_lanes(&r.soa.packet::<L>(i), &s.soa.lanes::<L>(i));
        let sum = |n: Vec3x<L>| n.x + n.y + n.z;
        let digest = x.t_enter + sum(x.n_enter) + x.t_exit + sum(x.n_exit);
        (x.enter | x.exit, Some(digest))
    }
}

struct RayAabb;
impl Kernel for RayAabb {
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
    fn lanes<L: Lanes>((r, b): &Self::Pool, i: usize) -> LanesOut<L> {
        let (hit, t0, _) = ray_aabb::intersect_lanes(&r.soa.packet::<L>(i), &b.soa.lanes::<L>(i));
        (hit, Some(t0))
    }
    const AUTOVEC: Autovec<Self::Pool> = Some(autovec_ray_aabb);
}

struct RayTriangle;
impl Kernel for RayTriangle {
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
    fn lanes<L: Lanes>((r, t): &Self::Pool, i: usize) -> LanesOut<L> {
        let (hit, t, u, v) = ray_triangle::intersect_lanes(&r.soa.packet::<L>(i), &t.soa.lanes::<L>(i));
        (hit, Some(t + u + v))
    }
    const AUTOVEC: Autovec<Self::Pool> = Some(autovec_ray_triangle);
}

struct RayPlane;
impl Kernel for RayPlane {
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
    fn lanes<L: Lanes>((r, p): &Self::Pool, i: usize) -> LanesOut<L> {
        let (hit, t) = ray_plane::intersect_lanes(&r.soa.packet::<L>(i), &p.soa.lanes::<L>(i));
        (hit, Some(t))
    }
}

struct AabbTriangleSat;
impl Kernel for AabbTriangleSat {
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
    fn lanes<L: Lanes>((b, t): &Self::Pool, i: usize) -> LanesOut<L> {
        let hit = aabb_triangle::overlap_lanes(&b.soa.lanes::<L>(i), &t.soa.lanes::<L>(i));
        (hit, None)
    }
}

struct SphereAabb;
impl Kernel for SphereAabb {
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
    fn lanes<L: Lanes>((s, b): &Self::Pool, i: usize) -> LanesOut<L> {
        (overlap::sphere_aabb_lanes(&s.soa.lanes::<L>(i), &b.soa.lanes::<L>(i)), None)
    }
}

struct AabbAabb;
impl Kernel for AabbAabb {
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
    fn lanes<L: Lanes>((a, b): &Self::Pool, i: usize) -> LanesOut<L> {
        (overlap::aabb_aabb_lanes(&a.soa.lanes::<L>(i), &b.soa.lanes::<L>(i)), None)
    }
}

struct MovingSphereSphere;
impl Kernel for MovingSphereSphere {
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
    fn lanes<L: Lanes>((a, va, b, vb): &Self::Pool, i: usize) -> LanesOut<L> {
        let (hit, t) = moving_sphere_sphere::time_of_impact_lanes(
            &a.soa.lanes::<L>(i),
            va.lanes(i),
            &b.soa.lanes::<L>(i),
            vb.lanes(i),
        );
        (hit, Some(t))
    }
}

struct SegmentCapsule;
impl Kernel for SegmentCapsule {
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
    fn lanes<L: Lanes>((p, q, c): &Self::Pool, i: usize) -> LanesOut<L> {
        let (hit, t) = segment_capsule::intersect_lanes(p.lanes(i), q.lanes(i), &c.soa.lanes::<L>(i));
        (hit, Some(t))
    }
}

struct MovingSphereAabb;
impl Kernel for MovingSphereAabb {
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
    fn lanes<L: Lanes>((s, v, b): &Self::Pool, i: usize) -> LanesOut<L> {
        let (hit, t) = moving_sphere_aabb::time_of_impact_lanes(&s.soa.lanes::<L>(i), v.lanes(i), &b.soa.lanes::<L>(i));
        (hit, Some(t))
    }
}

struct MovingAabbAabb;
impl Kernel for MovingAabbAabb {
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
    fn lanes<L: Lanes>((a, va, b, vb): &Self::Pool, i: usize) -> LanesOut<L> {
        let (hit, t0, _) = moving_aabb_aabb::time_of_impact_lanes(
            &a.soa.lanes::<L>(i),
            va.lanes(i),
            &b.soa.lanes::<L>(i),
            vb.lanes(i),
        );
        (hit, Some(t0))
    }
}

// ---------------------------------------------------------------------------------------
// Plain SoA loops: the lanes math in ordinary scalar Rust (glam `Vec3` is three plain f32),
// `&`/`|` instead of `&&`/`||` and `if` only as selects, so the loop vectoriser can take it.

/// The [`RayPacket`](lanecast::RayPacket) validity rule for one ray.
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
fn run_scalar<K: Kernel>(p: &K::Pool, out: &mut [f32]) -> u32 {
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

#[inline(never)]
fn run_lanes<K: Kernel, L: Lanes>(p: &K::Pool, out: &mut [f32]) -> u32 {
    let mut hits = 0;
    for i in (0..out.len()).step_by(L::N) {
        let (hit, v) = K::lanes::<L>(p, i);
        hits += hit.bitmask().count_ones();
        if let Some(v) = v {
            v.store(&mut out[i..]);
        }
    }
    hits
}

fn bench<K: Kernel>(c: &mut Criterion, seed: u64) {
    let pool = K::pool(&mut Rng::new(seed));
    let mut out = vec![0.0f32; PAIRS];
    let pct = |hits: u32| format!("{:.1}%", 100.0 * hits as f64 / PAIRS as f64);
    eprintln!(
        "{:<26}{PAIRS} pairs, hits: scalar {}, x4 {}, x8 {}{}",
        K::NAME,
        pct(run_scalar::<K>(&pool, &mut out)),
        pct(run_lanes::<K, F32x4>(&pool, &mut out)),
        pct(run_lanes::<K, F32x8>(&pool, &mut out)),
        K::AUTOVEC.map_or(String::new(), |f| format!(", autovec {}", pct(f(&pool, &mut out)))),
    );

    let mut g = c.benchmark_group(K::NAME);
    g.throughput(Throughput::Elements(PAIRS as u64));
    g.bench_function("scalar", |b| b.iter(|| run_scalar::<K>(black_box(&pool), black_box(&mut out))));
    g.bench_function("x4", |b| b.iter(|| run_lanes::<K, F32x4>(black_box(&pool), black_box(&mut out))));
    g.bench_function("x8", |b| b.iter(|| run_lanes::<K, F32x8>(black_box(&pool), black_box(&mut out))));
    if let Some(f) = K::AUTOVEC {
        g.bench_function("autovec", |b| b.iter(|| f(black_box(&pool), black_box(&mut out))));
    }
    g.finish();
}

fn kernels(c: &mut Criterion) {
    bench::<RaySphereTest>(c, 1);
    bench::<RaySphereIntersect>(c, 1); // same pool as the test
    bench::<SegmentSphereCrossings>(c, 2);
    bench::<RayAabb>(c, 3);
    bench::<RayTriangle>(c, 4);
    bench::<RayPlane>(c, 5);
    bench::<AabbTriangleSat>(c, 6);
    bench::<SphereAabb>(c, 7);
    bench::<AabbAabb>(c, 8);
    bench::<MovingSphereSphere>(c, 9);
    bench::<SegmentCapsule>(c, 10);
    bench::<MovingSphereAabb>(c, 11);
    bench::<MovingAabbAabb>(c, 12);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    targets = kernels
}
criterion_main!(benches);
