//! Column storage for primitives ([`Soa`]) and their lane views, with the sanitizing
//! constructors that turn invalid shapes into never-hit values.

use super::shapes::{Aabb, Capsule, Plane, Sphere, Triangle};
use crate::lanes::Lanes;
use crate::ray::padded_len;
use crate::vec3x::Vec3x;
use core::marker::PhantomData;
use glam::Vec3;

/// A shape kind that can live in a [`Soa`] block and be tested `N` at a time:
/// [`Sphere`], [`Aabb`], [`Triangle`], [`Plane`] and [`Capsule`].
///
/// Sealed: [`Soa`]'s unchecked lane loads trust `COLUMNS` (at most [`MAX_COLUMNS`]) and the
/// column layout of these implementations. A complete implementation outside the crate does
/// not compile:
///
/// ```compile_fail,E0277
/// use lanecast::Lanes;
/// use lanecast::prim::{ColumnsAt, Primitive, SphereLanes};
///
/// #[derive(Clone, Copy)]
/// struct Wide; // 17 columns would overflow the scratch rows
/// impl Primitive for Wide {
///     const COLUMNS: usize = 17;
///     type Lanes<L: Lanes> = SphereLanes<L>;
///     fn never_hit() -> Self { Wide }
///     fn is_valid(&self) -> bool { true }
///     fn write_columns(&self, _out: &mut [f32]) {}
///     fn read_columns(_src: &[f32]) -> Self { Wide }
///     fn load_lanes<L: Lanes>(_cols: &ColumnsAt<'_>) -> SphereLanes<L> { unimplemented!() }
///     fn splat_lanes<L: Lanes>(&self) -> SphereLanes<L> { unimplemented!() }
/// }
/// ```
pub trait Primitive: Copy + Sized + sealed::Sealed {
    /// Number of f32 columns (at most [`MAX_COLUMNS`], checked at compile time).
    const COLUMNS: usize;
    /// The lane view: one shape per lane.
    type Lanes<L: Lanes>: Copy;
    /// The never-hit value (used for invalid shapes and padding).
    fn never_hit() -> Self;
    /// Whether the shape is valid (see the [module docs](crate::prim)).
    fn is_valid(&self) -> bool;
    /// Writes the shape's `COLUMNS` numbers.
    fn write_columns(&self, out: &mut [f32]);
    /// Reads a shape from `COLUMNS` numbers.
    fn read_columns(src: &[f32]) -> Self;
    /// Loads lanes `i..i + N` from a block's (already sanitized) columns.
    fn load_lanes<L: Lanes>(cols: &ColumnsAt<'_>) -> Self::Lanes<L>;
    /// The same (sanitized) shape in every lane.
    fn splat_lanes<L: Lanes>(&self) -> Self::Lanes<L>;
    /// The shape if valid, else [`Primitive::never_hit`].
    #[inline]
    fn sanitized(&self) -> Self {
        if self.is_valid() { *self } else { Self::never_hit() }
    }
}

/// Most f32 columns a [`Primitive`] may have (the size of the scratch row `Soa` copies a shape
/// through).
pub const MAX_COLUMNS: usize = 16;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Sphere {}
    impl Sealed for super::Aabb {}
    impl Sealed for super::Triangle {}
    impl Sealed for super::Plane {}
    impl Sealed for super::Capsule {}
}

/// `f32` values per 64-byte cache line.
const LINE: usize = crate::lanes::F32_PER_LINE;

/// The lane blocks of a range of shapes ([`Soa::blocks`]): `(start, lanes)` pairs.
pub(crate) struct Blocks<L> {
    i: usize,
    end: usize,
    /// The buffer's address in values (its offset within a line is that modulo [`LINE`]).
    phase: usize,
    _lanes: PhantomData<L>,
}

impl<L: Lanes> Iterator for Blocks<L> {
    type Item = (usize, u32);
    #[inline(always)]
    fn next(&mut self) -> Option<(usize, u32)> {
        if self.i >= self.end {
            return None;
        }
        let (i, n) = (self.i, (self.end - self.i).min(L::N));
        self.i += n;
        let off = self.phase.wrapping_add(i) % LINE;
        // How far back the block ends at the line's end (the buffer need not start on a
        // line, so at its very start there may be no room to move back).
        let back = (off + L::N).saturating_sub(LINE);
        // Without a branch: whether the block fits its line depends on the leaf, which
        // varies from ray to ray and would mispredict.
        let fits = (off + n <= LINE) & (back <= i);
        let start = i - (back & usize::from(fits).wrapping_neg());
        Some((start, ((1u32 << n) - 1) << (i - start)))
    }
}

