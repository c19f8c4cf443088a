//! Instances and scenes that move: what the two-level queries cost against the flattened
//! scene, and refitting a deforming mesh against rebuilding it.
//!
//! * Groups `instances_<set>`: the Stanford bunny (`scenes/bunny.ply`) placed 16 times on a
//!   4 × 4 grid, each turned about +y and scaled (seeded), as 16 instances of one geometry
//!   (`instanced_*`) and as the same 16 bunnies carried into the world and added as meshes
//!   (`flattened_*`), one ray at a time with [`Backend::Scalar`], `X4` and `X8`, on one
//!   thread. Sets: `primary` (512 × 512 camera rays over the grid) and `incoherent` (2^18
//!   rays in the grid's box, uniform directions, [`workload::incoherent`]).
//! * Group `refit_bunny`: the bunny deformed by a travelling wave, frame after frame:
//!   `refit` ([`Scene::update_positions`]) and `rebuild` ([`Scene::rebuild`]) per frame, and
//!   `x8_after_100_refits` / `x8_after_rebuild`: the primary rays of the traversal bench's
//!   bunny camera (512 × 512) on the scene refitted through 100 frames, and on the same
//!   shape rebuilt.
//!
//! A table of the ratios goes to stderr at the end.
//!
//! ```text
//! cargo bench --bench instances
//! ```

use criterion::{Criterion, Throughput};
use glam::{Affine3A, Quat, Vec3};
use lanecast::camera::Camera;
use lanecast::rng::Rng;
use lanecast::scene::mesh_io::load_mesh;
use lanecast::{Backend, RaySoa, Scene, SceneBuilder, workload};
use std::path::Path;

mod support;
use support::{criterion, median, one_thread, scenes, timed};

const SIDE: u32 = 512;
const SEED_GRID: u64 = 0x6_21d;
const SEED_RAYS: u64 = 0x1_5ca7;
const BACKENDS: [Backend; 4] = [Backend::Scalar, Backend::X4, Backend::X8, Backend::X16];

fn closest_hits(scene: &Scene, rays: &RaySoa, backend: Backend) -> usize {
    (0..rays.len()).filter(|&i| scene.intersect_with(&rays.ray(i), backend).is_some()).count()
}

/// The bunny grid as instances and flattened.
fn grid(positions: &[[f32; 3]], indices: &[[u32; 3]]) -> (Scene, Scene) {
    let mut rng = Rng::new(SEED_GRID);
    let placements: Vec<Affine3A> = (0..16)
        .map(|k| {
            let at = Vec3::new((k % 4) as f32 * 0.25, 0.0, (k / 4) as f32 * 0.25);
            let turn = Quat::from_rotation_y(rng.range(0.0, std::f32::consts::TAU));
            Affine3A::from_scale_rotation_translation(Vec3::splat(rng.range(0.8, 1.2)), turn, at)
        })
        .collect();
    let mut inst = SceneBuilder::new();
    let bunny = inst.add_mesh(positions, indices).expect("the bunny");
    let mut flat = SceneBuilder::new();
    for m in &placements {
        inst.add_instance(bunny, *m).expect("a similarity");
        let moved: Vec<[f32; 3]> = positions.iter().map(|p| m.transform_point3(Vec3::from(*p)).into()).collect();
        flat.add_mesh(&moved, indices).expect("the moved bunny");
    }
    (inst.build().expect("builds"), flat.build().expect("builds"))
}

/// The bunny at frame `f` of a travelling wave.
fn wave(positions: &[[f32; 3]], f: usize) -> Vec<[f32; 3]> {
    let phase = f as f32 * 0.1;
    positions
        .iter()
        .map(|p| {
            let v = Vec3::from(*p);
            (v + Vec3::new(0.0, 0.01 * (v.x * 60.0 + phase).sin(), 0.0)).into()
        })
        .collect()
}

