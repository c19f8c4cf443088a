//! The traversal kernels against their scalar twins: the traversal slab test (one ray
//! against a wide node's boxes, and a packet against one box) and the ordering of a node's
//! hit children. Both twins do the same operations, so they must agree **exactly**: the same
//! hit lanes and bit-identical entry times, on random input with special values (NaN, ±inf,
//! ±0, huge, tiny) in every position and on edge tables (axis-parallel rays with ±0
//! components, origins on slab planes, negative `t_min`, flat, point and empty boxes).

mod common;

use common::{SPECIALS, interval, magnitude, zero_some};
use glam::Vec3;
use lanecast::bvh::traverse::child_order::{self, StackEntry};
use lanecast::bvh::traverse::slab::{self, PacketRay, TraversalRay};
use lanecast::bvh::{Node4, Node8, WideNode};
use lanecast::kernel::ray_aabb;
use lanecast::prim::Aabb;
use lanecast::rng::Rng;
use lanecast::vec3x::Vec3x;
use lanecast::{F32x4, F32x8, Lanes, Mask, Ray, RayPacket};

fn n_cases() -> usize {
    if cfg!(debug_assertions) { 5_000 } else { 200_000 }
}

fn random_box(rng: &mut Rng) -> Aabb {
    match rng.below(20) {
        // An unused slot of a wide node.
        0 => Aabb::new(Vec3::INFINITY, Vec3::NEG_INFINITY),
        1 => Aabb::new(Vec3::splat(rng.range(-5.0, 5.0)), Vec3::splat(0.0).max(Vec3::splat(rng.range(-5.0, 5.0)))),
        _ => {
            let c = rng.vec3(-10.0, 10.0);
            let mut h = Vec3::new(
                10f32.powf(rng.range(-2.0, 1.0)),
                10f32.powf(rng.range(-2.0, 1.0)),
                10f32.powf(rng.range(-2.0, 1.0)),
            );
            if rng.f32() < 0.1 {
                h[rng.below(3) as usize] = 0.0; // flat
            }
            Aabb::new(c - h, c + h)
        }
    }
}

fn random_ray(rng: &mut Rng, near: &Aabb) -> Ray {
    let k = magnitude(rng);
    let mut o = rng.vec3(-20.0, 20.0);
    if rng.f32() < 0.2 && near.is_valid() {
        let i = rng.below(3) as usize;
        o[i] = if rng.f32() < 0.5 { near.min[i] } else { near.max[i] }; // on a slab plane
    }
    let target = if near.is_valid() { near.center() + near.half_extents() * rng.vec3(-1.3, 1.3) } else { Vec3::ZERO };
    let d = zero_some(rng, (target - o).normalize_or(Vec3::X), 0.15);
    let (t0, t1) = interval(rng);
    Ray::with_interval(o, d * k, t0 * 20.0, t1 * 20.0)
}

/// Replaces one number of the ray or of one box by a special value, sometimes.
fn inject(rng: &mut Rng, ray: &mut Ray, boxes: &mut [Aabb]) {
    if rng.f32() >= 0.1 {
        return;
    }
    let v = SPECIALS[rng.below(SPECIALS.len() as u64) as usize];
    let i = rng.below(3) as usize;
    match rng.below(5) {
        0 => ray.origin[i] = v,
        1 => ray.dir[i] = v,
        2 => ray.t_min = v,
        3 => ray.t_max = v,
        _ => {
            let b = rng.below(boxes.len() as u64) as usize;
            if rng.f32() < 0.5 { boxes[b].min[i] = v } else { boxes[b].max[i] = v }
        }
    }
}

fn columns(boxes: &[Aabb]) -> [Vec<f32>; 6] {
    let col = |f: &dyn Fn(&Aabb) -> f32| boxes.iter().map(f).collect::<Vec<f32>>();
    [col(&|b| b.min.x), col(&|b| b.min.y), col(&|b| b.min.z), col(&|b| b.max.x), col(&|b| b.max.y), col(&|b| b.max.z)]
}

fn same_entry(a: Option<f32>, b: Option<f32>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x.to_bits() == y.to_bits(),
        (None, None) => true,
        _ => false,
    }
}

