//! Every scene query of every backend against brute force, on seeded random scenes of
//! spheres, boxes, triangles and planes (1 to 20k primitives, including nasty ones: all at
//! one point, flat, coincident triangles, huge and tiny coordinates) with random rays, rays
//! along axes and rays exactly through vertices, edges and centres.
//!
//! * BVH query of backend B == brute force with B's kernels, exactly (same kernels, same tie
//!   rule), for closest hit; `occluded == intersect.is_some()`.
//! * Brute force with the lanes kernels vs the scalar reference: the same hit/miss except for
//!   kernel-boundary cases (counted, rare on random rays), `t` within tolerance.
//! * Packets == single rays; batches == single rays, identical for 1 and N threads.

use glam::Vec3;
use lanecast::kernel::{closest_point as cp, ray_aabb, ray_plane, ray_sphere, watertight};
use lanecast::prim::{Aabb, Plane, Sphere, Triangle};
use lanecast::rng::Rng;
use lanecast::scene::{Backend, CONTAINS_DIR, PacketScratch};
use lanecast::{
    F32x4, F32x8, Hit, HitKind, HitPacket, HitSoa, Lanes, Mask, Ray, RayPacket, RaySoa, Scene, SceneBuilder,
    TriangleTest,
};

const BACKENDS: [Backend; 4] = [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Style {
    Mixed,
    OnePoint,
    Flat,
    Coincident,
    Huge,
    Tiny,
}

struct Built {
    scene: Scene,
    /// Every primitive added, with its `[geom, prim]` (for the all-hits brute force).
    prims: Prims,
    /// Points worth aiming at: vertices, edge midpoints, centres.
    targets: Vec<Vec3>,
    bounds: Aabb,
}

#[derive(Default)]
struct Prims {
    tris: Vec<(Triangle, [u32; 2])>,
    spheres: Vec<(Sphere, [u32; 2])>,
    boxes: Vec<(Aabb, [u32; 2])>,
    planes: Vec<(Plane, [u32; 2])>,
}

fn random_scene(seed: u64, n: usize, style: Style) -> Built {
    let mut prims = Prims::default();
    let mut rng = Rng::new(seed);
    let (k, off) = match style {
        Style::Huge => (1e5, Vec3::splat(3e6)),
        Style::Tiny => (1e-5, Vec3::splat(2e-5)),
        _ => (1.0, Vec3::ZERO),
    };
    let at = |rng: &mut Rng| -> Vec3 {
        let p = match style {
            Style::OnePoint => Vec3::splat(0.5),
            Style::Flat => Vec3::new(rng.range(-10.0, 10.0), rng.range(-10.0, 10.0), 0.0),
            _ => rng.vec3(-10.0, 10.0),
        };
        p * k + off
    };
    let mut b = SceneBuilder::new();
    let mut targets = Vec::new();
    let mut left = n;
    while left > 0 {
        let m = (rng.below(left.min(200) as u64) as usize + 1).min(left);
        left -= m;
        match rng.below(4) {
            0 => {
                let s: Vec<Sphere> = (0..m)
                    .map(|_| {
                        let r = if style == Style::OnePoint { 0.5 * k } else { rng.range(0.05, 1.0) * k };
                        Sphere::new(at(&mut rng), r)
                    })
                    .collect();
                targets.extend(s.iter().map(|s| s.center));
                targets.extend(s.iter().map(|s| s.center + Vec3::X * s.radius));
                let g = b.add_spheres(&s).unwrap();
                prims.spheres.extend(s.iter().enumerate().map(|(i, s)| (*s, [g, i as u32])));
            }
            1 => {
                let bx: Vec<Aabb> = (0..m)
                    .map(|_| {
                        let c = at(&mut rng);
                        let mut h = rng.vec3(0.05, 1.0) * k;
                        if style == Style::Flat {
                            h.z = 0.0;
                        }
                        Aabb::new(c - h, c + h)
                    })
                    .collect();
                targets.extend(bx.iter().flat_map(|b| [b.min, b.max, b.center(), b.corner(3)]));
                let g = b.add_boxes(&bx).unwrap();
                prims.boxes.extend(bx.iter().enumerate().map(|(i, x)| (*x, [g, i as u32])));
            }
            _ => {
                let mut pos: Vec<[f32; 3]> = Vec::new();
                let mut idx: Vec<[u32; 3]> = Vec::new();
                for _ in 0..m {
                    let c = at(&mut rng);
                    let size = rng.range(0.1, 2.0) * k;
                    let mut v = [0; 3].map(|_| c + rng.unit_vec3() * size);
                    if style == Style::Flat {
                        for p in &mut v {
                            p.z = 0.0;
                        }
                    }
                    if style == Style::OnePoint {
                        v = [c, c + Vec3::X * k, c + Vec3::Y * k];
                    }
                    let base = pos.len() as u32;
                    pos.extend(v.map(|p| p.to_array()));
                    idx.push([base, base + 1, base + 2]);
                    if style == Style::Coincident || rng.f32() < 0.05 {
                        idx.push([base + 1, base + 2, base]); // the same triangle again
                    }
                    if rng.f32() < 0.03 {
                        idx.push([base, base, base + 1]); // degenerate: counted, not in the BVH
                    }
                    targets.extend([v[0], v[1], (v[0] + v[1]) * 0.5, (v[0] + v[1] + v[2]) / 3.0]);
                }
                let g = b.add_mesh(&pos, &idx).unwrap();
                let v = |i: u32| Vec3::from(pos[i as usize]);
                prims.tris.extend(
                    idx.iter().enumerate().map(|(i, t)| (Triangle::new(v(t[0]), v(t[1]), v(t[2])), [g, i as u32])),
                );
            }
        }
    }
    let planes = rng.below(3);
    for _ in 0..planes {
        let nrm = if rng.f32() < 0.5 { Vec3::Y } else { rng.unit_vec3() };
        let p = Plane::new(nrm, rng.range(-12.0, -10.0) * k);
        let g = b.add_plane(p).unwrap();
        prims.planes.push((p, [g, 0]));
    }
    let scene = b.build().unwrap();
    scene.validate().expect("BVH valid after build");
    let bounds = Aabb::new(Vec3::splat(-12.0) * k + off, Vec3::splat(12.0) * k + off);
    Built { scene, prims, targets, bounds }
}

fn random_ray(rng: &mut Rng, w: &Built) -> Ray {
    let size = w.bounds.max - w.bounds.min;
    let o = w.bounds.min + size * rng.vec3(0.0, 1.0);
    let u = rng.f32();
    let dir = if u < 0.3 && !w.targets.is_empty() {
        // exactly at a vertex, edge midpoint or centre
        w.targets[rng.below(w.targets.len() as u64) as usize] - o
    } else if u < 0.45 {
        let mut d = Vec3::ZERO;
        d[rng.below(3) as usize] = if rng.f32() < 0.5 { 1.0 } else { -1.0 };
        d
    } else {
        rng.unit_vec3()
    };
    let t_max =
        if rng.f32() < 0.2 { rng.range(0.1, 1.0) * size.length() / dir.length().max(1e-30) } else { f32::INFINITY };
    Ray::with_interval(o, dir, 0.0, t_max)
}

fn same(a: &Option<Hit>, b: &Option<Hit>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            x.t.to_bits() == y.t.to_bits()
                && (x.geom, x.prim) == (y.geom, y.prim)
                && x.u.to_bits() == y.u.to_bits()
                && x.v.to_bits() == y.v.to_bits()
                && x.normal == y.normal
        }
        _ => false,
    }
}

