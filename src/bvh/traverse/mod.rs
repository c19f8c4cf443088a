//! BVH traversal, generic over the node width and over what happens at a leaf: the same
//! loops serve the scene queries and any user who puts their own primitives in a tree
//! (as parry's `TraversalAction` does).
//!
//! * [`ray_wide`]: one ray through a 4-, 8- or 16-wide tree ([`WideBvh`]), one slab test against all
//!   children of a node ([`TraversalRay::test_node`]); for closest hits the nearest hit child
//!   is visited next and the rest are stacked farthest first (two hit children by one
//!   comparison, three or more by [`child_order`]).
//! * [`ray_binary`]: one ray through a binary tree with the textbook slab test (the scalar
//!   backend, the reference).
//! * [`packet_wide`]: `N` rays together through a wide tree: each child box against every ray.
//!
//! The caller supplies a [`LeafAction`] (or [`PacketLeafAction`]): the current end of the
//! ray interval, used to cull boxes, and the test of a leaf's primitives `first..first +
//! count` (leaf order, i.e. indices into data the caller permuted by the build's `perm`).
//! A [`LeafAction`] may also take a hint of the leaf it will test next
//! ([`LeafAction::prefetch_leaf`]), to start loading its primitives early.
//! The [`Mode`] chooses closest-hit order ([`Closest`]: nearest child first, popped
//! subtrees culled by the current `t_max`) or any-hit order ([`AnyHit`]: leaves first, stop
//! as soon as the action says so).
//!
//! Box tests are conservative ([`slab`]): a box that holds a primitive the kernels would hit
//! is never culled by rounding.
//!
//! ```
//! use glam::Vec3;
//! use lanecast::bvh::traverse::{self, Closest, LeafAction, TraversalRay, TraversalStack};
//! use lanecast::bvh::{BuildOptions, build_trees};
//! use lanecast::prim::{Aabb, Sphere};
//! use lanecast::kernel::ray_sphere;
//! use lanecast::{F32x8, Ray};
//!
//! // My own primitives: spheres along x.
//! let spheres: Vec<Sphere> = (0..100).map(|i| Sphere::new(Vec3::new(i as f32, 0.0, 0.0), 0.4)).collect();
//! let boxes: Vec<Aabb> = spheres.iter().map(|s| s.aabb()).collect();
//! let trees = build_trees(&boxes, &BuildOptions::default()).unwrap();
//!
//! struct Nearest<'a> { spheres: &'a [Sphere], perm: &'a [u32], ray: Ray, best: Option<(f32, u32)> }
//! impl LeafAction for Nearest<'_> {
//!     fn t_max(&self) -> f32 { self.best.map_or(self.ray.t_max, |b| b.0) }
//!     fn leaf(&mut self, first: u32, count: u32) -> bool {
//!         for k in first..first + count {
//!             let id = self.perm[k as usize];
//!             let r = Ray { t_max: self.t_max(), ..self.ray };
//!             if let Some(t) = ray_sphere::intersect_scalar(&r, &self.spheres[id as usize]) {
//!                 self.best = Some((t, id));
//!             }
//!         }
//!         false // never stop early
//!     }
//! }
//!
//! let ray = Ray::new(Vec3::new(41.0, 5.0, 0.0), -Vec3::Y);
//! let mut action = Nearest { spheres: &spheres, perm: &trees.perm, ray, best: None };
//! let mut stack = TraversalStack::new();
//! traverse::ray_wide::<Closest, F32x8, _>(&trees.bvh8, &TraversalRay::new(&ray), &mut action, &mut stack);
//! assert_eq!(action.best.map(|b| b.1), Some(41));
//! ```

pub mod child_order;
mod point;
pub mod slab;
mod sweep;

pub use point::*;
pub use sweep::{SweepLeafAction, SweptSphere, TIME_SLACK, sweep_binary, sweep_wide};

pub use child_order::StackEntry;
pub use slab::{PacketRay, TraversalRay};

use super::node::{Child, EMPTY_CHILD, LEAF_BIT, MAX_WIDTH, Node2, WideBvh, WideNode};
use crate::lanes::{Lanes, MAX_PACKET_LANES, Mask, prefetch};
use crate::ray::{Ray, RayPacket};
use crate::vec3x::Vec3x;
use glam::Vec3;

/// What a single-ray traversal asks of its caller.
pub trait LeafAction {
    /// The current end of the ray's interval: boxes entered after it are skipped. A
    /// closest-hit action lowers it as it finds hits.
    fn t_max(&self) -> f32;
    /// Tests primitives `first..first + count` (leaf order). Returns `true` to end the
    /// traversal (an any-hit query that found something).
    fn leaf(&mut self, first: u32, count: u32) -> bool;
    /// A hint: the traversal will call [`LeafAction::leaf`] with this range next, so the
    /// action may start loading those primitives now (the scene's queries prefetch them).
    /// [`ray_wide`] gives it when the child it steps down to from a node is a leaf: in
    /// any-hit traversals, and in closest-hit traversals of 16-wide trees from a node with
    /// one or two hit children. It must not change what `leaf` does. The default does
    /// nothing.
    #[inline(always)]
    fn prefetch_leaf(&self, first: u32, count: u32) {
        let _ = (first, count);
    }
}

