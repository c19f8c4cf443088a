//! Sphere sweeps against whole scenes (`Scene::sweep_sphere`, `sweep_with`, `sweep_batch`).
//!
//! * Every backend equals a brute-force scan over every primitive with the same kernels
//!   (`sweep_sphere_brute_force_with`), bit for bit: the grown-box traversal never culls a
//!   contact, and the tie rule (smallest `toi`, then smallest `(geom, prim)`) is the same.
//! * The lanes backends agree with the scalar one within the kernels' tolerance (hit/miss
//!   flips only at tangency, at most 1 in 10³ sweeps; `toi` within 2⁻¹²).
//! * The scalar answers against an independent f64 distance written here (per shape: triangle
//!   by foot of the perpendicular or nearest edge; solid spheres and boxes; planes), by dense
//!   sampling of the motion: no overlap before `toi`, contact at `toi`, the contact point on
//!   the reported primitive.
//! * Known contacts, zero motion, motion parallel to a face, invalid input, empty scenes and
//!   batches.
//! * Contacts of small spheres far from the origin (sphere, triangle face, edge and vertex, a
//!   large triangle, box edge and corner), in the scene and through an instance, against
//!   normals and times worked out in f64 per feature; point sweeps (radius 0) get the surface
//!   normal.

use glam::{Affine3A, DVec3, Vec3};
use lanecast::prim::{Aabb, Plane, Sphere, Triangle};
use lanecast::rng::Rng;
use lanecast::{Backend, HitKind, Scene, SceneBuilder, SphereSweep, SweepHit};

const BACKENDS: [Backend; 4] = [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16];

#[derive(Clone, Copy, Debug)]
enum Shape {
    Tri(Triangle),
    Ball(Sphere),
    Cube(Aabb),
    Flat(Plane),
}

struct World {
    scene: Scene,
    /// `(geom, prim, shape)` of every primitive.
    shapes: Vec<(u32, u32, Shape)>,
    scale: f32,
}

fn random_world(seed: u64, n: usize, scale: f32, planes: bool) -> World {
    let mut rng = Rng::new(seed);
    let at = |rng: &mut Rng| rng.vec3(-10.0, 10.0) * scale;
    let mut b = SceneBuilder::new();
    let mut shapes = Vec::new();
    let mut left = n;
    while left > 0 {
        let m = (rng.below(left.min(60) as u64) as usize + 1).min(left);
        left -= m;
        match rng.below(3) {
            0 => {
                let s: Vec<Sphere> = (0..m).map(|_| Sphere::new(at(&mut rng), rng.range(0.05, 1.0) * scale)).collect();
                let g = b.add_spheres(&s).unwrap();
                shapes.extend(s.iter().enumerate().map(|(i, s)| (g, i as u32, Shape::Ball(*s))));
            }
            1 => {
                let bx: Vec<Aabb> = (0..m)
                    .map(|_| {
                        let c = at(&mut rng);
                        let h = rng.vec3(0.05, 1.0) * scale;
                        Aabb::new(c - h, c + h)
                    })
                    .collect();
                let g = b.add_boxes(&bx).unwrap();
                shapes.extend(bx.iter().enumerate().map(|(i, x)| (g, i as u32, Shape::Cube(*x))));
            }
            _ => {
                let mut tris = Vec::new();
                for _ in 0..m {
                    let c = at(&mut rng);
                    let size = rng.range(0.1, 2.0) * scale;
                    let v = [0; 3].map(|_| c + rng.unit_vec3() * size);
                    tris.push(Triangle::new(v[0], v[1], v[2]));
                    if rng.f32() < 0.05 {
                        tris.push(Triangle::new(v[1], v[2], v[0])); // coincident: a tie
                    }
                }
                let g = b.add_triangles(&tris).unwrap();
                shapes.extend(tris.iter().enumerate().map(|(i, t)| (g, i as u32, Shape::Tri(*t))));
            }
        }
    }
    if planes {
        let p = Plane::new(rng.unit_vec3(), rng.range(8.0, 14.0) * scale);
        let g = b.add_plane(p).unwrap();
        shapes.push((g, 0, Shape::Flat(p)));
    }
    World { scene: b.build().unwrap(), shapes, scale }
}

