//! Scene queries: the query policy on top of [`crate::bvh::traverse`]. What a leaf does
//! (the kind's kernels), which hit is best (nearest `t`, ties to the smaller `(geom, prim)`),
//! the planes beside the trees, the ids and the final hit record; closest hit and any hit for
//! single rays in every backend, packets of 4/8 rays, all-core batches and line of sight.
//! Queries do not allocate: traversal stacks live on the call stack (single rays) or in a
//! caller-owned [`PacketScratch`], batch scratch is per rayon task.

use super::kind::{KindBvh, LeafPacket, LeafRay, Traceable};
use super::{Backend, Scene, TriangleTest};
use crate::bvh::traverse::{self, AnyHit, Closest, LeafAction, Mode, PacketLeafAction, TraversalRay, TraversalStack};
use crate::bvh::{Node4, Node8, Node16, WideBvh, WideNode};
use crate::hit::{Hit, HitKind, HitPacket, HitSoa, HitStage, NO_ID};
use crate::kernel::ray_plane;
use crate::kernel::watertight::{ShearedLanes, ShearedRay};
use crate::lanes::{F32x4, F32x8, F32x16, Lanes, MAX_PACKET_LANES, Mask};
use crate::prim::{Aabb, Sphere, Triangle};
use crate::ray::{PacketColumns, Ray, RayPacket, RaySoa};
use glam::{Vec3, Vec3A};
use rayon::prelude::*;

/// True when the directions of the `active` lanes all lie in one octant (the same signs of
/// x, y and z; `-0.0` counts as negative, its reciprocal being `-inf`): a packet worth
/// traversing together. Rays of different octants order a node's children differently and
/// part ways early; those go one at a time. The octant is the traversal's own
/// ([`crate::bvh::traverse::PacketRay::octant`], which then picks each node's near and far
/// planes once), read from the directions' sign bits instead of their reciprocals (the sign
/// of `1/d` is the sign bit of `d` for every non-NaN `d`, and active lanes have finite
/// directions): no divisions for a packet that then goes lane by lane.
#[inline]
fn same_octant<L: Lanes>(rays: &RayPacket<L>, active: L::Mask) -> bool {
    let (lanes, one, zero) = (active.bitmask(), L::splat(1.0), L::splat(0.0));
    [rays.dir.x, rays.dir.y, rays.dir.z].into_iter().all(|d| {
        // `1` with the sign of `d`: negative exactly where the sign bit is set.
        let neg = one.xor_sign(d).lt(zero).bitmask() & lanes;
        neg == 0 || neg == lanes
    })
}

/// The single-ray query's paths, one out-of-line function each ([`Scene::trace_by_value`]).
const PATH_SCALAR: u8 = 0;
const PATH_X4: u8 = 1;
const PATH_X8: u8 = 2;
const PATH_X16: u8 = 3;

/// The best hit so far: key `t`, with its barycentrics.
type Best<'a> = super::best::Best<'a, (f32, f32)>;

/// A ray prepared for wide traversal: the slab-test setup and the ray for the leaf kernels.
pub(super) struct Prepared<L: Lanes> {
    pub(super) ray: TraversalRay<L>,
    pub(super) leaf: LeafRay<L>,
}

impl<L: Lanes> Prepared<L> {
    /// Prepares a ray already known to be valid.
    #[inline(always)]
    pub(super) fn new(ray: &Ray, test: TriangleTest) -> Self {
        Self { ray: TraversalRay::new(ray), leaf: LeafRay::new_valid(ray, test) }
    }
}

/// The leaf policy of a single-ray wide traversal: the kind's lanes kernel, `N` primitives
/// at a time, offering hits to `best`.
struct WideLeaf<'a, 'b, L: Lanes, P: Traceable, M: Mode> {
    kb: &'a KindBvh<P>,
    pre: &'b LeafRay<L>,
    best: &'b mut Best<'a>,
    _mode: core::marker::PhantomData<M>,
}

impl<L: Lanes, P: Traceable, M: Mode> LeafAction for WideLeaf<'_, '_, L, P, M> {
    #[inline(always)]
    fn t_max(&self) -> f32 {
        self.best.key
    }
    #[inline(always)]
    fn leaf(&mut self, first: u32, count: u32) -> bool {
        leaf_lanes::<L, P, M>(self.kb, first, count, self.pre, self.best) && M::ANY
    }
    #[inline(always)]
    fn prefetch_leaf(&self, first: u32, _count: u32) {
        self.kb.prims.prefetch_at(first as usize);
    }
}

/// Tests primitives `first..first + count` `N` at a time; returns whether anything was hit
/// (with [`AnyHit`]: whether a hit the mask admits was found, stopping at the first).
#[inline(always)]
fn leaf_lanes<'a, L: Lanes, P: Traceable, M: Mode>(
    kb: &'a KindBvh<P>,
    first: u32,
    count: u32,
    pre: &LeafRay<L>,
    best: &mut Best<'a>,
) -> bool {
    // A leaf of at most 8 primitives in the 16-lane traversal: one block of 8 lanes, where
    // the kind has such a test (see `Traceable::hit_one_narrow`).
    if L::N == 16
        && count <= 8
        && let Some((i, lanes)) = kb.prims.blocks::<F32x8>(first as usize, count as usize).next()
        && let Some((bits, t, u, v)) = P::hit_one_narrow(pre, best.key, &kb.prims, i, lanes)
    {
        return take_hits::<F32x8, P, M>(kb, i, bits, (t, u, v), best) || (bits != 0 && !M::ANY);
    }
    let mut any = false;
    for (i, lanes) in kb.prims.blocks::<L>(first as usize, count as usize) {
        let (m, t, u, v) = P::hit_one(pre, best.key, &kb.prims, i, L::Mask::from_bitmask(lanes));
        let bits = m.bitmask();
        any |= bits != 0;
        if take_hits::<L, P, M>(kb, i, bits, (t, u, v), best) {
            return true;
        }
    }
    // Any hit returned above as soon as the mask admitted one.
    any && !M::ANY
}

/// Offers the hits `bits` of the block at `i` (`t, u, v` by lane) to `best`; `true` when an
/// [`AnyHit`] query took one (the query ends there).
#[inline(always)]
fn take_hits<'a, L: Lanes, P: Traceable, M: Mode>(
    kb: &'a KindBvh<P>,
    i: usize,
    mut bits: u32,
    (t, u, v): (L, L, L),
    best: &mut Best<'a>,
) -> bool {
    while bits != 0 {
        let k = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        if M::ANY {
            // Any hit: the first one the mask admits ends the query.
            if best.take_any(t.lane(k), (u.lane(k), v.lane(k)), P::KIND, (i + k) as u32, &kb.ids) {
                return true;
            }
        } else {
            best.offer(t.lane(k), (u.lane(k), v.lane(k)), P::KIND, (i + k) as u32, &kb.ids);
        }
    }
    false
}