/// Many primitives of one kind stored column-wise, padded to a lane multiple with
/// never-hit values. Invalid shapes are stored as never-hit values.
///
/// All columns live in one buffer, column `c` at `c * stride`, so loading a lane block needs
/// no pointer chasing. `stride` leaves at least one lane block of slack after `len`, so `N`
/// lanes can be loaded from any start index below `len` (BVH leaves start anywhere).
#[derive(Clone, Debug)]
pub struct Soa<P: Primitive> {
    data: Vec<f32>,
    stride: usize,
    len: usize,
    _kind: PhantomData<P>,
}

impl<P: Primitive> Default for Soa<P> {
    fn default() -> Self {
        let mut s = Self { data: Vec::new(), stride: 0, len: 0, _kind: PhantomData };
        s.reserve(0);
        s
    }
}

impl<P: Primitive> Soa<P> {
    /// Compile-time check that the kind's columns fit the scratch rows below.
    const FITS: () = assert!(P::COLUMNS >= 1 && P::COLUMNS <= MAX_COLUMNS);

    /// From scalar shapes.
    pub fn from_slice(prims: &[P]) -> Self {
        let mut s = Self::default();
        s.reserve(prims.len());
        s.extend(prims.iter().copied());
        s
    }
    /// From `COLUMNS` columns of equal length (e.g. `bytemuck::cast_slice` of your buffers).
    /// Returns `None` when the column count or lengths do not match.
    pub fn from_columns(cols: &[&[f32]]) -> Option<Self> {
        let n = cols.first().map_or(0, |c| c.len());
        if cols.len() != P::COLUMNS || cols.iter().any(|c| c.len() != n) {
            return None;
        }
        let mut s = Self::default();
        s.reserve(n);
        let mut buf = [0.0f32; MAX_COLUMNS];
        s.extend((0..n).map(|i| {
            for (b, c) in buf.iter_mut().zip(cols) {
                *b = c[i];
            }
            P::read_columns(&buf[..P::COLUMNS])
        }));
        Some(s)
    }
    /// Makes room for `additional` more shapes (re-laying out the columns if needed).
    ///
    /// # Panics
    /// If the new size overflows `usize` or memory cannot be allocated.
    pub fn reserve(&mut self, additional: usize) {
        let () = Self::FITS;
        let need = self
            .len
            .checked_add(additional)
            .and_then(|n| n.checked_next_multiple_of(crate::ray::PAD))
            .and_then(|n| n.checked_add(crate::ray::PAD))
            .expect("Soa capacity overflow");
        if need <= self.stride {
            return;
        }
        let stride = need.max(self.stride.saturating_mul(2));
        let total = stride.checked_mul(P::COLUMNS).expect("Soa capacity overflow");
        let mut fill = [0.0f32; MAX_COLUMNS];
        P::never_hit().write_columns(&mut fill);
        let mut data = Vec::with_capacity(total);
        for (c, &pad) in fill.iter().enumerate().take(P::COLUMNS) {
            data.extend_from_slice(&self.data[c * self.stride..c * self.stride + self.len]);
            data.resize((c + 1) * stride, pad);
        }
        self.data = data;
        self.stride = stride;
    }
    /// Appends shapes (sanitized), reserving room for the iterator's lower size hint first.
    pub fn extend(&mut self, prims: impl IntoIterator<Item = P>) {
        let mut prims = prims.into_iter();
        self.reserve(prims.size_hint().0);
        let mut buf = [0.0f32; MAX_COLUMNS];
        loop {
            // The shapes that fit, written through a local slice, stride and length, with no
            // `reserve` call per shape: a scene build's reorder into leaf order (sponza) took
            // 0.58 ms this way against 0.755 ms with every value stored through `self` and a
            // `reserve(1)` per shape.
            let (stride, mut len) = (self.stride, self.len);
            // `reserve` keeps `len + PAD <= stride`: room for `stride - PAD` shapes.
            let room = stride.saturating_sub(crate::ray::PAD);
            let data = self.data.as_mut_slice();
            let mut more = true;
            while len < room {
                let Some(p) = prims.next() else {
                    more = false;
                    break;
                };
                Self::put(data, stride, len, p, &mut buf);
                len += 1;
            }
            self.len = len;
            if !more {
                return;
            }
            // Full, and the iterator may hold more: room for one more shape (the stride
            // doubles), then go on.
            let Some(p) = prims.next() else { return };
            self.reserve(1);
            Self::put(&mut self.data, self.stride, self.len, p, &mut buf);
            self.len += 1;
        }
    }
    /// Writes shape `p` (sanitized) at index `at` of columns `stride` apart in `data`.
    #[inline(always)]
    fn put(data: &mut [f32], stride: usize, at: usize, p: P, buf: &mut [f32; MAX_COLUMNS]) {
        p.sanitized().write_columns(buf);
        for (c, &v) in buf.iter().enumerate().take(P::COLUMNS) {
            data[c * stride + at] = v;
        }
    }
    /// Appends one shape (sanitized).
    pub fn push(&mut self, p: P) {
        self.extend([p]);
    }
    /// Number of shapes (without padding).
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Length including padding (a multiple of [`crate::ray::PAD`]).
    pub fn padded_len(&self) -> usize {
        padded_len(self.len)
    }
    /// Shape `i` as stored (an invalid input reads back as its never-hit value).
    ///
    /// # Panics
    /// If `i >= len()`.
    #[inline]
    pub fn get(&self, i: usize) -> P {
        assert!(i < self.len, "index {i} out of range for {} shapes", self.len);
        let mut buf = [0.0f32; MAX_COLUMNS];
        for (c, b) in buf.iter_mut().enumerate().take(P::COLUMNS) {
            *b = self.data[c * self.stride + i];
        }
        P::read_columns(&buf[..P::COLUMNS])
    }
    /// The lane blocks that test shapes `first..first + count`, `N` at a time: for each, where
    /// to load the `N` lanes and which of them hold shapes of the range (bit `k`: shape
    /// `start + k`). Leaves of a BVH are tested this way.
    ///
    /// A block loads from its first shape, or, when its shapes lie in one 64-byte cache line
    /// of each column but the `N` lanes from there would reach into the next line, from the
    /// `N` lanes that end where that line ends. A small leaf then touches one line per column
    /// instead of two: leaves start anywhere, and with 8 lanes a load from the first shape
    /// crosses a line for 7 of the 16 offsets. Every column has the same offset within a line
    /// (the stride is a multiple of 16 values, and values are 4-byte aligned). A block starts
    /// at most `N - 1` shapes before its first one and never before 0, so the blocks of a
    /// range inside `len()` load inside the storage.
    #[inline(always)]
    pub(crate) fn blocks<L: Lanes>(&self, first: usize, count: usize) -> Blocks<L> {
        debug_assert!(self.stride.is_multiple_of(LINE));
        let phase = self.data.as_ptr() as usize / core::mem::size_of::<f32>();
        Blocks { i: first, end: first.saturating_add(count), phase, _lanes: PhantomData }
    }
    /// Prefetches the cache line that holds shape `i` in each column (a hint: no
    /// effect on any value, and an index past the storage is clamped to its end).
    #[inline(always)]
    pub(crate) fn prefetch_at(&self, i: usize) {
        let base = self.data.as_ptr();
        let i = i.min(self.stride);
        for c in 0..P::COLUMNS {
            // At most `COLUMNS · stride`, the buffer's length: no overflow.
            crate::lanes::prefetch_at(base.wrapping_add(c * self.stride + i).cast());
        }
    }
    /// Column `c` (`len()` values).
    ///
    /// # Panics
    /// If `c >= P::COLUMNS`.
    pub fn column(&self, c: usize) -> &[f32] {
        assert!(c < P::COLUMNS, "column {c} of {}", P::COLUMNS);
        &self.data[c * self.stride..c * self.stride + self.len]
    }
    /// Shape `i` broadcast to every lane (as stored: already sanitized).
    ///
    /// # Panics
    /// If `i >= len()`.
    #[inline(always)]
    pub fn splat_at<L: Lanes>(&self, i: usize) -> P::Lanes<L> {
        assert!(i < self.len, "index {i} out of range for {} shapes", self.len);
        let at = ColumnsAt {
            base: self.data.as_ptr(),
            stride: self.stride,
            cols: P::COLUMNS,
            i,
            splat: true,
            _data: PhantomData,
        };
        P::load_lanes(&at)
    }
    /// Shapes `i..i + N` as lanes, for any `i <= padded_len()`; lanes past `len()` are
    /// never-hit padding.
    ///
    /// # Panics
    /// If `i + N` is past the block's storage (which always extends one lane block past
    /// `padded_len()`).
    #[inline(always)]
    pub fn lanes<L: Lanes>(&self, i: usize) -> P::Lanes<L> {
        P::load_lanes(&self.lanes_at::<L>(i))
    }
    /// The checked position of [`Soa::lanes`].
    #[inline(always)]
    fn lanes_at<L: Lanes>(&self, i: usize) -> ColumnsAt<'_> {
        // One check covers every column: each has `stride >= N` values. Written so that it
        // cannot overflow (`i + N` could wrap for `i` near `usize::MAX`).
        assert!(
            self.stride.checked_sub(L::N).is_some_and(|last| i <= last),
            "lanes {i}..{i}+{} past the block's storage ({})",
            L::N,
            self.stride
        );
        debug_assert_eq!(self.data.len(), P::COLUMNS * self.stride);
        ColumnsAt {
            base: self.data.as_ptr(),
            stride: self.stride,
            cols: P::COLUMNS,
            i,
            splat: false,
            _data: PhantomData,
        }
    }
}