/// Sweeps that start anywhere in the world and move up to its size; a few with zero motion,
/// motion along one axis, or radius 0.
fn random_sweeps(rng: &mut Rng, scale: f32, n: usize) -> Vec<SphereSweep> {
    (0..n)
        .map(|k| {
            let c = rng.vec3(-12.0, 12.0) * scale;
            let r = if k % 17 == 0 { 0.0 } else { rng.range(0.01, 1.5) * scale };
            let m = match k % 13 {
                0 => Vec3::ZERO,
                1 => Vec3::new(rng.range(-20.0, 20.0) * scale, 0.0, 0.0),
                _ => rng.vec3(-20.0, 20.0) * scale,
            };
            SphereSweep::new(c, r, m)
        })
        .collect()
}

fn worlds() -> Vec<World> {
    [
        (1u64, 1, 1.0, false),
        (2, 9, 1.0, true),
        (3, 120, 1.0, false),
        (4, 700, 1.0, true),
        (5, 300, 1e4, true),
        (6, 300, 1e-3, false),
    ]
    .into_iter()
    .map(|(seed, n, scale, planes)| random_world(seed, n, scale, planes))
    .collect()
}

fn n_sweeps() -> usize {
    if cfg!(debug_assertions) { 200 } else { 3000 }
}

#[test]
fn every_backend_equals_brute_force_with_its_kernels() {
    let mut hits = 0;
    for (wi, w) in worlds().iter().enumerate() {
        let mut rng = Rng::new(100 + wi as u64);
        for s in random_sweeps(&mut rng, w.scale, n_sweeps()) {
            for be in BACKENDS {
                let got = w.scene.sweep_with(&s, be);
                let want = w.scene.sweep_sphere_brute_force_with(&s, be);
                assert_eq!(got, want, "world {wi}, {be:?}, {s:?}");
                hits += usize::from(got.is_some());
            }
        }
    }
    assert!(hits > 1000, "only {hits} contacts compared");
}

#[test]
fn lanes_backends_agree_with_the_scalar_backend_within_the_tolerance() {
    let (mut both, mut flips, mut total) = (0usize, 0usize, 0usize);
    for (wi, w) in worlds().iter().enumerate() {
        let mut rng = Rng::new(200 + wi as u64);
        for s in random_sweeps(&mut rng, w.scale, n_sweeps()) {
            let reference = w.scene.sweep_with(&s, Backend::Scalar);
            for be in [Backend::X4, Backend::X8] {
                total += 1;
                match (reference, w.scene.sweep_with(&s, be)) {
                    (Some(a), Some(b)) => {
                        both += 1;
                        assert!((a.toi - b.toi).abs() <= 1.0 / 4096.0, "world {wi}, {be:?}, {s:?}: {a:?} vs {b:?}");
                    }
                    (None, None) => {}
                    _ => flips += 1,
                }
            }
        }
    }
    assert!(both > 1000);
    assert!(flips * 1000 <= total, "{flips} hit/miss flips in {total} sweeps");
}

// ---------------------------------------------------------------------------------------
// Independent f64 distances.

fn closest_on_segment(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
    let d = b - a;
    let l2 = d.length_squared();
    if l2 == 0.0 {
        return a;
    }
    a + d * ((p - a).dot(d) / l2).clamp(0.0, 1.0)
}

/// Distance from `p` to a shape, f64; 0 inside a solid sphere or box.
fn distance(p: DVec3, shape: &Shape) -> f64 {
    match *shape {
        Shape::Tri(t) => {
            let [a, b, c] = t.v.map(|v| v.as_dvec3());
            let n = (b - a).cross(c - a);
            if n.length_squared() > 0.0 {
                let foot = p - n * ((p - a).dot(n) / n.length_squared());
                if [(a, b), (b, c), (c, a)].iter().all(|&(u, w)| (w - u).cross(foot - u).dot(n) >= 0.0) {
                    return (p - foot).length();
                }
            }
            [(a, b), (b, c), (c, a)]
                .iter()
                .map(|&(u, w)| (p - closest_on_segment(p, u, w)).length())
                .fold(f64::INFINITY, f64::min)
        }
        Shape::Ball(s) => ((p - s.center.as_dvec3()).length() - s.radius as f64).max(0.0),
        Shape::Cube(b) => {
            let q = p.clamp(b.min.as_dvec3(), b.max.as_dvec3());
            (p - q).length()
        }
        Shape::Flat(pl) => {
            let n = pl.normal.as_dvec3();
            (n.dot(p) - pl.d as f64).abs() / n.length()
        }
    }
}

