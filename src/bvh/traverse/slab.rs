//! The traversal's ray–box test: the slab test of one ray against the child boxes of a wide
//! node ([`TraversalRay::test`]), of a packet against one box ([`PacketRay`]), their
//! operation-for-operation scalar twin ([`twin_scalar`]), and the scalar backend's textbook
//! form ([`textbook_scalar`]).
//!
//! All of them are *conservative*: the interval is widened by [`TRAVERSAL_SLACK`] (after Ize,
//! *Robust BVH Ray Traversal*, 2013), so a box that holds a primitive the kernels hit is never
//! culled by rounding. The NaN rule is the one of [`crate::kernel::ray_aabb`]: a ray lying in a
//! slab plane produces `0 · inf = NaN` there, which the `max`/`min` fold drops.

use crate::bvh::WideNode;
use crate::lanes::{Lanes, Mask};
use crate::prim::Aabb;
use crate::ray::{Ray, RayPacket};
use crate::vec3x::Vec3x;

/// Relative widening of a slab interval used by BVH traversal (2⁻²⁰ ≈ 16 ulps, more than
/// the rounding of the slab computation, after Ize, *Robust BVH Ray Traversal*, 2013): a box
/// that contains a primitive the kernels hit is never culled by rounding.
pub const TRAVERSAL_SLACK: f32 = 1.0 / 1_048_576.0;

/// Scale of far-plane distances and of `t_max` in traversal slab tests, `1 + 2·`
/// [`TRAVERSAL_SLACK`]. Folded into a per-ray `1/d` for the far planes, it widens the slab
/// interval at no cost per box (after Ize, who scales the far distances by `1 + 2γ₃`).
///
/// Scaling widens a non-negative exit time only: rounding never flips the sign of a slab
/// distance, and with `t_min >= 0` a box whose exit time is negative is behind the ray and
/// rightly missed. Rays whose interval reaches below 0 get [`widen_signed_lanes`] as well.
pub const FAR_SCALE: f32 = 1.0 + 2.0 * TRAVERSAL_SLACK;

/// The extra widening of rays with `t_min < 0`: `t_enter` lowered by [`TRAVERSAL_SLACK`]
/// relative, `t_exit` raised by three times that, which turns the far scale's narrowing of a
/// negative exit time (`(1 + 2k)`) into a widening (`(1 + 2k)(1 - 3k) < 1 - k`). NaN stays
/// NaN (a miss).
#[inline(always)]
pub fn widen_signed_lanes<L: Lanes>(t_enter: L, t_exit: L) -> (L, L) {
    let (k, k3) = (L::splat(TRAVERSAL_SLACK), L::splat(3.0 * TRAVERSAL_SLACK));
    (t_enter - t_enter.abs() * k, t_exit + t_exit.abs() * k3)
}

/// Scalar twin of [`widen_signed_lanes`].
#[inline(always)]
pub fn widen_signed_scalar(t_enter: f32, t_exit: f32) -> (f32, f32) {
    let k = TRAVERSAL_SLACK;
    (t_enter - t_enter.abs() * k, t_exit + t_exit.abs() * (3.0 * k))
}

/// The upper bound a traversal compares stored entry times with: `t` widened by twice
/// [`TRAVERSAL_SLACK`] (a subtree entered at the best hit's `t`, up to rounding, may still
/// hold an equally near primitive with smaller ids).
#[inline(always)]
pub fn cull_bound(t: f32) -> f32 {
    t + t.abs() * (2.0 * TRAVERSAL_SLACK)
}

/// [`cull_bound`] in every lane (the same operations): what a packet traversal compares
/// its lanes' stored entry times with.
#[inline(always)]
pub fn cull_bound_lanes<L: Lanes>(t: L) -> L {
    t + t.abs() * L::splat(2.0 * TRAVERSAL_SLACK)
}

