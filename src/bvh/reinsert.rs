//! Tree optimisation by reinsertion (Bittner, Hapala and Havran 2013; candidate choice and
//! search after Meister and Bittner 2018): a subtree is cut out and put back where the sum of
//! inner-node surface areas (the SAH cost with the leaves fixed) drops most. Top-down binned
//! SAH decides splits greedily from the root down; reinsertion repairs the upper levels,
//! where those early decisions cost most (large, overlapping boxes in architectural scenes).
//!
//! The leaves are never changed, only where they hang, so the result is again a [`Bvh2`]
//! whose leaves cover a permutation of the same primitives.

use super::node::{Box3, Bvh2, Node2};
use std::cmp::Reverse;

/// No node (parent of the root).
const NONE: u32 = u32::MAX;
/// The root stays node 0: no move touches the root or its children (moved nodes need a
/// grandparent, and a destination always has a parent).
const ROOT: u32 = 0;

/// The tree with parent links and explicit children, for local surgery.
#[derive(Clone)]
struct Tree {
    boxes: Vec<Box3>,
    parent: Vec<u32>,
    /// Children of inner nodes; `[NONE, NONE]` for leaves.
    kids: Vec<[u32; 2]>,
    /// `(first, count)` in the old permutation, for leaves.
    range: Vec<(u32, u32)>,
}

impl Tree {
    fn from_nodes(nodes: &[Node2]) -> Tree {
        let n = nodes.len();
        let mut t = Tree {
            boxes: nodes.iter().map(Box3::of).collect(),
            parent: vec![NONE; n],
            kids: vec![[NONE; 2]; n],
            range: vec![(0, 0); n],
        };
        for (i, node) in nodes.iter().enumerate() {
            if node.is_leaf() {
                t.range[i] = (node.index, node.count);
            } else {
                let (a, b) = (node.index, node.index + 1);
                t.kids[i] = [a, b];
                t.parent[a as usize] = i as u32;
                t.parent[b as usize] = i as u32;
            }
        }
        t
    }

    fn is_leaf(&self, i: u32) -> bool {
        self.kids[i as usize][0] == NONE
    }

    fn area(&self, i: u32) -> f32 {
        self.boxes[i as usize].area()
    }

    /// Only nodes two or more levels below the root can move.
    fn has_grandparent(&self, i: u32) -> bool {
        let p = self.parent[i as usize];
        p != NONE && self.parent[p as usize] != NONE
    }

    /// The other child of `i`'s parent: `i` is one of the two, so their `xor` without `i` is
    /// the other (no branch: which side a node hangs on is a coin toss, and a comparison
    /// mispredicted about every second time, callgrind on sponza's searches).
    fn sibling(&self, i: u32) -> u32 {
        let k = self.kids[self.parent[i as usize] as usize];
        k[0] ^ k[1] ^ i
    }

    fn replace_child(&mut self, parent: u32, old: u32, new: u32) {
        let k = &mut self.kids[parent as usize];
        if k[0] == old {
            k[0] = new;
        } else {
            debug_assert_eq!(k[1], old);
            k[1] = new;
        }
        self.parent[new as usize] = parent;
    }

    /// Recomputes boxes from `i` up to the root.
    fn refit_up(&mut self, mut i: u32) {
        while i != NONE {
            let [a, b] = self.kids[i as usize];
            self.boxes[i as usize] = self.boxes[a as usize].union(&self.boxes[b as usize]);
            i = self.parent[i as usize];
        }
    }