fn world_distance(w: &World, p: DVec3) -> f64 {
    w.shapes.iter().map(|(_, _, s)| distance(p, s)).fold(f64::INFINITY, f64::min)
}

#[test]
fn dense_sampling_with_an_independent_distance() {
    let mut contacts = 0;
    for (wi, w) in worlds().iter().enumerate() {
        let mut rng = Rng::new(300 + wi as u64);
        let n = if cfg!(debug_assertions) { 60 } else { 600 };
        for s in random_sweeps(&mut rng, w.scale, n) {
            let (c, m, r) = (s.center.as_dvec3(), s.motion.as_dvec3(), s.radius as f64);
            // Rounding of f32 coordinates at the world's size.
            let tol = 2e-4 * w.scale as f64 * (1.0 + m.length() / w.scale as f64);
            let end = match w.scene.sweep_with(&s, Backend::Scalar) {
                Some(h) => {
                    contacts += 1;
                    let d = world_distance(w, c + m * h.toi as f64);
                    if h.toi > 0.0 {
                        assert!((d - r).abs() <= tol, "world {wi}, {s:?}: distance {d} at toi {} vs r {r}", h.toi);
                    } else {
                        assert!(d <= r + tol, "world {wi}, {s:?}: toi 0 but distance {d}");
                    }
                    let shape = w.shapes.iter().find(|(g, p, _)| (*g, *p) == (h.geom, h.prim)).unwrap().2;
                    let on = distance(h.point.as_dvec3(), &shape);
                    assert!(on <= tol, "world {wi}, {s:?}: contact point {on} off its primitive");
                    assert!((h.normal.length() - 1.0).abs() < 1e-4 || r == 0.0, "{h:?}");
                    h.toi as f64
                }
                None => 1.0,
            };
            for k in 0..=128 {
                let t = end * k as f64 / 128.0;
                if t < end {
                    let d = world_distance(w, c + m * t);
                    assert!(d >= r - tol, "world {wi}, {s:?}: overlap ({d} < {r}) at t = {t} before toi {end}");
                }
            }
        }
    }
    assert!(contacts > 300, "only {contacts} contacts checked");
}

// ---------------------------------------------------------------------------------------
// Known contacts.

fn one(shape: impl FnOnce(&mut SceneBuilder) -> u32) -> Scene {
    let mut b = SceneBuilder::new();
    shape(&mut b);
    b.build().unwrap()
}

fn each(scene: &Scene, s: SphereSweep) -> Option<SweepHit> {
    let answers: Vec<_> = BACKENDS.iter().map(|&be| scene.sweep_with(&s, be)).collect();
    for a in &answers {
        assert_eq!(a.is_some(), answers[0].is_some(), "{s:?}: {answers:?}");
        if let (Some(a), Some(b)) = (a, answers[0]) {
            assert!((a.toi - b.toi).abs() < 1e-5 && (a.geom, a.prim) == (b.geom, b.prim), "{answers:?}");
        }
    }
    answers[0]
}

fn close(a: Vec3, b: Vec3) -> bool {
    (a - b).length() < 1e-5
}

