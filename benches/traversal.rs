//! Whole-scene traversal throughput on real meshes, and BVH build times.
//!
//! Scenes: `scenes/bunny.ply` (Stanford bunny) and `scenes/sponza.ply` (Dabrovic Sponza),
//! each loaded with [`SceneBuilder::add_mesh_file`] and built at the default (medium) quality.
//! Ray sets, all from [`lanecast::workload`]:
//!
//! * `primary`: 1024×1024 primary rays of the camera suggested in the meshes README
//!   ([`workload::primary`], already in 2×4 pixel tiles, so every packet of 8 is coherent);
//! * `incoherent`: 2^20 rays with origins in the scene box (+5 %) and uniform directions
//!   ([`workload::incoherent`], seed [`SEED_INCOHERENT`]);
//! * `los`: 2^20 segments between two points of the scene box (+5 %), cast as occlusion
//!   queries ([`workload::segments`], seed [`SEED_LOS`]).
//!
//! Groups `traversal_<scene>_<set>` hold the functions
//!
//! * `scalar`, `x4`, `x8`: one ray at a time ([`Scene::intersect_with`] for `primary` and
//!   `incoherent`, [`Scene::occluded_with`] for `los`) with that [`Backend`];
//! * `packet8` (`primary` only): [`Scene::intersect_packet`] on 8-ray packets
//!   ([`RaySoa::packet`] at `i = 0, 8, 16, …`);
//! * `x8_mt`, `packet8_mt`: `x8` and `packet8` on the same mesh built with the
//!   [`TriangleTest::MollerTrumbore`] opt-in (the others use the watertight default).
//!
//! **Every iteration casts the whole set** (2^20 rays; no slicing), on one thread (no rayon),
//! and throughput is reported in rays (`Throughput::Elements`). Every field of each closest
//! hit is folded into a checksum that goes through [`black_box`], so the whole record
//! (normal, ids) is made as a renderer needs it: counting `is_some()` alone let the
//! optimiser drop that work wherever it inlined the record. The fields are read one by one,
//! as callers read them; a copy of the whole `Hit` (`black_box(hit)`) reads it with wide
//! loads that the CPU cannot forward from the record's field-by-field stores, a stall of
//! the bench's own making. The any-hit answers are counted, and the count goes through
//! [`black_box`].
//!
//! Groups `closest_point_<scene>` hold `scalar`, `x4`, `x8`: [`Scene::closest_point_with`] for
//! [`POINTS`] points drawn uniformly in the scene box (seed [`SEED_POINTS`]), one at a time,
//! on one thread; throughput in point queries. Each found point's distance is summed into the
//! result that goes through [`black_box`].
//!
//! Groups `sweep_sphere_<scene>` hold `scalar`, `x4`, `x8`: [`Scene::sweep_with`] for
//! [`POINTS`] sphere sweeps of `workload::sphere_sweeps` (seed `lanecast::bench::SEED_SWEEPS`,
//! the set of `lanecast bench`'s `sweep_sphere` rows), one at a time, on one thread;
//! throughput in sweeps; the contacts are counted into the result.
//!
//! Groups `build_<scene>` time [`SceneBuilder::build`] at `fast`, `medium` and `high`
//! quality ([`Quality`]), from a clone of a builder that already holds the loaded mesh (file
//! loading is not timed). The builder parallelises big subtrees with rayon; here it runs
//! inside a one-thread rayon pool, so build times are single-threaded too.
//!
//! Criterion runs with 10 flat samples, 1 s of warm-up and 3 s of measurement per function
//! (criterion stretches that when one iteration is long), so the whole bench takes a few
//! minutes. After the groups, a table goes to stderr: Mrays/s per (scene, set, backend) from
//! the median per-iteration time of the samples taken, bytes per triangle
//! (`scene.stats().bytes / triangles`) and build times. With a filter
//! (`cargo bench --bench traversal -- sponza`) only what ran is listed.
//!
//! ```text
//! cargo bench --bench traversal
//! cargo bench --bench traversal -- traversal_bunny_primary
//! ```
//!
//! Results land in criterion's default place, `target/criterion/<group>/<function>/`.