/// One ray set up for traversal slab tests against many boxes (a wide node's children):
/// broadcast origin, `1/d` for the near planes and `1/d ·` [`FAR_SCALE`] for the far ones,
/// which plane is near on each axis (from the sign of `1/d`), and whether the interval
/// reaches below 0. Boxes are BVH boxes: finite with `min <= max`, or the empty box
/// `(+inf, -inf)` of an unused slot, which is never hit.
#[derive(Clone, Copy, Debug)]
pub struct TraversalRay<L: Lanes> {
    origin: Vec3x<L>,
    inv: Vec3x<L>,
    inv_far: Vec3x<L>,
    t_min: L,
    signed: bool,
    /// Per axis, where the near plane's column starts in a node's
    /// [`WideNode::box_columns`]: `(axis + 3 · side) · N` (side 1, the max column, when
    /// `1/d < 0` on that axis), so at most `5 · N`; the far plane's is the other side's,
    /// `(2 · axis + 3) · N` minus that.
    near: [usize; 3],
}

impl<L: Lanes> TraversalRay<L> {
    /// Sets up `ray` (its `t_max` is not used: each test gets the current one).
    #[inline(always)]
    pub fn new(ray: &Ray) -> Self {
        let inv = ray.dir.recip();
        let neg = [inv.x < 0.0, inv.y < 0.0, inv.z < 0.0];
        let column = |axis: usize, max: bool| (axis + if max { 3 } else { 0 }) * L::N;
        Self {
            origin: Vec3x::splat(ray.origin),
            inv: Vec3x::splat(inv),
            inv_far: Vec3x::splat(inv * FAR_SCALE),
            t_min: L::splat(ray.t_min),
            signed: ray.t_min < 0.0,
            // Written out: as `[0, 1, 2].map(..)` this became an out-of-line `array::try_map`
            // call per ray (a `vzeroupper` and spills) once a change elsewhere grew the query
            // function, and single rays ran 10-20 % slower (see ARCHITECTURE.md).
            near: [column(0, neg[0]), column(1, neg[1]), column(2, neg[2])],
        }
    }

    /// [`TraversalRay::test`] against the child boxes of `node`, the same lanes (as bits,
    /// bit `i` for child `i`) and entry times, reading each plane's column at an offset
    /// chosen once per ray (no per-node choice of column).
    #[inline(always)]
    pub fn test_node<N: WideNode>(&self, node: &N, t_max: f32) -> (u32, L) {
        const { assert!(L::N == N::WIDTH, "the lanes must be as wide as the nodes") };
        let cols = node.box_columns();
        assert!(cols.len() == 6 * L::N, "a node has six box columns");
        // SAFETY: every offset in `near` is `(axis + 3 · side) · N` with `axis < 3` and
        // `side <= 1` (set in `new`, never changed), and the far one is the other side's: at
        // most `5 · N`, so the `N` values read from there lie within the `6 · N` of `cols`.
        let load = |at: usize| unsafe { L::load_ptr(cols.as_ptr().add(at)) };
        let (nx, ny, nz) = (load(self.near[0]), load(self.near[1]), load(self.near[2]));
        let far = |a: usize| (2 * a + 3) * L::N - self.near[a];
        let (fx, fy, fz) = (load(far(0)), load(far(1)), load(far(2)));
        let (tn, tf) = self.fold(nx, ny, nz, fx, fy, fz, t_max);
        (tn.le_bits(tf), tn)
    }

    /// Slab test against the boxes whose columns are `[min_x, min_y, min_z, max_x, max_y,
    /// max_z]` (at least `N` values each) for `t ∈ [t_min, t_max]`: the hit lanes and the
    /// entry times. Equal, lane by lane, to [`twin_scalar`].
    #[inline(always)]
    pub fn test(&self, columns: [&[f32]; 6], t_max: f32) -> (L::Mask, L) {
        let [mnx, mny, mnz, mxx, mxy, mxz] = columns;
        // The near/far choice picks which column to load (no select on the values).
        let pick = |neg: bool, lo: &[f32], hi: &[f32]| {
            if neg { (L::load(hi), L::load(lo)) } else { (L::load(lo), L::load(hi)) }
        };
        let neg = |axis: usize| self.near[axis] >= 3 * L::N;
        let (nx, fx) = pick(neg(0), mnx, mxx);
        let (ny, fy) = pick(neg(1), mny, mxy);
        let (nz, fz) = pick(neg(2), mnz, mxz);
        let (tn, tf) = self.fold(nx, ny, nz, fx, fy, fz, t_max);
        (tn.le(tf), tn)
    }

