//! The moving sphere–triangle kernel (`kernel::moving_sphere_triangle`): analytic cases,
//! its lanes twin against the scalar reference lane by lane (random worlds at three scales
//! and the edge cases), and dense sampling of the motion against an independent f64
//! sphere–triangle distance written here; contacts far from the origin against f64 normals,
//! and a point's (`r = 0`) face normal.
//!
//! Tolerance of the twin (what the module documents): hit/miss agree except within rounding
//! of tangency (at most 1 case in 10⁴ here); where both hit, `toi` agrees within 2⁻¹⁴ (the
//! motion is the unit of time) or, on a grazing approach, the distance approached along the
//! contact normal within 10⁻⁵ of the world's scale; the contact point agrees within 10⁻³ of
//! the world's scale.

use glam::{DVec3, Vec3};
use lanecast::kernel::moving_sphere_triangle::{SweepContact, sweep_lanes, sweep_scalar};
use lanecast::prim::{Soa, Triangle};
use lanecast::rng::Rng;
use lanecast::vec3x::Vec3x;
use lanecast::{F32x4, F32x8, Lanes, Mask};

#[derive(Clone, Copy, Debug)]
struct Case {
    c: Vec3,
    r: f32,
    m: Vec3,
    tri: Triangle,
}

fn scalar(k: &Case) -> Option<SweepContact> {
    sweep_scalar(k.c, k.r, k.m, &k.tri)
}

fn vecs<L: Lanes>(v: &[Vec3]) -> Vec3x<L> {
    let mut c = [[0.0f32; 8]; 3];
    for (i, p) in v.iter().enumerate() {
        for k in 0..3 {
            c[k][i] = p[k];
        }
    }
    Vec3x::load(&c[0], &c[1], &c[2], 0)
}

/// The lanes answers of up to `L::N` cases, one per lane.
fn lanes<L: Lanes>(cases: &[Case]) -> Vec<Option<SweepContact>> {
    let c = vecs::<L>(&cases.iter().map(|k| k.c).collect::<Vec<_>>());
    let m = vecs::<L>(&cases.iter().map(|k| k.m).collect::<Vec<_>>());
    let mut r = [0.0f32; 8];
    for (i, k) in cases.iter().enumerate() {
        r[i] = k.r;
    }
    let tris = Soa::from_slice(&cases.iter().map(|k| k.tri).collect::<Vec<_>>());
    let (hit, toi, point, normal) = sweep_lanes(c, L::load(&r), m, &tris.lanes::<L>(0));
    let bits = hit.bitmask();
    (0..cases.len())
        .map(|i| {
            for v in [toi.lane(i), point.lane(i).x, normal.lane(i).y] {
                assert!(!v.is_nan(), "lane {i} of {:?}: NaN", cases[i]);
            }
            (bits >> i & 1 == 1).then(|| SweepContact {
                toi: toi.lane(i),
                point: point.lane(i),
                normal: normal.lane(i),
            })
        })
        .collect()
}

/// Compares every case at widths 4 and 8; returns the hit/miss disagreements.
fn compare(cases: &[Case], scale: f32) -> usize {
    let mut flips = 0;
    for w in [4usize, 8] {
        for chunk in cases.chunks(w) {
            let got = if w == 4 { lanes::<F32x4>(chunk) } else { lanes::<F32x8>(chunk) };
            for (k, g) in chunk.iter().zip(got) {
                match (scalar(k), g) {
                    (None, None) => {}
                    (Some(a), Some(b)) => {
                        // A grazing approach moves the time of impact a lot for a tiny change of
                        // distance: the gate is on the distance approached along the normal.
                        let dt = (a.toi - b.toi).abs();
                        let ok = dt <= 1.0 / 16384.0 || dt * a.normal.dot(k.m).abs() <= 1e-5 * scale;
                        assert!(ok, "{k:?}: toi {} vs {}", a.toi, b.toi);
                        assert!((a.point - b.point).length() <= 1e-3 * scale, "{k:?}: {a:?} vs {b:?}");
                        if a.normal != Vec3::ZERO {
                            assert!(a.normal.dot(b.normal) > 0.99, "{k:?}: {a:?} vs {b:?}");
                        }
                    }
                    _ => flips += 1,
                }
            }
        }
    }
    flips
}

