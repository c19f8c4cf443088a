//! Scene queries: closest hit and any hit for single rays in every backend, coherent
//! packets of 4/8 rays, all-core batches and line of sight. Queries do not allocate:
//! traversal stacks live on the call stack, batch scratch is per rayon task.

use super::kind::{KindBvh, Traceable};
use super::{Backend, Scene};
use crate::bvh::wide::{EMPTY_CHILD, LEAF_BIT, WideBvh, WideNode, decode};
use crate::hit::{Hit, HitPacket, HitSoa};
use crate::kernel::child_order::{self, StackEntry};
use crate::kernel::ray_aabb::{self, TraversalRay, cull_bound};
use crate::kernel::ray_plane;
use crate::lanes::{F32x4, F32x8, Lanes, Mask, prefetch};
use crate::prim::{Aabb, Sphere, Triangle};
use crate::ray::{Ray, RayPacket, RaySoa};
use crate::vec3x::Vec3x;
use glam::Vec3;
use rayon::prelude::*;

/// Entries of a wide traversal stack (enough for the deepest tree `validate` accepts).
const WIDE_STACK: usize = 1024;
/// The stack of pending wide-tree subtrees with their entry times.
type WideStack = Stack<StackEntry, WIDE_STACK>;
/// Entries of a binary traversal stack.
const BIN_STACK: usize = 2 * crate::bvh::STACK_DEPTH + 2;

/// A fixed-capacity stack that is not zero-filled on creation (a traversal stack is made per
/// ray; clearing kilobytes each time would cost more than many traversals).
struct Stack<T: Copy, const N: usize> {
    items: [core::mem::MaybeUninit<T>; N],
    len: usize,
}

impl<T: Copy, const N: usize> Stack<T, N> {
    #[inline(always)]
    fn new() -> Self {
        Self { items: [const { core::mem::MaybeUninit::uninit() }; N], len: 0 }
    }
    #[inline(always)]
    fn push(&mut self, v: T) {
        // Trees are validated to fit (depth <= STACK_DEPTH), so this never fires; it keeps
        // the writes below in bounds regardless.
        assert!(self.len < N, "traversal stack overflow");
        self.items[self.len] = core::mem::MaybeUninit::new(v);
        self.len += 1;
    }
    /// Pushes `block[..n]`, copying all 8 entries (one unconditional copy, no loop over `n`;
    /// the entries past `n` are overwritten by later pushes).
    #[inline(always)]
    fn push_block(&mut self, block: &[T; 8], n: usize) {
        assert!(self.len + 8 <= N && n <= 8, "traversal stack overflow");
        for (slot, &v) in self.items[self.len..self.len + 8].iter_mut().zip(block) {
            *slot = core::mem::MaybeUninit::new(v);
        }
        self.len += n;
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: every index below `len` was written by `push` before `len` passed it, and
        // `T: Copy` has no drop to run.
        Some(unsafe { self.items[self.len].assume_init() })
    }
}

/// The best hit so far, before its normal is computed. Its ids are looked up only when
/// needed (a tie, or the final answer): `ids[index]` of the table of its kind. Loading them
/// for every candidate cost a cache miss per hit on incoherent rays.
#[derive(Clone, Copy, Debug)]
struct Best<'a> {
    t: f32,
    u: f32,
    v: f32,
    kind: u8,
    index: u32,
    ids: &'a [[u32; 2]],
}

impl<'a> Best<'a> {
    fn new(t_max: f32) -> Self {
        Self { t: t_max, u: 0.0, v: 0.0, kind: u8::MAX, index: 0, ids: &[] }
    }
    /// Takes candidate `ids[index]` if it is nearer, or equally near with smaller ids
    /// (`(geom, prim)` compared as a pair).
    #[inline(always)]
    fn offer(&mut self, t: f32, u: f32, v: f32, kind: u8, index: u32, ids: &'a [[u32; 2]]) {
        if t < self.t || (t == self.t && (!self.found() || ids[index as usize] < self.ids())) {
            crate::lanes::prefetch_line(&ids[index as usize]);
            *self = Best { t, u, v, kind, index, ids };
        }
    }
    fn found(&self) -> bool {
        self.kind != u8::MAX
    }
    /// `[geom, prim]` of the hit (only when found).
    fn ids(&self) -> [u32; 2] {
        self.ids[self.index as usize]
    }
}