fn main() {
    let mut c: Criterion = criterion();
    let pool = one_thread();
    let mesh = load_mesh(Path::new("scenes/bunny.ply")).expect("scenes/bunny.ply");
    let (inst, flat) = pool.install(|| grid(&mesh.positions, &mesh.indices));
    let cam = Camera::new(Vec3::new(0.375, 0.6, 1.4), Vec3::new(0.375, 0.05, 0.375), 50.0);
    let sets = [
        ("primary", workload::primary(&cam, SIDE, SIDE)),
        ("incoherent", workload::incoherent(&inst.bounds(), (SIDE * SIDE) as usize, SEED_RAYS)),
    ];
    for (set, rays) in &sets {
        for b in BACKENDS {
            assert_eq!(closest_hits(&inst, rays, b), closest_hits(&flat, rays, b), "{set} {b:?}: same hits");
        }
        let group = format!("instances_{set}");
        let mut g = c.benchmark_group(&group);
        g.throughput(Throughput::Elements(rays.len() as u64));
        for b in BACKENDS {
            for (name, scene) in [("instanced", &inst), ("flattened", &flat)] {
                let f = format!("{name}_{}", b.name());
                g.bench_function(&f, |bn| {
                    pool.install(|| timed(bn, &group, &f, || closest_hits(scene, rays, b)));
                });
            }
        }
        g.finish();
    }

    // Refit against rebuild.
    let mut scene = SceneBuilder::new();
    let bunny = scene.add_mesh(&mesh.positions, &mesh.indices).expect("the bunny");
    let mut scene = pool.install(|| scene.build()).expect("builds");
    let frames: Vec<Vec<[f32; 3]>> = (0..100).map(|f| wave(&mesh.positions, f)).collect();
    let group = "refit_bunny";
    let mut g = c.benchmark_group(group);
    let mut f = 0;
    g.bench_function("refit", |bn| {
        pool.install(|| {
            timed(bn, group, "refit", || {
                f = (f + 1) % frames.len();
                scene.update_positions(bunny, &frames[f]).expect("same mesh");
                f
            })
        });
    });
    g.bench_function("rebuild", |bn| {
        pool.install(|| {
            timed(bn, group, "rebuild", || {
                scene.rebuild().expect("rebuilds");
                1
            })
        });
    });
    // Traversal after 100 refits, and after a rebuild of that shape.
    let mut refitted = pool.install(|| {
        let mut b = SceneBuilder::new();
        b.add_mesh(&mesh.positions, &mesh.indices).expect("the bunny");
        b.build().expect("builds")
    });
    for positions in &frames {
        refitted.update_positions(bunny, positions).expect("same mesh");
    }
    let mut rebuilt = refitted.clone();
    pool.install(|| rebuilt.rebuild()).expect("rebuilds");
    let bunny_cam = scenes()[0].2;
    let rays = workload::primary(&bunny_cam, SIDE, SIDE);
    g.throughput(Throughput::Elements(rays.len() as u64));
    for (name, s) in [("x8_after_100_refits", &refitted), ("x8_after_rebuild", &rebuilt)] {
        g.bench_function(name, |bn| pool.install(|| timed(bn, group, name, || closest_hits(s, &rays, Backend::X8))));
    }
    g.finish();
    c.final_summary();

    eprintln!("\ninstanced / flattened throughput (median, one thread; > 1: instances faster)");
    for (set, _) in &sets {
        let group = format!("instances_{set}");
        for b in BACKENDS {
            let n = b.name();
            if let (Some(i), Some(f)) =
                (median(&group, &format!("instanced_{n}")), median(&group, &format!("flattened_{n}")))
            {
                eprintln!("  {set:<10} {n:<6} {:.2}", f / i);
            }
        }
    }
    if let (Some(r), Some(b)) = (median(group, "refit"), median(group, "rebuild")) {
        eprintln!(
            "refit {:.3} ms, rebuild {:.3} ms per frame: refit takes {:.2} of a rebuild",
            r * 1e3,
            b * 1e3,
            r / b
        );
    }
    if let (Some(a), Some(b)) = (median(group, "x8_after_100_refits"), median(group, "x8_after_rebuild")) {
        eprintln!("x8 primary rays after 100 refits: {:.2} of the speed after a rebuild", b / a);
    }
}
