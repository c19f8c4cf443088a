//! Procedural content: heightfield terrain, a city of boxes and a cloud of spheres, each
//! deterministic for a given seed (the same parameters give bit-identical output on every
//! platform, via [`Rng`]).
//!
//! Each generator is a plain function from its parameters to plain data ([`terrain`] →
//! [`MeshData`], [`city`] → `Vec<Aabb>`, [`spheres`] → `Vec<Sphere>`), and [`Generator`]
//! adds the result to a [`SceneBuilder`] as **one** geometry. In a scene file the same
//! parameters are the keys of a `[[generate]]` entry next to `kind` (every key is optional):
//!
//! ```toml
//! [[generate]]
//! kind = "terrain"   # heightfield mesh, one mesh geometry
//! seed = 7           # default 0
//! size = [200, 200]  # world extent along x and z, default [100, 100]
//! resolution = 256   # grid cells per side, default 128 (1 to 2048)
//! height = 25        # relief: heights span exactly [origin.y, origin.y + height], default 10
//! octaves = 5        # noise octaves, default 4 (1 to 16)
//! wavelength = 80    # size of the largest hills, default half the smaller side of `size`
//! origin = [0, 0, 0] # centre of the footprint at the lowest height, default [0, 0, 0]
//!
//! [[generate]]
//! kind = "city"      # buildings as boxes, one box-set geometry
//! seed = 1           # default 0
//! blocks = [8, 8]    # city blocks along x and z, default [8, 8]
//! block_size = 20    # side of a square block, default 20
//! street = 8         # street width between blocks, default 8
//! lots = 2           # buildings per block side (lots × lots per block), default 2
//! min_height = 5     # building heights are drawn from [min_height, max_height],
//! max_height = 40    #   skewed towards low buildings; defaults 5 and 40
//! origin = [0, 0, 0] # centre of the city at ground level, default [0, 0, 0]
//!
//! [[generate]]
//! kind = "spheres"   # a sphere set, one geometry
//! seed = 3           # default 0
//! count = 100        # number of spheres, default 100 (0 to 16,777,216)
//! min = [-10, 0, -10]  # centres are uniform in the box [min, max],
//! max = [10, 10, 10]   #   defaults [-10, 0, -10] and [10, 10, 10]
//! radius = [0.2, 1.0]  # radii uniform in [rmin, rmax], default [0.2, 1.0]
//! ```
//!
//! ```
//! use lanecast::scene::generate::{city, CityParams, Generator, SpheresParams};
//! use lanecast::SceneBuilder;
//!
//! let p = CityParams { seed: 7, blocks: [3, 2], ..CityParams::default() };
//! let boxes = city(&p).unwrap();
//! assert_eq!(boxes.len(), 3 * 2 * 4); // 2 × 2 lots per block
//!
//! let mut b = SceneBuilder::new();
//! let id = Generator::Spheres(SpheresParams { count: 10, ..Default::default() })
//!     .add_to(&mut b)
//!     .unwrap();
//! assert_eq!(id, 0);
//! ```

use crate::error::SceneError;
use crate::prim::{Aabb, Sphere};
use crate::rng::Rng;
use crate::scene::SceneBuilder;
use crate::scene::mesh_io::MeshData;
use glam::Vec3;
use serde::Deserialize;

/// Most grid cells per side of a terrain.
pub const MAX_TERRAIN_RESOLUTION: u32 = 2048;
/// Most noise octaves of a terrain.
pub const MAX_TERRAIN_OCTAVES: u32 = 16;
/// Most boxes a city may have.
pub const MAX_CITY_BOXES: u64 = 1 << 22;
/// Most spheres a sphere set may have.
pub const MAX_SPHERES: u64 = 1 << 24;

/// A generator parameter that is out of range: the offending key and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The parameter's key as written in a scene file (`resolution`, `radius`, …).
    pub key: &'static str,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for ParamError {}

fn bad(key: &'static str, message: impl Into<String>) -> ParamError {
    ParamError { key, message: message.into() }
}

fn finite(key: &'static str, v: &[f32]) -> Result<(), ParamError> {
    if v.iter().all(|x| x.is_finite()) { Ok(()) } else { Err(bad(key, format!("must be finite, got {v:?}"))) }
}

// ---------------------------------------------------------------------------------------
// Terrain
// ---------------------------------------------------------------------------------------