#[derive(Default, Debug)]
struct Tally {
    rays: usize,
    hits: usize,
    /// lanes kernels and scalar reference disagree on hit/miss (kernel boundary cases)
    flips: usize,
    /// different primitive reported at (nearly) the same t
    near_ties: usize,
}

fn check_scene(w: &Built, rays: &[Ray], tally: &mut Tally) {
    let s = &w.scene;
    let scale = (w.bounds.max - w.bounds.min).length();
    for ray in rays {
        tally.rays += 1;
        let reference = s.intersect_brute_force(ray);
        tally.hits += reference.is_some() as usize;
        for b in BACKENDS {
            let got = s.intersect_with(ray, b);
            let brute = s.intersect_brute_force_with(ray, b);
            assert!(same(&got, &brute), "{b:?}: BVH {got:?} != brute force {brute:?} for {ray:?}");
            assert_eq!(s.occluded_with(ray, b), got.is_some(), "{b:?}: occluded disagrees with intersect for {ray:?}");
            if b == Backend::Scalar {
                continue;
            }
            match (&reference, &got) {
                (Some(r), Some(g)) => {
                    let tol = 1e-5 * (scale / ray.dir.length() + r.t.abs()) * 4.0;
                    assert!((r.t - g.t).abs() <= tol, "{b:?}: t {} vs reference {} ({ray:?})", g.t, r.t);
                    if (r.geom, r.prim) != (g.geom, g.prim) {
                        tally.near_ties += 1;
                    }
                }
                (None, None) => {}
                _ => tally.flips += 1,
            }
        }
    }
}

