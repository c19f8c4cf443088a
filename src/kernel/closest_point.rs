//! Closest point on a shape to a query point: triangle (C. Ericson, *Real-Time Collision
//! Detection*, §5.1.5, the Voronoi-region version with its early outs), sphere surface, box
//! surface and infinite plane, each as a scalar reference and a lanes twin.
//!
//! # Results
//!
//! Every kernel returns the closest point `q` **on the shape's surface** (for a box or sphere
//! also when `p` is inside). The squared distance is `(q - p).length_squared()`
//! ([`distance_squared_scalar`] / [`distance_squared_lanes`]: `x² + y² + z²`, unfused, left
//! to right, so both twins round it the same way).
//!
//! * Triangle: `(q, u, v)` with `q = (1-u-v) v0 + u v1 + v v2` (the weights of `v1` and
//!   `v2`, as in [`crate::hit::Hit`]). Ericson's region tests pick the vertex, edge or face
//!   region; the face point uses his formulas `u = vb / (va + vb + vc)`,
//!   `v = vc / (va + vb + vc)`.
//! * Sphere: `(q, n)`, `q = c + (p - c) · r / |p - c|`, `n` the unit direction from the
//!   centre to `p`. For `p` at the centre (`|p - c|²` is 0 in f32) the direction is `+x`
//!   ([`SPHERE_CENTRE_DIRECTION`]): `q = c + r x̂`.
//! * Box: `(q, n)`. Outside, `q` is `p` clamped to the box and `n` the outward normal of
//!   the axis on which `p` is farthest out (ties: x, then y, then z). Inside or on the
//!   surface, the nearest face: the smallest of `p - min` and `max - p` per axis, in the
//!   order `-x, +x, -y, +y, -z, +z` (the first smallest wins); `q` is `p` moved onto that
//!   face and `n` its outward normal.
//! * Plane (`n · x = d`, normal of any length): `q = p - n (n·p - d) / (n·n)`.
//!
//! # Degenerate triangles and robustness
//!
//! A degenerate triangle (a point, collinear vertices, or an edge-angle sine below
//! [`Triangle::SLIVER`]: the predicate of [`Triangle::is_degenerate`], evaluated on the scaled
//! edges below, so a tiny or huge triangle is not degenerate for its size), or one for which
//! Ericson's formulas give a non-finite value, is treated as its three edges: `q` is the
//! closest point of the three segments (the first of equal distances in the order `v0v1`,
//! `v0v2`, `v1v2`), with its barycentrics. The result is finite for finite input.
//!
//! The triangle point is finally clamped to the triangle's bounding box, and the sphere point
//! to the sphere's (`c ± r`). Clamping to a convex set that holds the exact answer never moves
//! a result farther from it, and it makes the BVH point traversal exact: a box's squared
//! distance, computed with the same operations, is never larger than that of a primitive
//! inside it (rounding is monotone), so pruning never drops a primitive the brute force
//! would find ([`crate::bvh::traverse::point_wide`]).
//!
//! Accuracy: the regions' signed areas `va, vb, vc` (Ericson's `d3 d6 − d5 d4` and so on) are
//! taken as `n · (x × y)` with `n = (v1 − v0) × (v2 − v0)` and `x, y` two of `p − v0`,
//! `p − v1`, `p − v2` (the same numbers by the Binet–Cauchy identity, which Ericson also
//! gives), not as differences of products of dot products: those cancel on thin triangles
//! and lost accuracy as `1 / sin²` of the smallest edge angle (a distance off by 5 % of the
//! triangle's size at a sine of 10⁻³). Now the distance stays within 10⁻⁶ of the problem's
//! size (the longest edge or `|p − v0|`) down to a sine of 10⁻³, and the point within
//! `10⁻⁷ · size / sin` (`tests/closest_point.rs`); the point always stays inside the bounding
//! box. Both bounds add the rounding of the point to f32, `2⁻²² · |q|∞` (`v0 + e1·u + e2·v`
//! rounds twice), which far from the world's origin is the larger term (the distance is
//! `|q − p|`).
//!
//! Scale: the region tests multiply dot products (fourth powers of the sizes), so the triangle
//! kernels take them on `v1 - v0`, `v2 - v0`, `p - v0` (and `p - v1`, `p - v2`) multiplied by
//! the power of two that brings the largest component of the first three into `[1, 2)` when
//! their largest length lies outside `[2⁻¹², 2¹²]` (exact, so answers in that range are
//! unchanged bit for bit); the point itself comes from the unscaled vertices. A problem scaled
//! by `2^k` gives the point scaled and the same barycentrics, bit for bit, from `2⁻¹⁰⁰` to
//! `2¹⁰⁰` when nothing is subnormal (`tests/closest_point.rs`).
//!
//! # Invalid input
//!
//! A non-finite `p`, or an invalid shape (see [`crate::prim`]; also the never-hit lanes of a
//! [`crate::prim::Soa`]), gives [`MISS_POINT`] (`+inf` in every component, so the squared
//! distance is `+inf`), zero barycentrics and a zero normal, never NaN.
//!
//! # Twins
//!
//! The lanes twins evaluate every region with the same expressions in the same order as the
//! scalar references (no fused multiply-adds) and pick the region with selects in the
//! reverse order of the early outs. They are **bitwise equal** to the scalar references in
//! every lane; `tests/closest_point.rs` checks that on large random and adversarial sets
//! (the gate is exact equality of the bits of `q`, `u`, `v` and `n`).

