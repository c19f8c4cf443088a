//! Point queries on a scene: the closest point on any surface to a query point, and the
//! unsigned distance, for one point or a batch, in every backend.
//!
//! The policy mirrors the ray queries (`query.rs`): per primitive kind, a nearest-first
//! traversal ([`crate::bvh::traverse::point_wide`] / [`point_binary`]) whose leaves run the
//! kind's closest-point kernel ([`crate::kernel::closest_point`]; scalar for
//! [`Backend::Scalar`], lanes for `X4` / `X8`) and offer each primitive's squared distance to
//! the best so far; planes are tested directly. The best is the smallest squared distance,
//! ties to the smaller `(geom, prim)`; the box pruning is conservative and the kernels'
//! twins are bitwise equal, so every backend returns the same answer as a brute-force scan
//! with the scalar kernels.
//!
//! What counts: the surfaces of spheres and boxes (a point inside one is at the distance of
//! the nearest surface point, not 0), triangles, and infinite planes. Degenerate triangles
//! are not in a scene (see [`super::SceneBuilder::add_triangles`]) and are not considered.

use super::kind::{KindBvh, Traceable};
use super::query::{BATCH_CHUNK, batch_tasks};
use super::{Backend, Scene};
use crate::bvh::traverse::{self, PointLeafAction, TraversalStack};
use crate::bvh::{Node4, Node8, WideBvh, WideNode};
use crate::hit::{HitKind, NO_ID};
use crate::kernel::closest_point as cp;
use crate::lanes::{F32x4, F32x8, Lanes, Mask};
use crate::prim::{Aabb, Sphere, Triangle};
use crate::vec3x::Vec3x;
use glam::Vec3;
use rayon::prelude::*;

/// The closest surface point of a scene to a query point.
///
/// `distance` is `|point - p|` (the square root of the squared distance the kernels compute);
/// `u`, `v` are a triangle's barycentric weights of its second and third vertex (0 for other
/// shapes); `normal` is the unit surface normal at `point`: a triangle's geometric normal
/// (`normalize(cross(v1 - v0, v2 - v0))`, not turned towards `p`; in f64 for a sliver whose
/// f32 cross product vanishes, and zero only for exactly collinear vertices), a sphere's radial
/// direction towards `p` (`+x` for `p` at the centre), a box's outward face normal (see
/// [`crate::kernel::closest_point::aabb_scalar`]) or a plane's normalised normal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosestPoint {
    /// The closest point on the surface.
    pub point: Vec3,
    /// Distance from the query point to `point`.
    pub distance: f32,
    /// Geometry id.
    pub geom: u32,
    /// Primitive id inside the geometry.
    pub prim: u32,
    /// Barycentric weight of a triangle's second vertex (0 for other shapes).
    pub u: f32,
    /// Barycentric weight of a triangle's third vertex (0 for other shapes).
    pub v: f32,
    /// Unit surface normal at `point`.
    pub normal: Vec3,
    /// Which kind of primitive `point` is on ([`HitKind::None`] for [`ClosestPoint::MISS`]).
    pub kind: HitKind,
    /// Instance id when `point` is on a placed copy of a geometry
    /// ([`super::SceneBuilder::add_instance`]); [`NO_ID`] otherwise.
    pub inst: u32,
}

impl ClosestPoint {
    /// Nothing found (empty scene, nothing within the search radius, invalid input):
    /// `distance = +inf`, `point = +inf`, ids `u32::MAX`, zeros elsewhere, kind `None`.
    pub const MISS: ClosestPoint = ClosestPoint {
        point: Vec3::INFINITY,
        distance: f32::INFINITY,
        geom: NO_ID,
        prim: NO_ID,
        u: 0.0,
        v: 0.0,
        normal: Vec3::ZERO,
        kind: HitKind::None,
        inst: NO_ID,
    };

    /// True unless this is the miss record.
    pub fn is_found(&self) -> bool {
        self.geom != NO_ID
    }
}