/// A hit as the all-hits comparison sees it: t, ids, u, v (bit patterns), kind.
type Rec = (u32, [u32; 2], u32, u32, HitKind);

/// Every hit of `ray` by brute force over every primitive added, with the scalar reference
/// kernels (the watertight triangle test), sorted as `intersect_all` promises.
fn all_hits_brute_force(w: &Built, ray: &Ray) -> Vec<Rec> {
    let mut out: Vec<(f32, [u32; 2], f32, f32, HitKind)> = Vec::new();
    for (t, ids) in &w.prims.tris {
        if let Some(h) = watertight::intersect_scalar(ray, t) {
            out.push((h.t, *ids, h.u, h.v, HitKind::Triangle));
        }
    }
    for (sp, ids) in &w.prims.spheres {
        if let Some(t) = ray_sphere::intersect_scalar(ray, sp) {
            out.push((t, *ids, 0.0, 0.0, HitKind::Sphere));
        }
    }
    for (bx, ids) in &w.prims.boxes {
        if let Some((t, _)) = ray_aabb::intersect_scalar(ray, bx) {
            out.push((t, *ids, 0.0, 0.0, HitKind::Box));
        }
    }
    for (pl, ids) in &w.prims.planes {
        if let Some(t) = ray_plane::intersect_scalar(ray, pl) {
            out.push((t, *ids, 0.0, 0.0, HitKind::Plane));
        }
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    out.into_iter().map(|(t, ids, u, v, k)| (t.to_bits(), ids, u.to_bits(), v.to_bits(), k)).collect()
}

/// Inside by brute force: in a sphere or box (its kernel hits at t = 0 on the interval
/// [0, 0]), or an odd number of triangle crossings along `CONTAINS_DIR`.
fn contains_brute_force(w: &Built, p: Vec3) -> bool {
    if !p.is_finite() {
        return false;
    }
    let here = Ray::with_interval(p, CONTAINS_DIR, 0.0, 0.0);
    if w.prims.spheres.iter().any(|(s, _)| ray_sphere::intersect_scalar(&here, s).is_some())
        || w.prims.boxes.iter().any(|(b, _)| ray_aabb::intersect_scalar(&here, b).is_some())
    {
        return true;
    }
    let ray = Ray::new(p, CONTAINS_DIR);
    w.prims.tris.iter().filter(|(t, _)| watertight::intersect_scalar(&ray, t).is_some()).count() % 2 == 1
}

/// The closest point of `p` by brute force over every primitive added, with the scalar
/// reference kernels: `(distance² , [geom, prim], point)`, the smallest distance², ties to
/// the smaller ids.
fn closest_brute_force(w: &Built, p: Vec3) -> Option<(f32, [u32; 2], Vec3)> {
    let mut all: Vec<(f32, [u32; 2], Vec3)> = Vec::new();
    let mut offer = |q: Vec3, ids: [u32; 2]| all.push((cp::distance_squared_scalar(p, q), ids, q));
    for (t, ids) in &w.prims.tris {
        offer(cp::triangle_scalar(p, t).0, *ids);
    }
    for (sp, ids) in &w.prims.spheres {
        offer(cp::sphere_scalar(p, sp).0, *ids);
    }
    for (bx, ids) in &w.prims.boxes {
        offer(cp::aabb_scalar(p, bx).0, *ids);
    }
    for (pl, ids) in &w.prims.planes {
        offer(cp::plane_scalar(p, pl), *ids);
    }
    all.into_iter().filter(|c| c.0.is_finite()).min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
}

/// `intersect_all`, `count_intersections`, `contains` and `closest_point` of every backend
/// against brute force, exactly.
fn check_all_hits(w: &Built, rays: &[Ray]) {
    let s = &w.scene;
    for ray in rays {
        let want = all_hits_brute_force(w, ray);
        for b in BACKENDS {
            let got: Vec<Rec> = s
                .intersect_all_with(ray, b)
                .iter()
                .map(|h| (h.t.to_bits(), [h.geom, h.prim], h.u.to_bits(), h.v.to_bits(), h.kind))
                .collect();
            assert_eq!(got, want, "{b:?}: intersect_all differs from brute force for {ray:?}");
            assert_eq!(s.count_intersections_with(ray, b) as usize, want.len(), "{b:?}: count for {ray:?}");
        }
        for p in [ray.origin, ray.at(0.5)] {
            let want = contains_brute_force(w, p);
            let near = closest_brute_force(w, p);
            for b in BACKENDS {
                assert_eq!(s.contains_with(p, b), want, "{b:?}: contains({p})");
                let got = s.closest_point_with(p, b).map(|c| (c.distance.to_bits(), [c.geom, c.prim], c.point));
                let want = near.map(|(d2, ids, q)| (d2.sqrt().to_bits(), ids, q));
                assert_eq!(got, want, "{b:?}: closest_point({p})");
            }
        }
    }
    // The batch forms agree with the single-ray ones.
    let soa = RaySoa::from_rays(rays);
    let lists = s.intersect_all_batch(&soa);
    assert_eq!(lists.rays(), rays.len());
    let mut counts = vec![0u32; rays.len()];
    s.count_intersections_batch(&soa, &mut counts);
    for (i, ray) in rays.iter().enumerate() {
        let one = s.intersect_all(ray);
        assert_eq!(lists.of(i), one, "batch list of ray {i}");
        assert!(
            lists.ray_ids[lists.ray_splits[i] as usize..lists.ray_splits[i + 1] as usize]
                .iter()
                .all(|&r| r == i as u64)
        );
        assert_eq!(counts[i] as usize, one.len());
    }
    let points: Vec<Vec3> = rays.iter().map(|r| r.origin).collect();
    let mut inside = vec![false; points.len()];
    s.contains_batch(&points, &mut inside);
    for (p, got) in points.iter().zip(&inside) {
        assert_eq!(*got, s.contains(*p));
    }
}

fn check_packets_and_batches(w: &Built, rays: &[Ray]) {
    let s = &w.scene;
    let mut scratch = PacketScratch::default();
    /// Every requested lane is written (a hit, or the miss record for an invalid ray),
    /// unrequested lanes keep what they held, and each lane equals the single-ray query of
    /// the same backend. The packet starts out filled with a fake hit, so a lane the query
    /// forgets to write is caught, and so is a query that does nothing.
    fn packets<L: Lanes>(s: &Scene, rays: &[Ray], b: Backend, scratch: &mut PacketScratch) {
        let sentinel = Hit {
            t: 0.5,
            geom: 12345,
            prim: 6789,
            u: 0.5,
            v: 0.25,
            normal: Vec3::ONE,
            kind: lanecast::HitKind::Sphere,
            inst: 77,
        };
        // Every lane requested (a full packet starts from misses written whole), and lane 1
        // left out of the mask: it must come back untouched.
        for (chunk, skip_1) in rays.chunks(L::N).flat_map(|c| [(c, false), (c, true)]) {
            let mask = if skip_1 { L::Mask::from_bitmask(!0b10) } else { L::Mask::splat(true) };
            let pk = RayPacket::<L>::from_rays(chunk).unwrap().with_mask(mask);
            let mut out = HitPacket::<L>::default();
            for i in 0..L::N {
                out.set_lane(i, &sentinel);
            }
            s.intersect_packet_with(&pk, &mut out, scratch, b);
            let occluded = s.occluded_packet_with(&pk, scratch, b).bitmask();
            for i in 0..L::N {
                let got = out.lane(i);
                if i >= chunk.len() || (skip_1 && i == 1 && L::N > 1) {
                    assert_eq!(got, sentinel, "{} {b:?}: unrequested lane {i} written", L::NAME);
                    assert_eq!(occluded >> i & 1, 0, "{} {b:?}: unrequested lane {i} occluded", L::NAME);
                    continue;
                }
                let r = &chunk[i];
                let want = s.intersect_with(r, b).unwrap_or(Hit::MISS);
                assert!(same(&Some(got), &Some(want)), "packet {} {b:?} lane {i}: {got:?} != single {want:?}", L::NAME);
                assert_eq!(occluded >> i & 1 == 1, s.occluded_with(r, b), "{} {b:?} lane {i}: occluded", L::NAME);
            }
        }
    }
    // Random rays mix octants, so wide packets trace their lanes one at a time; the same rays
    // turned into one octant traverse together.
    let one_octant: Vec<Ray> = rays.iter().map(|r| Ray { dir: r.dir.abs(), ..*r }).collect();
    for b in BACKENDS {
        for set in [rays, &one_octant[..]] {
            packets::<F32x4>(s, set, b, &mut scratch);
            packets::<F32x8>(s, set, b, &mut scratch);
        }
    }

    let soa = RaySoa::from_rays(rays);
    for b in BACKENDS {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let mut hits = HitSoa::default();
                s.intersect_batch_with(&soa, &mut hits, b);
                let mut occ = vec![false; rays.len()];
                s.occluded_batch_with(&soa, &mut occ, b);
                (hits, occ)
            })
        };
        let (h1, o1) = run(1);
        let (h3, o3) = run(3);
        assert_eq!(o1, o3);
        for (i, r) in rays.iter().enumerate() {
            let single = s.intersect_with(r, b).unwrap_or(Hit::MISS);
            assert!(same(&Some(h1.get(i)), &Some(single)), "batch {b:?} ray {i}");
            assert!(same(&Some(h3.get(i)), &Some(single)), "batch {b:?} ray {i}, 3 threads");
            assert_eq!(o1[i], s.occluded_with(r, b));
        }
    }
    // Line of sight between pairs of targets.
    let n = w.targets.len().min(200);
    let from: Vec<Vec3> = w.targets[..n].to_vec();
    let to: Vec<Vec3> = w.targets[..n].iter().rev().copied().collect();
    let vis = s.line_of_sight(&from, &to);
    for i in 0..n {
        assert_eq!(vis[i], !s.occluded(&Scene::los_ray(from[i], to[i])));
    }
}

