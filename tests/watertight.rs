//! The watertight triangle test and the queries built on it.
//!
//! * Lanes twins against the scalar reference, bit for bit, on seeded random sets and on
//!   adversarial rays (through vertices and edges, ±0 directions, NaN/inf, degenerate
//!   triangles, huge and tiny scales).
//! * Reference truths of the tie rule on small hand-made meshes.
//! * **Leaks**: closed meshes (icospheres at several subdivision levels, scales 1e-3 … 1e3,
//!   offsets up to 1e4; a long box of thin triangles with high-valence fans at its ends; a
//!   UV sphere with high-valence poles), rays from inside at random, aimed exactly at
//!   vertices and at edge midpoints: no ray may miss, and every ray from inside crosses an
//!   odd number of times. The meshes are built here, from their definitions, not by the
//!   crate. `cargo test --release` runs 1.21·10^5 rays per backend; the soak
//!   (`cargo test --release --test watertight -- --ignored`) runs 10^7.
//! * **Parity**: `contains` against the analytic inside of those convex meshes (the
//!   intersection of their faces' half-spaces, evaluated in f64) for 10^6 points, and
//!   `signed_distance` (sign and size) on a sample of them.

use glam::{DVec3, Vec3};
use lanecast::kernel::watertight::{self, ShearedLanes, ShearedRay};
use lanecast::prim::{Soa, Triangle, TriangleLanes};
use lanecast::rng::Rng;
use lanecast::scene::Backend;
use lanecast::vec3x::Vec3x;
use lanecast::{F32x4, F32x8, F32x16, Lanes, Mask, Ray, RayPacket, Scene, SceneBuilder, TriangleTest};
use std::collections::HashMap;

const BACKENDS: [Backend; 4] = [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16];

// ---------------------------------------------------------------------------------------
// Closed meshes, built from their definitions.

/// An indexed triangle mesh.
#[derive(Clone)]
struct Mesh {
    name: String,
    pos: Vec<[f32; 3]>,
    idx: Vec<[u32; 3]>,
}

impl Mesh {
    fn v(&self, i: u32) -> Vec3 {
        Vec3::from(self.pos[i as usize])
    }
    fn tri(&self, t: &[u32; 3]) -> Triangle {
        Triangle::new(self.v(t[0]), self.v(t[1]), self.v(t[2]))
    }
    /// Every edge is shared by exactly two triangles, once in each direction.
    fn assert_closed(&self) {
        let mut edges: HashMap<(u32, u32), i32> = HashMap::new();
        for t in &self.idx {
            for k in 0..3 {
                *edges.entry((t[k], t[(k + 1) % 3])).or_default() += 1;
            }
        }
        for (&(a, b), &n) in &edges {
            assert_eq!(n, 1, "{}: edge {a}->{b} used {n} times", self.name);
            assert_eq!(edges.get(&(b, a)), Some(&1), "{}: edge {a}->{b} has no twin", self.name);
        }
    }
    /// Scaled then moved (in f32, per vertex: shared vertices stay shared).
    fn placed(&self, scale: f32, offset: Vec3) -> Mesh {
        let pos = self.pos.iter().map(|p| (Vec3::from(*p) * scale + offset).to_array()).collect();
        Mesh { name: format!("{} x{scale} at {offset}", self.name), pos, idx: self.idx.clone() }
    }
    /// The scene of this mesh alone.
    fn scene(&self, test: TriangleTest) -> Scene {
        let mut b = SceneBuilder::new().triangle_test(test);
        b.add_mesh(&self.pos, &self.idx).unwrap();
        b.build().unwrap()
    }
    /// Centroid of the vertices (inside for the convex meshes here), in f64.
    fn centre(&self) -> DVec3 {
        self.pos.iter().map(|p| Vec3::from(*p).as_dvec3()).sum::<DVec3>() / self.pos.len() as f64
    }
    /// The largest extent.
    fn size(&self) -> f64 {
        let (mut lo, mut hi) = (DVec3::splat(f64::MAX), DVec3::splat(f64::MIN));
        for p in &self.pos {
            lo = lo.min(Vec3::from(*p).as_dvec3());
            hi = hi.max(Vec3::from(*p).as_dvec3());
        }
        (hi - lo).max_element()
    }
    /// Signed distances of `p` to every face plane (outward normals), in f64; the maximum
    /// is < 0 exactly inside a convex mesh.
    fn max_plane_distance(&self, p: DVec3) -> f64 {
        self.idx
            .iter()
            .map(|t| {
                let [a, b, c] = t.map(|i| self.v(i).as_dvec3());
                let n = (b - a).cross(c - a).normalize();
                n.dot(p - a)
            })
            .fold(f64::MIN, f64::max)
    }
}

