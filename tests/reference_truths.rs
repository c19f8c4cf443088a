//! The scalar references against independent truths: textbook configurations with answers
//! worked out by hand, and, for the sweep tests, dense sampling of the motion (no contact
//! before the reported time, contact at it; no contact anywhere when none is reported); and a
//! scene's hit records, whose normals are checked against normals worked out by hand.

use glam::Vec3;
use lanecast::Ray;
use lanecast::kernel::*;
use lanecast::prim::*;
use lanecast::rng::Rng;
use lanecast::vec3x::Vec3x;
use lanecast::{F32x8, Lanes, Mask};

#[test]
fn five_textbook_ray_sphere_configurations() {
    let s = Sphere::new(Vec3::ZERO, 1.0);
    // (a) from outside through the sphere: enters at 4, leaves at 6.
    let a = Ray::new(Vec3::new(-5.0, 0.0, 0.0), Vec3::X);
    assert!(ray_sphere::test_scalar(&a, &s));
    assert_eq!(ray_sphere::intersect_scalar(&a, &s), Some(4.0));
    let x = segment_sphere::crossings_scalar(&a, &s);
    assert_eq!((x.enter.unwrap().t, x.exit.unwrap().t), (4.0, 6.0));
    assert_eq!((x.enter.unwrap().normal, x.exit.unwrap().normal), (-Vec3::X, Vec3::X));
    // (b) from inside: hit at t_min = 0, one crossing (the exit at 1).
    let b = Ray::new(Vec3::ZERO, Vec3::Y * 2.0);
    assert_eq!(ray_sphere::intersect_scalar(&b, &s), Some(0.0));
    let x = segment_sphere::crossings_scalar(&b, &s);
    assert_eq!((x.count(), x.exit.unwrap().t), (1, 0.5));
    // (c) tangent: touches at t = 5 (y = 1 exactly).
    let c = Ray::new(Vec3::new(-5.0, 1.0, 0.0), Vec3::X);
    assert!(ray_sphere::test_scalar(&c, &s));
    assert_eq!(ray_sphere::intersect_scalar(&c, &s), Some(5.0));
    // (d) passes beside: miss.
    let d = Ray::new(Vec3::new(-5.0, 1.5, 0.0), Vec3::X);
    assert!(!ray_sphere::test_scalar(&d, &s));
    assert_eq!(ray_sphere::intersect_scalar(&d, &s), None);
    // (e) sphere behind the origin: miss (the early-out c > 0 && b > 0).
    let e = Ray::new(Vec3::new(5.0, 0.0, 0.0), Vec3::X);
    assert!(!ray_sphere::test_scalar(&e, &s));
    assert_eq!(ray_sphere::intersect_scalar(&e, &s), None);
    // Unnormalised direction: t stays in units of dir.
    let f = Ray::new(Vec3::new(-5.0, 0.0, 0.0), Vec3::X * 4.0);
    assert_eq!(ray_sphere::intersect_scalar(&f, &s), Some(1.0));
    // Segment ending before the sphere: miss; ending inside: hits, one crossing.
    assert_eq!(
        ray_sphere::intersect_scalar(&Ray::segment(Vec3::new(-5.0, 0.0, 0.0), Vec3::new(-2.0, 0.0, 0.0)), &s),
        None
    );
    let g = Ray::segment(Vec3::new(-5.0, 0.0, 0.0), Vec3::new(0.0, 0.0, 0.0));
    assert!(ray_sphere::test_scalar(&g, &s));
    assert_eq!(segment_sphere::crossings_scalar(&g, &s).count(), 1);
}