fn random_cases(seed: u64, n: usize, scale: f32) -> Vec<Case> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let mut v = || rng.vec3(-1.0, 1.0) * scale;
            let tri = if i % 16 == 0 {
                // degenerate: three collinear points
                let (a, b) = (v(), v());
                Triangle::new(a, b, a + (b - a) * 0.25)
            } else {
                Triangle::new(v(), v(), v())
            };
            let c = v() * 2.0;
            // Aimed near a point of the triangle, falling short or overshooting.
            let noise = v() * 0.3;
            let (a, b) = (rng.f32(), rng.f32());
            let (a, b) = if a + b > 1.0 { (1.0 - a, 1.0 - b) } else { (a, b) };
            let target = tri.v[0] + (tri.v[1] - tri.v[0]) * a + (tri.v[2] - tri.v[0]) * b + noise;
            let m = (target - c) * (0.5 + 1.5 * rng.f32());
            let r = rng.f32() * 0.5 * scale;
            Case { c, r, m: if i % 32 == 1 { Vec3::ZERO } else { m }, tri }
        })
        .collect()
}

#[test]
fn lanes_agree_with_the_scalar_reference_on_random_worlds() {
    for (seed, scale) in [(1u64, 1.0f32), (2, 1e-3), (3, 1e4)] {
        let cases = random_cases(seed, 100_000, scale);
        let hits = cases.iter().filter(|k| scalar(k).is_some()).count();
        assert!(hits > 20_000 && hits < 95_000, "scale {scale}: {hits} hits: the worlds should mix hits and misses");
        let flips = compare(&cases, scale);
        println!("scale {scale}: {hits} hits in 10^5 cases, {flips} hit/miss disagreements in 2·10^5 lane comparisons");
        assert!(flips <= 20, "scale {scale}: {flips} hit/miss disagreements in 2·10^5 comparisons");
    }
}

// ---------------------------------------------------------------------------------------
// Independent f64 distance and dense sampling.

fn closest_on_segment(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
    let d = b - a;
    let l2 = d.length_squared();
    if l2 == 0.0 {
        return a;
    }
    a + d * ((p - a).dot(d) / l2).clamp(0.0, 1.0)
}

/// Distance from `p` to the triangle, f64: the foot of the perpendicular when it falls
/// inside, otherwise the nearest edge.
fn distance(p: DVec3, t: &Triangle) -> f64 {
    let [a, b, c] = t.v.map(|v| v.as_dvec3());
    let n = (b - a).cross(c - a);
    if n.length_squared() > 0.0 {
        let foot = p - n * ((p - a).dot(n) / n.length_squared());
        let inside = [(a, b), (b, c), (c, a)].iter().all(|&(u, w)| (w - u).cross(foot - u).dot(n) >= 0.0);
        if inside {
            return (p - foot).length();
        }
    }
    [(a, b), (b, c), (c, a)]
        .iter()
        .map(|&(u, w)| (p - closest_on_segment(p, u, w)).length())
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn dense_sampling_finds_no_earlier_contact_and_contact_at_the_time_of_impact() {
    let mut checked = 0;
    for (seed, scale) in [(11u64, 1.0f32), (12, 1e-3), (13, 1e4)] {
        for k in random_cases(seed, 20_000, scale) {
            let (c, m, r) = (k.c.as_dvec3(), k.m.as_dvec3(), k.r as f64);
            let tol = 1e-4 * scale as f64;
            let end = match scalar(&k) {
                Some(h) => {
                    let d = distance(c + m * h.toi as f64, &k.tri);
                    if h.toi > 0.0 {
                        assert!((d - r).abs() <= tol, "{k:?}: distance {d} at toi {} vs r {r}", h.toi);
                    } else {
                        assert!(d <= r + tol, "{k:?}: toi 0 but distance {d}");
                    }
                    assert!((distance(h.point.as_dvec3(), &k.tri)) <= tol, "{k:?}: contact point off the triangle");
                    checked += 1;
                    h.toi as f64
                }
                None => 1.0,
            };
            for s in 0..=256 {
                let t = end * s as f64 / 256.0;
                if t < end {
                    let d = distance(c + m * t, &k.tri);
                    assert!(d >= r - tol, "{k:?}: overlap {d} < {r} at t = {t} before toi {end}");
                }
            }
        }
    }
    assert!(checked > 10_000, "only {checked} contacts checked");
}

// ---------------------------------------------------------------------------------------
// Edge cases with known answers (each also through both lanes widths).

fn unit() -> Triangle {
    Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y)
}

