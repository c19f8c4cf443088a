//! Sphere sweeps against a scene (continuous collision): the first time in `[0, 1]` at which a
//! sphere moving by a motion vector touches any triangle, sphere, box or plane, with the
//! contact point, the contact normal and the ids; for one sphere or a batch, in every backend.
//!
//! The policy mirrors the ray queries: per primitive kind, an earliest-entry-first traversal
//! of the kind's tree with boxes grown by the radius
//! ([`crate::bvh::traverse::sweep_wide`] / [`sweep_binary`](crate::bvh::traverse::sweep_binary));
//! its leaves run the kind's moving-sphere kernel (scalar for [`Backend::Scalar`], lanes for
//! `X4` / `X8`) and offer each time of impact to the best so far. Planes are tested directly.
//! The best is the smallest time of impact, ties to the smaller `(geom, prim)`. The traversal is
//! conservative, so each backend returns what a brute-force scan over every primitive with the
//! same kernels returns ([`Scene::sweep_sphere_brute_force_with`]); the lanes kernels differ
//! from the scalar ones only within their documented tolerance (see
//! [`crate::kernel::moving_sphere_triangle`]).
//!
//! Kernels: triangles [`crate::kernel::moving_sphere_triangle`] (face, edges as capsules,
//! vertices), spheres [`crate::kernel::moving_sphere_sphere`], boxes (solid)
//! [`crate::kernel::moving_sphere_aabb`], planes (two-sided) [`plane_time_of_impact`].

use super::kind::{KindBvh, Traceable};
use super::query::{BATCH_CHUNK, batch_tasks};
use super::{Backend, Scene};
use crate::bvh::traverse::{self, SweepLeafAction, SweptSphere, TraversalStack};
use crate::bvh::{Node4, Node8, WideBvh, WideNode};
use crate::hit::{HitKind, NO_ID};
use crate::kernel::{closest_point as cp, moving_sphere_aabb, moving_sphere_sphere, moving_sphere_triangle};
use crate::lanes::{F32x4, F32x8, Lanes, Mask};
use crate::prim::{Aabb, AabbLanes, Plane, Sphere, SphereLanes, Triangle};
use crate::vec3x::Vec3x;
use glam::{DVec3, Vec3};
use rayon::prelude::*;

/// One sphere sweep: a sphere of `radius` whose centre moves from `center` to `center +
/// motion`. Seven `f32`s in this order (`cx, cy, cz, r, mx, my, mz`), the record of
/// `lanecast sweep`'s input files.
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub struct SphereSweep {
    /// Start of the centre.
    pub center: Vec3,
    /// Radius (`>= 0`; 0 sweeps a point).
    pub radius: f32,
    /// Motion of the centre over `t ∈ [0, 1]`.
    pub motion: Vec3,
}

impl SphereSweep {
    /// A sweep from its parts.
    #[must_use]
    pub fn new(center: Vec3, radius: f32, motion: Vec3) -> Self {
        Self { center, radius, motion }
    }
    /// Finite numbers and `radius >= 0`; an invalid sweep touches nothing.
    #[must_use]
    pub fn is_valid(&self) -> bool {
        self.center.is_finite() && self.motion.is_finite() && self.radius.is_finite() && self.radius >= 0.0
    }
    /// The centre at time `t`.
    #[must_use]
    pub fn at(&self, t: f32) -> Vec3 {
        self.center + self.motion * t
    }
}

/// The first contact of a sphere sweep with a scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepHit {
    /// Time of impact in `[0, 1]` (fraction of the motion; 0 when the sphere touches or
    /// overlaps something at the start).
    pub toi: f32,
    /// The contact point: the primitive's closest surface point to the centre at `toi`.
    pub point: Vec3,
    /// Unit contact normal, from `point` towards the centre at `toi`. Where they coincide (a
    /// radius of 0, or a centre inside a box at the start), the surface normal there: a
    /// triangle's or a plane's turned towards the start of the centre, a box's outward face
    /// normal.
    pub normal: Vec3,
    /// Geometry id.
    pub geom: u32,
    /// Primitive id inside the geometry.
    pub prim: u32,
    /// Which kind of primitive was touched ([`HitKind::None`] for [`SweepHit::MISS`]).
    pub kind: HitKind,
    /// Instance id when the contact is with a placed copy of a geometry
    /// ([`super::SceneBuilder::add_instance`]); [`NO_ID`] otherwise.
    pub inst: u32,
}