impl Soa<Triangle> {
    /// Triangles `i..i + N` as lanes ([`Soa::lanes`]) with each vertex's coordinates in the
    /// order `axes`: the result's `x` is world axis `axes[0]`, and so on. The watertight
    /// test's ray-space order, loaded directly instead of shuffled in registers.
    ///
    /// # Panics
    /// As [`Soa::lanes`], and if an axis is not 0, 1 or 2.
    #[inline(always)]
    pub fn triangle_lanes_in<L: Lanes>(&self, i: usize, axes: [usize; 3]) -> TriangleLanes<L> {
        let [x, y, z] = axes;
        assert!(x < 3 && y < 3 && z < 3, "axes {axes:?}: each must be 0, 1 or 2");
        let at = self.lanes_at::<L>(i);
        // Written out (a closure here was not inlined: a call per vertex).
        TriangleLanes {
            v0: Vec3x::new(at.get(x), at.get(y), at.get(z)),
            v1: Vec3x::new(at.get(3 + x), at.get(3 + y), at.get(3 + z)),
            v2: Vec3x::new(at.get(6 + x), at.get(6 + y), at.get(6 + z)),
        }
    }
    /// Triangle `index[k]` in lane `k` for every bit `k` of `lanes` (lanes without a bit
    /// hold zeros, as does every lane from `N` on): a gather of a few known triangles, such
    /// as the hits of a packet.
    ///
    /// # Panics
    /// If a gathered index is `>= len()`.
    #[inline]
    pub fn gather_lanes<L: Lanes>(&self, index: &[u32; 8], lanes: u32) -> TriangleLanes<L> {
        let mut c = [[0.0f32; 8]; 9];
        let mut bits = lanes & 0xff;
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let i = index[k] as usize;
            assert!(i < self.len, "index {i} out of range for {} shapes", self.len);
            for (col, lane) in c.iter_mut().enumerate() {
                lane[k] = self.data[col * self.stride + i];
            }
        }
        let v = |j: usize| Vec3x::new(L::load(&c[j]), L::load(&c[j + 1]), L::load(&c[j + 2]));
        TriangleLanes { v0: v(0), v1: v(3), v2: v(6) }
    }
}