fn check(k: Case, want: Option<(f32, Vec3, Vec3)>) {
    let got = scalar(&k);
    match (got, want) {
        (None, None) => {}
        (Some(g), Some((toi, point, normal))) => {
            let s = k.c.abs().max_element().max(1.0);
            assert!((g.toi - toi).abs() <= 1e-5, "{k:?}: toi {} want {toi}", g.toi);
            assert!((g.point - point).length() <= 1e-5 * s, "{k:?}: point {} want {point}", g.point);
            assert!((g.normal - normal).length() <= 1e-4, "{k:?}: normal {} want {normal}", g.normal);
        }
        _ => panic!("{k:?}: got {got:?}, want {want:?}"),
    }
    assert_eq!(compare(&[k], k.c.abs().max_element().max(1.0)), 0, "{k:?}: lanes disagree");
}

#[test]
fn known_contacts() {
    let t = unit();
    // The face, from above and from below (two-sided).
    check(
        Case { c: Vec3::new(0.25, 0.25, 2.0), r: 0.5, m: Vec3::new(0.0, 0.0, -3.0), tri: t },
        Some((0.5, Vec3::new(0.25, 0.25, 0.0), Vec3::Z)),
    );
    check(
        Case { c: Vec3::new(0.25, 0.25, -2.0), r: 0.5, m: Vec3::new(0.0, 0.0, 3.0), tri: t },
        Some((0.5, Vec3::new(0.25, 0.25, 0.0), -Vec3::Z)),
    );
    // Moving away, and parallel to the face above it: no contact.
    check(Case { c: Vec3::new(0.25, 0.25, 2.0), r: 0.5, m: Vec3::new(0.0, 0.0, 3.0), tri: t }, None);
    check(Case { c: Vec3::new(-2.0, 0.25, 1.0), r: 0.5, m: Vec3::new(4.0, 0.0, 0.0), tri: t }, None);
    // Parallel to the face within reach of it: the edge x = 0 is met first.
    check(
        Case { c: Vec3::new(-2.0, 0.25, 0.3), r: 0.5, m: Vec3::new(4.0, 0.0, 0.0), tri: t },
        Some(((2.0 - 0.4) / 4.0, Vec3::new(0.0, 0.25, 0.0), Vec3::new(-0.8, 0.0, 0.6))),
    );
    // Through an edge, in the triangle's plane.
    check(
        Case { c: Vec3::new(0.5, -2.0, 0.0), r: 0.5, m: Vec3::new(0.0, 3.0, 0.0), tri: t },
        Some((0.5, Vec3::new(0.5, 0.0, 0.0), -Vec3::Y)),
    );
    // At a vertex, from the outer corner.
    let d = Vec3::new(-1.0, -1.0, 0.0).normalize();
    let s = (2f32.sqrt() - 0.5) / (2.0 * 2f32.sqrt());
    check(
        Case { c: Vec3::new(-1.0, -1.0, 0.0), r: 0.5, m: Vec3::new(2.0, 2.0, 0.0), tri: t },
        Some((s, Vec3::ZERO, d)),
    );
    // Touching at the start (distance exactly r), and overlapping.
    check(
        Case { c: Vec3::new(0.25, 0.25, 0.5), r: 0.5, m: Vec3::new(1.0, 0.0, 0.0), tri: t },
        Some((0.0, Vec3::new(0.25, 0.25, 0.0), Vec3::Z)),
    );
    check(
        Case { c: Vec3::new(0.25, 0.25, 0.1), r: 0.5, m: Vec3::ZERO, tri: t },
        Some((0.0, Vec3::new(0.25, 0.25, 0.0), Vec3::Z)),
    );
    // Zero motion apart: never.
    check(Case { c: Vec3::new(0.25, 0.25, 2.0), r: 0.5, m: Vec3::ZERO, tri: t }, None);
    // Falls short: contact would be at t = 1.5.
    check(Case { c: Vec3::new(0.25, 0.25, 2.0), r: 0.5, m: Vec3::new(0.0, 0.0, -1.0), tri: t }, None);
    // A point (r = 0) through the face: the face normal towards the start.
    check(
        Case { c: Vec3::new(0.25, 0.25, 1.0), r: 0.0, m: Vec3::new(0.0, 0.0, -2.0), tri: t },
        Some((0.5, Vec3::new(0.25, 0.25, 0.0), Vec3::Z)),
    );
    // A degenerate triangle is its segment.
    let line = Triangle::new(Vec3::ZERO, Vec3::X, Vec3::new(2.0, 0.0, 0.0));
    check(
        Case { c: Vec3::new(0.5, 0.0, 2.0), r: 0.5, m: Vec3::new(0.0, 0.0, -3.0), tri: line },
        Some((0.5, Vec3::new(0.5, 0.0, 0.0), Vec3::Z)),
    );
}

