//! Hit records: the scalar [`Hit`], the lane packet [`HitPacket`] and the column buffer
//! [`HitSoa`].
//!
//! A hit carries `t`, the geometry id, the primitive id inside that geometry, triangle
//! barycentrics `(u, v)` (the point is `(1-u-v) p0 + u p1 + v p2`; 0 for other shapes) and
//! the unit geometric normal (the shape's outward normal for spheres and boxes,
//! `normalize(cross(p1 - p0, p2 - p0))` for triangles, the plane's normalised normal for
//! planes; it is not flipped to face the ray). A miss is `t = +inf`, ids `u32::MAX`.

use crate::lanes::{Lanes, Mask};
use crate::ray::padded_len;
use glam::Vec3;

/// Id value of a miss.
pub const NO_ID: u32 = u32::MAX;

/// Which kind of primitive a hit is on.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum HitKind {
    /// Nothing (a miss, or a hit read back from a file, which does not store the kind).
    #[default]
    None = 0,
    /// A triangle (of a mesh or a single triangle).
    Triangle = 1,
    /// A sphere.
    Sphere = 2,
    /// An axis-aligned box.
    Box = 3,
    /// An infinite plane.
    Plane = 4,
}

/// A closest hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// Ray parameter of the hit (in units of the ray direction).
    pub t: f32,
    /// Geometry id (file order in a scene, insertion order in a builder).
    pub geom: u32,
    /// Primitive id inside the geometry (triangle index in a mesh, sphere index in a set).
    pub prim: u32,
    /// Barycentric weight of a triangle's second vertex (0 for other shapes).
    pub u: f32,
    /// Barycentric weight of a triangle's third vertex (0 for other shapes).
    pub v: f32,
    /// Unit geometric normal.
    pub normal: Vec3,
    /// Which kind of primitive was hit ([`HitKind::None`] for a miss).
    pub kind: HitKind,
    /// Instance id when the hit is on a placed copy of a geometry
    /// ([`crate::scene::SceneBuilder::add_instance`]); [`NO_ID`] otherwise (and for a miss).
    pub inst: u32,
}

impl Hit {
    /// The miss record: `t = +inf`, ids `u32::MAX`, zeros elsewhere, kind `None`.
    pub const MISS: Hit = Hit {
        t: f32::INFINITY,
        geom: NO_ID,
        prim: NO_ID,
        u: 0.0,
        v: 0.0,
        normal: Vec3::ZERO,
        kind: HitKind::None,
        inst: NO_ID,
    };

    /// True unless this is the miss record.
    pub fn is_hit(&self) -> bool {
        self.geom != NO_ID
    }
}

/// Closest hits of `L::N` rays, one per lane (misses as in [`Hit::MISS`]).
#[derive(Clone, Copy, Debug)]
pub struct HitPacket<L: Lanes> {
    /// Hit parameters.
    pub t: L,
    /// Geometry ids (first `L::N` entries used).
    pub geom: [u32; 8],
    /// Primitive ids (first `L::N` entries used).
    pub prim: [u32; 8],
    /// Barycentric u.
    pub u: L,
    /// Barycentric v.
    pub v: L,
    /// Normals.
    pub normal: crate::vec3x::Vec3x<L>,
    /// Kinds of the hit primitives (first `L::N` entries used).
    pub kind: [HitKind; 8],
    /// Instance ids ([`NO_ID`] when not through an instance; first `L::N` entries used).
    pub inst: [u32; 8],
}

impl<L: Lanes> Default for HitPacket<L> {
    fn default() -> Self {
        const { assert!(L::N <= crate::lanes::MAX_PACKET_LANES, "a hit packet holds at most 8 rays") };
        Self {
            t: L::splat(f32::INFINITY),
            geom: [NO_ID; 8],
            prim: [NO_ID; 8],
            u: L::splat(0.0),
            v: L::splat(0.0),
            normal: crate::vec3x::Vec3x::splat(Vec3::ZERO),
            kind: [HitKind::None; 8],
            inst: [NO_ID; 8],
        }
    }
}

