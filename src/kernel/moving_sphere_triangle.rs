//! Moving sphere against triangle (Ericson, RTCD §5.5.6): the first time in `[0, 1]` at
//! which a sphere of radius `r`, whose centre moves from `c` to `c + m`, touches a triangle,
//! with the contact point on the triangle and the contact normal.
//!
//! The swept sphere first touches the triangle's face, one of its edges or one of its
//! vertices, so the time of impact is the smallest of:
//!
//! * **touching at the start**: the distance from `c` to the triangle
//!   ([`super::closest_point::triangle_scalar`]) is at most `r`, giving `0`;
//! * **the face**: the centre reaches the plane offset by `r` towards it at
//!   `t = (|d₀| - r) / (-m·n)` (only while approaching and starting farther than `r`), and
//!   the point of the plane below the centre then lies inside the triangle (three edge
//!   cross products against the unnormalised normal, all `>= 0`);
//! * **the edges**: the centre's segment `c → c + m` against each edge as a capsule of
//!   radius `r` ([`super::segment_capsule`]), whose end spheres are the vertices.
//!
//! The contact point is the triangle's closest point to the centre at the time of impact,
//! and the normal points from it to that centre (for `r = 0`, where they coincide, the face
//! normal turned towards the start: the rounded gap of a point sweep points anywhere). A
//! degenerate triangle has no face and is its edges; a zero motion touches only at `t = 0`.
//! Invalid input (a non-finite number, a negative radius) never touches.
//!
//! The lanes twin [`sweep_lanes`] evaluates the same steps branch-free, with the capsule
//! kernels' lanes roots, so it is not bitwise equal: hit/miss can differ only within rounding
//! of tangency, and `toi` agrees within 2⁻¹⁴, or, on a grazing approach (where a tiny change
//! of distance moves the time a lot), the distance approached along the contact normal agrees
//! within 10⁻⁵ of the scene's scale (gated in `tests/moving_sphere_triangle.rs`).
//!
//! Scale: both twins work on the problem moved to `v0`, so far from the world's origin the
//! contact point and normal round at the problem's size, not at the coordinates' (from the
//! absolute centre at `toi`, a ball of radius 0.03 about 1,400 units out got a normal off by
//! about 4·10⁻³; `tests/moving_sphere_triangle.rs`). The closest point holds fourth powers of
//! the sizes and the edges' capsules eighth powers, so the twins also multiply the moved
//! problem by the power of two that brings its largest component into `[1, 2)` when its
//! largest length (of `c - v0`, the edges from `v0`, the motion, the radius) lies outside
//! `[2⁻¹², 2¹²]` (exact). A world scaled by `2^k` gives the same time of impact and
//! normal, and the point scaled, bit for bit, from `2⁻⁶⁰` to `2⁶⁰`.

use crate::kernel::closest_point::{triangle_lanes_in_range, triangle_scalar};
use crate::kernel::scale::{max_abs, max_abs_lanes, normaliser_sq, normaliser_sq_lanes};
use crate::kernel::segment_capsule::{capsule_in_range, intersect_dir_scalar};
use crate::lanes::Lanes;
use crate::prim::{Capsule, Triangle, TriangleLanes};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// First contact of a moving sphere with a triangle.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepContact {
    /// Time of impact in `[0, 1]` (fraction of the motion).
    pub toi: f32,
    /// Contact point on the triangle.
    pub point: Vec3,
    /// Unit normal at the contact, from the triangle towards the sphere's centre.
    pub normal: Vec3,
}

/// Scalar reference: the first contact of the sphere (`center`, `radius`) moving by
/// `motion` with `tri`, or `None`.
pub fn sweep_scalar(center: Vec3, radius: f32, motion: Vec3, tri: &Triangle) -> Option<SweepContact> {
    let [v0, v1, v2] = tri.v;
    let valid = center.is_finite()
        && motion.is_finite()
        && radius.is_finite()
        && radius >= 0.0
        && v0.is_finite()
        && v1.is_finite()
        && v2.is_finite();
    if !valid {
        return None;
    }
    // The problem relative to v0 (so far from the world's origin the contact rounds at the
    // problem's size, not the coordinates'), scaled by a power of two where needed
    // (`kernel::scale`).
    let (c0, e1, e2) = (center - v0, v1 - v0, v2 - v0);
    let l2 = c0.dot(c0).max(e1.dot(e1)).max(e2.dot(e2)).max(motion.dot(motion)).max(radius * radius);
    // `s = 1` where no factor is needed: every product with it is exact, the same bits.
    let s = normaliser_sq(l2, || max_abs(&[c0, e1, e2, motion]).max(radius));
    let h = sweep_core(c0 * s, radius * s, motion * s, &Triangle::new(Vec3::ZERO, e1 * s, e2 * s))?;
    Some(SweepContact { point: h.point * (1.0 / s) + v0, ..h })
}