/// The same worlds at every scale from 2⁻⁶⁰ to 2⁶⁰ give the same contact: the time of
/// impact and the normal bit for bit, the point scaled exactly, in both twins, which also
/// agree with each other at every scale. The sweep works on the problem relative to `v0`,
/// multiplied by a power of two where its largest length lies outside `[2⁻¹², 2¹²]`
/// (`kernel::scale`). Before, the closest-point routine (fourth powers of the sizes) and the
/// edges' capsule body (eighth powers) underflowed and overflowed: the lanes twin reported a
/// contact at the start from 2²⁰ up, the scalar one from 2³², and neither met an edge's
/// middle from 2¹⁶ up or below 2⁻¹⁶. At 2⁻³⁴ and 2⁻⁴⁰ the f32 `|e1 × e2|²` of these
/// triangles is subnormal or zero, which once cost the face (see `unit_face_normal`).
#[test]
fn huge_and_tiny_scales() {
    let t = |s: f32| Triangle::new(Vec3::ZERO, Vec3::X * s, Vec3::Y * s);
    let worlds = |s: f32| {
        [
            // Through the face.
            Case { c: Vec3::new(0.25, 0.25, 2.0) * s, r: 0.5 * s, m: Vec3::new(0.0, 0.0, -3.0) * s, tri: t(s) },
            // Tilted, nothing a power of two.
            Case {
                c: Vec3::new(0.3, 0.4, 2.0) * s,
                r: 0.25 * s,
                m: Vec3::new(0.05, -0.02, -3.0) * s,
                tri: Triangle::new(Vec3::ZERO, Vec3::new(1.0, 0.0, 0.3) * s, Vec3::new(0.1, 1.0, 0.7) * s),
            },
            // Moving in the triangle's plane onto the middle of the edge v0 v1 (a capsule body).
            Case { c: Vec3::new(0.5, -2.0, 0.1) * s, r: 0.5 * s, m: Vec3::new(0.0, 3.0, 0.0) * s, tri: t(s) },
            // A point (r = 0) landing exactly on the face: the face normal is the contact normal.
            Case { c: Vec3::new(0.25, 0.25, 1.0) * s, r: 0.0, m: Vec3::new(0.0, 0.0, -2.0) * s, tri: t(s) },
            // Away from a triangle translated off the origin (the sweep translates by v0).
            Case {
                c: Vec3::new(3.5, 1.25, 2.0) * s,
                r: 0.5 * s,
                m: Vec3::new(0.0, 0.0, -3.0) * s,
                tri: Triangle::new(
                    Vec3::new(3.0, 1.0, 0.0) * s,
                    Vec3::new(4.0, 1.0, 0.0) * s,
                    Vec3::new(3.0, 2.0, 0.0) * s,
                ),
            },
        ]
    };
    let ones: Vec<SweepContact> = worlds(1.0).iter().map(|k| scalar(k).expect("a contact at scale 1")).collect();
    let ones_lanes = lanes::<F32x8>(&worlds(1.0));
    let edge = (2.0 - 0.24f32.sqrt()) / 3.0;
    for (one, want) in ones.iter().zip([Some(0.5), None, Some(edge), Some(0.5), Some(0.5)]) {
        if let Some(w) = want {
            assert!((one.toi - w).abs() <= 1e-6, "{one:?}: want toi {w}");
        }
    }
    assert_eq!(ones[3].normal, Vec3::Z);
    assert_eq!(compare(&worlds(1.0), 1.0), 0);
    for k in (-60..=60).step_by(2) {
        let s = 2f32.powi(k);
        let w = worlds(s);
        let got_lanes = lanes::<F32x8>(&w);
        for (i, k3) in w.iter().enumerate() {
            let (one, h) = (ones[i], scalar(k3));
            let want = SweepContact { point: one.point * s, ..one };
            assert_eq!(h, Some(want), "world {i} at 2^{k}: scalar");
            let one_l = ones_lanes[i].unwrap();
            assert_eq!(
                got_lanes[i],
                Some(SweepContact { point: one_l.point * s, ..one_l }),
                "world {i} at 2^{k}: lanes"
            );
        }
        assert_eq!(compare(&w, s), 0, "2^{k}");
    }
    // Scales that are not powers of two: the same times within the twins' tolerance.
    for s in [1e-3f32, 7e-21, 1e4, 3e19] {
        for (i, k3) in worlds(s).iter().enumerate() {
            let h = scalar(k3).unwrap();
            assert!((h.toi - ones[i].toi).abs() <= 1e-5, "world {i} at {s}: {h:?}");
            assert!((h.point - ones[i].point * s).length() <= 1e-5 * s, "world {i} at {s}: {h:?}");
        }
        assert_eq!(compare(&worlds(s), s), 0, "{s}");
    }
}

