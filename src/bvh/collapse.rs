//! The collapse of a binary tree into a wide one ([`WideBvh::collapse`]) by the surface area
//! heuristic: which binary nodes become slots of a wide node, which become wide nodes, and
//! which sibling leaves merge into one wide leaf.

use super::node::{Bvh2, Child, MAX_WIDE_LEAF, MAX_WIDTH, Node2, WideBvh, WideNode};

impl<N: WideNode> WideBvh<N> {
    /// Collapses a binary BVH into a wide one by the surface area heuristic: for every binary
    /// node a small dynamic program (after Ylitie, Karras and Laine 2017) finds the cheapest way
    /// to spend up to `WIDTH` child slots on its subtree, where a slot is a wide node, or a
    /// leaf that may merge sibling binary leaves (up to [`MAX_WIDE_LEAF`] primitives, priced per
    /// started block of `WIDTH` lanes). The leaves keep contiguous primitive ranges, so the
    /// binary tree's permutation is unchanged.
    pub fn collapse(b2: &Bvh2) -> Self {
        Self::collapse_nodes(&b2.nodes)
    }

    /// [`WideBvh::collapse`] from the binary tree's nodes alone (the permutation is not
    /// needed: leaves keep their ranges).
    pub fn collapse_nodes(b2: &[Node2]) -> Self {
        let Some(root) = b2.first() else {
            return Self::empty();
        };
        let bounds = root.aabb();
        let plans = plan(b2, N::WIDTH);
        let mut nodes = Vec::with_capacity(b2.len() / (N::WIDTH - 1) + 1);
        let root = if plans[0].leaf {
            Child::leaf(plans[0].first, plans[0].count)
        } else {
            nodes.push(N::empty());
            emit(b2, &plans, 0, 0, &mut nodes);
            0
        };
        Self { nodes, root, bounds }
    }
}

/// SAH price of visiting a wide node (testing all its child boxes), per unit of area.
const NODE_COST: f32 = 1.0;
/// SAH price of one block of `WIDTH` primitive tests, per unit of area.
const BLOCK_COST: f32 = 1.0;

/// Entries of a plan's tables: one per slot count `0..=MAX_WIDTH`.
const COSTS: usize = MAX_WIDTH + 1;

/// The collapse plan of one binary node.
#[derive(Clone, Copy)]
struct Plan {
    /// The subtree's primitives: `first..first + count` of the permutation.
    first: u32,
    count: u32,
    /// As one slot, the subtree is a leaf (else a wide node).
    leaf: bool,
    /// `cost[k]`: cheapest cost of the subtree given `k` slots (`k = 1..=WIDTH`).
    cost: [f32; COSTS],
    /// `split[k]`: slots given to the left child when the subtree is spread over `k` slots
    /// (0: it takes one slot itself).
    split: [u8; COSTS],
    /// `spread[k]`: the best left share when the node's children are spread over `k` slots
    /// (what a wide node made of this binary node uses, with `k = WIDTH`).
    spread: [u8; COSTS],
}

fn plan(b2: &[Node2], width: usize) -> Vec<Plan> {
    let empty = Plan { first: 0, count: 0, leaf: true, cost: [0.0; COSTS], split: [0; COSTS], spread: [0; COSTS] };
    let mut plans = vec![empty; b2.len()];
    let leaf_cost = |area: f32, count: u32| area * BLOCK_COST * count.div_ceil(width as u32) as f32;
    // Children come after their parent in `b2`, so a reverse sweep is bottom-up. Each plan is
    // written in place, field by field: one made on the stack and copied in whole made every
    // node wait on a 64-byte load from several smaller stores (a failed store forward).
    for i in (0..b2.len()).rev() {
        let n = &b2[i];
        let area = n.aabb().surface_area();
        let area = if area.is_finite() { area } else { f32::MAX };
        if n.is_leaf() {
            let p = &mut plans[i];
            p.first = n.index;
            p.count = n.count;
            p.cost = [leaf_cost(area, n.count); COSTS];
            continue;
        }
        let c = n.index as usize;
        let (l, r) = (&plans[c], &plans[c + 1]);
        let (first, count) = (l.first, l.count + r.count);
        let mut spread = [0u8; COSTS];
        let dist = spread_costs(l, r, [b2[c].is_leaf(), b2[c + 1].is_leaf()], width, &mut spread);
        let inner = area * NODE_COST + dist[width];
        let leaf = if count <= MAX_WIDE_LEAF { leaf_cost(area, count) } else { f32::INFINITY };
        let as_leaf = leaf <= inner;
        let one = if as_leaf { leaf } else { inner };
        let p = &mut plans[i];
        (p.first, p.count, p.leaf, p.spread) = (first, count, as_leaf, spread);
        p.cost[1] = one;
        for (k, &d) in dist.iter().enumerate().take(width + 1).skip(2) {
            (p.cost[k], p.split[k]) = if d < one { (d, spread[k]) } else { (one, 0) };
        }
    }
    plans
}

