//! Segment `p → q` against capsule: the first `t ∈ [0, 1]` where the segment touches the
//! capsule; `0` when `p` is already inside. The capsule is the union of the cylinder body
//! (Ericson 5.3.7, `IntersectSegmentCylinder`, without its end discs) and two end spheres;
//! once `p` is known to be outside, the first contact is the earliest entry into any part.
//! A zero-length segment touches only if `p` is inside. A capsule whose ends coincide is a
//! sphere. As for spheres, the body's discriminant is evaluated in a cancellation-free form
//! (`qb² - qa·qc = dd (qa r² - ((m × n)·d)²)`), which matters for thin capsules seen from far,
//! and its coefficients come from the cross products `d × m` and `d × n` (Lagrange's and
//! Binet–Cauchy's identities: `qa = |d × n|²` for `dd·(n·n) − (n·d)²`, `qb = (d × m)·(d × n)`,
//! `qc = |d × m|² − dd·r²`), not from differences of dot products, which lose all but a few
//! bits when the segment runs nearly along the axis (a segment at 2° to the axis had `t` off by
//! `2·10⁻⁴` in one twin and `4·10⁻⁵` in the other; found by the 10⁸-case soak).
//!
//! That quadratic holds eighth powers of the sizes (`dd · qa · r²`), so both twins work on the
//! segment's offsets from the two ends, the axis, the motion and the radius multiplied by a
//! power of two that brings their largest component into `[1, 2)` when their largest length
//! lies outside `[2⁻¹², 2¹²]` (`kernel::scale`; exact, and a no-op for the answer wherever the
//! unscaled arithmetic did not over- or underflow): a problem scaled by `2^k` meets the capsule
//! at the same `t`, bit for bit, from `2⁻⁶⁰` to `2⁶⁰` (`tests/kernels_vs_scalar.rs`). Unscaled,
//! the body was lost from sizes of about `2¹⁶` up and below `2⁻¹⁶`.

use crate::kernel::ray_sphere;
use crate::kernel::scale::{max_abs, max_abs_lanes, normaliser_sq, normaliser_sq_lanes};
use crate::lanes::Lanes;
use crate::prim::{Capsule, CapsuleLanes, Sphere};
use crate::ray::Ray;
use crate::vec3x::Vec3x;
use glam::Vec3;

/// Squared distance from `p` to the segment `a → b`: the offset from the closest point of
/// the segment, `(p - a) - (b - a) · w` with `w` the projection's parameter clamped to
/// `[0, 1]`, squared. (Ericson 5.1.2.1's `ap·ap − e²/f` cancels where the segment is long
/// beside the distance: a point 0.2 from the middle of a 2,100-unit edge came out within a
/// radius of 0.03 of it, so the scalar sweep reported a contact at the start.)
pub fn sq_dist_point_segment(p: Vec3, a: Vec3, b: Vec3) -> f32 {
    sq_dist_parts(p - a, b - a)
}

/// [`sq_dist_point_segment`] on the differences `ap = p - a`, `ab = b - a`; the same
/// operations as the lanes twin's test for a start inside the capsule.
fn sq_dist_parts(ap: Vec3, ab: Vec3) -> f32 {
    let (e, f) = (ap.dot(ab), ab.dot(ab));
    // The ends without the division (the same bits: `ab · 0` and `ab · 1` are exact).
    let off = if e <= 0.0 || f <= 0.0 {
        ap
    } else if e >= f {
        ap - ab
    } else {
        ap - ab * (e / f)
    };
    off.dot(off)
}

/// First contact time of the segment with the capsule.
pub fn intersect_scalar(p: Vec3, q: Vec3, cap: &Capsule) -> Option<f32> {
    if !p.is_finite() || !q.is_finite() {
        return None;
    }
    intersect_dir_scalar(p, q - p, cap)
}

/// [`intersect_scalar`] for the segment `p → p + n` (the sweep kernels pass the motion
/// vector directly rather than recomputing it from two end points).
pub(crate) fn intersect_dir_scalar(p: Vec3, n: Vec3, cap: &Capsule) -> Option<f32> {
    if !p.is_finite() || !n.is_finite() || !cap.is_valid() {
        return None;
    }
    // The problem relative to the capsule's ends, scaled by a power of two (see
    // `kernel::scale`): `m = p - a`, `mb = p - b`, axis `d = b - a`.
    let (m, mb, d) = (p - cap.a, p - cap.b, cap.b - cap.a);
    let l2 = m.dot(m).max(d.dot(d)).max(n.dot(n)).max(cap.radius * cap.radius);
    let s = normaliser_sq(l2, || max_abs(&[m, mb, d, n]).max(cap.radius));
    let (m, mb, d, n, r) = (m * s, mb * s, d * s, n * s, cap.radius * s);
    let r2 = r * r;
    if sq_dist_parts(m, d) <= r2 {
        return Some(0.0);
    }
    let mut best: Option<f32> = None;
    let mut take = |t: f32| best = Some(best.map_or(t, |b: f32| b.min(t)));
    for o in [m, mb] {
        // The end sphere at the origin, the segment starting at its offset from the centre.
        if let Some(t) = ray_sphere::intersect_scalar(&Ray::with_interval(o, n, 0.0, 1.0), &Sphere::new(Vec3::ZERO, r))
        {
            take(t);
        }
    }
    // Cylinder body (Ericson 5.3.7 with axis d = b - a, m = p - a): the quadratic
    // qa t² + 2 qb t + qc = 0, all scaled by dd = d·d, its coefficients from the parts of m
    // and n across the axis (module docs: no cancellation when n runs along d).
    let (md, nd, dd) = (m.dot(d), n.dot(d), d.dot(d));
    let (um, un) = (d.cross(m), d.cross(n));
    let (qa, qb, qc) = (un.dot(un), um.dot(un), um.dot(um) - dd * r2);
    // Outside the infinite cylinder (qc > 0), approaching its axis (qb < 0), not parallel.
    if dd > 0.0 && qa > 0.0 && qc > 0.0 && qb < 0.0 {
        // qb² - qa qc without cancellation: dd (qa r² - ((m × n) · d)²).
        let triple = um.dot(n); // (m × n)·d, the same triple product
        let disc = dd * (qa * r2 - triple * triple);
        if disc >= 0.0 {
            let t = (-qb - disc.sqrt()) / qa;
            let axial = md + t * nd;
            if (0.0..=1.0).contains(&t) && axial >= 0.0 && axial <= dd {
                take(t);
            }
        }
    }
    best
}