/// A position `i` in a block's columns, checked by [`Soa::lanes`] to leave `N` readable
/// values in every column. Only this module can make one, which keeps the unchecked loads
/// below sound.
pub struct ColumnsAt<'a> {
    base: *const f32,
    stride: usize,
    cols: usize,
    i: usize,
    /// Broadcast value `i` instead of loading `i..i + N`.
    splat: bool,
    _data: PhantomData<&'a [f32]>,
}

impl ColumnsAt<'_> {
    /// Lanes `i..i + N` of column `c` (`c < COLUMNS` of the block's kind).
    #[inline(always)]
    pub fn get<L: Lanes>(&self, c: usize) -> L {
        // `cols` is the kind's constant COLUMNS, so after inlining this check folds away.
        assert!(c < self.cols, "column {c} of {}", self.cols);
        // SAFETY: both constructors checked that the read stays inside the buffer of
        // `cols * stride` values for every `c < cols`: `Soa::lanes` asserted `i + N <= stride`;
        // `Soa::splat_at` asserted `i < len <= stride` (one value read).
        unsafe {
            let p = self.base.add(c * self.stride + self.i);
            if self.splat { L::splat(p.read()) } else { L::load_ptr(p) }
        }
    }
    /// Lanes of columns `c, c + 1, c + 2` as a vector.
    #[inline(always)]
    pub fn vec3<L: Lanes>(&self, c: usize) -> Vec3x<L> {
        Vec3x::new(self.get(c), self.get(c + 1), self.get(c + 2))
    }
}
#[inline(always)]
fn put3(out: &mut [f32], c: usize, v: Vec3) {
    out[c..c + 3].copy_from_slice(&v.to_array());
}
#[inline(always)]
fn get3(src: &[f32], c: usize) -> Vec3 {
    Vec3::from_slice(&src[c..c + 3])
}

// ---------------------------------------------------------------------------------------

/// `N` spheres, one per lane (sanitized: invalid lanes are NaN and never hit).
#[derive(Clone, Copy, Debug)]
pub struct SphereLanes<L: Lanes> {
    pub(crate) center: Vec3x<L>,
    pub(crate) radius: L,
}

impl<L: Lanes> SphereLanes<L> {
    /// From lanes; lanes with non-finite numbers or a negative radius become never-hit.
    pub fn new(center: Vec3x<L>, radius: L) -> Self {
        let ok = center.is_finite() & radius.is_finite() & radius.ge(L::splat(0.0));
        let nan = L::splat(f32::NAN);
        Self { center: Vec3x::select(ok, center, Vec3x::new(nan, nan, nan)), radius: L::select(ok, radius, nan) }
    }
    /// The same sphere in every lane.
    pub fn splat(s: &Sphere) -> Self {
        s.splat_lanes()
    }
    /// Centres.
    pub fn center(&self) -> Vec3x<L> {
        self.center
    }
    /// Radii.
    pub fn radius(&self) -> L {
        self.radius
    }
    /// The sphere in lane `i`.
    pub fn lane(&self, i: usize) -> Sphere {
        Sphere::new(self.center.lane(i), self.radius.lane(i))
    }
}