/// One ray against `L::N` boxes: lanes and scalar agree exactly.
fn check_node<L: Lanes>(ray: &Ray, boxes: &[Aabb]) {
    let cols = columns(boxes);
    let t_max = ray.t_max;
    let (hit, tn) =
        TraversalRay::<L>::new(ray).test([&cols[0], &cols[1], &cols[2], &cols[3], &cols[4], &cols[5]], t_max);
    for (i, b) in boxes.iter().enumerate() {
        let lanes = hit.lane(i).then(|| tn.lane(i));
        let scalar = slab::twin_scalar(ray, t_max, b);
        assert!(
            same_entry(lanes, scalar),
            "{} lanes, lane {i}: {lanes:?} vs scalar {scalar:?}\nray {ray:?}\nbox {b:?}",
            L::N
        );
    }
}

/// One ray against a wide node built from `boxes`: `test_node` (the column offsets chosen
/// per ray) gives exactly what `test` gives on the same columns.
fn check_wide_node<L: Lanes, N: WideNode>(ray: &Ray, boxes: &[Aabb]) {
    let mut node = N::empty();
    for (i, b) in boxes.iter().enumerate() {
        node.set(i, b, i as u32);
    }
    let tr = TraversalRay::<L>::new(ray);
    let (hit, tn) = tr.test_node(&node, ray.t_max);
    let (want_hit, want_tn) = tr.test(node.columns(), ray.t_max);
    assert_eq!(hit, want_hit.bitmask(), "{} lanes\nray {ray:?}\nboxes {boxes:?}", L::N);
    for i in (0..L::N).filter(|&i| hit & (1 << i) != 0) {
        assert_eq!(tn.lane(i).to_bits(), want_tn.lane(i).to_bits(), "{} lanes, lane {i}\nray {ray:?}", L::N);
    }
}

fn check_widths(ray: &Ray, boxes: &[Aabb; 8]) {
    check_node::<F32x8>(ray, boxes);
    check_node::<F32x4>(ray, &boxes[..4]);
    check_node::<F32x4>(ray, &boxes[4..]);
    check_node::<f32>(ray, &boxes[..1]);
    check_wide_node::<F32x8, Node8>(ray, boxes);
    check_wide_node::<F32x4, Node4>(ray, &boxes[..4]);
}

/// The packet pop's bound in lanes equals the single-ray pop's, bit for bit, on special and
/// random times of every sign and scale.
#[test]
fn cull_bound_lanes_equal_scalar() {
    let mut rng = Rng::new(0xc011);
    let mut values: Vec<f32> = SPECIALS.iter().flat_map(|&v| [v, -v]).collect();
    values.extend([f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e-45, -f32::MAX]);
    values
        .extend((0..4000).map(|_| rng.range(-1.0, 1.0) * magnitude(&mut rng) * 10f32.powi(rng.below(60) as i32 - 30)));
    for chunk in values.chunks(8) {
        let mut t = [0.0f32; 8];
        t[..chunk.len()].copy_from_slice(chunk);
        let mut got = [0.0f32; 8];
        slab::cull_bound_lanes(F32x8::load(&t)).store(&mut got);
        for (i, (&x, &g)) in t.iter().zip(&got).enumerate() {
            let want = slab::cull_bound(x);
            assert!(
                g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                "lane {i}: {x:e} -> {g:e} != {want:e}"
            );
        }
    }
}

#[test]
fn traversal_slab_lanes_equal_scalar_on_random_input() {
    let mut rng = Rng::new(0x51ab);
    for _ in 0..n_cases() {
        let mut boxes: [Aabb; 8] = std::array::from_fn(|_| random_box(&mut rng));
        let target = boxes[rng.below(8) as usize];
        let mut ray = random_ray(&mut rng, &target);
        inject(&mut rng, &mut ray, &mut boxes);
        check_widths(&ray, &boxes);
    }
}