use criterion::{Criterion, SamplingMode, Throughput};
use glam::Vec3;
use lanecast::bvh::Quality;
use lanecast::camera::Camera;
use lanecast::rng::Rng;
use lanecast::scene::PacketScratch;
use lanecast::{Backend, F32x8, HitPacket, Mask, RaySoa, Scene, SceneBuilder, TriangleTest, workload};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

/// Seed of the `incoherent` set.
const SEED_INCOHERENT: u64 = 0x1c0_4e7e;
/// Seed of the `los` set.
const SEED_LOS: u64 = 0x105;
/// Seed of the `closest_point` query points.
const SEED_POINTS: u64 = 0xc105e57;
/// Points per `closest_point` iteration.
const POINTS: usize = 1 << 18;
/// Image size of the `primary` set (and rays in the other sets: `SIDE * SIDE = 2^20`).
const SIDE: u32 = 1024;

mod support;
use support::{criterion, median, one_thread, record, scenes, timed};

// ---------------------------------------------------------------------------------------
// Workloads.

fn closest_hits(scene: &Scene, rays: &RaySoa, backend: Backend) -> usize {
    let rays = black_box(rays);
    // Every field of every hit is read, as a renderer reads them, so the whole record is
    // made; field by field, as callers read it (not copied whole, see the module docs).
    let (mut hits, mut sum, mut ids) = (0, 0.0f32, 0u32);
    for i in 0..rays.len() {
        if let Some(h) = scene.intersect_with(&rays.ray(i), backend) {
            hits += 1;
            sum += h.t + h.u + h.v + h.normal.x + h.normal.y + h.normal.z;
            ids ^= h.geom ^ h.prim ^ h.inst ^ h.kind as u32;
        }
    }
    black_box((sum, ids));
    hits
}

fn occluded(scene: &Scene, rays: &RaySoa, backend: Backend) -> usize {
    let rays = black_box(rays);
    (0..rays.len()).filter(|&i| scene.occluded_with(&rays.ray(i), backend)).count()
}

fn packet_hits(scene: &Scene, rays: &RaySoa, scratch: &mut PacketScratch) -> usize {
    let rays = black_box(rays);
    let mut hits = 0;
    for i in (0..rays.len()).step_by(8) {
        let mut out = HitPacket::<F32x8>::default();
        rays.prefetch_ahead(i);
        scene.intersect_packet(&rays.packet::<F32x8>(i), &mut out, scratch);
        hits += out.hit_mask().bitmask().count_ones() as usize;
    }
    hits
}

fn closest_points(scene: &Scene, points: &[Vec3], backend: Backend) -> usize {
    let points = black_box(points);
    let mut sum = 0.0f64;
    let mut found = 0;
    for &p in points {
        if let Some(c) = scene.closest_point_with(p, backend) {
            sum += f64::from(c.distance);
            found += 1;
        }
    }
    black_box(sum);
    found
}

const BACKENDS: [Backend; 4] = [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16];