fn run_style(style: Style, sizes: &[usize], rays_per_scene: usize) -> Tally {
    let mut tally = Tally::default();
    for (k, &n) in sizes.iter().enumerate() {
        let w = random_scene(1000 + k as u64 + 100 * style as u64, n, style);
        let mut rng = Rng::new(7 + k as u64);
        let rays: Vec<Ray> = (0..rays_per_scene).map(|_| random_ray(&mut rng, &w)).collect();
        check_scene(&w, &rays, &mut tally);
        check_packets_and_batches(&w, &rays[..rays.len().min(96)]);
        check_all_hits(&w, &rays[..rays.len().min(64)]);
    }
    eprintln!("{style:?}: {tally:?}");
    tally
}

fn rays_per_scene() -> usize {
    if cfg!(debug_assertions) { 40 } else { 400 }
}

#[test]
fn mixed_scenes_of_every_size() {
    let t = run_style(Style::Mixed, &[1, 2, 7, 64, 1000, 20_000], rays_per_scene());
    assert!(t.hits > t.rays / 10, "too few hits for a meaningful test: {t:?}");
    // The README promises the same hit/miss and ids from every backend: measured exact (0 of
    // ~10^6 rays differ), so any difference fails.
    assert!(t.flips == 0 && t.near_ties == 0, "backends disagree on hit/miss or ids: {t:?}");
}

