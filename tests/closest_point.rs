//! Closest-point kernels and scene point queries.
//!
//! * Lanes twins (widths 1, 4, 8) against the scalar references, lane by lane, **bitwise**
//!   (point, barycentrics, normal), on large seeded random sets and adversarial cases: points
//!   on vertices, edges and faces and in every Voronoi region, degenerate triangles (a point,
//!   collinear, slivers), huge and tiny scales, points inside boxes and spheres, sphere
//!   centres, invalid lanes.
//! * Scalar references against independent truths: analytic constructions (a point placed in
//!   a known region at a known offset, computed in f64) and dense barycentric sampling.
//! * Scene queries of every backend against a brute-force scan written here over the shapes
//!   the test generated (scalar kernels, smallest squared distance then smallest
//!   `(geom, prim)`): identical answers; max-distance pruning; invalid input; batches.

use glam::{DVec3, Vec3};
use lanecast::bvh::traverse::point_aabb_distance_squared;
use lanecast::kernel::closest_point as cp;
use lanecast::prim::{Aabb, AabbLanes, Plane, PlaneLanes, Sphere, SphereLanes, Triangle, TriangleLanes};
use lanecast::rng::Rng;
use lanecast::vec3x::Vec3x;
use lanecast::{Backend, ClosestPoint, F32x4, F32x8, F32x16, HitKind, Lanes, SceneBuilder, TriangleTest};

const BACKENDS: [Backend; 4] = [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16];

/// Random cases per kernel and width: large in release, a prefix in debug builds.
fn cases() -> usize {
    if cfg!(debug_assertions) { 20_000 } else { 1_000_000 }
}

fn lanes_of<L: Lanes>(v: &[Vec3]) -> Vec3x<L> {
    let col = |k: usize| {
        let mut a = [0.0f32; 16];
        for (x, p) in a.iter_mut().zip(v) {
            *x = p[k];
        }
        L::load(&a)
    };
    Vec3x::new(col(0), col(1), col(2))
}

fn scalars<L: Lanes>(v: &[f32]) -> L {
    let mut a = [0.0f32; 16];
    a[..v.len()].copy_from_slice(v);
    L::load(&a)
}

fn bits(v: Vec3) -> [u32; 3] {
    v.to_array().map(f32::to_bits)
}

// ---------------------------------------------------------------------------------------
// Case generators.

/// A random triangle of one of several shapes around a random centre at a random scale.
fn random_triangle(rng: &mut Rng) -> Triangle {
    let scale = match rng.below(5) {
        0 => 1e-4,
        1 => 1e4,
        _ => rng.range(0.1, 10.0),
    };
    let c = rng.vec3(-50.0, 50.0) * if rng.below(4) == 0 { 1e4 } else { 1.0 };
    let mut v = || c + rng.vec3(-1.0, 1.0) * scale;
    let (a, b, d) = (v(), v(), v());
    match rng.below(12) {
        0 => Triangle::new(a, a, a),                                                  // a point
        1 => Triangle::new(a, b, a + (b - a) * rng.range(-0.5, 1.5)),                 // collinear
        2 => Triangle::new(a, b, b),                                                  // repeated vertex
        3 => Triangle::new(a, b, a + (b - a) * 0.5 + (d - a) * 1e-7),                 // sliver
        4 => Triangle::new(a, b, a + (b - a) * rng.range(0.0, 1.0) + (d - a) * 1e-3), // thin
        _ => Triangle::new(a, b, d),
    }
}

/// A query point for `t`: random around it, on a vertex, on an edge, on the face, or
/// pushed off a vertex / edge / face into its region.
fn query_for(rng: &mut Rng, t: &Triangle) -> Vec3 {
    let [a, b, c] = t.v;
    let size = (b - a).length().max((c - a).length()).max(1e-30);
    let n = t.normal();
    match rng.below(8) {
        0 => t.v[rng.below(3) as usize],
        1 => {
            let (p, q) = [(a, b), (b, c), (c, a)][rng.below(3) as usize];
            p + (q - p) * rng.f32()
        }
        2 => {
            let (u, v) = (rng.f32(), rng.f32());
            let (u, v) = if u + v > 1.0 { (1.0 - u, 1.0 - v) } else { (u, v) };
            a + (b - a) * u + (c - a) * v
        }
        3 => {
            let (u, v) = (rng.f32() * 0.5, rng.f32() * 0.5);
            a + (b - a) * u + (c - a) * v + n * rng.range(-1.0, 1.0) * size
        }
        4 => t.v[rng.below(3) as usize] + rng.unit_vec3() * size * rng.range(0.0, 2.0),
        _ => (a + b + c) / 3.0 + rng.vec3(-2.0, 2.0) * size,
    }
}

fn random_sphere(rng: &mut Rng) -> (Vec3, Sphere) {
    let s = Sphere::new(rng.vec3(-50.0, 50.0), if rng.below(8) == 0 { 0.0 } else { rng.range(0.01, 5.0) });
    let p = match rng.below(5) {
        0 => s.center,
        1 => s.center + rng.unit_vec3() * s.radius,
        2 => s.center + rng.unit_vec3() * s.radius * rng.f32(),
        _ => s.center + rng.vec3(-10.0, 10.0),
    };
    (p, s)
}

fn random_box(rng: &mut Rng) -> (Vec3, Aabb) {
    let c = rng.vec3(-50.0, 50.0);
    let mut h = rng.vec3(0.01, 3.0);
    if rng.below(6) == 0 {
        h[rng.below(3) as usize] = 0.0; // flat
    }
    if rng.below(10) == 0 {
        h = Vec3::new(1.0, 1.0, 1.0); // a cube: ties between faces
    }
    let b = Aabb::new(c - h, c + h);
    let p = match rng.below(6) {
        0 => b.corner(rng.below(8) as u32),
        1 => c,
        2 => c + h * rng.vec3(-1.0, 1.0),
        3 => {
            let mut p = c + h * rng.vec3(-1.0, 1.0);
            let k = rng.below(3) as usize;
            p[k] = if rng.below(2) == 0 { b.min[k] } else { b.max[k] };
            p
        }
        _ => c + rng.vec3(-8.0, 8.0),
    };
    (p, b)
}

