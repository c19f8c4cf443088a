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
        // The node widths are 4, 8 and 16 (the trait is sealed).
        let (nodes, root) = match N::WIDTH {
            4 => collapse_with::<N, 4>(b2),
            8 => collapse_with::<N, 8>(b2),
            _ => collapse_with::<N, MAX_WIDTH>(b2),
        };
        Self { nodes, root, bounds }
    }
}

/// SAH price of visiting a wide node (testing all its child boxes), per unit of area.
const NODE_COST: f32 = 1.0;
/// SAH price of one block of `WIDTH` primitive tests, per unit of area.
const BLOCK_COST: f32 = 1.0;

/// The collapse for a wide node of `W` slots (`W == N::WIDTH`; the plans' tables are sized
/// by the width, so a narrow tree's plans stay small).
fn collapse_with<N: WideNode, const W: usize>(b2: &[Node2]) -> (Vec<N>, u32) {
    debug_assert_eq!(W, N::WIDTH);
    let plans = plan::<W>(b2);
    let mut nodes = Vec::with_capacity(b2.len() / (W - 1) + 1);
    let root = if plans[0].leaf {
        Child::leaf(plans[0].first, plans[0].count)
    } else {
        nodes.push(N::empty());
        emit(b2, &plans, 0, 0, &mut nodes);
        0
    };
    (nodes, root)
}

/// The collapse plan of one binary node, for wide nodes of `W` slots. Table entry `j` is for
/// `j + 1` slots.
#[derive(Clone, Copy)]
struct Plan<const W: usize> {
    /// The subtree's primitives: `first..first + count` of the permutation.
    first: u32,
    count: u32,
    /// As one slot, the subtree is a leaf (else a wide node).
    leaf: bool,
    /// The fewest slots at which `cost` reaches its last value: `cost[j] == cost[W - 1]` for
    /// every `j + 1 >= sat` (1 for a binary leaf, whose cost is the same for any number of
    /// slots).
    sat: u8,
    /// The left child's share when the node's children are spread over the `W` slots of a
    /// wide node made of this binary node.
    spread: u8,
    /// `cost[j]`: cheapest cost of the subtree given `j + 1` slots.
    cost: [f32; W],
    /// `split[j]`: slots given to the left child when the subtree is spread over `j + 1`
    /// slots (0: it takes one slot itself).
    split: [u8; W],
}

fn plan<const W: usize>(b2: &[Node2]) -> Vec<Plan<W>> {
    let empty = Plan { first: 0, count: 0, leaf: true, sat: 1, spread: 0, cost: [0.0; W], split: [0; W] };
    let mut plans = vec![empty; b2.len()];
    let leaf_cost = |area: f32, count: u32| area * BLOCK_COST * count.div_ceil(W as u32) as f32;
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
            p.cost = [leaf_cost(area, n.count); W];
            continue;
        }
        let c = n.index as usize;
        let (l, r) = (&plans[c], &plans[c + 1]);
        let (first, count) = (l.first, l.count + r.count);
        let (dist, share) = spread_costs(l, r);
        let inner = area * NODE_COST + dist[W - 1];
        let leaf = if count <= MAX_WIDE_LEAF { leaf_cost(area, count) } else { f32::INFINITY };
        let as_leaf = leaf <= inner;
        let one = if as_leaf { leaf } else { inner };
        let p = &mut plans[i];
        (p.first, p.count, p.leaf, p.spread) = (first, count, as_leaf, share[W - 1] as u8);
        // Fixed-length loops over the table, without branches: one vector operation each.
        for j in 0..W {
            let cheaper = j > 0 && dist[j] < one;
            p.cost[j] = if cheaper { dist[j] } else { one };
            p.split[j] = if cheaper { share[j] as u8 } else { 0 };
        }
        let last = p.cost[W - 1];
        let flat: u32 = p.cost.iter().map(|&c| u32::from(c == last)).sum();
        p.sat = (W as u32 + 1 - flat) as u8;
    }
    plans
}