    /// The best place to put `n` back: `(destination, area saved)`, or `None` if nothing
    /// beats leaving it where it is. `n` must have a grandparent. The destinations are the
    /// nodes outside `n`'s subtree that are neither its ancestors nor its sibling (beside
    /// which it already hangs).
    ///
    /// `stack` must have a slot for every node of the tree: a search pushes each node at most
    /// once (the regions it searches are disjoint subtrees, and a node's first child is pushed
    /// when the node is opened, which happens once).
    fn find(&self, n: u32, stack: &mut [(f32, u32)]) -> Option<(u32, f32)> {
        let nb = self.boxes[n as usize];
        let n_area = nb.area();
        let parent = self.parent[n as usize];
        // Taking `n` out removes its parent (its sibling moves up) and shrinks the ancestors.
        let mut saved = self.area(parent);
        // Best destination and its gain; only gains above 0 count.
        let (mut best, mut best_gain) = (NONE, 0.0f32);
        let mut side = self.sibling(n);
        let home = side;
        // What `pivot` holds once `n` is gone.
        let mut rest_box = self.boxes[side as usize];
        let mut pivot = parent;
        loop {
            // Destinations inside `side`'s subtree: the ancestors from `pivot` up keep their
            // boxes (they contain `n` again), each node on the way down grows to hold `n`,
            // and the new parent costs the union of `n` and the destination.
            stack[0] = (saved, side);
            let mut top = 1;
            while top > 0 {
                top -= 1;
                let (mut gain_so_far, mut x) = stack[top];
                if gain_so_far - n_area <= best_gain {
                    continue;
                }
                // Down the second child at once, the first pushed: the second would be popped
                // next, against the same bound it has just passed. The same order as pushing
                // both, without a store and a load between a node and its child.
                loop {
                    let merged = self.boxes[x as usize].union(&nb).area();
                    let gain = gain_so_far - merged;
                    if gain > best_gain && x != home {
                        (best, best_gain) = (x, gain);
                    }
                    if self.is_leaf(x) {
                        break;
                    }
                    let rest = gain_so_far - (merged - self.area(x));
                    if rest - n_area <= best_gain {
                        break;
                    }
                    let [a, b] = self.kids[x as usize];
                    stack[top] = (rest, a);
                    top += 1;
                    (gain_so_far, x) = (rest, b);
                }
            }
            // One level up: `pivot`'s box shrinks to its remaining content, and the subtree
            // beside it becomes the next search region.
            let up = self.parent[pivot as usize];
            if up == NONE {
                break;
            }
            let other = self.sibling(pivot);
            if pivot != parent {
                // `pivot` itself (not `parent`, which disappears) shrinks to `rest_box`.
                saved += self.area(pivot) - rest_box.area();
            }
            rest_box = rest_box.union(&self.boxes[other as usize]);
            side = other;
            pivot = up;
        }
        (best != NONE).then_some((best, best_gain))
    }

    /// Cuts `n` out and hangs it beside `dst` (neither the root's child rule nor subtree
    /// membership is checked here: `find` only returns legal destinations).
    fn move_to(&mut self, n: u32, dst: u32) {
        let p = self.parent[n as usize];
        let s = self.sibling(n);
        let g = self.parent[p as usize];
        // Remove: the sibling takes the parent's place.
        self.replace_child(g, p, s);
        self.refit_up(g);
        // Reuse `p` as the new parent of `dst` and `n`.
        let y = self.parent[dst as usize];
        self.replace_child(y, dst, p);
        self.kids[p as usize] = [dst, n];
        self.parent[dst as usize] = p;
        self.parent[n as usize] = p;
        self.refit_up(p);
    }

    /// Back to flat form: children adjacent, depth-first order, leaves renumbered so every
    /// subtree's primitives are contiguous; `None` if the tree is deeper than `max_depth`
    /// levels.
    fn flatten(&self, perm: &[u32], max_depth: usize) -> Option<Bvh2> {
        let mut nodes = Vec::with_capacity(self.boxes.len());
        let mut new_perm = Vec::with_capacity(perm.len());
        nodes.push(bytemuck::Zeroable::zeroed());
        let mut stack = vec![(ROOT, 0usize, 1usize)];
        while let Some((i, at, depth)) = stack.pop() {
            if depth > max_depth {
                return None;
            }
            let (lo, hi) = (self.boxes[i as usize].min, self.boxes[i as usize].max);
            if self.is_leaf(i) {
                let (first, count) = self.range[i as usize];
                let start = new_perm.len() as u32;
                new_perm.extend_from_slice(&perm[first as usize..(first + count) as usize]);
                nodes[at] = Node2 { min: lo.into(), count, max: hi.into(), index: start };
            } else {
                let first = nodes.len();
                nodes.push(bytemuck::Zeroable::zeroed());
                nodes.push(bytemuck::Zeroable::zeroed());
                nodes[at] = Node2 { min: lo.into(), count: 0, max: hi.into(), index: first as u32 };
                let [a, b] = self.kids[i as usize];
                stack.push((b, first + 1, depth + 1));
                stack.push((a, first, depth + 1));
            }
        }
        Some(Bvh2 { nodes, perm: new_perm })
    }
}

