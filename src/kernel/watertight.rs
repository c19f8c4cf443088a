//! Watertight ray against triangle (Woop, Benthin & Wald, "Watertight Ray/Triangle
//! Intersection", JCGT 2013), two-sided, returning `(t, u, v)` like
//! [`super::ray_triangle`], with a tie rule so that a ray through a shared edge or vertex
//! of a closed mesh is counted once.
//!
//! **Set-up per ray** ([`ShearedRay`]): `kz` is the axis of largest `|d|` (the lowest axis
//! on a tie), `kx = kz + 1`, `ky = kx + 1` (mod 3), swapped when `d[kz] < 0` so the winding
//! is kept; the shear is `Sx = d[kx]/d[kz]`, `Sy = d[ky]/d[kz]`, `Sz = 1/d[kz]`.
//!
//! **Per triangle**: each vertex relative to the origin, `a = v - o`, goes to ray space as
//! `(a[kx] - Sx·a[kz], a[ky] - Sy·a[kz], Sz·a[kz])`, where the ray is the `z` axis. These
//! sheared coordinates depend only on the vertex and the ray, so every triangle sharing a
//! vertex sees the same numbers. The three edge functions are the 2D cross products
//! `e_A = B×C`, `e_B = C×A`, `e_C = A×B` (`P×Q = Px·Qy − Py·Qx`, no fused multiply-add): two
//! triangles that share an edge evaluate it with the end points swapped and get exactly the
//! negated value. When one is exactly `0` in f32 all three are recomputed in f64, where the
//! products of f32 numbers are exact, so the sign is the sign of the exact value.
//!
//! **Inside**: all edge functions of one sign `s` (a triangle facing either way is hit).
//! An edge function that is exactly zero (the ray passes through that edge's line) counts
//! as inside only by the **tie rule**: with `D = s·(Q − P)` the edge's 2D direction
//! (oriented by the triangle's facing), the edge accepts iff `D.y > 0`, or `D.y = 0` and
//! `D.x > 0`. This is the symbolic perturbation of the hit point by `(−ε, ε²)` in ray space,
//! the same for every triangle of the ray, so where a ray crosses a closed, consistently
//! oriented mesh through an edge or a vertex the crossings still sum to the winding number:
//! an edge between two triangles that face the same way is claimed by exactly one; a
//! silhouette edge (the triangles face opposite ways) by both or neither.
//!
//! **Distance**: `det = e_A + e_B + e_C`, `T = e_A·Az + e_B·Bz + e_C·Cz`; a hit needs
//! `det ≠ 0` (a triangle seen edge-on is missed) and `T/det` in `[t_min, t_max]`. The scalar
//! reference rejects on `T` against `t·det` (with a margin that can only reject what the
//! exact test rejects too) before it divides; `t = T·(1/det)`, `u = e_B·(1/det)`,
//! `v = e_C·(1/det)`.
//!
//! The lanes twins ([`intersect_lanes`] for `N` rays against `N` triangles,
//! [`intersect_lanes_one_ray`] for one ray against `N` triangles) evaluate the same f32
//! expressions in the same order, and send every lane with a zero edge function to the
//! scalar code: every lane equals [`intersect_scalar`] bit for bit.
//!
//! Degenerate triangles need no special case: one seen with zero area in ray space is
//! missed, any other is resolved by the edge functions like every triangle.
//!
//! **Boxes for a traversal** ([`traversal_bounds`]): the test decides on the rounded
//! ray-space coordinates, so it can claim a crossing a little outside the triangle's exact
//! box. The error has a part proportional to the ray's length to the hit, which the
//! traversal's relative slab slack covers, and a part proportional to the triangle's size
//! (a vertex far from the hit point still enters the edge functions), which it does not: a
//! 1000-long sliver crossed near its middle, 1 unit from the origin, is the case. A BVH over
//! triangles therefore bounds each one by its box widened by [`BOX_MARGIN`] of its largest
//! extent, so no box culls a hit this test reports.