/// A kind's closest-point kernels: `(q, u, v)` (barycentrics for triangles, 0 otherwise).
trait Nearest: Traceable {
    fn nearest_scalar(&self, p: Vec3) -> (Vec3, f32, f32);
    fn nearest_lanes<L: Lanes>(p: Vec3x<L>, prims: &Self::Lanes<L>) -> (Vec3x<L>, L, L);
}

impl Nearest for Triangle {
    #[inline(always)]
    fn nearest_scalar(&self, p: Vec3) -> (Vec3, f32, f32) {
        cp::triangle_scalar(p, self)
    }
    #[inline(always)]
    fn nearest_lanes<L: Lanes>(p: Vec3x<L>, prims: &Self::Lanes<L>) -> (Vec3x<L>, L, L) {
        cp::triangle_lanes(p, prims)
    }
}

impl Nearest for Sphere {
    #[inline(always)]
    fn nearest_scalar(&self, p: Vec3) -> (Vec3, f32, f32) {
        (cp::sphere_scalar(p, self).0, 0.0, 0.0)
    }
    #[inline(always)]
    fn nearest_lanes<L: Lanes>(p: Vec3x<L>, prims: &Self::Lanes<L>) -> (Vec3x<L>, L, L) {
        (cp::sphere_lanes(p, prims).0, L::splat(0.0), L::splat(0.0))
    }
}

impl Nearest for Aabb {
    #[inline(always)]
    fn nearest_scalar(&self, p: Vec3) -> (Vec3, f32, f32) {
        (cp::aabb_scalar(p, self).0, 0.0, 0.0)
    }
    #[inline(always)]
    fn nearest_lanes<L: Lanes>(p: Vec3x<L>, prims: &Self::Lanes<L>) -> (Vec3x<L>, L, L) {
        (cp::aabb_lanes(p, prims).0, L::splat(0.0), L::splat(0.0))
    }
}

const PLANE_KIND: u8 = 3;

/// The best candidate so far: key the squared distance, with the point and barycentrics.
type Best<'a> = super::best::Best<'a, (Vec3, f32, f32)>;

/// Leaf policy of the scalar backend: the scalar kernel, one primitive at a time.
struct ScalarLeaf<'a, 'b, P: Nearest> {
    kb: &'a KindBvh<P>,
    p: Vec3,
    best: &'b mut Best<'a>,
}

impl<P: Nearest> PointLeafAction for ScalarLeaf<'_, '_, P> {
    fn bound(&self) -> f32 {
        self.best.key
    }
    fn leaf(&mut self, first: u32, count: u32) {
        for k in first as usize..first as usize + count as usize {
            let (q, u, v) = self.kb.prims.get(k).nearest_scalar(self.p);
            let d2 = cp::distance_squared_scalar(self.p, q);
            self.best.offer(d2, (q, u, v), P::KIND, k as u32, &self.kb.ids);
        }
    }
}

/// Leaf policy of the wide backends: the lanes kernel, `N` primitives at a time.
struct WideLeaf<'a, 'b, L: Lanes, P: Nearest> {
    kb: &'a KindBvh<P>,
    p: Vec3x<L>,
    best: &'b mut Best<'a>,
}

impl<L: Lanes, P: Nearest> PointLeafAction for WideLeaf<'_, '_, L, P> {
    #[inline(always)]
    fn bound(&self) -> f32 {
        self.best.key
    }
    #[inline(always)]
    fn leaf(&mut self, first: u32, count: u32) {
        for (i, lanes) in self.kb.prims.blocks::<L>(first as usize, count as usize) {
            let (q, u, v) = P::nearest_lanes(self.p, &self.kb.prims.lanes::<L>(i));
            let d2 = cp::distance_squared_lanes(self.p, q);
            let mut bits = d2.le(L::splat(self.best.key)).bitmask() & lanes;
            while bits != 0 {
                let k = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.best.offer(d2.lane(k), (q.lane(k), u.lane(k), v.lane(k)), P::KIND, (i + k) as u32, &self.kb.ids);
            }
        }
    }
}