#[test]
fn traversal_slab_lanes_equal_scalar_on_edges() {
    let boxes = [
        Aabb::new(-Vec3::ONE, Vec3::ONE),
        Aabb::new(Vec3::new(-1.0, 0.0, -1.0), Vec3::new(1.0, 0.0, 1.0)),
        Aabb::new(Vec3::ZERO, Vec3::ZERO),
        Aabb::new(Vec3::INFINITY, Vec3::NEG_INFINITY),
        Aabb::new(Vec3::splat(1e30), Vec3::splat(2e30)),
        Aabb::new(Vec3::splat(-1e-30), Vec3::splat(1e-30)),
        Aabb::new(Vec3::new(1.0, -1.0, -1.0), Vec3::new(3.0, 1.0, 1.0)),
        Aabb::new(Vec3::new(-3.0, -1.0, -1.0), Vec3::new(-1.0, 1.0, 1.0)),
    ];
    let zeros = [0.0f32, -0.0];
    let mut dirs = vec![Vec3::ONE, -Vec3::ONE, Vec3::new(1.0, -1.0, 0.0), Vec3::new(1e-30, 1.0, 0.0)];
    for a in zeros {
        for b in zeros {
            dirs.extend([Vec3::new(1.0, a, b), Vec3::new(-1.0, a, b), Vec3::new(a, 1.0, b), Vec3::new(a, b, -1.0)]);
        }
    }
    let origins = [
        Vec3::ZERO,
        Vec3::ONE,
        -Vec3::ONE,
        Vec3::new(-1.0, 0.5, 0.0),
        Vec3::new(-5.0, 0.0, 0.0),
        Vec3::new(1.0, 1.0, 5.0),
    ];
    let intervals = [(0.0, f32::INFINITY), (0.0, 1.0), (-1.0, 0.5), (-3.0, -1.0), (1.0, 1.0), (2.0, 1.0)];
    for o in origins {
        for d in &dirs {
            for (t0, t1) in intervals {
                check_widths(&Ray::with_interval(o, *d, t0, t1), &boxes);
            }
        }
    }
}

#[test]
fn packet_ray_tests_equal_scalar() {
    // `PacketRay::test` (near/far per lane) on random packets, and `test_ordered` (near/far
    // picked once for the octant) on packets whose directions share lane 0's signs, each
    // equal to the scalar twin lane by lane.
    let mut rng = Rng::new(0x0c7a);
    let mut ordered = 0;
    for case in 0..n_cases() / 8 {
        let boxes: [Aabb; 8] = std::array::from_fn(|_| random_box(&mut rng));
        let mut rays: [Ray; 8] = std::array::from_fn(|i| random_ray(&mut rng, &boxes[i]));
        let mut b2 = boxes;
        for r in &mut rays {
            inject(&mut rng, r, &mut b2);
        }
        let one_octant = case % 2 == 0;
        if one_octant {
            let signs = rays[0].dir;
            for r in &mut rays {
                r.dir = r.dir.copysign(signs);
            }
        }
        let v3 = |f: &dyn Fn(usize) -> Vec3| {
            let p: [Vec3; 8] = std::array::from_fn(f);
            Vec3x::<F32x8>::new(
                F32x8::load(&p.map(|v| v.x)),
                F32x8::load(&p.map(|v| v.y)),
                F32x8::load(&p.map(|v| v.z)),
            )
        };
        let all = <F32x8 as Lanes>::Mask::splat(true);
        let t = |f: &dyn Fn(&Ray) -> f32| F32x8::load(&rays.map(|r| f(&r)));
        let packet =
            RayPacket::new(v3(&|i| rays[i].origin), v3(&|i| rays[i].dir), t(&|r| r.t_min), t(&|r| r.t_max), all);
        let pr = PacketRay::new(&packet);
        let t_max = t(&|r| r.t_max);
        let (bmin, bmax) = (v3(&|i| b2[i].min), v3(&|i| b2[i].max));
        let mut results = vec![pr.test(bmin, bmax, t_max)];
        // The octant of the lanes with finite directions (the packets scenes trace: a NaN has
        // no side, and an infinite component's `1/d` is a zero).
        let numbers = (0..8).filter(|&i| rays[i].dir.is_finite()).fold(0u32, |m, i| m | 1 << i);
        let octant = pr.octant(numbers);
        if one_octant {
            assert!(octant.is_some(), "case {case}: shared signs are one octant");
        }
        if let Some(neg) = octant {
            let pick = |n: bool, lo: Vec3x<F32x8>, hi: Vec3x<F32x8>, a: usize| {
                let (l, h) = ([lo.x, lo.y, lo.z][a], [hi.x, hi.y, hi.z][a]);
                if n { (h, l) } else { (l, h) }
            };
            let (nx, fx) = pick(neg[0], bmin, bmax, 0);
            let (ny, fy) = pick(neg[1], bmin, bmax, 1);
            let (nz, fz) = pick(neg[2], bmin, bmax, 2);
            results.push(pr.test_ordered(Vec3x::new(nx, ny, nz), Vec3x::new(fx, fy, fz), t_max));
            ordered += 1;
        }
        for (k, (hit, tn)) in results.into_iter().enumerate() {
            let lanes = if k == 0 { 0xff } else { numbers };
            for i in (0..8).filter(|&i| lanes >> i & 1 != 0) {
                let l = hit.lane(i).then(|| tn.lane(i));
                let s = slab::twin_scalar(&rays[i], rays[i].t_max, &b2[i]);
                assert!(
                    same_entry(l, s),
                    "case {case} test {k} lane {i}: {l:?} vs {s:?}\nray {:?}\nbox {:?}",
                    rays[i],
                    b2[i]
                );
            }
        }
    }
    assert!(ordered >= n_cases() / 16, "too few one-octant packets: {ordered}");
}