use crate::kernel::ray_triangle::TriHit;
use crate::lanes::{Lanes, MAX_LANES, Mask};
use crate::prim::{Aabb, Triangle, TriangleLanes};
use crate::ray::{Ray, RayPacket};
use crate::vec3x::Vec3x;
use glam::{BVec3A, Vec3, Vec3A, Vec3Swizzles};

/// Relative margin of the division-free range pre-check (far above f32 rounding, so the
/// pre-check never rejects a hit that the exact test after the division keeps).
const PRECHECK_MARGIN: f32 = 1.0 / 1_048_576.0;
/// Largest `|det|` for the pre-check (`1/det` stays a normal f32 well above it).
const PRECHECK_MAX_DET: f32 = 1e30;

/// Relative margin of [`traversal_bounds`]: `2⁻¹⁷` of the triangle's largest extent, 128
/// times the f32 unit roundoff, far above the few roundings between a vertex and an edge
/// function (subtraction of the origin, shear, products).
pub const BOX_MARGIN: f32 = 1.0 / 131_072.0;

/// The box a BVH keeps for `tri` under the watertight test: its exact box widened on every
/// side by [`BOX_MARGIN`] of its largest extent, rounded outwards (so the widening survives
/// coordinates much larger than the triangle). A triangle whose extent is not finite (an
/// infinite coordinate) keeps its plain box; scenes hold only finite triangles.
pub fn traversal_bounds(tri: &Triangle) -> Aabb {
    let b = tri.aabb();
    let m = (b.max - b.min).max_element() * BOX_MARGIN;
    if !m.is_finite() {
        return b;
    }
    Aabb::new((b.min - m).map(f32::next_down), (b.max + m).map(f32::next_up))
}

/// One ray's set-up for the watertight test: origin, axis permutation and shear.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShearedRay {
    /// Ray origin.
    pub origin: Vec3,
    /// `[kx, ky, kz]`: the axes that become ray space's x, y and z.
    pub axes: [usize; 3],
    /// `(Sx, Sy, Sz)`.
    pub shear: Vec3,
    /// The origin's coordinates in the order of `axes`: `(o[kx], o[ky], o[kz])`.
    pub origin_in_axes: Vec3,
}

impl ShearedRay {
    /// The set-up of a valid ray; `None` for an invalid one ([`Ray::is_valid`]).
    pub fn new(ray: &Ray) -> Option<Self> {
        if !ray.is_valid() {
            return None;
        }
        Some(Self::of_valid(ray))
    }

    /// The set-up of a ray already known to be valid ([`Ray::is_valid`]); for an invalid
    /// one the result is unspecified (but no panic).
    #[inline(always)]
    pub fn of_valid(ray: &Ray) -> Self {
        Self::of(ray.origin, ray.dir)
    }

    /// The set-up for origin `o` and a finite, non-zero direction `d`.
    #[inline(always)]
    fn of(o: Vec3, d: Vec3) -> Self {
        let a = d.abs();
        let kz = if a.x >= a.y && a.x >= a.z {
            0
        } else if a.y >= a.z {
            1
        } else {
            2
        };
        // Both vectors are permuted in registers (a rotation chosen by `kz`, then x and y
        // swapped when `d[kz] < 0`), with no round trip through memory to index them, and
        // the three quotients of the shear come from one 4-wide division (each lane is the
        // same IEEE quotient as a scalar division).
        let (at0, at1) = (BVec3A::splat(kz == 0), BVec3A::splat(kz == 1));
        let rotate = |v: Vec3A| Vec3A::select(at0, v.yzx(), Vec3A::select(at1, v.zxy(), v));
        let (dr, or) = (rotate(Vec3A::from(d)), rotate(Vec3A::from(o)));
        let swap = dr.z < 0.0;
        let flip = BVec3A::splat(swap);
        let (dr, or) = (Vec3A::select(flip, dr.yxz(), dr), Vec3A::select(flip, or.yxz(), or));
        const NEXT: [usize; 3] = [1, 2, 0];
        const AFTER: [usize; 3] = [2, 0, 1];
        let (mut kx, mut ky) = (NEXT[kz], AFTER[kz]);
        if swap {
            core::mem::swap(&mut kx, &mut ky);
        }
        Self {
            origin: o,
            axes: [kx, ky, kz],
            shear: Vec3::from(Vec3A::new(dr.x, dr.y, 1.0) / dr.z),
            origin_in_axes: Vec3::from(or),
        }
    }

