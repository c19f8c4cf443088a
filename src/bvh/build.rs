//! Binned SAH build (Wald 2007) over primitive boxes. The builder never touches the
//! primitives themselves: it takes their boxes, returns a binary tree whose leaves index a
//! permutation of `0..n`, and the caller reorders its own data by that permutation.

use super::node::{Box3, Bvh2, MAX_BINARY_LEAF, Node2};
use super::preset::BuildOptions;
use crate::prim::Aabb;
use bytemuck::Zeroable;
use glam::{BVec4A, Vec3A, Vec4};
use wide::{f32x4, f32x8, i32x4, i32x8};

/// Builds a binary BVH over `boxes` top-down by the binned SAH (no reinsertion: that is the
/// next step of [`crate::bvh::build()`]). Invalid or empty boxes are allowed and simply never
/// contain anything; callers normally leave them out.
pub fn binned_sah(boxes: &[Aabb], opts: &BuildOptions) -> Bvh2 {
    if boxes.is_empty() {
        return Bvh2::default();
    }
    use rayon::prelude::*;
    // The chunks are merged in order, so the bounds do not depend on the thread count.
    let task = opts.parallel_threshold.max(1);
    let mut refs: Vec<Ref> =
        boxes.par_iter().with_min_len(task).zip(0..boxes.len() as u32).map(|(b, i)| Ref::new(b, i)).collect();
    let ctx = Ctx { opts };
    let parts: Vec<Info> = refs.par_chunks(task).map(Info::of).collect();
    let info = parts.iter().fold(Info::EMPTY, |a, b| a.merge(b));
    let tree = ctx.subtree(&mut refs, info, 0, 0, &mut Scratch::new());
    let perm: Vec<u32> = refs.iter().map(Ref::id).collect();
    drop(refs);
    let mut nodes = Vec::with_capacity(2 * boxes.len() / opts.max_leaf.max(1) + 1);
    nodes.push(Node2::zeroed());
    flatten(tree, 0, &mut nodes);
    Bvh2 { nodes, perm }
}

/// The top of the tree while it is built in parallel: inner nodes above the parallel
/// threshold, and below it subtrees already flattened by one task ([`Ctx::emit`]).
enum Tmp {
    Inner {
        bounds: Aabb,
        kids: Box<[Tmp; 2]>,
    },
    /// A subtree in [`Bvh2`] layout, its root first, child indices local to the vector.
    Nodes(Vec<Node2>),
}

/// Writes `t` with its root at `nodes[at]` (children after their parent, in pairs).
fn flatten(t: Tmp, at: usize, nodes: &mut Vec<Node2>) {
    match t {
        Tmp::Inner { bounds: b, kids } => {
            let first = nodes.len();
            nodes.extend([Node2::zeroed(); 2]);
            nodes[at] = inner_node(&b, first);
            let [l, r] = *kids;
            flatten(l, first, nodes);
            flatten(r, first + 1, nodes);
        }
        Tmp::Nodes(chunk) => {
            // Local index i >= 1 lands at base + i - 1.
            let shift = nodes.len() as u32 - 1;
            nodes[at] = moved(&chunk[0], shift);
            nodes.extend(chunk[1..].iter().map(|n| moved(n, shift)));
        }
    }
}

/// `n` with its child index shifted by `shift` (leaves keep their primitive range).
fn moved(n: &Node2, shift: u32) -> Node2 {
    Node2 { index: n.index + if n.is_leaf() { 0 } else { shift }, ..*n }
}

fn inner_node(b: &Aabb, first: usize) -> Node2 {
    Node2 { min: b.min.to_array(), count: 0, max: b.max.to_array(), index: first as u32 }
}

fn leaf_node(b: &Aabb, start: usize, count: usize) -> Node2 {
    Node2 { min: b.min.to_array(), count: count as u32, max: b.max.to_array(), index: start as u32 }
}

struct Ctx<'a> {
    opts: &'a BuildOptions,
}

/// A box as one 8-lane register: the minimum corner in lanes 0–2 and the *negated* maximum
/// corner in lanes 4–6, so that a union is one lanewise minimum (`-max(a, b) = min(-a, -b)`
/// exactly for numbers; with a NaN, x86's `min` and `max` both return their second operand,
/// so the unions, and the trees, are those of the two-half form). Lanes 3 and 7 hold no box:
/// a [`Ref`]'s index rides in lane 3 and a bin's count in lane 7 ([`Bins`]), and no box
/// arithmetic's result there is read. The binning's bin updates (with their count) and sweeps
/// are unions; as `Box3` each was two operations, two loads and two stores.
#[derive(Clone, Copy)]
struct NBox(f32x8);