impl SweepHit {
    /// No contact: `toi = +inf`, point `+inf`, ids `u32::MAX`, zero normal, kind `None`.
    pub const MISS: SweepHit = SweepHit {
        toi: f32::INFINITY,
        point: Vec3::INFINITY,
        normal: Vec3::ZERO,
        geom: NO_ID,
        prim: NO_ID,
        kind: HitKind::None,
        inst: NO_ID,
    };
    /// True unless this is the miss record.
    #[must_use]
    pub fn is_hit(&self) -> bool {
        self.geom != NO_ID
    }
}

/// Time of impact of a sphere sweep with the two-sided plane `normal · x = d`: 0 when the
/// sphere starts within `r` of it, else the time its distance falls to `r` while it
/// approaches, if that is at most 1. `None` for an invalid sweep or plane.
#[must_use]
pub fn plane_time_of_impact(s: &SphereSweep, plane: &Plane) -> Option<f32> {
    if !s.is_valid() || !plane.is_valid() {
        return None;
    }
    let len = plane.normal.length();
    let d0 = (plane.normal.dot(s.center) - plane.d) / len; // signed distance at the start
    if d0.abs() <= s.radius {
        return Some(0.0);
    }
    let closing = -plane.normal.dot(s.motion) / len * d0.signum(); // speed towards the plane
    if closing <= 0.0 {
        return None;
    }
    let t = (d0.abs() - s.radius) / closing;
    (t <= 1.0).then_some(t)
}

/// A kind's moving-sphere kernels: the time of impact of the sweep with one primitive.
pub(super) trait Sweepable: Traceable {
    fn toi_scalar(&self, s: &SphereSweep) -> Option<f32>;
    fn toi_lanes<L: Lanes>(c: Vec3x<L>, r: L, m: Vec3x<L>, prims: &Self::Lanes<L>) -> (L::Mask, L);
    /// Contact point and normal of the sweep `s` at its time of impact `toi` (the centre at
    /// `s.at(toi)`).
    fn contact(&self, s: &SphereSweep, toi: f32) -> (Vec3, Vec3);
}

/// The closest point of `tri` to `p`, in f64 (the vertices are exact in it): the foot of the
/// perpendicular on the face where it lies inside the triangle, else the nearest point of the
/// three edges (the first of equal distances in the order `v0v1`, `v1v2`, `v2v0`). A
/// degenerate triangle ([`Triangle::is_degenerate`]) is its edges.
fn closest_on_triangle_f64(p: DVec3, tri: &Triangle) -> DVec3 {
    let [a, b, c] = tri.v.map(Vec3::as_dvec3);
    if !tri.is_degenerate() {
        let n = (b - a).cross(c - a);
        let foot = p - n * ((p - a).dot(n) / n.dot(n));
        let inside = |u: DVec3, w: DVec3| (w - u).cross(foot - u).dot(n) >= 0.0;
        if inside(a, b) && inside(b, c) && inside(c, a) {
            return foot;
        }
    }
    let on_edge = |u: DVec3, w: DVec3| {
        let e = w - u;
        let len2 = e.dot(e);
        let t = if len2 > 0.0 { ((p - u).dot(e) / len2).clamp(0.0, 1.0) } else { 0.0 };
        u + e * t
    };
    let mut best = on_edge(a, b);
    for q in [on_edge(b, c), on_edge(c, a)] {
        if q.distance_squared(p) < best.distance_squared(p) {
            best = q;
        }
    }
    best
}

/// `p - q` normalised, or `fallback` where they coincide.
fn towards(p: Vec3, q: Vec3, fallback: Vec3) -> Vec3 {
    let n = (p - q).normalize_or_zero();
    if n == Vec3::ZERO { fallback } else { n }
}