fn random_plane(rng: &mut Rng) -> (Vec3, Plane) {
    let n = rng.unit_vec3() * rng.range(0.1, 10.0);
    (rng.vec3(-50.0, 50.0), Plane::new(n, rng.range(-20.0, 20.0)))
}

// ---------------------------------------------------------------------------------------
// Twins, bitwise.

fn twins_triangle<L: Lanes>(cases: &[(Vec3, Triangle)]) {
    for chunk in cases.chunks(L::N) {
        let p: Vec<Vec3> = chunk.iter().map(|c| c.0).collect();
        let v = |k: usize| lanes_of::<L>(&chunk.iter().map(|c| c.1.v[k]).collect::<Vec<_>>());
        let tri = TriangleLanes::new(v(0), v(1), v(2));
        let (q, u, w) = cp::triangle_lanes(lanes_of::<L>(&p), &tri);
        for (i, (p, t)) in chunk.iter().enumerate() {
            let (sq, su, sv) = cp::triangle_scalar(*p, t);
            let got = (bits(q.lane(i)), u.lane(i).to_bits(), w.lane(i).to_bits());
            assert_eq!(got, (bits(sq), su.to_bits(), sv.to_bits()), "{} lane {i}: {p:?} {t:?}", L::NAME);
            assert!(sq.is_finite() || !p.is_finite() || !t.is_valid(), "non-finite point for {p:?} {t:?}");
        }
    }
}

fn twins_sphere<L: Lanes>(cases: &[(Vec3, Sphere)]) {
    for chunk in cases.chunks(L::N) {
        let p: Vec<Vec3> = chunk.iter().map(|c| c.0).collect();
        let c = lanes_of::<L>(&chunk.iter().map(|c| c.1.center).collect::<Vec<_>>());
        let r = scalars::<L>(&chunk.iter().map(|c| c.1.radius).collect::<Vec<_>>());
        let (q, n) = cp::sphere_lanes(lanes_of::<L>(&p), &SphereLanes::new(c, r));
        for (i, (p, s)) in chunk.iter().enumerate() {
            let (sq, sn) = cp::sphere_scalar(*p, s);
            assert_eq!((bits(q.lane(i)), bits(n.lane(i))), (bits(sq), bits(sn)), "{} lane {i}: {p:?} {s:?}", L::NAME);
        }
    }
}

fn twins_box<L: Lanes>(cases: &[(Vec3, Aabb)]) {
    for chunk in cases.chunks(L::N) {
        let p: Vec<Vec3> = chunk.iter().map(|c| c.0).collect();
        let lo = lanes_of::<L>(&chunk.iter().map(|c| c.1.min).collect::<Vec<_>>());
        let hi = lanes_of::<L>(&chunk.iter().map(|c| c.1.max).collect::<Vec<_>>());
        let (q, n) = cp::aabb_lanes(lanes_of::<L>(&p), &AabbLanes::new(lo, hi));
        for (i, (p, b)) in chunk.iter().enumerate() {
            let (sq, sn) = cp::aabb_scalar(*p, b);
            assert_eq!((bits(q.lane(i)), bits(n.lane(i))), (bits(sq), bits(sn)), "{} lane {i}: {p:?} {b:?}", L::NAME);
        }
    }
}

fn twins_plane<L: Lanes>(cases: &[(Vec3, Plane)]) {
    for chunk in cases.chunks(L::N) {
        let p: Vec<Vec3> = chunk.iter().map(|c| c.0).collect();
        let n = lanes_of::<L>(&chunk.iter().map(|c| c.1.normal).collect::<Vec<_>>());
        let d = scalars::<L>(&chunk.iter().map(|c| c.1.d).collect::<Vec<_>>());
        let q = cp::plane_lanes(lanes_of::<L>(&p), &PlaneLanes::new(n, d));
        for (i, (p, pl)) in chunk.iter().enumerate() {
            assert_eq!(bits(q.lane(i)), bits(cp::plane_scalar(*p, pl)), "{} lane {i}: {p:?} {pl:?}", L::NAME);
        }
    }
}

fn all_widths<T>(cases: &[T], f1: fn(&[T]), f4: fn(&[T]), f8: fn(&[T]), f16: fn(&[T])) {
    f1(cases);
    f4(cases);
    f8(cases);
    f16(cases);
}

#[test]
fn triangle_twins_are_bitwise_equal_on_random_and_adversarial_cases() {
    let mut rng = Rng::new(0xc105e);
    let mut cases: Vec<(Vec3, Triangle)> = (0..cases())
        .map(|_| {
            let t = random_triangle(&mut rng);
            (query_for(&mut rng, &t), t)
        })
        .collect();
    // Invalid lanes among valid ones.
    let t = Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y);
    cases.extend([
        (Vec3::NAN, t),
        (Vec3::new(f32::INFINITY, 0.0, 0.0), t),
        (Vec3::ONE, Triangle::new(Vec3::NAN, Vec3::X, Vec3::Y)),
        (Vec3::ONE, Triangle::new(Vec3::ZERO, Vec3::INFINITY, Vec3::Y)),
    ]);
    all_widths(
        &cases,
        twins_triangle::<f32>,
        twins_triangle::<F32x4>,
        twins_triangle::<F32x8>,
        twins_triangle::<F32x16>,
    );
    // Invalid input is the documented miss, never NaN.
    for (p, t) in &cases[cases.len() - 4..] {
        assert_eq!(cp::triangle_scalar(*p, t), (cp::MISS_POINT, 0.0, 0.0));
    }
}