#[test]
fn known_contacts_with_each_kind() {
    // Triangle face: a ball falling onto the unit triangle in z = 0 from z = 2, radius 0.5.
    let tri = one(|b| b.add_triangle(Triangle::new(Vec3::ZERO, Vec3::X * 2.0, Vec3::Y * 2.0)).unwrap());
    let h = each(&tri, SphereSweep::new(Vec3::new(0.5, 0.5, 2.0), 0.5, Vec3::new(0.0, 0.0, -3.0))).unwrap();
    assert!((h.toi - 0.5).abs() < 1e-6 && close(h.point, Vec3::new(0.5, 0.5, 0.0)) && close(h.normal, Vec3::Z));
    assert_eq!(h.kind, HitKind::Triangle);
    // Its edge x = 0: the ball passes beside it at x = -1 moving in z: touches the edge
    // capsule where the centre is 0.5 away, never the face.
    let h = each(&tri, SphereSweep::new(Vec3::new(-0.4, 1.0, 2.0), 0.5, Vec3::new(0.0, 0.0, -4.0))).unwrap();
    let dz = (0.5f32 * 0.5 - 0.4 * 0.4).sqrt();
    assert!((h.toi - (2.0 - dz) / 4.0).abs() < 1e-5, "{h:?}");
    assert!(close(h.point, Vec3::new(0.0, 1.0, 0.0)));
    // Motion parallel to the face at a height above the radius: no contact.
    assert!(each(&tri, SphereSweep::new(Vec3::new(-3.0, 0.5, 0.6), 0.5, Vec3::new(8.0, 0.0, 0.0))).is_none());
    // ... and at a height below it: touches the edge x = 0 on the way in.
    assert!(each(&tri, SphereSweep::new(Vec3::new(-3.0, 0.5, 0.3), 0.5, Vec3::new(8.0, 0.0, 0.0))).is_some());

    // Sphere: head-on, radii 1 and 0.5, centres 5 apart along x, motion 4: contact after 3.5.
    let ball = one(|b| b.add_sphere(Sphere::new(Vec3::new(5.0, 0.0, 0.0), 1.0)).unwrap());
    let h = each(&ball, SphereSweep::new(Vec3::ZERO, 0.5, Vec3::new(4.0, 0.0, 0.0))).unwrap();
    assert!((h.toi - 0.875).abs() < 1e-6 && close(h.point, Vec3::new(4.0, 0.0, 0.0)) && close(h.normal, -Vec3::X));
    assert_eq!(h.kind, HitKind::Sphere);

    // Box corner: a ball moving along the diagonal towards the corner (1, 1, 1) of the unit
    // cube touches it where the centre is 0.5 from the corner.
    let cube = one(|b| b.add_box(Aabb::new(Vec3::ZERO, Vec3::ONE)).unwrap());
    let start = Vec3::splat(3.0);
    let h = each(&cube, SphereSweep::new(start, 0.5, Vec3::splat(-2.0))).unwrap();
    let travel = (start - Vec3::ONE).length() - 0.5;
    assert!((h.toi - travel / Vec3::splat(2.0).length()).abs() < 1e-5, "{h:?}");
    assert!(close(h.point, Vec3::ONE) && close(h.normal, Vec3::ONE.normalize()));
    // Starting inside the box: toi 0, the nearest face.
    let h = each(&cube, SphereSweep::new(Vec3::new(0.5, 0.5, 0.9), 0.1, Vec3::X)).unwrap();
    assert_eq!((h.toi, h.kind), (0.0, HitKind::Box));
    assert!(close(h.point, Vec3::new(0.5, 0.5, 1.0)) && close(h.normal, Vec3::Z));

    // Plane, from either side.
    let floor = one(|b| b.add_plane(Plane::new(Vec3::new(0.0, 2.0, 0.0), 0.0)).unwrap());
    let h = each(&floor, SphereSweep::new(Vec3::new(0.0, 3.0, 0.0), 1.0, Vec3::new(0.0, -4.0, 0.0))).unwrap();
    assert!((h.toi - 0.5).abs() < 1e-6 && close(h.point, Vec3::new(0.0, 0.0, 0.0)) && close(h.normal, Vec3::Y));
    let h = each(&floor, SphereSweep::new(Vec3::new(0.0, -3.0, 0.0), 1.0, Vec3::new(0.0, 4.0, 0.0))).unwrap();
    assert!((h.toi - 0.5).abs() < 1e-6 && close(h.normal, -Vec3::Y));
    // Moving away, or parallel: nothing.
    assert!(each(&floor, SphereSweep::new(Vec3::new(0.0, 3.0, 0.0), 1.0, Vec3::Y)).is_none());
    assert!(each(&floor, SphereSweep::new(Vec3::new(0.0, 3.0, 0.0), 1.0, Vec3::X * 100.0)).is_none());
}

#[test]
fn zero_motion_touches_only_at_the_start() {
    let cube = one(|b| b.add_box(Aabb::new(Vec3::ZERO, Vec3::ONE)).unwrap());
    for m in [Vec3::ZERO, Vec3::new(-0.0, 0.0, -0.0)] {
        let h = each(&cube, SphereSweep::new(Vec3::new(2.0, 0.5, 0.5), 1.0, m)).unwrap();
        assert_eq!(h.toi, 0.0);
        assert!(each(&cube, SphereSweep::new(Vec3::new(2.01, 0.5, 0.5), 1.0, m)).is_none());
    }
}