/// Parameters of [`terrain`]; see the [module docs](self) for the keys and defaults.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TerrainParams {
    /// Seed (default 0).
    pub seed: u64,
    /// World extent along x and z (default `[100, 100]`; each `> 0`).
    pub size: [f32; 2],
    /// Grid cells per side (default 128; 1 to [`MAX_TERRAIN_RESOLUTION`]).
    pub resolution: u32,
    /// Relief: heights span exactly `[origin.y, origin.y + height]` (default 10; `>= 0`).
    pub height: f32,
    /// Value-noise octaves, each of half the wavelength and half the amplitude of the one
    /// before (default 4; 1 to [`MAX_TERRAIN_OCTAVES`]).
    pub octaves: u32,
    /// Wavelength of the first octave, i.e. the size of the largest hills (default: half the
    /// smaller side of `size`; `> 0`).
    pub wavelength: Option<f32>,
    /// Centre of the footprint at the lowest height (default `[0, 0, 0]`).
    pub origin: [f32; 3],
}

impl Default for TerrainParams {
    fn default() -> Self {
        Self {
            seed: 0,
            size: [100.0, 100.0],
            resolution: 128,
            height: 10.0,
            octaves: 4,
            wavelength: None,
            origin: [0.0; 3],
        }
    }
}

impl TerrainParams {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ParamError> {
        finite("size", &self.size)?;
        if !self.size.iter().all(|&s| s > 0.0) {
            return Err(bad("size", format!("must be > 0, got {:?}", self.size)));
        }
        if !(1..=MAX_TERRAIN_RESOLUTION).contains(&self.resolution) {
            return Err(bad("resolution", format!("must be 1 to {MAX_TERRAIN_RESOLUTION}, got {}", self.resolution)));
        }
        finite("height", &[self.height])?;
        if self.height < 0.0 {
            return Err(bad("height", format!("must be >= 0, got {}", self.height)));
        }
        if !(1..=MAX_TERRAIN_OCTAVES).contains(&self.octaves) {
            return Err(bad("octaves", format!("must be 1 to {MAX_TERRAIN_OCTAVES}, got {}", self.octaves)));
        }
        if let Some(w) = self.wavelength {
            finite("wavelength", &[w])?;
            if w <= 0.0 {
                return Err(bad("wavelength", format!("must be > 0, got {w}")));
            }
        }
        finite("origin", &self.origin)
    }
    /// The wavelength actually used (the given one or the default).
    pub fn effective_wavelength(&self) -> f32 {
        self.wavelength.unwrap_or(0.5 * self.size[0].min(self.size[1]))
    }
}

/// Hashes integers to a 64-bit value with SplitMix64 steps.
fn hash(parts: &[u64]) -> u64 {
    parts.iter().fold(0x243F_6A88_85A3_08D3, |h, &p| Rng::new(h ^ p).next_u64())
}

/// Value noise at lattice point `(ix, iz)` of one octave, uniform in `[0, 1)`.
fn lattice(seed: u64, octave: u32, ix: i64, iz: i64) -> f32 {
    let h = hash(&[seed, octave as u64, ix as u64, iz as u64]);
    (h >> 40) as f32 * (1.0 / (1u64 << 24) as f32)
}

/// Fractal value noise (quintic interpolation between lattice values).
fn fbm(seed: u64, octaves: u32, wavelength: f32, x: f32, z: f32) -> f32 {
    let fade = |t: f32| t * t * t * (t * (t * 6.0 - 15.0) + 10.0);
    let (mut sum, mut amp, mut freq) = (0.0f32, 1.0f32, 1.0 / wavelength);
    for o in 0..octaves {
        let (u, w) = (x * freq, z * freq);
        let (fu, fw) = (u.floor(), w.floor());
        let (ix, iz) = (fu as i64, fw as i64);
        let (tx, tz) = (fade(u - fu), fade(w - fw));
        let v00 = lattice(seed, o, ix, iz);
        let v10 = lattice(seed, o, ix + 1, iz);
        let v01 = lattice(seed, o, ix, iz + 1);
        let v11 = lattice(seed, o, ix + 1, iz + 1);
        let a = v00 + (v10 - v00) * tx;
        let b = v01 + (v11 - v01) * tx;
        sum += amp * (a + (b - a) * tz);
        amp *= 0.5;
        freq *= 2.0;
    }
    sum
}