    /// The slab arithmetic on the near and far planes of each axis: the entry and exit
    /// times (a box is hit where entry <= exit).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn fold(&self, nx: L, ny: L, nz: L, fx: L, fy: L, fz: L, t_max: f32) -> (L, L) {
        let (o, inv, inv_far) = (&self.origin, &self.inv, &self.inv_far);
        // NaN (a ray lying in a slab plane) is dropped by the fold: see the module docs.
        let tn = ((nz - o.z) * inv.z).max(((ny - o.y) * inv.y).max(((nx - o.x) * inv.x).max(self.t_min)));
        let tf = ((fz - o.z) * inv_far.z)
            .min(((fy - o.y) * inv_far.y).min(((fx - o.x) * inv_far.x).min(L::splat(t_max * FAR_SCALE))));
        if self.signed { widen_signed_lanes(tn, tf) } else { (tn, tf) }
    }
}

/// Scalar twin of [`TraversalRay::test`] and [`PacketRay::test`] for one box: the entry time
/// if `ray` meets `b` within `[t_min, t_max]`, widened as the lanes versions are. It mirrors the lanes arithmetic operation for operation,
/// including the NaN rule of the fold, so both agree exactly.
pub fn twin_scalar(ray: &Ray, t_max: f32, b: &Aabb) -> Option<f32> {
    // The lanes' `max`/`min`: the second operand when either is NaN.
    let max = |a: f32, b: f32| if a > b { a } else { b };
    let min = |a: f32, b: f32| if a < b { a } else { b };
    let inv = ray.dir.recip();
    let inv_far = inv * FAR_SCALE;
    let (mut tn, mut tf) = (ray.t_min, t_max * FAR_SCALE);
    for i in 0..3 {
        let (near, far) = if inv[i] < 0.0 { (b.max[i], b.min[i]) } else { (b.min[i], b.max[i]) };
        tn = max((near - ray.origin[i]) * inv[i], tn);
        tf = min((far - ray.origin[i]) * inv_far[i], tf);
    }
    let (tn, tf) = if ray.t_min < 0.0 { widen_signed_scalar(tn, tf) } else { (tn, tf) };
    (tn <= tf).then_some(tn)
}

/// The scalar backend's traversal slab test: the textbook form (Ericson 5.3.3: `1/d` per
/// axis, a ray parallel to a slab decided by a branch, near and far planes ordered by
/// comparison), its interval widened by [`TRAVERSAL_SLACK`] at both ends. This is the
/// reference the SIMD traversal is measured against in the benches; [`twin_scalar`] is
/// the SIMD test's operation-for-operation twin (used by the tests), which as a scalar
/// traversal measured 1.7–2.9× faster than this form (traversal bench, one run each).
pub fn textbook_scalar(ray: &Ray, t_max: f32, b: &Aabb) -> Option<f32> {
    if !b.is_valid() {
        return None;
    }
    let mut t = (ray.t_min, t_max);
    for i in 0..3 {
        let ood = 1.0 / ray.dir[i];
        if ood.is_infinite() {
            if ray.origin[i] < b.min[i] || ray.origin[i] > b.max[i] {
                return None;
            }
        } else {
            let (mut near, mut far) = ((b.min[i] - ray.origin[i]) * ood, (b.max[i] - ray.origin[i]) * ood);
            if near > far {
                core::mem::swap(&mut near, &mut far);
            }
            t = (t.0.max(near), t.1.min(far));
        }
    }
    let (tn, tf) = (t.0 - t.0.abs() * TRAVERSAL_SLACK, t.1 + t.1.abs() * TRAVERSAL_SLACK);
    (tn <= tf).then_some(tn)
}

/// A packet of rays set up for traversal slab tests ([`packet_wide`](super::packet_wide)):
/// `1/d` for the near planes and `1/d ·` [`FAR_SCALE`] for the far ones, and whether any
/// lane's interval reaches below 0. When the rays' directions share an octant (the sign of
/// `1/d` per axis, the same in every lane), the traversal picks the near and far columns
/// once per node ([`PacketRay::test_ordered`]) instead of selecting per lane and per box
/// ([`PacketRay::test`]); both equal [`twin_scalar`] lane by lane.
#[derive(Clone, Copy, Debug)]
pub struct PacketRay<L: Lanes> {
    origin: Vec3x<L>,
    inv: Vec3x<L>,
    inv_far: Vec3x<L>,
    t_min: L,
    signed: L::Mask,
    any_signed: bool,
}