#[test]
fn sphere_box_and_plane_twins_are_bitwise_equal() {
    let mut rng = Rng::new(0x5b0);
    let mut spheres: Vec<(Vec3, Sphere)> = (0..cases()).map(|_| random_sphere(&mut rng)).collect();
    spheres.push((Vec3::ONE, Sphere::new(Vec3::ZERO, -1.0)));
    spheres.push((Vec3::NAN, Sphere::new(Vec3::ZERO, 1.0)));
    all_widths(&spheres, twins_sphere::<f32>, twins_sphere::<F32x4>, twins_sphere::<F32x8>, twins_sphere::<F32x16>);
    let mut boxes: Vec<(Vec3, Aabb)> = (0..cases()).map(|_| random_box(&mut rng)).collect();
    boxes.push((Vec3::ONE, Aabb::new(Vec3::ONE, Vec3::ZERO)));
    boxes.push((Vec3::ONE, Aabb::EMPTY));
    all_widths(&boxes, twins_box::<f32>, twins_box::<F32x4>, twins_box::<F32x8>, twins_box::<F32x16>);
    let mut planes: Vec<(Vec3, Plane)> = (0..cases()).map(|_| random_plane(&mut rng)).collect();
    planes.push((Vec3::ONE, Plane::new(Vec3::ZERO, 1.0)));
    all_widths(&planes, twins_plane::<f32>, twins_plane::<F32x4>, twins_plane::<F32x8>, twins_plane::<F32x16>);
    assert_eq!(cp::sphere_scalar(Vec3::ONE, &Sphere::new(Vec3::ZERO, -1.0)), (cp::MISS_POINT, Vec3::ZERO));
    assert_eq!(cp::aabb_scalar(Vec3::ONE, &Aabb::EMPTY), (cp::MISS_POINT, Vec3::ZERO));
    assert_eq!(cp::plane_scalar(Vec3::ONE, &Plane::new(Vec3::ZERO, 1.0)), cp::MISS_POINT);
}

// ---------------------------------------------------------------------------------------
// Independent truths.

fn d(v: Vec3) -> DVec3 {
    v.as_dvec3()
}

/// Triangles with a known answer: a point of the triangle (exact barycentrics), moved off it
/// in a direction that keeps it the closest point (the face normal from inside the face; the
/// outward edge normal plus some face normal from an edge; a direction in a vertex's normal
/// cone from a vertex). The answer and distance come from that construction in f64.
#[test]
fn triangle_matches_analytic_constructions_in_every_region() {
    let mut rng = Rng::new(0xa7a1);
    let mut worst = 0.0f64;
    for case in 0..20_000 {
        let scale = [1e-3f32, 1.0, 1e3][case % 3];
        // Far from the origin (f32 spacing 1e-3 there) only at the larger scales.
        let off = if case % 7 == 0 && scale >= 1.0 { Vec3::splat(1e4) } else { Vec3::ZERO };
        // A well-shaped triangle: every angle at least ~15 degrees.
        let t = loop {
            let t = Triangle::new(rng.vec3(-1.0, 1.0), rng.vec3(-1.0, 1.0), rng.vec3(-1.0, 1.0));
            let [a, b, c] = t.v.map(d);
            let ang = |p: DVec3, q: DVec3, r: DVec3| (q - p).angle_between(r - p);
            if ang(a, b, c).min(ang(b, c, a)).min(ang(c, a, b)) > 0.26 {
                break Triangle::new(t.v[0] * scale + off, t.v[1] * scale + off, t.v[2] * scale + off);
            }
        };
        let [a, b, c] = t.v.map(d);
        let n = (b - a).cross(c - a).normalize();
        let h = f64::from(rng.range(0.0, 2.0)) * f64::from(scale);
        let (truth, p) = match case % 3 {
            0 => {
                // face
                let (u, v) = (f64::from(rng.range(0.05, 0.45)), f64::from(rng.range(0.05, 0.45)));
                let q = a + (b - a) * u + (c - a) * v;
                (q, q + n * h * if rng.below(2) == 0 { 1.0 } else { -1.0 })
            }
            1 => {
                // edge: outward in-plane normal of the edge, plus some face normal
                let k = rng.below(3) as usize;
                let (e0, e1, opp) = [(a, b, c), (b, c, a), (c, a, b)][k];
                let q = e0 + (e1 - e0) * f64::from(rng.range(0.05, 0.95));
                let along = (e1 - e0).normalize();
                let mut out = (q - opp) - along * (q - opp).dot(along);
                out = out.normalize();
                (q, q + out * h + n * h * f64::from(rng.range(-1.0, 1.0)))
            }
            _ => {
                // vertex: away from both adjacent edges
                let k = rng.below(3) as usize;
                let (v0, v1, v2) = [(a, b, c), (b, c, a), (c, a, b)][k];
                let dir = -((v1 - v0).normalize() + (v2 - v0).normalize()).normalize();
                (v0, v0 + dir * h + n * h * f64::from(rng.range(-0.3, 0.3)))
            }
        };
        let pf = p.as_vec3();
        let (q, u, v) = cp::triangle_scalar(pf, &t);
        let size = (b - a).length().max((c - a).length()) + off.length() as f64;
        let dist_truth = (truth - d(pf)).length();
        let dist = (d(q) - d(pf)).length();
        let err = (d(q) - truth).length() / size;
        worst = worst.max(err);
        assert!(err <= 1e-5, "case {case}: {q} vs truth {truth} (p {pf}, {t:?})");
        assert!((dist - dist_truth).abs() <= 1e-5 * size, "case {case}: distance {dist} vs {dist_truth}");
        // The barycentrics reconstruct the point.
        let back = a * (1.0 - f64::from(u) - f64::from(v)) + b * f64::from(u) + c * f64::from(v);
        assert!((back - d(q)).length() <= 1e-5 * size, "case {case}: ({u}, {v}) give {back}, point {q}");
    }
    eprintln!("worst analytic error / size: {worst:e}");
}

/// Dense barycentric sampling (a 200×200 grid) bounds the true distance from above; the
/// kernel's point must lie on the triangle and be no farther than the best sample.
#[test]
fn triangle_is_never_farther_than_dense_sampling() {
    let mut rng = Rng::new(0xde45e);
    const G: usize = 200;
    for case in 0..if cfg!(debug_assertions) { 40 } else { 400 } {
        let t = Triangle::new(rng.vec3(-1.0, 1.0), rng.vec3(-1.0, 1.0), rng.vec3(-1.0, 1.0));
        let p = query_for(&mut rng, &t);
        let [a, b, c] = t.v.map(d);
        let pd = d(p);
        let mut best = f64::INFINITY;
        for i in 0..=G {
            for j in 0..=G - i {
                let (u, v) = (i as f64 / G as f64, j as f64 / G as f64);
                best = best.min((a + (b - a) * u + (c - a) * v - pd).length());
            }
        }
        let (q, u, v) = cp::triangle_scalar(p, &t);
        let size = (b - a).length().max((c - a).length());
        let dist = (d(q) - pd).length();
        assert!(dist <= best + 1e-5 * size, "case {case}: kernel {dist} > sampled {best} ({p}, {t:?})");
        assert!(u >= -1e-5 && v >= -1e-5 && u + v <= 1.0 + 1e-5, "case {case}: barycentrics ({u}, {v})");
        let back = a * (1.0 - f64::from(u) - f64::from(v)) + b * f64::from(u) + c * f64::from(v);
        assert!((back - d(q)).length() <= 1e-5 * size.max(1e-30), "case {case}: point off the triangle");
    }
}