/// Sum of inner-node areas relative to the root (the part of the SAH cost reinsertion
/// changes).
pub fn inner_area_cost(bvh: &Bvh2) -> f32 {
    let Some(root) = bvh.nodes.first() else { return 0.0 };
    let r = Box3::of(root).area().max(f32::MIN_POSITIVE);
    bvh.nodes.iter().filter(|n| !n.is_leaf()).map(|n| Box3::of(n).area()).sum::<f32>() / r
}

/// A round ends after this many candidates in a row found no better place. Candidates come
/// largest box first, and past such a run the smaller ones rarely move: the bunny's first
/// round moved 27 of 4,864 candidates (the tree's inner area changed by 0.03 %), sponza's
/// 846 of 4,375, with at most 140 candidates between moves in any round. Stopping there
/// leaves sponza's tree as it was and the bunny's SAH cost within 0.01 (32.53 → 32.54), and
/// saves 40 % of the bunny's reinsertion time.
pub const STALL: usize = 256;

/// `a`'s place in [`f32::total_cmp`]'s order, as an integer: the candidates are ranked by
/// one integer compare each, in exactly `total_cmp`'s order, so the sorts (whose results
/// depend only on the comparisons) order them as sorting by `total_cmp` would, ties included.
fn rank(a: f32) -> i32 {
    let b = a.to_bits() as i32;
    b ^ (((b >> 31) as u32) >> 1) as i32
}

/// Optimises `bvh` in place by reinsertion. Each round takes the `ratio` of nodes with the
/// largest boxes (rounds 1, 1/3, 1/5, … of that batch, `rounds` of them, so the top of the
/// tree gets the most attempts; after the first round, the largest of the previous round's
/// batch) and moves each to its best place, one at a time. A round ends early after
/// [`STALL`] candidates in a row that did not move, and a round that moved nothing ends the
/// pass (the tree is unchanged, so the next round, whose candidates come first in the same
/// order, would search the same ones in vain). Trees that would end deeper than `max_depth`
/// are left as they were, and so is a tree where nothing moved (no new copy is made).
pub fn optimize(bvh: &mut Bvh2, ratio: f32, rounds: usize, max_depth: usize) {
    optimize_counted(bvh, ratio, rounds, max_depth);
}