#[test]
fn invalid_input_is_a_miss() {
    let s = Sphere::new(Vec3::ZERO, 1.0);
    let o = Vec3::new(-5.0, 0.0, 0.0);
    for ray in [
        Ray::new(o, Vec3::ZERO),
        Ray::new(o, Vec3::new(f32::NAN, 0.0, 0.0)),
        Ray::new(Vec3::new(f32::INFINITY, 0.0, 0.0), Vec3::X),
        Ray::with_interval(o, Vec3::X, 2.0, 1.0),
        Ray::with_interval(o, Vec3::X, f32::NAN, 1.0),
        Ray::with_interval(o, Vec3::X, 0.0, f32::NAN),
    ] {
        assert!(!ray.is_valid());
        assert!(Ray::try_new(ray.origin, ray.dir, ray.t_min, ray.t_max).is_err());
        assert_eq!(ray_sphere::intersect_scalar(&ray, &s), None);
        assert_eq!(ray_aabb::intersect_scalar(&ray, &Aabb::new(-Vec3::ONE, Vec3::ONE)), None);
        assert_eq!(ray_triangle::intersect_scalar(&ray, &Triangle::new(Vec3::Y, Vec3::Z, -Vec3::Y)), None);
    }
    let ok = Ray::new(o, Vec3::X);
    assert_eq!(ray_sphere::intersect_scalar(&ok, &Sphere::new(Vec3::ZERO, -1.0)), None);
    assert_eq!(ray_aabb::intersect_scalar(&ok, &Aabb::new(Vec3::ONE, -Vec3::ONE)), None);
    assert_eq!(ray_plane::intersect_scalar(&ok, &Plane::new(Vec3::ZERO, 1.0)), None);
    assert_eq!(Ray::try_new(o, Vec3::ZERO, 0.0, 1.0), Err(lanecast::RayError::DegenerateDirection));
}

#[test]
fn ray_aabb_textbook() {
    let b = Aabb::new(-Vec3::ONE, Vec3::ONE);
    let hit = |o: Vec3, d: Vec3| ray_aabb::intersect_scalar(&Ray::new(o, d), &b);
    assert_eq!(hit(Vec3::new(-3.0, 0.0, 0.0), Vec3::X), Some((2.0, 4.0)));
    assert_eq!(hit(Vec3::ZERO, Vec3::X), Some((0.0, 1.0))); // inside: enters at t_min
    // In a face plane, parallel to it: the closed box is hit, with either sign of zero.
    assert_eq!(hit(Vec3::new(-1.0, -5.0, 0.0), Vec3::new(0.0, 1.0, 0.0)), Some((4.0, 6.0)));
    assert_eq!(hit(Vec3::new(-1.0, -5.0, 0.0), Vec3::new(-0.0, 1.0, -0.0)), Some((4.0, 6.0)));
    assert_eq!(hit(Vec3::new(1.0, 1.0, -5.0), Vec3::new(0.0, -0.0, 1.0)), Some((4.0, 6.0))); // along an edge
    assert_eq!(hit(Vec3::new((-1.0f32).next_down(), -5.0, 0.0), Vec3::Y), None); // just outside
    assert_eq!(hit(Vec3::new(-2.0, -2.0, -2.0), Vec3::ONE), Some((1.0, 3.0))); // through corners
    assert_eq!(hit(Vec3::new(-3.0, 0.0, 0.0), -Vec3::X), None); // behind
}

#[test]
fn ray_triangle_textbook() {
    let tri = Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y);
    let h = ray_triangle::intersect_scalar(&Ray::new(Vec3::new(0.25, 0.5, 2.0), -Vec3::Z), &tri).unwrap();
    assert_eq!((h.t, h.u, h.v), (2.0, 0.25, 0.5));
    // Two-sided: from below too.
    let h = ray_triangle::intersect_scalar(&Ray::new(Vec3::new(0.25, 0.5, -2.0), Vec3::Z * 2.0), &tri).unwrap();
    assert_eq!((h.t, h.u, h.v), (1.0, 0.25, 0.5));
    // Outside the triangle (u + v > 1), parallel to the plane, degenerate triangles.
    assert!(ray_triangle::intersect_scalar(&Ray::new(Vec3::new(0.75, 0.5, 2.0), -Vec3::Z), &tri).is_none());
    assert!(ray_triangle::intersect_scalar(&Ray::new(Vec3::new(0.1, 0.1, 0.0), Vec3::X), &tri).is_none());
    let line = Triangle::new(Vec3::ZERO, Vec3::X, Vec3::X * 2.0);
    assert!(line.is_degenerate());
    assert!(ray_triangle::intersect_scalar(&Ray::new(Vec3::new(0.5, 0.0, 1.0), -Vec3::Z), &line).is_none());
    assert!(tri.normal() == Vec3::Z && !tri.is_degenerate());
}