#[test]
fn the_first_contact_wins_and_ties_go_to_the_smaller_ids() {
    let mut b = SceneBuilder::new();
    let far = b.add_sphere(Sphere::new(Vec3::new(10.0, 0.0, 0.0), 1.0)).unwrap();
    let near = b.add_box(Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0))).unwrap();
    let _twin = b.add_box(Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0))).unwrap();
    let scene = b.build().unwrap();
    let h = each(&scene, SphereSweep::new(Vec3::ZERO, 0.5, Vec3::new(20.0, 0.0, 0.0))).unwrap();
    assert_eq!(h.geom, near, "the box is reached first (and ties with its twin)");
    assert!((h.toi - 4.5 / 20.0).abs() < 1e-6);
    let h = each(&scene, SphereSweep::new(Vec3::new(7.0, 0.0, 0.0), 0.5, Vec3::new(20.0, 0.0, 0.0))).unwrap();
    assert_eq!(h.geom, far);
}

#[test]
fn invalid_sweeps_and_empty_scenes_touch_nothing() {
    let cube = one(|b| b.add_box(Aabb::new(Vec3::ZERO, Vec3::ONE)).unwrap());
    let bad = [
        SphereSweep::new(Vec3::NAN, 1.0, Vec3::X),
        SphereSweep::new(Vec3::splat(0.5), -1.0, Vec3::X),
        SphereSweep::new(Vec3::splat(0.5), f32::NAN, Vec3::X),
        SphereSweep::new(Vec3::splat(0.5), f32::INFINITY, Vec3::X),
        SphereSweep::new(Vec3::splat(0.5), 1.0, Vec3::new(f32::INFINITY, 0.0, 0.0)),
    ];
    for s in bad {
        assert!(!s.is_valid());
        for be in BACKENDS {
            assert_eq!(cube.sweep_with(&s, be), None, "{s:?}");
            assert_eq!(cube.sweep_sphere_brute_force_with(&s, be), None);
        }
    }
    let empty = SceneBuilder::new().build().unwrap();
    assert_eq!(empty.sweep_sphere(Vec3::ZERO, 1.0, Vec3::X), None);
    assert!(!SweepHit::MISS.is_hit() && SweepHit::MISS.toi == f32::INFINITY);
}

#[test]
fn batch_equals_one_by_one_in_input_order() {
    let w = random_world(9, 400, 1.0, true);
    let mut rng = Rng::new(10);
    let sweeps = random_sweeps(&mut rng, 1.0, 5000);
    let mut out = vec![SweepHit::MISS; sweeps.len()];
    w.scene.sweep_batch(&sweeps, &mut out);
    let mut hits = 0;
    for (s, o) in sweeps.iter().zip(&out) {
        let one = w.scene.sweep_sphere(s.center, s.radius, s.motion).unwrap_or(SweepHit::MISS);
        assert_eq!(*o, one);
        hits += usize::from(o.is_hit());
    }
    assert!(hits > 500 && hits < 4900, "{hits}");
}

/// A sweep's contact normal against a sphere is as accurate as the problem's own size allows
/// (the distance from the start to the sphere), not the size of the coordinates: a ball of
/// radius 0.03 moving onto one of radius 0.05 about 1,400 units from the world's origin, on
/// every backend, against the normal worked out in f64 from the same inputs. From the
/// rounded centre at `toi` the normal was off by about `ulp(1000) / 0.08`.
#[test]
fn a_small_sphere_far_out_gets_an_accurate_contact_normal() {
    let target = Sphere::new(Vec3::new(700.1234, -800.4321, 900.2468), 0.05);
    let s = SphereSweep::new(Vec3::new(700.4017, -800.2503, 900.1139), 0.03, Vec3::new(-0.61, -0.37, 0.29));
    let mut b = SceneBuilder::new();
    b.add_sphere(target).unwrap();
    let scene = b.build().unwrap();
    // f64: the first root of |m + t·v|² = (r + R)², and (m + t·v) / (r + R) there.
    let f = |v: Vec3| DVec3::new(f64::from(v.x), f64::from(v.y), f64::from(v.z));
    let (m, v, rr) = (f(s.center) - f(target.center), f(s.motion), f64::from(s.radius) + f64::from(target.radius));
    let (qa, qb, qc) = (v.dot(v), m.dot(v), m.dot(m) - rr * rr);
    let t = (-qb - (qb * qb - qa * qc).sqrt()) / qa;
    let want = ((m + v * t) / rr).as_vec3();
    // 1e-5 of (1 + problem size / the radii's sum), as for ray hits.
    let tol = 1e-5 * (1.0 + ((s.center - target.center).length() + target.radius) / (s.radius + target.radius));
    for backend in BACKENDS {
        let h = scene.sweep_with(&s, backend).unwrap_or_else(|| panic!("{backend:?}: no contact"));
        assert!((f64::from(h.toi) - t).abs() <= 1e-5, "{backend:?}: toi {} against {t}", h.toi);
        assert!(
            (h.normal - want).abs().max_element() <= tol,
            "{backend:?}: normal {} against {want} (tolerance {tol})",
            h.normal
        );
    }
}