#[test]
fn traversal_slab_never_misses_a_box_the_exact_slab_test_hits() {
    // Widening only adds: every box the plain slab test (kernel::ray_aabb) finds within the
    // ray's interval is found by the traversal tests (the SIMD twin and the scalar backend's
    // textbook form), entered no later. The interval is also
    // pinched to the box's own entry or exit time (the tightest cases rounding could lose),
    // and the ray moved back so that the box lies behind its origin (negative times).
    let mut rng = Rng::new(0xc0de);
    let mut hits = 0;
    for _ in 0..n_cases() {
        let b = random_box(&mut rng);
        let ray = random_ray(&mut rng, &b);
        let Some((t0, t1)) = ray_aabb::intersect_scalar(&ray, &b) else { continue };
        let behind = Ray::with_interval(ray.origin + ray.dir * (t1.min(1e3) + 1.0), ray.dir, -1e4, 0.0);
        let mut variants = vec![ray, Ray { t_max: t0, ..ray }, behind];
        if t1.is_finite() {
            variants.push(Ray { t_min: t1, ..ray });
        }
        for r in variants {
            let Some((e0, _)) = ray_aabb::intersect_scalar(&r, &b) else { continue };
            hits += 1;
            for (lo, hi) in [(r.t_min, e0), (e0, r.t_max)] {
                let r = Ray { t_min: lo, t_max: hi, ..r };
                if lo > hi || ray_aabb::intersect_scalar(&r, &b).is_none() {
                    continue;
                }
                let t = slab::twin_scalar(&r, r.t_max, &b);
                assert!(t.is_some_and(|t| t <= e0.max(lo)), "ray {r:?} box {b:?}: exact entry {e0}, traversal {t:?}");
                let t = slab::textbook_scalar(&r, r.t_max, &b);
                assert!(t.is_some_and(|t| t <= e0.max(lo)), "ray {r:?} box {b:?}: exact entry {e0}, textbook {t:?}");
            }
        }
    }
    assert!(hits > n_cases() / 10, "too few hits to mean anything: {hits}");
}

// ---------------------------------------------------------------------------------------
// Child order.

fn random_times(rng: &mut Rng) -> [f32; 8] {
    let base = rng.log_uniform(-3.0, 3.0);
    std::array::from_fn(|_| match rng.below(12) {
        0 => base,                                                  // exact ties
        1 => f32::from_bits(base.to_bits() + rng.below(20) as u32), // within a few ulps
        2 => 0.0,
        3 => -0.0,
        4 => -rng.range(0.0, 2.0),
        5 => SPECIALS[rng.below(SPECIALS.len() as u64) as usize],
        _ => rng.log_uniform(-3.0, 3.0),
    })
}