#[test]
fn nasty_scenes() {
    for style in [Style::OnePoint, Style::Flat, Style::Coincident, Style::Huge, Style::Tiny] {
        let t = run_style(style, &[1, 50, 3000], rays_per_scene());
        assert!(t.hits > 0, "{style:?}: no hits at all");
        assert!(t.flips == 0 && t.near_ties == 0, "{style:?}: backends disagree on hit/miss or ids: {t:?}");
    }
}

#[test]
fn invalid_rays_miss_everywhere() {
    let w = random_scene(5, 500, Style::Mixed);
    let o = Vec3::ZERO;
    for ray in [
        Ray::new(o, Vec3::ZERO),
        Ray::new(o, Vec3::new(f32::NAN, 1.0, 0.0)),
        Ray::new(Vec3::splat(f32::INFINITY), Vec3::X),
        Ray::with_interval(o, Vec3::X, 1.0, 0.0),
    ] {
        for b in BACKENDS {
            assert!(w.scene.intersect_with(&ray, b).is_none());
            assert!(!w.scene.occluded_with(&ray, b));
        }
        // A reused packet still holding hits: every requested lane must become a miss.
        let stale = w.scene.intersect(&Ray::new(Vec3::new(0.0, 0.0, -50.0), Vec3::Z)).unwrap_or(Hit {
            t: 1.0,
            geom: 0,
            prim: 0,
            u: 0.0,
            v: 0.0,
            normal: Vec3::Z,
            kind: lanecast::HitKind::Box,
            inst: 3,
        });
        let mut scratch = PacketScratch::default();
        for b in BACKENDS {
            let mut out = HitPacket::<F32x8>::default();
            for i in 0..8 {
                out.set_lane(i, &stale);
            }
            let pk = RayPacket::from_rays(&[ray; 8]).unwrap();
            w.scene.intersect_packet_with(&pk, &mut out, &mut scratch, b);
            for i in 0..8 {
                assert_eq!(out.lane(i), Hit::MISS, "{b:?} lane {i}");
            }
            assert!(w.scene.occluded_packet_with(&pk, &mut scratch, b).none());
        }
    }
}