#[test]
fn ray_plane_textbook() {
    let p = Plane::new(Vec3::Y * 2.0, 2.0); // y = 1
    assert_eq!(ray_plane::intersect_scalar(&Ray::new(Vec3::ZERO, Vec3::Y), &p), Some(1.0));
    assert_eq!(ray_plane::intersect_scalar(&Ray::segment(Vec3::ZERO, Vec3::Y * 4.0), &p), Some(0.25));
    assert_eq!(ray_plane::intersect_scalar(&Ray::segment(Vec3::ZERO, Vec3::Y * 0.5), &p), None);
    assert_eq!(ray_plane::intersect_scalar(&Ray::new(Vec3::Y, Vec3::X), &p), None); // in the plane
}

#[test]
fn aabb_triangle_textbook() {
    let b = Aabb::new(-Vec3::ONE, Vec3::ONE);
    let ov = |a: Vec3, c: Vec3, d: Vec3| aabb_triangle::overlap_scalar(&b, &Triangle::new(a, c, d));
    assert!(ov(Vec3::new(-5.0, 0.0, -5.0), Vec3::new(5.0, 0.0, -5.0), Vec3::new(0.0, 0.0, 5.0))); // cuts through
    assert!(ov(Vec3::new(1.0, 0.0, 0.0), Vec3::new(3.0, 0.0, 0.0), Vec3::new(2.0, 1.0, 0.0))); // touches a face
    assert!(!ov(Vec3::new(1.5, 0.0, 0.0), Vec3::new(3.0, 0.0, 0.0), Vec3::new(2.0, 1.0, 0.0)));
    // Only an edge × axis direction separates: a triangle across the box's (+x,+y) edge,
    // its plane x + y = 2.5 tilted so the face axes and normal overlap.
    assert!(!ov(Vec3::new(2.5, 0.0, -3.0), Vec3::new(0.0, 2.5, -3.0), Vec3::new(1.25, 1.25, 3.0)));
    assert!(ov(Vec3::new(2.0, 0.0, -3.0), Vec3::new(0.0, 2.0, -3.0), Vec3::new(1.0, 1.0, 3.0)));
    // Degenerate triangles: a point inside, a point outside, a segment crossing the box.
    assert!(ov(Vec3::ZERO, Vec3::ZERO, Vec3::ZERO));
    assert!(!ov(Vec3::splat(2.0), Vec3::splat(2.0), Vec3::splat(2.0)));
    assert!(ov(Vec3::new(-3.0, 0.5, 0.5), Vec3::new(3.0, 0.5, 0.5), Vec3::new(3.0, 0.5, 0.5)));
}

// ---------------------------------------------------------------------------------------
// Sweeps by dense sampling.

const SAMPLES: usize = 400;

/// Checks a reported first-contact time against the gap function `gap(t)` (distance between
/// the shapes at time t; <= 0 means contact), sampled densely over [0, 1].
fn check_first_contact(what: &str, toi: Option<f32>, scale: f32, gap: impl Fn(f32) -> f32) {
    let tol = 1e-4 * scale;
    match toi {
        None => {
            for k in 0..=SAMPLES {
                let t = k as f32 / SAMPLES as f32;
                assert!(gap(t) > -tol, "{what}: no contact reported, but gap {} at t = {t}", gap(t));
            }
        }
        Some(t_hit) => {
            assert!((0.0..=1.0).contains(&t_hit), "{what}: time {t_hit} outside [0, 1]");
            assert!(
                gap(t_hit).abs() <= tol || (t_hit == 0.0 && gap(0.0) <= tol),
                "{what}: gap {} at reported t {t_hit}",
                gap(t_hit)
            );
            for k in 0..SAMPLES * (t_hit > 0.0) as usize {
                let t = t_hit * k as f32 / SAMPLES as f32;
                assert!(gap(t) > -tol, "{what}: contact at t = {t} before the reported {t_hit}");
            }
        }
    }
}