#[test]
fn invalid_input_never_touches() {
    let t = unit();
    let ok = Case { c: Vec3::new(0.25, 0.25, 2.0), r: 0.5, m: Vec3::new(0.0, 0.0, -3.0), tri: t };
    assert!(scalar(&ok).is_some());
    let bad = [
        Case { c: Vec3::new(f32::NAN, 0.25, 2.0), ..ok },
        Case { m: Vec3::new(0.0, 0.0, f32::NEG_INFINITY), ..ok },
        Case { r: -0.5, ..ok },
        Case { r: f32::NAN, ..ok },
        Case { r: f32::INFINITY, ..ok },
        Case { tri: Triangle::new(Vec3::ZERO, Vec3::new(f32::INFINITY, 0.0, 0.0), Vec3::Y), ..ok },
        Case { tri: Triangle::new(Vec3::ZERO, Vec3::X, Vec3::new(0.0, f32::NAN, 0.0)), ..ok },
    ];
    for k in bad {
        assert_eq!(scalar(&k), None, "{k:?}");
        assert_eq!(lanes::<F32x8>(&[k, ok])[0], None, "{k:?}");
        assert!(lanes::<F32x4>(&[ok, k])[0].is_some());
    }
    // ±0 motion components are a zero motion.
    let z = Case { c: Vec3::new(0.25, 0.25, 0.2), m: Vec3::new(-0.0, 0.0, -0.0), ..ok };
    assert_eq!(scalar(&z).map(|h| h.toi), Some(0.0));
}