#[test]
fn empty_scene_misses() {
    let s = SceneBuilder::new().build().unwrap();
    s.validate().unwrap();
    let r = Ray::new(Vec3::ZERO, Vec3::X);
    for b in BACKENDS {
        assert!(s.intersect_with(&r, b).is_none());
    }
}

#[test]
fn bad_shapes_are_typed_errors() {
    let mut b = SceneBuilder::new();
    assert!(b.add_sphere(Sphere::new(Vec3::ZERO, -1.0)).is_err());
    assert!(b.add_box(Aabb::new(Vec3::ONE, Vec3::ZERO)).is_err());
    assert!(b.add_plane(Plane::new(Vec3::ZERO, 0.0)).is_err());
    assert!(b.add_mesh(&[[0.0; 3]], &[[0, 1, 2]]).is_err());
    assert!(b.add_mesh(&[[f32::NAN, 0.0, 0.0]], &[]).is_err());
    let id = b.add_triangle(Triangle::new(Vec3::ZERO, Vec3::ZERO, Vec3::X)).unwrap();
    assert_eq!(id, 0, "failed adds do not use up ids");
    // The watertight default keeps degenerate triangles in the tree (it resolves them
    // exactly); Möller–Trumbore leaves them out. Both count them.
    let s = b.clone().build().unwrap();
    assert_eq!((s.stats().degenerate, s.stats().triangles), (1, 1));
    let s = b.triangle_test(TriangleTest::MollerTrumbore).build().unwrap();
    assert_eq!((s.stats().degenerate, s.stats().triangles), (1, 0));
}