#[test]
fn moving_sphere_sphere_by_sampling() {
    let mut rng = Rng::new(5);
    for _ in 0..3000 {
        let a = Sphere::new(rng.vec3(-5.0, 5.0), rng.range(0.1, 1.0));
        let b = Sphere::new(rng.vec3(-5.0, 5.0), rng.range(0.1, 1.0));
        let vb = rng.vec3(-3.0, 3.0);
        let va = vb + (b.center - a.center + rng.vec3(-1.0, 1.0)) * rng.range(0.0, 2.0);
        let toi = moving_sphere_sphere::time_of_impact_scalar(&a, va, &b, vb);
        let gap = |t: f32| ((b.center + vb * t) - (a.center + va * t)).length() - a.radius - b.radius;
        check_first_contact("moving_sphere_sphere", toi, 10.0, gap);
    }
    // Equal velocities: no division by zero; overlapping gives 0, apart gives none.
    let (a, b) = (Sphere::new(Vec3::ZERO, 1.0), Sphere::new(Vec3::X * 1.5, 1.0));
    assert_eq!(moving_sphere_sphere::time_of_impact_scalar(&a, Vec3::Y, &b, Vec3::Y), Some(0.0));
    let far = Sphere::new(Vec3::X * 3.0, 0.5);
    assert_eq!(moving_sphere_sphere::time_of_impact_scalar(&a, Vec3::Y, &far, Vec3::Y), None);
}

#[test]
fn moving_sphere_aabb_by_sampling() {
    let mut rng = Rng::new(6);
    let mut regions = [0usize; 3]; // contacts that end in a face, edge and vertex region
    for _ in 0..4000 {
        let c = rng.vec3(-1.0, 1.0);
        let h = rng.vec3(0.2, 1.5);
        let b = Aabb::new(c - h, c + h);
        let s = Sphere::new(rng.vec3(-6.0, 6.0), rng.range(0.05, 1.0));
        let target = c + h * rng.vec3(-1.0, 1.0).signum() * rng.vec3(0.5, 1.5);
        let v = (target - s.center) * rng.range(0.5, 2.0);
        let toi = moving_sphere_aabb::time_of_impact_scalar(&s, v, &b);
        let gap = |t: f32| overlap::sq_dist_point_aabb(s.center + v * t, &b).sqrt() - s.radius;
        check_first_contact("moving_sphere_aabb", toi, 10.0, gap);
        if let Some(t) = toi {
            let p = s.center + v * t;
            let out = (0..3).filter(|&i| p[i] < b.min[i] || p[i] > b.max[i]).count();
            regions[out.clamp(1, 3) - 1] += 1;
        }
    }
    assert!(regions.iter().all(|&n| n > 50), "every Voronoi case exercised: {regions:?}");
    // Zero velocity: touching now or never.
    let b = Aabb::new(-Vec3::ONE, Vec3::ONE);
    assert_eq!(
        moving_sphere_aabb::time_of_impact_scalar(&Sphere::new(Vec3::new(1.5, 0.0, 0.0), 0.5), Vec3::ZERO, &b),
        Some(0.0)
    );
    assert_eq!(
        moving_sphere_aabb::time_of_impact_scalar(&Sphere::new(Vec3::new(1.5, 1.5, 0.0), 0.5), Vec3::ZERO, &b),
        None
    );
}

#[test]
fn segment_capsule_by_sampling() {
    let mut rng = Rng::new(7);
    for _ in 0..4000 {
        let a = rng.vec3(-2.0, 2.0);
        let bb = if rng.f32() < 0.1 { a } else { a + rng.unit_vec3() * rng.range(0.1, 3.0) };
        let cap = Capsule::new(a, bb, rng.range(0.05, 1.0));
        let p = rng.vec3(-6.0, 6.0);
        let target = a + (bb - a) * rng.range(-0.3, 1.3) + rng.unit_vec3() * cap.radius * rng.range(0.0, 1.5);
        let q = p + (target - p) * rng.range(0.5, 2.0);
        let toi = segment_capsule::intersect_scalar(p, q, &cap);
        let gap = |t: f32| segment_capsule::sq_dist_point_segment(p + (q - p) * t, a, bb).sqrt() - cap.radius;
        check_first_contact("segment_capsule", toi, 10.0, gap);
    }
}

