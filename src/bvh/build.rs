//! Binned SAH build (Wald 2007) over primitive boxes. The builder never touches the
//! primitives themselves: it takes their boxes, returns a binary tree whose leaves index a
//! permutation of `0..n`, and the caller reorders its own data by that permutation.

use crate::prim::Aabb;
use bytemuck::{Pod, Zeroable};
use glam::{Vec3, Vec3A};

/// A binary BVH node (32 bytes). `count == 0`: inner node whose children are nodes
/// `index` and `index + 1`. `count > 0`: leaf over permuted primitives `index..index+count`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable, PartialEq)]
pub struct Node2 {
    /// Box minimum.
    pub min: [f32; 3],
    /// Number of primitives (0 for inner nodes).
    pub count: u32,
    /// Box maximum.
    pub max: [f32; 3],
    /// First child (inner) or first primitive (leaf).
    pub index: u32,
}

const _: () = assert!(core::mem::size_of::<Node2>() == 32);

impl Node2 {
    /// The node's box.
    pub fn aabb(&self) -> Aabb {
        Aabb::new(Vec3::from(self.min), Vec3::from(self.max))
    }
    /// True for leaves.
    pub fn is_leaf(&self) -> bool {
        self.count > 0
    }
}

/// Build quality presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Quality {
    /// 8 bins on the widest centroid axis only.
    Fast,
    /// 32 bins on all three axes.
    #[default]
    Medium,
    /// 48 bins on all three axes and a costlier leaf (smaller leaves).
    High,
}

/// Builder settings.
#[derive(Clone, Copy, Debug)]
pub struct BuildOptions {
    /// Quality preset.
    pub quality: Quality,
    /// Largest leaf (at most [`super::MAX_LEAF`]).
    pub max_leaf: usize,
    /// Subtrees with at least this many primitives are built in parallel with rayon.
    pub parallel_threshold: usize,
}

impl Default for BuildOptions {
    fn default() -> Self {
        Self { quality: Quality::Medium, max_leaf: super::MAX_LEAF, parallel_threshold: 4096 }
    }
}

impl BuildOptions {
    /// Defaults with the given preset.
    pub fn with_quality(quality: Quality) -> Self {
        Self { quality, ..Self::default() }
    }
}

/// A binary BVH: nodes (root at 0) and the permutation (`perm[i]` = the caller's index of
/// the `i`-th primitive in leaf order).
#[derive(Clone, Debug, Default)]
pub struct Bvh2 {
    /// Nodes, root first. Empty when there are no primitives.
    pub nodes: Vec<Node2>,
    /// Leaf-order permutation of the input indices.
    pub perm: Vec<u32>,
}

/// Builds a binary BVH over `boxes` (invalid or empty boxes are allowed and simply never
/// contain anything; callers normally leave them out).
pub fn build(boxes: &[Aabb], opts: &BuildOptions) -> Bvh2 {
    if boxes.is_empty() {
        return Bvh2::default();
    }
    let simd: Vec<Box3> = boxes.iter().map(|b| Box3 { min: b.min.into(), max: b.max.into() }).collect();
    let centroids: Vec<Vec3A> = simd.iter().map(|b| (b.min + b.max) * 0.5).collect();
    let mut perm: Vec<u32> = (0..boxes.len() as u32).collect();
    let ctx = Ctx { boxes: &simd, centroids: &centroids, opts };
    let tree = ctx.subtree(&mut perm, 0, 0);
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
    boxes: &'a [Box3],
    centroids: &'a [Vec3A],
    opts: &'a BuildOptions,
}

/// A box in SIMD registers (the builder's working form of `Aabb`).
#[derive(Clone, Copy)]
struct Box3 {
    min: Vec3A,
    max: Vec3A,
}