/// A ray prepared for wide traversal: the slab-test setup and the broadcast ray for the
/// leaf kernels.
struct Prepared<L: Lanes> {
    ray: TraversalRay<L>,
    packet: RayPacket<L>,
}

impl<L: Lanes> Prepared<L> {
    /// Prepares a valid ray (callers check [`Ray::is_valid`] first).
    fn new(ray: &Ray) -> Self {
        Self { ray: TraversalRay::new(ray), packet: RayPacket::splat(ray) }
    }

    /// Slab test of the ray against every child box of a node: (hit bits, entry times).
    #[inline(always)]
    fn node<N: WideNode>(&self, n: &N, t_max: f32) -> (u32, L) {
        let (hit, tn) = self.ray.test(n.columns(), t_max);
        (hit.bitmask(), tn)
    }
}

/// Closest hit (or, with `ANY`, any hit) of one ray in one kind's wide tree. `stack` is
/// empty on entry and on return.
#[inline(always)]
fn trace_wide<'a, L: Lanes, N: WideNode, P: Traceable, const ANY: bool>(
    kb: &'a KindBvh<P>,
    bvh: &WideBvh<N>,
    pre: &Prepared<L>,
    best: &mut Best<'a>,
    stack: &mut WideStack,
) -> bool {
    debug_assert_eq!(L::N, N::WIDTH);
    if bvh.root == EMPTY_CHILD {
        return false;
    }
    // Every child that will be visited is prefetched as soon as it is known (incoherent rays
    // wait on memory more than on arithmetic; even the child visited next gains, measured on
    // bunny los). A leaf "prefetches" the current node, which is cached: no branch on the kind.
    let fetch = |r: u32, here: u32| prefetch(&bvh.nodes[if r & LEAF_BIT == 0 { r } else { here } as usize]);
    let push = |stack: &mut WideStack, r: u32, t: f32, here: u32| {
        fetch(r, here);
        stack.push(StackEntry { child: r, t });
    };
    let mut cur = bvh.root;
    loop {
        match decode(cur) {
            Ok(idx) => {
                let node = &bvh.nodes[idx as usize];
                let (bits, tn) = pre.node(node, best.t);
                if bits != 0 {
                    let kids = node.children();
                    let first = bits.trailing_zeros() as usize;
                    let rest = bits & (bits - 1);
                    if rest == 0 {
                        cur = kids[first];
                        fetch(cur, idx);
                        continue;
                    }
                    if ANY {
                        // Any hit: leaves first (they can end the query), no sorting.
                        let mut leaves = 0u32;
                        for (i, &c) in kids.iter().enumerate() {
                            leaves |= u32::from(c & LEAF_BIT != 0) << i;
                        }
                        leaves &= bits;
                        let first = if leaves != 0 { leaves.trailing_zeros() } else { bits.trailing_zeros() } as usize;
                        let rest = bits & !(1 << first);
                        // Inner children first, so the leaves end on top of the stack.
                        for mut b in [rest & !leaves, rest & leaves] {
                            while b != 0 {
                                let i = b.trailing_zeros() as usize;
                                b &= b - 1;
                                push(stack, kids[i], tn.lane(i), idx);
                            }
                        }
                        cur = kids[first];
                        fetch(cur, idx);
                        continue;
                    }
                    // Two or more: order them (nearest next, the rest on the stack farthest
                    // first) without data-dependent branches, which mispredict on incoherent
                    // rays; see kernel::child_order.
                    let mut t = [0f32; 8];
                    tn.store(&mut t[..L::N]);
                    let mut entries = [StackEntry::default(); 8];
                    cur = match <&[u32; 8]>::try_from(kids) {
                        Ok(kids8) => child_order::order8(&t, kids8, bits, &mut entries),
                        Err(_) => child_order::order_scalar(&t[..L::N], kids, bits, &mut entries),
                    };
                    stack.push_block(&entries, bits.count_ones() as usize - 1);
                    let mut b = bits;
                    while b != 0 {
                        let i = b.trailing_zeros() as usize;
                        b &= b - 1;
                        fetch(kids[i], idx);
                    }
                    continue;
                }
            }
            Err((first, count)) => {
                if leaf::<L, P, ANY>(kb, first, count, pre, best) && ANY {
                    stack.len = 0;
                    return true;
                }
            }
        }
        // Pop the nearest pending subtree that can still hold a closer hit.
        loop {
            let Some(e) = stack.pop() else {
                return best.found();
            };
            if e.t <= cull_bound(best.t) {
                cur = e.child;
                break;
            }
        }
    }
}