/// The icosahedron subdivided `levels` times, vertices on the unit sphere, outward winding.
fn icosphere(levels: u32) -> Mesh {
    let g = (1.0 + 5f64.sqrt()) / 2.0;
    let mut pos: Vec<DVec3> = [
        (-1.0, g, 0.0),
        (1.0, g, 0.0),
        (-1.0, -g, 0.0),
        (1.0, -g, 0.0),
        (0.0, -1.0, g),
        (0.0, 1.0, g),
        (0.0, -1.0, -g),
        (0.0, 1.0, -g),
        (g, 0.0, -1.0),
        (g, 0.0, 1.0),
        (-g, 0.0, -1.0),
        (-g, 0.0, 1.0),
    ]
    .iter()
    .map(|&(x, y, z)| DVec3::new(x, y, z).normalize())
    .collect();
    let mut idx: Vec<[u32; 3]> = vec![
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    for _ in 0..levels {
        let mut mid: HashMap<(u32, u32), u32> = HashMap::new();
        let mut next = Vec::with_capacity(idx.len() * 4);
        for t in &idx {
            let mut m = [0u32; 3];
            for k in 0..3 {
                let (a, b) = (t[k], t[(k + 1) % 3]);
                let key = (a.min(b), a.max(b));
                m[k] = *mid.entry(key).or_insert_with(|| {
                    pos.push(((pos[a as usize] + pos[b as usize]) * 0.5).normalize());
                    pos.len() as u32 - 1
                });
            }
            next.push([t[0], m[0], m[2]]);
            next.push([t[1], m[1], m[0]]);
            next.push([t[2], m[2], m[1]]);
            next.push(m);
        }
        idx = next;
    }
    let mesh =
        Mesh { name: format!("icosphere {levels}"), pos: pos.iter().map(|p| p.as_vec3().to_array()).collect(), idx };
    // Outward: the first face's normal points away from the centre.
    let t = mesh.tri(&mesh.idx[0]);
    assert!(t.scaled_normal().dot(t.v[0]) > 0.0);
    mesh
}

/// A box `length` long with a square cross-section of side 1, its sides cut into `4k` long
/// thin triangles' worth of strips (two per strip) and each end a fan of `4k` triangles
/// around a centre vertex (valence `4k`).
fn thin_box(length: f32, k: u32) -> Mesh {
    let n = 4 * k;
    // The square's perimeter, counter-clockwise seen from +x.
    let ring: Vec<(f32, f32)> = (0..n)
        .map(|i| {
            let side = i / k;
            let f = (i % k) as f32 / k as f32 - 0.5;
            match side {
                0 => (f, -0.5),
                1 => (0.5, f),
                2 => (-f, 0.5),
                _ => (-0.5, -f),
            }
        })
        .collect();
    let mut pos = Vec::new();
    for x in [0.0, length] {
        for &(y, z) in &ring {
            pos.push([x, y, z]);
        }
    }
    let (c0, c1) = (2 * n, 2 * n + 1);
    pos.push([0.0, 0.0, 0.0]);
    pos.push([length, 0.0, 0.0]);
    let mut idx = Vec::new();
    for i in 0..n {
        let j = (i + 1) % n;
        let (a0, b0, a1, b1) = (i, j, n + i, n + j);
        // Side strip (outward), two long thin triangles.
        idx.push([a0, b0, b1]);
        idx.push([a0, b1, a1]);
        // Ends: x = 0 faces -x, x = length faces +x.
        idx.push([c0, b0, a0]);
        idx.push([c1, a1, b1]);
    }
    Mesh { name: format!("thin box {length} k{k}"), pos, idx }
}

/// A UV sphere: `rings` latitude bands, `segments` longitudes; the poles have valence
/// `segments`.
fn uv_sphere(rings: u32, segments: u32) -> Mesh {
    let mut pos = vec![[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]];
    for r in 1..rings {
        let th = std::f64::consts::PI * r as f64 / rings as f64;
        for s in 0..segments {
            let ph = 2.0 * std::f64::consts::PI * s as f64 / segments as f64;
            pos.push([(th.sin() * ph.cos()) as f32, (th.sin() * ph.sin()) as f32, th.cos() as f32]);
        }
    }
    let at = |r: u32, s: u32| 2 + (r - 1) * segments + s % segments;
    let mut idx = Vec::new();
    for s in 0..segments {
        idx.push([0, at(1, s), at(1, s + 1)]);
        idx.push([1, at(rings - 1, s + 1), at(rings - 1, s)]);
        for r in 1..rings - 1 {
            idx.push([at(r, s), at(r + 1, s), at(r + 1, s + 1)]);
            idx.push([at(r, s), at(r + 1, s + 1), at(r, s + 1)]);
        }
    }
    Mesh { name: format!("uv sphere {rings}x{segments}"), pos, idx }
}

/// The meshes of the leak and parity tests.
fn closed_meshes() -> Vec<Mesh> {
    let mut out = Vec::new();
    for (levels, scale, offset) in [
        (1, 1.0, Vec3::ZERO),
        (3, 1.0, Vec3::ZERO),
        (4, 1.0, Vec3::ZERO),
        (3, 1e3, Vec3::ZERO),
        (3, 1e-3, Vec3::ZERO),
        (3, 1.0, Vec3::splat(1000.0)),
        (2, 10.0, Vec3::new(1e4, -1e4, 1e4)),
        (3, 1e-3, Vec3::splat(1.0)),
    ] {
        out.push(icosphere(levels).placed(scale, offset));
    }
    out.push(thin_box(100.0, 16));
    out.push(thin_box(1000.0, 4).placed(1.0, Vec3::new(-500.0, 3.0, 7.0)));
    out.push(uv_sphere(24, 128));
    for m in &out {
        m.assert_closed();
    }
    out
}

// ---------------------------------------------------------------------------------------
// Rays from inside.

/// `n` rays from points well inside `m` (between the centre and a third of the way to a
/// vertex): a third at random, a third aimed exactly at vertices, a third at edge
/// midpoints.
fn inside_rays(m: &Mesh, n: usize, seed: u64) -> Vec<Ray> {
    let mut rng = Rng::new(seed);
    let c = m.centre().as_vec3();
    (0..n)
        .map(|i| {
            let a = m.v(rng.below(m.pos.len() as u64) as u32);
            let o = c + (a - c) * rng.range(0.0, 0.33);
            let t = m.idx[rng.below(m.idx.len() as u64) as usize];
            let target = match i % 3 {
                0 => o + rng.unit_vec3(),
                1 => m.v(t[rng.below(3) as usize]),
                _ => {
                    let k = rng.below(3) as usize;
                    (m.v(t[k]) + m.v(t[(k + 1) % 3])) * 0.5
                }
            };
            Ray::new(o, target - o)
        })
        .collect()
}

/// Misses and even crossing counts of `rays` (all from inside) in `scene`.
fn leaks(scene: &Scene, rays: &[Ray], backend: Backend) -> (usize, usize) {
    let mut misses = 0;
    let mut even = 0;
    for r in rays {
        misses += scene.intersect_with(r, backend).is_none() as usize;
        even += scene.count_intersections_with(r, backend).is_multiple_of(2) as usize;
    }
    (misses, even)
}

fn leak_run(rays_per_mesh: usize) {
    let mut total = 0usize;
    let mut mt_misses = 0usize;
    let mut mt_even = 0usize;
    for (k, m) in closed_meshes().iter().enumerate() {
        let rays = inside_rays(m, rays_per_mesh, 0x1eaf + k as u64);
        total += rays.len();
        let scene = m.scene(TriangleTest::Watertight);
        for b in BACKENDS {
            let (misses, even) = leaks(&scene, &rays, b);
            assert_eq!((misses, even), (0, 0), "{} ({b:?}): misses, even counts from inside", m.name);
        }
        let mt = m.scene(TriangleTest::MollerTrumbore);
        let (mm, me) = leaks(&mt, &rays, Backend::X8);
        eprintln!(
            "{:32} {} rays: watertight 0 misses; Möller–Trumbore {mm} misses, {me} even counts",
            m.name,
            rays.len()
        );
        mt_misses += mm;
        mt_even += me;
    }
    eprintln!("total {total} rays: Möller–Trumbore {mt_misses} misses, {mt_even} even counts");
    // The rays are adversarial: the classic test does leak on them.
    assert!(mt_misses > 0 && mt_even > 0, "the aimed rays no longer find Möller–Trumbore's leaks");
}

/// Found by the 10^7-ray soak: a ray from inside the 1000-long thin box leaves through the
/// long edge where the y = 3.5 and z = 6.5 sides meet. The kernel decides in sheared ray
/// space, whose rounding (about an ulp of the 500-unit coordinates) put the hit just outside
/// the claimed triangle's exact box, and the binary and 4-wide trees culled it (the x8 tree
/// found it). Fixed by the BVH's widened triangle boxes (`watertight::traversal_bounds`):
/// with the exact boxes back, this test fails.
#[test]
fn thin_box_edge_ray_from_the_soak() {
    let m = &closed_meshes()[9];
    let ray = Ray::new(
        Vec3::from_array([3206432869u32, 1077933535, 1088421240].map(f32::from_bits)),
        Vec3::from_array([1062091891u32, 1054257064, 3201714800].map(f32::from_bits)),
    );
    let scene = m.scene(TriangleTest::Watertight);
    for b in BACKENDS {
        assert_eq!(scene.count_intersections_with(&ray, b), 1, "{b:?}");
    }
}

#[test]
fn closed_meshes_do_not_leak() {
    leak_run(11_000);
}

#[test]
#[ignore = "soak: 10^7 rays; run with cargo test --release --test watertight -- --ignored"]
fn closed_meshes_do_not_leak_soak() {
    leak_run(10_000_000usize.div_ceil(11));
}

// ---------------------------------------------------------------------------------------
// Parity.

#[test]
fn contains_matches_the_analytic_inside() {
    let meshes = closed_meshes();
    let per_mesh = 1_000_000usize.div_ceil(meshes.len());
    let mut checked = 0usize;
    for (k, m) in meshes.iter().enumerate() {
        let scene = m.scene(TriangleTest::Watertight);
        let (c, size) = (m.centre(), m.size());
        let mut rng = Rng::new(0xc0de + k as u64);
        let points: Vec<Vec3> = (0..per_mesh)
            .map(|i| {
                let v = m.v(rng.below(m.pos.len() as u64) as u32).as_dvec3();
                let p = match i % 4 {
                    // anywhere in 1.5x the bounds
                    0 | 1 => c + (rng.vec3(-0.75, 0.75).as_dvec3()) * size,
                    // near a vertex, just inside or just outside
                    2 => c + (v - c) * (1.0 + (rng.f32() as f64 - 0.5) * 1e-3),
                    // near a face centre
                    _ => {
                        let t = m.idx[rng.below(m.idx.len() as u64) as usize].map(|i| m.v(i).as_dvec3());
                        let f = (t[0] + t[1] + t[2]) / 3.0;
                        c + (f - c) * (1.0 + (rng.f32() as f64 - 0.5) * 1e-3)
                    }
                };
                p.as_vec3()
            })
            .collect();
        let mut got = vec![false; points.len()];
        scene.contains_batch(&points, &mut got);
        // The batch forms of the signed distance, on every 64th point (checked below).
        let sample: Vec<Vec3> = points.iter().step_by(64).copied().collect();
        let mut signed = vec![0.0f32; sample.len()];
        scene.signed_distance_batch(&sample, &mut signed);
        let mut closest = vec![lanecast::ClosestPoint::MISS; sample.len()];
        scene.signed_closest_point_batch_with(&sample, &mut closest, Backend::X4);
        for (i, (p, g)) in points.iter().zip(&got).enumerate() {
            let d = m.max_plane_distance(p.as_dvec3());
            if d.abs() <= 1e-5 * size {
                continue; // too near the surface to call
            }
            checked += 1;
            assert_eq!(*g, d < 0.0, "{}: contains({p}) (plane distance {d:e}, point {i})", m.name);
            if i % 64 == 0 {
                for b in [Backend::Scalar, Backend::X4] {
                    assert_eq!(scene.contains_with(*p, b), *g, "{} {b:?}: contains({p})", m.name);
                }
                // The signed distance: negative exactly inside, its size the distance, and
                // for a convex mesh at least the distance to the nearest face plane outside
                // and the distance to the nearest face plane inside (within rounding).
                let sd = scene.signed_distance(*p);
                assert_eq!(sd < 0.0, d < 0.0, "{}: signed_distance({p}) = {sd}", m.name);
                assert_eq!(signed[i / 64].to_bits(), sd.to_bits(), "{}: signed_distance_batch", m.name);
                let c = scene.closest_point(*p).unwrap();
                assert_eq!((closest[i / 64].distance.to_bits(), closest[i / 64].point), (sd.to_bits(), c.point));
                assert_eq!(sd.abs(), scene.distance(*p));
                let slack = 1e-5 * size + 1e-6 * p.as_dvec3().length();
                if d < 0.0 {
                    assert!((sd as f64 + d.abs()).abs() <= slack, "{}: inside {sd} vs plane {d}", m.name);
                } else {
                    assert!(sd as f64 >= d - slack, "{}: outside {sd} vs plane {d}", m.name);
                }
            }
        }
    }
    assert!(checked > 900_000, "only {checked} points were far enough from the surface");
}

// ---------------------------------------------------------------------------------------
// Tie rule: reference truths.

/// A unit square in z = 0 of two triangles sharing the diagonal (0,0)-(1,1), both facing +z.
fn square() -> Mesh {
    Mesh {
        name: "square".into(),
        pos: vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
        idx: vec![[0, 1, 2], [0, 2, 3]],
    }
}

/// A fan of `n` triangles around (0,0,0) in z = 0, all facing +z.
fn fan(n: u32) -> Mesh {
    let mut pos = vec![[0.0, 0.0, 0.0]];
    for i in 0..n {
        let a = std::f64::consts::TAU * i as f64 / n as f64;
        pos.push([a.cos() as f32, a.sin() as f32, 0.0]);
    }
    let idx = (0..n).map(|i| [0, 1 + i, 1 + (i + 1) % n]).collect();
    Mesh { name: format!("fan {n}"), pos, idx }
}

#[test]
fn a_shared_edge_or_vertex_is_crossed_once() {
    let sq = square().scene(TriangleTest::Watertight);
    let fan = fan(7).scene(TriangleTest::Watertight);
    for dz in [-1.0f32, 1.0] {
        // Through the diagonal's midpoint and its end points, straight and slanted.
        for (x, y) in [(0.5, 0.5), (0.25, 0.25), (0.75, 0.75)] {
            for tilt in [Vec3::ZERO, Vec3::new(0.3, -0.2, 0.0), Vec3::new(-0.125, 0.5, 0.0)] {
                let ray = Ray::new(Vec3::new(x, y, 0.0) - (Vec3::Z * dz + tilt), Vec3::Z * dz + tilt);
                for b in BACKENDS {
                    assert_eq!(sq.count_intersections_with(&ray, b), 1, "{b:?}: square diagonal {ray:?}");
                }
            }
        }
        // Through the fan's centre (valence 7) and along its spokes.
        for tilt in [Vec3::ZERO, Vec3::new(0.2, 0.1, 0.0), Vec3::new(-0.4, 0.3, 0.0)] {
            for target in [Vec3::ZERO, Vec3::new(0.5, 0.0, 0.0)] {
                let ray = Ray::new(target - (Vec3::Z * dz + tilt), Vec3::Z * dz + tilt);
                for b in BACKENDS {
                    assert_eq!(fan.count_intersections_with(&ray, b), 1, "{b:?}: fan {ray:?}");
                }
            }
        }
    }
    // With Möller–Trumbore the same diagonal ray is counted twice (both triangles accept
    // an edge hit): what the tie rule fixes.
    let mt = square().scene(TriangleTest::MollerTrumbore);
    let ray = Ray::new(Vec3::new(0.5, 0.5, -1.0), Vec3::Z);
    assert_eq!(mt.count_intersections(&ray), 2);
}

#[test]
fn a_silhouette_edge_is_touched_zero_or_two_times() {
    // A tent: two triangles meeting at the ridge y = 0, z = 1, sloping down on either side.
    let tent = Mesh {
        name: "tent".into(),
        pos: vec![
            [0.0, 0.0, 1.0],
            [1.0, 0.0, 1.0],
            [0.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, -1.0, 0.0],
            [1.0, -1.0, 0.0],
        ],
        idx: vec![[0, 2, 1], [1, 2, 3], [0, 1, 4], [1, 5, 4]],
    }
    .scene(TriangleTest::Watertight);
    // Rays in the plane z = 1 grazing the ridge, crossing it sideways.
    for x in [0.25f32, 0.5, 0.75] {
        for (dx, dy) in [(0.0, 1.0), (0.3, 1.0), (0.0, -1.0), (-0.2, -1.0)] {
            let dir = Vec3::new(dx, dy, 0.0);
            let ray = Ray::new(Vec3::new(x, 0.0, 1.0) - dir, dir);
            for b in BACKENDS {
                let n = tent.count_intersections_with(&ray, b);
                assert!(n == 0 || n == 2, "{b:?}: {n} hits grazing the ridge with {ray:?}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Kernel: lanes twins against the scalar reference.

type Res = Option<(u32, u32, u32)>;

fn scalar(ray: &Ray, tri: &Triangle) -> Res {
    watertight::intersect_scalar(ray, tri).map(|h| (h.t.to_bits(), h.u.to_bits(), h.v.to_bits()))
}

/// Lane `i` of a result as [`Res`].
fn lane<L: Lanes>(r: &(L::Mask, L, L, L), i: usize) -> Res {
    r.0.lane(i).then(|| (r.1.lane(i).to_bits(), r.2.lane(i).to_bits(), r.3.lane(i).to_bits()))
}

/// Vertex `k` of every triangle as lanes.
fn column<L: Lanes>(tris: &[Triangle], k: usize) -> Vec3x<L> {
    let get = |a: usize| tris.iter().map(|t| t.v[k][a]).collect::<Vec<f32>>();
    Vec3x::load(&get(0), &get(1), &get(2), 0)
}

/// Every lane of both lanes forms against the scalar reference, `N` cases at a time.
fn check_lanes<L: Lanes>(cases: &[(Ray, Triangle)]) {
    for chunk in cases.chunks(L::N) {
        let mut rays = vec![Ray::new(Vec3::ZERO, Vec3::ZERO); L::N];
        let mut tris = vec![Triangle::new(Vec3::NAN, Vec3::NAN, Vec3::NAN); L::N];
        for (k, (r, t)) in chunk.iter().enumerate() {
            rays[k] = *r;
            tris[k] = *t;
        }
        let packet = RayPacket::<L>::from_rays(&rays).unwrap();
        let tl = TriangleLanes::<L>::new(column(&tris, 0), column(&tris, 1), column(&tris, 2));
        let got = watertight::intersect_lanes(&ShearedLanes::new(&packet), &tl);
        for (k, (r, t)) in chunk.iter().enumerate() {
            assert_eq!(lane::<L>(&got, k), scalar(r, t), "{} lanes, lane {k}: {r:?} {t:?}", L::N);
        }
        // One ray against the chunk's triangles in the single-ray form.
        let ray = chunk[0].0;
        if let Some(s) = ShearedRay::new(&ray) {
            let soa = Soa::from_slice(&tris);
            let one = watertight::intersect_lanes_one_ray(
                &s,
                ray.t_min,
                ray.t_max,
                &soa.triangle_lanes_in::<L>(0, s.axes),
                L::Mask::from_bitmask((1 << chunk.len()) - 1),
            );
            for (k, (_, t)) in chunk.iter().enumerate() {
                assert_eq!(lane::<L>(&one, k), scalar(&ray, t), "{} lanes one ray, lane {k}: {ray:?} {t:?}", L::N);
            }
        }
    }
}

fn check_all_widths(cases: &[(Ray, Triangle)]) {
    check_lanes::<f32>(cases);
    check_lanes::<F32x4>(cases);
    check_lanes::<F32x8>(cases);
    check_lanes::<F32x16>(cases);
}

/// Random triangles and rays, a quarter aimed exactly at a vertex or edge point.
fn random_cases(seed: u64, n: usize, scale: f32, offset: Vec3) -> Vec<(Ray, Triangle)> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|i| {
            let c = rng.vec3(-1.0, 1.0) * scale + offset;
            let tri =
                Triangle::new(c + rng.unit_vec3() * scale, c + rng.unit_vec3() * scale, c + rng.unit_vec3() * scale);
            let o = c + rng.unit_vec3() * (3.0 * scale);
            let target = match i % 4 {
                0 => tri.v[rng.below(3) as usize],
                1 => (tri.v[0] + tri.v[1]) * 0.5,
                _ => c + rng.vec3(-1.0, 1.0) * scale,
            };
            let (t_min, t_max) = if i % 5 == 0 { (0.5, 0.9) } else { (0.0, f32::INFINITY) };
            (Ray::with_interval(o, target - o, t_min, t_max), tri)
        })
        .collect()
}

/// The set-up of Woop et al., from its definition with plain indexing: `kz` the first axis
/// of largest `|d|`, `kx`, `ky` the next two (cyclically), swapped when `d[kz] < 0`.
fn sheared_by_definition(o: Vec3, d: Vec3) -> ([usize; 3], [f32; 3], [f32; 3]) {
    let (o, d) = (o.to_array(), d.to_array());
    let mut kz = 0;
    for k in 1..3 {
        if d[k].abs() > d[kz].abs() {
            kz = k;
        }
    }
    let (mut kx, mut ky) = ((kz + 1) % 3, (kz + 2) % 3);
    if d[kz] < 0.0 {
        std::mem::swap(&mut kx, &mut ky);
    }
    ([kx, ky, kz], [d[kx] / d[kz], d[ky] / d[kz], 1.0 / d[kz]], [o[kx], o[ky], o[kz]])
}

#[test]
fn the_shear_set_up_follows_its_definition_bit_for_bit() {
    let mut rng = Rng::new(0x5_4ea2);
    let mut dirs = vec![
        // Ties between axes (the first wins), signed zeros, one component only, both signs,
        // huge and tiny (as far as a valid ray goes: |d|² must stay a positive finite f32).
        Vec3::new(1.0, 1.0, 1.0),
        Vec3::new(-1.0, 1.0, -1.0),
        Vec3::new(0.5, -2.0, 2.0),
        Vec3::new(-0.0, 0.0, -3.0),
        Vec3::new(0.0, -0.0, 1e-15),
        Vec3::new(-1e15, 0.0, -0.0),
        Vec3::new(0.0, -7.0, -0.0),
        Vec3::new(1e-18, -1e-18, 0.0),
        Vec3::new(1e18, -1e18, 1.0),
    ];
    for _ in 0..4000 {
        let scale = 10f32.powi(rng.below(31) as i32 - 15);
        let mut d = rng.vec3(-1.0, 1.0) * scale;
        if rng.below(4) == 0 {
            // Exact ties in magnitude, with random signs.
            let m = d.abs().max_element();
            d = Vec3::new(m.copysign(d.x), m.copysign(d.y), d.z);
        }
        dirs.push(d);
    }
    let mut axes_seen = [[false; 2]; 3];
    for (i, &d) in dirs.iter().enumerate() {
        let o = Vec3::new(1.0 + i as f32, -2.0 * i as f32, 0.5 - i as f32);
        let s = ShearedRay::new(&Ray::new(o, d)).expect("valid ray");
        let (axes, shear, origin) = sheared_by_definition(o, d);
        assert_eq!(s.axes, axes, "{d:?}");
        assert_eq!(s.shear.to_array().map(f32::to_bits), shear.map(f32::to_bits), "{d:?}");
        assert_eq!(s.origin_in_axes.to_array(), origin, "{d:?}");
        assert_eq!(s.origin, o);
        axes_seen[axes[2]][usize::from(d[axes[2]] < 0.0)] = true;
    }
    assert_eq!(axes_seen, [[true; 2]; 3], "every kz with both signs");
}

#[test]
fn lanes_equal_the_scalar_reference_on_random_input() {
    for (seed, scale, offset) in [
        (1, 1.0, Vec3::ZERO),
        (2, 1e-3, Vec3::ZERO),
        (3, 1e3, Vec3::splat(1e4)),
        (4, 1e-4, Vec3::splat(1.0)),
        (5, 1e-9, Vec3::ZERO),
        (6, 1e9, Vec3::ZERO),
    ] {
        check_all_widths(&random_cases(seed, 40_000, scale, offset));
    }
}

#[test]
fn lanes_equal_the_scalar_reference_on_adversarial_input() {
    let t = Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y);
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, 1e-30, 1e30, f32::MAX];
    let mut cases = Vec::new();
    // Through every vertex and edge point, along ±axes with ±0 components, and slanted.
    let points =
        [Vec3::ZERO, Vec3::X, Vec3::Y, Vec3::new(0.5, 0.0, 0.0), Vec3::new(0.5, 0.5, 0.0), Vec3::new(0.0, 0.5, 0.0)];
    for p in points {
        for d in [
            Vec3::Z,
            -Vec3::Z,
            Vec3::new(-0.0, 0.0, 1.0),
            Vec3::new(0.0, -0.0, -1.0),
            Vec3::new(1.0, 1.0, 1.0),
            Vec3::new(-1.0, 2.0, -3.0),
        ] {
            cases.push((Ray::new(p - d, d), t));
            cases.push((Ray::with_interval(p - d, d, 1.0, 1.0), t)); // the hit at exactly t = 1
            cases.push((Ray::new(p, d), t)); // starting on the triangle
        }
    }
    // In the plane of the triangle (edge-on), grazing its edges.
    for d in [Vec3::X, Vec3::Y, Vec3::new(1.0, -1.0, 0.0)] {
        cases.push((Ray::new(Vec3::new(-1.0, 0.0, 0.0), d), t));
        cases.push((Ray::new(Vec3::new(0.0, -1.0, 0.0), d), t));
        cases.push((Ray::new(Vec3::new(-1.0, 2.0, 0.0), d), t));
    }
    // Degenerate triangles: a point, a segment, collinear, a sliver.
    let degenerate = [
        Triangle::new(Vec3::ONE, Vec3::ONE, Vec3::ONE),
        Triangle::new(Vec3::ZERO, Vec3::X, Vec3::X),
        Triangle::new(Vec3::ZERO, Vec3::X, Vec3::X * 2.0),
        Triangle::new(Vec3::ZERO, Vec3::X, Vec3::new(0.5, 1e-8, 0.0)),
    ];
    for d in &degenerate {
        for p in [d.v[0], (d.v[0] + d.v[1]) * 0.5, d.v[2]] {
            for dir in [Vec3::Z, Vec3::new(0.1, 0.2, -1.0), Vec3::Y] {
                cases.push((Ray::new(p - dir, dir), *d));
            }
        }
    }
    // Special values in every ray and vertex coordinate.
    let mut rng = Rng::new(77);
    for _ in 0..4000 {
        let mut o = Vec3::new(0.25, 0.25, -1.0);
        let mut d = Vec3::Z;
        let mut v = t.v;
        let s = specials[rng.below(specials.len() as u64) as usize];
        match rng.below(3) {
            0 => o[rng.below(3) as usize] = s,
            1 => d[rng.below(3) as usize] = s,
            _ => v[rng.below(3) as usize][rng.below(3) as usize] = s,
        }
        let (t_min, t_max) = match rng.below(4) {
            0 => (0.0, s),
            1 => (s, f32::INFINITY),
            _ => (0.0, f32::INFINITY),
        };
        cases.push((Ray::with_interval(o, d, t_min, t_max), Triangle::new(v[0], v[1], v[2])));
    }
    check_all_widths(&cases);
    // Sanity of the truths the lanes were compared with.
    assert!(watertight::intersect_scalar(&Ray::new(Vec3::new(0.25, 0.25, -1.0), Vec3::Z), &t).is_some());
    assert!(
        watertight::intersect_scalar(&Ray::new(Vec3::new(0.25, 0.25, -1.0), Vec3::new(f32::NAN, 0.0, 1.0)), &t)
            .is_none()
    );
}

#[test]
fn hits_agree_with_an_independent_f64_solve() {
    // The hit point of a ray through a triangle's interior, solved in f64 by Cramer's rule:
    // t, u, v agree within the documented relative tolerance (8 f32 ulps of the inputs'
    // scale).
    let mut rng = Rng::new(5);
    let mut hits = 0;
    for _ in 0..20_000 {
        let tri = Triangle::new(rng.vec3(-1.0, 1.0), rng.vec3(-1.0, 1.0), rng.vec3(-1.0, 1.0));
        let (u, v) = (rng.range(0.05, 0.9), rng.range(0.05, 0.9));
        if u + v > 0.95 {
            continue;
        }
        let p = tri.v[0] * (1.0 - u - v) + tri.v[1] * u + tri.v[2] * v;
        let o = rng.vec3(-3.0, 3.0);
        let ray = Ray::new(o, p - o);
        let [a, b, c] = tri.v.map(|x| x.as_dvec3());
        let (d, od) = (ray.dir.as_dvec3(), o.as_dvec3());
        // o + t d = a + u (b - a) + v (c - a)
        let (e1, e2, s) = (b - a, c - a, od - a);
        let det = -d.dot(e1.cross(e2));
        if det.abs() < 0.1 * d.length() * e1.cross(e2).length() || e1.cross(e2).length() < 0.05 {
            continue; // within 6° of edge-on, or a sliver: ill-conditioned
        }
        let t = s.dot(e1.cross(e2)) / det;
        let uu = -d.dot(s.cross(e2)) / det;
        let vv = -d.dot(e1.cross(s)) / det;
        let h = watertight::intersect_scalar(&ray, &tri).expect("interior hit");
        let tol = 1e-4;
        assert!((h.t as f64 - t).abs() <= tol * t.abs().max(1.0), "t {} vs {t}", h.t);
        assert!((h.u as f64 - uu).abs() <= tol && (h.v as f64 - vv).abs() <= tol, "uv {} {} vs {uu} {vv}", h.u, h.v);
        hits += 1;
    }
    assert!(hits > 5_000, "only {hits} well-conditioned cases");
}

/// The BVH's triangle boxes hold the exact box with room on every side, also where the
/// margin is below an ulp of the coordinates, and leave triangles with an infinite extent alone.
#[test]
fn traversal_bounds_widen_every_side() {
    let cases = [
        Triangle::new(Vec3::new(-500.0, 3.5, 6.5), Vec3::new(500.0, 3.5, 6.5), Vec3::new(500.0, 3.5, 7.5)),
        Triangle::new(Vec3::splat(1e7), Vec3::new(1e7 + 1.0, 1e7, 1e7), Vec3::new(1e7, 1e7 + 1.0, 1e7)),
        Triangle::new(Vec3::ZERO, Vec3::ZERO, Vec3::ZERO),
        Triangle::new(Vec3::splat(-1e-30), Vec3::splat(1e-30), Vec3::new(0.0, 1e-30, 0.0)),
    ];
    for t in cases {
        let (exact, wide) = (t.aabb(), watertight::traversal_bounds(&t));
        assert!(wide.min.cmplt(exact.min).all() && wide.max.cmpgt(exact.max).all(), "{t:?}: {wide:?}");
        // The margin is 2^-17 of the largest extent, rounded outwards by one ulp.
        let m = (exact.max - exact.min).max_element() * watertight::BOX_MARGIN;
        assert!((exact.min - wide.min).cmple(Vec3::splat(m) + exact.min.abs() * 2.5e-7 + 1e-44).all());
    }
    // 1000 long: about 7.6e-3 of room across the sliver.
    let long = watertight::traversal_bounds(&cases[0]);
    assert!(long.max.y - 3.5 > 7e-3 && long.max.y - 3.5 < 8e-3);
    let bad = Triangle::new(Vec3::new(f32::INFINITY, 0.0, 0.0), Vec3::ONE, Vec3::X);
    assert_eq!(format!("{:?}", watertight::traversal_bounds(&bad)), format!("{:?}", bad.aabb()));
}

/// A hit on a triangle whose f32 cross product underflows to zero (edges of 1e-24: the
/// product is 1e-48, below the smallest f32) reports the f64 unit normal, +z here, in every
/// backend: the f64 case of `Triangle::normal`, which the hit record uses.
#[test]
fn a_sliver_hit_reports_its_f64_unit_normal() {
    use lanecast::{Backend, Ray, SceneBuilder};
    let e = 1e-24f32;
    let tri = Triangle::new(Vec3::ZERO, Vec3::new(e, 0.0, 0.0), Vec3::new(0.0, e, 0.0));
    assert_eq!(tri.scaled_normal(), Vec3::ZERO, "the f32 cross product must underflow for this test");
    let mut b = SceneBuilder::new();
    b.add_triangle(tri).unwrap();
    let scene = b.build().unwrap();
    let ray = Ray::new(Vec3::new(0.25 * e, 0.25 * e, 1.0), Vec3::NEG_Z);
    for backend in [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16] {
        let h = scene.intersect_with(&ray, backend).unwrap_or_else(|| panic!("{backend:?}: no hit"));
        assert_eq!(h.t, 1.0, "{backend:?}");
        assert_eq!(h.normal, Vec3::Z, "{backend:?}");
    }
}

/// Hits on ordinary triangles (edge angles' sine at least 0.1), from 1e-6 to 1e6 across,
/// report their unit geometric normal in every backend, the same in all of them: the f64
/// normal of the vertices within 2^-17 per component (the f32 rounding of the edges and of
/// their cross product). A ray from above and one from below see the same normal (the
/// triangle's, not turned toward the ray).
#[test]
fn a_triangle_hit_reports_its_unit_geometric_normal() {
    let mut rng = Rng::new(0x5eed_0a11);
    for k in 0..400 {
        let scale = 10f32.powi(k % 13 - 6);
        let c = rng.vec3(-1.0, 1.0) * scale;
        let v = [c + rng.vec3(-1.0, 1.0) * scale, c + rng.vec3(-1.0, 1.0) * scale, c + rng.vec3(-1.0, 1.0) * scale];
        let tri = Triangle::new(v[0], v[1], v[2]);
        let [a, b, d] = v.map(|p| p.as_dvec3());
        let n64: DVec3 = (b - a).cross(d - a);
        if n64.length() < 0.1 * (b - a).length() * (d - a).length() {
            continue; // a sliver: its own test covers it
        }
        let want = n64.normalize();
        let mut builder = SceneBuilder::new();
        builder.add_triangle(tri).unwrap();
        let scene = builder.build().unwrap();
        let centroid = (v[0] + v[1] + v[2]) / 3.0;
        let up = want.as_vec3();
        for from in [1.0f32, -1.0] {
            let ray = Ray::new(centroid + up * (from * scale), up * -from);
            let mut seen = Vec::new();
            for backend in [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16] {
                let h = scene.intersect_with(&ray, backend).unwrap_or_else(|| panic!("case {k}, {backend:?}: no hit"));
                let err = (h.normal.as_dvec3() - want).abs().max_element();
                assert!(err <= 2f64.powi(-17), "case {k}, {backend:?}: normal {:?}, want {want:?}", h.normal);
                seen.push(h.normal);
            }
            assert!(seen.windows(2).all(|w| w[0] == w[1]), "case {k}: backends differ: {seen:?}");
        }
    }
}