/// A point beside a long segment gets an accurate distance, and a segment starting beside a
/// long capsule is not taken for one starting inside it: segments 1,000–5,000 long, points
/// 0.01–1 from a point of their middle third, against the distance worked out in f64 (within
/// `10⁻⁶` of the segment's length; the textbook `ap·ap − e²/f` lost all of it, since `ap·ap`
/// rounds at a millionth of the length squared). The capsule case is the one a scene sweep
/// met: a ball of radius 0.03 starting 0.2 beside the middle of a 2,100-unit edge had its
/// contact at the start.
#[test]
fn points_beside_long_segments_get_accurate_distances() {
    let mut rng = Rng::new(31);
    for _ in 0..20_000 {
        let a = rng.vec3(-3000.0, 3000.0);
        let b = a + rng.unit_vec3() * rng.range(1000.0, 5000.0);
        let along = a + (b - a) * rng.range(0.33, 0.67);
        let p = along + rng.unit_vec3() * rng.range(0.01, 1.0);
        let (pd, ad, bd) = (p.as_dvec3(), a.as_dvec3(), b.as_dvec3());
        let e = bd - ad;
        let exact = ((pd - ad) - e * ((pd - ad).dot(e) / e.dot(e)).clamp(0.0, 1.0)).length();
        let got = f64::from(segment_capsule::sq_dist_point_segment(p, a, b)).sqrt();
        let tol = 1e-6 * e.length();
        assert!((got - exact).abs() <= tol, "{p} to {a} → {b}: {got} against {exact} (tolerance {tol:.1e})");
    }
    // The sweep's case: 0.2 beside the middle of a 2,100-unit capsule of radius 0.03, moving
    // straight at it; the contact where the distance falls to the radius, in f64 (for the
    // segment as given: its end rounds at the coordinates' size).
    let (a, b) = (Vec3::new(400.5, -2103.6, 982.1), Vec3::new(2500.5, -2003.6, 970.1));
    let axis = (b - a).as_dvec3().normalize();
    let out = axis.cross(glam::DVec3::Z).normalize();
    let p = ((a.as_dvec3() + b.as_dvec3()) / 2.0 + out * 0.2).as_vec3();
    let q = p + (out * -0.4).as_vec3();
    let cap = Capsule::new(a, b, 0.03);
    let m = p.as_dvec3() - a.as_dvec3();
    let across = |v: glam::DVec3| v - axis * v.dot(axis);
    let (m0, v0) = (across(m), across(q.as_dvec3() - p.as_dvec3()));
    let (qa, qb, qc) = (v0.dot(v0), m0.dot(v0), m0.dot(m0) - 0.03f64 * 0.03);
    let want = (-qb - (qb * qb - qa * qc).sqrt()) / qa;
    let got = segment_capsule::intersect_scalar(p, q, &cap).expect("a contact");
    assert!((f64::from(got) - want).abs() <= 1e-5, "t {got} against {want}");
    let lanes = segment_capsule::intersect_lanes(Vec3x::<F32x8>::splat(p), Vec3x::splat(q), &CapsuleLanes::splat(&cap));
    assert!(lanes.0.any() && (f64::from(lanes.1.lane(0)) - want).abs() <= 1e-5, "lanes t {}", lanes.1.lane(0));
}

#[test]
fn moving_aabb_aabb_by_sampling() {
    let mut rng = Rng::new(8);
    for _ in 0..3000 {
        let a = Aabb::new(rng.vec3(-3.0, 0.0), rng.vec3(0.0, 3.0));
        let c = rng.vec3(-6.0, 6.0);
        let h = rng.vec3(0.1, 1.5);
        let b = Aabb::new(c - h, c + h);
        let va = if rng.f32() < 0.1 { Vec3::ZERO } else { rng.vec3(-2.0, 2.0) };
        let vb = va + (a.center() - c + rng.vec3(-2.0, 2.0)) * rng.range(0.0, 2.0);
        let r = moving_aabb_aabb::time_of_impact_scalar(&a, va, &b, vb);
        // Gap: largest per-axis separation (<= 0 when the boxes overlap).
        let gap = |t: f32| {
            let (am, ax) = (a.min + va * t, a.max + va * t);
            let (bm, bx) = (b.min + vb * t, b.max + vb * t);
            (0..3).map(|i| (bm[i] - ax[i]).max(am[i] - bx[i])).fold(f32::NEG_INFINITY, f32::max)
        };
        check_first_contact("moving_aabb_aabb first", r.map(|x| x.0), 10.0, gap);
        if let Some((t0, t1)) = r {
            assert!(t0 <= t1 && t1 <= 1.0);
            assert!(gap(t1) <= 1e-3, "still overlapping at t_last {t1}");
            if t1 < 1.0 {
                assert!(gap((t1 + 1e-3).min(1.0)) > -1e-3, "t_last {t1} is not where they separate");
            }
        }
    }
}