/// Tests a leaf's primitives `N` at a time; returns whether anything was hit.
#[inline(always)]
fn leaf<'a, L: Lanes, P: Traceable, const ANY: bool>(
    kb: &'a KindBvh<P>,
    first: u32,
    count: u32,
    pre: &Prepared<L>,
    best: &mut Best<'a>,
) -> bool {
    leaf_with::<L, P, ANY>(kb, first, count, pre, best, |i| kb.prims.lanes::<L>(i))
}

/// Tests primitives `first..first + count` `N` at a time, loading lanes with `load(i)`.
#[inline(always)]
fn leaf_with<'a, L: Lanes, P: Traceable, const ANY: bool>(
    kb: &'a KindBvh<P>,
    first: u32,
    count: u32,
    pre: &Prepared<L>,
    best: &mut Best<'a>,
    load: impl Fn(usize) -> P::Lanes<L>,
) -> bool {
    let (mut i, end) = (first as usize, (first + count) as usize);
    let mut any = false;
    while i < end {
        let mut p = pre.packet;
        p.t_max = L::splat(best.t);
        let rem = end - i;
        if rem < L::N {
            p.restrict(L::Mask::from_bitmask((1u32 << rem) - 1));
        }
        let (m, t, u, v) = P::hit_lanes(&p, &load(i));
        let mut bits = m.bitmask();
        any |= bits != 0;
        if ANY && bits != 0 {
            let k = bits.trailing_zeros() as usize;
            best.offer(t.lane(k), u.lane(k), v.lane(k), P::KIND, (i + k) as u32, &kb.ids);
            return true;
        }
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            best.offer(t.lane(k), u.lane(k), v.lane(k), P::KIND, (i + k) as u32, &kb.ids);
        }
        i += L::N;
    }
    any
}

/// Closest hit (or any hit) of one ray in one kind's binary tree, scalar kernels.
fn trace_scalar<'a, P: Traceable, const ANY: bool>(kb: &'a KindBvh<P>, ray: &Ray, best: &mut Best<'a>) -> bool {
    let nodes = &kb.bvh2;
    if nodes.is_empty() {
        return false;
    }
    if ray_aabb::traversal_textbook(ray, best.t, &nodes[0].aabb()).is_none() {
        return false;
    }
    let mut stack = Stack::<(u32, f32), BIN_STACK>::new();
    let mut cur = 0usize;
    loop {
        let n = &nodes[cur];
        if n.is_leaf() {
            for k in n.index as usize..(n.index + n.count) as usize {
                let r = Ray { t_max: best.t, ..*ray };
                if let Some((t, u, v)) = kb.prims.get(k).hit_scalar(&r) {
                    best.offer(t, u, v, P::KIND, k as u32, &kb.ids);
                    if ANY {
                        return true;
                    }
                }
            }
        } else {
            let (l, r) = (n.index as usize, n.index as usize + 1);
            let enter = |c: usize| ray_aabb::traversal_textbook(ray, best.t, &nodes[c].aabb());
            match (enter(l), enter(r)) {
                (Some(a), Some(b)) => {
                    let (near, far, tf) = if a <= b { (l, r, b) } else { (r, l, a) };
                    stack.push((far as u32, tf));
                    cur = near;
                    continue;
                }
                (Some(_), None) => {
                    cur = l;
                    continue;
                }
                (None, Some(_)) => {
                    cur = r;
                    continue;
                }
                (None, None) => {}
            }
        }
        loop {
            let Some((r, t)) = stack.pop() else {
                return best.found();
            };
            if t <= best.t {
                cur = r as usize;
                break;
            }
        }
    }
}