impl Primitive for Sphere {
    const COLUMNS: usize = 4;
    type Lanes<L: Lanes> = SphereLanes<L>;
    fn never_hit() -> Self {
        Sphere::new(Vec3::NAN, f32::NAN)
    }
    fn is_valid(&self) -> bool {
        Sphere::is_valid(self)
    }
    fn write_columns(&self, out: &mut [f32]) {
        put3(out, 0, self.center);
        out[3] = self.radius;
    }
    fn read_columns(src: &[f32]) -> Self {
        Sphere::new(get3(src, 0), src[3])
    }
    #[inline(always)]
    fn load_lanes<L: Lanes>(cols: &ColumnsAt<'_>) -> SphereLanes<L> {
        SphereLanes { center: cols.vec3(0), radius: cols.get(3) }
    }
    #[inline(always)]
    fn splat_lanes<L: Lanes>(&self) -> SphereLanes<L> {
        let s = self.sanitized();
        SphereLanes { center: Vec3x::splat(s.center), radius: L::splat(s.radius) }
    }
}

// ---------------------------------------------------------------------------------------

/// `N` boxes, one per lane (sanitized: invalid lanes are the empty box and never hit).
#[derive(Clone, Copy, Debug)]
pub struct AabbLanes<L: Lanes> {
    pub(crate) min: Vec3x<L>,
    pub(crate) max: Vec3x<L>,
}

impl<L: Lanes> AabbLanes<L> {
    /// From lanes; lanes with non-finite corners or `min > max` become the empty box.
    pub fn new(min: Vec3x<L>, max: Vec3x<L>) -> Self {
        let ok = min.is_finite() & max.is_finite() & min.x.le(max.x) & min.y.le(max.y) & min.z.le(max.z);
        Self {
            min: Vec3x::select(ok, min, Vec3x::splat(Vec3::INFINITY)),
            max: Vec3x::select(ok, max, Vec3x::splat(Vec3::NEG_INFINITY)),
        }
    }
    /// The same box in every lane.
    pub fn splat(b: &Aabb) -> Self {
        b.splat_lanes()
    }
    /// Minimum corners.
    pub fn min(&self) -> Vec3x<L> {
        self.min
    }
    /// Maximum corners.
    pub fn max(&self) -> Vec3x<L> {
        self.max
    }
    /// The box in lane `i`.
    pub fn lane(&self, i: usize) -> Aabb {
        Aabb::new(self.min.lane(i), self.max.lane(i))
    }
}

impl Primitive for Aabb {
    const COLUMNS: usize = 6;
    type Lanes<L: Lanes> = AabbLanes<L>;
    fn never_hit() -> Self {
        Aabb::EMPTY
    }
    fn is_valid(&self) -> bool {
        Aabb::is_valid(self)
    }
    fn write_columns(&self, out: &mut [f32]) {
        put3(out, 0, self.min);
        put3(out, 3, self.max);
    }
    fn read_columns(src: &[f32]) -> Self {
        Aabb::new(get3(src, 0), get3(src, 3))
    }
    #[inline(always)]
    fn load_lanes<L: Lanes>(cols: &ColumnsAt<'_>) -> AabbLanes<L> {
        AabbLanes { min: cols.vec3(0), max: cols.vec3(3) }
    }
    #[inline(always)]
    fn splat_lanes<L: Lanes>(&self) -> AabbLanes<L> {
        let b = self.sanitized();
        AabbLanes { min: Vec3x::splat(b.min), max: Vec3x::splat(b.max) }
    }
}

// ---------------------------------------------------------------------------------------

/// `N` triangles, one per lane (sanitized: lanes with a non-finite vertex are NaN).
#[derive(Clone, Copy, Debug)]
pub struct TriangleLanes<L: Lanes> {
    pub(crate) v0: Vec3x<L>,
    pub(crate) v1: Vec3x<L>,
    pub(crate) v2: Vec3x<L>,
}

impl<L: Lanes> TriangleLanes<L> {
    /// From lanes; lanes with a non-finite vertex become NaN (never hit, never overlap).
    pub fn new(v0: Vec3x<L>, v1: Vec3x<L>, v2: Vec3x<L>) -> Self {
        let ok = v0.is_finite() & v1.is_finite() & v2.is_finite();
        let nan = Vec3x::splat(Vec3::NAN);
        Self { v0: Vec3x::select(ok, v0, nan), v1: Vec3x::select(ok, v1, nan), v2: Vec3x::select(ok, v2, nan) }
    }
    /// The same triangle in every lane.
    pub fn splat(t: &Triangle) -> Self {
        t.splat_lanes()
    }
    /// Vertices.
    pub fn vertices(&self) -> [Vec3x<L>; 3] {
        [self.v0, self.v1, self.v2]
    }
    /// The triangle in lane `i`.
    pub fn lane(&self, i: usize) -> Triangle {
        Triangle::new(self.v0.lane(i), self.v1.lane(i), self.v2.lane(i))
    }
}