    /// Vertex `v` in ray space: `(a[kx] − Sx·a[kz], a[ky] − Sy·a[kz], Sz·a[kz])`, `a = v − o`.
    #[inline(always)]
    pub fn vertex(&self, v: Vec3) -> [f32; 3] {
        let a = (v - self.origin).to_array();
        let [kx, ky, kz] = self.axes;
        let (s, az) = (self.shear, a[kz]);
        [a[kx] - s.x * az, a[ky] - s.y * az, s.z * az]
    }
}

/// The 2D cross product `P×Q = Px·Qy − Py·Qx` (two products, one subtraction).
#[inline(always)]
fn cross2(p: [f32; 3], q: [f32; 3]) -> f32 {
    p[0] * q[1] - p[1] * q[0]
}

/// [`cross2`] in f64: the products of f32 numbers are exact, so the sign is exact.
#[inline(always)]
fn cross2_f64(p: [f32; 3], q: [f32; 3]) -> f64 {
    f64::from(p[0]) * f64::from(q[1]) - f64::from(p[1]) * f64::from(q[0])
}

/// The tie rule for an edge `P → Q` whose edge function is exactly zero, in a triangle of
/// facing `s` (`true`: positive edge functions).
#[inline(always)]
fn edge_claims(p: [f32; 3], q: [f32; 3], positive: bool) -> bool {
    // Q − P in f32 has the exact sign (and is zero only when equal); negating is exact.
    let (mut dx, mut dy) = (q[0] - p[0], q[1] - p[1]);
    if !positive {
        (dx, dy) = (-dx, -dy);
    }
    dy > 0.0 || (dy == 0.0 && dx > 0.0)
}

/// Watertight test, scalar reference: `None` for a miss, an invalid ray or a triangle with
/// a non-finite vertex.
pub fn intersect_scalar(ray: &Ray, tri: &Triangle) -> Option<TriHit> {
    let s = ShearedRay::new(ray)?;
    intersect_sheared(&s, ray.t_min, ray.t_max, tri)
}

/// [`intersect_scalar`] for a ray already set up (`t_min`, `t_max` its interval): what a
/// traversal calls per triangle.
#[inline(always)]
pub fn intersect_sheared(s: &ShearedRay, t_min: f32, t_max: f32, tri: &Triangle) -> Option<TriHit> {
    let [a, b, c] = tri.v.map(|v| s.vertex(v));
    decide(a, b, c, t_min, t_max)
}

/// The test on vertices already in ray space.
#[inline(always)]
fn decide(a: [f32; 3], b: [f32; 3], c: [f32; 3], t_min: f32, t_max: f32) -> Option<TriHit> {
    let (ea, eb, ec) = (cross2(b, c), cross2(c, a), cross2(a, b));
    if (ea < 0.0 || eb < 0.0 || ec < 0.0) && (ea > 0.0 || eb > 0.0 || ec > 0.0) {
        return None; // the ray passes outside (NaN compares false and is caught below)
    }
    if ea == 0.0 || eb == 0.0 || ec == 0.0 {
        return decide_exact(a, b, c, t_min, t_max);
    }
    let det = (ea + eb) + ec;
    let t_num = (ea * a[2] + eb * b[2]) + ec * c[2];
    // A division-free test against t_max first (sign-normalised; only where every number
    // involved is a normal f32, so its margin covers the rounding), the exact test after
    // dividing. It only ever rejects what the exact test rejects, so the lanes twins, which
    // skip it, give the same answers.
    let (tn, dn) = if det < 0.0 { (-t_num, -det) } else { (t_num, det) };
    let hi = t_max * dn;
    if t_max.is_normal() && hi.is_normal() && dn < PRECHECK_MAX_DET && tn > hi + hi.abs() * PRECHECK_MARGIN {
        return None;
    }
    finish(t_num, det, eb, ec, t_min, t_max)
}