/// A child order of `N` lanes (the signature of `order8`, `order4` and `order_scalar`).
type Order<const N: usize> = fn(&[f32; N], &[u32; N], u32, &mut [StackEntry; 8]) -> u32;

fn check_order(t: &[f32; 8], kids: &[u32; 8], hits: u32) {
    check_order_with::<8>(child_order::order8, t, kids, hits);
}

/// `order` against [`child_order::order_scalar`], bit for bit on the hits' entries, and the
/// contract itself.
fn check_order_with<const N: usize>(order: Order<N>, t: &[f32; N], kids: &[u32; N], hits: u32) {
    let k = hits.count_ones() as usize;
    let (mut a, mut b) = ([StackEntry::default(); 8], [StackEntry::default(); 8]);
    let near_lanes = order(t, kids, hits, &mut a);
    let near = child_order::order_scalar(t, kids, hits, &mut b);
    let bits = |e: &[StackEntry]| e.iter().map(|e| (e.child, e.t.to_bits())).collect::<Vec<_>>();
    assert_eq!((near_lanes, bits(&a[..k])), (near, bits(&b[..k])), "t {t:?} hits {hits:#b}");
    // The contract itself: the hit children, each once, keys descending, nearest last.
    assert_eq!(near, b[k - 1].child);
    let lane_of = |c: u32| kids.iter().position(|&x| x == c).unwrap();
    let keys: Vec<u32> = b[..k].iter().map(|e| child_order::key(e.t, lane_of(e.child))).collect();
    assert!(keys.windows(2).all(|w| w[0] > w[1]), "keys not descending: {keys:?}");
    let mut lanes: Vec<usize> = b[..k].iter().map(|e| lane_of(e.child)).collect();
    lanes.sort_unstable();
    let expected: Vec<usize> = (0..N).filter(|i| hits >> i & 1 != 0).collect();
    assert_eq!(lanes, expected);
    for e in &b[..k] {
        assert_eq!(e.t.to_bits(), t[lane_of(e.child)].to_bits(), "entry times are kept exactly");
    }
}

/// The 8-lane network against its scalar twin. In a build without AVX2, `order8` *is* the
/// scalar twin, so the comparison would be with itself: the test is ignored there (and shows
/// as ignored), and the contract checks run in `child_order_for_eight_lanes_sorts_the_hits`.
#[test]
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "avx2")),
    ignore = "built without AVX2: order8 is the scalar twin itself"
)]
fn child_order_avx2_network_equals_scalar_twin() {
    assert_eq!(child_order::ORDER8_IMPL, "avx2 sorting network");
    let mut rng = Rng::new(0x0de7);
    let kids: [u32; 8] = std::array::from_fn(|i| 100 + i as u32 * 7);
    for _ in 0..n_cases() {
        let t = random_times(&mut rng);
        let hits = (rng.below(255) + 1) as u32;
        check_order(&t, &kids, hits);
    }
    // Every mask with all-equal, all-zero and strictly ordered times.
    for hits in 1..=255u32 {
        check_order(&[2.5; 8], &kids, hits);
        check_order(&[0.0; 8], &kids, hits);
        check_order(&std::array::from_fn(|i| 8.0 - i as f32), &kids, hits);
        check_order(&std::array::from_fn(|i| 1.0 + i as f32), &kids, hits);
    }
}

/// The native build (`.cargo/config.toml` sets `target-cpu=native`) must really use the AVX2
/// network on a CPU that has AVX2; the portable CI build sets `LANECAST_PORTABLE=1`.
#[test]
fn native_build_uses_the_avx2_network() {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::env::var_os("LANECAST_PORTABLE").is_none() {
        assert_eq!(child_order::ORDER8_IMPL, "avx2 sorting network", "native build without AVX2");
    }
    println!("order8 compiled to: {}", child_order::ORDER8_IMPL);
}