impl Primitive for Triangle {
    const COLUMNS: usize = 9;
    type Lanes<L: Lanes> = TriangleLanes<L>;
    fn never_hit() -> Self {
        Triangle::new(Vec3::NAN, Vec3::NAN, Vec3::NAN)
    }
    fn is_valid(&self) -> bool {
        Triangle::is_valid(self)
    }
    fn write_columns(&self, out: &mut [f32]) {
        for (k, v) in self.v.iter().enumerate() {
            put3(out, 3 * k, *v);
        }
    }
    fn read_columns(src: &[f32]) -> Self {
        Triangle::new(get3(src, 0), get3(src, 3), get3(src, 6))
    }
    #[inline(always)]
    fn load_lanes<L: Lanes>(cols: &ColumnsAt<'_>) -> TriangleLanes<L> {
        TriangleLanes { v0: cols.vec3(0), v1: cols.vec3(3), v2: cols.vec3(6) }
    }
    #[inline(always)]
    fn splat_lanes<L: Lanes>(&self) -> TriangleLanes<L> {
        let t = self.sanitized();
        TriangleLanes { v0: Vec3x::splat(t.v[0]), v1: Vec3x::splat(t.v[1]), v2: Vec3x::splat(t.v[2]) }
    }
}

// ---------------------------------------------------------------------------------------

/// `N` planes, one per lane (sanitized: invalid lanes are NaN and never hit).
#[derive(Clone, Copy, Debug)]
pub struct PlaneLanes<L: Lanes> {
    pub(crate) normal: Vec3x<L>,
    pub(crate) d: L,
}

impl<L: Lanes> PlaneLanes<L> {
    /// From lanes; lanes with non-finite numbers or a zero normal become NaN.
    pub fn new(normal: Vec3x<L>, d: L) -> Self {
        let ok = normal.is_finite() & d.is_finite() & normal.length_squared().gt(L::splat(0.0));
        let nan = L::splat(f32::NAN);
        Self { normal: Vec3x::select(ok, normal, Vec3x::new(nan, nan, nan)), d: L::select(ok, d, nan) }
    }
    /// The same plane in every lane.
    pub fn splat(p: &Plane) -> Self {
        p.splat_lanes()
    }
    /// The plane in lane `i`.
    pub fn lane(&self, i: usize) -> Plane {
        Plane::new(self.normal.lane(i), self.d.lane(i))
    }
}

impl Primitive for Plane {
    const COLUMNS: usize = 4;
    type Lanes<L: Lanes> = PlaneLanes<L>;
    fn never_hit() -> Self {
        Plane::new(Vec3::NAN, f32::NAN)
    }
    fn is_valid(&self) -> bool {
        Plane::is_valid(self)
    }
    fn write_columns(&self, out: &mut [f32]) {
        put3(out, 0, self.normal);
        out[3] = self.d;
    }
    fn read_columns(src: &[f32]) -> Self {
        Plane::new(get3(src, 0), src[3])
    }
    #[inline(always)]
    fn load_lanes<L: Lanes>(cols: &ColumnsAt<'_>) -> PlaneLanes<L> {
        PlaneLanes { normal: cols.vec3(0), d: cols.get(3) }
    }
    #[inline(always)]
    fn splat_lanes<L: Lanes>(&self) -> PlaneLanes<L> {
        let p = self.sanitized();
        PlaneLanes { normal: Vec3x::splat(p.normal), d: L::splat(p.d) }
    }
}

// ---------------------------------------------------------------------------------------

/// `N` capsules, one per lane (sanitized: invalid lanes are NaN and never hit).
#[derive(Clone, Copy, Debug)]
pub struct CapsuleLanes<L: Lanes> {
    pub(crate) a: Vec3x<L>,
    pub(crate) b: Vec3x<L>,
    pub(crate) radius: L,
}

impl<L: Lanes> CapsuleLanes<L> {
    /// From lanes; lanes with non-finite numbers or a negative radius become NaN.
    pub fn new(a: Vec3x<L>, b: Vec3x<L>, radius: L) -> Self {
        let ok = a.is_finite() & b.is_finite() & radius.is_finite() & radius.ge(L::splat(0.0));
        let nan = Vec3x::splat(Vec3::NAN);
        Self {
            a: Vec3x::select(ok, a, nan),
            b: Vec3x::select(ok, b, nan),
            radius: L::select(ok, radius, L::splat(f32::NAN)),
        }
    }
    /// The same capsule in every lane.
    pub fn splat(c: &Capsule) -> Self {
        c.splat_lanes()
    }
    /// The capsule in lane `i`.
    pub fn lane(&self, i: usize) -> Capsule {
        Capsule::new(self.a.lane(i), self.b.lane(i), self.radius.lane(i))
    }
}