/// What a packet traversal asks of its caller.
pub trait PacketLeafAction<L: Lanes> {
    /// The current end of each lane's interval.
    fn t_max(&self) -> L;
    /// Tests primitives `first..first + count` (leaf order) against the rays in `active`
    /// (the lanes whose rays enter the leaf's box). Returns the lanes that are finished (an
    /// any-hit query's occluded rays); they are dropped from the rest of the traversal.
    fn leaf(&mut self, first: u32, count: u32, active: L::Mask) -> L::Mask;
}

/// The traversal order: [`Closest`] or [`AnyHit`]. Sealed.
pub trait Mode: sealed::Sealed {
    /// Any-hit order (leaves first, no sorting, stop when asked).
    const ANY: bool;
}

/// Closest-hit order: nearest child first; popped subtrees entered beyond the current
/// `t_max` are culled.
#[derive(Clone, Copy, Debug)]
pub struct Closest;
/// Any-hit order: hit leaf children before inner ones, unsorted; the traversal ends when the
/// action says so.
#[derive(Clone, Copy, Debug)]
pub struct AnyHit;

impl Mode for Closest {
    const ANY: bool = false;
}
impl Mode for AnyHit {
    const ANY: bool = true;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Closest {}
    impl Sealed for super::AnyHit {}
}

/// Entries of a traversal stack: enough for every 4- and 8-wide tree [`crate::bvh::validate`]
/// accepts (`STACK_DEPTH` levels of up to 7 pending siblings each, plus a block of 8), and
/// for 16-wide trees whose nodes lie at most 68 levels deep ([`fits_stack`]; the x16
/// backend falls back to the 8-wide tree for a deeper one). The stack lives in every
/// single-ray query's frame, and only 16-wide trees of more than 68 levels would need more,
/// which binned SAH trees come nowhere near (boxes of no area, the worst case for depth,
/// measured 55 levels for 5,000 primitives).
pub const STACK_ENTRIES: usize = 1024;
const _: () = assert!(fits_stack(8, super::node::STACK_DEPTH) && fits_stack(4, super::node::STACK_DEPTH));

/// Whether every traversal of a tree `width` wide whose deepest node lies at level `depth`
/// (the root node at 1; see [`WideBvh::node_depth`]) fits a [`TraversalStack`]: a node at
/// level `d` is reached with at most `(d - 1) · (width - 1)` entries pending, and may push
/// a block of `width`.
pub const fn fits_stack(width: usize, depth: usize) -> bool {
    depth == 0 || (depth - 1) * (width - 1) + width <= STACK_ENTRIES
}

/// A caller-owned traversal stack. It is not zero-filled on creation (a stack is made per
/// ray; clearing 8 KB each time would cost more than many traversals), so making one is
/// free; keep one per thread to reuse it anyway.
pub struct TraversalStack {
    items: [core::mem::MaybeUninit<StackEntry>; STACK_ENTRIES],
    len: usize,
}

impl Default for TraversalStack {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for TraversalStack {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("TraversalStack").field("len", &self.len).finish()
    }
}

impl TraversalStack {
    /// An empty stack.
    #[inline(always)]
    #[must_use]
    pub fn new() -> Self {
        Self { items: [const { core::mem::MaybeUninit::uninit() }; STACK_ENTRIES], len: 0 }
    }
    /// Pushes an entry.
    ///
    /// # Panics
    /// When full. Validated trees that [`fits_stack`] never fill it (see [`STACK_ENTRIES`]).
    #[inline(always)]
    fn push(&mut self, v: StackEntry) {
        assert!(self.len < STACK_ENTRIES, "traversal stack overflow");
        self.items[self.len] = core::mem::MaybeUninit::new(v);
        self.len += 1;
    }
    /// Pushes `block[..n]`, copying all `K` entries (one unconditional copy, no loop over `n`;
    /// the entries past `n` are overwritten by later pushes).
    #[inline(always)]
    fn push_block<const K: usize>(&mut self, block: &[StackEntry; K], n: usize) {
        assert!(self.len + K <= STACK_ENTRIES && n <= K, "traversal stack overflow");
        for (slot, &v) in self.items[self.len..self.len + K].iter_mut().zip(block) {
            *slot = core::mem::MaybeUninit::new(v);
        }
        self.len += n;
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<StackEntry> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: every index below `len` was written by `push` or `push_block` before `len`
        // passed it (`push_block` writes `K` entries and advances by at most `K`), and
        // `StackEntry: Copy` has no drop to run.
        Some(unsafe { self.items[self.len].assume_init() })
    }
    fn clear(&mut self) {
        self.len = 0;
    }
}

/// A caller-owned stack for packet traversals ([`packet_wide`]): each entry a child, the
/// lanes whose rays enter it and every lane's entry time, so that a pop can drop the lanes
/// whose best hit has since come nearer than their entry, as the single-ray pop does with its
/// one entry time. Allocated once (40 KB on the heap: [`STACK_ENTRIES`] entries of up to
/// [`MAX_PACKET_LANES`] lanes); keep one per thread.
pub struct PacketStack {
    children: Box<[(u32, u32)]>,
    times: Box<[f32]>,
    len: usize,
}