#[test]
fn child_order_for_eight_lanes_sorts_the_hits() {
    // The contract alone (no twin), for every build.
    let mut out = [StackEntry::default(); 8];
    let t = [3.0, 1.0, 2.0, 0.5, 9.0, -1.0, 7.0, 4.0];
    let kids: [u32; 8] = std::array::from_fn(|i| 10 + i as u32);
    // Lane 3 is not hit; lane 5's negative entry time counts as 0, the nearest.
    let near = child_order::order8(&t, &kids, 0b1111_0111, &mut out);
    assert_eq!(near, 15);
    assert_eq!(out[..7].iter().map(|e| e.child).collect::<Vec<_>>(), [14, 16, 17, 10, 12, 11, 15]);
}

/// The 4-lane network and the dispatch by width against the scalar twin, in every build:
/// seeded random entry times with ties, near ties, zeros of both signs, negative and special
/// values (NaN, infinities, subnormals), and every hit mask with equal, zero and ordered
/// times.
#[test]
fn child_order_four_lane_network_equals_scalar_twin() {
    let mut rng = Rng::new(0x04de);
    let kids: [u32; 8] = std::array::from_fn(|i| 100 + i as u32 * 7);
    let kids4 = [kids[0], kids[1], kids[2], kids[3]];
    let four = |t: &[f32; 8]| [t[0], t[1], t[2], t[3]];
    // `order` for 4-wide nodes takes the entry times from the first 4 of its 8 lanes.
    let order_of_4: Order<4> = |t, kids, hits, out| {
        let t8 = [t[0], t[1], t[2], t[3], 7.0, 7.0, 7.0, 7.0];
        child_order::order(&t8, kids, hits, out)
    };
    for _ in 0..n_cases() {
        let t = random_times(&mut rng);
        let hits = (rng.below(15) + 1) as u32;
        check_order_with::<4>(child_order::order4, &four(&t), &kids4, hits);
        check_order_with::<4>(order_of_4, &four(&t), &kids4, hits);
    }
    let patterns: [[f32; 4]; 4] = [[2.5; 4], [0.0; 4], [4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0]];
    for t in &patterns {
        for hits in 1..=15u32 {
            check_order_with::<4>(child_order::order4, t, &kids4, hits);
        }
    }
}

#[test]
fn child_order_for_four_lanes_sorts_the_hits() {
    let scalar: Order<4> = |t, kids, hits, out| child_order::order_scalar(t, kids, hits, out);
    for order in [scalar, child_order::order4] {
        let mut out = [StackEntry::default(); 8];
        // Lane 3 is not hit.
        let near = order(&[3.0, 1.0, 2.0, 0.5], &[7, 8, 9, 10], 0b0111, &mut out);
        assert_eq!(near, 8);
        assert_eq!(out[..3].iter().map(|e| e.child).collect::<Vec<_>>(), [7, 9, 8]);
        // Equal times go by lane (the larger lane farther); a negative time counts as 0.
        let near = order(&[1.0, -2.0, 1.0, 1.0], &[7, 8, 9, 10], 0b1111, &mut out);
        assert_eq!(near, 8);
        assert_eq!(out[..4].iter().map(|e| e.child).collect::<Vec<_>>(), [10, 9, 7, 8]);
    }
}

/// [`child_order::order16`] (or the twin itself, `same`) against
/// [`child_order::order_scalar16`], bit for bit on the hits' entries, and the contract.
fn check_order16(t: &[f32; 16], kids: &[u32; 16], hits: u32) {
    let k = hits.count_ones() as usize;
    let (mut a, mut b) = ([StackEntry::default(); 16], [StackEntry::default(); 16]);
    let near_lanes = child_order::order16(t, kids, hits, &mut a);
    let near = child_order::order_scalar16(t, kids, hits, &mut b);
    let bits = |e: &[StackEntry]| e.iter().map(|e| (e.child, e.t.to_bits())).collect::<Vec<_>>();
    assert_eq!((near_lanes, bits(&a[..k])), (near, bits(&b[..k])), "t {t:?} hits {hits:#b}");
    assert_eq!(near, b[k - 1].child);
    let lane_of = |c: u32| kids.iter().position(|&x| x == c).unwrap();
    let keys: Vec<u32> = b[..k].iter().map(|e| child_order::key16(e.t, lane_of(e.child))).collect();
    assert!(keys.windows(2).all(|w| w[0] > w[1]), "keys not descending: {keys:?}");
    let mut lanes: Vec<usize> = b[..k].iter().map(|e| lane_of(e.child)).collect();
    lanes.sort_unstable();
    assert_eq!(lanes, (0..16).filter(|i| hits >> i & 1 != 0).collect::<Vec<_>>());
    for e in &b[..k] {
        assert_eq!(e.t.to_bits(), t[lane_of(e.child)].to_bits(), "entry times are kept exactly");
    }
}