/// Shared end of both paths: divide once, check the interval (also rejects NaN and an
/// infinite `t`).
#[inline(always)]
fn finish(t_num: f32, det: f32, eb: f32, ec: f32, t_min: f32, t_max: f32) -> Option<TriHit> {
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let rcp = 1.0 / det;
    let t = t_num * rcp;
    (t >= t_min && t <= t_max && t < f32::INFINITY).then_some(TriHit { t, u: eb * rcp, v: ec * rcp })
}

/// The path for an edge function that is zero in f32: exact signs in f64, the tie rule, and
/// `t`, `u`, `v` from the f64 values. Cold: rays through edges and vertices only.
#[cold]
#[inline(never)]
fn decide_exact(a: [f32; 3], b: [f32; 3], c: [f32; 3], t_min: f32, t_max: f32) -> Option<TriHit> {
    let e = [cross2_f64(b, c), cross2_f64(c, a), cross2_f64(a, b)];
    let pos = e.iter().any(|&x| x > 0.0);
    let neg = e.iter().any(|&x| x < 0.0);
    if pos == neg {
        return None; // mixed signs (outside), all zero (edge-on), or NaN
    }
    // Edge of each edge function: e_A is B → C, e_B is C → A, e_C is A → B.
    let edges = [(b, c), (c, a), (a, b)];
    for (x, (p, q)) in e.iter().zip(edges) {
        if *x == 0.0 && !edge_claims(p, q, pos) {
            return None;
        }
    }
    let det = e[0] + e[1] + e[2];
    let t_num = e[0] * f64::from(a[2]) + e[1] * f64::from(b[2]) + e[2] * f64::from(c[2]);
    let rcp = 1.0 / det;
    let t = (t_num * rcp) as f32;
    (t >= t_min && t <= t_max && t < f32::INFINITY).then_some(TriHit {
        t,
        u: (e[1] * rcp) as f32,
        v: (e[2] * rcp) as f32,
    })
}

// ---------------------------------------------------------------------------------------
// Lanes

/// `N` rays set up for the watertight test (lane `i` is [`ShearedRay::new`] of ray `i`):
/// the axis choice as masks, the shear, and the packet (origins, intervals, active lanes).
#[derive(Clone, Copy, Debug)]
pub struct ShearedLanes<L: Lanes> {
    /// The rays.
    pub rays: RayPacket<L>,
    /// Per ray-space axis (x, y, z): masks "this axis is world x" and "… world y".
    is_x: [L::Mask; 3],
    is_y: [L::Mask; 3],
    /// `[kx, ky, kz]` when every active lane has the same (a coherent packet): vertices are
    /// then permuted by picking registers instead of blending.
    axes: Option<[usize; 3]>,
    shear: Vec3x<L>,
}

