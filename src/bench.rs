//! The built-in benchmark behind `lanecast bench`: kernel throughput (scalar, x4, x8) and
//! scene query throughput (scalar, x4, x8 and 8-ray packets; one thread and all threads),
//! each reported with its ratio to the scalar row measured in the same run.

use crate::camera::Camera;
use crate::hit::{HitPacket, HitSoa};
use crate::kernel::{aabb_triangle, ray_aabb, ray_sphere, ray_triangle};
use crate::lanes::{F32x4, F32x8, Lanes, Mask};
use crate::prim::{Aabb, AabbLanes, Soa, Sphere, Triangle, TriangleLanes};
use crate::ray::{Ray, RaySoa};
use crate::rng::Rng;
use crate::scene::{Backend, PacketScratch, Scene};
use crate::workload;
use glam::Vec3;
use rayon::prelude::*;
use serde::Serialize;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// One line of the table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// What was measured, e.g. `ray_triangle` or `closest_coherent`.
    pub query: String,
    /// `scalar`, `x4`, `x8` or `packet8`.
    pub backend: String,
    /// Threads used.
    pub threads: usize,
    /// Millions of rays (or ray–primitive pairs for kernels) per second.
    pub mrays_per_s: f64,
    /// Ratio to the `scalar` row of the same query and thread count.
    pub vs_scalar: f64,
}

/// The whole report (the `--json` document).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Instruction set the lanes compiled to.
    pub lanes: String,
    /// Scene name.
    pub scene: String,
    /// Rows.
    pub rows: Vec<Row>,
}

impl Report {
    /// The table as text, first line `lanes: <isa>`.
    pub fn to_text(&self) -> String {
        let mut s = format!("lanes: {}\nscene: {}\n", self.lanes, self.scene);
        s += &format!("{:<20} {:<8} {:>7} {:>12} {:>10}\n", "query", "backend", "threads", "Mrays/s", "vs scalar");
        for r in &self.rows {
            s += &format!(
                "{:<20} {:<8} {:>7} {:>12.2} {:>9.2}x\n",
                r.query, r.backend, r.threads, r.mrays_per_s, r.vs_scalar
            );
        }
        s
    }
}

/// Runs `f` (which processes `per_call` items) until `min` time has passed; items per second.
fn rate(per_call: usize, min: Duration, mut f: impl FnMut()) -> f64 {
    f(); // warm-up
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed() < min || calls < 3 {
        f();
        calls += 1;
    }
    (calls as f64 * per_call as f64) / start.elapsed().as_secs_f64()
}

fn push_rows(rows: &mut Vec<Row>, query: &str, threads: usize, results: &[(&str, f64)]) {
    let scalar = results.iter().find(|r| r.0 == "scalar").map(|r| r.1).unwrap_or(f64::NAN);
    for (b, r) in results {
        rows.push(Row {
            query: query.into(),
            backend: (*b).into(),
            threads,
            mrays_per_s: r / 1e6,
            vs_scalar: r / scalar,
        });
    }
}

const POOL: usize = 4096;