fn kind_scalar<'a, P: Nearest>(kb: &'a KindBvh<P>, p: Vec3, best: &mut Best<'a>, stack: &mut TraversalStack) {
    let mut action = ScalarLeaf { kb, p, best };
    traverse::point_binary(&kb.bvh2, p, &mut action, stack);
}

fn kind_wide<'a, L: Lanes, N: WideNode, P: Nearest>(
    kb: &'a KindBvh<P>,
    tree: &WideBvh<N>,
    p: Vec3,
    best: &mut Best<'a>,
    stack: &mut TraversalStack,
) {
    let mut action = WideLeaf::<L, P> { kb, p: Vec3x::splat(p), best };
    traverse::point_wide::<L, N>(tree, p, &mut action, stack);
}

/// The largest squared distance `x` with `sqrt(x) <= max_distance` (so "`d2 <= x`" is exactly
/// "`distance <= max_distance`"), `f32::MAX` for an infinite radius; `None` for a NaN or
/// negative radius.
fn squared_limit(max_distance: f32) -> Option<f32> {
    if max_distance.is_nan() || max_distance < 0.0 {
        return None;
    }
    if max_distance == f32::INFINITY {
        return Some(f32::MAX);
    }
    let mut x = (max_distance * max_distance).min(f32::MAX);
    while x > 0.0 && x.sqrt() > max_distance {
        x = x.next_down();
    }
    while x < f32::MAX && x.next_up().sqrt() <= max_distance {
        x = x.next_up();
    }
    Some(x)
}

impl Scene {
    /// The closest surface point to `p` with the scene's default backend; `None` for an
    /// empty scene (no primitives or planes) or a non-finite `p`. Ties (equal squared
    /// distances) go to the smaller `(geom, prim)`, as for rays. Also `None` when the nearest
    /// squared distance overflows f32 (`p` more than about 1.8·10¹⁹ from everything).
    ///
    /// ```
    /// use glam::Vec3;
    /// use lanecast::prim::{Aabb, Sphere};
    /// use lanecast::{HitKind, SceneBuilder};
    ///
    /// let mut b = SceneBuilder::new();
    /// let ball = b.add_sphere(Sphere::new(Vec3::ZERO, 1.0)).unwrap();
    /// b.add_box(Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(7.0, 1.0, 1.0))).unwrap();
    /// let scene = b.build().unwrap();
    ///
    /// let c = scene.closest_point(Vec3::new(0.0, 3.0, 0.0)).unwrap();
    /// assert_eq!((c.geom, c.kind, c.point, c.distance), (ball, HitKind::Sphere, Vec3::Y, 2.0));
    /// assert_eq!(c.normal, Vec3::Y);
    /// // Inside the box: the nearest face.
    /// let inside = scene.closest_point(Vec3::new(6.5, 0.0, 0.0)).unwrap();
    /// assert_eq!((inside.point, inside.distance, inside.normal), (Vec3::new(7.0, 0.0, 0.0), 0.5, Vec3::X));
    /// assert_eq!(scene.distance(Vec3::new(3.0, 0.0, 0.0)), 2.0);
    /// assert!(scene.closest_point_within(Vec3::new(3.0, 0.0, 0.0), 1.5).is_none());
    /// ```
    pub fn closest_point(&self, p: Vec3) -> Option<ClosestPoint> {
        self.closest_point_with(p, self.backend())
    }

    /// [`Scene::closest_point`] with a given backend: `Scalar` walks the binary trees with
    /// the scalar kernels, `X4` / `X8` the 4- / 8-wide trees with the lanes kernels. Every
    /// backend returns the same answer.
    pub fn closest_point_with(&self, p: Vec3, backend: Backend) -> Option<ClosestPoint> {
        self.closest_point_within_with(p, f32::INFINITY, backend)
    }