// ---------------------------------------------------------------------------------------
// Contacts far from the world's origin, against normals worked out in f64 per feature.

/// The first `t` at which `|p0 + pm·t| = r` (the centre's offset from a point, or its
/// perpendicular from a line, `p0` at the start, changing by `pm`), in f64.
fn first_root(p0: DVec3, pm: DVec3, r: f64) -> f64 {
    let (qa, qb, qc) = (pm.dot(pm), p0.dot(pm), p0.dot(p0) - r * r);
    (-qb - (qb * qb - qa * qc).sqrt()) / qa
}

/// A sweep that meets one known feature first: `want_toi` its exact time of impact (f64),
/// `gap` the exact offset from that feature to a centre `x` (f64), the contact normal being
/// its direction.
struct FarCase {
    name: &'static str,
    scene: Scene,
    /// The same shape as a prototype near the origin, placed by an instance that moves it
    /// out (a translation: the placed shape has the same coordinates bit for bit).
    placed: Scene,
    s: SphereSweep,
    want_toi: f64,
    gap: Box<dyn Fn(DVec3) -> DVec3>,
}

/// The cases: a small triangle about 1,400 units out (its face, an edge, a vertex), a
/// triangle 2,000 units across met near its middle and on an edge far from its vertices, and
/// a small box far out (its edge and corner; a face contact's normal is an axis, exact
/// either way). Radius 0.03, motions under half a unit.
fn far_cases() -> Vec<FarCase> {
    let f = Vec3::as_dvec3;
    let o = Vec3::new(1400.3718, -1203.612, 977.1309);
    let r = 0.03f32;
    let out_there = |t: Triangle| Triangle::new(t.v[0] + o, t.v[1] + o, t.v[2] + o);
    let mut cases = Vec::new();
    let mut tri_case = |name, local: Triangle, start: DVec3, motion: DVec3, feature: Feature| {
        let tri = out_there(local);
        let [a, b, c] = tri.v.map(f);
        let scene = one(|sb| sb.add_triangle(tri).unwrap());
        let placed = placed_at(o, |sb| sb.add_triangle(local).unwrap());
        let s = SphereSweep::new(start.as_vec3(), r, motion.as_vec3());
        let (c0, m) = (f(s.center), f(s.motion));
        let n = (b - a).cross(c - a).normalize();
        let (want_toi, gap): (f64, Box<dyn Fn(DVec3) -> DVec3>) = match feature {
            Feature::Face => {
                let side = n.dot(c0 - a).signum();
                ((f64::from(r) - side * n.dot(c0 - a)) / (side * n.dot(m)), Box::new(move |x| n * n.dot(x - a)))
            }
            Feature::Edge(u, w) => {
                let (u, w) = (f(tri.v[u]), f(tri.v[w]));
                let e = (w - u).normalize();
                let perp = move |x: DVec3| (x - u) - e * (x - u).dot(e);
                (first_root(perp(c0), m - e * m.dot(e), f64::from(r)), Box::new(perp))
            }
            Feature::Vertex(k) => {
                let v = f(tri.v[k]);
                (first_root(c0 - v, m, f64::from(r)), Box::new(move |x| x - v))
            }
        };
        cases.push(FarCase { name, scene, placed, s, want_toi, gap });
    };
    let small = Triangle::new(Vec3::new(0.1, 0.02, 0.05), Vec3::new(0.4, 0.07, -0.03), Vec3::new(0.18, 0.33, 0.11));
    let [a, b, c] = out_there(small).v.map(f);
    let n = (b - a).cross(c - a).normalize();
    let g = (a + b + c) / 3.0;
    let t = (b - a).normalize();
    tri_case("small triangle, face", small, g + n * 0.2 + t * 0.01, n * -0.4 + t * 0.03, Feature::Face);
    // Beyond the middle of v0 v1 in the triangle's plane, a third of the radius above it.
    let out = (b - a).cross(n).normalize();
    let mid = (a + b) / 2.0;
    tri_case("small triangle, edge", small, mid + out * 0.2 + n * 0.01, out * -0.4 + t * 0.02, Feature::Edge(0, 1));
    // From beyond v2, along the line from the centroid (inside v2's cone of normals).
    let away = (c - g).normalize();
    assert!(away.dot(a - c) < 0.0 && away.dot(b - c) < 0.0);
    tri_case("small triangle, vertex", small, c + away * 0.2 + n * 0.005, away * -0.4, Feature::Vertex(2));
    let big =
        Triangle::new(Vec3::new(-1000.0, -900.0, 5.0), Vec3::new(1100.0, -800.0, -7.0), Vec3::new(50.0, 1200.0, 3.0));
    let [a, b, c] = out_there(big).v.map(f);
    let n = (b - a).cross(c - a).normalize();
    let t = (b - a).normalize();
    let foot = |x: DVec3| x - n * n.dot(x - a);
    tri_case("large triangle, face", big, foot(f(o)) + n * 0.2, n * -0.4 + t * 0.05, Feature::Face);
    let out = (b - a).cross(n).normalize();
    let mid = (a + b) / 2.0 + t * 3.7;
    tri_case("large triangle, edge", big, mid + out * 0.2 + n * 0.01, out * -0.4, Feature::Edge(0, 1));

    let local = Aabb::new(Vec3::new(-0.11, -0.07, -0.13), Vec3::new(0.09, 0.12, 0.06));
    let bx = Aabb::new(local.min + o, local.max + o);
    let (lo, hi) = (f(bx.min), f(bx.max));
    let scene = || one(|sb| sb.add_box(bx).unwrap());
    let placed = || placed_at(o, |sb| sb.add_box(local).unwrap());
    // The edge x = max, y = max (z inside): towards it along (-1, -1, 0.2).
    let s = SphereSweep::new((hi + DVec3::new(0.2, 0.21, -0.1)).as_vec3(), r, Vec3::new(-0.4, -0.4, 0.08));
    let edge = move |x: DVec3| DVec3::new(x.x - hi.x, x.y - hi.y, 0.0);
    let m = f(s.motion);
    let want_toi = first_root(edge(f(s.center)), DVec3::new(m.x, m.y, 0.0), f64::from(r));
    cases.push(FarCase { name: "small box, edge", scene: scene(), placed: placed(), s, want_toi, gap: Box::new(edge) });
    // The corner (min x, max y, min z).
    let corner = DVec3::new(lo.x, hi.y, lo.z);
    let s = SphereSweep::new((corner + DVec3::new(-0.2, 0.17, -0.23)).as_vec3(), r, Vec3::new(0.4, -0.33, 0.41));
    let want_toi = first_root(f(s.center) - corner, f(s.motion), f64::from(r));
    let gap = Box::new(move |x| x - corner);
    cases.push(FarCase { name: "small box, corner", scene: scene(), placed: placed(), s, want_toi, gap });
    cases
}

