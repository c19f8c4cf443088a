//! Moving sphere against a static box (Ericson 5.5.7): the time of first contact in
//! `[0, 1]` while the sphere's centre moves from `c` to `c + v`.
//!
//! The centre's path is tested against the box grown by `r` on every side. Where it enters
//! that grown box, the Voronoi region of the original box containing the entry point tells
//! what the rounded box really looks like there: a face region (at most one axis outside)
//! means the entry is exact; an edge region (two axes outside) means the true contact is
//! with the capsule around that edge; a vertex region (three axes outside) means the first
//! contact is with one of the three edge capsules meeting at that corner. A zero velocity is
//! allowed: then the answer is `0` (already touching) or no contact.

use crate::kernel::ray_aabb::{slab_lanes, slab_scalar};
use crate::kernel::segment_capsule::{self, capsule_raw};
use crate::lanes::{Lanes, Mask};
use crate::prim::{Aabb, AabbLanes, Capsule, Sphere, SphereLanes};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// First time in `[0, 1]` at which the moving sphere touches the box.
pub fn time_of_impact_scalar(s: &Sphere, v: Vec3, b: &Aabb) -> Option<f32> {
    if !s.is_valid() || !v.is_finite() || !b.is_valid() {
        return None;
    }
    let r = s.radius;
    let grown = Aabb::new(b.min - r, b.max + r);
    let (t, _) = slab_scalar(s.center, v, 0.0, 1.0, &grown)?;
    let p = s.center + v * t;
    let (mut below, mut above) = (0u32, 0u32);
    for i in 0..3 {
        if p[i] < b.min[i] {
            below |= 1 << i;
        }
        if p[i] > b.max[i] {
            above |= 1 << i;
        }
    }
    let m = below | above;
    // The motion goes to the capsule as it is (as in the lanes twin): as the difference of
    // the end points `c + v` and `c` it rounds at the size of the coordinates.
    let capsule =
        |a: u32, c: u32| segment_capsule::intersect_dir_scalar(s.center, v, &Capsule::new(b.corner(a), b.corner(c), r));
    if m == 7 {
        // Vertex region: the three edges meeting at the corner nearest the entry point.
        return [1, 2, 4].into_iter().filter_map(|bit| capsule(above, above ^ bit)).min_by(f32::total_cmp);
    }
    if m & m.wrapping_sub(1) == 0 {
        return Some(t); // face region (or inside): the grown box is exact here
    }
    // Edge region: the edge along the one axis that is not outside.
    capsule(below ^ 7, above)
}

/// Lanes twin of [`time_of_impact_scalar`]: `(hit, t)`, `t = +inf` where there is no
/// contact. All three edge capsules of the candidate corner are evaluated in every lane and
/// the ones the lane's region allows are kept.
#[inline(always)]
pub fn time_of_impact_lanes<L: Lanes>(s: &SphereLanes<L>, v: Vec3x<L>, b: &AabbLanes<L>) -> (L::Mask, L) {
    let zero = L::splat(0.0);
    let inf = L::splat(f32::INFINITY);
    let r = s.radius;
    let gmin = b.min - Vec3x::new(r, r, r);
    let gmax = b.max + Vec3x::new(r, r, r);
    let (t0, t1) = slab_lanes(s.center, v.recip(), zero, L::splat(1.0), gmin, gmax);
    // NaN planes would be ignored by the slab fold, so a never-hit sphere is masked here.
    let box_hit = r.is_not_nan() & v.is_finite() & t0.le(t1);
    let p = s.center.mul_add(v, t0);
    let above = [p.x.gt(b.max.x), p.y.gt(b.max.y), p.z.gt(b.max.z)];
    let out = [above[0] | p.x.lt(b.min.x), above[1] | p.y.lt(b.min.y), above[2] | p.z.lt(b.min.z)];
    let vertex = out[0] & out[1] & out[2];
    let face = !((out[0] & out[1]) | (out[1] & out[2]) | (out[0] & out[2]));
    // Corner nearest the entry point (max where above, else min) and its three edges.
    let corner = Vec3x::new(
        L::select(above[0], b.max.x, b.min.x),
        L::select(above[1], b.max.y, b.min.y),
        L::select(above[2], b.max.z, b.min.z),
    );
    let flipped = [
        Vec3x::new(L::select(above[0], b.min.x, b.max.x), corner.y, corner.z),
        Vec3x::new(corner.x, L::select(above[1], b.min.y, b.max.y), corner.z),
        Vec3x::new(corner.x, corner.y, L::select(above[2], b.min.z, b.max.z)),
    ];
    let mut t_edge = inf;
    for axis in 0..3 {
        // In a vertex region every edge counts; in an edge region only the free axis. Lanes
        // that missed the grown box or entered through a face need no capsule at all, so a
        // block of such lanes skips the capsule tests.
        let relevant = box_hit & !face & (vertex | !out[axis]);
        if relevant.none() {
            continue;
        }
        let (h, t) = capsule_raw(s.center, v, corner, flipped[axis], r);
        t_edge = L::select(relevant & h, t.min(t_edge), t_edge);
    }
    let t = L::select(face, t0, t_edge);
    let hit = box_hit & t.le(L::splat(1.0));
    (hit, L::select(hit, t, inf))
}