/// A heightfield over a `resolution × resolution` grid: `(resolution + 1)²` vertices, row by
/// row along x (`positions[j * (resolution + 1) + i]` is column `i`, row `j`), and two
/// triangles per cell facing +Y. Heights are fractal value noise rescaled to span exactly
/// `[origin.y, origin.y + height]`.
pub fn terrain(p: &TerrainParams) -> Result<MeshData, ParamError> {
    p.validate()?;
    let n = p.resolution as usize;
    let [sx, sz] = p.size;
    let [ox, oy, oz] = p.origin;
    let (x0, z0) = (ox - 0.5 * sx, oz - 0.5 * sz);
    let wavelength = p.effective_wavelength();
    let mut positions = Vec::with_capacity((n + 1) * (n + 1));
    for j in 0..=n {
        let z = sz * j as f32 / n as f32;
        for i in 0..=n {
            let x = sx * i as f32 / n as f32;
            // Noise is evaluated relative to the min corner, so moving `origin` moves the
            // terrain without changing its shape.
            positions.push([x0 + x, fbm(p.seed, p.octaves, wavelength, x, z), z0 + z]);
        }
    }
    let (lo, hi) =
        positions.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| (lo.min(v[1]), hi.max(v[1])));
    let scale = if hi > lo { p.height / (hi - lo) } else { 0.0 };
    for v in &mut positions {
        v[1] = oy + (v[1] - lo) * scale;
    }
    let row = (n + 1) as u32;
    let mut indices = Vec::with_capacity(2 * n * n);
    for j in 0..n as u32 {
        for i in 0..n as u32 {
            let a = j * row + i; // (i, j)
            let b = a + 1; // (i + 1, j)
            let c = a + row; // (i, j + 1)
            let d = c + 1; // (i + 1, j + 1)
            indices.push([a, c, b]);
            indices.push([b, c, d]);
        }
    }
    Ok(MeshData { positions, indices })
}

// ---------------------------------------------------------------------------------------
// City
// ---------------------------------------------------------------------------------------

/// Parameters of [`city`]; see the [module docs](self) for the keys and defaults.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CityParams {
    /// Seed (default 0).
    pub seed: u64,
    /// City blocks along x and z (default `[8, 8]`; each `>= 1`).
    pub blocks: [u32; 2],
    /// Side of a square block (default 20; `> 0`).
    pub block_size: f32,
    /// Street width between blocks (default 8; `>= 0`).
    pub street: f32,
    /// Buildings per block side: each block holds `lots × lots` buildings (default 2; `>= 1`).
    pub lots: u32,
    /// Lowest building (default 5; `>= 0`).
    pub min_height: f32,
    /// Highest building (default 40; `>= min_height`).
    pub max_height: f32,
    /// Centre of the city at ground level (default `[0, 0, 0]`).
    pub origin: [f32; 3],
}

impl Default for CityParams {
    fn default() -> Self {
        Self {
            seed: 0,
            blocks: [8, 8],
            block_size: 20.0,
            street: 8.0,
            lots: 2,
            min_height: 5.0,
            max_height: 40.0,
            origin: [0.0; 3],
        }
    }
}

impl CityParams {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.blocks.contains(&0) {
            return Err(bad("blocks", format!("must be >= 1 each, got {:?}", self.blocks)));
        }
        if self.lots == 0 {
            return Err(bad("lots", "must be >= 1, got 0"));
        }
        let boxes = self.box_count();
        if boxes > MAX_CITY_BOXES {
            let key = if self.lots > 1 { "lots" } else { "blocks" };
            return Err(bad(key, format!("blocks × lots² = {boxes} buildings; at most {MAX_CITY_BOXES}")));
        }
        finite("block_size", &[self.block_size])?;
        if self.block_size <= 0.0 {
            return Err(bad("block_size", format!("must be > 0, got {}", self.block_size)));
        }
        finite("street", &[self.street])?;
        if self.street < 0.0 {
            return Err(bad("street", format!("must be >= 0, got {}", self.street)));
        }
        finite("min_height", &[self.min_height])?;
        if self.min_height < 0.0 {
            return Err(bad("min_height", format!("must be >= 0, got {}", self.min_height)));
        }
        finite("max_height", &[self.max_height])?;
        if self.max_height < self.min_height {
            return Err(bad(
                "max_height",
                format!("must be >= min_height ({}), got {}", self.min_height, self.max_height),
            ));
        }
        finite("origin", &self.origin)
    }
    /// Number of buildings: `blocks[0] · blocks[1] · lots²`.
    pub fn box_count(&self) -> u64 {
        self.blocks[0] as u64 * self.blocks[1] as u64 * self.lots as u64 * self.lots as u64
    }
}

