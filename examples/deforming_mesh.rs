//! Refit against rebuild on a deforming mesh: the bunny ripples for 100 frames; each frame the
//! scene takes the new vertex positions by refitting its trees (`Scene::update_positions`) or
//! by building a new scene, and 2^16 primary rays are cast. Prints the update time and the
//! traversal speed of both, frame 1 and frame 100, and asserts that both answer the same.
//!
//! `cargo run --release --example deforming_mesh`

use glam::Vec3;
use lanecast::scene::mesh_io::load_mesh;
use lanecast::{Backend, HitSoa, RaySoa, Scene, SceneBuilder, camera::Camera, workload};
use std::path::Path;
use std::time::Instant;

const FRAMES: usize = 100;

/// The bunny's vertices at frame `f`: a travelling ripple along y whose amplitude grows to
/// 20 % of the model's height by the last frame.
fn ripple(rest: &[[f32; 3]], height: f32, f: usize) -> Vec<[f32; 3]> {
    let amp = 0.2 * height * f as f32 / FRAMES as f32;
    rest.iter()
        .map(|&[x, y, z]| {
            let w = (x * 40.0 + f as f32 * 0.3).sin() * (z * 40.0).cos();
            [x, y + amp * w, z]
        })
        .collect()
}

fn build(positions: &[[f32; 3]], indices: &[[u32; 3]]) -> Scene {
    let mut b = SceneBuilder::new();
    b.add_mesh(positions, indices).expect("a valid mesh");
    b.build().expect("a scene")
}

/// Mrays/s of one closest-hit batch on one thread, and the hits.
fn trace(scene: &Scene, rays: &RaySoa) -> (f64, HitSoa) {
    let mut out = HitSoa::default();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a pool");
    let start = Instant::now();
    pool.install(|| scene.intersect_batch_with(rays, &mut out, Backend::X8));
    (rays.len() as f64 / start.elapsed().as_secs_f64() / 1e6, out)
}

fn main() {
    let mesh = load_mesh(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/bunny.ply")).expect("the bunny loads");
    let rest: Vec<[f32; 3]> = mesh.positions.clone();
    let indices: Vec<[u32; 3]> = mesh.indices.clone();
    let lo = rest.iter().fold(Vec3::INFINITY, |a, p| a.min(Vec3::from(*p)));
    let hi = rest.iter().fold(Vec3::NEG_INFINITY, |a, p| a.max(Vec3::from(*p)));
    let center = (lo + hi) * 0.5;
    let cam = Camera::new(center + Vec3::new(0.0, 0.05, 0.35), center, 45.0);
    let rays = workload::primary(&cam, 256, 256);

    let mut refitted = build(&rest, &indices);
    let (mut t_refit, mut t_build) = (0.0f64, 0.0f64);
    let mut rows = Vec::new();
    for f in 1..=FRAMES {
        let pos = ripple(&rest, hi.y - lo.y, f);
        let start = Instant::now();
        refitted.update_positions(0, &pos).expect("same mesh");
        t_refit += start.elapsed().as_secs_f64();
        let start = Instant::now();
        let fresh = build(&pos, &indices);
        t_build += start.elapsed().as_secs_f64();
        if f == 1 || f == FRAMES {
            let (m_refit, a) = trace(&refitted, &rays);
            let (m_fresh, b) = trace(&fresh, &rays);
            assert_eq!((a.t, a.prim), (b.t, b.prim), "frame {f}: refit and rebuild answer alike");
            rows.push((f, m_refit, m_fresh));
        }
    }
    println!(
        "bunny, {} triangles, {FRAMES} frames: update by refit {:.2} ms/frame, by rebuild {:.2} ms/frame ({:.1}x)",
        indices.len(),
        t_refit * 1e3 / FRAMES as f64,
        t_build * 1e3 / FRAMES as f64,
        t_build / t_refit
    );
    for (f, a, b) in rows {
        println!("frame {f:3}: {:.2} Mrays/s refitted, {:.2} rebuilt ({:.2}x)", a, b, a / b);
    }
}