impl<L: Lanes> PacketRay<L> {
    /// Sets up the rays of `rays` (their `t_max` is not used: each test gets the current one).
    #[inline(always)]
    pub fn new(rays: &RayPacket<L>) -> Self {
        let inv = rays.dir.recip();
        let far = L::splat(FAR_SCALE);
        let signed = rays.t_min.lt(L::splat(0.0));
        Self {
            origin: rays.origin,
            inv,
            inv_far: Vec3x::new(inv.x * far, inv.y * far, inv.z * far),
            t_min: rays.t_min,
            signed,
            any_signed: signed.any(),
        }
    }

    /// Per axis, whether `1/d < 0` in every lane of `lanes` (a bit set), when all those lanes
    /// agree on all three axes; `None` otherwise.
    #[inline(always)]
    #[must_use]
    pub fn octant(&self, lanes: u32) -> Option<[bool; 3]> {
        let zero = L::splat(0.0);
        let mut neg = [false; 3];
        for (n, v) in neg.iter_mut().zip([self.inv.x, self.inv.y, self.inv.z]) {
            let bits = v.lt(zero).bitmask() & lanes;
            if bits != 0 && bits != lanes {
                return None;
            }
            *n = bits != 0;
        }
        Some(neg)
    }

    /// The slab test against one box in every lane, `bmin`/`bmax` its corners (the near and
    /// far planes chosen per lane): `(hit, t_enter)`, equal to [`twin_scalar`] lane by lane.
    /// Its arithmetic repeats [`slab_lanes`](crate::kernel::ray_aabb::slab_lanes) with a
    /// second `1/d`; one shared helper for both (and for [`TraversalRay::test`]) was tried
    /// and measured 3–5 % slower on primary rays, through code layout alone.
    #[inline(always)]
    pub fn test(&self, bmin: Vec3x<L>, bmax: Vec3x<L>, t_max: L) -> (L::Mask, L) {
        let zero = L::splat(0.0);
        let pick = |inv: L, lo: L, hi: L| {
            let neg = inv.lt(zero);
            (L::select(neg, hi, lo), L::select(neg, lo, hi))
        };
        let (nx, fx) = pick(self.inv.x, bmin.x, bmax.x);
        let (ny, fy) = pick(self.inv.y, bmin.y, bmax.y);
        let (nz, fz) = pick(self.inv.z, bmin.z, bmax.z);
        self.test_ordered(Vec3x::new(nx, ny, nz), Vec3x::new(fx, fy, fz), t_max)
    }

    /// The slab test against one box whose near and far corners along the rays are given
    /// (`near` = the box's max on axes where `1/d < 0`, its min elsewhere): valid only for
    /// lanes in the octant the corners were picked for, where it equals [`Self::test`].
    #[inline(always)]
    pub fn test_ordered(&self, near: Vec3x<L>, far: Vec3x<L>, t_max: L) -> (L::Mask, L) {
        let (o, inv, inv_far) = (&self.origin, &self.inv, &self.inv_far);
        let (nx, fx) = ((near.x - o.x) * inv.x, (far.x - o.x) * inv_far.x);
        let (ny, fy) = ((near.y - o.y) * inv.y, (far.y - o.y) * inv_far.y);
        let (nz, fz) = ((near.z - o.z) * inv.z, (far.z - o.z) * inv_far.z);
        let tn = nz.max(ny.max(nx.max(self.t_min)));
        let tf = fz.min(fy.min(fx.min(t_max * L::splat(FAR_SCALE))));
        let (tn, tf) = if self.any_signed {
            let (wn, wf) = widen_signed_lanes(tn, tf);
            (L::select(self.signed, wn, tn), L::select(self.signed, wf, tf))
        } else {
            (tn, tf)
        };
        (tn.le(tf), tn)
    }
}