/// Lane core on raw vectors (capsule `a → b`, radius `r`, assumed valid per lane):
/// `(hit, t)` for the segment `p → p + n`.
#[inline(always)]
pub(crate) fn capsule_raw<L: Lanes>(p: Vec3x<L>, n: Vec3x<L>, a: Vec3x<L>, b: Vec3x<L>, r: L) -> (L::Mask, L) {
    // As in the scalar: relative to the ends, scaled by a power of two where needed.
    let (m, mb, d) = (p - a, p - b, b - a);
    let l2 = m.dot(m).max(d.dot(d)).max(n.dot(n)).max(r * r);
    capsule_relative(m, mb, d, n, r, normaliser_sq_lanes(l2, || max_abs_lanes(&[m, mb, d, n]).max(r)))
}

/// [`capsule_raw`] for callers whose problem is known to need no factor (the moving-sphere
/// sweep, which has scaled its whole problem).
#[inline(always)]
pub(crate) fn capsule_in_range<L: Lanes>(p: Vec3x<L>, n: Vec3x<L>, a: Vec3x<L>, b: Vec3x<L>, r: L) -> (L::Mask, L) {
    capsule_relative(p - a, p - b, b - a, n, r, None)
}

/// The lanes kernel on the segment's offsets `m = p - a`, `mb = p - b`, the axis `d = b - a`,
/// the motion `n` and the radius `r`, all multiplied by `factor` where there is one.
#[inline(always)]
fn capsule_relative<L: Lanes>(
    m: Vec3x<L>,
    mb: Vec3x<L>,
    d: Vec3x<L>,
    n: Vec3x<L>,
    r: L,
    factor: Option<L>,
) -> (L::Mask, L) {
    let zero = L::splat(0.0);
    let one = L::splat(1.0);
    let inf = L::splat(f32::INFINITY);
    let (m, mb, d, n, r) = match factor {
        None => (m, mb, d, n, r),
        Some(s) => (m.scale(s), mb.scale(s), d.scale(s), n.scale(s), r * s),
    };
    let r2 = r * r;
    let (md, nd, dd) = (m.dot(d), n.dot(d), d.dot(d));
    // p inside: distance from p to the axis segment.
    let w = L::select(dd.gt(zero), (md / dd).clamp(zero, one), zero);
    let off = m - d.scale(w);
    let inside = off.dot(off).le(r2);
    // End spheres, each at the origin with the segment starting at its offset.
    let origin = Vec3x::splat(Vec3::ZERO);
    let sphere = |o: Vec3x<L>| {
        let (h, s, _) = ray_sphere::first_root(o, n, origin, r);
        let ok = h & s.le(one);
        L::select(ok, s, inf)
    };
    let t_caps = sphere(m).min(sphere(mb));
    // Body: root qc / (sqrt(disc) - qb), free of cancellation for qb < 0.
    let (um, un) = (d.cross(m), d.cross(n));
    let (qa, qb, qc) = (un.dot(un), um.dot(un), um.dot(um) - dd * r2);
    let triple = um.dot(n); // (m × n)·d, the same triple product
    let disc = dd * (qa * r2 - triple * triple);
    let t = qc / (disc.sqrt() - qb);
    let axial = md + t * nd;
    let body = dd.gt(zero)
        & qa.gt(zero)
        & qc.gt(zero)
        & qb.lt(zero)
        & disc.ge(zero)
        & t.ge(zero)
        & t.le(one)
        & axial.ge(zero)
        & axial.le(dd);
    let t_best = L::select(body, t, inf).min(t_caps);
    let hit = inside | t_best.lt(inf);
    (hit, L::select(inside, zero, L::select(hit, t_best, inf)))
}

/// Lanes twin of [`intersect_scalar`]: `(hit, t)`, `t = +inf` where there is no contact.
#[inline(always)]
pub fn intersect_lanes<L: Lanes>(p: Vec3x<L>, q: Vec3x<L>, cap: &CapsuleLanes<L>) -> (L::Mask, L) {
    let ok = p.is_finite() & q.is_finite();
    let (hit, t) = capsule_raw(p, q - p, cap.a, cap.b, cap.radius);
    let hit = hit & ok;
    (hit, L::select(hit, t, L::splat(f32::INFINITY)))
}