/// The shipped bunny mesh as a scene, and its camera's 24 × 24 primary rays.
#[cfg(feature = "cli")]
fn bunny_and_camera_rays() -> (Scene, RaySoa) {
    let mut b = SceneBuilder::new();
    b.add_mesh_file(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/bunny.ply"))).unwrap();
    let cam =
        lanecast::camera::Camera::new(Vec3::new(0.0883, 0.1852, 0.2988), Vec3::new(-0.0168, 0.1102, -0.0015), 45.0)
            .with_size(24, 24);
    (b.build().unwrap(), cam.rays())
}

/// The shipped bunny mesh: sampled camera and incoherent rays, every backend against brute
/// force with its own kernels (exactly) and against the scalar reference.
#[test]
#[cfg(feature = "cli")]
fn bunny_mesh_against_brute_force() {
    let (scene, primary) = bunny_and_camera_rays();
    scene.validate().unwrap();
    let n = if cfg!(debug_assertions) { 20 } else { 200 };
    let incoherent = lanecast::workload::incoherent(&scene.bounds(), n, 5);
    let rays: Vec<Ray> = (0..primary.len()).map(|i| primary.ray(i)).chain((0..n).map(|i| incoherent.ray(i))).collect();
    let bounds = scene.bounds();
    let w = Built { scene, prims: Prims::default(), targets: Vec::new(), bounds };
    let mut tally = Tally::default();
    let rays: Vec<Ray> = if cfg!(debug_assertions) { rays.iter().step_by(10).copied().collect() } else { rays };
    check_scene(&w, &rays, &mut tally);
    eprintln!("bunny: {tally:?}");
    assert!(tally.hits > tally.rays / 10, "{tally:?}");
    assert!(tally.flips == 0 && tally.near_ties == 0, "backends disagree on hit/miss or ids: {tally:?}");
}

/// Batches of several rayon tasks (the last one partial) write every record of every task:
/// each equals the single-ray query, at one and at two threads, into an output that held
/// another batch's records before.
#[test]
#[cfg(feature = "cli")]
fn batch_records_across_tasks_equal_single_queries() {
    let (scene, primary) = bunny_and_camera_rays();
    let incoherent = lanecast::workload::incoherent(&scene.bounds(), 700, 11);
    let rays: Vec<Ray> =
        (0..primary.len()).map(|i| primary.ray(i)).chain((0..incoherent.len()).map(|i| incoherent.ray(i))).collect();
    assert_eq!(rays.len(), 1276, "five tasks of 256 rays, the last one partial");
    let soa = RaySoa::from_rays(&rays);
    let reversed: Vec<Ray> = rays.iter().rev().copied().collect();
    for b in BACKENDS {
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut hits = HitSoa::default();
            pool.install(|| {
                scene.intersect_batch_with(&RaySoa::from_rays(&reversed), &mut hits, b);
                scene.intersect_batch_with(&soa, &mut hits, b);
            });
            let mut found = 0;
            for (i, r) in rays.iter().enumerate() {
                let single = scene.intersect_with(r, b);
                found += usize::from(single.is_some());
                assert!(
                    same(&Some(hits.get(i)), &Some(single.unwrap_or(Hit::MISS))),
                    "{b:?}, {threads} threads, ray {i}"
                );
            }
            assert!(found > rays.len() / 4, "{b:?}: {found} hits");
        }
    }
}