/// [`sweep_scalar`] on valid input whose magnitudes need no scaling.
fn sweep_core(center: Vec3, radius: f32, motion: Vec3, tri: &Triangle) -> Option<SweepContact> {
    let [v0, v1, v2] = tri.v;
    let (q0, _, _) = triangle_scalar(center, tri);
    let toi = if (center - q0).length_squared() <= radius * radius {
        0.0
    } else {
        let mut best = face_scalar(center, radius, motion, tri).unwrap_or(f32::INFINITY);
        for (a, b) in [(v0, v1), (v1, v2), (v2, v0)] {
            if let Some(t) = intersect_dir_scalar(center, motion, &Capsule::new(a, b, radius)) {
                best = best.min(t);
            }
        }
        if best > 1.0 {
            return None;
        }
        best
    };
    let at = center + motion * toi;
    let (point, _, _) = triangle_scalar(at, tri);
    Some(SweepContact { toi, point, normal: contact_normal(at - point, radius, tri, center) })
}

/// The face: time at which the sphere touches the plane inside the triangle.
fn face_scalar(c: Vec3, r: f32, m: Vec3, tri: &Triangle) -> Option<f32> {
    let [v0, v1, v2] = tri.v;
    let nr = (v1 - v0).cross(v2 - v0);
    let n = unit_face_normal(nr)?; // `None`: degenerate, its edges decide
    let d0 = n.dot(c - v0);
    let s = if d0 >= 0.0 { 1.0 } else { -1.0 };
    let (dist, vn) = (d0.abs(), s * n.dot(m));
    if !(vn < 0.0 && dist > r) {
        return None;
    }
    let t = (dist - r) / -vn;
    if !(0.0..=1.0).contains(&t) {
        return None;
    }
    let p = c + m * t - n * (s * r);
    let inside = [(v0, v1), (v1, v2), (v2, v0)].iter().all(|&(a, b)| (b - a).cross(p - a).dot(nr) >= 0.0);
    inside.then_some(t)
}

/// The unit face normal of a triangle whose `cross(v1 - v0, v2 - v0)` is `nr`, or `None`
/// when `nr` is zero or not finite (a degenerate triangle). `nr` is first divided by its
/// largest magnitude, so its squared length can neither underflow nor overflow whatever
/// the triangle's size (normalised directly, a triangle of sides ~1e-8 got a normal up to
/// 17 % too long, and one of sides ~1e19 none). [`sweep_lanes`] does the same operations.
fn unit_face_normal(nr: Vec3) -> Option<Vec3> {
    // The lanes' `max` (the second operand when either is NaN).
    let max = |a: f32, b: f32| if a > b { a } else { b };
    let m = max(nr.x.abs(), max(nr.y.abs(), nr.z.abs()));
    if !(m > 0.0 && m < f32::INFINITY) {
        return None;
    }
    let u = Vec3::new(nr.x / m, nr.y / m, nr.z / m);
    Some(u / u.dot(u).sqrt())
}

/// Unit normal from the contact towards the centre; where they coincide, and for a point
/// (`r = 0`, whose gap is only the rounding of the centre at `toi`, pointing anywhere), the
/// face normal turned towards the start (zero for a degenerate triangle).
fn contact_normal(gap: Vec3, radius: f32, tri: &Triangle, start: Vec3) -> Vec3 {
    let g = gap.normalize_or_zero();
    if g != Vec3::ZERO && radius > 0.0 {
        return g;
    }
    let n = unit_face_normal(tri.scaled_normal()).unwrap_or(Vec3::ZERO);
    if n.dot(start - tri.v[0]) < 0.0 { -n } else { n }
}