impl Default for PacketStack {
    fn default() -> Self {
        Self::new()
    }
}

impl core::fmt::Debug for PacketStack {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("PacketStack").field("len", &self.len).finish()
    }
}

impl PacketStack {
    /// An empty stack.
    #[must_use]
    pub fn new() -> Self {
        Self {
            children: vec![(0, 0); STACK_ENTRIES].into_boxed_slice(),
            times: vec![0.0; STACK_ENTRIES * MAX_PACKET_LANES].into_boxed_slice(),
            len: 0,
        }
    }
    /// Pushes `child`, entered by the rays of `lanes` (bit `i` for lane `i`) at times `t`.
    ///
    /// # Panics
    /// When full, which a tree that [`fits_stack`] never makes it.
    #[inline(always)]
    fn push<L: Lanes>(&mut self, child: u32, lanes: u32, t: L) {
        const { assert!(L::N <= MAX_PACKET_LANES, "packets of at most 8 lanes") };
        assert!(self.len < STACK_ENTRIES, "traversal stack overflow");
        self.children[self.len] = (child, lanes);
        let at = self.len * MAX_PACKET_LANES;
        t.store(&mut self.times[at..at + L::N]);
        self.len += 1;
    }
    #[inline(always)]
    fn pop<L: Lanes>(&mut self) -> Option<((u32, u32), L)> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        let at = self.len * MAX_PACKET_LANES;
        Some((self.children[self.len], L::load(&self.times[at..at + L::N])))
    }
    fn clear(&mut self) {
        self.len = 0;
    }
}

/// Prefetches wide child `r` of node `here`: the child's node, or, for a leaf, the current
/// node again (cached; this saves a branch on the kind). A node of up to 256 bytes is
/// prefetched as 4 lines (a 32-byte aligned 8-wide node spans at most 4), a larger one as
/// all of its lines (a 16-wide node's 7).
#[inline(always)]
fn fetch_child<N>(nodes: &[N], r: u32, here: u32) {
    let node = &nodes[if r & LEAF_BIT == 0 { r } else { here } as usize];
    if core::mem::size_of::<N>() <= 256 {
        prefetch(node);
    } else {
        let p: *const i8 = (node as *const N).cast();
        for line in 0..core::mem::size_of::<N>().div_ceil(64) {
            // Addresses past the node are only hinted at, never read.
            crate::lanes::prefetch_at(p.wrapping_add(64 * line));
        }
    }
}

/// Hands `action` the leaf `r` when it is one and the traversal of mode `M` through nodes
/// `L::N` wide hints at the leaf it visits next ([`LeafAction::prefetch_leaf`]).
///
/// Measured in one binary against no hint (2 Zen 4 vCPUs, ARCHITECTURE.md): lines of
/// sight gained 1.5-4 % on 8- and 16-wide trees, and closest hits on 16-wide trees 1-2.5 %
/// on incoherent rays, while closest hits on 8-wide trees lost 2-5 % on incoherent rays;
/// those get no hint.
#[inline(always)]
fn hint_next<M: Mode, L: Lanes>(action: &impl LeafAction, r: u32) {
    if (M::ANY || L::N == 16) && r & LEAF_BIT != 0 {
        let (first, count) = Child::leaf_range(r);
        action.prefetch_leaf(first, count);
    }
}

/// Closest hit (with [`Closest`]) or any hit (with [`AnyHit`]) of one ray through a wide
/// tree: calls `action.leaf` for every leaf whose box the ray enters within `[t_min,
/// action.t_max()]`. `L::N` must equal the node width (checked at compile time). Returns
/// `true` when the action ended the traversal. `stack` is empty on return.
///
/// # Panics
/// When `stack` overflows, which a tree that [`fits_stack`] (every 4- and 8-wide tree
/// [`crate::bvh::validate`] accepts) never makes it do.
#[inline(always)]
pub fn ray_wide<M: Mode, L: Lanes, N: WideNode>(
    bvh: &WideBvh<N>,
    ray: &TraversalRay<L>,
    action: &mut impl LeafAction,
    stack: &mut TraversalStack,
) -> bool {
    const { assert!(L::N == N::WIDTH, "the lanes must be as wide as the nodes") };
    if bvh.root == EMPTY_CHILD {
        return false;
    }
    // Every child that will be visited is prefetched as soon as it is known (incoherent rays
    // wait on memory more than on arithmetic; even the child visited next gains, measured on
    // bunny los). A leaf "prefetches" the current node, which is cached: no branch on the kind.
    // (A function, not a closure: LLVM kept the closure out of line, and the call cost a
    // `vzeroupper` and reloads of the ray's registers at every step down.)
    let nodes = &bvh.nodes[..];
    let mut cur = bvh.root;
    loop {
        if cur & LEAF_BIT == 0 {
            let idx = cur;
            let (bits, tn) = ray.test_node(&nodes[idx as usize], action.t_max());
            if bits != 0 {
                cur = pick_next::<M, L, N>(nodes, idx, bits, tn, stack, action);
                continue;
            }
        } else {
            let (first, count) = Child::leaf_range(cur);
            if action.leaf(first, count) && M::ANY {
                stack.clear();
                return true;
            }
        }
        // Pop the nearest pending subtree that can still hold a closer hit.
        loop {
            let Some(e) = stack.pop() else {
                return false;
            };
            if e.t <= slab::cull_bound(action.t_max()) {
                cur = e.child;
                break;
            }
        }
    }
}