/// Closed boundaries are part of the contract, so they are checked exactly in every width
/// (the random comparisons treat exact-boundary cases as rounding-dependent).
fn closed_boundaries<L: lanecast::Lanes>() {
    use lanecast::{Mask, RayPacket};
    let hyp_mid = Ray::new(Vec3::new(0.5, 0.5, 1.0), -Vec3::Z);
    let tri = Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y);
    let (m, t, u, v) = ray_triangle::intersect_lanes(&RayPacket::<L>::splat(&hyp_mid), &TriangleLanes::splat(&tri));
    assert!(m.all() && t.lane(0) == 1.0 && u.lane(0) == 0.5 && v.lane(0) == 0.5, "{}", L::NAME);
    let vertex = Ray::new(Vec3::new(1.0, 0.0, 1.0), -Vec3::Z);
    assert!(ray_triangle::intersect_lanes(&RayPacket::<L>::splat(&vertex), &TriangleLanes::splat(&tri)).0.all());
    let b = Aabb::new(-Vec3::ONE, Vec3::ONE);
    let in_face = Ray::new(Vec3::new(-1.0, -5.0, 0.0), Vec3::new(-0.0, 1.0, 0.0));
    let (m, t0, t1) = ray_aabb::intersect_lanes(&RayPacket::<L>::splat(&in_face), &AabbLanes::splat(&b));
    assert!(m.all() && t0.lane(0) == 4.0 && t1.lane(0) == 6.0, "{}", L::NAME);
    let tangent = Ray::new(Vec3::new(-5.0, 1.0, 0.0), Vec3::X);
    let s = Sphere::new(Vec3::ZERO, 1.0);
    let (m, t) = ray_sphere::intersect_lanes(&RayPacket::<L>::splat(&tangent), &SphereLanes::splat(&s));
    assert!(m.all() && t.lane(0) == 5.0, "{}", L::NAME);
}

#[test]
fn closed_boundaries_in_every_width() {
    closed_boundaries::<f32>();
    closed_boundaries::<lanecast::F32x4>();
    closed_boundaries::<lanecast::F32x8>();
}

/// A scene hit carries its primitive's unit geometric normal, on every backend, in packets and
/// in batches: a triangle's `(v1 - v0) × (v2 - v0)` normalised (worked out by hand below), a
/// sphere's outward normal at the hit point, a box's outward face normal and a plane's
/// normalised normal, each written out by hand.
#[test]
fn scene_hits_carry_each_kinds_unit_geometric_normal() {
    use lanecast::scene::PacketScratch;
    use lanecast::{Backend, F32x8, HitKind, HitPacket, HitSoa, RayPacket, RaySoa, SceneBuilder};
    let mut b = SceneBuilder::new();
    // A tilted triangle: e1 = (0, 1, 0), e2 = (1, 0, 1), e1 × e2 = (1, 0, -1).
    b.add_triangle(Triangle::new(Vec3::new(0.0, 0.0, 5.0), Vec3::new(0.0, 1.0, 5.0), Vec3::new(1.0, 0.0, 6.0)))
        .unwrap();
    b.add_sphere(Sphere::new(Vec3::new(10.0, 0.0, 0.0), 2.0)).unwrap();
    b.add_box(Aabb::new(Vec3::new(20.0, 0.0, 0.0), Vec3::new(22.0, 2.0, 2.0))).unwrap();
    // x = -50, normal given 3 long.
    b.add_plane(Plane::new(Vec3::new(-3.0, 0.0, 0.0), 150.0)).unwrap();
    let scene = b.build().unwrap();
    let s = std::f64::consts::FRAC_1_SQRT_2 as f32;
    let cases = [
        // Through the triangle's interior point (0.25, 0.25, 5.25), from above.
        (Ray::new(Vec3::new(0.25, 0.25, 20.0), -Vec3::Z), HitKind::Triangle, Vec3::new(s, 0.0, -s)),
        (Ray::new(Vec3::new(10.0, 0.0, 10.0), -Vec3::Z), HitKind::Sphere, Vec3::Z),
        (Ray::new(Vec3::new(10.0, 10.0, 0.0), -Vec3::Y), HitKind::Sphere, Vec3::Y),
        (Ray::new(Vec3::new(21.0, 1.0, 10.0), -Vec3::Z), HitKind::Box, Vec3::Z),
        (Ray::new(Vec3::new(30.0, 1.0, 1.0), -Vec3::X), HitKind::Box, Vec3::X),
        (Ray::new(Vec3::new(-40.0, 3.0, 3.0), -Vec3::X), HitKind::Plane, -Vec3::X),
    ];
    let check = |h: lanecast::Hit, kind: HitKind, n: Vec3, how: &str| {
        assert_eq!(h.kind, kind, "{how}");
        assert!((h.normal - n).length() <= 1e-6, "{how}: {kind:?} normal {} against {n}", h.normal);
    };
    for &(ray, kind, n) in &cases {
        for backend in [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16] {
            let h = scene.intersect_with(&ray, backend).expect("every case hits");
            check(h, kind, n, &format!("{backend:?}"));
        }
    }
    let rays: Vec<Ray> = cases.iter().map(|c| c.0).collect();
    let mut out = HitPacket::<F32x8>::default();
    scene.intersect_packet(&RayPacket::<F32x8>::from_rays(&rays).unwrap(), &mut out, &mut PacketScratch::default());
    let soa = RaySoa::from_rays(&rays);
    let mut batch = HitSoa::default();
    scene.intersect_batch(&soa, &mut batch);
    for (i, &(_, kind, n)) in cases.iter().enumerate() {
        check(out.lane(i), kind, n, "packet");
        check(batch.get(i), kind, n, "batch");
    }
}