/// The closest point of `a → b` to `p`, in f64.
fn segment_f64(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
    let ab = b - a;
    let l2 = ab.length_squared();
    if l2 == 0.0 { a } else { a + ab * ((p - a).dot(ab) / l2).clamp(0.0, 1.0) }
}

/// The closest point of the triangle to `p`, in f64, without Ericson's regions: the
/// nearest of the three edges' closest points and, where it falls inside (signs of the
/// sub-triangles' areas along the normal), the projection onto the plane.
fn triangle_f64(p: DVec3, [a, b, c]: [DVec3; 3]) -> DVec3 {
    let nearer = |x: DVec3, y: DVec3| if (y - p).length_squared() < (x - p).length_squared() { y } else { x };
    let mut best = nearer(nearer(segment_f64(p, a, b), segment_f64(p, b, c)), segment_f64(p, c, a));
    let n = (b - a).cross(c - a);
    if n.length_squared() > 0.0 {
        let q = p - n * ((p - a).dot(n) / n.length_squared());
        let inside = [(b, c), (c, a), (a, b)].iter().all(|&(x, y)| n.dot((x - q).cross(y - q)) >= 0.0);
        if inside {
            best = nearer(best, q);
        }
    }
    best
}

/// Thin triangles (smallest edge-angle sine from 10⁻¹ down to 10⁻³, not degenerate) keep
/// an accurate distance, as README "Closest points and distances" documents: within 10⁻⁶ of
/// the problem's size (the longest edge or the distance to the first vertex), and the point
/// within `10⁻⁷ · size / sin`, in the scalar twin and every lane of widths 4, 8 and 16
/// (which equal it bit for bit), against a closest point worked out in f64 by the test's own
/// code. Ericson's areas as differences of products of dot products (`d1 d4 − d3 d2`) lost
/// accuracy as `1 / sin²`: the distance was off by up to 5 % of the size at a sine of 10⁻³.
#[test]
fn thin_triangles_keep_an_accurate_distance() {
    let mut rng = Rng::new(0x7417);
    let mut cases = Vec::new();
    for &thin in &[1e-1f32, 1e-2, 1e-3] {
        for _ in 0..if cfg!(debug_assertions) { 2_000 } else { 50_000 } {
            let a = rng.vec3(-1.0, 1.0);
            let along = rng.unit_vec3();
            let len = rng.range(0.5, 2.0);
            let across = rng.unit_vec3().reject_from(along).normalize();
            let b = a + along * len;
            let c = a + along * (len * rng.f32()) + across * (len * thin * rng.range(1.0, 2.0));
            let t = Triangle::new(a, b, c);
            let (u, v) = (rng.f32(), rng.f32());
            let (u, v) = if u + v > 1.0 { (1.0 - u, 1.0 - v) } else { (u, v) };
            let off = t.normal() * (rng.range(-0.5, 0.5) * len) + across * (rng.range(-1.0, 1.0) * len * thin);
            cases.push((a + (b - a) * u + (c - a) * v + off, t));
        }
    }
    for &(p, t) in &cases {
        let sin = min_sine(&t);
        assert!(sin >= 1e-3 * 0.5, "the generator made a sine of {sin:e}");
        check_against_f64("scalar", (p, t), cp::triangle_scalar(p, &t).0, 0.0);
    }
    twins_triangle::<F32x4>(&cases);
    twins_triangle::<F32x8>(&cases);
    twins_triangle::<F32x16>(&cases);
}

/// The smallest sine of a triangle's edge angles, in f64.
fn min_sine(t: &Triangle) -> f64 {
    let [a, b, c] = t.v.map(d);
    [(b - a, c - a), (a - b, c - b), (a - c, b - c)]
        .map(|(x, y)| x.cross(y).length() / (x.length() * y.length()))
        .into_iter()
        .fold(f64::INFINITY, f64::min)
}

/// The documented accuracy of the closest point `q` the kernel gave for `p` on `t`, against
/// an f64 closest point: the distance within `10⁻⁶ · size + extra`, the point within
/// `10⁻⁷ · size / sin + extra` (size: the longest edge or `|p − v0|`).
fn check_against_f64(what: &str, (p, t): (Vec3, Triangle), q: Vec3, extra: f64) {
    let [a, b, c] = t.v.map(d);
    let (pd, sin) = (d(p), min_sine(&t));
    let want = triangle_f64(pd, [a, b, c]);
    let size = (b - a).length().max((c - a).length()).max((c - b).length()).max((pd - a).length());
    let dist_err = ((d(q) - pd).length() - (want - pd).length()).abs();
    assert!(
        dist_err <= 1e-6 * size + extra,
        "{what}: distance off by {dist_err:e} (size {size}, sine {sin:e}) for {p} and {t:?}"
    );
    let point_err = (d(q) - want).length();
    assert!(
        point_err <= 1e-7 * size / sin + extra,
        "{what}: point off by {point_err:e} (size {size}, sine {sin:e}) for {p} and {t:?}"
    );
}