impl Sweepable for Triangle {
    #[inline(always)]
    fn toi_scalar(&self, s: &SphereSweep) -> Option<f32> {
        moving_sphere_triangle::sweep_scalar(s.center, s.radius, s.motion, self).map(|c| c.toi)
    }
    #[inline(always)]
    fn toi_lanes<L: Lanes>(c: Vec3x<L>, r: L, m: Vec3x<L>, prims: &Self::Lanes<L>) -> (L::Mask, L) {
        let (hit, toi, _, _) = moving_sphere_triangle::sweep_lanes(c, r, m, prims);
        (hit, toi)
    }
    /// In f64 from the f32 inputs and `toi` ([`closest_on_triangle_f64`]): the centre at `toi`
    /// rounds at the size of the coordinates in f32, which is a large part of a small radius
    /// far from the world's origin, and a large triangle's closest point rounds at its size.
    fn contact(&self, s: &SphereSweep, toi: f32) -> (Vec3, Vec3) {
        let n = self.normal();
        let face = if n.dot(s.center - self.v[0]) < 0.0 { -n } else { n };
        let at = s.center.as_dvec3() + s.motion.as_dvec3() * f64::from(toi);
        let q = closest_on_triangle_f64(at, self);
        let gap = (at - q).normalize_or_zero().as_vec3();
        // A point's (r = 0) gap is the rounding of `toi`, pointing anywhere: the face normal.
        let normal = if gap == Vec3::ZERO || s.radius == 0.0 { face } else { gap };
        (q.as_vec3(), normal)
    }
}

impl Sweepable for Sphere {
    #[inline(always)]
    fn toi_scalar(&self, s: &SphereSweep) -> Option<f32> {
        moving_sphere_sphere::time_of_impact_scalar(&Sphere::new(s.center, s.radius), s.motion, self, Vec3::ZERO)
    }
    #[inline(always)]
    fn toi_lanes<L: Lanes>(c: Vec3x<L>, r: L, m: Vec3x<L>, prims: &Self::Lanes<L>) -> (L::Mask, L) {
        moving_sphere_sphere::time_of_impact_lanes(&SphereLanes::new(c, r), m, prims, Vec3x::splat(Vec3::ZERO))
    }
    /// From the centres' offset `(start − centre) + motion·toi`, not from the rounded centre
    /// at `toi`, which rounds at the size of the coordinates (a large part of a small
    /// sphere's radius far from the world's origin).
    fn contact(&self, s: &SphereSweep, toi: f32) -> (Vec3, Vec3) {
        let offset = (s.center - self.center) + s.motion * toi;
        let (q, n) = cp::sphere_scalar(offset, &Sphere::new(Vec3::ZERO, self.radius));
        (self.center + q, n)
    }
}

impl Sweepable for Aabb {
    #[inline(always)]
    fn toi_scalar(&self, s: &SphereSweep) -> Option<f32> {
        moving_sphere_aabb::time_of_impact_scalar(&Sphere::new(s.center, s.radius), s.motion, self)
    }
    #[inline(always)]
    fn toi_lanes<L: Lanes>(c: Vec3x<L>, r: L, m: Vec3x<L>, prims: &AabbLanes<L>) -> (L::Mask, L) {
        moving_sphere_aabb::time_of_impact_lanes(&SphereLanes::new(c, r), m, prims)
    }
    /// Relative to the start of the centre: `motion · toi` against the box moved by
    /// `−start`. Where the centre at `toi` lies outside the box on an axis, that face is
    /// within `radius + |motion|` of the start, so its offset is as accurate as the
    /// problem's own size allows (from the rounded centre at `toi`, a small sphere far from
    /// the world's origin got a normal off by about `ulp(coordinates) / radius`).
    fn contact(&self, s: &SphereSweep, toi: f32) -> (Vec3, Vec3) {
        let p = s.motion * toi;
        let rel = Aabb::new(self.min - s.center, self.max - s.center);
        let q = p.clamp(rel.min, rel.max);
        if q != p && s.radius > 0.0 {
            return (s.center + q, towards(p, q, Vec3::ZERO));
        }
        // Inside, or a point (r = 0) whose rounded gap points anywhere: the nearest face
        // and its outward normal.
        let (q, n) = cp::aabb_scalar(q, &rel);
        (s.center + q, n)
    }
}

