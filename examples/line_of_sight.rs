//! Bulk line of sight between agents in a city: every agent against every other, all cores.
//!
//! `cargo run --release --example line_of_sight`

use glam::Vec3;
use lanecast::SceneBuilder;
use lanecast::prim::Aabb;
use lanecast::rng::Rng;
use std::time::Instant;

fn main() {
    // A 12×12 grid of blocks with buildings of random heights; streets 6 m wide.
    let mut rng = Rng::new(42);
    let (block, street) = (20.0f32, 6.0f32);
    let mut buildings = Vec::new();
    for i in 0..12 {
        for j in 0..12 {
            let x0 = i as f32 * (block + street);
            let z0 = j as f32 * (block + street);
            let height = rng.range(6.0, 60.0);
            buildings.push(Aabb::new(Vec3::new(x0, 0.0, z0), Vec3::new(x0 + block, height, z0 + block)));
        }
    }
    let mut b = SceneBuilder::new();
    b.add_boxes(&buildings).unwrap();
    let scene = b.build().unwrap();

    // Agents stand in the streets at eye height.
    let size = 12.0 * (block + street);
    let agents: Vec<Vec3> = (0..800)
        .map(|_| {
            let along = rng.range(0.0, size);
            let lane = (rng.below(12) as f32) * (block + street) - street * 0.5;
            if rng.f32() < 0.5 { Vec3::new(along, 1.7, lane) } else { Vec3::new(lane, 1.7, along) }
        })
        .collect();
    let (mut from, mut to) = (Vec::new(), Vec::new());
    for (i, a) in agents.iter().enumerate() {
        for b in &agents[i + 1..] {
            from.push(*a);
            to.push(*b);
        }
    }
    let start = Instant::now();
    let visible = scene.line_of_sight(&from, &to);
    let secs = start.elapsed().as_secs_f64();
    let seen = visible.iter().filter(|v| **v).count();
    println!("{} buildings, {} agents, {} pairs", buildings.len(), agents.len(), from.len());
    println!("{seen} pairs see each other ({:.1} %)", 100.0 * seen as f64 / from.len() as f64);
    println!(
        "{:.3} s on {} threads: {:.2} M segments/s",
        secs,
        rayon::current_num_threads(),
        from.len() as f64 / secs / 1e6
    );
}