impl<L: Lanes> HitPacket<L> {
    /// The hit of lane `i`.
    ///
    /// # Panics
    /// If `i >= L::N`.
    #[must_use]
    pub fn lane(&self, i: usize) -> Hit {
        assert!(i < L::N, "lane {i} of a {}-lane packet", L::N);
        Hit {
            t: self.t.lane(i),
            geom: self.geom[i],
            prim: self.prim[i],
            u: self.u.lane(i),
            v: self.v.lane(i),
            normal: self.normal.lane(i),
            kind: self.kind[i],
            inst: self.inst[i],
        }
    }
    /// Writes `h` into lane `i`.
    ///
    /// # Panics
    /// If `i >= L::N`.
    pub fn set_lane(&mut self, i: usize, h: &Hit) {
        assert!(i < L::N, "lane {i} of a {}-lane packet", L::N);
        self.t.lanes_mut()[i] = h.t;
        self.u.lanes_mut()[i] = h.u;
        self.v.lanes_mut()[i] = h.v;
        self.normal.x.lanes_mut()[i] = h.normal.x;
        self.normal.y.lanes_mut()[i] = h.normal.y;
        self.normal.z.lanes_mut()[i] = h.normal.z;
        self.geom[i] = h.geom;
        self.prim[i] = h.prim;
        self.kind[i] = h.kind;
        self.inst[i] = h.inst;
    }
    /// Lanes holding a hit.
    pub fn hit_mask(&self) -> L::Mask {
        L::Mask::from_bitmask(
            self.geom.iter().take(L::N).enumerate().fold(0, |m, (i, &g)| m | (((g != NO_ID) as u32) << i)),
        )
    }
}

/// Hits stored as columns (`t u v nx ny nz` f32, `geom prim inst` u32), padded to a lane multiple.
#[derive(Clone, Debug, Default)]
pub struct HitSoa {
    /// Hit parameters (`+inf` for misses).
    pub t: Vec<f32>,
    /// Geometry ids (`u32::MAX` for misses).
    pub geom: Vec<u32>,
    /// Primitive ids (`u32::MAX` for misses).
    pub prim: Vec<u32>,
    /// Barycentric u.
    pub u: Vec<f32>,
    /// Barycentric v.
    pub v: Vec<f32>,
    /// Normal x.
    pub nx: Vec<f32>,
    /// Normal y.
    pub ny: Vec<f32>,
    /// Normal z.
    pub nz: Vec<f32>,
    /// Kinds ([`HitKind::None`] for misses).
    pub kind: Vec<HitKind>,
    /// Instance ids ([`NO_ID`] when not through an instance, and for misses).
    pub inst: Vec<u32>,
    len: usize,
}

impl HitSoa {
    /// `n` miss records.
    pub fn with_len(n: usize) -> Self {
        let p = padded_len(n);
        Self {
            t: vec![f32::INFINITY; p],
            geom: vec![NO_ID; p],
            prim: vec![NO_ID; p],
            u: vec![0.0; p],
            v: vec![0.0; p],
            nx: vec![0.0; p],
            ny: vec![0.0; p],
            nz: vec![0.0; p],
            kind: vec![HitKind::None; p],
            inst: vec![NO_ID; p],
            len: n,
        }
    }
    /// Number of records (without padding).
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Record `i`.
    pub fn get(&self, i: usize) -> Hit {
        assert!(i < self.len, "hit index {i} out of range for {} hits", self.len);
        Hit {
            t: self.t[i],
            geom: self.geom[i],
            prim: self.prim[i],
            u: self.u[i],
            v: self.v[i],
            normal: Vec3::new(self.nx[i], self.ny[i], self.nz[i]),
            kind: self.kind[i],
            inst: self.inst[i],
        }
    }
    /// Overwrites record `i`.
    pub fn set(&mut self, i: usize, h: &Hit) {
        assert!(i < self.len, "hit index {i} out of range for {} hits", self.len);
        self.all_mut().set(i, h);
    }
    /// All records as one mutable run.
    fn all_mut(&mut self) -> HitChunk<'_> {
        let n = self.len;
        HitChunk {
            start: 0,
            t: &mut self.t[..n],
            geom: &mut self.geom[..n],
            prim: &mut self.prim[..n],
            u: &mut self.u[..n],
            v: &mut self.v[..n],
            nx: &mut self.nx[..n],
            ny: &mut self.ny[..n],
            nz: &mut self.nz[..n],
            kind: &mut self.kind[..n],
            inst: &mut self.inst[..n],
        }
    }
    /// Disjoint mutable views of consecutive runs of `chunk` records, for parallel filling.
    pub fn chunks_mut(&mut self, chunk: usize) -> Vec<HitChunk<'_>> {
        let n = self.len;
        let mut out = Vec::with_capacity(n.div_ceil(chunk.max(1)));
        let cs = chunk.max(1);
        let t = self.t[..n].chunks_mut(cs);
        let mut g = self.geom[..n].chunks_mut(cs);
        let mut p = self.prim[..n].chunks_mut(cs);
        let mut u = self.u[..n].chunks_mut(cs);
        let mut v = self.v[..n].chunks_mut(cs);
        let mut x = self.nx[..n].chunks_mut(cs);
        let mut y = self.ny[..n].chunks_mut(cs);
        let mut z = self.nz[..n].chunks_mut(cs);
        let mut k = self.kind[..n].chunks_mut(cs);
        let mut s = self.inst[..n].chunks_mut(cs);
        let mut start = 0;
        for tc in t {
            let len = tc.len();
            out.push(HitChunk {
                start,
                t: tc,
                geom: g.next().unwrap_or_default(),
                prim: p.next().unwrap_or_default(),
                u: u.next().unwrap_or_default(),
                v: v.next().unwrap_or_default(),
                nx: x.next().unwrap_or_default(),
                ny: y.next().unwrap_or_default(),
                nz: z.next().unwrap_or_default(),
                kind: k.next().unwrap_or_default(),
                inst: s.next().unwrap_or_default(),
            });
            start += len;
        }
        out
    }
}