impl Box3 {
    const EMPTY: Box3 = Box3 { min: Vec3A::INFINITY, max: Vec3A::NEG_INFINITY };
    #[inline(always)]
    fn union(&self, o: &Box3) -> Box3 {
        Box3 { min: self.min.min(o.min), max: self.max.max(o.max) }
    }
    #[inline(always)]
    fn area(&self) -> f32 {
        let e = (self.max - self.min).max(Vec3A::ZERO);
        2.0 * (e.x * e.y + e.y * e.z + e.z * e.x)
    }
    fn aabb(&self) -> Aabb {
        Aabb::new(self.min.into(), self.max.into())
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
        (((c - self.lo) * self.scale) as usize).min(self.nbins - 1)
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
    /// Builds the subtree over `idx` (a slice of the permutation starting at `offset`).
    fn subtree(&self, idx: &mut [u32], offset: usize, depth: usize) -> Tmp {
        let mut b3 = Box3::EMPTY;
        let mut c3 = Box3::EMPTY;
        for &i in idx.iter() {
            b3 = b3.union(&self.boxes[i as usize]);
            let c = self.centroids[i as usize];
            c3 = c3.union(&Box3 { min: c, max: c });
        }
        let (bounds, cbounds) = (b3.aabb(), c3.aabb());
        let n = idx.len();
        let leaf = Tmp::Leaf { bounds, start: offset, count: n };
        if n == 1 {
            return leaf;
        }
        let max_leaf = self.opts.max_leaf.clamp(1, super::MAX_LEAF);
        // Past this depth, split by count so the tree always fits the traversal stack.
        let split = if depth < 48 { self.best_split(idx, &bounds, &cbounds) } else { None };
        let mid = match split {
            Some(s) if s.cost < self.leaf_cost(n) || n > max_leaf => {
                let m = partition(idx, |i| s.bin_of(self.centroids[i as usize][s.axis]) < s.bin);
                if m == 0 || m == n { n / 2 } else { m }
            }
            _ if n <= max_leaf => return leaf,
            // No useful split (all centroids equal, or too deep): halve the list.
            _ => n / 2,
        };
        let (l, r) = idx.split_at_mut(mid);
        let (a, b) = if n >= self.opts.parallel_threshold {
            rayon::join(|| self.subtree(l, offset, depth + 1), || self.subtree(r, offset + mid, depth + 1))
        } else {
            (self.subtree(l, offset, depth + 1), self.subtree(r, offset + mid, depth + 1))
        };
        Tmp::Inner { bounds, kids: Box::new([a, b]) }
    }

    fn leaf_cost(&self, n: usize) -> f32 {
        // Leaves are tested in blocks of at least 4 lanes, so a leaf costs per started block of
        // 4; High prices a block a little higher, for smaller leaves.
        let k = if self.opts.quality == Quality::High { 1.25 } else { 1.0 };
        n.div_ceil(4) as f32 * k
    }

    /// The cheapest binned split by the surface area heuristic (cost relative to the
    /// parent: 1 traversal + the children's leaf costs weighted by their area fraction).
    fn best_split(&self, idx: &[u32], bounds: &Aabb, cb: &Aabb) -> Option<Split> {
        let (nbins, axes): (usize, &[usize]) = match self.opts.quality {
            Quality::Fast => (8, &[]),
            Quality::Medium => (32, &[0, 1, 2]),
            Quality::High => (48, &[0, 1, 2]),
        };
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
        let mut bins = [[EMPTY_BIN; MAX_BINS]; 3];
        for &i in idx {
            let c = self.centroids[i as usize];
            let bx = &self.boxes[i as usize];
            for (axis, probe) in probes.iter().enumerate() {
                if let Some(p) = probe {
                    let bin = &mut bins[axis][p.bin_of(c[axis])];
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
            let bins = &bins[axis];
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
fn partition(v: &mut [u32], pred: impl Fn(u32) -> bool) -> usize {
    let mut m = 0;
    for i in 0..v.len() {
        if pred(v[i]) {
            v.swap(i, m);
            m += 1;
        }
    }
    m
}