use crate::kernel::scale::{max_abs, max_abs_lanes, normaliser_sq, normaliser_sq_lanes};
use crate::lanes::{Lanes, Mask};
use crate::prim::{Aabb, Plane, Sphere, Triangle};
use crate::prim::{AabbLanes, PlaneLanes, SphereLanes, TriangleLanes};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// The point reported for invalid input: `+inf` in every component.
pub const MISS_POINT: Vec3 = Vec3::INFINITY;

/// The direction taken from a sphere's centre when the query point is the centre: `+x`.
pub const SPHERE_CENTRE_DIRECTION: Vec3 = Vec3::X;

/// `(q - p).length_squared()`: `x² + y² + z²`, unfused, left to right.
#[inline(always)]
#[must_use]
pub fn distance_squared_scalar(p: Vec3, q: Vec3) -> f32 {
    let d = q - p;
    d.x * d.x + d.y * d.y + d.z * d.z
}

/// Lanes twin of [`distance_squared_scalar`] (the same operations).
#[inline(always)]
#[must_use]
pub fn distance_squared_lanes<L: Lanes>(p: Vec3x<L>, q: Vec3x<L>) -> L {
    let d = q - p;
    d.x * d.x + d.y * d.y + d.z * d.z
}

// ---------------------------------------------------------------------------------------
// Triangle.

/// Closest point on the segment `a → a + ab` to `p`: `(point, t)` with `t ∈ [0, 1]` the
/// parameter along `ab` (0 for a zero-length segment or a non-finite parameter). `t` is
/// worked out on `p - a` and `ab` multiplied by the triangle's factor `s`.
#[inline(always)]
fn segment_scalar(p: Vec3, a: Vec3, ab: Vec3, s: f32) -> (Vec3, f32) {
    let abs = ab * s;
    let len2 = abs.dot(abs);
    let t = ((p - a) * s).dot(abs) / len2;
    // Comparisons are false for NaN (0/0, inf/inf): those take t = 0.
    let t = if t > 0.0 { t } else { 0.0 };
    let t = if t < 1.0 { t } else { 1.0 };
    (a + ab * t, t)
}