impl NBox {
    const EMPTY: NBox = NBox(f32x8::new([f32::INFINITY; 8]));
    #[inline(always)]
    fn union(self, o: NBox) -> NBox {
        NBox(self.0.fast_min(o.0))
    }
    /// The minimum corner and the negated maximum corner.
    #[inline(always)]
    fn halves(self) -> (f32x4, f32x4) {
        let [lo, nhi]: [f32x4; 2] = bytemuck::cast(self.0);
        (lo, nhi)
    }
    /// `max - min` per axis (lane 3 unused), as `Box3` computes it: `-(-max)` is exact.
    #[inline(always)]
    fn extent(self) -> f32x4 {
        let (lo, nhi) = self.halves();
        -nhi - lo
    }
    /// Twice the centre, `min + max` (lane 3 unused), as `min - (-max)`: exactly equal.
    #[inline(always)]
    fn center2(self) -> f32x4 {
        let (lo, nhi) = self.halves();
        lo - nhi
    }
    #[inline(always)]
    fn box3(self) -> Box3 {
        let (lo, nhi) = self.halves();
        Box3 { min: vec3a(lo), max: vec3a(-nhi) }
    }
    fn aabb(self) -> Aabb {
        self.box3().aabb()
    }
    fn area(self) -> f32 {
        self.box3().area()
    }
}

/// A primitive as the builder moves it around: its box ([`NBox`]) and its caller's index,
/// 32 bytes, so that partitioning moves the data binning reads next (sequential passes
/// instead of gathers through a permutation). The box loads as one SIMD register: the index
/// rides in the unused lane 3, encoded as a normal float ([`Ref::new`]) so that the
/// arithmetic on that lane (never read) meets no denormals.
#[derive(Clone, Copy)]
struct Ref {
    b: NBox,
}

const _: () = assert!(core::mem::size_of::<Ref>() == 32);

/// Added to an index's bits in [`Ref`]: indices up to 2^27 become floats from 2 to 2^17.
const ID_BIAS: u32 = 0x4000_0000;
const _: () = assert!(super::node::MAX_PRIMITIVES <= 1 << 27);

impl Ref {
    fn new(b: &Aabb, id: u32) -> Ref {
        let (lo, hi) = (b.min, b.max);
        Ref { b: NBox(f32x8::new([lo.x, lo.y, lo.z, f32::from_bits(ID_BIAS + id), -hi.x, -hi.y, -hi.z, 0.0])) }
    }
    fn id(&self) -> u32 {
        self.b.0.as_array()[3].to_bits() - ID_BIAS
    }
    #[cfg(test)]
    fn bounds(&self) -> Box3 {
        self.b.box3()
    }
    /// Twice the centroid (the factor does not change any comparison or bin); lane 3 holds
    /// the index's float, which the grid scales by 0.
    #[inline(always)]
    fn centroid2(&self) -> f32x4 {
        self.b.center2()
    }
}

/// A candidate split: primitives whose centroid falls in a bin below `bin` of `axis` go left.
#[derive(Clone, Copy)]
struct Split {
    axis: usize,
    bin: usize,
    cost: f32,
}

/// The bounds of a set of references: their boxes and their (doubled) centroids.
#[derive(Clone, Copy)]
struct Info {
    bounds: NBox,
    cent: Box3,
}

impl Info {
    const EMPTY: Info = Info { bounds: NBox::EMPTY, cent: Box3::EMPTY };
    #[inline(always)]
    fn grow(&mut self, r: &Ref) {
        self.bounds = self.bounds.union(r.b);
        let c = vec3a(r.centroid2());
        self.cent = Box3 { min: self.cent.min.min(c), max: self.cent.max.max(c) };
    }
    /// The bounds of both sets.
    fn merge(&self, o: &Info) -> Info {
        Info { bounds: self.bounds.union(o.bounds), cent: self.cent.union(&o.cent) }
    }
    fn of(refs: &[Ref]) -> Info {
        let mut i = Info::EMPTY;
        refs.iter().for_each(|r| i.grow(r));
        i
    }
}

/// The bin grid of one node: `nbins` bins per axis over the centroid bounds. An axis whose
/// centroids all coincide gets scale 0 (everything in bin 0), so it never offers a split.
#[derive(Clone, Copy)]
struct Grid {
    lo: f32x4,
    scale: f32x4,
    nbins: usize,
}

impl Grid {
    fn new(cent: &Box3, nbins: usize) -> Grid {
        let ext = cent.max - cent.min;
        // Finite even for the tiniest extents, so that a centroid's product is at most
        // about `nbins` and binning and partitioning agree (see `goes_left`).
        let scale = (Vec3A::splat(nbins as f32) / ext).min(Vec3A::splat(f32::MAX));
        let scale = Vec3A::select(ext.cmpgt(Vec3A::ZERO), scale, Vec3A::ZERO);
        Grid { lo: lanes(cent.min), scale: lanes(scale), nbins }
    }
    /// The bin of a (doubled) centroid on each axis, as flat indices into a [`Bins`] table
    /// (axis `a`'s bins start at `a * MAX_BINS`). One SIMD conversion for all three axes: a
    /// NaN product converts to `i32::MIN` (0 off x86) and the clamp puts it in bin 0; the
    /// partition ([`Grid::goes_left`]) decides the same way.
    #[inline(always)]
    fn bins(&self, c: f32x4) -> [usize; 3] {
        let b = ((c - self.lo) * self.scale).fast_trunc_int();
        let b = b.max(i32x4::ZERO).min(i32x4::splat(self.nbins as i32 - 1)) + AXIS_OFFSET;
        let b = b.to_array();
        [b[0] as usize, b[1] as usize, b[2] as usize]
    }
    /// Whether `r` falls in a bin below `s.bin` on `s.axis`, computed on that axis alone:
    /// the same product as [`Grid::bins`], compared before truncation. For a product `x`
    /// that is NaN or finite and not negative (a finite scale and a centroid inside the
    /// bounds ensure it), "`x < bin` or NaN" is exactly "clamped truncation below `bin`".
    #[inline(always)]
    fn goes_left(&self, r: &Ref, s: &Split) -> bool {
        let a = s.axis;
        let v = r.b.0.as_array();
        let x = (v[a] - v[a + 4] - self.lo.as_array()[a]) * self.scale.as_array()[a];
        x < s.bin as f32 || x.is_nan()
    }
}