impl<L: Lanes> ShearedLanes<L> {
    /// Sets up every lane of `rays` (inactive lanes get harmless values and never hit).
    #[inline(always)]
    pub fn new(rays: &RayPacket<L>) -> Self {
        let d = rays.dir;
        let a = d.abs();
        // kz: the lowest axis of largest |d|, as in ShearedRay::of.
        let z_is_x = a.x.ge(a.y) & a.x.ge(a.z);
        let z_is_y = !z_is_x & a.y.ge(a.z);
        let z_is_z = !(z_is_x | z_is_y);
        // kx = kz + 1, ky = kz + 2 (mod 3); swapped when d[kz] < 0.
        let dz = L::select(z_is_x, d.x, L::select(z_is_y, d.y, d.z));
        let swap = dz.lt(L::splat(0.0));
        let (x1_is_x, x1_is_y) = (z_is_z, z_is_x); // kz + 1
        let (y1_is_x, y1_is_y) = (z_is_y, z_is_z); // kz + 2
        let x_is_x = (swap & y1_is_x) | (!swap & x1_is_x);
        let x_is_y = (swap & y1_is_y) | (!swap & x1_is_y);
        let y_is_x = (swap & x1_is_x) | (!swap & y1_is_x);
        let y_is_y = (swap & x1_is_y) | (!swap & y1_is_y);
        let pick = |is_x: L::Mask, is_y: L::Mask, v: &Vec3x<L>| L::select(is_x, v.x, L::select(is_y, v.y, v.z));
        let (dx, dy) = (pick(x_is_x, x_is_y, &d), pick(y_is_x, y_is_y, &d));
        let one = L::splat(1.0);
        // Inactive lanes may have dz = 0: their results are masked off.
        let shear = Vec3x::new(dx / dz, dy / dz, one / dz);
        let (is_x, is_y) = ([x_is_x, y_is_x, z_is_x], [x_is_y, y_is_y, z_is_y]);
        let act = rays.active().bitmask();
        let mut axes = Some([0usize; 3]);
        for k in 0..3 {
            let (mx, my) = (is_x[k].bitmask() & act, is_y[k].bitmask() & act);
            let axis = match (mx, my) {
                (m, 0) if m == act => Some(0),
                (0, m) if m == act => Some(1),
                (0, 0) => Some(2),
                _ => None,
            };
            if let (Some(a), Some(v)) = (axes.as_mut(), axis) {
                a[k] = v;
            } else {
                axes = None;
            }
        }
        Self { rays: *rays, is_x, is_y, axes, shear }
    }

    /// Vertices `v` in ray space, lane by lane (as [`ShearedRay::vertex`]).
    #[inline(always)]
    fn vertex(&self, v: &Vec3x<L>) -> Vec3x<L> {
        let a = *v - self.rays.origin;
        let (ax, ay, az) = match self.axes {
            Some(k) => {
                let c = [a.x, a.y, a.z];
                (c[k[0]], c[k[1]], c[k[2]])
            }
            None => {
                let pick = |k: usize| L::select(self.is_x[k], a.x, L::select(self.is_y[k], a.y, a.z));
                (pick(0), pick(1), pick(2))
            }
        };
        Vec3x::new(ax - self.shear.x * az, ay - self.shear.y * az, self.shear.z * az)
    }
}

/// Lanes twin of [`intersect_scalar`]: ray `i` against triangle `i`; `(hit, t, u, v)`,
/// misses are `(+inf, 0, 0)`.
#[inline(always)]
pub fn intersect_lanes<L: Lanes>(rays: &ShearedLanes<L>, tri: &TriangleLanes<L>) -> (L::Mask, L, L, L) {
    let (a, b, c) = (rays.vertex(&tri.v0), rays.vertex(&tri.v1), rays.vertex(&tri.v2));
    decide_lanes(a, b, c, rays.rays.t_min, rays.rays.t_max, rays.rays.active())
}

/// One ray against `N` triangles whose columns were loaded in ray-space order (`x`, `y`, `z`
/// of each vertex are world axes `kx`, `ky`, `kz`; see `Soa::triangle_lanes_in`):
/// the single-ray traversal's leaf test. `t_min`/`t_max` are the ray's interval; lanes
/// outside `active` are misses.
#[inline(always)]
pub fn intersect_lanes_one_ray<L: Lanes>(
    s: &ShearedRay,
    t_min: f32,
    t_max: f32,
    permuted: &TriangleLanes<L>,
    active: L::Mask,
) -> (L::Mask, L, L, L) {
    let o = s.origin_in_axes;
    let (ox, oy, oz) = (L::splat(o.x), L::splat(o.y), L::splat(o.z));
    let (sx, sy, sz) = (L::splat(s.shear.x), L::splat(s.shear.y), L::splat(s.shear.z));
    let to_ray = |v: &Vec3x<L>| {
        let (ax, ay, az) = (v.x - ox, v.y - oy, v.z - oz);
        Vec3x::new(ax - sx * az, ay - sy * az, sz * az)
    };
    let (a, b, c) = (to_ray(&permuted.v0), to_ray(&permuted.v1), to_ray(&permuted.v2));
    decide_lanes(a, b, c, L::splat(t_min), L::splat(t_max), active)
}