    /// The closest surface point to `p` at a distance of at most `max_distance` (inclusive:
    /// `distance <= max_distance` exactly, for the distance as reported), default backend.
    /// `None` when there is none, for a non-finite `p`, or a NaN or negative `max_distance`
    /// (`+inf` searches everywhere). Subtrees farther than the radius are never visited, so a
    /// small radius is also faster.
    pub fn closest_point_within(&self, p: Vec3, max_distance: f32) -> Option<ClosestPoint> {
        self.closest_point_within_with(p, max_distance, self.backend())
    }

    /// [`Scene::closest_point_within`] with a given backend.
    pub fn closest_point_within_with(&self, p: Vec3, max_distance: f32, backend: Backend) -> Option<ClosestPoint> {
        let limit = squared_limit(max_distance)?;
        if !p.is_finite() {
            return None;
        }
        let mut best = Best::with_filter(limit, (cp::MISS_POINT, 0.0, 0.0), self.mask_filter(crate::ray::ALL_BITS));
        // Planes first: they are few and tighten the bound before the trees.
        for i in 0..self.planes.len() {
            let q = cp::plane_scalar(p, &self.planes.get(i));
            best.offer(cp::distance_squared_scalar(p, q), (q, 0.0, 0.0), PLANE_KIND, i as u32, &self.plane_ids);
        }
        let mut stack = TraversalStack::new();
        match backend.resolve() {
            Backend::Scalar => {
                kind_scalar(&self.tris, p, &mut best, &mut stack);
                kind_scalar(&self.spheres, p, &mut best, &mut stack);
                kind_scalar(&self.boxes, p, &mut best, &mut stack);
            }
            Backend::X4 => {
                kind_wide::<F32x4, Node4, _>(&self.tris, self.tris.bvh4(), p, &mut best, &mut stack);
                kind_wide::<F32x4, Node4, _>(&self.spheres, self.spheres.bvh4(), p, &mut best, &mut stack);
                kind_wide::<F32x4, Node4, _>(&self.boxes, self.boxes.bvh4(), p, &mut best, &mut stack);
            }
            _ => {
                kind_wide::<F32x8, Node8, _>(&self.tris, self.tris.bvh8(), p, &mut best, &mut stack);
                kind_wide::<F32x8, Node8, _>(&self.spheres, self.spheres.bvh8(), p, &mut best, &mut stack);
                kind_wide::<F32x8, Node8, _>(&self.boxes, self.boxes.bvh8(), p, &mut best, &mut stack);
            }
        }
        let c = self.finish_point(p, &best);
        if self.inst.is_empty() {
            c
        } else {
            let found = c.map(|c| (best.key, c));
            self.inst.closest_point(p, limit, found)
        }
    }

    /// The record of the best candidate: ids, distance and normal.
    fn finish_point(&self, p: Vec3, b: &Best) -> Option<ClosestPoint> {
        if !b.found() {
            return None;
        }
        let (i, (point, u, v)) = (b.index as usize, b.at);
        let (normal, kind) = match b.kind {
            0 => (self.tris.prims.get(i).normal(), HitKind::Triangle),
            1 => (cp::sphere_scalar(p, &self.spheres.prims.get(i)).1, HitKind::Sphere),
            2 => (cp::aabb_scalar(p, &self.boxes.prims.get(i)).1, HitKind::Box),
            _ => (self.planes.get(i).normal.normalize_or_zero(), HitKind::Plane),
        };
        let [geom, prim] = b.ids();
        Some(ClosestPoint { point, distance: b.key.sqrt(), geom, prim, u, v, normal, kind, inst: NO_ID })
    }

    /// Distance from `p` to the nearest surface (default backend); `+inf` for an empty
    /// scene or a non-finite `p`. Unsigned: inside a sphere or box it is the distance to
    /// its surface.
    pub fn distance(&self, p: Vec3) -> f32 {
        self.closest_point(p).map_or(f32::INFINITY, |c| c.distance)
    }

    /// [`Scene::distance`] with a sign: negative where [`Scene::contains`] says the point is
    /// inside (a sphere, a box, or a closed mesh by crossing parity), positive elsewhere;
    /// `+inf` as `distance`. The sign comes from the crossing parity of the watertight test,
    /// not from pseudonormals: it is exact for closed, consistently oriented meshes, also
    /// for points very near the surface, and follows the parity rule of `contains` for open
    /// ones. A point on the surface has distance `+0`.
    pub fn signed_distance(&self, p: Vec3) -> f32 {
        self.signed_distance_with(p, self.backend)
    }

