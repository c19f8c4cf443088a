//! `validate` on broken trees: each corruption it checks for (a child box that sticks out, a
//! primitive missing or reachable twice, a leaf past the end or too big, an empty slot with a
//! box, a node index out of range, a tree deeper than the traversal stack) is made by hand in
//! a tree that validates, and must give its own error.

use glam::Vec3;
use lanecast::bvh::validate::{validate_bvh2, validate_wide};
use lanecast::bvh::{
    BuildOptions, Bvh2, BvhError, Child, EMPTY_CHILD, Node2, Node8, STACK_DEPTH, WideBvh, WideNode, build,
};
use lanecast::prim::Aabb;
use lanecast::rng::Rng;

fn boxes(n: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let c = Vec3::new(rng.range(-10.0, 10.0), rng.range(-10.0, 10.0), rng.range(-10.0, 10.0));
            Aabb::new(c - Vec3::splat(0.3), c + Vec3::splat(0.3))
        })
        .collect()
}

/// A valid binary tree over 200 boxes (leaves of up to 4, no reinsertion).
fn tree() -> (Bvh2, Vec<Aabb>) {
    let b = boxes(200, 7);
    let t = build(&b, &BuildOptions { max_leaf: 4, reinsertion: 0.0, ..BuildOptions::default() });
    validate_bvh2(&t, &b).unwrap();
    (t, b)
}

fn permuted(t: &Bvh2, b: &[Aabb]) -> Vec<Aabb> {
    t.perm.iter().map(|&i| b[i as usize]).collect()
}

fn first_leaf(t: &Bvh2) -> usize {
    t.nodes.iter().position(|n| n.is_leaf() && n.count >= 2).expect("a leaf of two or more")
}

#[test]
fn binary_child_box_not_contained() {
    let (mut t, b) = tree();
    // Grow the root's left child past the root.
    let l = t.nodes[0].index as usize;
    t.nodes[l].max[0] = t.nodes[0].max[0] + 1.0;
    assert_eq!(validate_bvh2(&t, &b), Err(BvhError::ChildNotContained { node: 0, child: l }));
}

#[test]
fn binary_primitive_outside_its_leaf() {
    let (mut t, b) = tree();
    let k = first_leaf(&t);
    let first = t.nodes[k].index as usize;
    // Shrink the leaf box to nothing at its minimum corner.
    t.nodes[k].max = t.nodes[k].min;
    assert_eq!(validate_bvh2(&t, &b), Err(BvhError::PrimitiveNotContained { primitive: first }));
}

#[test]
fn binary_primitive_missing() {
    let (mut t, b) = tree();
    let k = first_leaf(&t);
    t.nodes[k].count -= 1;
    let gone = (t.nodes[k].index + t.nodes[k].count) as usize;
    assert_eq!(validate_bvh2(&t, &b), Err(BvhError::MissingPrimitive { primitive: gone }));
}

/// A root over two leaves `(first, count)` of three unit boxes along x.
fn two_leaves(a: (u32, u32), b: (u32, u32)) -> (Bvh2, Vec<Aabb>) {
    let bx: Vec<Aabb> = (0..3).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 1.0))).collect();
    let all = Aabb::new(Vec3::ZERO, Vec3::splat(3.0));
    let node = |count: u32, index: u32| Node2 { min: all.min.into(), count, max: all.max.into(), index };
    (Bvh2 { nodes: vec![node(0, 1), node(a.1, a.0), node(b.1, b.0)], perm: vec![0, 1, 2] }, bx)
}

#[test]
fn binary_primitive_duplicated() {
    let (t, b) = two_leaves((0, 2), (2, 1));
    assert_eq!(validate_bvh2(&t, &b), Ok(2));
    let (t, b) = two_leaves((0, 2), (1, 2));
    assert_eq!(validate_bvh2(&t, &b), Err(BvhError::DuplicatePrimitive { primitive: 1, times: 2 }));
    let (t, b) = two_leaves((0, 1), (2, 1));
    assert_eq!(validate_bvh2(&t, &b), Err(BvhError::MissingPrimitive { primitive: 1 }));
}

#[test]
fn binary_leaf_past_the_end_or_too_big() {
    let (mut t, b) = tree();
    let k = first_leaf(&t);
    t.nodes[k].index = b.len() as u32 - 1;
    assert!(matches!(validate_bvh2(&t, &b), Err(BvhError::BadLeaf { .. })));
    let (mut t, b) = tree();
    t.nodes[k].index = u32::MAX; // first + count overflows u32: still a clean error
    assert!(matches!(validate_bvh2(&t, &b), Err(BvhError::BadLeaf { .. })));
    let (mut t, b) = tree();
    t.nodes[k].count = 9;
    assert!(matches!(validate_bvh2(&t, &b), Err(BvhError::BadLeaf { count: 9, .. })));
}