/// [`optimize`], returning how many candidates it searched a place for.
fn optimize_counted(bvh: &mut Bvh2, ratio: f32, rounds: usize, max_depth: usize) -> usize {
    let mut searched = 0;
    if bvh.nodes.len() < 7 || ratio <= 0.0 {
        return searched;
    }
    let mut t = Tree::from_nodes(&bvh.nodes);
    // A slice with a slot per node (see `find`), not a `Vec`: a `push` that may grow keeps a
    // call inside the search loop, and the best gain lived in the stack frame across it.
    let mut stack = vec![(0.0, NONE); t.boxes.len()];
    let mut cands: Vec<(i32, u32)> = Vec::with_capacity(bvh.nodes.len());
    let mut changed = false;
    for round in 0..rounds {
        let batch = ((bvh.nodes.len() as f32 * ratio) / (2 * round + 1) as f32).ceil() as usize;
        // The first round ranks every movable node; later rounds re-rank the previous
        // round's batch by its current areas (a node outside it would have to grow into the
        // top share, which moves rarely cause: the same trees for both meshes at every
        // preset, without a pass over all nodes per round).
        if round == 0 {
            cands.extend((0..t.boxes.len() as u32).filter(|&i| t.has_grandparent(i)).map(|i| (rank(t.area(i)), i)));
        } else {
            for c in cands.iter_mut() {
                c.0 = rank(t.area(c.1));
            }
        }
        let batch = batch.min(cands.len());
        if batch == 0 {
            break;
        }
        cands.select_nth_unstable_by_key(batch - 1, |c| Reverse(c.0));
        cands[..batch].sort_unstable_by_key(|c| Reverse(c.0));
        let (mut since_move, mut moved) = (0, false);
        for &(_, n) in &cands[..batch] {
            // Earlier moves may have lifted `n` to the top two levels.
            if !t.has_grandparent(n) {
                continue;
            }
            if since_move == STALL {
                break;
            }
            since_move += 1;
            searched += 1;
            if let Some((dst, gain)) = t.find(n, &mut stack)
                && gain > 1e-6 * t.area(ROOT)
            {
                t.move_to(n, dst);
                (since_move, moved) = (0, true);
            }
        }
        cands.truncate(batch);
        if !moved {
            break;
        }
        changed = true;
    }
    if changed && let Some(flat) = t.flatten(&bvh.perm, max_depth) {
        *bvh = flat;
    }
    searched
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::{BuildOptions, build};
    use crate::prim::Aabb;
    use glam::Vec3;

    fn boxes(n: usize, seed: u64) -> Vec<Aabb> {
        let mut rng = crate::rng::Rng::new(seed);
        (0..n)
            .map(|_| {
                let c = Vec3::new(rng.f32() * 100.0, rng.f32() * 100.0, rng.f32() * 100.0);
                let h = Vec3::new(rng.f32(), rng.f32(), rng.f32()) * if rng.f32() < 0.1 { 30.0 } else { 1.0 };
                Aabb::new(c - h, c + h)
            })
            .collect()
    }

    /// Every leaf's primitives as a sorted list, the lists sorted.
    fn leaf_sets(bvh: &Bvh2) -> Vec<Vec<u32>> {
        let mut sets: Vec<Vec<u32>> = bvh
            .nodes
            .iter()
            .filter(|n| n.is_leaf())
            .map(|n| {
                let mut v = bvh.perm[n.index as usize..(n.index + n.count) as usize].to_vec();
                v.sort();
                v
            })
            .collect();
        sets.sort();
        sets
    }

    #[test]
    fn ranks_order_as_total_cmp() {
        let mut v = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7fc0_0001),
        ];
        let mut rng = crate::rng::Rng::new(77);
        v.extend((0..500).map(|_| f32::from_bits(rng.next_u64() as u32)));
        for a in &v {
            for b in &v {
                assert_eq!(
                    rank(*a).cmp(&rank(*b)),
                    a.total_cmp(b),
                    "{a:e} ({:#x}) against {b:e} ({:#x})",
                    a.to_bits(),
                    b.to_bits()
                );
            }
        }
    }

    #[test]
    fn a_nodes_sibling_is_the_other_child_on_either_side() {
        // In the flat tree the children of an inner node are `index` and `index + 1`.
        let bvh = build(&boxes(300, 4), &BuildOptions { reinsertion: 0.0, ..BuildOptions::default() });
        let t = Tree::from_nodes(&bvh.nodes);
        for n in bvh.nodes.iter().filter(|n| !n.is_leaf()) {
            assert_eq!((t.sibling(n.index), t.sibling(n.index + 1)), (n.index + 1, n.index));
        }
    }

    #[test]
    fn reinsertion_keeps_the_leaves_and_lowers_the_cost() {
        for (n, seed) in [(10, 1), (300, 2), (5000, 3)] {
            let b = boxes(n, seed);
            let opts = BuildOptions { reinsertion: 0.0, ..BuildOptions::default() };
            let mut bvh = build(&b, &opts);
            let before = inner_area_cost(&bvh);
            let leaves_before = leaf_sets(&bvh);
            optimize(&mut bvh, 0.2, 4, 128);
            let after = inner_area_cost(&bvh);
            assert!(after <= before * (1.0 + 1e-5), "n={n}: cost {before} -> {after}");
            if n >= 300 {
                assert!(after < before, "n={n}: reinsertion found nothing ({before})");
            }
            // Same leaves (as sets of primitives), a permutation, and children inside parents.
            assert_eq!(leaves_before, leaf_sets(&bvh));
            let mut p = bvh.perm.clone();
            p.sort();
            assert_eq!(p, (0..n as u32).collect::<Vec<_>>());
            crate::bvh::validate::validate_bvh2(&bvh, &b).unwrap();
        }
    }

    /// Sum of the inner nodes' areas of the working tree, from `ROOT` down.
    fn inner_area(t: &Tree) -> f64 {
        let (mut sum, mut todo) = (0.0, vec![ROOT]);
        while let Some(i) = todo.pop() {
            if !t.is_leaf(i) {
                sum += f64::from(t.area(i));
                todo.extend(t.kids[i as usize]);
            }
        }
        sum
    }

    #[test]
    fn a_search_finds_the_move_that_saves_the_most_area() {
        // Against every legal move made on a copy of the tree and the inner areas summed
        // again: the search's best gain must be the largest real saving (within rounding),
        // and the move it names must save what it says.
        let mut searched = 0;
        for seed in 0..6 {
            let b = boxes(40 + 30 * seed as usize, 100 + seed);
            let bvh = build(&b, &BuildOptions { reinsertion: 0.0, ..BuildOptions::default() });
            let t = Tree::from_nodes(&bvh.nodes);
            let total = inner_area(&t);
            let tol = 1e-5 * total;
            let mut stack = vec![(0.0, NONE); t.boxes.len()];
            let nodes = t.boxes.len() as u32;
            let below = |top: u32, x: u32| {
                let mut y = x;
                while y != NONE && y != top {
                    y = t.parent[y as usize];
                }
                y == top
            };
            let saving = |n: u32, d: u32| {
                let mut moved = t.clone();
                moved.move_to(n, d);
                total - inner_area(&moved)
            };
            for n in (0..nodes).filter(|&n| t.has_grandparent(n)) {
                let legal = (0..nodes).filter(|&d| !below(n, d) && !below(d, n) && d != t.sibling(n));
                let best = legal.map(|d| saving(n, d)).fold(f64::NEG_INFINITY, f64::max);
                match t.find(n, &mut stack) {
                    Some((d, gain)) => {
                        assert!(!below(n, d) && !below(d, n) && d != t.sibling(n), "seed {seed}: illegal {n} -> {d}");
                        let real = saving(n, d);
                        assert!(
                            (real - f64::from(gain)).abs() <= tol,
                            "seed {seed}: {n} -> {d} saves {real}, not {gain}"
                        );
                        assert!(real >= best - tol, "seed {seed}: {n} -> {d} saves {real}, the best {best}");
                        searched += 1;
                    }
                    None => assert!(best <= tol, "seed {seed}: no move found for {n}, the best saves {best}"),
                }
            }
        }
        assert!(searched > 50, "too few moves found to mean anything: {searched}");
    }

    #[test]
    fn a_tree_that_would_end_too_deep_is_left_alone() {
        let b = boxes(2000, 4);
        let mut bvh = build(&b, &BuildOptions { reinsertion: 0.0, ..BuildOptions::default() });
        let before = bvh.clone();
        // Every tree over 2000 boxes is deeper than 3 levels: the pass must give up.
        optimize(&mut bvh, 0.2, 4, 3);
        assert_eq!(bvh.nodes, before.nodes);
        assert_eq!(bvh.perm, before.perm);
        // With room, the same call changes the tree.
        optimize(&mut bvh, 0.2, 4, 128);
        assert_ne!(bvh.nodes, before.nodes);
    }

    #[test]
    fn a_round_ends_after_a_stall_of_candidates_that_do_not_move() {
        // 40,000 copies of one box: the builder halves the list down to leaves of 8, and no
        // move can shrink any box, so nothing ever moves.
        let b = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 40_000];
        let mut bvh = build(&b, &BuildOptions { reinsertion: 0.0, ..BuildOptions::default() });
        let before = bvh.clone();
        let nodes_at = bvh.nodes.as_ptr();
        // The first round's batch (10 % of the nodes) exceeds the stall, and so would the
        // next rounds' (a third, a fifth of it).
        assert!(bvh.nodes.len() / 50 > STALL, "{} nodes", bvh.nodes.len());
        // One stall's worth of searches, then the pass ends: a round that moved nothing
        // leaves the next rounds nothing to find.
        assert_eq!(optimize_counted(&mut bvh, 0.1, 3, 128), STALL);
        assert_eq!(bvh.nodes, before.nodes);
        assert_eq!(bvh.perm, before.perm);
        // Nothing moved, so the tree was not copied back either.
        assert_eq!(bvh.nodes.as_ptr(), nodes_at);
        // A move resets the count: random boxes keep moving well past one stall's worth, and
        // every round runs while rounds move something.
        let b = boxes(20_000, 5);
        let mut one = build(&b, &BuildOptions { reinsertion: 0.0, ..BuildOptions::default() });
        let mut three = one.clone();
        let first = optimize_counted(&mut one, 0.1, 1, 128);
        assert!(first > STALL);
        assert!(optimize_counted(&mut three, 0.1, 3, 128) > first);
    }
}
