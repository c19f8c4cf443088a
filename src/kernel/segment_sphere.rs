//! Segment (or ray) against sphere reporting **both** surface crossings inside
//! `[t_min, t_max]` with their outward unit normals: the entry (smaller root) and the exit
//! (larger root). A segment starting inside has only an exit; one ending inside only an
//! entry; a tangent segment reports the touching point as both entry and exit.
//!
//! For a sphere of radius 0 the normal is reported as zero.

use crate::lanes::{Lanes, Mask};
use crate::prim::{Sphere, SphereLanes};
use crate::ray::{Ray, RayPacket};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// One surface crossing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossing {
    /// Ray parameter.
    pub t: f32,
    /// Outward unit normal of the sphere at the crossing.
    pub normal: Vec3,
}

/// The crossings of a segment with a sphere.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Crossings {
    /// Where the segment enters the sphere, if inside the interval.
    pub enter: Option<Crossing>,
    /// Where the segment leaves the sphere, if inside the interval.
    pub exit: Option<Crossing>,
}

impl Crossings {
    /// Number of crossings: 0, 1 or 2.
    pub fn count(&self) -> u32 {
        self.enter.is_some() as u32 + self.exit.is_some() as u32
    }
}

/// The outward unit normal where the ray is at `t` (zero for a sphere of radius 0).
///
/// From the origin's offset `m = o − c` plus `t·d`, not from the point `o + t·d`: that point
/// rounds at the size of the coordinates, which for a small sphere far from the world's
/// origin is most of the radius (a sphere of radius 0.07 a thousand units out got normals
/// off by 4·10⁻⁴); the offset's rounding is relative to the distance to the sphere.
fn outward(s: &Sphere, m: Vec3, d: Vec3, t: f32) -> Vec3 {
    if s.radius > 0.0 { (m + d * t) / s.radius } else { Vec3::ZERO }
}

/// Both crossings of the ray's interval with the sphere. The roots are taken in the
/// numerically stable form (`q = -(b + sign(b) h)`, roots `q / a` and `c / q`), which keeps a
/// root at `t = 0` exact when the segment starts on the surface.
pub fn crossings_scalar(ray: &Ray, s: &Sphere) -> Crossings {
    if !ray.is_valid() || !s.is_valid() {
        return Crossings::default();
    }
    let d = ray.dir;
    let m = ray.origin - s.center;
    let a = d.dot(d);
    let b = m.dot(d);
    let disc = a * (s.radius * s.radius) - m.cross(d).length_squared(); // b² - ac
    if !(0.0..f32::INFINITY).contains(&disc) {
        return Crossings::default(); // the line misses (or the input overflows f32)
    }
    let h = disc.sqrt();
    let c = m.dot(m) - s.radius * s.radius;
    let q = if b >= 0.0 { -(b + h) } else { h - b };
    let roots = if q == 0.0 {
        [0.0, 0.0] // b = 0 and a tangent line: a double root at the origin
    } else {
        let (r0, r1) = (q / a, c / q);
        [r0.min(r1), r0.max(r1)]
    };
    let [enter, exit] = roots.map(|t| {
        (t >= ray.t_min && t <= ray.t_max && t.is_finite()).then(|| Crossing { t, normal: outward(s, m, d, t) })
    });
    Crossings { enter, exit }
}

/// Lane results of [`crossings_lanes`]; `t` is `+inf` and the normal zero where absent.
#[derive(Clone, Copy, Debug)]
pub struct CrossingsLanes<L: Lanes> {
    /// Lanes with an entry.
    pub enter: L::Mask,
    /// Lanes with an exit.
    pub exit: L::Mask,
    /// Entry parameters.
    pub t_enter: L,
    /// Exit parameters.
    pub t_exit: L,
    /// Entry normals.
    pub n_enter: Vec3x<L>,
    /// Exit normals.
    pub n_exit: Vec3x<L>,
}

impl<L: Lanes> CrossingsLanes<L> {
    /// The scalar result of lane `i`.
    pub fn lane(&self, i: usize) -> Crossings {
        let pick = |m: L::Mask, t: L, n: &Vec3x<L>| m.lane(i).then(|| Crossing { t: t.lane(i), normal: n.lane(i) });
        Crossings {
            enter: pick(self.enter, self.t_enter, &self.n_enter),
            exit: pick(self.exit, self.t_exit, &self.n_exit),
        }
    }
}

/// Lanes twin of [`crossings_scalar`], with the cancellation-free root pair `q/a`, `c/q`.
#[inline(always)]
pub fn crossings_lanes<L: Lanes>(rays: &RayPacket<L>, s: &SphereLanes<L>) -> CrossingsLanes<L> {
    let zero = L::splat(0.0);
    let inf = L::splat(f32::INFINITY);
    let d = rays.dir;
    let m = rays.origin - s.center;
    let a = d.dot(d);
    let b = m.dot(d);
    let r2 = s.radius * s.radius;
    let c = m.dot(m) - r2;
    let mxd = m.cross(d);
    let disc = a * r2 - mxd.dot(mxd);
    let h = disc.sqrt();
    // q = -(b + sign(b) h): both roots without cancellation; q = 0 only for a double root at 0.
    let q = -(h.xor_sign(b) + b);
    let r1 = q / a;
    let r2_ = c / q;
    let q_zero = q.eq(zero);
    let t0 = L::select(q_zero, zero, r1.min(r2_));
    let t1 = L::select(q_zero, zero, r1.max(r2_));
    let live = rays.active() & disc.ge(zero) & disc.lt(inf);
    let in_range = |t: L| t.ge(rays.t_min) & t.le(rays.t_max) & t.lt(inf);
    let enter = live & in_range(t0);
    let exit = live & in_range(t1);
    let inv_r = L::splat(1.0) / s.radius;
    let has_r = s.radius.gt(zero);
    let normal = |m_: L::Mask, t: L| {
        // From the offset `m`, as the scalar twin (see `outward`).
        let n = m.mul_add(d, t).scale(inv_r);
        Vec3x::select(m_ & has_r, n, Vec3x::splat(Vec3::ZERO))
    };
    CrossingsLanes {
        enter,
        exit,
        t_enter: L::select(enter, t0, inf),
        t_exit: L::select(exit, t1, inf),
        n_enter: normal(enter, t0),
        n_exit: normal(exit, t1),
    }
}