/// `dist[k]`: the cheapest cost of two children `l`, `r` spread over `k` slots, for `k` in
/// `2..=width`, with the first cheapest left share in `spread[k]`. A plan's cost never rises
/// with more slots (by induction: a share that fits `k` slots fits `k + 1` with the right
/// side's cost no higher, and float addition is monotone), so when a child is a binary leaf
/// (`leaf[0]`: left, `leaf[1]`: right; its cost is the same for any number of slots) the
/// search is shorter, with the same answer: a left leaf takes one slot; beside a right leaf,
/// the first cheapest share of `k` slots is the running first minimum of the left's costs
/// over shares `1..k`.
fn spread_costs(l: &Plan, r: &Plan, leaf: [bool; 2], width: usize, spread: &mut [u8; COSTS]) -> [f32; COSTS] {
    let mut dist = [f32::INFINITY; COSTS];
    match leaf {
        [true, _] => {
            for k in 2..=width {
                (dist[k], spread[k]) = (l.cost[1] + r.cost[k - 1], 1);
            }
        }
        [false, true] => {
            let mut best = (l.cost[1] + r.cost[1], 1);
            for k in 2..=width {
                let c = l.cost[k - 1] + r.cost[1];
                if c < best.0 {
                    best = (c, k - 1);
                }
                (dist[k], spread[k]) = (best.0, best.1 as u8);
            }
        }
        [false, false] => {
            for k in 2..=width {
                let mut best = (l.cost[1] + r.cost[k - 1], 1);
                for kl in 2..k {
                    let c = l.cost[kl] + r.cost[k - kl];
                    if c < best.0 {
                        best = (c, kl);
                    }
                }
                (dist[k], spread[k]) = (best.0, best.1 as u8);
            }
        }
    }
    dist
}

/// Writes wide node `at` for binary inner node `src`, spreading its children over the slots.
fn emit<N: WideNode>(b2: &[Node2], plans: &[Plan], src: usize, at: usize, nodes: &mut Vec<N>) {
    let mut slots = [0usize; MAX_WIDTH];
    let mut n = 0;
    let kl = plans[src].spread[N::WIDTH] as usize;
    let first = b2[src].index as usize;
    gather(b2, plans, first, kl, &mut slots, &mut n);
    gather(b2, plans, first + 1, N::WIDTH - kl, &mut slots, &mut n);
    for (slot, &k) in slots[..n].iter().enumerate() {
        let p = &plans[k];
        let r = if p.leaf {
            Child::leaf(p.first, p.count)
        } else {
            let idx = nodes.len();
            nodes.push(N::empty());
            emit(b2, plans, k, idx, nodes);
            idx as u32
        };
        nodes[at].set(slot, &b2[k].aabb(), r);
    }
}