const MAX_BINS: usize = 48;
/// Fewest references a half must have for a node's binning to be split in two tasks.
const PAR_BIN_MIN: usize = 1024;
const AXIS_OFFSET: i32x4 = i32x4::new([0, MAX_BINS as i32, 2 * MAX_BINS as i32, 0]);

#[inline(always)]
fn lanes(v: Vec3A) -> f32x4 {
    f32x4::new(Vec4::from((v, 0.0)).to_array())
}

/// The first three lanes of `v` (the inverse of [`lanes`]).
#[inline(always)]
fn vec3a(v: f32x4) -> Vec3A {
    Vec3A::from_vec4(bytemuck::cast(v))
}

/// Bin boxes and counts of three axes, [`MAX_BINS`] per axis. A bin's count rides in its
/// box's unused lane 7 as an integer, biased by [`ID_BIAS`] so that the lane holds a normal
/// float (the sweep's arithmetic on it, never read, meets no denormals; counts up to
/// [`super::node::MAX_PRIMITIVES`] keep it below 2^31): an update is one store instead of a
/// box store and a count's read-modify-write.
struct Bins {
    boxes: [NBox; 3 * MAX_BINS],
}

/// An empty bin: the empty box, count 0.
const BIN_EMPTY: NBox = {
    let i = f32::INFINITY;
    NBox(f32x8::new([i, i, i, i, i, i, i, f32::from_bits(ID_BIAS)]))
};
/// Selects lane 7 (the count) in [`Bins`]' updates.
const COUNT_LANE: f32x8 = {
    let t = f32::from_bits(u32::MAX);
    f32x8::new([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, t])
};
/// One primitive, in the count lane.
const COUNT_ONE: i32x8 = i32x8::new([0, 0, 0, 0, 0, 0, 0, 1]);

impl Bins {
    fn new() -> Box<Bins> {
        Box::new(Bins { boxes: [BIN_EMPTY; 3 * MAX_BINS] })
    }
    fn reset(&mut self, nbins: usize) {
        for a in 0..3 {
            self.boxes[a * MAX_BINS..a * MAX_BINS + nbins].fill(BIN_EMPTY);
        }
    }
    /// The number of references in bin `i`.
    #[inline(always)]
    fn count(&self, i: usize) -> u32 {
        self.boxes[i].0.as_array()[7].to_bits() - ID_BIAS
    }
    /// `bin` grown by `b`'s box (lanes 0–6), its count raised by `add`'s lane 7 (one
    /// primitive, [`COUNT_ONE`], or another bin's unbiased count).
    #[inline(always)]
    fn grow(bin: NBox, b: NBox, add: i32x8) -> NBox {
        let count: f32x8 = bytemuck::cast(bytemuck::cast::<f32x8, i32x8>(bin.0) + add);
        NBox(COUNT_LANE.bitselect(count, bin.0.fast_min(b.0)))
    }
    /// Adds `o`'s first `nbins` bins of each axis to these.
    fn absorb(&mut self, o: &Bins, nbins: usize) {
        for a in 0..3 {
            for i in a * MAX_BINS..a * MAX_BINS + nbins {
                let add = i32x8::new([0, 0, 0, 0, 0, 0, 0, o.count(i) as i32]);
                self.boxes[i] = Self::grow(self.boxes[i], o.boxes[i], add);
            }
        }
    }
    #[inline(always)]
    fn add(&mut self, at: [usize; 3], b: NBox) {
        for i in at {
            self.boxes[i] = Self::grow(self.boxes[i], b, COUNT_ONE);
        }
    }
}

/// Per-task scratch: two bin tables, filled alternately so that consecutive primitives
/// landing in the same bin (meshes are stored coherently) do not wait on each other's update.
struct Scratch([Box<Bins>; 2]);

impl Scratch {
    fn new() -> Scratch {
        Scratch([Bins::new(), Bins::new()])
    }
}