/// Far from the world's origin the distance is `|point − p|` with `point` rounded to f32, so
/// the documented bound (README, "Closest points and distances") adds that rounding: within
/// `10⁻⁶ · size + 2⁻²² · |point|∞` of an f64 closest point (and the point within
/// `10⁻⁷ · size / sin + 2⁻²² · |point|∞`: `v0 + e1·u + e2·v` rounds twice at the size of
/// the coordinates). Triangles of sizes 0.5–2 up to 5,000 units out, in every width. Near
/// the origin the extra term vanishes (the test above).
#[test]
fn far_from_the_origin_the_bound_adds_the_points_rounding() {
    let mut rng = Rng::new(0xfa4);
    let cases: Vec<(Vec3, Triangle)> = (0..if cfg!(debug_assertions) { 2_000 } else { 50_000 })
        .map(|_| {
            let o = rng.vec3(-5000.0, 5000.0);
            let len = rng.range(0.5, 2.0);
            let t = Triangle::new(o, o + rng.unit_vec3() * len, o + rng.unit_vec3() * len);
            (o + rng.vec3(-len, len) * 0.7, t)
        })
        .collect();
    let mut checked = 0;
    for &(p, t) in &cases {
        if t.is_degenerate() || min_sine(&t) < 1e-3 {
            continue;
        }
        let q = cp::triangle_scalar(p, &t).0;
        // Two roundings at the size of the point's largest coordinate.
        check_against_f64("scalar", (p, t), q, 2.0 * f64::from(f32::EPSILON) * f64::from(q.abs().max_element()));
        checked += 1;
    }
    assert!(checked > cases.len() * 9 / 10, "{checked} of {}", cases.len());
    twins_triangle::<F32x4>(&cases);
    twins_triangle::<F32x8>(&cases);
    twins_triangle::<F32x16>(&cases);
}

/// The closest point on a triangle is the same at every scale from 2⁻¹⁰⁰ to 2¹⁰⁰: the point
/// scaled exactly, the barycentrics bit for bit, in both twins (the kernel multiplies its
/// differences by a power of two where the longest lies outside `[2⁻¹², 2¹²]`, which
/// commutes with rounding). Vertices and points lie on a grid of 2⁻¹⁰ in `[-1, 1]`, so no
/// scaled coordinate is subnormal. Before, Ericson's region tests (fourth powers of the sizes)
/// overflowed from about 2³² (every triangle then went to its edges) and the degeneracy test
/// underflowed below about 2⁻³² (a point above the face was given a point on an edge).
#[test]
fn triangle_closest_point_is_the_same_at_every_scale() {
    let mut rng = Rng::new(0x5ca1e);
    let grid = |rng: &mut Rng| (rng.vec3(-1.0, 1.0) * 1024.0).round() / 1024.0;
    let mut cases: Vec<(Vec3, Triangle)> = (0..if cfg!(debug_assertions) { 500 } else { 20_000 })
        .map(|_| {
            let t = Triangle::new(grid(&mut rng), grid(&mut rng), grid(&mut rng));
            (grid(&mut rng), t)
        })
        .collect();
    // Above the face, a collinear triangle, a point on a vertex.
    let t = Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y);
    cases.extend([
        (Vec3::new(0.25, 0.25, 0.5), t),
        (Vec3::new(0.5, 0.5, 0.5), Triangle::new(Vec3::ZERO, Vec3::X * 0.5, Vec3::X)),
        (Vec3::X, t),
    ]);
    let ones: Vec<_> = cases.iter().map(|(p, t)| cp::triangle_scalar(*p, t)).collect();
    assert_eq!(ones[ones.len() - 3], (Vec3::new(0.25, 0.25, 0.0), 0.25, 0.25));
    for k in (-100..=100).step_by(5) {
        let s = 2f32.powi(k);
        let scaled: Vec<(Vec3, Triangle)> =
            cases.iter().map(|(p, t)| (*p * s, Triangle::new(t.v[0] * s, t.v[1] * s, t.v[2] * s))).collect();
        for (i, ((p, t), one)) in scaled.iter().zip(&ones).enumerate() {
            let (q, u, v) = cp::triangle_scalar(*p, t);
            let want = (bits(one.0 * s), one.1.to_bits(), one.2.to_bits());
            assert_eq!((bits(q), u.to_bits(), v.to_bits()), want, "case {i} at 2^{k}: {:?}", cases[i]);
        }
        twins_triangle::<F32x8>(&scaled);
    }
}

/// Degenerate triangles are their hull segment (or point); the truth is the closest point
/// on the segment between the two extreme vertices, in f64.
#[test]
fn degenerate_triangles_give_the_closest_point_of_their_segment() {
    let mut rng = Rng::new(0xde9);
    for case in 0..20_000 {
        let scale = [1e-4f32, 1.0, 1e4][case % 3];
        let a = rng.vec3(-1.0, 1.0) * scale;
        let b = rng.vec3(-1.0, 1.0) * scale;
        let (t, seg) = match case % 4 {
            0 => (Triangle::new(a, a, a), (a, a)),
            1 => (Triangle::new(a, b, b), (a, b)),
            2 => (Triangle::new(a, (a + b) * 0.5, b), (a, b)),
            _ => (Triangle::new((a + b) * 0.5, a, b), (a, b)),
        };
        let p = match rng.below(3) {
            0 => seg.0 + (seg.1 - seg.0) * rng.range(-0.5, 1.5),
            1 => t.v[rng.below(3) as usize],
            _ => (a + b) * 0.5 + rng.vec3(-2.0, 2.0) * scale,
        };
        let (s0, s1, pd) = (d(seg.0), d(seg.1), d(p));
        let ab = s1 - s0;
        let k = if ab.length_squared() > 0.0 { ((pd - s0).dot(ab) / ab.length_squared()).clamp(0.0, 1.0) } else { 0.0 };
        let truth = s0 + ab * k;
        let (q, u, v) = cp::triangle_scalar(p, &t);
        assert!(q.is_finite() && u.is_finite() && v.is_finite(), "case {case}: {q} {u} {v}");
        let size = ab.length() + f64::from(scale);
        assert!(
            ((d(q) - pd).length() - (truth - pd).length()).abs() <= 1e-5 * size,
            "case {case}: {q} vs {truth} for {p} {t:?}"
        );
        assert!((d(q) - truth).length() <= 1e-5 * size, "case {case}: {q} vs {truth}");
    }
}