const PLANE_KIND: u8 = 3;

/// The best contact so far: key the time of impact.
type Best<'a> = super::best::Best<'a, ()>;

/// Leaf policy of the scalar backend.
struct ScalarLeaf<'a, 'b, P: Sweepable> {
    kb: &'a KindBvh<P>,
    s: SphereSweep,
    best: &'b mut Best<'a>,
}

impl<P: Sweepable> SweepLeafAction for ScalarLeaf<'_, '_, P> {
    fn bound(&self) -> f32 {
        self.best.key
    }
    fn leaf(&mut self, first: u32, count: u32) {
        for k in first as usize..first as usize + count as usize {
            if let Some(t) = self.kb.prims.get(k).toi_scalar(&self.s) {
                self.best.offer(t, (), P::KIND, k as u32, &self.kb.ids);
            }
        }
    }
}

/// Leaf policy of the wide backends: the lanes kernel, `N` primitives at a time.
struct WideLeaf<'a, 'b, L: Lanes, P: Sweepable> {
    kb: &'a KindBvh<P>,
    c: Vec3x<L>,
    r: L,
    m: Vec3x<L>,
    best: &'b mut Best<'a>,
}

impl<L: Lanes, P: Sweepable> SweepLeafAction for WideLeaf<'_, '_, L, P> {
    #[inline(always)]
    fn bound(&self) -> f32 {
        self.best.key
    }
    #[inline(always)]
    fn leaf(&mut self, first: u32, count: u32) {
        lanes_range::<L, P>(
            self.kb,
            first as usize,
            first as usize + count as usize,
            self.c,
            self.r,
            self.m,
            self.best,
        );
    }
}

/// Primitives `i..end` with the lanes kernel, `N` at a time.
#[inline(always)]
fn lanes_range<'a, L: Lanes, P: Sweepable>(
    kb: &'a KindBvh<P>,
    first: usize,
    end: usize,
    c: Vec3x<L>,
    r: L,
    m: Vec3x<L>,
    best: &mut Best<'a>,
) {
    for (i, lanes) in kb.prims.blocks::<L>(first, end - first) {
        let (hit, t) = P::toi_lanes(c, r, m, &kb.prims.lanes::<L>(i));
        let mut bits = hit.bitmask() & t.le(L::splat(best.key)).bitmask() & lanes;
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            best.offer(t.lane(k), (), P::KIND, (i + k) as u32, &kb.ids);
        }
    }
}

fn kind_scalar<'a, P: Sweepable>(
    kb: &'a KindBvh<P>,
    s: &SphereSweep,
    swept: &SweptSphere,
    best: &mut Best<'a>,
    stack: &mut TraversalStack,
) {
    let mut action = ScalarLeaf { kb, s: *s, best };
    traverse::sweep_binary(&kb.bvh2, swept, &mut action, stack);
}

fn kind_wide<'a, L: Lanes, N: WideNode, P: Sweepable>(
    kb: &'a KindBvh<P>,
    tree: &WideBvh<N>,
    s: &SphereSweep,
    swept: &SweptSphere,
    best: &mut Best<'a>,
    stack: &mut TraversalStack,
) {
    let (c, r, m) = (Vec3x::splat(s.center), L::splat(s.radius), Vec3x::splat(s.motion));
    let mut action = WideLeaf::<L, P> { kb, c, r, m, best };
    traverse::sweep_wide::<L, N>(tree, swept, &mut action, stack);
}