/// The 16-lane network against its scalar twin: seeded random entry times with ties, near
/// ties, zeros of both signs, negative and special values, random hit masks, and single,
/// paired and full masks, and masks of 4, 5, 8 and 9 hits (the limits of its 4- and 8-lane
/// networks), with equal, zero and ordered times. Without AVX-512 `order16` is the
/// twin itself: ignored there (the contract runs in `child_order_for_sixteen_lanes_sorts_the_hits`).
#[test]
#[cfg_attr(
    not(all(target_arch = "x86_64", target_feature = "avx512f")),
    ignore = "built without AVX-512: order16 is the scalar twin itself"
)]
fn child_order_avx512_network_equals_scalar_twin() {
    assert_eq!(child_order::ORDER16_IMPL, "avx512 sorting network");
    let mut rng = Rng::new(0x16de);
    let kids: [u32; 16] = std::array::from_fn(|i| 100 + i as u32 * 7);
    for _ in 0..n_cases() {
        let (a, b) = (random_times(&mut rng), random_times(&mut rng));
        let t: [f32; 16] = std::array::from_fn(|i| if i < 8 { a[i] } else { b[i - 8] });
        let hits = (rng.below(0xffff) + 1) as u32;
        check_order16(&t, &kids, hits);
    }
    let patterns: [[f32; 16]; 4] =
        [[2.5; 16], [0.0; 16], std::array::from_fn(|i| 16.0 - i as f32), std::array::from_fn(|i| 1.0 + i as f32)];
    for t in &patterns {
        for a in 0..16 {
            for b in a..16 {
                check_order16(t, &kids, 1 << a | 1 << b);
            }
        }
        // Full and half masks, and the counts on either side of the 4- and 8-lane networks'
        // limits, in low, high and spread lanes.
        for hits in [0xffff, 0x5555, 0x000f, 0xf000, 0x1111, 0x001f, 0x00ff, 0xff00, 0x01ff, 0xff80, 0x5557] {
            check_order16(t, &kids, hits);
        }
    }
}

/// The native build must use the AVX-512 network on a CPU that has AVX-512F.
#[test]
fn native_build_uses_the_avx512_network() {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx512f") && std::env::var_os("LANECAST_PORTABLE").is_none() {
        assert_eq!(child_order::ORDER16_IMPL, "avx512 sorting network", "native build without AVX-512");
    }
    println!("order16 compiled to: {}", child_order::ORDER16_IMPL);
}

#[test]
fn child_order_for_sixteen_lanes_sorts_the_hits() {
    // The contract alone, for both versions in every build: lane 3 is not hit, lane 5's
    // negative entry time counts as 0 (the nearest), equal times go by lane (the larger
    // lane farther).
    let t = [3.0, 1.0, 2.0, 0.5, 9.0, -1.0, 7.0, 4.0, 1.0, 8.0, 6.0, 5.0, 2.0, 11.0, 10.0, 12.0];
    let kids: [u32; 16] = std::array::from_fn(|i| 10 + i as u32);
    type Order16 = fn(&[f32; 16], &[u32; 16], u32, &mut [StackEntry; 16]) -> u32;
    for order in [child_order::order16 as Order16, child_order::order_scalar16] {
        let mut out = [StackEntry::default(); 16];
        let near = order(&t, &kids, 0xffff & !(1 << 3), &mut out);
        assert_eq!(near, 15);
        assert_eq!(
            out[..15].iter().map(|e| e.child).collect::<Vec<_>>(),
            [25, 23, 24, 14, 19, 16, 20, 21, 17, 10, 22, 12, 18, 11, 15]
        );
    }
}