#[test]
fn sphere_box_and_plane_match_their_analytic_answers() {
    let mut rng = Rng::new(0x5ba);
    for case in 0..50_000 {
        let (p, s) = random_sphere(&mut rng);
        let (q, n) = cp::sphere_scalar(p, &s);
        let (pd, c, r) = (d(p), d(s.center), f64::from(s.radius));
        let truth = if pd == c { c + DVec3::X * r } else { c + (pd - c).normalize() * r };
        let size = r + (pd - c).length() + 1.0;
        assert!((d(q) - truth).length() <= 1e-5 * size, "sphere {case}: {q} vs {truth} ({p} {s:?})");
        let ntruth = if pd == c { DVec3::X } else { (pd - c).normalize() };
        assert!((d(n) - ntruth).length() <= 1e-5, "sphere {case}: normal {n}");

        let (p, b) = random_box(&mut rng);
        let (q, n) = cp::aabb_scalar(p, &b);
        let (pd, lo, hi) = (d(p), d(b.min), d(b.max));
        let inside = (0..3).all(|k| lo[k] <= pd[k] && pd[k] <= hi[k]);
        let dist_truth = if inside {
            (0..3).map(|k| (pd[k] - lo[k]).min(hi[k] - pd[k])).fold(f64::INFINITY, f64::min)
        } else {
            (pd.clamp(lo, hi) - pd).length()
        };
        let dist = (d(q) - pd).length();
        assert!(
            (dist - dist_truth).abs() <= 1e-5 * (1.0 + dist_truth),
            "box {case}: {dist} vs {dist_truth} ({p} {b:?})"
        );
        // On the surface: inside the box with one coordinate on a face, whose normal is n.
        assert!(b.contains(q), "box {case}: {q} outside {b:?}");
        let k = (0..3).find(|&k| n[k] != 0.0).expect("a face normal");
        assert_eq!(n.length(), 1.0, "box {case}: {n}");
        assert_eq!(q[k], if n[k] < 0.0 { b.min[k] } else { b.max[k] }, "box {case}: {q} not on the face of {n}");

        let (p, pl) = random_plane(&mut rng);
        let q = cp::plane_scalar(p, &pl);
        let (pd, nd) = (d(p), d(pl.normal));
        let truth = pd - nd * ((nd.dot(pd) - f64::from(pl.d)) / nd.dot(nd));
        assert!((d(q) - truth).length() <= 1e-5 * (1.0 + pd.length()), "plane {case}: {q} vs {truth}");
    }
    // The documented fixed direction at the centre.
    assert_eq!(cp::sphere_scalar(Vec3::ONE, &Sphere::new(Vec3::ONE, 2.0)), (Vec3::new(3.0, 1.0, 1.0), Vec3::X));
    // Inside a box, the nearest face; a tie goes to the first of -x, +x, -y, +y, -z, +z.
    let b = Aabb::new(Vec3::ZERO, Vec3::new(4.0, 2.0, 6.0));
    assert_eq!(cp::aabb_scalar(Vec3::new(1.0, 1.0, 3.0), &b), (Vec3::new(0.0, 1.0, 3.0), -Vec3::X));
    assert_eq!(cp::aabb_scalar(Vec3::new(2.0, 1.0, 3.0), &b), (Vec3::new(2.0, 0.0, 3.0), -Vec3::Y));
    assert_eq!(cp::aabb_scalar(Vec3::new(2.0, 1.5, 3.0), &b), (Vec3::new(2.0, 2.0, 3.0), Vec3::Y));
    assert_eq!(cp::aabb_scalar(Vec3::new(2.0, 1.0, 5.5), &b), (Vec3::new(2.0, 1.0, 6.0), Vec3::Z));
}

/// The traversal's box distance is never above the kernel distance of a primitive inside the
/// box (what makes the pruning exact).
#[test]
fn box_distance_never_exceeds_the_kernel_distance_of_a_primitive_inside() {
    let mut rng = Rng::new(0xb0b);
    for _ in 0..cases() {
        let t = random_triangle(&mut rng);
        let p = query_for(&mut rng, &t);
        let (q, _, _) = cp::triangle_scalar(p, &t);
        assert!(point_aabb_distance_squared(p, &t.aabb()) <= cp::distance_squared_scalar(p, q), "{p} {t:?}");
        let (p, s) = random_sphere(&mut rng);
        let q = cp::sphere_scalar(p, &s).0;
        assert!(point_aabb_distance_squared(p, &s.aabb()) <= cp::distance_squared_scalar(p, q), "{p} {s:?}");
    }
}

// ---------------------------------------------------------------------------------------
// Scenes.

#[derive(Clone, Copy, Debug)]
enum Shape {
    Tri(Triangle),
    Sphere(Sphere),
    Box(Aabb),
    Plane(Plane),
}

struct World {
    scene: lanecast::Scene,
    /// `(geom, prim, shape)` of every primitive a query may report.
    shapes: Vec<(u32, u32, Shape)>,
    targets: Vec<Vec3>,
    bounds: Aabb,
}

fn random_world(seed: u64, n: usize, scale: f32, planes: bool) -> World {
    let mut rng = Rng::new(seed);
    let at = |rng: &mut Rng| rng.vec3(-10.0, 10.0) * scale;
    let mut b = SceneBuilder::new();
    let mut shapes = Vec::new();
    let mut targets = Vec::new();
    let mut left = n;
    while left > 0 {
        let m = (rng.below(left.min(100) as u64) as usize + 1).min(left);
        left -= m;
        match rng.below(3) {
            0 => {
                let s: Vec<Sphere> = (0..m).map(|_| Sphere::new(at(&mut rng), rng.range(0.05, 1.0) * scale)).collect();
                let g = b.add_spheres(&s).unwrap();
                targets.extend(s.iter().map(|s| s.center));
                shapes.extend(s.iter().enumerate().map(|(i, s)| (g, i as u32, Shape::Sphere(*s))));
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
                targets.extend(bx.iter().flat_map(|b| [b.center(), b.min, b.corner(5)]));
                shapes.extend(bx.iter().enumerate().map(|(i, x)| (g, i as u32, Shape::Box(*x))));
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
                    if rng.f32() < 0.05 {
                        tris.push(Triangle::new(v[0], v[0], v[1])); // degenerate: kept (watertight default)
                    }
                    targets.extend([v[0], (v[0] + v[1]) * 0.5, (v[0] + v[1] + v[2]) / 3.0]);
                }
                let g = b.add_triangles(&tris).unwrap();
                shapes.extend(tris.iter().enumerate().map(|(i, t)| (g, i as u32, Shape::Tri(*t))));
            }
        }
    }
    if planes {
        let pl = Plane::new(rng.unit_vec3(), rng.range(-14.0, -12.0) * scale);
        let g = b.add_plane(pl).unwrap();
        shapes.push((g, 0, Shape::Plane(pl)));
    }
    let bounds = Aabb::new(Vec3::splat(-13.0 * scale), Vec3::splat(13.0 * scale));
    World { scene: b.build().unwrap(), shapes, targets, bounds }
}