/// A scene of one shape added near the origin and placed at `o` by an instance.
fn placed_at(o: Vec3, shape: impl FnOnce(&mut SceneBuilder) -> u32) -> Scene {
    let mut b = SceneBuilder::new();
    let geom = shape(&mut b);
    b.add_instance(geom, Affine3A::from_translation(o)).unwrap();
    b.build().unwrap()
}

#[derive(Clone, Copy)]
enum Feature {
    Face,
    Edge(usize, usize),
    Vertex(usize),
}

/// A sweep's contact normal and point against triangles and boxes are as accurate as the
/// problem's own size allows, not the size of the coordinates (README, "Sphere sweeps"): a
/// ball of radius 0.03 about 1,400 units from the origin, every backend, the normal within
/// 10⁻⁵ of the exact one at the reported `toi` (the direction from the feature the case is
/// built to meet to the centre there, in f64), the point within two f32 steps of the exact
/// closest point, `toi` within 10⁻⁵ of the exact time. From the rounded centre at `toi` the
/// normals were off by about `ulp(1400) / 0.03 ≈ 4·10⁻³`. The same through an instance that
/// places the shape out there (the placed copy is tested in the world, as a shape of its own).
#[test]
fn small_sweeps_far_out_get_accurate_contacts_on_triangles_and_boxes() {
    for k in far_cases() {
        let (c, m) = (k.s.center.as_dvec3(), k.s.motion.as_dvec3());
        assert!(k.want_toi > 0.05 && k.want_toi < 0.95, "{}: the case is not built as meant ({})", k.name, k.want_toi);
        for (how, scene) in [("", &k.scene), (", instanced", &k.placed)] {
            for backend in BACKENDS {
                let name = format!("{}{how}, {backend:?}", k.name);
                let h = scene.sweep_with(&k.s, backend).unwrap_or_else(|| panic!("{name}: no contact"));
                assert_eq!(h.inst == u32::MAX, how.is_empty(), "{name}: instance id {}", h.inst);
                assert!((f64::from(h.toi) - k.want_toi).abs() <= 1e-5, "{name}: toi {} against {}", h.toi, k.want_toi);
                let x = c + m * f64::from(h.toi);
                let gap = (k.gap)(x);
                let want = gap.normalize();
                let err = (h.normal.as_dvec3() - want).abs().max_element();
                assert!(err <= 1e-5, "{name}: normal {} against {want} (off {err:.2e})", h.normal);
                let point = x - gap;
                let step = f64::from(f32::EPSILON) * point.abs().max_element();
                let off = (h.point.as_dvec3() - point).abs().max_element();
                assert!(off <= 2.0 * step, "{name}: point {} against {point} (off {off:.2e})", h.point);
            }
        }
    }
}

