//! The built-in benchmark, public so the CLI and the criterion benches share one kernel table.
//!
//! [`run`] is `lanecast bench`: kernel throughput (scalar, x4, x8, x16, one thread, for every entry
//! of [`kernels`]) and scene query throughput (scalar, x4, x8 and 8-ray packets; one thread and
//! all threads; the `closest_point` row counts point queries, [`Scene::closest_point_batch`]
//! over points drawn uniformly in the scene box with seed [`SEED_POINTS`], and the
//! `sweep_sphere` row sphere sweeps, [`Scene::sweep_batch`] over
//! [`workload::sphere_sweeps`] with seed [`SEED_SWEEPS`]), each reported with its ratio to the
//! scalar row measured in the same run.
//!
//! [`kernels`] is the kernel table: every kernel with a seeded pool of [`PAIRS`] pairs and one
//! pass over the pool per [`Variant`]. The criterion bench `benches/kernels.rs` times the same
//! passes over the same pools (plus the `autovec` variant, which `lanecast bench` leaves out).
//!
//! ```
//! use lanecast::bench::{Variant, kernels};
//!
//! for mut k in kernels() {
//!     let hits = k.run(Variant::X8).unwrap();
//!     println!("{}: {hits} of {} pairs hit", k.name(), k.pairs());
//! }
//! ```

mod kernels;

pub use kernels::{Kernel, NEAR, PAIRS, Paired, Variant, kernels};