/// The first step of a single-ray traversal through a wide tree, taken before the leaf
/// kernels' set-up (which a ray that misses the root never needs): the root reference,
/// with its node's test when it is a node.
#[derive(Clone, Copy, Debug)]
pub struct Start<L: Lanes> {
    root: u32,
    /// The root node's hit lanes (bit `i` for child `i`) and entry times (unused for a
    /// leaf root).
    hits: u32,
    t: L,
}

/// Tests the root of `bvh` for `ray` within `[t_min, t_max]`: `None` when the ray enters
/// nothing (an empty tree, or no child box of the root node), else the step to hand to
/// [`ray_wide_from`] (a leaf root is not tested: the traversal's leaves never are).
#[inline(always)]
pub fn start<L: Lanes, N: WideNode>(bvh: &WideBvh<N>, ray: &TraversalRay<L>, t_max: f32) -> Option<Start<L>> {
    const { assert!(L::N == N::WIDTH, "the lanes must be as wide as the nodes") };
    let root = bvh.root;
    if root == EMPTY_CHILD {
        return None;
    }
    if root & LEAF_BIT != 0 {
        return Some(Start { root, hits: 0, t: L::splat(0.0) });
    }
    let (hits, t) = ray.test_node(&bvh.nodes[root as usize], t_max);
    (hits != 0).then_some(Start { root, hits, t })
}

/// [`ray_wide`] from its first step ([`start`], made with the same ray and `t_max`).
#[inline(always)]
pub fn ray_wide_from<M: Mode, L: Lanes, N: WideNode>(
    bvh: &WideBvh<N>,
    ray: &TraversalRay<L>,
    action: &mut impl LeafAction,
    stack: &mut TraversalStack,
    first: Start<L>,
) -> bool {
    const { assert!(L::N == N::WIDTH, "the lanes must be as wide as the nodes") };
    let nodes = &bvh.nodes[..];
    if first.root & LEAF_BIT != 0 {
        // A tree of one leaf.
        let (f, count) = Child::leaf_range(first.root);
        let done = action.leaf(f, count) && M::ANY;
        stack.clear();
        return done;
    }
    // Each turn takes a node that has been tested (the root's test made by `start`), picks
    // the child to visit next and pushes the others, then visits: leaves until the next
    // node, which it tests for the next turn.
    let (mut idx, mut bits, mut tn) = (first.root, first.hits, first.t);
    loop {
        let mut cur = if bits == 0 { None } else { Some(pick_next::<M, L, N>(nodes, idx, bits, tn, stack, action)) };
        // Visit: leaves (and pops) until a node to test.
        loop {
            let c = match cur {
                Some(c) => c,
                // Pop the nearest pending subtree that can still hold a closer hit.
                None => loop {
                    let Some(e) = stack.pop() else {
                        return false;
                    };
                    if e.t <= slab::cull_bound(action.t_max()) {
                        break e.child;
                    }
                },
            };
            if c & LEAF_BIT == 0 {
                idx = c;
                (bits, tn) = ray.test_node(&nodes[c as usize], action.t_max());
                break;
            }
            let (f, count) = Child::leaf_range(c);
            if action.leaf(f, count) && M::ANY {
                stack.clear();
                return true;
            }
            cur = None;
        }
    }
}