/// Lanes twin of [`decide`]: the f32 path for all lanes; lanes with a zero edge function go
/// through the scalar exact path.
#[inline(always)]
fn decide_lanes<L: Lanes>(
    a: Vec3x<L>,
    b: Vec3x<L>,
    c: Vec3x<L>,
    t_min: L,
    t_max: L,
    active: L::Mask,
) -> (L::Mask, L, L, L) {
    let zero = L::splat(0.0);
    let inf = L::splat(f32::INFINITY);
    let ea = b.x * c.y - b.y * c.x;
    let eb = c.x * a.y - c.y * a.x;
    let ec = a.x * b.y - a.y * b.x;
    let neg = ea.lt(zero) | eb.lt(zero) | ec.lt(zero);
    let pos = ea.gt(zero) | eb.gt(zero) | ec.gt(zero);
    let on_edge = ea.eq(zero) | eb.eq(zero) | ec.eq(zero);
    let candidate = active & !(neg & pos);
    if candidate.none() {
        // Most leaf tests miss every lane: skip the division.
        return (candidate, inf, zero, zero);
    }
    let det = (ea + eb) + ec;
    let t_num = (ea * a.z + eb * b.z) + ec * c.z;
    let rcp = L::splat(1.0) / det;
    let t = t_num * rcp;
    let mut hit = candidate & !on_edge & det.ne(zero) & det.is_finite() & t.ge(t_min) & t.le(t_max) & t.lt(inf);
    let (mut t, mut u, mut v) =
        (L::select(hit, t, inf), L::select(hit, eb * rcp, zero), L::select(hit, ec * rcp, zero));
    let exact = (candidate & on_edge).bitmask();
    if exact != 0 {
        // Rays through an edge's line: rare, so out of line, lane by lane, in scalar code.
        (hit, t, u, v) = fix_exact_lanes((a, b, c), (t_min, t_max), exact, (hit, t, u, v));
    }
    (hit, t, u, v)
}

/// The lanes in `exact` (a zero edge function) recomputed with the scalar exact path
/// ([`decide_exact`]) and merged into `(hit, t, u, v)`.
#[cold]
#[inline(never)]
fn fix_exact_lanes<L: Lanes>(
    (a, b, c): (Vec3x<L>, Vec3x<L>, Vec3x<L>),
    (t_min, t_max): (L, L),
    mut exact: u32,
    (hit, t, u, v): (L::Mask, L, L, L),
) -> (L::Mask, L, L, L) {
    let mut buf = [[0f32; MAX_LANES]; 3];
    t.store(&mut buf[0][..L::N]);
    u.store(&mut buf[1][..L::N]);
    v.store(&mut buf[2][..L::N]);
    let mut bits = hit.bitmask();
    while exact != 0 {
        let i = exact.trailing_zeros() as usize;
        exact &= exact - 1;
        let lane = |p: &Vec3x<L>| [p.x.lane(i), p.y.lane(i), p.z.lane(i)];
        if let Some(h) = decide_exact(lane(&a), lane(&b), lane(&c), t_min.lane(i), t_max.lane(i)) {
            buf[0][i] = h.t;
            buf[1][i] = h.u;
            buf[2][i] = h.v;
            bits |= 1 << i;
        }
    }
    (L::Mask::from_bitmask(bits), L::load(&buf[0][..L::N]), L::load(&buf[1][..L::N]), L::load(&buf[2][..L::N]))
}