/// Lanes twin of [`sweep_scalar`]: one sphere per lane against one triangle per lane (splat
/// either side to test one against many). Returns `(hit, toi, point, normal)`; a lane
/// without contact has `toi = +inf` and zero point and normal.
#[inline(always)]
pub fn sweep_lanes<L: Lanes>(
    center: Vec3x<L>,
    radius: L,
    motion: Vec3x<L>,
    tri: &TriangleLanes<L>,
) -> (L::Mask, L, Vec3x<L>, Vec3x<L>) {
    let one = L::splat(1.0);
    // As in the scalar: the problem relative to v0 (a non-finite v0 stays, so its lane stays
    // invalid), lanes whose magnitudes need it scaled.
    let (c0, e1, e2) = (center - tri.v0, tri.v1 - tri.v0, tri.v2 - tri.v0);
    let l2 = c0.dot(c0).max(e1.dot(e1)).max(e2.dot(e2)).max(motion.dot(motion)).max(radius * radius);
    let origin = Vec3x::select(tri.v0.is_finite(), Vec3x::splat(Vec3::ZERO), tri.v0);
    let rel = TriangleLanes { v0: origin, v1: e1, v2: e2 };
    if let Some(s) = normaliser_sq_lanes(l2, || max_abs_lanes(&[c0, e1, e2, motion]).max(radius)) {
        // `s = 1` in the lanes that need no factor: an exact no-op there.
        let scaled = TriangleLanes { v0: rel.v0, v1: e1.scale(s), v2: e2.scale(s) };
        let (hit, toi, point, normal) = sweep_lanes_core(c0.scale(s), radius * s, motion.scale(s), &scaled);
        let point = Vec3x::select(hit, point.scale(one / s) + tri.v0, point);
        return (hit, toi, point, normal);
    }
    // No lane needs a factor (the usual case): without the products and the division, which
    // cost the lanes 3 % (x4, x8) when made with `s = 1`.
    let (hit, toi, point, normal) = sweep_lanes_core(c0, radius, motion, &rel);
    (hit, toi, Vec3x::select(hit, point + tri.v0, point), normal)
}

/// [`sweep_lanes`] on lanes whose magnitudes need no scaling.
#[inline(always)]
fn sweep_lanes_core<L: Lanes>(
    center: Vec3x<L>,
    radius: L,
    motion: Vec3x<L>,
    tri: &TriangleLanes<L>,
) -> (L::Mask, L, Vec3x<L>, Vec3x<L>) {
    let zero = L::splat(0.0);
    let one = L::splat(1.0);
    let inf = L::splat(f32::INFINITY);
    let (v0, v1, v2) = (tri.v0, tri.v1, tri.v2);
    // TriangleLanes turns invalid triangles into NaN, which fails every test below.
    let valid = center.is_finite() & motion.is_finite() & radius.is_finite() & radius.ge(zero) & v0.is_finite();
    // The problem is in range here (see `sweep_lanes`): the closest point and the capsules
    // need no factor of their own.
    let (q0, _, _) = triangle_lanes_in_range(center, tri);
    let g0 = center - q0;
    let start = g0.dot(g0).le(radius * radius);

    // The face.
    // The face normal as `unit_face_normal` makes it (scaled by the largest magnitude first).
    let nr = (v1 - v0).cross(v2 - v0);
    let m = nr.x.abs().max(nr.y.abs().max(nr.z.abs()));
    let has_face = m.gt(zero) & m.lt(inf);
    let u = Vec3x::new(nr.x / m, nr.y / m, nr.z / m);
    let n = u.scale(one / u.dot(u).sqrt());
    let d0 = n.dot(center - v0);
    let s = L::select(d0.ge(zero), one, L::splat(-1.0));
    let (dist, vn) = (d0.abs(), s * n.dot(motion));
    let tf = (dist - radius) / -vn;
    let p = center + motion.scale(tf) - n.scale(s * radius);
    let side = |a: Vec3x<L>, b: Vec3x<L>| (b - a).cross(p - a).dot(nr).ge(zero);
    let face = has_face
        & vn.lt(zero)
        & dist.gt(radius)
        & tf.ge(zero)
        & tf.le(one)
        & side(v0, v1)
        & side(v1, v2)
        & side(v2, v0);
    let mut best = L::select(face, tf, inf);

    // The edges as capsules.
    for (a, b) in [(v0, v1), (v1, v2), (v2, v0)] {
        let (h, t) = capsule_in_range(center, motion, a, b, radius);
        best = best.min(L::select(h, t, inf));
    }
    let hit = valid & (start | best.le(one));
    let toi = L::select(start, zero, best);
    let toi = L::select(hit, toi, inf);

    // Contact point and normal at the time of impact.
    let at = center + motion.scale(L::select(hit, toi, zero));
    let (point, _, _) = triangle_lanes_in_range(at, tri);
    let gap = at - point;
    let glen = gap.dot(gap).sqrt();
    let g = gap.scale(one / glen);
    let face_n = L::select(n.dot(center - v0).lt(zero), L::splat(-1.0), one);
    let fallback = Vec3x::select(has_face, n.scale(face_n), Vec3x::splat(Vec3::ZERO));
    let normal = Vec3x::select(glen.gt(zero) & radius.gt(zero), g, fallback);
    let none = Vec3x::splat(Vec3::ZERO);
    (hit, toi, Vec3x::select(hit, point, none), Vec3x::select(hit, normal, none))
}