/// One step down from node `idx`, whose test gave the hit lanes `bits` (not 0) and entry
/// times `tn`: the child to visit next, with the other hit children pushed (closest hit:
/// farthest first; any hit: leaves on top) and every visited child prefetched.
#[inline(always)]
fn pick_next<M: Mode, L: Lanes, N: WideNode>(
    nodes: &[N],
    idx: u32,
    bits: u32,
    tn: L,
    stack: &mut TraversalStack,
    action: &impl LeafAction,
) -> u32 {
    let node = &nodes[idx as usize];
    let kids = node.children();
    let first = bits.trailing_zeros() as usize;
    let rest = bits & (bits - 1);
    if rest == 0 {
        let cur = kids[first];
        fetch_child(nodes, cur, idx);
        hint_next::<M, L>(action, cur);
        return cur;
    }
    if M::ANY {
        // Any hit: leaves first (they can end the query), no sorting.
        let leaves = node.leaf_bits() & bits;
        let first = if leaves != 0 { leaves.trailing_zeros() } else { bits.trailing_zeros() } as usize;
        let rest = bits & !(1 << first);
        // Inner children first, so the leaves end on top of the stack.
        for mut b in [rest & !leaves, rest & leaves] {
            while b != 0 {
                let i = b.trailing_zeros() as usize;
                b &= b - 1;
                fetch_child(nodes, kids[i], idx);
                stack.push(StackEntry { child: kids[i], t: tn.lane(i) });
            }
        }
        let cur = kids[first];
        fetch_child(nodes, cur, idx);
        hint_next::<M, L>(action, cur);
        return cur;
    }
    let mut t = [0f32; MAX_WIDTH];
    tn.store(&mut t[..L::N]);
    if rest & (rest - 1) == 0 {
        // Exactly two: a compare and a branch. The branch is predicted, so the
        // step down does not wait for the comparison (a sorting network puts
        // its whole reduction on the path from one node to the next). Ties go
        // to the lower lane.
        let second = rest.trailing_zeros() as usize;
        let (near, far) = if t[second] < t[first] { (second, first) } else { (first, second) };
        stack.push(StackEntry { child: kids[far], t: t[far] });
        fetch_child(nodes, kids[far], idx);
        let cur = kids[near];
        fetch_child(nodes, cur, idx);
        hint_next::<M, L>(action, cur);
        return cur;
    }
    // Three or more: order them (nearest next, the rest on the stack farthest
    // first) without data-dependent branches, which mispredict on incoherent
    // rays; see child_order. (Finding the nearest by predicted compares here as
    // well measured slower on sponza's incoherent rays.)
    let pending = bits.count_ones() as usize - 1;
    let cur = if let Ok(kids) = <&[u32; 16]>::try_from(kids) {
        let mut entries = [StackEntry::default(); 16];
        let nearest = child_order::order16(&t, kids, bits, &mut entries);
        stack.push_block(&entries, pending);
        nearest
    } else {
        let mut entries = [StackEntry::default(); 8];
        let t8 = t.first_chunk::<8>().expect("16 >= 8");
        let nearest = child_order::order(t8, kids, bits, &mut entries);
        stack.push_block(&entries, pending);
        nearest
    };
    let mut b = bits;
    while b != 0 {
        let i = b.trailing_zeros() as usize;
        b &= b - 1;
        fetch_child(nodes, kids[i], idx);
    }
    cur
}