#[inline(always)]
fn segment_lanes<L: Lanes>(p: Vec3x<L>, a: Vec3x<L>, ab: Vec3x<L>, s: L) -> (Vec3x<L>, L) {
    let abs = ab.scale(s);
    let len2 = abs.dot(abs);
    let t = (p - a).scale(s).dot(abs) / len2;
    let zero = L::splat(0.0);
    let one = L::splat(1.0);
    let t = L::select(t.gt(zero), t, zero);
    let t = L::select(t.lt(one), t, one);
    (a + ab * t, t)
}

/// The three-edge answer for degenerate triangles: `(q, u, v)`; distances compared on the
/// gaps multiplied by the triangle's factor `s`.
#[inline(never)]
fn edges_scalar(p: Vec3, a: Vec3, b: Vec3, c: Vec3, s: f32) -> (Vec3, f32, f32) {
    let (q0, t0) = segment_scalar(p, a, b - a, s);
    let (q1, t1) = segment_scalar(p, a, c - a, s);
    let (q2, t2) = segment_scalar(p, b, c - b, s);
    let gap = |q: Vec3| distance_squared_scalar(p * s, q * s);
    let (d0, d1, d2) = (gap(q0), gap(q1), gap(q2));
    // Later edges win only when strictly nearer.
    let mut best = (q0, t0, 0.0, d0);
    if d1 < best.3 {
        best = (q1, 0.0, t1, d1);
    }
    if d2 < best.3 {
        best = (q2, 1.0 - t2, t2, d2);
    }
    (best.0, best.1, best.2)
}

#[inline(always)]
fn edges_lanes<L: Lanes>(p: Vec3x<L>, a: Vec3x<L>, b: Vec3x<L>, c: Vec3x<L>, s: L) -> (Vec3x<L>, L, L) {
    let (q0, t0) = segment_lanes(p, a, b - a, s);
    let (q1, t1) = segment_lanes(p, a, c - a, s);
    let (q2, t2) = segment_lanes(p, b, c - b, s);
    let gap = |q: Vec3x<L>| distance_squared_lanes(p.scale(s), q.scale(s));
    let (d0, d1, d2) = (gap(q0), gap(q1), gap(q2));
    let zero = L::splat(0.0);
    let m1 = d1.lt(d0);
    let (q, u, v, d) =
        (Vec3x::select(m1, q1, q0), L::select(m1, zero, t0), L::select(m1, t1, zero), L::select(m1, d1, d0));
    let m2 = d2.lt(d);
    (Vec3x::select(m2, q2, q), L::select(m2, L::splat(1.0) - t2, u), L::select(m2, t2, v))
}

/// Closest point on triangle `tri` to `p`: `(q, u, v)` with `q = (1-u-v) v0 + u v1 + v v2`
/// (see the module docs for degenerate triangles, scale and invalid input).
#[must_use]
pub fn triangle_scalar(p: Vec3, tri: &Triangle) -> (Vec3, f32, f32) {
    if !p.is_finite() || !tri.is_valid() {
        return (MISS_POINT, 0.0, 0.0);
    }
    let [a, b, c] = tri.v;
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let l2 = ab.dot(ab).max(ac.dot(ac)).max(ap.dot(ap));
    let s = normaliser_sq(l2, || max_abs(&[ab, ac, ap]));
    // Degenerate for its size: the predicate on the scaled edges.
    let (q, u, v) = if Triangle::edges_degenerate(ab * s, ac * s) {
        edges_scalar(p, a, b, c, s)
    } else {
        ericson_scalar(p, a, b, c, s)
    };
    let (q, u, v) =
        if q.is_finite() && u.is_finite() && v.is_finite() { (q, u, v) } else { edges_scalar(p, a, b, c, s) };
    let bounds = tri.aabb();
    (q.max(bounds.min).min(bounds.max), u, v)
}