#[test]
fn binary_node_out_of_range_and_permutation() {
    let (mut t, b) = tree();
    let inner = (1..t.nodes.len()).find(|&i| !t.nodes[i].is_leaf()).unwrap();
    t.nodes[inner].index = t.nodes.len() as u32;
    assert_eq!(validate_bvh2(&t, &b), Err(BvhError::NodeOutOfRange { node: t.nodes.len() }));
    let (mut t, b) = tree();
    t.perm[3] = t.perm[4];
    assert_eq!(validate_bvh2(&t, &b), Err(BvhError::PermutationEntry { entry: t.perm[4] }));
    let (mut t, b) = tree();
    t.perm.pop();
    assert_eq!(validate_bvh2(&t, &b), Err(BvhError::PermutationLength { entries: 199, primitives: 200 }));
}

/// A chain: every inner node has a leaf of one primitive on the left and the rest of the
/// chain on the right, `depth` levels deep.
fn chain(depth: usize) -> (Bvh2, Vec<Aabb>) {
    let n = depth; // one primitive per level, the last level holds one leaf
    let b: Vec<Aabb> = (0..n).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 1.0))).collect();
    let all = Aabb::new(Vec3::ZERO, Vec3::splat(n as f32 + 1.0));
    let node = |bx: &Aabb, count: u32, index: u32| Node2 { min: bx.min.into(), count, max: bx.max.into(), index };
    let mut nodes = vec![node(&all, 0, 1)];
    for level in 0..n - 1 {
        let here = nodes.len() as u32;
        // Left: a leaf over primitive `level`; right: the next inner node (or the last leaf).
        nodes.push(node(&b[level], 1, level as u32));
        let last = level == n - 2;
        nodes.push(if last { node(&b[n - 1], 1, (n - 1) as u32) } else { node(&all, 0, here + 2) });
    }
    (Bvh2 { nodes, perm: (0..n as u32).collect() }, b)
}

#[test]
fn binary_too_deep() {
    let (t, b) = chain(STACK_DEPTH);
    assert_eq!(validate_bvh2(&t, &b), Ok(STACK_DEPTH));
    let (t, b) = chain(STACK_DEPTH + 1);
    assert_eq!(validate_bvh2(&t, &b), Err(BvhError::TooDeep { depth: STACK_DEPTH + 1, max: STACK_DEPTH }));
    // A cycle of child links is reported as too deep, not looped over forever.
    let (mut t, b) = tree();
    let inner = (1..t.nodes.len()).find(|&i| !t.nodes[i].is_leaf()).unwrap();
    t.nodes[inner].index = 0;
    t.nodes[inner].min = t.nodes[0].min;
    t.nodes[inner].max = t.nodes[0].max;
    assert!(matches!(validate_bvh2(&t, &b), Err(BvhError::TooDeep { .. })));
}

fn wide() -> (WideBvh<Node8>, Vec<Aabb>) {
    let (t, b) = tree();
    let w = WideBvh::<Node8>::collapse(&t);
    let p = permuted(&t, &b);
    validate_wide(&w, &p).unwrap();
    (w, p)
}

/// A (node, slot) holding an inner node, and one holding a leaf of two or more.
fn slots(w: &WideBvh<Node8>) -> ((usize, usize), (usize, usize)) {
    let mut inner = None;
    let mut leaf = None;
    for (i, n) in w.nodes.iter().enumerate() {
        for (s, &c) in n.children().iter().enumerate() {
            match Child::decode(c) {
                Child::Node(_) if inner.is_none() => inner = Some((i, s)),
                Child::Leaf { count, .. } if count >= 2 && leaf.is_none() => leaf = Some((i, s)),
                _ => {}
            }
        }
    }
    (inner.unwrap(), leaf.unwrap())
}

#[test]
fn wide_child_box_not_contained() {
    let (mut w, p) = wide();
    let ((i, s), _) = slots(&w);
    // The child node's first slot grows past the box its parent gives it.
    let c = w.nodes[i].child[s] as usize;
    w.nodes[c].max_x[0] = w.nodes[i].max_x[s] + 1.0;
    assert_eq!(validate_wide(&w, &p), Err(BvhError::ChildNotContained { node: c, child: 0 }));
}