fn kernel_rows(rows: &mut Vec<Row>, min: Duration) {
    let mut rng = Rng::new(11);
    let aim = |rng: &mut Rng, c: Vec3, j: f32| {
        let o = c + rng.unit_vec3() * rng.range(4.0, 16.0);
        Ray::new(o, c + rng.vec3(-j, j) - o)
    };
    let spheres: Vec<Sphere> = (0..POOL).map(|_| Sphere::new(rng.vec3(-50.0, 50.0), rng.range(0.5, 2.0))).collect();
    let s_rays: Vec<Ray> = spheres.iter().map(|s| aim(&mut rng, s.center, 1.1 * s.radius)).collect();
    let boxes: Vec<Aabb> = (0..POOL)
        .map(|_| {
            let c = rng.vec3(-50.0, 50.0);
            let e = rng.vec3(0.5, 2.0);
            Aabb::new(c - e, c + e)
        })
        .collect();
    let b_rays: Vec<Ray> = boxes.iter().map(|b| aim(&mut rng, b.center(), 2.0)).collect();
    let tris: Vec<Triangle> = (0..POOL)
        .map(|_| {
            let c = rng.vec3(-50.0, 50.0);
            Triangle::new(c + rng.vec3(-2.0, 2.0), c + rng.vec3(-2.0, 2.0), c + rng.vec3(-2.0, 2.0))
        })
        .collect();
    let t_rays: Vec<Ray> = tris.iter().map(|t| aim(&mut rng, (t.v[0] + t.v[1] + t.v[2]) / 3.0, 0.6)).collect();
    let sat_boxes: Vec<Aabb> = tris
        .iter()
        .map(|t| {
            let c = t.v[0] + rng.vec3(-2.0, 2.0);
            Aabb::new(c - 1.0, c + 1.0)
        })
        .collect();

    let (ss, bs, ts, sbs) =
        (Soa::from_slice(&spheres), Soa::from_slice(&boxes), Soa::from_slice(&tris), Soa::from_slice(&sat_boxes));
    let (sr, br, tr) = (RaySoa::from_rays(&s_rays), RaySoa::from_rays(&b_rays), RaySoa::from_rays(&t_rays));

    fn lanes_loop<L: Lanes>(f: impl Fn(usize) -> L::Mask) -> u32 {
        (0..POOL).step_by(L::N).map(|i| f(i).bitmask().count_ones()).sum()
    }
    let sphere = [
        (
            "scalar",
            rate(POOL, min, || {
                black_box(
                    s_rays.iter().zip(&spheres).filter(|(r, s)| ray_sphere::intersect_scalar(r, s).is_some()).count(),
                );
            }),
        ),
        (
            "x4",
            rate(POOL, min, || {
                black_box(lanes_loop::<F32x4>(|i| ray_sphere::intersect_lanes(&sr.packet::<F32x4>(i), &ss.lanes(i)).0));
            }),
        ),
        (
            "x8",
            rate(POOL, min, || {
                black_box(lanes_loop::<F32x8>(|i| ray_sphere::intersect_lanes(&sr.packet::<F32x8>(i), &ss.lanes(i)).0));
            }),
        ),
    ];
    push_rows(rows, "ray_sphere", 1, &sphere);
    let aabb = [
        (
            "scalar",
            rate(POOL, min, || {
                black_box(
                    b_rays.iter().zip(&boxes).filter(|(r, b)| ray_aabb::intersect_scalar(r, b).is_some()).count(),
                );
            }),
        ),
        (
            "x4",
            rate(POOL, min, || {
                black_box(lanes_loop::<F32x4>(|i| ray_aabb::intersect_lanes(&br.packet::<F32x4>(i), &bs.lanes(i)).0));
            }),
        ),
        (
            "x8",
            rate(POOL, min, || {
                black_box(lanes_loop::<F32x8>(|i| ray_aabb::intersect_lanes(&br.packet::<F32x8>(i), &bs.lanes(i)).0));
            }),
        ),
    ];
    push_rows(rows, "ray_aabb", 1, &aabb);
    let tri = [
        (
            "scalar",
            rate(POOL, min, || {
                black_box(
                    t_rays.iter().zip(&tris).filter(|(r, t)| ray_triangle::intersect_scalar(r, t).is_some()).count(),
                );
            }),
        ),
        (
            "x4",
            rate(POOL, min, || {
                black_box(lanes_loop::<F32x4>(|i| {
                    ray_triangle::intersect_lanes(&tr.packet::<F32x4>(i), &ts.lanes(i)).0
                }));
            }),
        ),
        (
            "x8",
            rate(POOL, min, || {
                black_box(lanes_loop::<F32x8>(|i| {
                    ray_triangle::intersect_lanes(&tr.packet::<F32x8>(i), &ts.lanes(i)).0
                }));
            }),
        ),
    ];
    push_rows(rows, "ray_triangle", 1, &tri);
    let sat = [
        (
            "scalar",
            rate(POOL, min, || {
                black_box(sat_boxes.iter().zip(&tris).filter(|(b, t)| aabb_triangle::overlap_scalar(b, t)).count());
            }),
        ),
        (
            "x4",
            rate(POOL, min, || {
                black_box(lanes_loop::<F32x4>(|i| {
                    let (b, t): (AabbLanes<F32x4>, TriangleLanes<F32x4>) = (sbs.lanes(i), ts.lanes(i));
                    aabb_triangle::overlap_lanes(&b, &t)
                }));
            }),
        ),
        (
            "x8",
            rate(POOL, min, || {
                black_box(lanes_loop::<F32x8>(|i| {
                    let (b, t): (AabbLanes<F32x8>, TriangleLanes<F32x8>) = (sbs.lanes(i), ts.lanes(i));
                    aabb_triangle::overlap_lanes(&b, &t)
                }));
            }),
        ),
    ];
    push_rows(rows, "aabb_triangle_sat", 1, &sat);
}

