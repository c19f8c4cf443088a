//! Binned SAH build (Wald 2007) over primitive boxes. The builder never touches the
//! primitives themselves: it takes their boxes, returns a binary tree whose leaves index a
//! permutation of `0..n`, and the caller reorders its own data by that permutation.

use super::node::{Box3, Bvh2, MAX_BINARY_LEAF, Node2};
use super::preset::BuildOptions;
use crate::prim::Aabb;
use bytemuck::Zeroable;
use glam::Vec3A;

/// Builds a binary BVH over `boxes` top-down by the binned SAH (no reinsertion: that is the
/// next step of [`crate::bvh::build()`]). Invalid or empty boxes are allowed and simply never
/// contain anything; callers normally leave them out.
pub fn binned_sah(boxes: &[Aabb], opts: &BuildOptions) -> Bvh2 {
    if boxes.is_empty() {
        return Bvh2::default();
    }
    let mut refs: Vec<Ref> =
        boxes.iter().enumerate().map(|(i, b)| Ref { min: b.min.into(), id: i as u32, max: b.max.into() }).collect();
    let ctx = Ctx { opts };
    let tree = ctx.subtree(&mut refs, 0, 0, &mut Vec::new());
    let perm: Vec<u32> = refs.iter().map(|r| r.id).collect();
    drop(refs);
    let mut nodes = Vec::with_capacity(2 * boxes.len() / opts.max_leaf.max(1) + 1);
    nodes.push(Node2::zeroed());
    flatten(&tree, 0, &mut nodes);
    Bvh2 { nodes, perm }
}

enum Tmp {
    Leaf { bounds: Aabb, start: usize, count: usize },
    Inner { bounds: Aabb, kids: Box<[Tmp; 2]> },
}

impl Tmp {
    fn bounds(&self) -> &Aabb {
        match self {
            Tmp::Leaf { bounds, .. } | Tmp::Inner { bounds, .. } => bounds,
        }
    }
}

fn flatten(t: &Tmp, at: usize, nodes: &mut Vec<Node2>) {
    let b = t.bounds();
    match t {
        Tmp::Leaf { start, count, .. } => {
            nodes[at] =
                Node2 { min: b.min.to_array(), count: *count as u32, max: b.max.to_array(), index: *start as u32 };
        }
        Tmp::Inner { kids, .. } => {
            let first = nodes.len();
            nodes.push(Node2::zeroed());
            nodes.push(Node2::zeroed());
            nodes[at] = Node2 { min: b.min.to_array(), count: 0, max: b.max.to_array(), index: first as u32 };
            flatten(&kids[0], first, nodes);
            flatten(&kids[1], first + 1, nodes);
        }
    }
}

struct Ctx<'a> {
    opts: &'a BuildOptions,
}

/// A primitive as the builder moves it around: its box and its caller's index, 32 bytes
/// (the alignment pads it), so that partitioning moves the data binning reads next
/// (sequential passes instead of gathers through a permutation).
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Ref {
    min: [f32; 3],
    id: u32,
    max: [f32; 3],
}

const _: () = assert!(core::mem::size_of::<Ref>() == 32);

impl Ref {
    #[inline(always)]
    fn bounds(&self) -> Box3 {
        Box3 { min: Vec3A::from_array(self.min), max: Vec3A::from_array(self.max) }
    }
    /// Twice the centroid (the factor does not change any comparison or bin).
    #[inline(always)]
    fn centroid2(&self) -> Vec3A {
        Vec3A::from_array(self.min) + Vec3A::from_array(self.max)
    }
}

/// A candidate split: primitives whose centroid falls in a bin below `bin` go left.
#[derive(Clone, Copy)]
struct Split {
    axis: usize,
    bin: usize,
    lo: f32,
    scale: f32,
    nbins: usize,
    cost: f32,
}

impl Split {
    fn bin_of(&self, c: f32) -> usize {
        // Through i32: a float-to-usize cast is several times the instructions, and this
        // runs once per primitive, axis and level. NaN casts to 0; the clamp does the rest.
        (((c - self.lo) * self.scale) as i32).clamp(0, self.nbins as i32 - 1) as usize
    }
}

#[derive(Clone, Copy)]
struct Bin {
    bounds: Box3,
    count: usize,
}

const EMPTY_BIN: Bin = Bin { bounds: Box3::EMPTY, count: 0 };
const MAX_BINS: usize = 48;