/// The leaf policy of the scalar backend: the kind's scalar reference kernel, one primitive
/// at a time.
struct ScalarLeaf<'a, 'b, P: Traceable, M: Mode> {
    kb: &'a KindBvh<P>,
    ray: &'b ScalarRay,
    best: &'b mut Best<'a>,
    _mode: core::marker::PhantomData<M>,
}

impl<P: Traceable, M: Mode> LeafAction for ScalarLeaf<'_, '_, P, M> {
    fn t_max(&self) -> f32 {
        self.best.key
    }
    fn leaf(&mut self, first: u32, count: u32) -> bool {
        for k in first as usize..first as usize + count as usize {
            let r = Ray { t_max: self.best.key, ..self.ray.ray };
            if let Some((t, u, v)) = self.kb.prims.get(k).hit_scalar(&r, &self.ray.sheared, self.ray.test) {
                self.best.offer(t, (u, v), P::KIND, k as u32, &self.kb.ids);
                if M::ANY && self.best.found() {
                    return true;
                }
            }
        }
        false
    }
}

/// A valid ray prepared for the scalar kernels.
pub(super) struct ScalarRay {
    pub(super) ray: Ray,
    pub(super) sheared: ShearedRay,
    pub(super) test: TriangleTest,
}

impl ScalarRay {
    /// Prepares a ray; `None` if it is invalid.
    pub(super) fn new(ray: &Ray, test: TriangleTest) -> Option<Self> {
        Some(Self { ray: *ray, sheared: ShearedRay::new(ray)?, test })
    }
}

/// Closest or any hit of one ray in one kind's binary tree with the scalar kernels.
fn trace_scalar<'a, P: Traceable, M: Mode>(kb: &'a KindBvh<P>, ray: &ScalarRay, best: &mut Best<'a>) -> bool {
    let mut stack = TraversalStack::new();
    let mut action = ScalarLeaf::<P, M> { kb, ray, best, _mode: core::marker::PhantomData };
    traverse::ray_binary::<M>(&kb.bvh2, &ray.ray, &mut action, &mut stack);
    action.best.found()
}

/// Closest or any hit of one ray in one kind's wide tree; returns whether the traversal
/// ended early (an any hit).
#[inline(always)]
fn trace_wide<'a, L: Lanes, N: WideNode, P: Traceable, M: Mode>(
    kb: &'a KindBvh<P>,
    bvh: &WideBvh<N>,
    pre: &Prepared<L>,
    best: &mut Best<'a>,
    stack: &mut TraversalStack,
) -> bool {
    let mut action = WideLeaf::<L, P, M> { kb, pre: &pre.leaf, best, _mode: core::marker::PhantomData };
    traverse::ray_wide::<M, L, N>(bvh, &pre.ray, &mut action, stack)
}

/// Closest or any hit of one ray in one kind's wide tree, from the root's test
/// ([`traverse::start`]); returns whether the traversal ended early (an any hit).
#[inline(always)]
fn trace_wide_from<'a, L: Lanes, N: WideNode, P: Traceable, M: Mode>(
    kb: &'a KindBvh<P>,
    bvh: &WideBvh<N>,
    ray: &TraversalRay<L>,
    leaf: &LeafRay<L>,
    best: &mut Best<'a>,
    stack: &mut TraversalStack,
    first: traverse::Start<L>,
) -> bool {
    let mut action = WideLeaf::<L, P, M> { kb, pre: leaf, best, _mode: core::marker::PhantomData };
    traverse::ray_wide_from::<M, L, N>(bvh, ray, &mut action, stack, first)
}

impl Scene {
    /// Nothing found yet in any lane of a packet: each lane's bound is its ray's `t_max`,
    /// its filter its ray's mask. Read from the columns stored once (taking lanes out of the
    /// `t_max` vector one at a time stored it again for each).
    #[inline(always)]
    fn packet_bests(&self, cols: &PacketColumns) -> [Best<'_>; MAX_PACKET_LANES] {
        if !self.masked && (0..MAX_PACKET_LANES).all(|i| cols.mask(i) == crate::ray::ALL_BITS) {
            // No mask filter in any lane (the common case): only the bounds differ.
            return core::array::from_fn(|i| Best::with_filter(cols.t_max(i), (0.0, 0.0), None));
        }
        core::array::from_fn(|i| Best::with_filter(cols.t_max(i), (0.0, 0.0), self.mask_filter(cols.mask(i))))
    }