use crate::camera::Camera;
use crate::hit::{HitPacket, HitSoa};
use crate::lanes::{F32x8, Mask};
use crate::prim::Aabb;
use crate::ray::RaySoa;
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
    /// What was measured: a kernel's [`Kernel::name`] (e.g. `ray_triangle`) or a scene query
    /// (`closest_coherent`, `closest_incoherent`, `occlusion`, `closest_point`, `sweep_sphere`).
    pub query: String,
    /// `scalar`, `x4`, `x8` or `packet8`; `x8_mt` and `packet8_mt` are those on the same scene
    /// built with the Möller–Trumbore opt-in (scene query rows, when one is given).
    pub backend: String,
    /// Threads used.
    pub threads: usize,
    /// Millions of rays (ray–primitive pairs for kernels, point queries for
    /// `closest_point`, sweeps for `sweep_sphere`) per second.
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
    /// The table as text, first line `lanes: <isa>`, then `scene: <name>`, then one aligned
    /// line per row (the query column as wide as the longest query, at least 20; the
    /// backend column as wide as the longest backend, at least 8).
    pub fn to_text(&self) -> String {
        let w = self.rows.iter().map(|r| r.query.len()).max().unwrap_or(0).max(20);
        let b = self.rows.iter().map(|r| r.backend.len()).max().unwrap_or(0).max(8);
        let mut s = format!("lanes: {}\nscene: {}\n", self.lanes, self.scene);
        s += &format!("{:<w$} {:<b$} {:>7} {:>12} {:>10}\n", "query", "backend", "threads", "Mrays/s", "vs scalar");
        for r in &self.rows {
            s += &format!(
                "{:<w$} {:<b$} {:>7} {:>12.2} {:>9.2}x\n",
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

/// Seed of the `closest_point` query points.
pub const SEED_POINTS: u64 = 0xc105e57;
/// Seed of the `sweep_sphere` sweeps.
pub const SEED_SWEEPS: u64 = 0x5eeb;

/// `n` points uniform in `bounds`, seeded.
fn uniform_points(bounds: &Aabb, n: usize, seed: u64) -> Vec<Vec3> {
    let mut rng = crate::rng::Rng::new(seed);
    (0..n).map(|_| bounds.min + (bounds.max - bounds.min) * rng.vec3(0.0, 1.0)).collect()
}

/// One row per (kernel of the table, scalar / x4 / x8 / x16), one thread, items = pairs.
fn kernel_rows(rows: &mut Vec<Row>, min: Duration) {
    for mut k in kernels() {
        let results: Vec<(&str, f64)> = [Variant::Scalar, Variant::X4, Variant::X8, Variant::X16]
            .into_iter()
            .map(|v| {
                (
                    v.name(),
                    rate(k.pairs(), min, || {
                        black_box(k.run(v));
                    }),
                )
            })
            .collect();
        push_rows(rows, k.name(), 1, &results);
    }
}

/// A camera looking at the scene's box from outside (for scenes without one).
pub fn fallback_camera(scene: &Scene) -> Camera {
    let b = scene.bounds();
    let (c, r) = if b.min.x <= b.max.x { (b.center(), (b.max - b.min).length().max(1e-3)) } else { (Vec3::ZERO, 10.0) };
    Camera::new(c + Vec3::new(0.3, 0.4, 1.0).normalize() * r * 1.2, c, 45.0)
}

fn scene_rows(rows: &mut Vec<Row>, scene: &Scene, scene_mt: Option<&Scene>, cam: &Camera, n: usize, min: Duration) {
    let side = ((n as f64).sqrt() as u32).max(8);
    let primary = workload::primary(cam, side, side);
    let bounds = if scene.bounds().min.x <= scene.bounds().max.x {
        scene.bounds()
    } else {
        Aabb::new(Vec3::splat(-10.0), Vec3::splat(10.0))
    };
    let incoherent = workload::incoherent(&bounds, n, 3);
    let mut segs = workload::segments(&bounds, n, 4);
    let points = uniform_points(&bounds, n, SEED_POINTS);
    let sweeps = workload::sphere_sweeps(&bounds, n, SEED_SWEEPS);
    Scene::segments_to_los(&mut segs);
    // Closest points and sweeps have no 16-wide path (`X16` runs them as `X8` does).
    let backends = [("scalar", Backend::Scalar), ("x4", Backend::X4), ("x8", Backend::X8)];
    let ray_backends = [("scalar", Backend::Scalar), ("x4", Backend::X4), ("x8", Backend::X8), ("x16", Backend::X16)];
    let all = rayon::current_num_threads();
    for threads in [1, all] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
        pool.install(|| {
            for (query, rays) in [("closest_coherent", &primary), ("closest_incoherent", &incoherent)] {
                let mut res: Vec<(&str, f64)> = ray_backends
                    .iter()
                    .map(|&(name, b)| {
                        let mut out = HitSoa::default();
                        (name, rate(rays.len(), min, || scene.intersect_batch_with(rays, &mut out, b)))
                    })
                    .collect();
                if let Some(mt) = scene_mt {
                    let mut out = HitSoa::default();
                    res.push(("x8_mt", rate(rays.len(), min, || mt.intersect_batch_with(rays, &mut out, Backend::X8))));
                }
                if query == "closest_coherent" {
                    res.push((
                        "packet8",
                        rate(rays.len(), min, || {
                            black_box(packet_batch(scene, rays));
                        }),
                    ));
                    if let Some(mt) = scene_mt {
                        res.push((
                            "packet8_mt",
                            rate(rays.len(), min, || {
                                black_box(packet_batch(mt, rays));
                            }),
                        ));
                    }
                }
                push_rows(rows, query, threads, &res);
            }
            let mut res: Vec<(&str, f64)> = ray_backends
                .iter()
                .map(|&(name, b)| {
                    let mut out = vec![false; segs.len()];
                    (name, rate(segs.len(), min, || scene.occluded_batch_with(&segs, &mut out, b)))
                })
                .collect();
            if let Some(mt) = scene_mt {
                let mut out = vec![false; segs.len()];
                res.push(("x8_mt", rate(segs.len(), min, || mt.occluded_batch_with(&segs, &mut out, Backend::X8))));
            }
            push_rows(rows, "occlusion", threads, &res);
            let res: Vec<(&str, f64)> = backends
                .iter()
                .map(|&(name, b)| {
                    let mut out = vec![crate::scene::ClosestPoint::MISS; points.len()];
                    (name, rate(points.len(), min, || scene.closest_point_batch_with(&points, &mut out, b)))
                })
                .collect();
            push_rows(rows, "closest_point", threads, &res);
            let res: Vec<(&str, f64)> = backends
                .iter()
                .map(|&(name, b)| {
                    let mut out = vec![crate::scene::SweepHit::MISS; sweeps.len()];
                    (name, rate(sweeps.len(), min, || scene.sweep_batch_with(&sweeps, &mut out, b)))
                })
                .collect();
            push_rows(rows, "sweep_sphere", threads, &res);
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
            rays.prefetch_ahead(p * 8);
            scene.intersect_packet(&rays.packet::<F32x8>(p * 8), &mut out, scratch);
            out.hit_mask().bitmask().count_ones() as usize
        })
        .sum()
}

/// Runs the kernel and scene benchmarks (with `scene_mt`, the same scene built with
/// [`crate::TriangleTest::MollerTrumbore`], also its `x8_mt`/`packet8_mt` rows). `rays` is the
/// size of each scene ray set;
/// `min_time` the minimum time per measurement.
pub fn run(
    scene: &Scene,
    scene_mt: Option<&Scene>,
    scene_name: &str,
    cam: Option<&Camera>,
    rays: usize,
    min_time: Duration,
) -> Report {
    let mut rows = Vec::new();
    kernel_rows(&mut rows, min_time);
    let cam = cam.copied().unwrap_or_else(|| fallback_camera(scene));
    scene_rows(&mut rows, scene, scene_mt, &cam, rays, min_time);
    Report { lanes: crate::lanes::instruction_set().into(), scene: scene_name.into(), rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_rows_report_every_kernel_of_the_table() {
        let mut rows = Vec::new();
        kernel_rows(&mut rows, Duration::ZERO);
        let table = kernels();
        assert_eq!(rows.len(), 4 * table.len(), "one row per kernel and scalar / x4 / x8 / x16");
        for (k, three) in table.iter().zip(rows.chunks(4)) {
            for (r, backend) in three.iter().zip(["scalar", "x4", "x8", "x16"]) {
                assert_eq!((r.query.as_str(), r.backend.as_str(), r.threads), (k.name(), backend, 1));
                assert!(r.mrays_per_s > 0.0 && r.mrays_per_s.is_finite(), "{r:?}");
                assert!(r.vs_scalar > 0.0 && r.vs_scalar.is_finite(), "{r:?}");
            }
            assert_eq!(three[0].vs_scalar, 1.0, "{:?}", three[0]);
        }
    }

    #[test]
    fn scene_rows_hold_every_query_for_its_backends() {
        let mut b = crate::scene::SceneBuilder::new();
        b.add_sphere(crate::prim::Sphere::new(Vec3::ZERO, 1.0)).unwrap();
        let scene = b.build().unwrap();
        let mut rows = Vec::new();
        scene_rows(&mut rows, &scene, None, &fallback_camera(&scene), 64, Duration::ZERO);
        let ray_backends: &[&str] = &["scalar", "x4", "x8", "x16"];
        for (query, backends) in [
            ("closest_point", &ray_backends[..3]),
            ("sweep_sphere", &ray_backends[..3]),
            ("closest_coherent", ray_backends),
            ("closest_incoherent", ray_backends),
            ("occlusion", ray_backends),
        ] {
            for &backend in backends {
                let r = rows.iter().find(|r| r.query == query && r.backend == backend && r.threads == 1);
                let r = r.unwrap_or_else(|| panic!("no {query} row for {backend}: {rows:?}"));
                assert!(r.mrays_per_s > 0.0 && r.mrays_per_s.is_finite(), "{r:?}");
            }
        }
        assert!(!rows.iter().any(|r| r.backend.ends_with("_mt")), "no Möller–Trumbore rows without its scene");
    }

    #[test]
    fn scene_rows_compare_moller_trumbore_when_given_its_scene() {
        let tri = crate::prim::Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y);
        let mut b = crate::scene::SceneBuilder::new();
        b.add_triangle(tri).unwrap();
        let mt = b.clone().triangle_test(crate::TriangleTest::MollerTrumbore).build().unwrap();
        let scene = b.build().unwrap();
        let mut rows = Vec::new();
        scene_rows(&mut rows, &scene, Some(&mt), &fallback_camera(&scene), 64, Duration::ZERO);
        for (query, backend) in [
            ("closest_coherent", "x8_mt"),
            ("closest_coherent", "packet8_mt"),
            ("closest_incoherent", "x8_mt"),
            ("occlusion", "x8_mt"),
        ] {
            let r = rows.iter().find(|r| r.query == query && r.backend == backend && r.threads == 1);
            let r = r.unwrap_or_else(|| panic!("no {query} {backend} row: {rows:?}"));
            assert!(r.mrays_per_s > 0.0 && r.vs_scalar > 0.0, "{r:?}");
        }
    }

    #[test]
    fn text_table_columns_line_up() {
        let row = |query: &str, backend: &str| Row {
            query: query.into(),
            backend: backend.into(),
            threads: 1,
            mrays_per_s: 12.5,
            vs_scalar: 1.0,
        };
        let report = Report {
            lanes: "sse2".into(),
            scene: "s".into(),
            rows: vec![row("ray_aabb", "scalar"), row("segment_sphere_crossings", "x8")],
        };
        let text = report.to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(&lines[..2], ["lanes: sse2", "scene: s"]);
        assert_eq!(lines[3], "ray_aabb                 scalar         1        12.50      1.00x");
        assert_eq!(lines[4], "segment_sphere_crossings x8             1        12.50      1.00x");
        assert!(lines[2].starts_with("query                    backend"), "{}", lines[2]);
        // A backend name longer than the header widens its column for every line.
        let wide = Report { rows: vec![row("ray_aabb", "scalar"), row("ray_aabb", "packet8_mt")], ..report };
        let text = wide.to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[3], "ray_aabb             scalar           1        12.50      1.00x");
        assert_eq!(lines[4], "ray_aabb             packet8_mt       1        12.50      1.00x");
    }
}