/// The reference: every shape with the scalar kernels; smallest squared distance, then
/// smallest `(geom, prim)`; only squared distances `d2` with `sqrt(d2) <= max_distance`.
fn brute_force(w: &World, p: Vec3, max_distance: f32) -> Option<(f32, Vec3, u32, u32, HitKind)> {
    let mut best: Option<(f32, Vec3, u32, u32, HitKind)> = None;
    for &(g, i, s) in &w.shapes {
        let (q, kind) = match s {
            Shape::Tri(t) => (cp::triangle_scalar(p, &t).0, HitKind::Triangle),
            Shape::Sphere(s) => (cp::sphere_scalar(p, &s).0, HitKind::Sphere),
            Shape::Box(b) => (cp::aabb_scalar(p, &b).0, HitKind::Box),
            Shape::Plane(pl) => (cp::plane_scalar(p, &pl), HitKind::Plane),
        };
        let d2 = cp::distance_squared_scalar(p, q);
        let within = d2.sqrt() <= max_distance;
        if !within || d2 > f32::MAX {
            continue;
        }
        if best.is_none_or(|b| d2 < b.0 || (d2 == b.0 && (g, i) < (b.2, b.3))) {
            best = Some((d2, q, g, i, kind));
        }
    }
    best
}

fn query_points(rng: &mut Rng, w: &World, n: usize) -> Vec<Vec3> {
    let size = w.bounds.max - w.bounds.min;
    (0..n)
        .map(|_| match rng.below(4) {
            0 if !w.targets.is_empty() => w.targets[rng.below(w.targets.len() as u64) as usize],
            1 if !w.targets.is_empty() => {
                w.targets[rng.below(w.targets.len() as u64) as usize] + rng.unit_vec3() * size.x * 0.01
            }
            2 => w.bounds.center() + rng.unit_vec3() * size.x * rng.range(1.0, 4.0),
            _ => w.bounds.min + size * rng.vec3(0.0, 1.0),
        })
        .collect()
}

fn check_world(w: &World, points: &[Vec3]) -> usize {
    let scale = (w.bounds.max - w.bounds.min).length();
    let mut ties = 0;
    for &p in points {
        let truth = brute_force(w, p, f32::INFINITY);
        for b in BACKENDS {
            let got = w.scene.closest_point_with(p, b);
            match (truth, got) {
                (None, None) => {}
                (Some((d2, q, g, i, kind)), Some(c)) => {
                    // Identical answers (exact pruning, bitwise twins); the 1e-6 bound below
                    // is the looser promise.
                    assert!((c.distance - d2.sqrt()).abs() <= 1e-6 * scale, "{b:?} {p}: {c:?} vs {d2}");
                    assert_eq!(
                        (c.distance.to_bits(), bits(c.point), c.geom, c.prim, c.kind),
                        (d2.sqrt().to_bits(), bits(q), g, i, kind),
                        "{b:?} at {p}"
                    );
                    // Unit, except for a triangle with exactly collinear vertices (kept by
                    // the watertight default), which has no normal: zero.
                    let collinear = w.shapes.iter().any(|&(sg, si, s)| {
                        (sg, si) == (g, i)
                            && matches!(s, Shape::Tri(t) if {
                                let [a, b2, c2] = t.v.map(|v| v.as_dvec3());
                                (b2 - a).cross(c2 - a) == glam::DVec3::ZERO
                            })
                    });
                    if collinear {
                        assert_eq!(c.normal, Vec3::ZERO, "{b:?}: collinear triangle's normal");
                    } else {
                        assert!((c.normal.length() - 1.0).abs() < 1e-5, "{b:?}: normal {}", c.normal);
                    }
                }
                _ => panic!("{b:?} at {p}: {got:?} vs brute force {truth:?}"),
            }
        }
        if let Some((d2, ..)) = truth {
            let same_d2 = w.shapes.iter().filter(|&&(_, _, s)| {
                let q = match s {
                    Shape::Tri(t) => cp::triangle_scalar(p, &t).0,
                    Shape::Sphere(s) => cp::sphere_scalar(p, &s).0,
                    Shape::Box(b) => cp::aabb_scalar(p, &b).0,
                    Shape::Plane(pl) => cp::plane_scalar(p, &pl),
                };
                cp::distance_squared_scalar(p, q) == d2
            });
            ties += (same_d2.count() > 1) as usize;
        }
    }
    ties
}

#[test]
fn scene_closest_point_equals_brute_force_in_every_backend() {
    let n_points = if cfg!(debug_assertions) { 150 } else { 1500 };
    let mut ties = 0;
    for (seed, n, scale, planes) in [
        (1u64, 1, 1.0, false),
        (2, 7, 1.0, true),
        (3, 60, 1.0, false),
        (4, 400, 1.0, true),
        (5, 2000, 1.0, false),
        (6, 300, 1e4, true),
        (7, 300, 1e-4, false),
    ] {
        let w = random_world(seed, n, scale, planes);
        let mut rng = Rng::new(seed ^ 0x9);
        let points = query_points(&mut rng, &w, n_points);
        ties += check_world(&w, &points);
    }
    // Coincident triangles and shared vertices make ties; the tie rule was exercised.
    assert!(ties > 0, "no ties were exercised");
}