/// `(dist, share)`: `dist[j]` is the cheapest cost of two children `l`, `r` spread over
/// `j + 1` slots (for `j` in `1..W`; `dist[0]` is not used), and `share[j]` the first
/// cheapest number of slots given to the left.
///
/// A min-plus convolution of the two cost tables, one left share at a time over every `j`
/// at once. A plan's cost never rises with more slots (by induction: a share that fits `k`
/// slots fits `k + 1` with the right side's cost no higher, and float addition is monotone).
/// So the shares end at the left's saturation `sl = l.sat`: a share `kl > sl` costs
/// `l.cost[sl - 1] + r.cost[k - kl - 1]`, no less than share `sl` (the right side gets
/// fewer slots), and is never the first cheapest. The same answers as the search over every
/// share, in `sl` steps (one beside a left binary leaf).
fn spread_costs<const W: usize>(l: &Plan<W>, r: &Plan<W>) -> ([f32; W], [u32; W]) {
    // `padded[W + m]` is the right's cost for `m + 1` slots; below it, shares that leave the
    // right side no slot, which never win.
    let mut padded = [[f32::INFINITY; W]; 2];
    padded[1] = r.cost;
    let padded = padded.as_flattened();
    let shifted = |i: usize| -> &[f32] { &padded[W - 1 - i..2 * W - 1 - i] };
    let (mut dist, mut share) = ([0.0; W], [1u32; W]);
    let right = shifted(0);
    for j in 0..W {
        dist[j] = l.cost[0] + right[j];
    }
    for i in 1..(l.sat as usize).min(W) {
        let (left, right) = (l.cost[i], shifted(i));
        for j in 0..W {
            let c = left + right[j];
            let cheaper = c < dist[j];
            dist[j] = if cheaper { c } else { dist[j] };
            share[j] = if cheaper { i as u32 + 1 } else { share[j] };
        }
    }
    (dist, share)
}