/// A point sweep (radius 0) gets the surface normal where it lands: a triangle's and a
/// plane's turned towards the start, a box's outward face normal (`SweepHit::normal`). The gap
/// between a point and its contact is only the rounding of `toi` and pointed anywhere: the
/// normal came out in a random direction for nearly every triangle and plane contact, near the
/// origin as far from it.
#[test]
fn point_sweeps_get_the_surface_normal() {
    let mut rng = Rng::new(71);
    let mut counts = [0usize; 3];
    for far in [0.0f32, 2000.0] {
        for _ in 0..500 {
            let o = rng.vec3(-far, far);
            let tri = Triangle::new(o + rng.vec3(-1.0, 1.0), o + rng.vec3(-1.0, 1.0), o + rng.vec3(-1.0, 1.0));
            let pn = rng.vec3(-1.0, 1.0);
            let plane = Plane::new(pn, pn.dot(o));
            let bx = Aabb::new(o - Vec3::splat(0.5), o + Vec3::splat(0.5));
            let c = o + rng.vec3(-3.0, 3.0);
            let s = SphereSweep::new(c, 0.0, (o + rng.vec3(-0.2, 0.2) - c) * 2.0);
            let scenes = [
                one(|b| b.add_triangle(tri).unwrap()),
                one(|b| b.add_plane(plane).unwrap()),
                one(|b| b.add_box(bx).unwrap()),
            ];
            for (kind, scene) in scenes.iter().enumerate() {
                for backend in BACKENDS {
                    let Some(h) = scene.sweep_with(&s, backend) else { continue };
                    counts[kind] += usize::from(backend == Backend::Scalar);
                    let want = match kind {
                        0 => tri.normal() * (tri.normal().dot(c - tri.v[0])).signum(),
                        1 => pn.normalize() * (pn.dot(c) - plane.d).signum(),
                        _ if h.toi == 0.0 => continue, // starts inside: the nearest face
                        _ => {
                            // The face entered: the axis whose slab the path enters last.
                            let (cd, m) = (c.as_dvec3() - o.as_dvec3(), s.motion.as_dvec3());
                            let entry = |i: usize| {
                                let face = 0.5 * cd[i].signum();
                                if cd[i].abs() <= 0.5 { f64::NEG_INFINITY } else { (face - cd[i]) / m[i] }
                            };
                            let axis = (0..3).max_by(|&i, &j| entry(i).total_cmp(&entry(j))).unwrap();
                            let mut n = Vec3::ZERO;
                            n[axis] = cd[axis].signum() as f32;
                            n
                        }
                    };
                    assert!(
                        (h.normal - want).length() <= 1e-6,
                        "{kind} ({far}), {backend:?}: {s:?} -> {h:?}, want {want}"
                    );
                }
            }
        }
    }
    assert!(counts.iter().all(|&n| n > 100), "contacts per kind {counts:?}");
}