#[test]
fn max_distance_prunes_inclusively_and_agrees_with_brute_force() {
    let w = random_world(11, 500, 1.0, true);
    let mut rng = Rng::new(12);
    let points = query_points(&mut rng, &w, if cfg!(debug_assertions) { 100 } else { 800 });
    for &p in &points {
        let nearest = brute_force(&w, p, f32::INFINITY).map(|b| b.0.sqrt()).unwrap();
        for md in [0.0, nearest, nearest.next_down(), nearest * 0.5, nearest * 2.0, rng.range(0.0, 3.0)] {
            let truth = brute_force(&w, p, md);
            for b in BACKENDS {
                let got = w.scene.closest_point_within_with(p, md, b);
                assert_eq!(got.map(|c| (c.geom, c.prim)), truth.map(|t| (t.2, t.3)), "{b:?} {p} within {md}");
                if let Some(c) = got {
                    assert!(c.distance <= md, "{b:?}: {} > {md}", c.distance);
                }
            }
        }
        // The radius is inclusive: the nearest distance itself finds it.
        assert!(w.scene.closest_point_within(p, nearest).is_some(), "{p} at {nearest}");
        assert!(
            nearest == 0.0 || w.scene.closest_point_within(p, nearest.next_down()).is_none_or(|c| c.distance < nearest)
        );
    }
}

#[test]
fn invalid_input_and_empty_scenes_are_misses() {
    let w = random_world(21, 50, 1.0, false);
    let s = &w.scene;
    for b in BACKENDS {
        for p in [Vec3::NAN, Vec3::new(0.0, f32::INFINITY, 0.0), Vec3::new(f32::NEG_INFINITY, 0.0, 0.0)] {
            assert_eq!(s.closest_point_with(p, b), None, "{b:?} {p}");
        }
        for md in [-1.0, f32::NAN, -0.0f32.next_down()] {
            assert_eq!(s.closest_point_within_with(Vec3::ZERO, md, b), None, "{b:?} {md}");
        }
        assert!(s.closest_point_within_with(Vec3::ZERO, f32::INFINITY, b).is_some());
    }
    assert_eq!(s.distance(Vec3::NAN), f32::INFINITY);
    let empty = SceneBuilder::new().build().unwrap();
    assert_eq!(empty.closest_point(Vec3::ZERO), None);
    assert_eq!(empty.distance(Vec3::ZERO), f32::INFINITY);
    let mut out = [ClosestPoint { distance: 1.0, ..ClosestPoint::MISS }; 2];
    empty.closest_point_batch(&[Vec3::ZERO, Vec3::ONE], &mut out);
    assert_eq!(out, [ClosestPoint::MISS; 2]);
    // Only a degenerate (collinear) triangle: the watertight default keeps it, and its
    // closest points are those of its segment; Möller–Trumbore scenes leave it out.
    let mut b = SceneBuilder::new();
    b.add_triangle(Triangle::new(Vec3::ZERO, Vec3::X, Vec3::X * 2.0)).unwrap();
    assert_eq!(b.clone().build().unwrap().distance(Vec3::Y), 1.0);
    let mt = b.triangle_test(TriangleTest::MollerTrumbore).build().unwrap();
    assert_eq!(mt.distance(Vec3::Y), f32::INFINITY);
    assert!(!ClosestPoint::MISS.is_found());
}

#[test]
fn batches_equal_single_queries_for_any_thread_count() {
    let w = random_world(31, 300, 1.0, true);
    let mut rng = Rng::new(32);
    let mut points = query_points(&mut rng, &w, 700);
    points[5] = Vec3::NAN;
    for b in BACKENDS {
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut out = vec![ClosestPoint { distance: -1.0, ..ClosestPoint::MISS }; points.len()];
            pool.install(|| w.scene.closest_point_batch_with(&points, &mut out, b));
            out
        };
        let (one, three) = (run(1), run(3));
        assert_eq!(one, three, "{b:?}");
        for (p, got) in points.iter().zip(&one) {
            assert_eq!(*got, w.scene.closest_point_with(*p, b).unwrap_or(ClosestPoint::MISS), "{b:?} {p}");
        }
        assert_eq!(one[5], ClosestPoint::MISS);
    }
}

#[test]
fn scene_normals_and_kinds_are_the_surface_normals() {
    let mut b = SceneBuilder::new();
    let tri = b
        .add_triangle(Triangle::new(Vec3::new(0.0, 0.0, 10.0), Vec3::new(1.0, 0.0, 10.0), Vec3::new(0.0, 1.0, 10.0)))
        .unwrap();
    let ball = b.add_sphere(Sphere::new(Vec3::new(10.0, 0.0, 0.0), 1.0)).unwrap();
    let cube = b.add_box(Aabb::new(Vec3::new(-12.0, -1.0, -1.0), Vec3::new(-10.0, 1.0, 1.0))).unwrap();
    let floor = b.add_plane(Plane::new(Vec3::new(0.0, 2.0, 0.0), -40.0)).unwrap();
    let s = b.build().unwrap();
    for be in BACKENDS {
        let c = s.closest_point_with(Vec3::new(0.25, 0.25, 12.0), be).unwrap();
        assert_eq!(
            (c.geom, c.kind, c.point, c.normal, c.distance),
            (tri, HitKind::Triangle, Vec3::new(0.25, 0.25, 10.0), Vec3::Z, 2.0)
        );
        assert_eq!((c.u, c.v), (0.25, 0.25));
        let c = s.closest_point_with(Vec3::new(10.0, 0.0, 0.0), be).unwrap();
        assert_eq!((c.geom, c.kind, c.point, c.normal), (ball, HitKind::Sphere, Vec3::new(11.0, 0.0, 0.0), Vec3::X));
        let c = s.closest_point_with(Vec3::new(-10.5, 0.5, 0.0), be).unwrap();
        assert_eq!((c.geom, c.kind, c.point, c.normal), (cube, HitKind::Box, Vec3::new(-10.0, 0.5, 0.0), Vec3::X));
        let c = s.closest_point_with(Vec3::new(0.0, -19.0, 0.0), be).unwrap();
        assert_eq!(
            (c.geom, c.kind, c.point, c.normal, c.distance),
            (floor, HitKind::Plane, Vec3::new(0.0, -20.0, 0.0), Vec3::Y, 1.0)
        );
    }
}