/// Ericson's `ClosestPtPointTriangle` with the early outs, returning `(q, u, v)`; the dot
/// products are taken on the differences multiplied by `s`, the points from the unscaled
/// vertices.
#[inline(always)]
fn ericson_scalar(p: Vec3, a: Vec3, b: Vec3, c: Vec3, s: f32) -> (Vec3, f32, f32) {
    let (ab, ac) = (b - a, c - a);
    let (abs, acs) = (ab * s, ac * s);
    let ap = (p - a) * s;
    let d1 = abs.dot(ap);
    let d2 = acs.dot(ap);
    if d1 <= 0.0 && d2 <= 0.0 {
        return (a, 0.0, 0.0); // vertex region A
    }
    let bp = (p - b) * s;
    let d3 = abs.dot(bp);
    let d4 = acs.dot(bp);
    if d3 >= 0.0 && d4 <= d3 {
        return (b, 1.0, 0.0); // vertex region B
    }
    // The regions' signed areas as `n · (x × y)` (Binet–Cauchy: `vc = d1 d4 − d3 d2` and so
    // on), which keep their accuracy on thin triangles, where the differences of products
    // cancel (the module docs).
    let n = abs.cross(acs);
    let vc = n.dot(ap.cross(bp));
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let t = d1 / (d1 - d3);
        return (a + ab * t, t, 0.0); // edge region AB
    }
    let cp = (p - c) * s;
    let d5 = abs.dot(cp);
    let d6 = acs.dot(cp);
    if d6 >= 0.0 && d5 <= d6 {
        return (c, 0.0, 1.0); // vertex region C
    }
    let vb = n.dot(cp.cross(ap));
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let t = d2 / (d2 - d6);
        return (a + ac * t, 0.0, t); // edge region AC
    }
    let va = n.dot(bp.cross(cp));
    let e43 = d4 - d3;
    let e56 = d5 - d6;
    if va <= 0.0 && e43 >= 0.0 && e56 >= 0.0 {
        let t = e43 / (e43 + e56);
        return (b + (c - b) * t, 1.0 - t, t); // edge region BC
    }
    let denom = 1.0 / (va + vb + vc);
    let u = vb * denom;
    let v = vc * denom;
    (a + ab * u + ac * v, u, v) // face region
}

/// Lanes twin of [`triangle_scalar`]: lane `i` of `p` against lane `i` of `tri`, bitwise
/// equal to the scalar reference.
#[inline(always)]
#[must_use]
pub fn triangle_lanes<L: Lanes>(p: Vec3x<L>, tri: &TriangleLanes<L>) -> (Vec3x<L>, L, L) {
    let [a, b, c] = tri.vertices();
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let l2 = ab.dot(ab).max(ac.dot(ac)).max(ap.dot(ap));
    triangle_lanes_by(p, tri, normaliser_sq_lanes(l2, || max_abs_lanes(&[ab, ac, ap])))
}

/// [`triangle_lanes`] for callers whose differences are known to need no factor (the
/// moving-sphere sweep, which has scaled its whole problem).
#[inline(always)]
pub(crate) fn triangle_lanes_in_range<L: Lanes>(p: Vec3x<L>, tri: &TriangleLanes<L>) -> (Vec3x<L>, L, L) {
    triangle_lanes_by(p, tri, None)
}

