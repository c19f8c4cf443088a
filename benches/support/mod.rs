//! Shared by the `traversal` bench and the `lanecast-peers` bench: the benchmark meshes with
//! their cameras, and timing that keeps every criterion sample for the closing tables.
#![allow(dead_code)]

use criterion::{Bencher, Criterion};
use glam::Vec3;
use lanecast::camera::Camera;
use std::hint::black_box;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A one-thread rayon pool, so that builds are single-threaded like the queries (lanecast's
/// builder parallelises big subtrees with rayon).
pub fn one_thread() -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a one-thread rayon pool")
}

/// The criterion settings both benches share: 10 samples, 1 s warm-up, 3 s of measurement,
/// then whatever the command line says.
pub fn criterion() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args()
}

/// The benchmark scenes: name, file (relative to the crate root) and the README's camera.
pub fn scenes() -> [(&'static str, &'static str, Camera); 2] {
    [
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
    ]
}

// ---------------------------------------------------------------------------------------
// Timings kept for the closing table: per (group, function), the per-iteration time of
// every sample criterion took (warm-up calls included; they are few next to 10 samples), or,
// for the peers bench's in-turns functions, each round's speed ratio.

pub type Key = (String, String);
static TIMES: Mutex<Vec<(Key, Vec<f64>)>> = Mutex::new(Vec::new());

/// Adds one value (seconds per iteration, or an in-turns round's ratio) under `key`.
pub fn record(key: &Key, value: f64) {
    let mut t = TIMES.lock().unwrap();
    match t.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => v.push(value),
        None => t.push((key.clone(), vec![value])),
    }
}

/// Median seconds per iteration recorded for `(group, function)`.
pub fn median(group: &str, function: &str) -> Option<f64> {
    quantile(group, function, 0.5)
}

/// How many values were recorded for `(group, function)`.
pub fn count(group: &str, function: &str) -> usize {
    TIMES.lock().unwrap().iter().find(|((g, f), _)| g == group && f == function).map_or(0, |(_, v)| v.len())
}

/// The `q` quantile (0 to 1, linear between the two nearest values) of what was recorded for
/// `(group, function)`.
pub fn quantile(group: &str, function: &str, q: f64) -> Option<f64> {
    let t = TIMES.lock().unwrap();
    let (_, v) = t.iter().find(|((g, f), _)| g == group && f == function)?;
    let mut v = v.clone();
    v.sort_by(f64::total_cmp);
    let x = q.clamp(0.0, 1.0) * (v.len() - 1) as f64;
    let (i, frac) = (x.floor() as usize, x.fract());
    Some(if frac == 0.0 { v[i] } else { v[i] + frac * (v[i + 1] - v[i]) })
}

/// Times `f` (one call = one iteration) and records each sample's time per iteration.
pub fn timed(b: &mut Bencher, group: &str, function: &str, mut f: impl FnMut() -> usize) {
    let key = (group.to_string(), function.to_string());
    b.iter_custom(|iters| {
        let start = Instant::now();
        for _ in 0..iters {
            black_box(f());
        }
        let e = start.elapsed();
        record(&key, e.as_secs_f64() / iters as f64);
        e
    });
}