/// Closest or any hit of one ray through a binary tree, with the textbook slab test
/// ([`slab::textbook_scalar`]) and near child first: the scalar backend's traversal.
/// Returns `true` when the action ended the traversal.
pub fn ray_binary<M: Mode>(
    nodes: &[Node2],
    ray: &Ray,
    action: &mut impl LeafAction,
    stack: &mut TraversalStack,
) -> bool {
    if nodes.is_empty() || slab::textbook_scalar(ray, action.t_max(), &nodes[0].aabb()).is_none() {
        return false;
    }
    let mut cur = 0usize;
    loop {
        let n = &nodes[cur];
        if n.is_leaf() {
            if action.leaf(n.index, n.count) && M::ANY {
                stack.clear();
                return true;
            }
        } else {
            let (l, r) = (n.index as usize, n.index as usize + 1);
            let enter = |c: usize| slab::textbook_scalar(ray, action.t_max(), &nodes[c].aabb());
            match (enter(l), enter(r)) {
                (Some(a), Some(b)) => {
                    let (near, far, tf) = if a <= b { (l, r, b) } else { (r, l, a) };
                    stack.push(StackEntry { child: far as u32, t: tf });
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
            let Some(e) = stack.pop() else {
                return false;
            };
            if e.t <= action.t_max() {
                cur = e.child as usize;
                break;
            }
        }
    }
}

/// `N` rays through a 4- or 8-wide tree: every child box of a visited node is tested
/// against all the rays still active (a lane is active while it is in `rays.active()` and
/// not finished by the action); children hit by any ray are visited, nearest first along
/// the first active ray. A child is visited with the lanes whose rays enter its box and
/// whose best hit (`action.t_max()`, up to [`slab::cull_bound`]) is not nearer than that
/// entry, and not at all when no lane is left; each leaf is handed those lanes. Returns the
/// lanes the action finished. Packets of up to [`MAX_PACKET_LANES`] lanes (checked at compile
/// time).
pub fn packet_wide<L: Lanes, N: WideNode>(
    bvh: &WideBvh<N>,
    rays: &RayPacket<L>,
    action: &mut impl PacketLeafAction<L>,
    stack: &mut PacketStack,
) -> L::Mask {
    const { assert!(N::WIDTH <= 8, "packets traverse trees of up to 8 children per node") };
    let start = rays.active().bitmask();
    if bvh.root == EMPTY_CHILD || start == 0 {
        return L::Mask::splat(false);
    }
    let pr = PacketRay::new(rays);
    // Rays of one octant (coherent packets) share each node's near and far planes: picked
    // once per node, not per box and lane.
    match pr.octant(start) {
        Some(neg) => packet_walk::<L, N, true>(bvh, &pr, neg, start, action, stack),
        None => packet_walk::<L, N, false>(bvh, &pr, [false; 3], start, action, stack),
    }
}

/// The loop of [`packet_wide`]; with `OCTANT`, every active ray's `1/d` has the signs `neg`.
#[inline(always)]
fn packet_walk<L: Lanes, N: WideNode, const OCTANT: bool>(
    bvh: &WideBvh<N>,
    pr: &PacketRay<L>,
    neg: [bool; 3],
    start: u32,
    action: &mut impl PacketLeafAction<L>,
    stack: &mut PacketStack,
) -> L::Mask {
    let mut live = start;
    // A child comes with the lanes that enter it and their entry times: it is visited with
    // those of them that are live and whose best hit is not nearer than their entry.
    let mut cur = ((bvh.root, live), L::splat(f32::NEG_INFINITY));
    loop {
        let ((child, entered), t_enter) = cur;
        let lanes = entered & live & t_enter.le_bits(slab::cull_bound_lanes(action.t_max()));
        if lanes != 0 {
            match Child::decode(child) {
                Child::Node(idx) => {
                    let node = &bvh.nodes[idx as usize];
                    let [mnx, mny, mnz, mxx, mxy, mxz] = node.columns();
                    let order = |n: bool, lo, hi| if OCTANT && n { (hi, lo) } else { (lo, hi) };
                    let (nx, fx) = order(neg[0], mnx, mxx);
                    let (ny, fy) = order(neg[1], mny, mxy);
                    let (nz, fz) = order(neg[2], mnz, mxz);
                    let lead = lanes.trailing_zeros() as usize;
                    let t_max = action.t_max();
                    // (child, lanes, entry time of the first active ray, index of the lanes'
                    // entry times in `times`), at most 8, kept sorted farthest first
                    // (insertion: few entries).
                    let mut hits = [(0u32, 0u32, 0f32, 0usize); 8];
                    let mut times = [L::splat(0.0); 8];
                    let mut k = 0;
                    for (i, &c) in node.children().iter().enumerate() {
                        if c == EMPTY_CHILD {
                            break; // the collapse fills slots from 0
                        }
                        let near = Vec3x::splat(Vec3::new(nx[i], ny[i], nz[i]));
                        let far = Vec3x::splat(Vec3::new(fx[i], fy[i], fz[i]));
                        let (hit, tn) =
                            if OCTANT { pr.test_ordered(near, far, t_max) } else { pr.test(near, far, t_max) };
                        let m = hit.bitmask() & lanes;
                        if m != 0 {
                            let key = if m >> lead & 1 != 0 { tn.lane(lead) } else { f32::INFINITY };
                            times[k] = tn;
                            let mut j = k;
                            while j > 0 && hits[j - 1].2.total_cmp(&key).is_lt() {
                                hits[j] = hits[j - 1];
                                j -= 1;
                            }
                            hits[j] = (c, m, key, k);
                            k += 1;
                        }
                    }
                    if k > 0 {
                        // Farthest first onto the stack, the nearest visited next.
                        for &(c, m, _, at) in &hits[..k - 1] {
                            stack.push(c, m, times[at]);
                        }
                        let (c, m, _, at) = hits[k - 1];
                        cur = ((c, m), times[at]);
                        continue;
                    }
                }
                Child::Leaf { first, count } => {
                    let done = action.leaf(first, count, L::Mask::from_bitmask(lanes)).bitmask();
                    live &= !done;
                    if live == 0 {
                        stack.clear();
                        return L::Mask::from_bitmask(start);
                    }
                }
                Child::Empty => {}
            }
        }
        let Some(e) = stack.pop() else { return L::Mask::from_bitmask(start & !live) };
        cur = e;
    }
}

#[cfg(test)]
mod tests {
    use super::{Closest, LeafAction, PacketLeafAction, TraversalRay, TraversalStack, packet_wide, ray_wide};
    use crate::bvh::{BuildOptions, Child, Node4, Node8, WideBvh, WideNode, build_trees};
    use crate::kernel::ray_sphere;
    use crate::lanes::{F32x4, F32x8, Lanes, Mask};
    use crate::prim::{Aabb, Sphere};
    use crate::ray::{Ray, RayPacket};
    use crate::rng::Rng;
    use glam::Vec3;

    /// Nearest sphere per lane, with the scalar kernel.
    struct Nearest<'a> {
        spheres: &'a [Sphere],
        perm: &'a [u32],
        rays: [Ray; 8],
        best: [Option<(f32, u32)>; 8],
    }

    impl PacketLeafAction<F32x8> for Nearest<'_> {
        fn t_max(&self) -> F32x8 {
            F32x8::load(&std::array::from_fn::<f32, 8, _>(|i| self.best[i].map_or(self.rays[i].t_max, |b| b.0)))
        }
        fn leaf(&mut self, first: u32, count: u32, active: <F32x8 as Lanes>::Mask) -> <F32x8 as Lanes>::Mask {
            for i in (0..8).filter(|&i| active.bitmask() >> i & 1 != 0) {
                for k in first..first + count {
                    let id = self.perm[k as usize];
                    let t_max = self.best[i].map_or(self.rays[i].t_max, |b| b.0);
                    let r = Ray { t_max, ..self.rays[i] };
                    if let Some(t) = ray_sphere::intersect_scalar(&r, &self.spheres[id as usize])
                        && self.best[i].is_none_or(|b| (t, id) < b)
                    {
                        self.best[i] = Some((t, id));
                    }
                }
            }
            <F32x8 as Lanes>::Mask::splat(false)
        }
    }

    /// Records the leaves a ray visits (its interval never shrinks: every leaf it enters).
    #[derive(Default)]
    struct Visits(Vec<u32>);

    impl LeafAction for Visits {
        fn t_max(&self) -> f32 {
            f32::INFINITY
        }
        fn leaf(&mut self, first: u32, _count: u32) -> bool {
            self.0.push(first);
            false
        }
    }

    /// A root whose slot `slots[i]` is leaf `i`, a unit box at `x = 10 i`.
    fn row_of_leaves<N: WideNode>(slots: &[usize]) -> WideBvh<N> {
        let mut root = N::empty();
        for (i, &slot) in slots.iter().enumerate() {
            let c = Vec3::new(10.0 * i as f32, 0.0, 0.0);
            root.set(slot, &Aabb::new(c - 0.5, c + 0.5), Child::leaf(i as u32, 1));
        }
        WideBvh { nodes: vec![root], root: 0, bounds: Aabb::new(Vec3::splat(-1.0), Vec3::splat(100.0)) }
    }

    fn visits<L: Lanes, N: WideNode>(bvh: &WideBvh<N>, ray: &Ray) -> Vec<u32> {
        let mut action = Visits::default();
        ray_wide::<Closest, L, N>(bvh, &TraversalRay::new(ray), &mut action, &mut TraversalStack::new());
        action.0
    }

    #[test]
    fn closest_hit_order_visits_the_nearest_child_first() {
        // Two hit children (a compare and a branch) and three or more (the sorting network),
        // in slots in and against the order of distance, both ways along the row, at both
        // widths.
        for slots in [&[0, 1][..], &[3, 1], &[2, 0, 1], &[1, 3, 0, 2]] {
            let n = slots.len() as u32;
            let forward: Vec<u32> = (0..n).collect();
            let backward: Vec<u32> = (0..n).rev().collect();
            for (ray, want) in [
                (Ray::new(Vec3::new(-5.0, 0.1, 0.0), Vec3::X), &forward),
                (Ray::new(Vec3::new(10.0 * n as f32, 0.1, 0.0), -Vec3::X), &backward),
            ] {
                assert_eq!(&visits::<F32x8, Node8>(&row_of_leaves(slots), &ray), want, "slots {slots:?}");
                assert_eq!(&visits::<F32x4, Node4>(&row_of_leaves(slots), &ray), want, "slots {slots:?}");
            }
        }
    }

    /// Records the hints (`true`) and the leaf tests (`false`) of a ray, in order (its
    /// interval never shrinks). A cell, since a hint gets the action by shared reference.
    #[derive(Default)]
    struct Hints(core::cell::RefCell<Vec<(bool, u32, u32)>>);

    impl LeafAction for Hints {
        fn t_max(&self) -> f32 {
            f32::INFINITY
        }
        fn leaf(&mut self, first: u32, count: u32) -> bool {
            self.0.get_mut().push((false, first, count));
            false
        }
        fn prefetch_leaf(&self, first: u32, count: u32) {
            self.0.borrow_mut().push((true, first, count));
        }
    }

    /// The hints of `M` traversals of `rays` through a tree `L::N` wide: how many, after
    /// checking that each one named the leaf tested right after it.
    fn hints_of<M: super::Mode, L: Lanes, N: WideNode>(bvh: &WideBvh<N>, rays: &[Ray]) -> usize {
        let mut hints = 0;
        for ray in rays {
            let mut action = Hints::default();
            ray_wide::<M, L, N>(bvh, &TraversalRay::new(ray), &mut action, &mut TraversalStack::new());
            let log = action.0.into_inner();
            for (k, &(hint, first, count)) in log.iter().enumerate() {
                if hint {
                    assert_eq!(log.get(k + 1), Some(&(false, first, count)), "the hint at {k} of {log:?}");
                    hints += 1;
                }
            }
        }
        hints
    }

    #[test]
    fn the_leaf_visited_next_is_hinted_for_any_hit_and_for_closest_hits_on_16_wide_trees() {
        use super::AnyHit;
        use crate::lanes::F32x16;
        let mut rng = Rng::new(0x4147);
        let spheres: Vec<Sphere> = (0..3000).map(|_| Sphere::new(rng.vec3(-10.0, 10.0), 0.3)).collect();
        let boxes: Vec<Aabb> = spheres.iter().map(|s| s.aabb()).collect();
        let b2 = crate::bvh::build(&boxes, &BuildOptions::default());
        let (bvh8, bvh16) = (WideBvh::<Node8>::collapse(&b2), WideBvh::<crate::bvh::Node16>::collapse(&b2));
        let rays: Vec<Ray> = (0..200)
            .map(|_| {
                let o = rng.vec3(-12.0, 12.0);
                Ray::new(o, rng.unit_vec3())
            })
            .collect();
        assert!(hints_of::<AnyHit, F32x8, Node8>(&bvh8, &rays) > 100);
        assert!(hints_of::<AnyHit, F32x16, _>(&bvh16, &rays) > 100);
        assert!(hints_of::<Closest, F32x16, _>(&bvh16, &rays) > 100);
        // Closest hits on 8-wide trees measured slower with the hint: none is given.
        assert_eq!(hints_of::<Closest, F32x8, Node8>(&bvh8, &rays), 0);
    }

    /// Records the leaves a packet visits and, with `shrink`, as a closest-hit query would,
    /// ends each lane's interval at the first leaf it reaches (at the leaf's centre,
    /// `x = 10 i`, for rays along +x from `x = origin_x`).
    struct PacketVisits {
        origin_x: F32x8,
        shrink: bool,
        t_max: F32x8,
        leaves: Vec<(u32, u32)>,
    }

    impl PacketLeafAction<F32x8> for PacketVisits {
        fn t_max(&self) -> F32x8 {
            self.t_max
        }
        fn leaf(&mut self, first: u32, _count: u32, active: <F32x8 as Lanes>::Mask) -> <F32x8 as Lanes>::Mask {
            self.leaves.push((first, active.bitmask()));
            if !self.shrink {
                return <F32x8 as Lanes>::Mask::splat(false);
            }
            let at = F32x8::splat(10.0 * first as f32) - self.origin_x;
            self.t_max = <F32x8 as Lanes>::select(active, Lanes::min(at, self.t_max), self.t_max);
            <F32x8 as Lanes>::Mask::splat(false)
        }
    }

    #[test]
    fn a_packet_pop_drops_the_lanes_whose_hit_is_nearer_than_their_entry() {
        // Four unit boxes along x, all entered by every ray: the nearest is visited first and
        // ends the lanes' intervals, so the three pending boxes are popped with no lane left
        // (visited anyway, the test would see four leaves). Lanes 0..4 start before box 0,
        // lanes 4..8 just past it (they enter box 1 first and end there), in one octant.
        let bvh = row_of_leaves::<Node8>(&[0, 1, 2, 3]);
        let rays: [Ray; 8] =
            std::array::from_fn(|i| Ray::new(Vec3::new(if i < 4 { -5.0 } else { 6.0 }, 0.01 * i as f32, 0.0), Vec3::X));
        let packet = RayPacket::<F32x8>::from_rays(&rays).unwrap();
        let origin_x = F32x8::load(&rays.map(|r| r.origin.x));
        let mut stack = super::PacketStack::new();
        let visits = |shrink: bool, stack: &mut super::PacketStack| {
            let mut action = PacketVisits { origin_x, shrink, t_max: F32x8::splat(f32::INFINITY), leaves: Vec::new() };
            packet_wide(&bvh, &packet, &mut action, stack);
            action.leaves
        };
        assert_eq!(visits(true, &mut stack), [(0, 0x0f), (1, 0xf0)]);
        // Without a best hit, every box is visited by the lanes that enter it, nearest first.
        assert_eq!(visits(false, &mut stack), [(0, 0x0f), (1, 0xff), (2, 0xff), (3, 0xff)]);
    }

    #[test]
    fn packets_find_the_nearest_sphere_in_one_octant_and_in_mixed_ones() {
        // Both box tests of the packet walk (near and far planes picked per node for rays of
        // one octant, per lane otherwise) against brute force.
        let mut rng = Rng::new(0x5eed);
        let spheres: Vec<Sphere> = (0..500).map(|_| Sphere::new(rng.vec3(-10.0, 10.0), rng.range(0.05, 0.6))).collect();
        let boxes: Vec<_> = spheres.iter().map(Sphere::aabb).collect();
        let trees = build_trees(&boxes, &BuildOptions::default()).unwrap();
        let mut stack = super::PacketStack::new();
        let (mut hits, mut packets) = (0, [0; 2]);
        for case in 0..400 {
            let one_octant = case % 2 == 0;
            let base = rng.vec3(-1.0, 1.0).normalize_or(Vec3::X);
            let rays: [Ray; 8] = std::array::from_fn(|_| {
                let mut d = rng.vec3(-1.0, 1.0);
                if one_octant {
                    d = d.abs().copysign(base);
                }
                Ray::new(rng.vec3(-12.0, 12.0), d)
            });
            let packet = RayPacket::<F32x8>::from_rays(&rays).unwrap();
            let mixed = crate::bvh::traverse::PacketRay::new(&packet).octant(0xff).is_none();
            packets[usize::from(mixed)] += 1;
            let mut action = Nearest { spheres: &spheres, perm: &trees.perm, rays, best: [None; 8] };
            packet_wide(&trees.bvh8, &packet, &mut action, &mut stack);
            for (i, r) in rays.iter().enumerate() {
                let brute = spheres
                    .iter()
                    .enumerate()
                    .filter_map(|(k, s)| ray_sphere::intersect_scalar(r, s).map(|t| (t, k as u32)))
                    .min_by(|a, b| a.partial_cmp(b).unwrap());
                assert_eq!(action.best[i], brute, "case {case} lane {i}");
                hits += usize::from(brute.is_some());
            }
        }
        assert!(packets[0] >= 200 && packets[1] >= 150, "both walks exercised: {packets:?}");
        assert!(hits > 400, "too few hits to mean anything: {hits}");
    }
}
