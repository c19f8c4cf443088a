use glam::Vec3;
use lanecast::scene::{Backend, SceneBuilder};
use lanecast::{camera::Camera, workload};
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reps: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(5);
    let only = args.get(2).cloned().unwrap_or_default();
    let scenes = [
        (
            "bunny",
            "scenes/bunny.ply",
            Camera::new(Vec3::new(0.0883, 0.1852, 0.2988), Vec3::new(-0.0168, 0.1102, -0.0015), 45.0),
        ),
        (
            "sponza",
            "scenes/sponza.ply",
            Camera::new(Vec3::new(13.94, 3.23, 0.0015), Vec3::new(-17.40, 4.89, 0.0015), 60.0),
        ),
    ];
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let mut line = String::new();
    let scene_only = args.get(3).cloned().unwrap_or_default();
    for (name, file, cam) in scenes {
        if !scene_only.is_empty() && name != scene_only {
            continue;
        }
        let mut b = SceneBuilder::new();
        if std::env::var("HIGH").is_ok() {
            b.quality(lanecast::bvh::Quality::High);
        }
        b.add_mesh_file(std::path::Path::new(file)).unwrap();
        let t0 = Instant::now();
        let scene = pool.install(|| b.build());
        let bt = t0.elapsed().as_secs_f64() * 1e3;
        let n: usize = std::env::var("NRAYS").ok().and_then(|s| s.parse().ok()).unwrap_or(1 << 18);
        let sets = [
            ("primary", workload::primary(&cam, 512, 512)),
            ("incoherent", workload::incoherent(&scene.bounds(), n, 0x1c0_4e7e)),
            ("los", workload::segments(&scene.bounds(), n, 0x105)),
            ("miss", {
                let mut r = workload::incoherent(&scene.bounds(), n, 3);
                for i in 0..r.len() {
                    let mut ray = r.ray(i);
                    ray.origin = scene.bounds().max + glam::Vec3::ONE;
                    ray.dir = glam::Vec3::ONE + ray.dir.abs();
                    r.set(i, &ray);
                }
                r
            }),
        ];
        let st = scene.stats();
        line += &format!("{name} build {bt:.1}ms refs {} nodes8 {} ", scene.stats().bytes_x8 / 1000, st.nodes8);
        for (set, rays) in &sets {
            if !only.is_empty() && !set.starts_with(&only) {
                continue;
            }
            let mut best = f64::MAX;
            let mut hits = 0;
            for _ in 0..reps {
                let t = Instant::now();
                hits = if *set == "los" {
                    occl(&scene, rays)
                } else {
                    if false {
                        (0..rays.len())
                            .filter(|&i| {
                                let r = rays.ray(i);
                                std::hint::black_box(scene.intersect_with(&r, Backend::X8));
                                scene.intersect_with(&r, Backend::X8).is_some()
                            })
                            .count()
                    } else {
                        closest(&scene, rays)
                    }
                };
                best = best.min(t.elapsed().as_secs_f64());
            }
            line += &format!("{set} {:.2} ({hits}) ", rays.len() as f64 / best / 1e6);
        }
        line += "\n";
    }
    print!("{line}");
}

#[inline(never)]
fn occl(scene: &lanecast::Scene, rays: &lanecast::RaySoa) -> usize {
    (0..rays.len()).filter(|&i| scene.occluded_with(&rays.ray(i), Backend::X8)).count()
}
#[inline(never)]
fn closest(scene: &lanecast::Scene, rays: &lanecast::RaySoa) -> usize {
    (0..rays.len()).filter(|&i| scene.intersect_with(&rays.ray(i), Backend::X8).is_some()).count()
}