/// [`triangle_lanes`] with the factor `s` (`None`: one in every lane).
#[inline(always)]
fn triangle_lanes_by<L: Lanes>(p: Vec3x<L>, tri: &TriangleLanes<L>, factor: Option<L>) -> (Vec3x<L>, L, L) {
    let [a, b, c] = tri.vertices();
    let zero = L::splat(0.0);
    let one = L::splat(1.0);
    let valid = p.is_finite() & a.is_finite() & b.is_finite() & c.is_finite();

    // Every region's answer, with its condition, as in `ericson_scalar`; the dot products
    // on the differences multiplied by the factor, where a lane needs one.
    let ab = b - a;
    let ac = c - a;
    let sc = |v: Vec3x<L>| factor.map_or(v, |s| v.scale(s));
    let (abs, acs) = (sc(ab), sc(ac));
    let ap = sc(p - a);
    let d1 = abs.dot(ap);
    let d2 = acs.dot(ap);
    let in_a = d1.le(zero) & d2.le(zero);
    let bp = sc(p - b);
    let d3 = abs.dot(bp);
    let d4 = acs.dot(bp);
    let in_b = d3.ge(zero) & d4.le(d3);
    let n = abs.cross(acs);
    let vc = n.dot(ap.cross(bp));
    let in_ab = vc.le(zero) & d1.ge(zero) & d3.le(zero);
    let t_ab = d1 / (d1 - d3);
    let cp = sc(p - c);
    let d5 = abs.dot(cp);
    let d6 = acs.dot(cp);
    let in_c = d6.ge(zero) & d5.le(d6);
    let vb = n.dot(cp.cross(ap));
    let in_ac = vb.le(zero) & d2.ge(zero) & d6.le(zero);
    let t_ac = d2 / (d2 - d6);
    let va = n.dot(bp.cross(cp));
    let e43 = d4 - d3;
    let e56 = d5 - d6;
    let in_bc = va.le(zero) & e43.ge(zero) & e56.ge(zero);
    let t_bc = e43 / (e43 + e56);
    let denom = one / (va + vb + vc);
    let fu = vb * denom;
    let fv = vc * denom;

    // Face first, then the early outs in reverse order, so the first region that holds wins.
    let mut q = a + ab * fu + ac * fv;
    let (mut u, mut v) = (fu, fv);
    let mut pick = |m: L::Mask, qr: Vec3x<L>, ur: L, vr: L| {
        q = Vec3x::select(m, qr, q);
        u = L::select(m, ur, u);
        v = L::select(m, vr, v);
    };
    pick(in_bc, b + (c - b) * t_bc, one - t_bc, t_bc);
    pick(in_ac, a + ac * t_ac, zero, t_ac);
    pick(in_c, c, zero, one);
    pick(in_ab, a + ab * t_ab, t_ab, zero);
    pick(in_b, b, one, zero);
    pick(in_a, a, zero, zero);

    // Degenerate triangles (the predicate of `Triangle::edges_degenerate` on the scaled
    // edges, same operations) and non-finite answers take the three edges.
    let n2 = n.length_squared();
    let sliver = L::splat(Triangle::SLIVER * Triangle::SLIVER);
    // (Without a factor, the lengths the caller took for it.)
    let (lab, lac) = match factor {
        None => (ab.length_squared(), ac.length_squared()),
        Some(_) => (abs.length_squared(), acs.length_squared()),
    };
    let bound = sliver * (lab * lac);
    let inf = L::splat(f32::INFINITY);
    let sound = n2.gt(bound) & n2.lt(inf) & bound.lt(inf);
    let ok = sound & q.is_finite() & u.is_finite() & v.is_finite();
    if (valid & !ok).any() {
        let (qe, ue, ve) = edges_lanes(p, a, b, c, factor.unwrap_or(one));
        let m = !ok;
        q = Vec3x::select(m, qe, q);
        u = L::select(m, ue, u);
        v = L::select(m, ve, v);
    }
    let q = q.max(a.min(b).min(c)).min(a.max(b).max(c));
    let miss = Vec3x::splat(MISS_POINT);
    (Vec3x::select(valid, q, miss), L::select(valid, u, zero), L::select(valid, v, zero))
}

// ---------------------------------------------------------------------------------------
// Sphere.