/// The binary nodes that take the `k` slots planned for subtree `src`.
fn gather(b2: &[Node2], plans: &[Plan], src: usize, k: usize, slots: &mut [usize; MAX_WIDTH], n: &mut usize) {
    let kl = plans[src].split[k] as usize;
    if kl == 0 {
        slots[*n] = src;
        *n += 1;
    } else {
        let first = b2[src].index as usize;
        gather(b2, plans, first, kl, slots, n);
        gather(b2, plans, first + 1, k - kl, slots, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::node::{EMPTY_CHILD, Node4, Node8};
    use crate::bvh::{BuildOptions, build, validate::validate_wide};
    use crate::prim::Aabb;
    use glam::Vec3;

    fn row(n: usize, gap: f32) -> Vec<Aabb> {
        (0..n)
            .map(|i| Aabb::new(Vec3::new(i as f32 * gap, 0.0, 0.0), Vec3::new(i as f32 * gap + 1.0, 1.0, 1.0)))
            .collect()
    }

    fn permuted(b2: &Bvh2, boxes: &[Aabb]) -> Vec<Aabb> {
        b2.perm.iter().map(|&i| boxes[i as usize]).collect()
    }

    #[test]
    fn beside_a_binary_leaf_the_short_search_gives_the_full_searchs_answer() {
        // Every inner node of trees over random boxes (three presets, both widths), its
        // children's plans as the collapse made them: the short search for a leaf child
        // must give the same costs and shares as the search over every share.
        let mut rng = crate::rng::Rng::new(0xc0_11a9);
        let boxes: Vec<Aabb> = (0..3000)
            .map(|_| {
                let c = rng.vec3(-50.0, 50.0);
                Aabb::new(c, c + rng.vec3(0.01, 1.0) * if rng.f32() < 0.1 { 40.0 } else { 1.0 })
            })
            .collect();
        let mut short = 0;
        for q in [crate::bvh::Quality::Fast, crate::bvh::Quality::Medium, crate::bvh::Quality::High] {
            let b2 = build(&boxes, &BuildOptions::with_quality(q));
            for width in [4, 8] {
                let plans = plan(&b2.nodes, width);
                for n in b2.nodes.iter().filter(|n| !n.is_leaf()) {
                    let (l, r) = (&plans[n.index as usize], &plans[n.index as usize + 1]);
                    let leaf = [b2.nodes[n.index as usize].is_leaf(), b2.nodes[n.index as usize + 1].is_leaf()];
                    if leaf == [false, false] {
                        continue;
                    }
                    short += 1;
                    let (mut got, mut want) = ([0u8; COSTS], [0u8; COSTS]);
                    let got_cost = spread_costs(l, r, leaf, width, &mut got);
                    let want_cost = spread_costs(l, r, [false, false], width, &mut want);
                    assert_eq!((got_cost.map(f32::to_bits), got), (want_cost.map(f32::to_bits), want), "{leaf:?}");
                }
            }
        }
        assert!(short > 5000, "too few nodes beside a leaf: {short}");
    }

    #[test]
    fn one_primitive_leaves_merge_into_full_blocks() {
        // Eight touching boxes built down to one primitive per leaf: one 8-lane block costs
        // less than a node over eight leaves, so the 8-wide tree is a single leaf.
        let boxes = row(8, 1.0);
        let b2 = build(&boxes, &BuildOptions { max_leaf: 1, ..BuildOptions::default() });
        assert!(b2.nodes.len() > 1);
        let w8 = WideBvh::<Node8>::collapse(&b2);
        assert_eq!(Child::decode(w8.root), Child::Leaf { first: 0, count: 8 });
        assert!(w8.nodes.is_empty());
        validate_wide(&w8, &permuted(&b2, &boxes)).unwrap();
    }

    #[test]
    fn far_apart_clusters_fill_the_slots() {
        // 64 boxes far apart: no merging pays, so the nodes use their slots instead of
        // nesting, and leaves never exceed the largest wide leaf.
        let boxes = row(64, 100.0);
        let b2 = build(&boxes, &BuildOptions { max_leaf: 1, ..BuildOptions::default() });
        let w8 = WideBvh::<Node8>::collapse(&b2);
        validate_wide(&w8, &permuted(&b2, &boxes)).unwrap();
        let used: usize = w8.nodes.iter().map(|n| n.children().iter().filter(|&&c| c != EMPTY_CHILD).count()).sum();
        assert!(used as f32 / w8.nodes.len() as f32 > 6.0, "{used} slots over {} nodes", w8.nodes.len());
        let w4 = WideBvh::<Node4>::collapse(&b2);
        validate_wide(&w4, &permuted(&b2, &boxes)).unwrap();
        for n in &w4.nodes {
            for &c in n.children() {
                if let Child::Leaf { count, .. } = Child::decode(c) {
                    assert!(count <= MAX_WIDE_LEAF);
                }
            }
        }
    }
}