#[test]
fn wide_primitive_missing_duplicated_and_outside() {
    let (w0, p) = wide();
    let (_, (i, s)) = slots(&w0);
    let Child::Leaf { first, count } = Child::decode(w0.nodes[i].child[s]) else { unreachable!() };

    let mut w = w0.clone();
    w.nodes[i].child[s] = Child::leaf(first, count - 1);
    assert_eq!(validate_wide(&w, &p), Err(BvhError::MissingPrimitive { primitive: (first + count - 1) as usize }));

    // The leaf also covers the next primitive, which another leaf holds too.
    let mut w = w0.clone();
    w.nodes[i].child[s] = Child::leaf(first, count + 1);
    w.nodes[i].max_x[s] = f32::MAX; // keep it contained, so only the count is wrong
    w.nodes[i].max_y[s] = f32::MAX;
    w.nodes[i].max_z[s] = f32::MAX;
    w.nodes[i].min_x[s] = f32::MIN;
    w.nodes[i].min_y[s] = f32::MIN;
    w.nodes[i].min_z[s] = f32::MIN;
    w.bounds = Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX));
    for n in &mut w.nodes {
        for k in 0..8 {
            if n.child[k] != EMPTY_CHILD {
                n.min_x[k] = f32::MIN;
                n.min_y[k] = f32::MIN;
                n.min_z[k] = f32::MIN;
                n.max_x[k] = f32::MAX;
                n.max_y[k] = f32::MAX;
                n.max_z[k] = f32::MAX;
            }
        }
    }
    match validate_wide(&w, &p) {
        Err(BvhError::DuplicatePrimitive { primitive, times: 2 }) => assert_eq!(primitive, (first + count) as usize),
        other if first + count == p.len() as u32 => assert!(matches!(other, Err(BvhError::BadLeaf { .. }))),
        other => panic!("{other:?}"),
    }

    let mut w = w0.clone();
    w.nodes[i].max_x[s] = w.nodes[i].min_x[s];
    w.nodes[i].max_y[s] = w.nodes[i].min_y[s];
    w.nodes[i].max_z[s] = w.nodes[i].min_z[s];
    assert_eq!(validate_wide(&w, &p), Err(BvhError::PrimitiveNotContained { primitive: first as usize }));
}

#[test]
fn wide_empty_slot_with_a_box_and_node_out_of_range() {
    // A root with two leaves and six empty slots.
    let b: Vec<Aabb> = (0..2).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 1.0))).collect();
    let mut root = Node8::empty();
    root.set(0, &b[0], Child::leaf(0, 1));
    root.set(1, &b[1], Child::leaf(1, 1));
    let mut w = WideBvh { nodes: vec![root], root: 0, bounds: Aabb::new(Vec3::ZERO, Vec3::splat(2.0)) };
    assert_eq!(validate_wide(&w, &b), Ok(2));
    w.nodes[0].set(5, &Aabb::new(Vec3::ZERO, Vec3::ONE), EMPTY_CHILD);
    assert_eq!(validate_wide(&w, &b), Err(BvhError::EmptySlotWithBox { node: 0, slot: 5 }));

    let (w0, p) = wide();

    let ((i, s), _) = slots(&w0);
    let mut w = w0.clone();
    w.nodes[i].child[s] = w.nodes.len() as u32;
    assert_eq!(validate_wide(&w, &p), Err(BvhError::NodeOutOfRange { node: w.nodes.len() }));
}

#[test]
fn wide_too_deep() {
    // A chain of wide nodes, each with one leaf and the next node.
    let depth = STACK_DEPTH + 1;
    let b: Vec<Aabb> = (0..depth).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 1.0))).collect();
    let all = Aabb::new(Vec3::ZERO, Vec3::splat(depth as f32 + 1.0));
    let mut nodes = Vec::new();
    for level in 0..depth - 1 {
        let mut n = Node8::empty();
        n.set(0, &b[level], Child::leaf(level as u32, 1));
        let last = level == depth - 2;
        if last {
            n.set(1, &b[depth - 1], Child::leaf((depth - 1) as u32, 1));
        } else {
            n.set(1, &all, (level + 1) as u32);
        }
        nodes.push(n);
    }
    let w = WideBvh { nodes, root: 0, bounds: all };
    assert_eq!(validate_wide(&w, &b), Err(BvhError::TooDeep { depth: STACK_DEPTH + 1, max: STACK_DEPTH }));
    let mut short = w.clone();
    short.nodes.truncate(10);
    let last = short.nodes.len() - 1;
    short.nodes[last].child[1] = Child::leaf(last as u32 + 1, 1);
    short.nodes[last].set(1, &b[last + 1], Child::leaf(last as u32 + 1, 1));
    assert_eq!(validate_wide(&short, &b[..last + 2]), Ok(last + 2));
}

#[test]
fn every_built_tree_validates() {
    // The claim that builds are validated: every preset, binary and both wide trees.
    for q in [lanecast::bvh::Quality::Fast, lanecast::bvh::Quality::Medium, lanecast::bvh::Quality::High] {
        let b = boxes(3000, 11);
        let trees = lanecast::bvh::build_trees(&b, &BuildOptions::with_quality(q)).unwrap();
        let bvh2 = Bvh2 { nodes: trees.bvh2.clone(), perm: trees.perm.clone() };
        validate_bvh2(&bvh2, &b).unwrap();
        let p: Vec<Aabb> = trees.perm.iter().map(|&i| b[i as usize]).collect();
        validate_wide(&trees.bvh4, &p).unwrap();
        validate_wide(&trees.bvh8, &p).unwrap();
    }
}