/// Closest point on the surface of `s` to `p`: `(q, n)`, `n` the unit direction from the
/// centre towards `p` (`+x` when `p` is the centre).
#[must_use]
pub fn sphere_scalar(p: Vec3, s: &Sphere) -> (Vec3, Vec3) {
    if !p.is_finite() || !s.is_valid() {
        return (MISS_POINT, Vec3::ZERO);
    }
    let d = p - s.center;
    let len2 = d.dot(d);
    let (n, q) = if len2 > 0.0 {
        let len = len2.sqrt();
        let n = d * (1.0 / len);
        (n, s.center + d * (s.radius / len))
    } else {
        (SPHERE_CENTRE_DIRECTION, s.center + SPHERE_CENTRE_DIRECTION * s.radius)
    };
    let bounds = s.aabb();
    (q.max(bounds.min).min(bounds.max), n)
}

/// Lanes twin of [`sphere_scalar`] (bitwise equal).
#[inline(always)]
#[must_use]
pub fn sphere_lanes<L: Lanes>(p: Vec3x<L>, s: &SphereLanes<L>) -> (Vec3x<L>, Vec3x<L>) {
    let (c, r) = (s.center(), s.radius());
    let valid = p.is_finite() & c.is_finite() & r.is_finite() & r.ge(L::splat(0.0));
    let d = p - c;
    let len2 = d.dot(d);
    let len = len2.sqrt();
    let away = len2.gt(L::splat(0.0));
    let n = Vec3x::select(away, d * (L::splat(1.0) / len), Vec3x::splat(SPHERE_CENTRE_DIRECTION));
    let q = Vec3x::select(away, c + d * (r / len), c + Vec3x::splat(SPHERE_CENTRE_DIRECTION) * r);
    let rv = Vec3x::new(r, r, r);
    let q = q.max(c - rv).min(c + rv);
    (Vec3x::select(valid, q, Vec3x::splat(MISS_POINT)), Vec3x::select(valid, n, Vec3x::splat(Vec3::ZERO)))
}

// ---------------------------------------------------------------------------------------
// Box.

/// Closest point on the surface of `b` to `p`, also from inside: `(q, n)` with `n` the
/// outward normal of the face `q` is on (see the module docs for the rules).
#[must_use]
pub fn aabb_scalar(p: Vec3, b: &Aabb) -> (Vec3, Vec3) {
    if !p.is_finite() || !b.is_valid() {
        return (MISS_POINT, Vec3::ZERO);
    }
    let q = p.max(b.min).min(b.max);
    let inside = b.min.cmple(p).all() && p.cmple(b.max).all();
    let mut n = Vec3::ZERO;
    if !inside {
        // The axis where p is farthest out (first of equals).
        let o = (p - q).abs();
        let mut axis = 0;
        if o.y > o[axis] {
            axis = 1;
        }
        if o.z > o[axis] {
            axis = 2;
        }
        n[axis] = if p[axis] < q[axis] { -1.0 } else { 1.0 };
        return (q, n);
    }
    // Inside: nearest face in the order -x, +x, -y, +y, -z, +z.
    let mut best = (p.x - b.min.x, 0usize, b.min.x, -1.0f32);
    for (dist, axis, at, sign) in [
        (b.max.x - p.x, 0, b.max.x, 1.0),
        (p.y - b.min.y, 1, b.min.y, -1.0),
        (b.max.y - p.y, 1, b.max.y, 1.0),
        (p.z - b.min.z, 2, b.min.z, -1.0),
        (b.max.z - p.z, 2, b.max.z, 1.0),
    ] {
        if dist < best.0 {
            best = (dist, axis, at, sign);
        }
    }
    let mut q = p;
    q[best.1] = best.2;
    n[best.1] = best.3;
    (q, n)
}

