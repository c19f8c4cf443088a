//! Seeded ray sets used by the benchmarks and the `bench` command: coherent primary rays
//! from a camera, incoherent rays, line-of-sight segments and sphere sweeps inside a scene's
//! box. Public so
//! peers' benches (and yours) can be fed the same rays; pinned in `tests/golden.rs`.

use crate::camera::Camera;
use crate::prim::Aabb;
use crate::ray::{Ray, RaySoa};
use crate::rng::Rng;
use crate::scene::SphereSweep;

/// `box` grown by `frac` of its size on every side.
pub fn grown(b: &Aabb, frac: f32) -> Aabb {
    let g = (b.max - b.min) * frac;
    Aabb::new(b.min - g, b.max + g)
}

/// Primary rays of `cam` at `width × height` in 2×4 tiles (coherent in groups of 8).
pub fn primary(cam: &Camera, width: u32, height: u32) -> RaySoa {
    cam.with_size(width, height).tiled_rays().0
}

/// `n` rays with origins uniform in `bounds` grown 5 % per side and directions uniform on
/// the sphere.
pub fn incoherent(bounds: &Aabb, n: usize, seed: u64) -> RaySoa {
    let b = grown(bounds, 0.05);
    let mut rng = Rng::new(seed);
    let rays: Vec<Ray> =
        (0..n).map(|_| Ray::new(b.min + (b.max - b.min) * rng.vec3(0.0, 1.0), rng.unit_vec3())).collect();
    RaySoa::from_rays(&rays)
}

/// `n` segments between two uniform points of `bounds` grown 5 % per side, as rays with
/// `t ∈ [0, 1]` (use with an occlusion query).
pub fn segments(bounds: &Aabb, n: usize, seed: u64) -> RaySoa {
    let b = grown(bounds, 0.05);
    let mut rng = Rng::new(seed);
    let rays: Vec<Ray> = (0..n)
        .map(|_| {
            let p = b.min + (b.max - b.min) * rng.vec3(0.0, 1.0);
            let q = b.min + (b.max - b.min) * rng.vec3(0.0, 1.0);
            Ray::segment(p, q)
        })
        .collect();
    RaySoa::from_rays(&rays)
}

/// `n` sphere sweeps inside `bounds` grown 5 % per side: centres uniform, radii 0.5 % of the
/// box diagonal, motions in uniform directions with length 5 % of the diagonal (a fast object's
/// step).
pub fn sphere_sweeps(bounds: &Aabb, n: usize, seed: u64) -> Vec<SphereSweep> {
    let b = grown(bounds, 0.05);
    let diag = (b.max - b.min).length();
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| {
            let c = b.min + (b.max - b.min) * rng.vec3(0.0, 1.0);
            SphereSweep::new(c, 0.005 * diag, rng.unit_vec3() * (0.05 * diag))
        })
        .collect()
}