/// A camera looking at the scene's box from outside (for scenes without one).
pub fn fallback_camera(scene: &Scene) -> Camera {
    let b = scene.bounds();
    let (c, r) = if b.min.x <= b.max.x { (b.center(), (b.max - b.min).length().max(1e-3)) } else { (Vec3::ZERO, 10.0) };
    Camera::new(c + Vec3::new(0.3, 0.4, 1.0).normalize() * r * 1.2, c, 45.0)
}

fn scene_rows(rows: &mut Vec<Row>, scene: &Scene, cam: &Camera, n: usize, min: Duration) {
    let side = ((n as f64).sqrt() as u32).max(8);
    let primary = workload::primary(cam, side, side);
    let bounds = if scene.bounds().min.x <= scene.bounds().max.x {
        scene.bounds()
    } else {
        Aabb::new(Vec3::splat(-10.0), Vec3::splat(10.0))
    };
    let incoherent = workload::incoherent(&bounds, n, 3);
    let mut segs = workload::segments(&bounds, n, 4);
    Scene::segments_to_los(&mut segs);
    let backends = [("scalar", Backend::Scalar), ("x4", Backend::X4), ("x8", Backend::X8)];
    let all = rayon::current_num_threads();
    for threads in [1, all] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
        pool.install(|| {
            for (query, rays) in [("closest_coherent", &primary), ("closest_incoherent", &incoherent)] {
                let mut res: Vec<(&str, f64)> = backends
                    .iter()
                    .map(|&(name, b)| {
                        let mut out = HitSoa::default();
                        (name, rate(rays.len(), min, || scene.intersect_batch_with(rays, &mut out, b)))
                    })
                    .collect();
                if query == "closest_coherent" {
                    res.push((
                        "packet8",
                        rate(rays.len(), min, || {
                            black_box(packet_batch(scene, rays));
                        }),
                    ));
                }
                push_rows(rows, query, threads, &res);
            }
            let res: Vec<(&str, f64)> = backends
                .iter()
                .map(|&(name, b)| {
                    let mut out = vec![false; segs.len()];
                    (name, rate(segs.len(), min, || scene.occluded_batch_with(&segs, &mut out, b)))
                })
                .collect();
            push_rows(rows, "occlusion", threads, &res);
        });
        if all == 1 {
            break;
        }
    }
}

/// Closest hits of a (tiled) ray set by 8-ray packets on the current rayon pool.
fn packet_batch(scene: &Scene, rays: &RaySoa) -> usize {
    (0..rays.len().div_ceil(8))
        .into_par_iter()
        .map_init(PacketScratch::default, |scratch, p| {
            let mut out = HitPacket::<F32x8>::default();
            scene.intersect_packet(&rays.packet::<F32x8>(p * 8), &mut out, scratch);
            out.hit_mask().bitmask().count_ones() as usize
        })
        .sum()
}

/// Runs the kernel and scene benchmarks. `rays` is the size of each scene ray set;
/// `min_time` the minimum time per measurement.
pub fn run(scene: &Scene, scene_name: &str, cam: Option<&Camera>, rays: usize, min_time: Duration) -> Report {
    let mut rows = Vec::new();
    kernel_rows(&mut rows, min_time);
    let cam = cam.copied().unwrap_or_else(|| fallback_camera(scene));
    scene_rows(&mut rows, scene, &cam, rays, min_time);
    Report { lanes: crate::lanes::instruction_set().into(), scene: scene_name.into(), rows }
}