impl Primitive for Capsule {
    const COLUMNS: usize = 7;
    type Lanes<L: Lanes> = CapsuleLanes<L>;
    fn never_hit() -> Self {
        Capsule::new(Vec3::NAN, Vec3::NAN, f32::NAN)
    }
    fn is_valid(&self) -> bool {
        Capsule::is_valid(self)
    }
    fn write_columns(&self, out: &mut [f32]) {
        put3(out, 0, self.a);
        put3(out, 3, self.b);
        out[6] = self.radius;
    }
    fn read_columns(src: &[f32]) -> Self {
        Capsule::new(get3(src, 0), get3(src, 3), src[6])
    }
    #[inline(always)]
    fn load_lanes<L: Lanes>(cols: &ColumnsAt<'_>) -> CapsuleLanes<L> {
        CapsuleLanes { a: cols.vec3(0), b: cols.vec3(3), radius: cols.get(6) }
    }
    #[inline(always)]
    fn splat_lanes<L: Lanes>(&self) -> CapsuleLanes<L> {
        let c = self.sanitized();
        CapsuleLanes { a: Vec3x::splat(c.a), b: Vec3x::splat(c.b), radius: L::splat(c.radius) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lanes::{F32x4, F32x8, F32x16};

    #[test]
    fn a_prefetch_changes_nothing_and_takes_any_index() {
        // Without the clamp, `c * stride + usize::MAX` would overflow (a panic in debug builds).
        let tris: Vec<Triangle> = (0..40).map(|i| Triangle::new(Vec3::splat(i as f32), Vec3::X, Vec3::Y)).collect();
        let s = Soa::from_slice(&tris);
        for i in [0, 7, s.len(), s.padded_len(), usize::MAX] {
            s.prefetch_at(i);
        }
        Soa::<Triangle>::default().prefetch_at(usize::MAX);
        assert!((0..s.len()).all(|i| s.get(i) == tris[i]));
    }

    /// The byte address of value `j` of column `c`.
    fn address<P: Primitive>(s: &Soa<P>, c: usize, j: usize) -> usize {
        s.column(c).as_ptr() as usize + j * core::mem::size_of::<f32>()
    }

    fn block_cases<L: Lanes>() {
        let s = Soa::from_slice(&vec![Triangle::new(Vec3::ZERO, Vec3::X, Vec3::Y); 100]);
        let lines = |from: usize, len: usize| {
            (0..9).map(|c| address(&s, c, from + len - 1) / 64 - address(&s, c, from) / 64 + 1).max().unwrap()
        };
        let mut moved = 0;
        for first in 0..s.len() {
            for count in 1..=(2 * L::N + 1).min(s.len() - first) {
                let mut covered = Vec::new();
                for (start, lanes) in s.blocks::<L>(first, count) {
                    // Inside the storage, lanes for shapes of the range only.
                    assert!(
                        start + L::N <= s.stride && lanes != 0 && lanes >> L::N == 0,
                        "{first}+{count}: {start} {lanes:b}"
                    );
                    let shapes: Vec<usize> = (0..L::N).filter(|k| lanes >> k & 1 == 1).map(|k| start + k).collect();
                    // One line per column when the block's shapes lie in one (and, since the
                    // buffer need not start on a line, there is room before them to move back).
                    let (a, n) = (shapes[0], shapes.len());
                    if lines(a, n) == 1 && a >= L::N {
                        assert_eq!(lines(start, L::N), 1, "{first}+{count}: block {start} {lanes:b}");
                    }
                    moved += usize::from(start != a);
                    covered.extend(shapes);
                }
                // Every shape of the range exactly once, in order.
                assert_eq!(covered, (first..first + count).collect::<Vec<_>>(), "{first}+{count}");
            }
        }
        // A single lane never reaches into the next line; wider lanes do, and move back.
        assert_eq!(moved > 0, L::N > 1, "{} lanes", L::N);
    }

    #[test]
    fn leaf_blocks_cover_their_shapes_once_in_as_few_lines_as_they_do() {
        block_cases::<F32x4>();
        block_cases::<F32x8>();
        block_cases::<F32x16>();
        block_cases::<f32>();
    }

    #[test]
    fn gather_lanes_puts_each_indexed_triangle_in_its_lane_and_zeros_elsewhere() {
        let tris: Vec<Triangle> = (0..20)
            .map(|i| {
                let x = i as f32;
                Triangle::new(Vec3::new(x, 1.0, 2.0), Vec3::new(3.0, x, 4.0), Vec3::new(5.0, 6.0, -x))
            })
            .collect();
        let s = Soa::from_slice(&tris);
        let index = [19, 0, 7, 7, 3, 12, 1, 18];
        let g = s.gather_lanes::<F32x8>(&index, 0b1011_0101);
        for k in 0..8 {
            let want = if 0b1011_0101 >> k & 1 == 1 {
                tris[index[k] as usize]
            } else {
                Triangle::new(Vec3::ZERO, Vec3::ZERO, Vec3::ZERO)
            };
            assert_eq!(g.lane(k), want, "lane {k}");
        }
        // Bits from lane 8 on are ignored; an index past the end panics.
        assert_eq!(s.gather_lanes::<F32x8>(&index, 0x100).lane(0), Triangle::new(Vec3::ZERO, Vec3::ZERO, Vec3::ZERO));
        let r = std::panic::catch_unwind(|| s.gather_lanes::<F32x8>(&[20; 8], 1));
        assert!(r.is_err(), "index 20 of 20 triangles must panic");
    }

    #[test]
    fn lanes_reads_padding_and_slack_and_stops_past_them() {
        let s = Soa::from_slice(&[Sphere::new(Vec3::ONE, 2.0); 3]);
        // Every start below len can load 8 or 16 lanes (the slack block); padding never hits.
        for i in 0..s.len() {
            let l = s.lanes::<F32x8>(i);
            assert_eq!(l.lane(0), Sphere::new(Vec3::ONE, 2.0));
            assert!(l.radius().lane(7).is_nan());
        }
        // The slack block is as wide as the widest lanes.
        for i in 0..s.len() {
            assert!(s.lanes::<F32x16>(i).radius().lane(15).is_nan());
        }
        let past = std::panic::catch_unwind(|| s.lanes::<F32x16>(s.padded_len() + 1));
        assert!(past.is_err(), "loading past the storage must panic, not read out of bounds");
    }

    #[test]
    fn get_reads_back_every_shape_and_stops_at_len() {
        let mut soa = Soa::<Triangle>::default();
        let tri = |k: usize| {
            let f = k as f32;
            Triangle::new(Vec3::new(f, 0.0, 1.0), Vec3::new(0.0, f + 1.0, 2.0), Vec3::new(-f, 3.0, f * f))
        };
        // Pushing one by one grows the stride several times.
        for k in 0..100 {
            soa.push(tri(k));
        }
        for k in 0..100 {
            assert_eq!(soa.get(k), tri(k));
        }
        assert!(std::panic::catch_unwind(|| soa.get(100)).is_err());
    }

    #[test]
    fn extend_reserves_for_an_exact_size_hint_at_once() {
        // 250 shapes into an empty `Soa`: reserved from the hint, the stride is 250 rounded
        // up to a lane multiple plus one slack block; grown one shape at a time, it would
        // have doubled from 16 to 512.
        let mut soa = Soa::<Sphere>::default();
        soa.extend((0..250).map(|k| Sphere::new(Vec3::splat(k as f32), 1.0)));
        assert_eq!(soa.len(), 250);
        assert_eq!(soa.stride, 250usize.next_multiple_of(crate::ray::PAD) + crate::ray::PAD);
    }

    #[test]
    fn extend_keeps_every_shape_whatever_the_iterators_size_hint() {
        // Shape `k` of a run, every seventh one invalid (stored as its never-hit value).
        let tri = |k: usize| {
            let f = k as f32;
            let z = if k % 7 == 3 { f32::NAN } else { f };
            Triangle::new(Vec3::new(f, 0.0, 1.0), Vec3::new(0.0, f + 1.0, 2.0), Vec3::new(-f, 3.0, z))
        };
        let stored = |k: usize| if k % 7 == 3 { Triangle::never_hit() } else { tri(k) };
        // Runs of lengths across the stride's doublings, appended to what is there: with an
        // exact size hint, and through `filter`, whose hint says 0 (the columns fill up and
        // grow in the middle of a run).
        for exact in [true, false] {
            let mut soa = Soa::<Triangle>::default();
            let mut want = Vec::new();
            for run in [0, 1, 15, 16, 17, 40, 100, 3, 250] {
                let start = want.len();
                if exact {
                    soa.extend((start..start + run).map(tri));
                } else {
                    soa.extend(
                        (start..start + 2 * run).filter(|k| (k - start) % 2 == 0).map(|k| tri(start + (k - start) / 2)),
                    );
                }
                want.extend((start..start + run).map(stored));
                assert_eq!(soa.len(), want.len(), "exact hint {exact}, run {run}");
            }
            for (k, w) in want.iter().enumerate() {
                let got = soa.get(k);
                // NaN never equals itself: compare the bits.
                let bits = |t: &Triangle| t.v.map(|p| p.to_array().map(f32::to_bits));
                assert_eq!(bits(&got), bits(w), "shape {k}, exact hint {exact}");
            }
            // Past `len`, the lanes read never-hit padding.
            let last = soa.lanes::<F32x16>(soa.len() - 1);
            assert!((1..16).all(|i| last.v0.x.lane(i).is_nan()));
        }
    }
}