impl Scene {
    /// The first contact of the sphere (`center`, `radius`) moving by `motion` (over `t ∈
    /// [0, 1]`) with the scene, default backend; `None` when it touches nothing, or for an
    /// invalid sweep (a non-finite number, a negative radius). Equal times of impact go to the
    /// smaller `(geom, prim)`.
    ///
    /// ```
    /// use glam::Vec3;
    /// use lanecast::prim::{Aabb, Plane};
    /// use lanecast::{HitKind, SceneBuilder};
    ///
    /// let mut b = SceneBuilder::new();
    /// let floor = b.add_plane(Plane::new(Vec3::Y, 0.0)).unwrap();
    /// let wall = b.add_box(Aabb::new(Vec3::new(4.0, 0.0, -5.0), Vec3::new(4.2, 3.0, 5.0))).unwrap();
    /// let scene = b.build().unwrap();
    ///
    /// // A ball of radius 0.5 at height 1 rolling 10 units along +x: it hits the wall at x = 3.5,
    /// // 35 % of the way, not the floor.
    /// let hit = scene.sweep_sphere(Vec3::new(0.0, 1.0, 0.0), 0.5, Vec3::new(10.0, 0.0, 0.0)).unwrap();
    /// assert_eq!((hit.geom, hit.kind, hit.normal), (wall, HitKind::Box, -Vec3::X));
    /// assert!((hit.toi - 0.35).abs() < 1e-6 && (hit.point - Vec3::new(4.0, 1.0, 0.0)).length() < 1e-5);
    /// // Dropped: it lands on the floor after 0.5 of the 1-unit fall.
    /// let land = scene.sweep_sphere(Vec3::new(0.0, 1.0, 0.0), 0.5, -Vec3::Y).unwrap();
    /// assert_eq!((land.geom, land.toi, land.normal), (floor, 0.5, Vec3::Y));
    /// ```
    #[must_use]
    pub fn sweep_sphere(&self, center: Vec3, radius: f32, motion: Vec3) -> Option<SweepHit> {
        self.sweep_with(&SphereSweep::new(center, radius, motion), self.backend())
    }

    /// [`Scene::sweep_sphere`] of a [`SphereSweep`] with a given backend: `Scalar` walks the
    /// binary trees with the scalar kernels, `X4` / `X8` the 4- / 8-wide trees with the lanes
    /// kernels.
    #[must_use]
    pub fn sweep_with(&self, s: &SphereSweep, backend: Backend) -> Option<SweepHit> {
        let swept = SweptSphere::new(s.center, s.radius, s.motion, &self.bounds())?;
        let mut best = Best::with_filter(1.0, (), self.mask_filter(crate::ray::ALL_BITS));
        self.sweep_planes(s, &mut best);
        let mut stack = TraversalStack::new();
        match backend.resolve() {
            Backend::Scalar => {
                kind_scalar(&self.tris, s, &swept, &mut best, &mut stack);
                kind_scalar(&self.spheres, s, &swept, &mut best, &mut stack);
                kind_scalar(&self.boxes, s, &swept, &mut best, &mut stack);
            }
            Backend::X4 => {
                kind_wide::<F32x4, Node4, _>(&self.tris, self.tris.bvh4(), s, &swept, &mut best, &mut stack);
                kind_wide::<F32x4, Node4, _>(&self.spheres, self.spheres.bvh4(), s, &swept, &mut best, &mut stack);
                kind_wide::<F32x4, Node4, _>(&self.boxes, self.boxes.bvh4(), s, &swept, &mut best, &mut stack);
            }
            _ => {
                kind_wide::<F32x8, Node8, _>(&self.tris, self.tris.bvh8(), s, &swept, &mut best, &mut stack);
                kind_wide::<F32x8, Node8, _>(&self.spheres, self.spheres.bvh8(), s, &swept, &mut best, &mut stack);
                kind_wide::<F32x8, Node8, _>(&self.boxes, self.boxes.bvh8(), s, &swept, &mut best, &mut stack);
            }
        }
        let h = self.finish_sweep(s, &best);
        if self.inst.is_empty() { h } else { self.inst.sweep(s, h) }
    }