/// A grid of `blocks[0] × blocks[1]` square blocks separated by streets, each split into
/// `lots × lots` lots holding one building (a box standing on `origin.y`) set back from its
/// lot edges by a random 5–20 % of the lot on each side. Heights are
/// `min_height + (max_height - min_height) · u²` with `u` uniform in `[0, 1)`, so most
/// buildings are low and a few are towers. Blocks are listed row by row along x, lots
/// likewise inside a block.
pub fn city(p: &CityParams) -> Result<Vec<Aabb>, ParamError> {
    p.validate()?;
    let [nx, nz] = p.blocks;
    let pitch = p.block_size + p.street;
    let extent = |n: u32| n as f32 * p.block_size + (n - 1) as f32 * p.street;
    let origin = Vec3::from(p.origin);
    let corner = origin - Vec3::new(0.5 * extent(nx), 0.0, 0.5 * extent(nz));
    let lot = p.block_size / p.lots as f32;
    let mut rng = Rng::new(p.seed);
    let mut out = Vec::with_capacity(p.box_count() as usize);
    for bz in 0..nz {
        for bx in 0..nx {
            let block = corner + Vec3::new(bx as f32 * pitch, 0.0, bz as f32 * pitch);
            for lz in 0..p.lots {
                for lx in 0..p.lots {
                    let l = block + Vec3::new(lx as f32 * lot, 0.0, lz as f32 * lot);
                    let mut inset = || rng.range(0.05, 0.2) * lot;
                    let (x0, x1, z0, z1) = (inset(), inset(), inset(), inset());
                    let u = rng.f32();
                    let h = p.min_height + (p.max_height - p.min_height) * u * u;
                    out.push(Aabb::new(
                        Vec3::new(l.x + x0, origin.y, l.z + z0),
                        Vec3::new(l.x + lot - x1, origin.y + h, l.z + lot - z1),
                    ));
                }
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Spheres
// ---------------------------------------------------------------------------------------

/// Parameters of [`spheres`]; see the [module docs](self) for the keys and defaults.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpheresParams {
    /// Seed (default 0).
    pub seed: u64,
    /// Number of spheres (default 100; at most [`MAX_SPHERES`]).
    pub count: u64,
    /// Minimum corner of the box the centres are drawn from (default `[-10, 0, -10]`).
    pub min: [f32; 3],
    /// Maximum corner of the box the centres are drawn from (default `[10, 10, 10]`).
    pub max: [f32; 3],
    /// `[rmin, rmax]`: radii are uniform in this range (default `[0.2, 1.0]`;
    /// `0 <= rmin <= rmax`).
    pub radius: [f32; 2],
}

impl Default for SpheresParams {
    fn default() -> Self {
        Self { seed: 0, count: 100, min: [-10.0, 0.0, -10.0], max: [10.0, 10.0, 10.0], radius: [0.2, 1.0] }
    }
}

impl SpheresParams {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.count > MAX_SPHERES {
            return Err(bad("count", format!("must be at most {MAX_SPHERES}, got {}", self.count)));
        }
        finite("min", &self.min)?;
        finite("max", &self.max)?;
        if (0..3).any(|k| self.min[k] > self.max[k]) {
            return Err(bad(
                "max",
                format!("must be >= min on every axis, got min {:?}, max {:?}", self.min, self.max),
            ));
        }
        finite("radius", &self.radius)?;
        let [r0, r1] = self.radius;
        if !(0.0 <= r0 && r0 <= r1) {
            return Err(bad("radius", format!("needs 0 <= rmin <= rmax, got [{r0}, {r1}]")));
        }
        Ok(())
    }
}

/// `count` spheres with centres uniform in the box `[min, max]` and radii uniform in
/// `radius` (spheres may overlap).
pub fn spheres(p: &SpheresParams) -> Result<Vec<Sphere>, ParamError> {
    p.validate()?;
    let mut rng = Rng::new(p.seed);
    let (lo, hi) = (p.min, p.max);
    Ok((0..p.count)
        .map(|_| {
            let c = Vec3::new(rng.range(lo[0], hi[0]), rng.range(lo[1], hi[1]), rng.range(lo[2], hi[2]));
            Sphere::new(c, rng.range(p.radius[0], p.radius[1]))
        })
        .collect())
}

// ---------------------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------------------

/// One procedural object, as named by a `[[generate]]` entry's `kind`.
#[derive(Clone, Debug, PartialEq)]
pub enum Generator {
    /// `kind = "terrain"`: a heightfield mesh.
    Terrain(TerrainParams),
    /// `kind = "city"`: a box set.
    City(CityParams),
    /// `kind = "spheres"`: a sphere set.
    Spheres(SpheresParams),
}

impl Generator {
    /// The `kind` names, in the order of the variants.
    pub const KINDS: [&'static str; 3] = ["terrain", "city", "spheres"];

    /// The `kind` name of this generator.
    pub fn kind(&self) -> &'static str {
        match self {
            Generator::Terrain(_) => "terrain",
            Generator::City(_) => "city",
            Generator::Spheres(_) => "spheres",
        }
    }
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            Generator::Terrain(p) => p.validate(),
            Generator::City(p) => p.validate(),
            Generator::Spheres(p) => p.validate(),
        }
    }
    /// Generates the content and adds it to `builder` as one geometry; returns its id.
    /// Bad parameters are a [`SceneError::InvalidShape`] naming the key.
    pub fn add_to(&self, builder: &mut SceneBuilder) -> Result<u32, SceneError> {
        let param = |e: ParamError| SceneError::InvalidShape {
            geom: builder.geoms().len() as u32,
            what: format!("{} generator: {e}", self.kind()),
        };
        match self {
            Generator::Terrain(p) => {
                let m = terrain(p).map_err(param)?;
                builder.add_mesh(&m.positions, &m.indices)
            }
            Generator::City(p) => {
                let b = city(p).map_err(param)?;
                builder.add_boxes(&b)
            }
            Generator::Spheres(p) => {
                let s = spheres(p).map_err(param)?;
                builder.add_spheres(&s)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terrain_shape_and_range() {
        let p = TerrainParams { resolution: 16, height: 5.0, origin: [1.0, 2.0, 3.0], ..Default::default() };
        let m = terrain(&p).unwrap();
        assert_eq!(m.positions.len(), 17 * 17);
        assert_eq!(m.indices.len(), 2 * 16 * 16);
        let b = m.bounds();
        assert_eq!(b.min, Vec3::new(-49.0, 2.0, -47.0));
        assert_eq!(b.max, Vec3::new(51.0, 7.0, 53.0));
        // Every triangle faces up.
        for t in &m.indices {
            let v = t.map(|i| Vec3::from(m.positions[i as usize]));
            assert!((v[1] - v[0]).cross(v[2] - v[0]).y > 0.0);
        }
        assert_eq!(terrain(&p).unwrap(), m);
        assert_ne!(terrain(&TerrainParams { seed: 1, ..p }).unwrap(), m);
    }

    #[test]
    fn city_layout() {
        let p = CityParams { blocks: [2, 3], lots: 1, ..Default::default() };
        let b = city(&p).unwrap();
        assert_eq!(b.len(), 6);
        for a in &b {
            assert!(a.is_valid());
            assert_eq!(a.min.y, 0.0);
            assert!(a.max.y >= 5.0 && a.max.y <= 40.0);
            // Inside the city's footprint (2·20 + 8 by 3·20 + 2·8).
            assert!(a.min.x >= -24.0 && a.max.x <= 24.0);
            assert!(a.min.z >= -38.0 && a.max.z <= 38.0);
        }
    }

    #[test]
    fn spheres_in_region() {
        let p = SpheresParams { count: 1000, ..Default::default() };
        let s = spheres(&p).unwrap();
        assert_eq!(s.len(), 1000);
        for s in &s {
            assert!(s.center.cmpge(Vec3::new(-10.0, 0.0, -10.0)).all());
            assert!(s.center.cmple(Vec3::splat(10.0)).all());
            assert!((0.2..=1.0).contains(&s.radius));
        }
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let e = terrain(&TerrainParams { resolution: 0, ..Default::default() }).unwrap_err();
        assert_eq!(e.key, "resolution");
        let e = city(&CityParams { min_height: 10.0, max_height: 1.0, ..Default::default() }).unwrap_err();
        assert_eq!(e.key, "max_height");
        let e = spheres(&SpheresParams { radius: [-1.0, 1.0], ..Default::default() }).unwrap_err();
        assert_eq!(e.key, "radius");
        let e = city(&CityParams { blocks: [100_000, 100_000], lots: 1, ..Default::default() }).unwrap_err();
        assert_eq!(e.key, "blocks");
    }
}