/// Lanes twin of [`aabb_scalar`] (bitwise equal).
#[inline(always)]
#[must_use]
pub fn aabb_lanes<L: Lanes>(p: Vec3x<L>, b: &AabbLanes<L>) -> (Vec3x<L>, Vec3x<L>) {
    let (lo, hi) = (b.min(), b.max());
    let zero = L::splat(0.0);
    let (one, neg) = (L::splat(1.0), L::splat(-1.0));
    let valid = p.is_finite() & lo.is_finite() & hi.is_finite() & lo.x.le(hi.x) & lo.y.le(hi.y) & lo.z.le(hi.z);
    let q = p.max(lo).min(hi);
    let inside = lo.x.le(p.x) & lo.y.le(p.y) & lo.z.le(p.z) & p.x.le(hi.x) & p.y.le(hi.y) & p.z.le(hi.z);

    // Outside: the axis where p is farthest out.
    let o = (p - q).abs();
    let is_y = o.y.gt(o.x);
    let ox = L::select(is_y, o.y, o.x);
    let is_z = o.z.gt(ox);
    let is_y = is_y & !is_z;
    let is_x = !is_y & !is_z;
    let sign = |pc: L, qc: L| L::select(pc.lt(qc), neg, one);
    let n_out = Vec3x::new(
        L::select(is_x, sign(p.x, q.x), zero),
        L::select(is_y, sign(p.y, q.y), zero),
        L::select(is_z, sign(p.z, q.z), zero),
    );

    // Inside: the nearest face, first of equals, as a running select (face index 0..6).
    let faces = [
        (p.x - lo.x, lo.x),
        (hi.x - p.x, hi.x),
        (p.y - lo.y, lo.y),
        (hi.y - p.y, hi.y),
        (p.z - lo.z, lo.z),
        (hi.z - p.z, hi.z),
    ];
    let mut best = faces[0].0;
    let mut at = faces[0].1;
    let mut face = zero;
    for (k, &(dist, coord)) in faces.iter().enumerate().skip(1) {
        let m = dist.lt(best);
        best = L::select(m, dist, best);
        at = L::select(m, coord, at);
        face = L::select(m, L::splat(k as f32), face);
    }
    let on = |k: f32| face.eq(L::splat(k));
    let (fx, fy, fz) = (on(0.0) | on(1.0), on(2.0) | on(3.0), on(4.0) | on(5.0));
    let q_in = Vec3x::new(L::select(fx, at, p.x), L::select(fy, at, p.y), L::select(fz, at, p.z));
    let s_in = |lo_face: f32, m: L::Mask| L::select(m, L::select(on(lo_face), neg, one), zero);
    let n_in = Vec3x::new(s_in(0.0, fx), s_in(2.0, fy), s_in(4.0, fz));

    let q = Vec3x::select(inside, q_in, q);
    let n = Vec3x::select(inside, n_in, n_out);
    (Vec3x::select(valid, q, Vec3x::splat(MISS_POINT)), Vec3x::select(valid, n, Vec3x::splat(Vec3::ZERO)))
}

// ---------------------------------------------------------------------------------------
// Plane.

/// Closest point on the plane `normal · x = d` to `p`: `p - n (n·p - d) / (n·n)`.
#[must_use]
pub fn plane_scalar(p: Vec3, plane: &Plane) -> Vec3 {
    if !p.is_finite() || !plane.is_valid() {
        return MISS_POINT;
    }
    let n = plane.normal;
    let s = (n.dot(p) - plane.d) / n.dot(n);
    p - n * s
}

/// Lanes twin of [`plane_scalar`] (bitwise equal).
#[inline(always)]
#[must_use]
pub fn plane_lanes<L: Lanes>(p: Vec3x<L>, plane: &PlaneLanes<L>) -> Vec3x<L> {
    let (n, d) = (plane.normal, plane.d);
    let valid = p.is_finite() & n.is_finite() & d.is_finite() & n.length_squared().gt(L::splat(0.0));
    let s = (n.dot(p) - d) / n.dot(n);
    Vec3x::select(valid, p - n * s, Vec3x::splat(MISS_POINT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_point_of_a_right_triangle() {
        let t = Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y);
        let (q, u, v) = triangle_scalar(Vec3::new(0.25, 0.5, 3.0), &t);
        assert_eq!((q, u, v), (Vec3::new(0.25, 0.5, 0.0), 0.25, 0.5));
    }
}