/// A point (`r = 0`) gets the face normal turned towards its start, in both twins (module
/// docs): random tilted triangles near the origin and 2,000 units out, points swept through
/// their faces. The gap between a point and its contact is only the rounding of `toi`; taken
/// as the normal, it pointed anywhere (nearly every one of these cases).
#[test]
fn a_point_gets_the_face_normal_towards_its_start() {
    let mut rng = Rng::new(404);
    let mut cases = Vec::new();
    for far in [0.0f32, 2000.0] {
        for _ in 0..400 {
            let o = rng.vec3(-far, far);
            let tri = Triangle::new(o + rng.vec3(-1.0, 1.0), o + rng.vec3(-1.0, 1.0), o + rng.vec3(-1.0, 1.0));
            let [a, b, c] = tri.v;
            let target = a * 0.3 + b * 0.3 + c * 0.4;
            let start = o + rng.vec3(-3.0, 3.0);
            if tri.normal().dot(start - a).abs() < 0.05 {
                continue; // a path along the plane enters through an edge: a point misses it
            }
            cases.push(Case { c: start, r: 0.0, m: (target - start) * 1.5, tri });
        }
    }
    let mut contacts = 0;
    for chunk in cases.chunks(8) {
        let answers =
            [chunk.iter().map(scalar).collect(), lanes::<F32x4>(&chunk[..chunk.len().min(4)]), lanes::<F32x8>(chunk)];
        for (twin, got) in answers.iter().enumerate() {
            for (k, g) in chunk.iter().zip(got) {
                let n = k.tri.normal();
                if n == Vec3::ZERO {
                    continue;
                }
                let want = if n.dot(k.c - k.tri.v[0]) < 0.0 { -n } else { n };
                let g = g.unwrap_or_else(|| panic!("{k:?}: twin {twin} missed the face"));
                contacts += usize::from(twin == 0);
                assert!((g.normal - want).length() <= 1e-6, "{k:?}, twin {twin}: normal {} against {want}", g.normal);
            }
        }
    }
    assert!(contacts > 700, "{contacts}");
}

/// Far from the world's origin the contact rounds at the problem's size (module docs, "Scale"):
/// a ball of radius 0.03 about 1,400 units out meets a triangle of size 0.3 on its face, an
/// edge and a vertex; in both twins the normal is within 10⁻⁵ of the direction, worked out
/// in f64 at the reported `toi`, from that feature to the centre, and the point within two
/// f32 steps of the feature's closest point. From the absolute centre at `toi` the normals
/// were off by about `ulp(1400) / 0.03 ≈ 4·10⁻³`.
#[test]
fn contacts_far_from_the_origin_round_at_the_problems_size() {
    let o = Vec3::new(1400.3718, -1203.612, 977.1309);
    let tri =
        Triangle::new(o + Vec3::new(0.1, 0.02, 0.05), o + Vec3::new(0.4, 0.07, -0.03), o + Vec3::new(0.18, 0.33, 0.11));
    let [a, b, c] = tri.v.map(Vec3::as_dvec3);
    let n = (b - a).cross(c - a).normalize();
    let g = (a + b + c) / 3.0;
    let out = (b - a).cross(n).normalize();
    let away = (c - g).normalize();
    // (start, motion, the offset from the feature to a point x).
    type Gap = Box<dyn Fn(DVec3) -> DVec3>;
    let e = (b - a).normalize();
    let cases: [(DVec3, DVec3, Gap); 3] = [
        (g + n * 0.2, n * -0.4 + e * 0.03, Box::new(move |x: DVec3| n * n.dot(x - a))),
        ((a + b) / 2.0 + out * 0.2 + n * 0.01, out * -0.4, Box::new(move |x: DVec3| (x - a) - e * (x - a).dot(e))),
        (c + away * 0.2 + n * 0.005, away * -0.4, Box::new(move |x: DVec3| x - c)),
    ];
    let ks: Vec<Case> =
        cases.iter().map(|(start, m, _)| Case { c: start.as_vec3(), r: 0.03, m: m.as_vec3(), tri }).collect();
    let answers = [ks.iter().map(scalar).collect(), lanes::<F32x4>(&ks), lanes::<F32x8>(&ks)];
    for (twin, got) in answers.iter().enumerate() {
        for ((k, (_, _, gap)), h) in ks.iter().zip(&cases).zip(got) {
            let h = h.unwrap_or_else(|| panic!("twin {twin}: no contact for {k:?}"));
            let x = k.c.as_dvec3() + k.m.as_dvec3() * f64::from(h.toi);
            let want = gap(x).normalize();
            let err = (h.normal.as_dvec3() - want).abs().max_element();
            assert!(err <= 1e-5, "twin {twin}, {k:?}: normal {} against {want} (off {err:.1e})", h.normal);
            let point = x - gap(x);
            let off = (h.point.as_dvec3() - point).abs().max_element();
            assert!(
                off <= 2.0 * f64::from(f32::EPSILON) * point.abs().max_element(),
                "twin {twin}: point off {off:.1e}"
            );
        }
    }
}