impl Ctx<'_> {
    /// Builds the subtree over `idx` (the references from `offset` on in leaf order), whose
    /// bounds are `info`, splitting in parallel down to the parallel threshold. `scratch` is
    /// one rayon task's bins (not one allocation per node).
    fn subtree(&self, idx: &mut [Ref], info: Info, offset: usize, depth: usize, scratch: &mut Scratch) -> Tmp {
        let n = idx.len();
        if n < self.opts.parallel_threshold {
            let mut chunk = Vec::with_capacity(2 * n);
            chunk.push(Node2::zeroed());
            self.emit(idx, info, offset, depth, scratch, &mut chunk, 0);
            return Tmp::Nodes(chunk);
        }
        let bounds = info.bounds.aabb();
        match self.split(idx, &info, depth, scratch) {
            None => Tmp::Nodes(vec![leaf_node(&bounds, offset, n)]),
            Some((mid, li, ri)) => {
                let (l, r) = idx.split_at_mut(mid);
                let (a, b) = rayon::join(
                    || self.subtree(l, li, offset, depth + 1, scratch),
                    || self.subtree(r, ri, offset + mid, depth + 1, &mut Scratch::new()),
                );
                Tmp::Inner { bounds, kids: Box::new([a, b]) }
            }
        }
    }

    /// Builds the subtree over `idx` on this thread, its root at `out[at]`.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        idx: &mut [Ref],
        info: Info,
        offset: usize,
        depth: usize,
        scratch: &mut Scratch,
        out: &mut Vec<Node2>,
        at: usize,
    ) {
        let bounds = info.bounds.aabb();
        match self.split(idx, &info, depth, scratch) {
            None => out[at] = leaf_node(&bounds, offset, idx.len()),
            Some((mid, li, ri)) => {
                let first = out.len();
                out.extend([Node2::zeroed(); 2]);
                out[at] = inner_node(&bounds, first);
                let (l, r) = idx.split_at_mut(mid);
                self.emit(l, li, offset, depth + 1, scratch, out, first);
                self.emit(r, ri, offset + mid, depth + 1, scratch, out, first + 1);
            }
        }
    }

    /// Decides a node: `None` for a leaf, or the split (references `..mid` go left, moved
    /// there) with the bounds of both sides.
    fn split(&self, idx: &mut [Ref], info: &Info, depth: usize, scratch: &mut Scratch) -> Option<(usize, Info, Info)> {
        let n = idx.len();
        if n == 1 {
            return None;
        }
        let max_leaf = self.opts.max_leaf.clamp(1, MAX_BINARY_LEAF);
        // Every split costs at least one node visit (see `best_split`), so a leaf priced at
        // most that needs no binning: the same tree, without the work.
        if n <= max_leaf && self.leaf_cost(n) <= 1.0 {
            return None;
        }
        // Past this depth, split by count so the tree always fits the traversal stack.
        let split = if depth < 48 { self.best_split(idx, info, scratch) } else { None };
        let parts = match split {
            Some((s, grid)) if s.cost < self.leaf_cost(n) || n > max_leaf => {
                match partition(idx, |r| grid.goes_left(r, &s)) {
                    (m, l, r) if m > 0 && m < n => Some((m, l, r)),
                    _ => None,
                }
            }
            _ if n <= max_leaf => return None,
            _ => None,
        };
        // No useful split (all centroids equal, or too deep): halve the list.
        Some(parts.unwrap_or_else(|| (n / 2, Info::of(&idx[..n / 2]), Info::of(&idx[n / 2..]))))
    }

    fn leaf_cost(&self, n: usize) -> f32 {
        // Priced per started pair of primitives: finer than the 4/8-lane blocks traversal
        // tests, because the binary tree is only a draft. The wide collapse merges small
        // leaves into blocks by its own cost model, and reinsertion can move small subtrees
        // more freely; leaves priced per block of 4 came out fatter and measured 10-20 %
        // slower on sponza. High prices a pair a little higher, for smaller leaves still.
        n.div_ceil(2) as f32 * self.opts.leaf_pair_cost
    }

    /// Bins `idx` on `grid` into `scratch`'s first table, or with `two` into both in turn.
    /// Large nodes bin their halves in parallel and merge the second half's tables into the
    /// first's: unions and counts are exact, so the two tables together hold what one pass's
    /// hold (which table a reference lands in may differ), and the halves are split by size
    /// alone, so they do not depend on the thread count.
    fn bin(&self, idx: &[Ref], grid: &Grid, two: bool, scratch: &mut Scratch) {
        let nbins = grid.nbins;
        if two && idx.len() >= 2 * self.opts.parallel_threshold.max(PAR_BIN_MIN) {
            let (l, r) = idx.split_at(idx.len() / 2);
            let mut other = Scratch::new();
            rayon::join(|| self.bin(l, grid, true, scratch), || self.bin(r, grid, true, &mut other));
            for (mine, theirs) in scratch.0.iter_mut().zip(&other.0) {
                mine.absorb(theirs, nbins);
            }
            return;
        }
        let [b0, b1] = &mut scratch.0;
        let (b0, b1) = (&mut **b0, &mut **b1);
        b0.reset(nbins);
        if two {
            b1.reset(nbins);
            let mut pairs = idx.chunks_exact(2);
            for p in &mut pairs {
                b0.add(grid.bins(p[0].centroid2()), p[0].b);
                b1.add(grid.bins(p[1].centroid2()), p[1].b);
            }
            if let [r] = pairs.remainder() {
                b0.add(grid.bins(r.centroid2()), r.b);
            }
        } else {
            idx.iter().for_each(|r| b0.add(grid.bins(r.centroid2()), r.b));
        }
    }

    /// The cheapest binned split by the surface area heuristic (cost relative to the
    /// parent: 1 traversal + the children's leaf costs weighted by their area fraction),
    /// with the grid it was binned on.
    fn best_split(&self, idx: &[Ref], info: &Info, scratch: &mut Scratch) -> Option<(Split, Grid)> {
        let nbins = bins_for(self.opts, idx.len());
        let ext = info.cent.max - info.cent.min;
        let widest = if ext.x >= ext.y && ext.x >= ext.z {
            0
        } else if ext.y >= ext.z {
            1
        } else {
            2
        };
        let axes: &[usize] = if self.opts.all_axes { &[0, 1, 2] } else { std::slice::from_ref(&widest) };
        let grid = Grid::new(&info.cent, nbins);
        let parent_area = info.bounds.area().max(f32::MIN_POSITIVE);
        // One pass over the primitives bins all three axes at once (binning an axis that is
        // not searched costs less than a branch per primitive).
        // Small nodes fill one table (a second one costs more to clear and merge than it saves).
        let two = idx.len() >= 64;
        self.bin(idx, &grid, two, scratch);
        let [b0, b1] = &scratch.0;
        let (b0, b1) = (&**b0, &**b1);
        // Each side weighs its area by its leaf price; costs are compared exactly as
        // `1 + (left + right) / parent area`, so near-ties resolve as they always have. The
        // three axes are swept together, one lane each (the same operations per lane as a
        // sweep of one axis, so the same costs); an axis not searched has its lane off.
        let mut on = [false; 3];
        for &axis in axes {
            on[axis] = matches!(ext[axis].partial_cmp(&0.0), Some(std::cmp::Ordering::Greater));
        }
        let on = BVec4A::new(on[0], on[1], on[2], false);
        let bin = |b: usize| -> ([NBox; 3], [u32; 3]) {
            let one = |a: usize| {
                let i = a * MAX_BINS + b;
                if two {
                    (b0.boxes[i].union(b1.boxes[i]), b0.count(i) + b1.count(i))
                } else {
                    (b0.boxes[i], b0.count(i))
                }
            };
            let [(x, cx), (y, cy), (z, cz)] = [one(0), one(1), one(2)];
            ([x, y, z], [cx, cy, cz])
        };
        let pair_cost = self.opts.leaf_pair_cost;
        // Per axis lane: the area of `acc` times the leaf price of `cnt` primitives.
        let weight = |acc: &[NBox; 3], cnt: &[u32; 3]| {
            let e = acc.map(|b| b.extent().fast_max(f32x4::ZERO).to_array());
            let (ex, ey, ez) = (
                Vec4::new(e[0][0], e[1][0], e[2][0], 0.0),
                Vec4::new(e[0][1], e[1][1], e[2][1], 0.0),
                Vec4::new(e[0][2], e[1][2], e[2][2], 0.0),
            );
            let area = 2.0 * (ex * ey + ey * ez + ez * ex);
            let pairs = Vec4::new(cnt[0].div_ceil(2) as f32, cnt[1].div_ceil(2) as f32, cnt[2].div_ceil(2) as f32, 0.0);
            area * (pairs * pair_cost)
        };
        let empty = |cnt: &[u32; 3]| BVec4A::new(cnt[0] == 0, cnt[1] == 0, cnt[2] == 0, true);
        // Sweep from the right, then from the left; an empty side is never a split.
        let mut right_weight = [Vec4::ZERO; MAX_BINS];
        let (mut acc, mut cnt) = ([NBox::EMPTY; 3], [0u32; 3]);
        for b in (1..nbins).rev() {
            let (bx, c) = bin(b);
            for a in 0..3 {
                acc[a] = acc[a].union(bx[a]);
                cnt[a] += c[a];
            }
            right_weight[b] = Vec4::select(empty(&cnt), Vec4::INFINITY, weight(&acc, &cnt));
        }
        let (mut acc, mut cnt) = ([NBox::EMPTY; 3], [0u32; 3]);
        let (mut lane_cost, mut lane_bin) = (Vec4::INFINITY, Vec4::ZERO);
        // Sliced first: `.enumerate().take(nbins).skip(1)` compiled to a call per node.
        for (b, &right) in right_weight[..nbins].iter().enumerate().skip(1) {
            let (bx, c) = bin(b - 1);
            for a in 0..3 {
                acc[a] = acc[a].union(bx[a]);
                cnt[a] += c[a];
            }
            let c = 1.0 + (weight(&acc, &cnt) + right) / parent_area;
            // Strictly cheaper only, so each axis keeps its first cheapest bin.
            let better = c.cmplt(lane_cost) & on & !empty(&cnt);
            lane_cost = Vec4::select(better, c, lane_cost);
            lane_bin = Vec4::select(better, Vec4::splat(b as f32), lane_bin); // exact: b < 48
        }
        // Axes in order, strictly cheaper only: the first cheapest (axis, bin) wins, as in
        // one sweep of the axes one after the other.
        let (mut best, mut cost) = (None, f32::INFINITY);
        for axis in 0..3 {
            if lane_cost[axis] < cost {
                (best, cost) = (Some((axis, lane_bin[axis] as usize)), lane_cost[axis]);
            }
        }
        best.map(|(axis, bin)| (Split { axis, bin, cost }, grid))
    }
}