    /// [`Scene::signed_distance`] with a given backend.
    pub fn signed_distance_with(&self, p: Vec3, backend: Backend) -> f32 {
        let d = self.closest_point_with(p, backend).map_or(f32::INFINITY, |c| c.distance);
        self.signed(p, d, backend)
    }

    /// `d` negated where `p` is inside (the sign rule of [`Scene::signed_distance`]).
    fn signed(&self, p: Vec3, d: f32, backend: Backend) -> f32 {
        if d > 0.0 && d.is_finite() && self.contains_with(p, backend) { -d } else { d }
    }

    /// [`Scene::signed_distance`] of every point of `points` into `out` (the same length), on
    /// all rayon threads, in input order.
    ///
    /// # Panics
    /// If `out.len() != points.len()`.
    pub fn signed_distance_batch(&self, points: &[Vec3], out: &mut [f32]) {
        assert_eq!(out.len(), points.len(), "signed_distance_batch: output length must equal the point count");
        let backend = self.backend();
        batch_tasks(out.par_chunks_mut(BATCH_CHUNK).zip(points.par_chunks(BATCH_CHUNK))).for_each(|(o, ps)| {
            for (o, &p) in o.iter_mut().zip(ps) {
                *o = self.signed_distance_with(p, backend);
            }
        });
    }

    /// The closest point of every point of `points` into `out` (the same length), on all
    /// rayon threads, in input order, with the same results for any thread count; a point
    /// without answer gets [`ClosestPoint::MISS`].
    ///
    /// # Panics
    /// If `out.len() != points.len()`.
    pub fn closest_point_batch(&self, points: &[Vec3], out: &mut [ClosestPoint]) {
        self.closest_point_batch_with(points, out, self.backend())
    }

    /// [`Scene::closest_point_batch`] with a given backend.
    ///
    /// # Panics
    /// If `out.len() != points.len()`.
    pub fn closest_point_batch_with(&self, points: &[Vec3], out: &mut [ClosestPoint], backend: Backend) {
        self.point_batch(points, out, backend, false);
    }

    /// [`Scene::closest_point_batch_with`] with each `distance` signed as
    /// [`Scene::signed_distance`] signs it (negative inside; what `lanecast closest --signed`
    /// writes).
    ///
    /// # Panics
    /// If `out.len() != points.len()`.
    pub fn signed_closest_point_batch_with(&self, points: &[Vec3], out: &mut [ClosestPoint], backend: Backend) {
        self.point_batch(points, out, backend, true);
    }

    fn point_batch(&self, points: &[Vec3], out: &mut [ClosestPoint], backend: Backend, signed: bool) {
        assert_eq!(out.len(), points.len(), "closest_point_batch: output length must equal the point count");
        batch_tasks(out.par_chunks_mut(BATCH_CHUNK).zip(points.par_chunks(BATCH_CHUNK))).for_each(|(o, ps)| {
            for (o, &p) in o.iter_mut().zip(ps) {
                *o = self.closest_point_with(p, backend).unwrap_or(ClosestPoint::MISS);
                if signed {
                    o.distance = self.signed(p, o.distance, backend);
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::squared_limit;

    #[test]
    fn squared_limit_is_exactly_the_radius() {
        for md in [0.0f32, 1e-30, 0.1, 1.0, 3.0, 7.3, 1e10, 1.9e19, 3e38] {
            let x = squared_limit(md).unwrap();
            assert!(x.sqrt() <= md, "{md}");
            assert!(x == f32::MAX || x.next_up().sqrt() > md, "{md}");
        }
        assert_eq!(squared_limit(f32::INFINITY), Some(f32::MAX));
        assert_eq!(squared_limit(-1.0), None);
        assert_eq!(squared_limit(f32::NAN), None);
    }
}