/// A scene's sphere hit normal is as accurate as the problem's own size allows (the distance
/// from the ray's origin to the sphere), not the size of the coordinates: a sphere of radius
/// 0.068 about 1,200 units from the world's origin, hit from 0.3 units away, on every backend,
/// in packets and in batches, against the normal worked out in f64 from the same inputs.
/// From the rounded point `origin + t·dir` the normal was off by 4·10⁻⁴.
#[test]
fn a_small_sphere_far_out_gets_an_accurate_hit_normal() {
    use lanecast::scene::PacketScratch;
    use lanecast::{Backend, F32x8, HitPacket, HitSoa, RayPacket, RaySoa, SceneBuilder};
    let sphere = Sphere::new(Vec3::new(341.94904, -518.03754, -993.8335), 0.06806368);
    let ray = Ray::new(Vec3::new(341.78333, -518.2074, -994.04065), Vec3::new(5.438191, 4.032181, 6.5136685));
    let mut b = SceneBuilder::new();
    b.add_sphere(sphere).unwrap();
    let scene = b.build().unwrap();
    // f64: the first root of |m + t·d|² = r², and (m + t·d) / r there.
    let f = |v: Vec3| [f64::from(v.x), f64::from(v.y), f64::from(v.z)];
    let (o, d, c, r) = (f(ray.origin), f(ray.dir), f(sphere.center), f64::from(sphere.radius));
    let m = [o[0] - c[0], o[1] - c[1], o[2] - c[2]];
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (qa, qb, qc) = (dot(d, d), dot(m, d), dot(m, m) - r * r);
    let t = (-qb - (qb * qb - qa * qc).sqrt()) / qa;
    let want =
        Vec3::new(((m[0] + t * d[0]) / r) as f32, ((m[1] + t * d[1]) / r) as f32, ((m[2] + t * d[2]) / r) as f32);
    // The documented scale of a normal's error: 1e-5 of (1 + problem size / radius).
    let tol = 1e-5 * (1.0 + ((ray.origin - sphere.center).length() + sphere.radius) / sphere.radius);
    let check = |h: Option<lanecast::Hit>, how: &str| {
        let n = h.unwrap_or_else(|| panic!("{how}: a miss")).normal;
        assert!((n - want).abs().max_element() <= tol, "{how}: normal {n} against {want} (tolerance {tol})");
    };
    for backend in [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16] {
        check(scene.intersect_with(&ray, backend), &format!("{backend:?}"));
    }
    let rays = vec![ray; 8];
    let mut out = HitPacket::<F32x8>::default();
    scene.intersect_packet(&RayPacket::<F32x8>::from_rays(&rays).unwrap(), &mut out, &mut PacketScratch::default());
    let mut batch = HitSoa::default();
    scene.intersect_batch(&RaySoa::from_rays(&rays), &mut batch);
    for i in 0..8 {
        check(Some(out.lane(i)), &format!("packet lane {i}"));
        check(Some(batch.get(i)), &format!("batch ray {i}"));
    }
}