/// Writes wide node `at` for binary inner node `src`, spreading its children over the slots.
fn emit<N: WideNode, const W: usize>(b2: &[Node2], plans: &[Plan<W>], src: usize, at: usize, nodes: &mut Vec<N>) {
    let mut slots = [0usize; MAX_WIDTH];
    let mut n = 0;
    let kl = plans[src].spread as usize;
    let first = b2[src].index as usize;
    gather(b2, plans, first, kl, &mut slots, &mut n);
    gather(b2, plans, first + 1, W - kl, &mut slots, &mut n);
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
fn gather<const W: usize>(
    b2: &[Node2],
    plans: &[Plan<W>],
    src: usize,
    k: usize,
    slots: &mut [usize; MAX_WIDTH],
    n: &mut usize,
) {
    let kl = plans[src].split[k - 1] as usize;
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

    /// The search over every left share for every number of slots: what `spread_costs`
    /// shortens. Entry `j` is for `j + 1` slots, as in the plans.
    fn every_share<const W: usize>(l: &Plan<W>, r: &Plan<W>) -> ([f32; W], [u8; W]) {
        let (mut dist, mut share) = ([f32::INFINITY; W], [0u8; W]);
        for k in 2..=W {
            let mut best = (f32::INFINITY, 0);
            for kl in 1..k {
                let c = l.cost[kl - 1] + r.cost[k - kl - 1];
                if c < best.0 || best.1 == 0 {
                    best = (c, kl);
                }
            }
            (dist[k - 1], share[k - 1]) = (best.0, best.1 as u8);
        }
        (dist, share)
    }

    fn random_boxes(seed: u64, n: usize) -> Vec<Aabb> {
        let mut rng = crate::rng::Rng::new(seed);
        (0..n)
            .map(|_| {
                let c = rng.vec3(-50.0, 50.0);
                Aabb::new(c, c + rng.vec3(0.01, 1.0) * if rng.f32() < 0.1 { 40.0 } else { 1.0 })
            })
            .collect()
    }

    /// Checks every inner node's search against the search over every share, and every
    /// plan's saturation; returns how many searches stopped short of the width.
    fn check_plans<const W: usize>(b2: &Bvh2) -> usize {
        let plans = plan::<W>(&b2.nodes);
        let mut short = 0;
        for n in b2.nodes.iter().filter(|n| !n.is_leaf()) {
            let (l, r) = (&plans[n.index as usize], &plans[n.index as usize + 1]);
            let (got_cost, got) = spread_costs(l, r);
            let (want_cost, want) = every_share(l, r);
            // Entry 0 (one slot for two children) is not a spread.
            let bits = |d: [f32; W]| d.map(f32::to_bits)[1..].to_vec();
            assert_eq!((bits(got_cost), got.map(|s| s as u8)[1..].to_vec()), (bits(want_cost), want[1..].to_vec()));
            short += usize::from((l.sat as usize) < W);
        }
        for p in &plans {
            let sat = p.sat as usize;
            assert!((1..=W).contains(&sat));
            assert!(p.cost[sat - 1..].iter().all(|&c| c == p.cost[W - 1]));
            assert!(sat == 1 || p.cost[sat - 2] > p.cost[W - 1]);
        }
        short
    }

    #[test]
    fn the_short_search_gives_the_search_over_every_shares_answer() {
        // Every inner node of trees over random boxes (three presets, three widths), its
        // children's plans as the collapse made them: the search that stops at the left's
        // saturation must give the same costs and first cheapest shares as the search over
        // every share, bit for bit; and `sat` is the fewest slots at which a plan's cost takes
        // its last value.
        let boxes = random_boxes(0xc0_11a9, 3000);
        for q in [crate::bvh::Quality::Fast, crate::bvh::Quality::Medium, crate::bvh::Quality::High] {
            let b2 = build(&boxes, &BuildOptions::with_quality(q));
            let inner = b2.nodes.iter().filter(|n| !n.is_leaf()).count();
            for (width, short) in [(4, check_plans::<4>(&b2)), (8, check_plans::<8>(&b2)), (16, check_plans::<16>(&b2))]
            {
                assert!(short > inner / 2, "{q:?}, width {width}: {short} of {inner} searches cut short");
            }
        }
    }

    /// The plans by the search over every share, as `(cost, split, spread, leaf)`: the
    /// dynamic program written plainly, entry `j` for `j + 1` slots.
    fn plain_plans<const W: usize>(b2: &[Node2]) -> Vec<([f32; W], [u8; W], u8, bool)> {
        let mut out = vec![([0.0; W], [0; W], 0, true); b2.len()];
        let mut counts = vec![0u32; b2.len()];
        for i in (0..b2.len()).rev() {
            let n = &b2[i];
            let area = n.aabb().surface_area();
            let area = if area.is_finite() { area } else { f32::MAX };
            let block = |count: u32| area * BLOCK_COST * count.div_ceil(W as u32) as f32;
            if n.is_leaf() {
                counts[i] = n.count;
                out[i].0 = [block(n.count); W];
                continue;
            }
            let c = n.index as usize;
            counts[i] = counts[c] + counts[c + 1];
            let (mut dist, mut share) = ([f32::INFINITY; W], [0u8; W]);
            for k in 2..=W {
                for kl in 1..k {
                    let d = out[c].0[kl - 1] + out[c + 1].0[k - kl - 1];
                    if kl == 1 || d < dist[k - 1] {
                        (dist[k - 1], share[k - 1]) = (d, kl as u8);
                    }
                }
            }
            let inner = area * NODE_COST + dist[W - 1];
            let leaf = if counts[i] <= MAX_WIDE_LEAF { block(counts[i]) } else { f32::INFINITY };
            let one = leaf.min(inner);
            let mut plan = ([one; W], [0u8; W], share[W - 1], leaf <= inner);
            for k in 2..=W {
                if dist[k - 1] < one {
                    (plan.0[k - 1], plan.1[k - 1]) = (dist[k - 1], share[k - 1]);
                }
            }
            out[i] = plan;
        }
        out
    }

    fn check_against_plain<const W: usize>(b2: &Bvh2) {
        let got = plan::<W>(&b2.nodes);
        let want = plain_plans::<W>(&b2.nodes);
        for (i, (p, w)) in got.iter().zip(&want).enumerate() {
            let leaf = b2.nodes[i].is_leaf();
            assert_eq!(p.cost.map(f32::to_bits), w.0.map(f32::to_bits), "width {W}, node {i}");
            if !leaf {
                assert_eq!((p.split, p.spread, p.leaf), (w.1, w.2, w.3), "width {W}, node {i}");
            }
        }
    }

    #[test]
    fn the_plans_equal_the_plain_dynamic_programs() {
        // The collapse's plans (the short search, the table loops without branches) against
        // the dynamic program written plainly, bit for bit, for every node of trees over
        // random boxes and over boxes of no area.
        let mut sets = vec![random_boxes(0x9a1, 2500), row(300, 0.0)];
        sets.push(
            (0..500).map(|i| Aabb::new(Vec3::splat(i as f32 * 1e30), Vec3::splat(i as f32 * 1e30 + 1e30))).collect(),
        );
        for boxes in &sets {
            for q in [crate::bvh::Quality::Fast, crate::bvh::Quality::High] {
                let b2 = build(boxes, &BuildOptions::with_quality(q));
                check_against_plain::<4>(&b2);
                check_against_plain::<8>(&b2);
                check_against_plain::<16>(&b2);
            }
        }
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