/// Facts of one scene for the table.
struct SceneFacts {
    name: &'static str,
    triangles: usize,
    bytes: usize,
    hit_rates: Vec<(&'static str, f64)>,
}

fn bench_scene(
    c: &mut Criterion,
    pool: &rayon::ThreadPool,
    name: &'static str,
    file: &str,
    cam: &Camera,
) -> SceneFacts {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let mut builder = SceneBuilder::new();
    builder.add_mesh_file(&path).unwrap_or_else(|e| panic!("cannot load {}: {e}", path.display()));
    let scene = pool.install(|| builder.clone().build().unwrap());
    let stats = scene.stats();
    // The same mesh with the Möller–Trumbore opt-in, for the x8_mt / packet8_mt rows.
    let scene_mt = pool.install(|| builder.clone().triangle_test(TriangleTest::MollerTrumbore).build().unwrap());

    let n = (SIDE * SIDE) as usize;
    let sets: [(&'static str, RaySoa); 3] = [
        ("primary", workload::primary(cam, SIDE, SIDE)),
        ("incoherent", workload::incoherent(&scene.bounds(), n, SEED_INCOHERENT)),
        ("los", workload::segments(&scene.bounds(), n, SEED_LOS)),
    ];
    let mut hit_rates = Vec::new();
    for (set, rays) in &sets {
        let hits =
            if *set == "los" { occluded(&scene, rays, Backend::X8) } else { closest_hits(&scene, rays, Backend::X8) };
        let rate = hits as f64 / rays.len() as f64;
        eprintln!(
            "{name} {set}: {} rays, {:.1} % {}",
            rays.len(),
            100.0 * rate,
            if *set == "los" { "occluded" } else { "hit" }
        );
        hit_rates.push((*set, rate));

        let gname = format!("traversal_{name}_{set}");
        let mut g = c.benchmark_group(&gname);
        g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(rays.len() as u64));
        for backend in BACKENDS {
            g.bench_function(backend.name(), |b| {
                if *set == "los" {
                    timed(b, &gname, backend.name(), || occluded(&scene, rays, backend))
                } else {
                    timed(b, &gname, backend.name(), || closest_hits(&scene, rays, backend))
                }
            });
        }
        g.bench_function("x8_mt", |b| {
            if *set == "los" {
                timed(b, &gname, "x8_mt", || occluded(&scene_mt, rays, Backend::X8))
            } else {
                timed(b, &gname, "x8_mt", || closest_hits(&scene_mt, rays, Backend::X8))
            }
        });
        if *set == "primary" {
            let mut scratch = PacketScratch::default();
            g.bench_function("packet8", |b| timed(b, &gname, "packet8", || packet_hits(&scene, rays, &mut scratch)));
            g.bench_function("packet8_mt", |b| {
                timed(b, &gname, "packet8_mt", || packet_hits(&scene_mt, rays, &mut scratch))
            });
        }
        g.finish();
    }
    drop(sets);

    let b = scene.bounds();
    let mut rng = Rng::new(SEED_POINTS);
    let points: Vec<Vec3> = (0..POINTS).map(|_| b.min + (b.max - b.min) * rng.vec3(0.0, 1.0)).collect();
    let gname = format!("closest_point_{name}");
    let mut g = c.benchmark_group(&gname);
    g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(POINTS as u64));
    for backend in BACKENDS {
        g.bench_function(backend.name(), |bch| {
            timed(bch, &gname, backend.name(), || closest_points(&scene, &points, backend))
        });
    }
    g.finish();
    drop(points);

    // Sphere sweeps, one at a time: the set of `lanecast bench`'s sweep_sphere rows.
    let sweeps = workload::sphere_sweeps(&b, POINTS, lanecast::bench::SEED_SWEEPS);
    let gname = format!("sweep_sphere_{name}");
    let mut g = c.benchmark_group(&gname);
    g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(POINTS as u64));
    for backend in BACKENDS {
        g.bench_function(backend.name(), |bch| {
            timed(bch, &gname, backend.name(), || {
                black_box(&sweeps).iter().filter(|s| scene.sweep_with(s, backend).is_some()).count()
            })
        });
    }
    g.finish();
    drop(sweeps);

    let gname = format!("build_{name}");
    let mut g = c.benchmark_group(&gname);
    g.sampling_mode(SamplingMode::Flat).throughput(Throughput::Elements(stats.triangles as u64));
    for (fname, q) in [("fast", Quality::Fast), ("medium", Quality::Medium), ("high", Quality::High)] {
        let qb = builder.clone().quality(q);
        g.bench_function(fname, |b| {
            let key = (gname.clone(), fname.to_string());
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let input = qb.clone();
                    let start = Instant::now();
                    let s = pool.install(|| input.build().unwrap());
                    total += start.elapsed();
                    drop(black_box(s));
                }
                record(&key, total.as_secs_f64() / iters as f64);
                total
            });
        });
    }
    g.finish();

    SceneFacts { name, triangles: stats.triangles, bytes: stats.bytes, hit_rates }
}