impl Ctx<'_> {
    /// Builds the subtree over `idx` (the references from `offset` on in leaf order).
    /// `bins` is scratch for the binning, one per rayon task (not one allocation per node).
    fn subtree(&self, idx: &mut [Ref], offset: usize, depth: usize, bins: &mut Vec<Bin>) -> Tmp {
        let mut b3 = Box3::EMPTY;
        let mut c3 = Box3::EMPTY;
        for r in idx.iter() {
            b3 = b3.union(&r.bounds());
            let c = r.centroid2();
            c3 = c3.union(&Box3 { min: c, max: c });
        }
        let (bounds, cbounds) = (b3.aabb(), c3.aabb());
        let n = idx.len();
        let leaf = Tmp::Leaf { bounds, start: offset, count: n };
        if n == 1 {
            return leaf;
        }
        let max_leaf = self.opts.max_leaf.clamp(1, MAX_BINARY_LEAF);
        // Past this depth, split by count so the tree always fits the traversal stack.
        let split = if depth < 48 { self.best_split(idx, &bounds, &cbounds, bins) } else { None };
        let mid = match split {
            Some(s) if s.cost < self.leaf_cost(n) || n > max_leaf => {
                let m = partition(idx, |r| s.bin_of(r.centroid2()[s.axis]) < s.bin);
                if m == 0 || m == n { n / 2 } else { m }
            }
            _ if n <= max_leaf => return leaf,
            // No useful split (all centroids equal, or too deep): halve the list.
            _ => n / 2,
        };
        let (l, r) = idx.split_at_mut(mid);
        let (a, b) = if n >= self.opts.parallel_threshold {
            rayon::join(
                || self.subtree(l, offset, depth + 1, bins),
                || self.subtree(r, offset + mid, depth + 1, &mut Vec::new()),
            )
        } else {
            (self.subtree(l, offset, depth + 1, bins), self.subtree(r, offset + mid, depth + 1, bins))
        };
        Tmp::Inner { bounds, kids: Box::new([a, b]) }
    }

    fn leaf_cost(&self, n: usize) -> f32 {
        // Priced per started pair of primitives: finer than the 4/8-lane blocks traversal
        // tests, because the binary tree is only a draft. The wide collapse merges small
        // leaves into blocks by its own cost model, and reinsertion can move small subtrees
        // more freely; leaves priced per block of 4 came out fatter and measured 10-20 %
        // slower on sponza. High prices a pair a little higher, for smaller leaves still.
        n.div_ceil(2) as f32 * self.opts.leaf_pair_cost
    }

    /// The cheapest binned split by the surface area heuristic (cost relative to the
    /// parent: 1 traversal + the children's leaf costs weighted by their area fraction).
    /// `cb` bounds the doubled centroids ([`Ref::centroid2`]).
    fn best_split(&self, idx: &[Ref], bounds: &Aabb, cb: &Aabb, bins: &mut Vec<Bin>) -> Option<Split> {
        let nbins = self.opts.bins.clamp(2, MAX_BINS);
        let axes: &[usize] = if self.opts.all_axes { &[0, 1, 2] } else { &[] };
        // A small node needs no more bins than it has primitives (the sweep and the bin
        // reset cost per bin).
        let nbins = nbins.min(idx.len().max(4));
        let ext = cb.max - cb.min;
        let widest = if ext.x >= ext.y && ext.x >= ext.z {
            0
        } else if ext.y >= ext.z {
            1
        } else {
            2
        };
        let axes = if axes.is_empty() { std::slice::from_ref(&widest) } else { axes };
        let parent_area = bounds.surface_area().max(f32::MIN_POSITIVE);
        // One pass over the primitives bins all the axes at once.
        let mut probes: [Option<Split>; 3] = [None; 3];
        for &axis in axes {
            let (lo, hi) = (cb.min[axis], cb.max[axis]);
            if matches!(hi.partial_cmp(&lo), Some(std::cmp::Ordering::Greater)) {
                probes[axis] = Some(Split { axis, bin: 0, lo, scale: nbins as f32 / (hi - lo), nbins, cost: 0.0 });
            }
        }
        bins.clear();
        bins.resize(3 * nbins, EMPTY_BIN);
        for r in idx {
            let c = r.centroid2();
            let bx = &r.bounds();
            for (axis, probe) in probes.iter().enumerate() {
                if let Some(p) = probe {
                    let bin = &mut bins[axis * nbins + p.bin_of(c[axis])];
                    bin.bounds = bin.bounds.union(bx);
                    bin.count += 1;
                }
            }
        }
        let mut best: Option<Split> = None;
        let mut right_area = [0.0f32; MAX_BINS];
        let mut right_count = [0usize; MAX_BINS];
        for (axis, probe) in probes.iter().enumerate() {
            let Some(probe) = *probe else { continue };
            let bins = &bins[axis * nbins..(axis + 1) * nbins];
            // Sweep from the right, then from the left.
            let (mut acc, mut cnt) = (Box3::EMPTY, 0);
            for b in (1..nbins).rev() {
                acc = acc.union(&bins[b].bounds);
                cnt += bins[b].count;
                right_area[b] = acc.area();
                right_count[b] = cnt;
            }
            let (mut acc, mut cnt) = (Box3::EMPTY, 0);
            for b in 1..nbins {
                acc = acc.union(&bins[b - 1].bounds);
                cnt += bins[b - 1].count;
                if cnt == 0 || right_count[b] == 0 {
                    continue;
                }
                let cost = 1.0
                    + (acc.area() * self.leaf_cost(cnt) + right_area[b] * self.leaf_cost(right_count[b])) / parent_area;
                if best.is_none_or(|s| cost < s.cost) {
                    best = Some(Split { bin: b, cost, ..probe });
                }
            }
        }
        best
    }
}

/// Moves the elements satisfying `pred` to the front; returns how many there are.
fn partition(v: &mut [Ref], pred: impl Fn(&Ref) -> bool) -> usize {
    let mut m = 0;
    for i in 0..v.len() {
        if pred(&v[i]) {
            v.swap(i, m);
            m += 1;
        }
    }
    m
}