/// Bins per axis for a node of `n` primitives: the preset's count, but at most `4 + n / 8`.
/// The sweep and the bin reset cost per bin, and most nodes are small: after Embree's
/// `4 + n / 20` (which measured slower sponza primary rays here), this keeps the trees'
/// quality (inner area +0.2 % bunny, +1 % sponza; traversal even) and builds 7–10 % faster.
fn bins_for(opts: &BuildOptions, n: usize) -> usize {
    opts.bins.clamp(2, MAX_BINS).min(4 + n / 8)
}

/// Moves the elements satisfying `pred` to the front, keeping their order (those that fail
/// it are permuted), and returns how many there are, with the bounds of both sides.
///
/// Branch-free (Lomuto's scheme without its branch): about as many references go each way,
/// in an order a predictor often cannot learn, so every step swaps `v[i]` with `v[m]` and
/// advances `m` only when `v[i]` goes left (while `m` stays, the swap exchanges two
/// references that both go right). The two sides' bounds come in a second pass.
fn partition(v: &mut [Ref], pred: impl Fn(&Ref) -> bool) -> (usize, Info, Info) {
    let mut m = 0;
    for i in 0..v.len() {
        // The predicate reads the reference where it lies (its axis is only known at run
        // time: from a register copy, the reference went through the stack first).
        let left = pred(&v[i]);
        v.swap(i, m);
        m += usize::from(left);
    }
    (m, Info::of(&v[..m]), Info::of(&v[m..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::validate::validate_bvh2;
    use crate::rng::Rng;
    use glam::Vec3;

    fn boxes(n: usize, seed: u64) -> Vec<Aabb> {
        let mut rng = Rng::new(seed);
        (0..n)
            .map(|_| {
                let c = Vec3::new(rng.range(-10.0, 10.0), rng.range(-10.0, 10.0), rng.range(-10.0, 10.0));
                Aabb::new(c - Vec3::splat(0.2), c + Vec3::splat(rng.range(0.01, 0.5)))
            })
            .collect()
    }

    #[test]
    fn small_nodes_bin_on_fewer_bins() {
        let medium = BuildOptions::default();
        let got: Vec<usize> = [2, 3, 16, 100, 216, 224, 10_000].iter().map(|&n| bins_for(&medium, n)).collect();
        assert_eq!(got, [4, 4, 6, 16, 31, 32, 32]);
        let few = BuildOptions { bins: 3, ..medium };
        assert_eq!(bins_for(&few, 1_000), 3, "never more than the preset's bins");
        assert_eq!(bins_for(&BuildOptions { bins: 1000, ..medium }, 1_000_000), MAX_BINS);
    }

    #[test]
    fn parallel_and_one_task_builds_make_the_same_tree() {
        // Below the threshold subtrees are written by `emit` and moved by `flatten`; above it
        // by `Tmp::Inner`. Both layouts must give the same nodes and permutation.
        let b = boxes(5000, 3);
        let one = binned_sah(&b, &BuildOptions { parallel_threshold: usize::MAX, ..BuildOptions::default() });
        let many = binned_sah(&b, &BuildOptions { parallel_threshold: 16, ..BuildOptions::default() });
        validate_bvh2(&one, &b).unwrap();
        assert_eq!(one.nodes, many.nodes);
        assert_eq!(one.perm, many.perm);
    }

    #[test]
    fn a_large_nodes_binning_in_halves_gives_the_one_pass_tables() {
        let b = boxes(9000, 5);
        let refs: Vec<Ref> = b.iter().zip(0..).map(|(b, i)| Ref::new(b, i)).collect();
        let info = Info::of(&refs);
        let grid = Grid::new(&info.cent, 32);
        let bins = |threshold: usize| {
            let opts = BuildOptions { parallel_threshold: threshold, ..BuildOptions::default() };
            let mut scratch = Scratch::new();
            Ctx { opts: &opts }.bin(&refs, &grid, true, &mut scratch);
            let [b0, b1] = &scratch.0;
            (0..3 * MAX_BINS)
                .filter(|i| i % MAX_BINS < 32)
                .map(|i| {
                    // What the sweep reads: the two tables together (which table a reference
                    // went to depends on where the halves start).
                    let b = b0.boxes[i].union(b1.boxes[i]).box3();
                    (
                        [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z].map(f32::to_bits),
                        b0.count(i) + b1.count(i),
                    )
                })
                .collect::<Vec<_>>()
        };
        // 9000 references: one pass with the largest threshold; halves of 4500 and quarters
        // of 2250 with twice the smallest half; eighths of 1125 (odd: the tables' turns
        // shift) with the smallest threshold.
        let one = bins(usize::MAX);
        assert_eq!(one.iter().map(|t| t.1).sum::<u32>(), 3 * 9000);
        assert_eq!(bins(1), one);
        assert_eq!(bins(PAR_BIN_MIN * 2), one);
    }

    #[test]
    fn the_tree_does_not_depend_on_the_thread_count_even_with_nan_boxes() {
        // Unions with NaN depend on their order; the build splits its work by size alone and
        // merges in order, so any thread count gives the same tree.
        let mut b = boxes(20_000, 8);
        for i in (0..b.len()).step_by(997) {
            b[i].min.x = f32::NAN;
        }
        let opts = BuildOptions { parallel_threshold: 512, ..BuildOptions::default() };
        let trees: Vec<Bvh2> = [1, 2, 3]
            .iter()
            .map(|&n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(|| binned_sah(&b, &opts)))
            .collect();
        for t in &trees[1..] {
            assert_eq!(
                bytemuck::cast_slice::<Node2, u32>(&t.nodes),
                bytemuck::cast_slice::<Node2, u32>(&trees[0].nodes)
            );
            assert_eq!(t.perm, trees[0].perm);
        }
    }

    #[test]
    fn partition_puts_the_left_references_first_in_order_and_bounds_both_sides() {
        // Predicates of every pattern: alternating, runs, all one way, random.
        let b = boxes(300, 11);
        let refs: Vec<Ref> = b.iter().enumerate().map(|(i, b)| Ref::new(b, i as u32)).collect();
        let mut rng = Rng::new(12);
        let coin: Vec<bool> = (0..refs.len()).map(|_| rng.next_u64() & 1 == 1).collect();
        let preds: [&dyn Fn(u32) -> bool; 5] =
            [&|i| i % 2 == 0, &|i| (i / 7) % 2 == 1, &|_| true, &|_| false, &|i| coin[i as usize]];
        for pred in preds {
            let mut v = refs.clone();
            let (m, li, ri) = partition(&mut v, |r| pred(r.id()));
            let want_left: Vec<u32> = (0..refs.len() as u32).filter(|&i| pred(i)).collect();
            let left: Vec<u32> = v[..m].iter().map(Ref::id).collect();
            assert_eq!(left, want_left, "the left references, in their input order");
            let mut right: Vec<u32> = v[m..].iter().map(Ref::id).collect();
            right.sort_unstable();
            let want_right: Vec<u32> = (0..refs.len() as u32).filter(|&i| !pred(i)).collect();
            assert_eq!(right, want_right, "every other reference, once");
            // Both sides' bounds against a fold over the input boxes (doubled centroids).
            for (got, ids) in [(li, &want_left), (ri, &want_right)] {
                let boxes = ids.iter().map(|&i| b[i as usize]);
                let bounds = boxes.clone().fold(Aabb::EMPTY, |a, b| a.union(&b));
                let cent = boxes.fold(Aabb::EMPTY, |a, b| a.grow(b.min + b.max));
                assert_eq!(got.bounds.aabb(), bounds);
                assert_eq!(got.cent.aabb(), cent);
            }
        }
    }

    #[test]
    fn the_sweep_separates_two_interleaved_clusters() {
        // Clusters at x = -100 and x = +100, stored alternately: halving the list or a split
        // that was not searched would mix them in the root's children.
        let b: Vec<Aabb> = (0..128)
            .map(|i| {
                let x = if i % 2 == 0 { -100.0 } else { 100.0 } + (i / 2) as f32 * 0.01;
                Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 0.005, 1.0, 1.0))
            })
            .collect();
        let t = binned_sah(&b, &BuildOptions::default());
        validate_bvh2(&t, &b).unwrap();
        let root = t.nodes[0];
        for k in 0..2 {
            let child = t.nodes[root.index as usize + k];
            assert!(child.max[0] - child.min[0] < 10.0, "child {k} spans {:?}..{:?}", child.min, child.max);
        }
    }

    /// The plain SAH sweep: each axis alone, bins from the boxes by `Grid::bins`, the first
    /// strictly cheapest `(axis, bin)` in axis-major order.
    fn reference_split(ctx: &Ctx, refs: &[Ref], info: &Info) -> Option<(usize, usize, f32)> {
        let nbins = bins_for(ctx.opts, refs.len());
        let grid = Grid::new(&info.cent, nbins);
        let ext = info.cent.max - info.cent.min;
        let parent = info.bounds.area().max(f32::MIN_POSITIVE);
        let mut best = None;
        let mut cost = f32::INFINITY;
        for axis in 0..3 {
            if ext[axis].partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                continue;
            }
            let mut bins = vec![(Box3::EMPTY, 0usize); nbins];
            for r in refs {
                let b = grid.bins(r.centroid2())[axis] - axis * MAX_BINS;
                bins[b] = (bins[b].0.union(&r.bounds()), bins[b].1 + 1);
            }
            let side = |range: &[(Box3, usize)]| {
                let (b, n) = range.iter().fold((Box3::EMPTY, 0), |(a, n), (b, m)| (a.union(b), n + m));
                (n > 0).then(|| b.area() * ctx.leaf_cost(n))
            };
            for split in 1..nbins {
                let (Some(l), Some(r)) = (side(&bins[..split]), side(&bins[split..])) else { continue };
                let c = 1.0 + (l + r) / parent;
                if c < cost {
                    (best, cost) = (Some((axis, split)), c);
                }
            }
        }
        best.map(|(a, b)| (a, b, cost))
    }

    #[test]
    fn the_three_axis_sweep_picks_the_plain_sweeps_split() {
        // Random nodes of every size, some with boxes repeated (equal costs: the tie rule),
        // some flat on an axis (its lane off), at every bin count.
        let mut rng = Rng::new(0x5a4);
        let mut scratch = Scratch::new();
        let mut splits = 0;
        for case in 0..600 {
            let n = [2, 3, 5, 17, 63, 64, 65, 200, 1000][case % 9];
            let mut b = boxes(n, case as u64);
            if case % 4 == 1 {
                for i in 0..n / 2 {
                    b[n - 1 - i] = b[i]; // pairs of equal boxes
                }
            }
            if case % 4 == 2 {
                let y = b[0].min.y;
                for x in &mut b {
                    *x = Aabb::new(Vec3::new(x.min.x, y, x.min.z), Vec3::new(x.max.x, y + 0.5, x.max.z));
                }
            }
            let refs: Vec<Ref> = b.iter().zip(0..).map(|(b, i)| Ref::new(b, i)).collect();
            let info = Info::of(&refs);
            let bins = [2, 8, 32, 48][rng.below(4) as usize];
            let opts = BuildOptions { bins, ..BuildOptions::default() };
            let ctx = Ctx { opts: &opts };
            let got = ctx.best_split(&refs, &info, &mut scratch).map(|(s, _)| (s.axis, s.bin, s.cost));
            let want = reference_split(&ctx, &refs, &info);
            assert_eq!(
                got.map(|g| (g.0, g.1, g.2.to_bits())),
                want.map(|w| (w.0, w.1, w.2.to_bits())),
                "case {case}, {n} boxes, {bins} bins"
            );
            splits += usize::from(got.is_some());
        }
        assert!(splits > 500, "too few splits to mean anything: {splits}");
    }

    #[test]
    fn coincident_centroids_are_halved_into_small_leaves() {
        let b = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 100];
        let t = binned_sah(&b, &BuildOptions::default());
        validate_bvh2(&t, &b).unwrap();
        assert!(t.nodes.iter().all(|n| n.count as usize <= MAX_BINARY_LEAF));
    }

    #[test]
    fn a_negated_max_box_unions_measures_and_centres_as_the_two_half_box() {
        // Finite boxes, signed zeros, infinities and NaN corners, every pair in both orders.
        let mut rng = Rng::new(11);
        let special = [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 1e-40, -3e38];
        let mut corners: Vec<Vec3> =
            (0..41).map(|_| Vec3::new(rng.range(-5.0, 5.0), rng.range(-5.0, 5.0), rng.range(-5.0, 5.0))).collect();
        corners.extend(special.iter().map(|&x| Vec3::new(x, 1.0, -x)));
        let boxes: Vec<Aabb> = corners.chunks(2).map(|c| Aabb { min: c[0], max: c[1] }).collect();
        let bits = |b: &Box3| [b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z].map(f32::to_bits);
        let two_half = |b: &Aabb| Box3 { min: b.min.into(), max: b.max.into() };
        for a in &boxes {
            let na = Ref::new(a, 7).b;
            assert_eq!(bits(&na.box3()), bits(&two_half(a)));
            let e = (two_half(a).max - two_half(a).min).to_array();
            let three = |v: f32x4| {
                let v = v.to_array();
                [v[0], v[1], v[2]].map(f32::to_bits)
            };
            assert_eq!(three(na.extent()), e.map(f32::to_bits));
            let c = (two_half(a).min + two_half(a).max).to_array();
            // (A NaN's sign may differ: no bin or comparison reads it.)
            let nan_or_bits = |v: [u32; 3]| v.map(|b| if f32::from_bits(b).is_nan() { u32::MAX } else { b });
            assert_eq!(nan_or_bits(three(na.center2())), nan_or_bits(c.map(f32::to_bits)));
            for b in &boxes {
                let nb = Ref::new(b, 9).b;
                assert_eq!(bits(&na.union(nb).box3()), bits(&two_half(a).union(&two_half(b))), "{a:?} ∪ {b:?}");
            }
        }
        assert_eq!(bits(&NBox::EMPTY.box3()), bits(&Box3::EMPTY));
    }

    #[test]
    fn a_reference_keeps_the_largest_index_in_a_normal_float() {
        let b = Aabb::new(Vec3::ZERO, Vec3::ONE);
        for id in [0, 1, 69_451, crate::bvh::MAX_PRIMITIVES as u32 - 1] {
            let r = Ref::new(&b, id);
            assert_eq!(r.id(), id);
            let v = r.b.0.as_array();
            assert!(v[3].is_normal() && (v[3] - v[7]).is_normal());
        }
    }
}