fn print_table(facts: &[SceneFacts]) {
    let mut out = String::new();
    out.push_str("## lanecast traversal (1 thread, Mrays/s, median of samples)\n\n");
    out.push_str("| scene | set | hit rate | scalar | x4 | x8 | packet8 | x8 / scalar | x8 MT | packet8 MT | x8 watertight / MT |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for f in facts {
        for (set, rate) in &f.hit_rates {
            let g = format!("traversal_{}_{set}", f.name);
            let n = (SIDE * SIDE) as f64;
            let mrays = |func: &str| median(&g, func).map(|s| n / s / 1e6);
            let cell = |func: &str| mrays(func).map_or("–".to_string(), |m| format!("{m:.2}"));
            let ratio = |a: &str, b: &str| match (mrays(a), mrays(b)) {
                (Some(a), Some(b)) => format!("{:.2}×", a / b),
                _ => "–".to_string(),
            };
            out.push_str(&format!(
                "| {} | {set} | {:.1} % | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                f.name,
                100.0 * rate,
                cell("scalar"),
                cell("x4"),
                cell("x8"),
                cell("packet8"),
                ratio("x8", "scalar"),
                cell("x8_mt"),
                cell("packet8_mt"),
                ratio("x8", "x8_mt"),
            ));
        }
    }
    out.push_str("\n## closest point (1 thread, Mqueries/s, median of samples)\n\n");
    out.push_str("| scene | scalar | x4 | x8 | x8 / scalar |\n|---|---:|---:|---:|---:|\n");
    for f in facts {
        let g = format!("closest_point_{}", f.name);
        let mq = |func: &str| median(&g, func).map(|s| POINTS as f64 / s / 1e6);
        let cell = |func: &str| mq(func).map_or("–".to_string(), |m| format!("{m:.2}"));
        let ratio = match (mq("x8"), mq("scalar")) {
            (Some(a), Some(b)) => format!("{:.2}×", a / b),
            _ => "–".to_string(),
        };
        out.push_str(&format!("| {} | {} | {} | {} | {ratio} |\n", f.name, cell("scalar"), cell("x4"), cell("x8")));
    }
    out.push_str("\n## sphere sweeps (1 thread, Msweeps/s, median of samples)\n\n");
    out.push_str("| scene | scalar | x4 | x8 | x8 / scalar |\n|---|---:|---:|---:|---:|\n");
    for f in facts {
        let g = format!("sweep_sphere_{}", f.name);
        let mq = |func: &str| median(&g, func).map(|s| POINTS as f64 / s / 1e6);
        let cell = |func: &str| mq(func).map_or("–".to_string(), |m| format!("{m:.2}"));
        let ratio = match (mq("x8"), mq("scalar")) {
            (Some(a), Some(b)) => format!("{:.2}×", a / b),
            _ => "–".to_string(),
        };
        out.push_str(&format!("| {} | {} | {} | {} | {ratio} |\n", f.name, cell("scalar"), cell("x4"), cell("x8")));
    }
    out.push_str("\n## memory and build (1 thread)\n\n");
    out.push_str("| scene | triangles | bytes/triangle (medium) | build fast ms | build medium ms | build high ms |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|\n");
    for f in facts {
        let g = format!("build_{}", f.name);
        let ms = |func: &str| median(&g, func).map_or("–".to_string(), |s| format!("{:.1}", s * 1e3));
        out.push_str(&format!(
            "| {} | {} | {:.1} | {} | {} | {} |\n",
            f.name,
            f.triangles,
            f.bytes as f64 / f.triangles.max(1) as f64,
            ms("fast"),
            ms("medium"),
            ms("high"),
        ));
    }
    eprintln!("\n{out}");
}

fn main() {
    let mut c = criterion();
    let pool = one_thread();
    let facts: Vec<SceneFacts> =
        scenes().iter().map(|(name, file, cam)| bench_scene(&mut c, &pool, name, file, cam)).collect();
    c.final_summary();
    print_table(&facts);
}