impl Scene {
    /// Offers the planes' hits to `best` (the emptiness check inlined: most scenes have none).
    #[inline(always)]
    fn planes_closest<'a>(&'a self, ray: &Ray, best: &mut Best<'a>, scalar: bool) {
        if !self.planes.is_empty() {
            self.planes_offer(ray, best, scalar);
        }
    }

    #[inline(never)]
    fn planes_offer<'a>(&'a self, ray: &Ray, best: &mut Best<'a>, scalar: bool) {
        // A few planes are cheaper one by one than through a lane packet; both kernels
        // evaluate the same expression with the same operations, so the answer is the same.
        if scalar || self.planes.len() < 4 {
            for i in 0..self.planes.len() {
                if let Some(t) = ray_plane::intersect_scalar(&Ray { t_max: best.t, ..*ray }, &self.planes.get(i)) {
                    best.offer(t, 0.0, 0.0, PLANE_KIND, i as u32, &self.plane_ids);
                }
            }
        } else {
            let p = RayPacket::<F32x4>::splat(&Ray { t_max: best.t, ..*ray });
            for i in (0..self.planes.padded_len()).step_by(4) {
                let (m, t) = ray_plane::intersect_lanes(&p, &self.planes.lanes::<F32x4>(i));
                let mut bits = m.bitmask();
                while bits != 0 {
                    let k = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    best.offer(t.lane(k), 0.0, 0.0, PLANE_KIND, (i + k) as u32, &self.plane_ids);
                }
            }
        }
    }

    fn finish(&self, ray: &Ray, b: &Best) -> Option<Hit> {
        if !b.found() {
            return None;
        }
        let p = ray.at(b.t);
        let i = b.index as usize;
        let normal = match b.kind {
            0 => self.tris.prims.get(i).normal_at(p, b.u, b.v),
            1 => self.spheres.prims.get(i).normal_at(p, b.u, b.v),
            2 => self.boxes.prims.get(i).normal_at(p, b.u, b.v),
            _ => self.planes.get(i).normal.normalize_or_zero(),
        };
        let [geom, prim] = b.ids();
        Some(Hit { t: b.t, geom, prim, u: b.u, v: b.v, normal })
    }

    #[inline(always)]
    fn trace<const ANY: bool>(&self, ray: &Ray, backend: Backend) -> Best<'_> {
        let mut best = Best::new(ray.t_max);
        if !ray.is_valid() {
            return best;
        }
        if ANY {
            self.planes_closest(ray, &mut best, backend == Backend::Scalar);
            if best.found() {
                return best;
            }
        }
        // With ANY, stop at the first kind that reports a hit.
        let stop = |found: bool| ANY && found;
        match backend.resolve() {
            Backend::Scalar => {
                if !stop(trace_scalar::<_, ANY>(&self.tris, ray, &mut best))
                    && !stop(trace_scalar::<_, ANY>(&self.spheres, ray, &mut best))
                {
                    trace_scalar::<_, ANY>(&self.boxes, ray, &mut best);
                }
            }
            Backend::X4 => self.trace_kinds::<F32x4, crate::bvh::Node4, ANY>(ray, &mut best),
            _ => self.trace_kinds::<F32x8, crate::bvh::Node8, ANY>(ray, &mut best),
        }
        if !ANY {
            self.planes_closest(ray, &mut best, backend == Backend::Scalar);
        }
        best
    }

    /// Wide traversal of the three kinds' trees of one width (stopping early with `ANY`).
    fn trace_kinds<'a, L: Lanes, N: WideNode, const ANY: bool>(&'a self, ray: &Ray, best: &mut Best<'a>)
    where
        KindBvh<Triangle>: WideTrees<N>,
        KindBvh<Sphere>: WideTrees<N>,
        KindBvh<Aabb>: WideTrees<N>,
    {
        let pre = Prepared::<L>::new(ray);
        let mut stack = WideStack::new();
        if trace_wide::<L, N, _, ANY>(&self.tris, self.tris.tree(), &pre, best, &mut stack) && ANY {
            return;
        }
        if trace_wide::<L, N, _, ANY>(&self.spheres, self.spheres.tree(), &pre, best, &mut stack) && ANY {
            return;
        }
        trace_wide::<L, N, _, ANY>(&self.boxes, self.boxes.tree(), &pre, best, &mut stack);
    }

    /// Closest hit with the scene's default backend; `None` on a miss or an invalid ray.
    pub fn intersect(&self, ray: &Ray) -> Option<Hit> {
        self.intersect_with(ray, self.backend)
    }

    /// Closest hit with the given backend.
    #[inline]
    pub fn intersect_with(&self, ray: &Ray, backend: Backend) -> Option<Hit> {
        let Ray { origin: o, dir: d, t_min, t_max } = *ray;
        self.trace_by_value::<false, _>(o.x, o.y, o.z, d.x, d.y, d.z, t_min, t_max, backend, |r, b| self.finish(r, b))
    }

    /// True if anything is hit with `t_min <= t <= t_max` (default backend).
    pub fn occluded(&self, ray: &Ray) -> bool {
        self.occluded_with(ray, self.backend)
    }

    /// Any-hit query with the given backend (stops at the first hit found).
    #[inline]
    pub fn occluded_with(&self, ray: &Ray, backend: Backend) -> bool {
        let Ray { origin: o, dir: d, t_min, t_max } = *ray;
        self.trace_by_value::<true, _>(o.x, o.y, o.z, d.x, d.y, d.z, t_min, t_max, backend, |_, b| b.found())
    }

    /// The traversal behind the single-ray queries, out of line, with `answer` made from its
    /// result. The ray comes as eight `f32` arguments, which travel in registers: through
    /// `&Ray` (or an array, which is passed by pointer too), a ray the caller has just written
    /// field by field, as every loop that builds rays does, was read back with wider loads
    /// straddling those stores; the CPU cannot forward such loads and waits for the stores to
    /// retire. On bunny primary rays that cost about a quarter of the throughput.
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn trace_by_value<const ANY: bool, R>(
        &self,
        ox: f32,
        oy: f32,
        oz: f32,
        dx: f32,
        dy: f32,
        dz: f32,
        t_min: f32,
        t_max: f32,
        backend: Backend,
        answer: impl FnOnce(&Ray, &Best) -> R,
    ) -> R {
        let ray = Ray { origin: Vec3::new(ox, oy, oz), dir: Vec3::new(dx, dy, dz), t_min, t_max };
        answer(&ray, &self.trace::<ANY>(&ray, backend))
    }

    /// The reference answer by brute force: every primitive tested with the scalar kernels,
    /// ties resolved as in the BVH queries. O(primitives) per ray: for tests and checks.
    pub fn intersect_brute_force(&self, ray: &Ray) -> Option<Hit> {
        self.intersect_brute_force_with(ray, Backend::Scalar)
    }

    /// Brute force with a backend's kernels (lanes kernels over all primitives, `N` at a
    /// time, for `X4`/`X8`). A BVH query of a backend must equal this exactly.
    pub fn intersect_brute_force_with(&self, ray: &Ray, backend: Backend) -> Option<Hit> {
        let mut best = Best::new(ray.t_max);
        if !ray.is_valid() {
            return None;
        }
        fn all_scalar<'a, P: Traceable>(kb: &'a KindBvh<P>, ray: &Ray, best: &mut Best<'a>) {
            for k in 0..kb.len() {
                if let Some((t, u, v)) = kb.prims.get(k).hit_scalar(ray) {
                    best.offer(t, u, v, P::KIND, k as u32, &kb.ids);
                }
            }
        }
        fn all_lanes<'a, L: Lanes>(s: &'a Scene, ray: &Ray, best: &mut Best<'a>) {
            let pre = Prepared::<L>::new(ray);
            fn all<'a, L: Lanes, P: Traceable>(kb: &'a KindBvh<P>, pre: &Prepared<L>, best: &mut Best<'a>) {
                leaf_with::<L, P, false>(kb, 0, kb.len() as u32, pre, best, |i| kb.prims.lanes::<L>(i));
            }
            all(&s.tris, &pre, best);
            all(&s.spheres, &pre, best);
            all(&s.boxes, &pre, best);
        }
        match backend.resolve() {
            Backend::Scalar => {
                all_scalar(&self.tris, ray, &mut best);
                all_scalar(&self.spheres, ray, &mut best);
                all_scalar(&self.boxes, ray, &mut best);
            }
            Backend::X4 => all_lanes::<F32x4>(self, ray, &mut best),
            _ => all_lanes::<F32x8>(self, ray, &mut best),
        }
        self.planes_closest(ray, &mut best, backend == Backend::Scalar);
        self.finish(ray, &best)
    }

    // -----------------------------------------------------------------------------------
    // Packets.

    /// Closest hits of up to `N` coherent rays traversing together (binary tree, lanes
    /// kernels). Only lanes set in `mask` (and valid) are written; other lanes of `out` are
    /// left untouched. `scratch` holds the traversal stack.
    pub fn intersect_packet<L: Lanes>(
        &self,
        rays: &RayPacket<L>,
        out: &mut HitPacket<L>,
        mask: L::Mask,
        scratch: &mut PacketScratch,
    ) {
        let mut pk = *rays;
        pk.restrict(mask);
        let active = pk.active();
        if active.none() {
            return;
        }
        let mut best = [Best::new(0.0); 8];
        for (i, b) in best.iter_mut().enumerate().take(L::N) {
            *b = Best::new(pk.t_max.lane(i));
        }
        let inv = pk.dir.recip();
        packet_trace(&self.tris, &pk, inv, &mut best, scratch);
        packet_trace(&self.spheres, &pk, inv, &mut best, scratch);
        packet_trace(&self.boxes, &pk, inv, &mut best, scratch);
        // Planes: each against all lanes at once.
        for k in 0..self.planes.len() {
            let mut p = pk;
            let mut t_max = [f32::INFINITY; 8];
            for (t, b) in t_max.iter_mut().zip(&best) {
                *t = b.t;
            }
            p.t_max = L::load(&t_max);
            let (m, t) = ray_plane::intersect_lanes(&p, &self.planes.splat_at::<L>(k));
            let mut hits = m.bitmask();
            while hits != 0 {
                let i = hits.trailing_zeros() as usize;
                hits &= hits - 1;
                best[i].offer(t.lane(i), 0.0, 0.0, PLANE_KIND, k as u32, &self.plane_ids);
            }
        }
        // Write the results lane by lane into plain arrays (starting from `out`, so inactive
        // lanes keep their values), then store each field once.
        // (Plain statements: an array of vectors walked by an iterator was copied through
        // memory several times, a tenth of a bunny packet's time.)
        let mut f = [[0.0f32; 8]; 6];
        out.t.store(&mut f[0]);
        out.u.store(&mut f[1]);
        out.v.store(&mut f[2]);
        out.normal.x.store(&mut f[3]);
        out.normal.y.store(&mut f[4]);
        out.normal.z.store(&mut f[5]);
        let bits = active.bitmask();
        for (i, b) in best.iter().enumerate().take(L::N) {
            if bits & (1 << i) != 0 {
                let h = self.finish(&pk.ray(i), b).unwrap_or(Hit::MISS);
                f[0][i] = h.t;
                f[1][i] = h.u;
                f[2][i] = h.v;
                f[3][i] = h.normal.x;
                f[4][i] = h.normal.y;
                f[5][i] = h.normal.z;
                out.geom[i] = h.geom;
                out.prim[i] = h.prim;
            }
        }
        out.t = L::load(&f[0]);
        out.u = L::load(&f[1]);
        out.v = L::load(&f[2]);
        out.normal = Vec3x::new(L::load(&f[3]), L::load(&f[4]), L::load(&f[5]));
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
        out.chunks_mut(BATCH_CHUNK).into_par_iter().for_each(|mut chunk| {
            for i in 0..chunk.len() {
                let ray = rays.ray(chunk.start + i);
                chunk.set(i, &self.intersect_with(&ray, backend).unwrap_or(Hit::MISS));
            }
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
        out.par_chunks_mut(BATCH_CHUNK).enumerate().for_each(|(c, chunk)| {
            for (i, o) in chunk.iter_mut().enumerate() {
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
        out.par_chunks_mut(BATCH_CHUNK).enumerate().for_each(|(c, chunk)| {
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
trait WideTrees<N: WideNode> {
    fn tree(&self) -> &WideBvh<N>;
}
impl<P: Traceable> WideTrees<crate::bvh::Node4> for KindBvh<P> {
    fn tree(&self) -> &WideBvh<crate::bvh::Node4> {
        &self.bvh4
    }
}
impl<P: Traceable> WideTrees<crate::bvh::Node8> for KindBvh<P> {
    fn tree(&self) -> &WideBvh<crate::bvh::Node8> {
        &self.bvh8
    }
}

/// Parameter margin excluded at both ends of a line-of-sight segment.
pub const LOS_EPS: f32 = 1e-5;

const PLANE_KIND: u8 = 3;
const BATCH_CHUNK: usize = 256;

/// Caller-owned scratch for packet queries (the binary traversal stack).
#[derive(Clone, Debug)]
pub struct PacketScratch {
    stack: Vec<u32>,
}

impl Default for PacketScratch {
    fn default() -> Self {
        Self { stack: vec![0; BIN_STACK] }
    }
}

/// Packet traversal of one kind's binary tree: every visited node is slab-tested against
/// all lanes; children are visited nearer-first along the first active ray's direction.
fn packet_trace<'a, L: Lanes, P: Traceable>(
    kb: &'a KindBvh<P>,
    pk: &RayPacket<L>,
    inv: Vec3x<L>,
    best: &mut [Best<'a>; 8],
    scratch: &mut PacketScratch,
) {
    let nodes = &kb.bvh2;
    if nodes.is_empty() {
        return;
    }
    let lead = pk.active().bitmask().trailing_zeros() as usize;
    let lead_dir = pk.dir.lane(lead);
    let stack = &mut scratch.stack;
    let mut sp = 0;
    let mut cur = 0usize;
    // The lanes' best t, kept in a register: reloading it from an array written lane by lane
    // would stall on store-to-load forwarding after every hit.
    let mut init = [f32::INFINITY; 8];
    for (t, b) in init.iter_mut().zip(best.iter()).take(L::N) {
        *t = b.t;
    }
    let mut t_best = L::load(&init);
    let far = L::splat(ray_aabb::FAR_SCALE);
    let inv_far = Vec3x::new(inv.x * far, inv.y * far, inv.z * far);
    loop {
        let n = &nodes[cur];
        let (hit, _) = ray_aabb::traversal_packet(
            pk.origin,
            inv,
            inv_far,
            pk.t_min,
            t_best,
            Vec3x::splat(Vec3::from(n.min)),
            Vec3x::splat(Vec3::from(n.max)),
        );
        let m = pk.active() & hit;
        if m.any() {
            if n.is_leaf() {
                for k in n.index as usize..(n.index + n.count) as usize {
                    let mut p = *pk;
                    p.restrict(m);
                    p.t_max = t_best;
                    let (hm, t, u, v) = P::hit_lanes(&p, &kb.prims.splat_at::<L>(k));
                    let mut bits = hm.bitmask();
                    // A hit is at most the lane's best t; on a tie the t is the same whichever
                    // primitive the tie rule keeps.
                    t_best = L::select(hm, t, t_best);
                    while bits != 0 {
                        let i = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        best[i].offer(t.lane(i), u.lane(i), v.lane(i), P::KIND, k as u32, &kb.ids);
                    }
                }
            } else {
                let (l, r) = (n.index as usize, n.index as usize + 1);
                let cl = nodes[l].aabb().center();
                let cr = nodes[r].aabb().center();
                let (near, far) = if lead_dir.dot(cr - cl) >= 0.0 { (l, r) } else { (r, l) };
                stack[sp] = far as u32;
                sp += 1;
                cur = near;
                continue;
            }
        }
        if sp == 0 {
            return;
        }
        sp -= 1;
        cur = stack[sp] as usize;
    }
}
