//! A small deterministic random number generator (SplitMix64) for seeded test data,
//! benchmarks and procedural scenes: the same seed gives the same stream on every platform
//! (`unit_vec3` and `log_uniform` up to the last bit of the platform's `cosf`/`sinf`/`powf`).
//! Public so that anyone can reproduce the benches' ray sets and the generated scenes; the
//! streams are pinned by golden values in `tests/golden.rs`.

use glam::Vec3;

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for test data.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, 1)`.
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
    }
    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }
    /// Uniform integer in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
    /// Each component uniform in `[lo, hi)`.
    pub fn vec3(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
    }
    /// Uniform on the unit sphere.
    pub fn unit_vec3(&mut self) -> Vec3 {
        let z = self.range(-1.0, 1.0);
        let phi = self.range(0.0, std::f32::consts::TAU);
        let s = (1.0 - z * z).max(0.0).sqrt();
        Vec3::new(s * phi.cos(), s * phi.sin(), z)
    }
    /// Log-uniform magnitude in `[10^lo_exp, 10^hi_exp)` with a random sign.
    pub fn log_uniform(&mut self, lo_exp: f32, hi_exp: f32) -> f32 {
        let m = 10f32.powf(self.range(lo_exp, hi_exp));
        if self.next_u64() & 1 == 0 { m } else { -m }
    }
}