/// Up to [`HitStage::LEN`] hit records in columns small enough to stay in the L1 cache (10
/// KB), filled one by one through [`HitStage::run`] and then written to a [`HitChunk`] at
/// once ([`HitChunk::write_staged`]).
pub(crate) struct HitStage {
    t: [f32; Self::ROW],
    geom: [u32; Self::ROW],
    prim: [u32; Self::ROW],
    u: [f32; Self::ROW],
    v: [f32; Self::ROW],
    nx: [f32; Self::ROW],
    ny: [f32; Self::ROW],
    nz: [f32; Self::ROW],
    kind: [HitKind; Self::ROW],
    inst: [u32; Self::ROW],
}

impl HitStage {
    /// Records a stage holds.
    pub(crate) const LEN: usize = 256;
    /// Values per column: a line more than [`HitStage::LEN`], so that no two columns lie a
    /// multiple of 4 KB apart (a load 4 KB away from a pending store can wait on it, the
    /// first address check comparing only the low 12 bits). A precaution: with the columns
    /// 1 KB apart, bunny primary batches read 4–7 % slower than before the stage, with the
    /// skew even, one comparison each on a noisy host (ARCHITECTURE.md).
    const ROW: usize = Self::LEN + 16;

    /// A stage of miss records.
    pub(crate) fn new() -> Self {
        Self {
            t: [f32::INFINITY; Self::ROW],
            geom: [NO_ID; Self::ROW],
            prim: [NO_ID; Self::ROW],
            u: [0.0; Self::ROW],
            v: [0.0; Self::ROW],
            nx: [0.0; Self::ROW],
            ny: [0.0; Self::ROW],
            nz: [0.0; Self::ROW],
            kind: [HitKind::None; Self::ROW],
            inst: [NO_ID; Self::ROW],
        }
    }

    /// The first `n` records as a run to fill with [`HitChunk::set`] (panics when `n > LEN`).
    pub(crate) fn run(&mut self, n: usize) -> HitChunk<'_> {
        HitChunk {
            start: 0,
            t: &mut self.t[..n],
            geom: &mut self.geom[..n],
            prim: &mut self.prim[..n],
            u: &mut self.u[..n],
            v: &mut self.v[..n],
            nx: &mut self.nx[..n],
            ny: &mut self.ny[..n],
            nz: &mut self.nz[..n],
            kind: &mut self.kind[..n],
            inst: &mut self.inst[..n],
        }
    }
}

/// A mutable run of records of a [`HitSoa`], starting at record `start`.
pub struct HitChunk<'a> {
    /// Index of the first record.
    pub start: usize,
    t: &'a mut [f32],
    geom: &'a mut [u32],
    prim: &'a mut [u32],
    u: &'a mut [f32],
    v: &'a mut [f32],
    nx: &'a mut [f32],
    ny: &'a mut [f32],
    nz: &'a mut [f32],
    kind: &'a mut [HitKind],
    inst: &'a mut [u32],
}

impl HitChunk<'_> {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.t.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }
    /// Overwrites the whole run with the first `self.len()` records of `stage`, column by
    /// column (panics when the run is longer than a stage).
    pub(crate) fn write_staged(&mut self, stage: &HitStage) {
        let n = self.len();
        self.t.copy_from_slice(&stage.t[..n]);
        self.geom.copy_from_slice(&stage.geom[..n]);
        self.prim.copy_from_slice(&stage.prim[..n]);
        self.u.copy_from_slice(&stage.u[..n]);
        self.v.copy_from_slice(&stage.v[..n]);
        self.nx.copy_from_slice(&stage.nx[..n]);
        self.ny.copy_from_slice(&stage.ny[..n]);
        self.nz.copy_from_slice(&stage.nz[..n]);
        self.kind.copy_from_slice(&stage.kind[..n]);
        self.inst.copy_from_slice(&stage.inst[..n]);
    }
    /// Overwrites record `i` of the run.
    pub fn set(&mut self, i: usize, h: &Hit) {
        self.t[i] = h.t;
        self.geom[i] = h.geom;
        self.prim[i] = h.prim;
        self.u[i] = h.u;
        self.v[i] = h.v;
        self.nx[i] = h.normal.x;
        self.ny[i] = h.normal.y;
        self.nz[i] = h.normal.z;
        self.kind[i] = h.kind;
        self.inst[i] = h.inst;
    }
}