    /// Offers the planes' hits to `best` (the emptiness check inlined: most scenes have none).
    #[inline(always)]
    fn planes_closest<'a>(&'a self, ray: &Ray, best: &mut Best<'a>, scalar: bool) {
        if !self.planes.is_empty() {
            // A copy: `ray`'s own address never reaches a call that is not inlined, so the
            // compiler keeps its fields in registers (see `trace_by_value`).
            self.planes_offer(&{ *ray }, best, scalar);
        }
    }

    #[inline(never)]
    fn planes_offer<'a>(&'a self, ray: &Ray, best: &mut Best<'a>, scalar: bool) {
        // A few planes are cheaper one by one than through a lane packet; both kernels
        // evaluate the same expression with the same operations, so the answer is the same.
        if scalar || self.planes.len() < 4 {
            // `trace` checked the ray, the builder the planes.
            for i in 0..self.planes.len() {
                if let Some(t) =
                    ray_plane::intersect_checked(ray.origin, ray.dir, ray.t_min, best.key, &self.planes.get(i))
                {
                    best.offer(t, (0.0, 0.0), PLANE_KIND, i as u32, &self.plane_ids);
                }
            }
        } else {
            let p = RayPacket::<F32x4>::splat(&Ray { t_max: best.key, ..*ray });
            for i in (0..self.planes.padded_len()).step_by(4) {
                let (m, t) = ray_plane::intersect_lanes(&p, &self.planes.lanes::<F32x4>(i));
                let mut bits = m.bitmask();
                while bits != 0 {
                    let k = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    best.offer(t.lane(k), (0.0, 0.0), PLANE_KIND, (i + k) as u32, &self.plane_ids);
                }
            }
        }
    }

    /// The hit record of the best candidate, if any. Left to the compiler to inline (as is
    /// [`Scene::hit_record`]): forced into the one out-of-line traversal, it made that
    /// function's hot loops slower on Zen 4 (primary rays 5–8 % in a single-ray probe, about
    /// 2 % in the traversal bench; see ARCHITECTURE.md), though callgrind counted fewer
    /// instructions.
    #[inline]
    fn finish(&self, ray: &Ray, b: &Best) -> Option<Hit> {
        b.found().then(|| self.hit_record(ray, b.key, b.at.0, b.at.1, b.kind, b.index))
    }

    /// The hit record of primitive `index` of kind `kind` (leaf order; planes: plane index)
    /// at `t`, with its normal and ids.
    #[inline]
    pub(super) fn hit_record(&self, ray: &Ray, t: f32, u: f32, v: f32, kind: u8, index: u32) -> Hit {
        let i = index as usize;
        // The arms hand the normal over in one SIMD register (`Vec3A`): as three separate
        // floats, the arms' results met on the stack, stored one float at a time and read back
        // two at a time, a load the CPU cannot forward from those stores.
        let (normal, [geom, prim], kind) = match kind {
            0 => (Vec3A::from(self.tris.prims.get(i).normal_at(ray, t, u, v)), self.tris.ids[i], HitKind::Triangle),
            1 => (Vec3A::from(self.spheres.prims.get(i).normal_at(ray, t, u, v)), self.spheres.ids[i], HitKind::Sphere),
            2 => (Vec3A::from(self.boxes.prims.get(i).normal_at(ray, t, u, v)), self.boxes.ids[i], HitKind::Box),
            _ => (Vec3A::from(self.planes.get(i).normal.normalize_or_zero()), self.plane_ids[i], HitKind::Plane),
        };
        Hit { t, geom, prim, u, v, normal: normal.into(), kind, inst: NO_ID }
    }

    #[inline(always)]
    fn trace<M: Mode, const PATH: u8>(&self, ray: &Ray) -> Best<'_> {
        // The scalar path's planes go through the scalar kernel, like its primitives.
        let scalar = PATH == PATH_SCALAR;
        let mut best = Best::with_filter(ray.t_max, (0.0, 0.0), self.mask_filter(ray.mask));
        if !ray.is_valid() {
            return best;
        }
        if M::ANY {
            self.planes_closest(ray, &mut best, scalar);
            if best.found() {
                return best;
            }
        }
        // With any hit, stop at the first kind that reports a hit.
        let stop = |found: bool| M::ANY && found;
        match PATH {
            PATH_SCALAR => {
                let Some(r) = ScalarRay::new(ray, self.triangle_test) else { return best };
                if !stop(trace_scalar::<_, M>(&self.tris, &r, &mut best))
                    && !stop(trace_scalar::<_, M>(&self.spheres, &r, &mut best))
                {
                    trace_scalar::<_, M>(&self.boxes, &r, &mut best);
                }
            }
            PATH_X4 => self.trace_kinds::<F32x4, Node4, M>(ray, &mut best),
            PATH_X16 => self.trace_kinds::<F32x16, Node16, M>(ray, &mut best),
            _ => self.trace_kinds::<F32x8, Node8, M>(ray, &mut best),
        }
        if !M::ANY {
            self.planes_closest(ray, &mut best, scalar);
        }
        best
    }

    /// Whether every kind's 16-wide tree fits a traversal stack (made here on the first
    /// call): the x16 backend's queries use the 8-wide trees otherwise.
    #[inline]
    pub(super) fn has_x16_trees(&self) -> bool {
        self.tris.bvh16().is_some() && self.spheres.bvh16().is_some() && self.boxes.bvh16().is_some()
    }

    /// Wide traversal of the three kinds' trees of one width (stopping early for any hit).
    #[inline(always)]
    fn trace_kinds<'a, L: Lanes, N: WideNode, M: Mode>(&'a self, ray: &Ray, best: &mut Best<'a>)
    where
        KindBvh<Triangle>: WideTrees<N>,
        KindBvh<Sphere>: WideTrees<N>,
        KindBvh<Aabb>: WideTrees<N>,
    {
        // `trace` checked the ray. One copy of the traversal per triangle test, each with the
        // test as a constant: the Möller–Trumbore copy has no watertight set-up and no
        // per-leaf choice of kernel.
        match self.triangle_test {
            TriangleTest::Watertight => self.trace_kinds_as::<L, N, M>(ray, best, TriangleTest::Watertight),
            TriangleTest::MollerTrumbore => self.trace_kinds_as::<L, N, M>(ray, best, TriangleTest::MollerTrumbore),
        }
    }

    #[inline(always)]
    fn trace_kinds_as<'a, L: Lanes, N: WideNode, M: Mode>(&'a self, ray: &Ray, best: &mut Best<'a>, test: TriangleTest)
    where
        KindBvh<Triangle>: WideTrees<N>,
        KindBvh<Sphere>: WideTrees<N>,
        KindBvh<Aabb>: WideTrees<N>,
    {
        if N::WIDTH < 16 {
            // Set up first: for 4- and 8-wide nodes the lazy set-up below measured slower
            // on rays that enter the scene (sponza x8 primary and incoherent rays 6-8 %).
            let pre = Prepared::<L>::new(ray, test);
            let mut stack = TraversalStack::new();
            if trace_wide::<L, N, _, M>(&self.tris, self.tris.tree(), &pre, best, &mut stack) {
                return;
            }
            if trace_wide::<L, N, _, M>(&self.spheres, self.spheres.tree(), &pre, best, &mut stack) {
                return;
            }
            trace_wide::<L, N, _, M>(&self.boxes, self.boxes.tree(), &pre, best, &mut stack);
            return;
        }
        // The kinds' roots are tested first, and the leaf kernels' set-up (the watertight
        // shear) made only for a ray that enters one: a ray that misses the scene never needs
        // it (about a third of such a ray's instructions). A later kind's root is tested with
        // the ray's own `t_max`, before an earlier kind's hits could lower it: a looser bound,
        // so nothing is missed, and the leaves still test against the best hit so far.
        let tr = TraversalRay::<L>::new(ray);
        let tris = traverse::start(self.tris.tree(), &tr, best.key);
        let spheres = traverse::start(self.spheres.tree(), &tr, best.key);
        let boxes = traverse::start(self.boxes.tree(), &tr, best.key);
        if tris.is_none() && spheres.is_none() && boxes.is_none() {
            return;
        }
        let pre = LeafRay::new_valid(ray, test);
        let mut stack = TraversalStack::new();
        if let Some(first) = tris
            && trace_wide_from::<L, N, _, M>(&self.tris, self.tris.tree(), &tr, &pre, best, &mut stack, first)
        {
            return;
        }
        if let Some(first) = spheres
            && trace_wide_from::<L, N, _, M>(&self.spheres, self.spheres.tree(), &tr, &pre, best, &mut stack, first)
        {
            return;
        }
        if let Some(first) = boxes {
            trace_wide_from::<L, N, _, M>(&self.boxes, self.boxes.tree(), &tr, &pre, best, &mut stack, first);
        }
    }

    /// Closest hit with the scene's default backend; `None` on a miss or an invalid ray.
    pub fn intersect(&self, ray: &Ray) -> Option<Hit> {
        self.intersect_with(ray, self.backend)
    }

    /// Closest hit with the given backend.
    #[inline]
    pub fn intersect_with(&self, ray: &Ray, backend: Backend) -> Option<Hit> {
        if !self.inst.is_empty() {
            return self.intersect_instanced(*ray, backend);
        }
        self.dispatch::<Closest, _>(ray, backend, |r, b| self.finish(r, b))
    }

    /// True when the scene has primitives or planes of its own (besides its instances).
    fn has_own(&self) -> bool {
        !(self.tris.is_empty() && self.spheres.is_empty() && self.boxes.is_empty() && self.planes.is_empty())
    }

    /// [`Scene::intersect_with`] of a scene with instances: its own primitives (when it has
    /// any), then the instances. The ray is taken by value: the copy is made on this call's
    /// path only (through `&Ray`, every single-ray query stored the ray to memory for it
    /// before testing for instances).
    #[inline(never)]
    fn intersect_instanced(&self, ray: Ray, backend: Backend) -> Option<Hit> {
        let ray = &ray;
        let own = if self.has_own() { self.finish(ray, &self.trace_ray::<Closest>(ray, backend)) } else { None };
        self.inst.closest(ray, backend, own)
    }

    /// True if anything is hit with `t_min <= t <= t_max` (default backend).
    pub fn occluded(&self, ray: &Ray) -> bool {
        self.occluded_with(ray, self.backend)
    }

    /// Any-hit query with the given backend (stops at the first hit found).
    #[inline]
    pub fn occluded_with(&self, ray: &Ray, backend: Backend) -> bool {
        if !self.inst.is_empty() {
            return self.occluded_instanced(*ray, backend);
        }
        self.dispatch::<AnyHit, _>(ray, backend, |_, b| b.found())
    }

    /// [`Scene::occluded_with`] of a scene with instances (the ray by value, as in
    /// [`Scene::intersect_instanced`]).
    #[inline(never)]
    fn occluded_instanced(&self, ray: Ray, backend: Backend) -> bool {
        let ray = &ray;
        let own = self.has_own() && self.trace_ray::<AnyHit>(ray, backend).found();
        own || self.inst.any(ray, backend)
    }

    /// The traversal behind the single-ray queries, out of line, with `answer` made from its
    /// result. The ray comes as eight `f32` arguments, which travel in registers: through
    /// `&Ray` (or an array, which is passed by pointer too), a ray the caller has just written
    /// field by field, as every loop that builds rays does, was read back with wider loads
    /// straddling those stores; the CPU cannot forward such loads and waits for the stores to
    /// retire. On bunny primary rays that cost about a quarter of the throughput.
    ///
    /// Inside, the same holds for the `Ray` made here: the traversal and `answer` each get a
    /// `Ray` of their own, and the traversal's never has its address passed to a call that is
    /// not inlined (the planes get a copy). With one `Ray` whose address `answer` or the
    /// planes' call took, the compiler wrote the eight arguments to it one by one and the
    /// set-up read them back two and four at a time: the same failed forward.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn trace_by_value<'a, M: Mode, const PATH: u8, R>(
        &'a self,
        ox: f32,
        oy: f32,
        oz: f32,
        dx: f32,
        dy: f32,
        dz: f32,
        t_min: f32,
        t_max: f32,
        mask: u32,
        answer: impl FnOnce(&Ray, &Best<'a>) -> R,
    ) -> R {
        let make = || Ray { origin: Vec3::new(ox, oy, oz), dir: Vec3::new(dx, dy, dz), t_min, t_max, mask };
        let best = self.trace::<M, PATH>(&make());
        answer(&make(), &best)
    }

    /// [`Scene::trace_by_value`] of `ray` on `backend`'s path: one out-of-line function per
    /// path, so that each holds one width's traversals (its registers allocated for those
    /// alone).
    #[inline(always)]
    fn dispatch<'a, M: Mode, R>(&'a self, ray: &Ray, backend: Backend, answer: impl FnOnce(&Ray, &Best<'a>) -> R) -> R {
        let Ray { origin: o, dir: d, t_min, t_max, mask } = *ray;
        match backend.resolve() {
            Backend::Scalar => {
                self.trace_by_value::<M, PATH_SCALAR, R>(o.x, o.y, o.z, d.x, d.y, d.z, t_min, t_max, mask, answer)
            }
            Backend::X4 => {
                self.trace_by_value::<M, PATH_X4, R>(o.x, o.y, o.z, d.x, d.y, d.z, t_min, t_max, mask, answer)
            }
            Backend::X16 if self.has_x16_trees() => {
                self.trace_by_value::<M, PATH_X16, R>(o.x, o.y, o.z, d.x, d.y, d.z, t_min, t_max, mask, answer)
            }
            _ => self.trace_by_value::<M, PATH_X8, R>(o.x, o.y, o.z, d.x, d.y, d.z, t_min, t_max, mask, answer),
        }
    }

    /// [`Scene::trace_by_value`] of `ray`, keeping the best candidate (the one out-of-line
    /// copy of the single-ray traversal).
    #[inline(always)]
    fn trace_ray<M: Mode>(&self, ray: &Ray, backend: Backend) -> Best<'_> {
        self.dispatch::<M, _>(ray, backend, |_, b| *b)
    }

    /// The reference answer by brute force: every primitive tested with the scalar kernels,
    /// ties resolved as in the BVH queries. O(primitives) per ray: for tests and checks.
    pub fn intersect_brute_force(&self, ray: &Ray) -> Option<Hit> {
        self.intersect_brute_force_with(ray, Backend::Scalar)
    }

    /// Brute force with a backend's kernels (lanes kernels over all primitives, `N` at a
    /// time, for `X4`/`X8`). A BVH query of a backend must equal this exactly.
    pub fn intersect_brute_force_with(&self, ray: &Ray, backend: Backend) -> Option<Hit> {
        let mut best = Best::with_filter(ray.t_max, (0.0, 0.0), self.mask_filter(ray.mask));
        if !ray.is_valid() {
            return None;
        }
        fn all_scalar<'a, P: Traceable>(kb: &'a KindBvh<P>, ray: &ScalarRay, best: &mut Best<'a>) {
            for k in 0..kb.len() {
                if let Some((t, u, v)) = kb.prims.get(k).hit_scalar(&ray.ray, &ray.sheared, ray.test) {
                    best.offer(t, (u, v), P::KIND, k as u32, &kb.ids);
                }
            }
        }
        fn all_lanes<'a, L: Lanes>(s: &'a Scene, ray: &Ray, best: &mut Best<'a>) {
            let Some(pre) = LeafRay::<L>::new(ray, s.triangle_test) else { return };
            fn all<'a, L: Lanes, P: Traceable>(kb: &'a KindBvh<P>, pre: &LeafRay<L>, best: &mut Best<'a>) {
                leaf_lanes::<L, P, Closest>(kb, 0, kb.len() as u32, pre, best);
            }
            all(&s.tris, &pre, best);
            all(&s.spheres, &pre, best);
            all(&s.boxes, &pre, best);
        }
        match backend.resolve() {
            Backend::Scalar => {
                if let Some(r) = ScalarRay::new(ray, self.triangle_test) {
                    all_scalar(&self.tris, &r, &mut best);
                    all_scalar(&self.spheres, &r, &mut best);
                    all_scalar(&self.boxes, &r, &mut best);
                }
            }
            Backend::X4 => all_lanes::<F32x4>(self, ray, &mut best),
            Backend::X16 => all_lanes::<F32x16>(self, ray, &mut best),
            _ => all_lanes::<F32x8>(self, ray, &mut best),
        }
        self.planes_closest(ray, &mut best, backend == Backend::Scalar);
        let h = self.finish(ray, &best);
        if self.inst.is_empty() { h } else { self.inst.closest_brute_force(ray, backend, h) }
    }

    // -----------------------------------------------------------------------------------
    // Packets.

    /// Closest hits of up to `N` rays traversing together, with the scene's default backend
    /// (see [`Scene::intersect_packet_with`]).
    pub fn intersect_packet<L: Lanes>(&self, rays: &RayPacket<L>, out: &mut HitPacket<L>, scratch: &mut PacketScratch) {
        self.intersect_packet_with(rays, out, scratch, self.backend)
    }

    /// Closest hits of up to `N` rays traversing together (`N` at most
    /// [`MAX_PACKET_LANES`]: 4 or 8 lanes; 16-lane packets do not compile). Every requested lane of `rays`
    /// ([`RayPacket::requested`]) is written: its hit, or [`Hit::MISS`] (also for an invalid
    /// ray); the other lanes of `out` are left untouched. Each lane's answer equals
    /// [`Scene::intersect_with`] of its ray with the same backend.
    ///
    /// The packet traverses the backend's tree: `X8` (and `X16`) the 8-wide tree and `X4`
    /// the 4-wide tree (every child box against all the packet's rays, leaves with the lanes
    /// kernels), `Scalar` the binary tree one lane at a time with the scalar kernels. When the
    /// active rays' directions do not all lie in one octant (incoherent rays, which part ways
    /// at the first nodes), the wide backends trace them one at a time through their own tree
    /// instead (`X16` the 16-wide one), with the same answers. `scratch` holds the traversal
    /// stack.
    pub fn intersect_packet_with<L: Lanes>(
        &self,
        rays: &RayPacket<L>,
        out: &mut HitPacket<L>,
        scratch: &mut PacketScratch,
        backend: Backend,
    ) {
        const { assert!(L::N <= MAX_PACKET_LANES, "scene packets hold at most 8 rays") };
        let requested = rays.requested().bitmask();
        if requested == 0 {
            return;
        }
        // Written lane by lane in place (`HitPacket::set_lane`), so lanes that were not requested keep
        // their values. (Gathered in arrays and stored as vectors at the end, the first
        // vector load waited on the lanes' narrow stores.) A packet whose every lane is
        // requested starts as misses written whole (a few vector stores), and only its hits
        // are written lane by lane.
        let active = rays.active();
        let one = backend.resolve();
        let full = requested == u32::MAX >> (32 - L::N);
        if full {
            *out = HitPacket::default();
        }
        let mut write = |i: usize, h: Option<Hit>| match h {
            Some(h) => out.set_lane(i, &h),
            None if !full => out.set_lane(i, &Hit::MISS),
            None => {}
        };
        if one == Backend::Scalar || !active.any() || !same_octant(rays, active) {
            // The scalar backend, and rays that do not share a direction octant in the wide
            // ones: one at a time through the backend's tree (a packet whose lanes go
            // different ways would visit the union of their paths). Each lane is
            // `intersect_with` of its ray (a miss for an invalid one), read from the packet's
            // columns stored once.
            let cols = rays.columns();
            let mut bits = requested;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                write(i, self.intersect_with(&cols.ray(i), one));
            }
        } else {
            let cols = rays.columns();
            let mut best = self.packet_bests(&cols);
            match one {
                Backend::X4 => self.packet_kinds::<L, Node4, Closest>(rays, &mut best, scratch),
                _ => self.packet_kinds::<L, Node8, Closest>(rays, &mut best, scratch),
            }
            // The triangle hits' normals for all lanes at once (the hit records were a
            // sixth of a coherent bunny packet's time one lane at a time); slivers and
            // other kinds go through `hit_record` lane by lane.
            let (mut index, mut tris) = ([0u32; 8], 0u32);
            if self.inst.is_empty() {
                for (i, b) in best.iter().enumerate().take(L::N) {
                    if requested & (1 << i) != 0 && b.found() && b.kind == Triangle::KIND {
                        (index[i], tris) = (b.index, tris | 1 << i);
                    }
                }
            }
            let mut normal = [[0.0f32; 8]; 3];
            if tris != 0 {
                let (n, usable) = super::kind::unit_normals(&self.tris.prims.gather_lanes::<L>(&index, tris));
                n.x.store(&mut normal[0][..L::N]);
                n.y.store(&mut normal[1][..L::N]);
                n.z.store(&mut normal[2][..L::N]);
                tris &= usable.bitmask();
            }
            // A lane's ray is read from the columns, and only for a lane that needs it.
            let mut bits = requested;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let b = &best[i];
                let h = if tris & (1 << i) != 0 {
                    let [geom, prim] = self.tris.ids[b.index as usize];
                    let n = Vec3::new(normal[0][i], normal[1][i], normal[2][i]);
                    let (t, (u, v)) = (b.key, b.at);
                    Some(Hit { t, geom, prim, u, v, normal: n, kind: HitKind::Triangle, inst: NO_ID })
                } else if self.inst.is_empty() {
                    b.found().then(|| self.hit_record(&cols.ray(i), b.key, b.at.0, b.at.1, b.kind, b.index))
                } else {
                    // Instances lane by lane (each lane's ray carried into each frame).
                    let ray = cols.ray(i);
                    self.inst.closest(&ray, backend, self.finish(&ray, b))
                };
                write(i, h);
            }
        }
    }

    /// Any hit of up to `N` rays traversing together, with the scene's default backend:
    /// the requested lanes whose ray hits something within its interval (an invalid ray's
    /// lane is not set). See [`Scene::occluded_packet_with`].
    #[must_use]
    pub fn occluded_packet<L: Lanes>(&self, rays: &RayPacket<L>, scratch: &mut PacketScratch) -> L::Mask {
        self.occluded_packet_with(rays, scratch, self.backend)
    }

    /// [`Scene::occluded_packet`] with a given backend (trees as in
    /// [`Scene::intersect_packet_with`]); each lane equals [`Scene::occluded_with`] of its ray.
    #[must_use]
    pub fn occluded_packet_with<L: Lanes>(
        &self,
        rays: &RayPacket<L>,
        scratch: &mut PacketScratch,
        backend: Backend,
    ) -> L::Mask {
        const { assert!(L::N <= MAX_PACKET_LANES, "scene packets hold at most 8 rays") };
        let active = rays.active();
        if active.none() {
            return active;
        }
        let one = backend.resolve();
        if one == Backend::Scalar || !same_octant(rays, active) {
            // One at a time, as in `intersect_packet_with`: each lane is `occluded_with`.
            let cols = rays.columns();
            let (mut bits, mut b) = (0u32, active.bitmask());
            while b != 0 {
                let i = b.trailing_zeros() as usize;
                b &= b - 1;
                bits |= u32::from(self.occluded_with(&cols.ray(i), one)) << i;
            }
            return L::Mask::from_bitmask(bits) & active;
        }
        let mut best = self.packet_bests(&rays.columns());
        self.planes_packet(rays, &mut best);
        let mut bits = 0u32;
        for (i, b) in best.iter().enumerate().take(L::N) {
            bits |= u32::from(b.found()) << i;
        }
        let rest = rays.with_mask(L::Mask::from_bitmask(!bits));
        if rest.active().any() {
            if one == Backend::X4 {
                bits |= self.packet_any::<L, Node4>(&rest, &mut best, scratch);
            } else {
                bits |= self.packet_any::<L, Node8>(&rest, &mut best, scratch);
            }
        }
        if !self.inst.is_empty() {
            // Instances lane by lane, for the lanes not yet occluded.
            let mut rest = active.bitmask() & !bits;
            while rest != 0 {
                let i = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                bits |= u32::from(self.inst.any(&rays.ray(i), backend)) << i;
            }
        }
        L::Mask::from_bitmask(bits) & active
    }

    /// Closest hits of a packet through the three kinds' trees of width `N`, then the planes.
    fn packet_kinds<'a, L: Lanes, N: WideNode, M: Mode>(
        &'a self,
        rays: &RayPacket<L>,
        best: &mut [Best<'a>; 8],
        scratch: &mut PacketScratch,
    ) where
        KindBvh<Triangle>: WideTrees<N>,
        KindBvh<Sphere>: WideTrees<N>,
        KindBvh<Aabb>: WideTrees<N>,
    {
        // The triangle test as a constant in each copy (see `trace_kinds`).
        let test = self.triangle_test;
        match test {
            TriangleTest::Watertight => {
                packet_trace::<L, N, _, M>(&self.tris, rays, TriangleTest::Watertight, best, scratch);
            }
            TriangleTest::MollerTrumbore => {
                packet_trace::<L, N, _, M>(&self.tris, rays, TriangleTest::MollerTrumbore, best, scratch);
            }
        }
        packet_trace::<L, N, _, M>(&self.spheres, rays, test, best, scratch);
        packet_trace::<L, N, _, M>(&self.boxes, rays, test, best, scratch);
        self.planes_packet(rays, best);
    }

    /// Any hit of a packet through the three kinds' trees of width `N`: the lanes that hit.
    fn packet_any<'a, L: Lanes, N: WideNode>(
        &'a self,
        rays: &RayPacket<L>,
        best: &mut [Best<'a>; 8],
        scratch: &mut PacketScratch,
    ) -> u32
    where
        KindBvh<Triangle>: WideTrees<N>,
        KindBvh<Sphere>: WideTrees<N>,
        KindBvh<Aabb>: WideTrees<N>,
    {
        let mut done = 0u32;
        let mut rest = *rays;
        for kind in 0..3 {
            let d = match kind {
                0 => packet_trace::<L, N, _, AnyHit>(&self.tris, &rest, self.triangle_test, best, scratch),
                1 => packet_trace::<L, N, _, AnyHit>(&self.spheres, &rest, self.triangle_test, best, scratch),
                _ => packet_trace::<L, N, _, AnyHit>(&self.boxes, &rest, self.triangle_test, best, scratch),
            };
            done |= d;
            rest.restrict(L::Mask::from_bitmask(!done));
            if rest.active().none() {
                break;
            }
        }
        done
    }

    /// Offers every plane's hits to the packet's lanes (each plane against all lanes at once).
    fn planes_packet<'a, L: Lanes>(&'a self, rays: &RayPacket<L>, best: &mut [Best<'a>; 8]) {
        for k in 0..self.planes.len() {
            let mut p = *rays;
            let mut t_max = [f32::INFINITY; 8];
            for (t, b) in t_max.iter_mut().zip(best.iter()) {
                *t = b.key;
            }
            p.t_max = L::load(&t_max);
            let (m, t) = ray_plane::intersect_lanes(&p, &self.planes.splat_at::<L>(k));
            let mut hits = m.bitmask();
            while hits != 0 {
                let i = hits.trailing_zeros() as usize;
                hits &= hits - 1;
                best[i].offer(t.lane(i), (0.0, 0.0), PLANE_KIND, k as u32, &self.plane_ids);
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Batches.

    /// Closest hit of every ray of `rays` into `out` (resized to match), on all rayon
    /// threads. Result order is input order and results do not depend on the thread count.
    pub fn intersect_batch(&self, rays: &RaySoa, out: &mut HitSoa) {
        self.intersect_batch_with(rays, out, self.backend)
    }

    /// [`Scene::intersect_batch`] with a given backend.
    pub fn intersect_batch_with(&self, rays: &RaySoa, out: &mut HitSoa, backend: Backend) {
        if out.len() != rays.len() {
            *out = HitSoa::with_len(rays.len());
        }
        // Each task's records are staged in a buffer that stays in the L1 cache and copied
        // out column by column at the end of the task: written record by record into the
        // output (ten columns, each store to a different line), a million incoherent rays on
        // the bunny took 1.17× the time of the same queries whose records were only read.
        batch_tasks(out.chunks_mut(BATCH_CHUNK).into_par_iter()).for_each(|mut chunk| {
            let mut stage = HitStage::new();
            let mut staged = stage.run(chunk.len());
            for i in 0..chunk.len() {
                rays.prefetch_ahead(chunk.start + i);
                let ray = rays.ray(chunk.start + i);
                // Each arm writes its record (through `unwrap_or`, the chosen `Hit` was
                // copied through memory first: batches 2-3 % slower).
                match self.intersect_with(&ray, backend) {
                    Some(h) => staged.set(i, &h),
                    None => staged.set(i, &Hit::MISS),
                }
            }
            chunk.write_staged(&stage);
        });
    }

    /// Any-hit of every ray of `rays` into `out` (`out.len()` must equal `rays.len()`), on
    /// all rayon threads, in input order.
    pub fn occluded_batch(&self, rays: &RaySoa, out: &mut [bool]) {
        self.occluded_batch_with(rays, out, self.backend)
    }

    /// [`Scene::occluded_batch`] with a given backend.
    pub fn occluded_batch_with(&self, rays: &RaySoa, out: &mut [bool], backend: Backend) {
        assert_eq!(out.len(), rays.len(), "occluded_batch: output length must equal the ray count");
        batch_tasks(out.par_chunks_mut(BATCH_CHUNK).enumerate()).for_each(|(c, chunk)| {
            for (i, o) in chunk.iter_mut().enumerate() {
                rays.prefetch_ahead(c * BATCH_CHUNK + i);
                *o = self.occluded_with(&rays.ray(c * BATCH_CHUNK + i), backend);
            }
        });
    }

    /// For every pair, whether `from[i]` sees `to[i]`: nothing is hit inside the segment
    /// `from[i] → to[i]` (the end points themselves excluded: hits with
    /// `t ∈ [LOS_EPS, 1 - LOS_EPS]` block). Shapes are solid: a segment starting inside a
    /// sphere or box is blocked. All rayon threads, input order. Panics if the lengths differ.
    pub fn line_of_sight(&self, from: &[Vec3], to: &[Vec3]) -> Vec<bool> {
        assert_eq!(from.len(), to.len(), "line_of_sight: from and to must have the same length");
        let mut out = vec![false; from.len()];
        batch_tasks(out.par_chunks_mut(BATCH_CHUNK).enumerate()).for_each(|(c, chunk)| {
            for (i, o) in chunk.iter_mut().enumerate() {
                let k = c * BATCH_CHUNK + i;
                *o = !self.occluded(&Self::los_ray(from[k], to[k]));
            }
        });
        out
    }

    /// The ray a line-of-sight query casts for the segment `a → b`.
    pub fn los_ray(a: Vec3, b: Vec3) -> Ray {
        Ray::with_interval(a, b - a, LOS_EPS, 1.0 - LOS_EPS)
    }

    /// Turns segments stored as rays (`dir = b - a`, as `Ray::segment` or the segment file
    /// readers give them) into the rays [`Scene::los_ray`] would cast, in place.
    pub fn segments_to_los(segments: &mut RaySoa) {
        segments.column_mut(crate::ray::RayColumn::TMin).fill(LOS_EPS);
        segments.column_mut(crate::ray::RayColumn::TMax).fill(1.0 - LOS_EPS);
    }
}

/// Access to one width's tree of a [`KindBvh`], whatever its primitive kind.
pub(super) trait WideTrees<N: WideNode> {
    fn tree(&self) -> &WideBvh<N>;
}
impl<P: Traceable> WideTrees<crate::bvh::Node4> for KindBvh<P> {
    fn tree(&self) -> &WideBvh<crate::bvh::Node4> {
        self.bvh4()
    }
}
impl<P: Traceable> WideTrees<crate::bvh::Node8> for KindBvh<P> {
    fn tree(&self) -> &WideBvh<crate::bvh::Node8> {
        self.bvh8()
    }
}
impl<P: Traceable> WideTrees<Node16> for KindBvh<P> {
    fn tree(&self) -> &WideBvh<Node16> {
        self.bvh16().expect("x16 queries check `Scene::has_x16_trees` first")
    }
}

/// Parameter margin excluded at both ends of a line-of-sight segment.
pub const LOS_EPS: f32 = 1e-5;

pub(super) const PLANE_KIND: u8 = 3;
/// Items (rays, points, sweeps) per rayon task of a batch query.
pub(super) const BATCH_CHUNK: usize = HitStage::LEN;

/// A batch query's runs of [`BATCH_CHUNK`] items, each run its own rayon task. Rayon's
/// default split of an indexed iterator stops at pieces of about a sixteenth of the batch
/// per thread, and the items of one region of a batch can cost far more than the rest
/// (camera rays through sky and through geometry): two threads then waited on the slower
/// piece (see ARCHITECTURE.md, "Performance notes"). Tasks of one run each let idle threads
/// steal down to a run; the answers are the same for any thread count and split.
#[inline]
pub(super) fn batch_tasks<I: IndexedParallelIterator>(runs: I) -> rayon::iter::MaxLen<I> {
    runs.with_max_len(1)
}

/// Caller-owned scratch for packet queries (the packet traversal's stack, 40 KB on the
/// heap). Keep one per thread and reuse it.
#[derive(Debug, Default)]
pub struct PacketScratch {
    stack: traverse::PacketStack,
}

impl Clone for PacketScratch {
    /// A fresh scratch (there is nothing worth copying).
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// The leaf policy of a packet traversal: each primitive of the leaf broadcast and tested
/// against the lanes that entered the leaf, the lanes' best `t` kept in a register.
struct PacketLeaf<'a, 'b, L: Lanes, P: Traceable, M: Mode> {
    kb: &'a KindBvh<P>,
    rays: &'b LeafPacket<L>,
    best: &'b mut [Best<'a>; 8],
    /// The lanes' best t: reloading it from an array written lane by lane would stall on
    /// store-to-load forwarding after every hit.
    t_best: L,
    /// Whether some lane's best has a mask filter (hits are then checked lane by lane).
    masked: bool,
    _mode: core::marker::PhantomData<M>,
}

impl<L: Lanes, P: Traceable, M: Mode> PacketLeafAction<L> for PacketLeaf<'_, '_, L, P, M> {
    #[inline(always)]
    fn t_max(&self) -> L {
        self.t_best
    }
    #[inline(always)]
    fn leaf(&mut self, first: u32, count: u32, active: L::Mask) -> L::Mask {
        let mut done = 0u32;
        for k in first as usize..first as usize + count as usize {
            let mut p = *self.rays;
            p.rays.rays.restrict(active & L::Mask::from_bitmask(!done));
            p.rays.rays.t_max = self.t_best;
            let (mut hm, t, u, v) = P::hit_packet(&p, &self.kb.prims.splat_at::<L>(k));
            let mut bits = hm.bitmask();
            if self.masked && bits != 0 {
                // Each lane's ray mask against the primitive's geometry mask.
                let mut ok = 0u32;
                for (i, b) in self.best.iter().enumerate().take(L::N) {
                    ok |= u32::from(b.admits(&self.kb.ids, k as u32)) << i;
                }
                bits &= ok;
                hm = L::Mask::from_bitmask(bits);
            }
            // A hit is at most the lane's best t; on a tie the t is the same whichever
            // primitive the tie rule keeps.
            self.t_best = L::select(hm, t, self.t_best);
            if M::ANY {
                done |= bits;
            }
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.best[i].offer(t.lane(i), (u.lane(i), v.lane(i)), P::KIND, k as u32, &self.kb.ids);
            }
        }
        L::Mask::from_bitmask(done)
    }
}

/// Packet traversal of one kind's wide tree of width `N`; returns the lanes an any-hit
/// traversal finished.
fn packet_trace<'a, L: Lanes, N: WideNode, P: Traceable, M: Mode>(
    kb: &'a KindBvh<P>,
    rays: &RayPacket<L>,
    test: TriangleTest,
    best: &mut [Best<'a>; 8],
    scratch: &mut PacketScratch,
) -> u32
where
    KindBvh<P>: WideTrees<N>,
{
    // A kind with nothing in it needs no set-up (the leaves' sheared rays, the lanes' bests).
    if kb.is_empty() {
        return 0;
    }
    let leaf = LeafPacket { rays: ShearedLanes::new(rays), test };
    let mut init = [f32::INFINITY; 8];
    for (t, b) in init.iter_mut().zip(best.iter()).take(L::N) {
        *t = b.key;
    }
    let masked = best.iter().take(L::N).any(Best::filtered);
    let mut action = PacketLeaf::<L, P, M> {
        kb,
        rays: &leaf,
        best,
        t_best: L::load(&init),
        masked,
        _mode: core::marker::PhantomData,
    };
    let done = traverse::packet_wide(kb.tree(), rays, &mut action, &mut scratch.stack);
    done.bitmask()
}

#[cfg(test)]
mod tests {
    use super::{batch_tasks, same_octant};
    use crate::lanes::{F32x8, Mask};
    use crate::ray::{Ray, RayPacket};
    use glam::Vec3;
    use rayon::prelude::*;

    /// Every run of a batch is a rayon task of its own, whatever the pool: a `fold` starts
    /// one accumulator per task, so each must have seen exactly one run. (Rayon's default
    /// split gives a one-thread pool a single task and a two-thread pool a few.)
    #[test]
    fn every_batch_run_is_its_own_task() {
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let per_task: Vec<usize> =
                pool.install(|| batch_tasks((0..1000).into_par_iter()).fold(|| 0, |n, _| n + 1).collect());
            assert_eq!(per_task.len(), 1000, "{threads} threads: {} tasks for 1000 runs", per_task.len());
            assert!(per_task.iter().all(|&n| n == 1), "{threads} threads: a task took several runs");
        }
    }

    #[test]
    fn packets_of_one_octant_are_told_from_mixed_ones() {
        let check = |dirs: &[Vec3]| {
            let rays: Vec<Ray> = dirs.iter().map(|&d| Ray::new(Vec3::ZERO, d)).collect();
            let p = RayPacket::<F32x8>::from_rays(&rays).unwrap();
            same_octant(&p, p.active())
        };
        assert!(check(&[Vec3::new(1.0, 2.0, 3.0), Vec3::new(0.5, 0.0, 1.0), Vec3::new(2.0, 1.0, 0.1)]));
        assert!(check(&[-Vec3::ONE, Vec3::new(-0.5, -2.0, -1.0)]));
        assert!(!check(&[Vec3::new(1.0, 2.0, 3.0), Vec3::new(-0.5, 2.0, 1.0)]));
        // -0.0 counts as negative (its reciprocal is -inf).
        assert!(!check(&[Vec3::new(1.0, 0.0, 1.0), Vec3::new(1.0, -0.0, 1.0)]));
        // Only the active lanes count.
        let rays = [Ray::new(Vec3::ZERO, Vec3::ONE), Ray::new(Vec3::ZERO, -Vec3::ONE)];
        let p = RayPacket::<F32x8>::from_rays(&rays).unwrap();
        assert!(!same_octant(&p, p.active()));
        assert!(same_octant(&p, <F32x8 as crate::lanes::Lanes>::Mask::from_bitmask(0b1)));
    }

    #[test]
    fn the_octant_check_agrees_with_the_traversal_s() {
        // Components drawn from signed zeros, tiny, huge and ordinary values of both signs
        // (zero and overflowing directions make invalid, inactive lanes), with lanes switched
        // off at random: the sign-bit check and `PacketRay::octant` (from the reciprocals)
        // agree on every packet, and both answers occur.
        let values = [0.0f32, -0.0, 1e-30, -1e-30, 1e-3, -1e-3, 1.0, -1.0, 3e30, -3e30];
        let mut rng = crate::rng::Rng::new(0x0c7a);
        let mut seen = [0usize; 2];
        for case in 0..20_000 {
            let pick = |rng: &mut crate::rng::Rng| values[rng.below(values.len() as u64) as usize];
            let rays: Vec<Ray> = (0..8)
                .map(|_| Ray::new(Vec3::ZERO, Vec3::new(pick(&mut rng), pick(&mut rng), pick(&mut rng))))
                .collect();
            let p = RayPacket::<F32x8>::from_rays(&rays).unwrap();
            let active = p.active() & <F32x8 as crate::lanes::Lanes>::Mask::from_bitmask(rng.below(256) as u32);
            let want = crate::bvh::traverse::PacketRay::new(&p).octant(active.bitmask()).is_some();
            assert_eq!(same_octant(&p, active), want, "case {case}");
            seen[usize::from(want)] += 1;
        }
        assert!(seen[0] > 1000 && seen[1] > 1000, "{seen:?}");
    }
}