    /// The reference answer: every primitive with the backend's kernels (scalar for `Scalar`,
    /// lanes `N` at a time for `X4` / `X8`), no tree. O(primitives): for tests. Each
    /// backend's [`Scene::sweep_with`] equals this exactly.
    #[must_use]
    pub fn sweep_sphere_brute_force_with(&self, s: &SphereSweep, backend: Backend) -> Option<SweepHit> {
        if !s.is_valid() {
            return None;
        }
        let mut best = Best::with_filter(1.0, (), self.mask_filter(crate::ray::ALL_BITS));
        self.sweep_planes(s, &mut best);
        fn all_scalar<'a, P: Sweepable>(kb: &'a KindBvh<P>, s: &SphereSweep, best: &mut Best<'a>) {
            for k in 0..kb.len() {
                if let Some(t) = kb.prims.get(k).toi_scalar(s) {
                    best.offer(t, (), P::KIND, k as u32, &kb.ids);
                }
            }
        }
        fn all_lanes<'a, L: Lanes>(scene: &'a Scene, s: &SphereSweep, best: &mut Best<'a>) {
            let (c, r, m) = (Vec3x::splat(s.center), L::splat(s.radius), Vec3x::splat(s.motion));
            lanes_range::<L, _>(&scene.tris, 0, scene.tris.len(), c, r, m, best);
            lanes_range::<L, _>(&scene.spheres, 0, scene.spheres.len(), c, r, m, best);
            lanes_range::<L, _>(&scene.boxes, 0, scene.boxes.len(), c, r, m, best);
        }
        match backend.resolve() {
            Backend::Scalar => {
                all_scalar(&self.tris, s, &mut best);
                all_scalar(&self.spheres, s, &mut best);
                all_scalar(&self.boxes, s, &mut best);
            }
            Backend::X4 => all_lanes::<F32x4>(self, s, &mut best),
            _ => all_lanes::<F32x8>(self, s, &mut best),
        }
        // Instances: the same walk as `sweep_with` (their primitives carried into the world
        // one by one).
        let h = self.finish_sweep(s, &best);
        if self.inst.is_empty() { h } else { self.inst.sweep(s, h) }
    }

    /// The sweeps of `sweeps` into `out` (the same length), on all rayon threads, in input
    /// order, default backend; a sweep without contact gets [`SweepHit::MISS`].
    ///
    /// # Panics
    /// If `out.len() != sweeps.len()`.
    pub fn sweep_batch(&self, sweeps: &[SphereSweep], out: &mut [SweepHit]) {
        self.sweep_batch_with(sweeps, out, self.backend());
    }

    /// [`Scene::sweep_batch`] with a given backend.
    ///
    /// # Panics
    /// If `out.len() != sweeps.len()`.
    pub fn sweep_batch_with(&self, sweeps: &[SphereSweep], out: &mut [SweepHit], backend: Backend) {
        assert_eq!(out.len(), sweeps.len(), "sweep_batch: output length must equal the sweep count");
        batch_tasks(out.par_chunks_mut(BATCH_CHUNK).zip(sweeps.par_chunks(BATCH_CHUNK))).for_each(|(o, ss)| {
            for (o, s) in o.iter_mut().zip(ss) {
                *o = self.sweep_with(s, backend).unwrap_or(SweepHit::MISS);
            }
        });
    }

    fn sweep_planes<'a>(&'a self, s: &SphereSweep, best: &mut Best<'a>) {
        for i in 0..self.planes.len() {
            if let Some(t) = plane_time_of_impact(s, &self.planes.get(i)) {
                best.offer(t, (), PLANE_KIND, i as u32, &self.plane_ids);
            }
        }
    }

    /// The record of the best contact: point, normal and ids.
    fn finish_sweep(&self, s: &SphereSweep, b: &Best) -> Option<SweepHit> {
        if !b.found() {
            return None;
        }
        let i = b.index as usize;
        let ((point, normal), kind) = match b.kind {
            0 => (self.tris.prims.get(i).contact(s, b.key), HitKind::Triangle),
            1 => (self.spheres.prims.get(i).contact(s, b.key), HitKind::Sphere),
            2 => (self.boxes.prims.get(i).contact(s, b.key), HitKind::Box),
            _ => {
                // The normal towards the side the centre starts on: a sweep meets a plane
                // from that side (the gap at `toi` is a multiple of the normal whose sign,
                // for a point or a start on the plane, is only rounding).
                let plane = self.planes.get(i);
                let q = cp::plane_scalar(s.at(b.key), &plane);
                let n = plane.normal.normalize_or_zero();
                let face = if n.dot(s.center) - plane.d / plane.normal.length() < 0.0 { -n } else { n };
                ((q, face), HitKind::Plane)
            }
        };
        let [geom, prim] = b.ids();
        Some(SweepHit { toi: b.key, point, normal, geom, prim, kind, inst: NO_ID })
    }
}
