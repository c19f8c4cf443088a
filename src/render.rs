//! Rendering a scene to an image: one primary ray per pixel (single rays or 2×4-pixel
//! packets of 8), shaded by normal, depth or ambient occlusion, on all rayon threads.
//!
//! # Bands and bounded memory
//!
//! The image is traced in horizontal bands of [`band_rows`] rows (an even number, about
//! [`BAND_PIXELS`] pixels per band), top to bottom, each band on all rayon threads.
//! [`render_png_to`] hands every finished band to a streaming PNG encoder while the next band
//! is traced, so its memory is `O(width × band rows)` whatever the height: about 70 bytes per
//! band pixel (under 5 MB) for any image up to 32,768 pixels wide, 2 rows for wider ones. [`render_bands`] gives the bands to any sink; [`render`]
//! collects them into an [`Image`] in memory (`width × height × 3` bytes).
//!
//! Depth shading scales by the nearest and farthest hit of the whole image, so an image of
//! more than one band is traced twice: once for that range, once to shade.
//!
//! # Sizes
//!
//! Width and height must be `1..=`[`MAX_DIMENSION`] (2³¹ − 1, the PNG limit) and
//! `width × height × 3` must fit in `usize`; anything else is a [`RenderError`] before any
//! work is done or any file is created.

use crate::camera::{Camera, Pinhole};
use crate::hit::{Hit, HitPacket};
use crate::io::{AtomicFile, IoError};
use crate::lanes::{F32x4, F32x8, Lanes, Mask};
use crate::ray::{Ray, RayPacket};
use crate::rng::Rng;
use crate::scene::{Backend, PacketScratch, Scene};
use glam::Vec3;
use rayon::prelude::*;
use std::path::Path;

/// The largest width or height of an image: 2³¹ − 1 pixels, the PNG limit.
pub const MAX_DIMENSION: u32 = (1 << 31) - 1;

/// About this many pixels are traced per band ([`band_rows`]): 65,536.
pub const BAND_PIXELS: usize = 1 << 16;

/// How pixels are shaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Shade {
    /// The geometric normal (turned towards the viewer) mapped to RGB.
    #[default]
    Normal,
    /// Distance along the ray, near = bright.
    Depth,
    /// Ambient occlusion: 16 occlusion rays per hit in the hemisphere around the normal.
    Ao,
}

/// How primary rays are traced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// One ray at a time.
    #[default]
    Single,
    /// 2×4-pixel packets of 8 rays (4 rays for the x4 backend).
    Packet,
}

/// An 8-bit RGB image, rows from the top.
#[derive(Clone, Debug)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 3` bytes.
    pub rgb: Vec<u8>,
}

/// An image dimension, as errors name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// The width.
    Width,
    /// The height.
    Height,
}

impl std::fmt::Display for Axis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Axis::Width => "width",
            Axis::Height => "height",
        })
    }
}

/// Why an image was not rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A width or height of 0 or more than [`MAX_DIMENSION`].
    #[error("image {axis} {value} is out of range: an image is 1 to 2147483647 pixels wide and high (the PNG limit)")]
    Dimension {
        /// Which dimension.
        axis: Axis,
        /// Its value.
        value: u32,
    },
    /// `width × height × 3` bytes do not fit in `usize`.
    #[error("image {width}x{height} has more pixel bytes than this machine can address")]
    TooManyBytes {
        /// Image width.
        width: u32,
        /// Image height.
        height: u32,
    },
    /// A buffer could not be allocated.
    #[error("cannot allocate {bytes} bytes for the image")]
    OutOfMemory {
        /// The size asked for.
        bytes: usize,
    },
    /// The camera is invalid (see [`Camera::check`]).
    #[error("invalid camera: {0}")]
    Camera(#[from] crate::camera::CameraError),
    /// The progress callback of [`render_png_to`] asked to stop.
    #[error("stopped before the image was complete")]
    Stopped,
    /// The output file could not be written; nothing is left under its name.
    #[error(transparent)]
    Io(#[from] IoError),
}

/// Checks one dimension: `1..=`[`MAX_DIMENSION`].
pub fn check_dimension(axis: Axis, value: u32) -> Result<(), RenderError> {
    if (1..=MAX_DIMENSION).contains(&value) { Ok(()) } else { Err(RenderError::Dimension { axis, value }) }
}

/// Checks an image size (both dimensions in `1..=`[`MAX_DIMENSION`], `width × height × 3`
/// within `usize`) and returns its RGB byte count.
pub fn check_size(width: u32, height: u32) -> Result<usize, RenderError> {
    check_dimension(Axis::Width, width)?;
    check_dimension(Axis::Height, height)?;
    usize::try_from(width)
        .ok()
        .zip(usize::try_from(height).ok())
        .and_then(|(w, h)| w.checked_mul(h)?.checked_mul(3))
        .ok_or(RenderError::TooManyBytes { width, height })
}

/// The size check and [`Camera::check`]; the image's RGB byte count.
fn validate(cam: &Camera) -> Result<usize, RenderError> {
    let bytes = check_size(cam.width, cam.height)?;
    cam.check().map_err(RenderError::Camera)?;
    Ok(bytes)
}

/// Rows per band for an image of this size: about [`BAND_PIXELS`] / `width`, even (packets
/// cover 2 rows), at least 2, and no more than the height rounded up to even. It does not grow
/// with the height beyond that, so a band holds at most `max(BAND_PIXELS, 2 × width)` pixels.
pub fn band_rows(width: u32, height: u32) -> u32 {
    let per_band = (BAND_PIXELS / (width.max(1) as usize)).max(2) & !1;
    let tall = u64::from(height).next_multiple_of(2);
    // per_band <= BAND_PIXELS, so it fits in u32.
    (per_band as u64).min(tall) as u32
}

/// A zero-filled buffer of `n` items, or an error instead of an abort when it cannot be had.
fn alloc<T: Clone>(n: usize, fill: T) -> Result<Vec<T>, RenderError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| RenderError::OutOfMemory { bytes: n.saturating_mul(std::mem::size_of::<T>()) })?;
    v.resize(n, fill);
    Ok(v)
}

/// Result of [`render`]: the image and how many primary rays were cast.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// The picture.
    pub image: Image,
    /// Primary rays cast: one per pixel, two for depth shading of an image of more than one
    /// band (see the [module docs](self)).
    pub rays: u64,
}

/// Renders `scene` from `cam` (its width and height give the image size) into memory.
///
/// The image takes `width × height × 3` bytes; for large images use [`render_png_to`], whose
/// memory does not grow with the height. Errors: the size or camera is invalid, or the image
/// cannot be allocated.
pub fn render(
    scene: &Scene,
    cam: &Camera,
    backend: Backend,
    mode: Mode,
    shade: Shade,
) -> Result<Rendered, RenderError> {
    let bytes = validate(cam)?;
    let mut rgb = Vec::new();
    rgb.try_reserve_exact(bytes).map_err(|_| RenderError::OutOfMemory { bytes })?;
    let band = band_rows(cam.width, cam.height);
    let rays = render_bands(scene, cam, backend, mode, shade, band, |rows| {
        rgb.extend_from_slice(rows);
        Ok(())
    })?;
    Ok(Rendered { image: Image { width: cam.width, height: cam.height, rgb }, rays })
}

/// Renders `scene` from `cam` to the PNG file `path`, band by band ([`band_rows`]), each band
/// encoded while the next is traced: memory stays `O(width × band rows)` whatever the height.
///
/// The file is written through an [`AtomicFile`]: it appears only when complete, and any error
/// leaves nothing under its name. The size and camera are checked before the file is created.
/// `progress` is called after each band with the number of rows written so far; returning
/// `false` stops the render with [`RenderError::Stopped`]. Returns the primary rays cast (as
/// [`Rendered::rays`]).
pub fn render_png_to(
    path: &Path,
    scene: &Scene,
    cam: &Camera,
    backend: Backend,
    mode: Mode,
    shade: Shade,
    mut progress: impl FnMut(u32) -> bool + Send,
) -> Result<u64, RenderError> {
    validate(cam)?;
    let mut file = AtomicFile::create(path)?;
    let name = file.name().to_string();
    let png_err = |e: png::EncodingError| IoError::new(&name, format!("cannot write PNG: {e}"));
    let rays = {
        let mut writer = png_header(&mut file, cam.width, cam.height).map_err(png_err)?;
        let mut stream = writer.stream_writer_with_size(1 << 16).map_err(png_err)?;
        let row_bytes = cam.width as usize * 3;
        let mut rows_done = 0u32;
        let rays = render_bands(scene, cam, backend, mode, shade, band_rows(cam.width, cam.height), |rows| {
            std::io::Write::write_all(&mut stream, rows)
                .map_err(|e| IoError::new(&name, format!("cannot write PNG: {e}")))?;
            // At most `height` rows in all, so this fits in u32.
            rows_done += (rows.len() / row_bytes) as u32;
            if progress(rows_done) { Ok(()) } else { Err(RenderError::Stopped) }
        })?;
        stream.finish().map_err(png_err)?;
        writer.finish().map_err(png_err)?;
        rays
    };
    file.finish()?;
    Ok(rays)
}

/// Writes an 8-bit RGB PNG header for a `width × height` image to `out`.
fn png_header(
    out: &mut AtomicFile,
    width: u32,
    height: u32,
) -> Result<png::Writer<&mut AtomicFile>, png::EncodingError> {
    let mut enc = png::Encoder::new(out, width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.write_header()
}

/// Writes an in-memory image as PNG to `path` through an [`AtomicFile`] (nothing is left
/// under the name on error). An `rgb` buffer of the wrong length is an error.
pub fn write_png(path: &Path, img: &Image) -> Result<(), IoError> {
    let mut file = AtomicFile::create(path)?;
    let name = file.name().to_string();
    let png_err = |e: png::EncodingError| IoError::new(&name, format!("cannot write PNG: {e}"));
    {
        let mut writer = png_header(&mut file, img.width, img.height).map_err(png_err)?;
        writer.write_image_data(&img.rgb).map_err(png_err)?;
        writer.finish().map_err(png_err)?;
    }
    file.finish()
}

/// Renders `scene` from `cam` in bands of `band_rows` rows (rounded up to even; the last band
/// may be shorter), top to bottom, and hands each band's RGB bytes (`rows × width × 3`, rows
/// from the top) to `sink` in order. `sink` runs while the next band is traced. Any
/// `band_rows` gives the same bytes. Returns the primary rays cast; an error from `sink` stops
/// the render and is returned.
///
/// Memory: for `band_rows × width` pixels, their hits (and packets) and two RGB bands.
pub fn render_bands(
    scene: &Scene,
    cam: &Camera,
    backend: Backend,
    mode: Mode,
    shade: Shade,
    band_rows: u32,
    mut sink: impl FnMut(&[u8]) -> Result<(), RenderError> + Send,
) -> Result<u64, RenderError> {
    validate(cam)?;
    let (w, h) = (cam.width as usize, cam.height as usize);
    let band = (band_rows.max(1) as usize).next_multiple_of(2).min(h.next_multiple_of(2));
    let too_big = || RenderError::TooManyBytes { width: cam.width, height: cam.height };
    let band_px = w.checked_mul(band).ok_or_else(too_big)?;
    let band_bytes = band_px.checked_mul(3).ok_or_else(too_big)?;
    let pixels = (w as u64) * (h as u64);
    let tracer = Tracer::new(scene, cam, backend, mode, shade);
    let mut hits = alloc(band_px, Hit::MISS)?;
    let (mut cur, mut prev) = (alloc(band_bytes, 0u8)?, alloc(band_bytes, 0u8)?);
    let mut rays = 0u64;
    // Depth over several bands: a first pass for the range.
    let mut range = None;
    if shade == Shade::Depth && band < h {
        let mut r = EMPTY_RANGE;
        for y0 in (0..h).step_by(band) {
            let n = band.min(h - y0) * w;
            tracer.trace(y0, &mut hits[..n]);
            r = merge(r, depth_range(&hits[..n]));
        }
        rays += pixels;
        range = Some(r);
    }
    let mut pending = 0;
    for y0 in (0..h).step_by(band) {
        let n = band.min(h - y0) * w;
        let (sent, ()) = rayon::join(
            || if pending > 0 { sink(&prev[..pending]) } else { Ok(()) },
            || {
                tracer.trace(y0, &mut hits[..n]);
                let range = match range {
                    Some(r) => r,
                    None if shade == Shade::Depth => depth_range(&hits[..n]),
                    None => EMPTY_RANGE,
                };
                tracer.shade(y0, &hits[..n], range, &mut cur[..3 * n]);
            },
        );
        sent?;
        std::mem::swap(&mut prev, &mut cur);
        pending = 3 * n;
    }
    sink(&prev[..pending])?;
    Ok(rays + pixels)
}

/// No hits yet: `(nearest, farthest)`.
const EMPTY_RANGE: (f32, f32) = (f32::INFINITY, 0.0);

fn merge(a: (f32, f32), b: (f32, f32)) -> (f32, f32) {
    (a.0.min(b.0), a.1.max(b.1))
}

/// Nearest and farthest hit among `hits`.
fn depth_range(hits: &[Hit]) -> (f32, f32) {
    hits.par_iter().filter(|h| h.is_hit()).map(|h| (h.t, h.t)).reduce(|| EMPTY_RANGE, merge)
}

/// What tracing and shading a band needs.
struct Tracer<'a> {
    scene: &'a Scene,
    pin: Pinhole,
    width: usize,
    /// As given (occlusion rays), and resolved (primary rays).
    backend: Backend,
    resolved: Backend,
    mode: Mode,
    shade: Shade,
    /// Scene diagonal (AO ray length and offset).
    size: f32,
}

impl<'a> Tracer<'a> {
    fn new(scene: &'a Scene, cam: &Camera, backend: Backend, mode: Mode, shade: Shade) -> Self {
        let b = scene.bounds();
        let size = if b.min.x <= b.max.x { (b.max - b.min).length() } else { 10.0 };
        Self {
            scene,
            pin: cam.pinhole(),
            width: cam.width as usize,
            backend,
            resolved: backend.resolve(),
            mode,
            shade,
            size,
        }
    }

    /// Closest hits of the rows from `y0` (`hits.len()` is a whole number of rows).
    fn trace(&self, y0: usize, hits: &mut [Hit]) {
        match (self.mode, self.resolved) {
            (Mode::Packet, Backend::X4) => self.trace_packets::<F32x4>(y0, hits),
            (Mode::Packet, _) => self.trace_packets::<F32x8>(y0, hits),
            (Mode::Single, b) => {
                let (w, pin, scene) = (self.width, &self.pin, self.scene);
                hits.par_iter_mut().enumerate().with_min_len(64).for_each(|(i, hit)| {
                    // x < width and y < height, both at most MAX_DIMENSION: they fit in u32.
                    let (x, y) = ((i % w) as u32, (y0 + i / w) as u32);
                    *hit = scene.intersect_with(&pin.ray(x, y), b).unwrap_or(Hit::MISS);
                });
            }
        }
    }

    /// [`trace`](Self::trace) in tiles of 2 rows × (N/2) columns: coherent packets. `y0` is
    /// even, so the tiles are those of the whole image.
    fn trace_packets<L: Lanes>(&self, y0: usize, hits: &mut [Hit]) {
        let (w, pin, scene, backend) = (self.width, &self.pin, self.scene, self.backend);
        let rows = hits.len() / w;
        let tw = L::N / 2;
        let tiles_x = w.div_ceil(tw);
        let mut packets = vec![HitPacket::<L>::default(); tiles_x * rows.div_ceil(2)];
        packets.par_iter_mut().enumerate().for_each_init(PacketScratch::default, |scratch, (t, out)| {
            let (x0, r0) = ((t % tiles_x) * tw, (t / tiles_x) * 2);
            let mut rays = [Ray::new(Vec3::ZERO, Vec3::ZERO); 8];
            let mut live = 0u32;
            for (k, ray) in rays.iter_mut().enumerate().take(L::N) {
                let (x, r) = (x0 + k % tw, r0 + k / tw);
                if x < w && r < rows {
                    *ray = pin.ray(x as u32, (y0 + r) as u32);
                    live |= 1 << k;
                }
            }
            let packet = RayPacket::<L>::from_rays(&rays[..L::N]).expect("N rays fit N lanes");
            scene.intersect_packet_with(&packet.with_mask(L::Mask::from_bitmask(live)), out, scratch, backend);
        });
        hits.par_chunks_mut(w).enumerate().for_each(|(r, row)| {
            let (tile_row, lane_row) = (r / 2 * tiles_x, r % 2 * tw);
            for (x, hit) in row.iter_mut().enumerate() {
                *hit = packets[tile_row + x / tw].lane(lane_row + x % tw);
            }
        });
    }

    /// Shades the rows from `y0` into `rgb` (3 bytes per hit).
    fn shade(&self, y0: usize, hits: &[Hit], (t_lo, t_hi): (f32, f32), rgb: &mut [u8]) {
        let w = self.width;
        rgb.par_chunks_mut(3).zip(hits.par_iter()).enumerate().with_min_len(64).for_each(|(i, (px, hit))| {
            let (x, y) = (i % w, y0 + i / w);
            let ray = self.pin.ray(x as u32, y as u32);
            let pixel = y as u64 * w as u64 + x as u64;
            let c = shade_pixel(self.scene, &ray, hit, self.shade, self.size, t_lo, t_hi, pixel, self.backend);
            px.copy_from_slice(&c.to_array().map(|v| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8));
        });
    }
}

#[allow(clippy::too_many_arguments)]
fn shade_pixel(
    scene: &Scene,
    ray: &Ray,
    hit: &Hit,
    shade: Shade,
    size: f32,
    t_lo: f32,
    t_hi: f32,
    pixel: u64,
    backend: Backend,
) -> Vec3 {
    if !hit.is_hit() {
        // Sky: a soft vertical gradient.
        let d = ray.dir.normalize();
        return Vec3::new(0.55, 0.65, 0.8).lerp(Vec3::new(0.9, 0.93, 0.97), 0.5 * (1.0 - d.y));
    }
    let n = if hit.normal.dot(ray.dir) > 0.0 { -hit.normal } else { hit.normal };
    match shade {
        Shade::Normal => (n + Vec3::ONE) * 0.5,
        Shade::Depth => {
            let k = if t_hi > t_lo { (hit.t - t_lo) / (t_hi - t_lo) } else { 0.0 };
            Vec3::splat(1.0 - 0.85 * k)
        }
        Shade::Ao => {
            let p = ray.at(hit.t);
            let eps = 1e-4 * size.max(p.abs().max_element());
            let origin = p + n * eps;
            let (t1, t2) = n.any_orthonormal_pair();
            let mut rng = Rng::new(pixel.wrapping_mul(0x9E37_79B9));
            let samples = 16;
            let mut open = 0;
            for _ in 0..samples {
                // cosine-weighted direction around n
                let (r1, r2) = (rng.f32(), rng.f32());
                let (r, phi) = (r1.sqrt(), std::f32::consts::TAU * r2);
                let d = t1 * (r * phi.cos()) + t2 * (r * phi.sin()) + n * (1.0 - r1).max(0.0).sqrt();
                let occ = Ray::with_interval(origin, d, 0.0, 0.25 * size);
                if !scene.occluded_with(&occ, backend) {
                    open += 1;
                }
            }
            Vec3::splat(0.1 + 0.9 * open as f32 / samples as f32)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prim::{Aabb, Plane, Sphere, Triangle};
    use crate::scene::SceneBuilder;

    /// A floor, a ball at the origin (radius 1, on the floor), a box and a triangle.
    fn scene() -> Scene {
        let mut b = SceneBuilder::new();
        b.add_plane(Plane::new(Vec3::Y, 0.0)).unwrap();
        b.add_sphere(Sphere::new(Vec3::new(0.0, 1.0, 0.0), 1.0)).unwrap();
        b.add_box(Aabb::new(Vec3::new(1.5, 0.0, -1.0), Vec3::new(2.5, 1.5, 0.5))).unwrap();
        b.add_triangle(Triangle::new(
            Vec3::new(-3.0, 0.0, -1.0),
            Vec3::new(-1.5, 0.0, -1.0),
            Vec3::new(-2.2, 2.0, -1.0),
        ))
        .unwrap();
        b.build().unwrap()
    }

    /// Looking at the ball from the front and a little above.
    fn camera(width: u32, height: u32) -> Camera {
        Camera::new(Vec3::new(0.0, 2.0, 6.0), Vec3::new(0.0, 0.8, 0.0), 45.0).with_size(width, height)
    }

    /// The bands `render_bands` hands over, and the rays it reports.
    fn bands(s: &Scene, cam: &Camera, backend: Backend, mode: Mode, shade: Shade, rows: u32) -> (Vec<Vec<u8>>, u64) {
        let mut out = Vec::new();
        let rays = render_bands(s, cam, backend, mode, shade, rows, |b| {
            out.push(b.to_vec());
            Ok(())
        })
        .unwrap();
        (out, rays)
    }

    fn pixel(rgb: &[u8], width: u32, x: u32, y: u32) -> [u8; 3] {
        let i = 3 * (y as usize * width as usize + x as usize);
        [rgb[i], rgb[i + 1], rgb[i + 2]]
    }

    /// Band seams: any band height (none of which divides the image height) gives the bytes of
    /// the image traced in one piece, in every mode, shading and packet width.
    #[test]
    fn bands_equal_one_piece_byte_for_byte() {
        let s = scene();
        let (w, h) = (13, 37);
        let cam = camera(w, h);
        let combos = [
            (Backend::X8, Mode::Single, Shade::Normal),
            (Backend::Scalar, Mode::Single, Shade::Depth),
            (Backend::X8, Mode::Packet, Shade::Depth),
            (Backend::X4, Mode::Packet, Shade::Normal),
            (Backend::X4, Mode::Packet, Shade::Ao),
            (Backend::X8, Mode::Single, Shade::Ao),
        ];
        for (backend, mode, shade) in combos {
            let (one, rays) = bands(&s, &cam, backend, mode, shade, h + 1);
            assert_eq!(one.len(), 1, "{backend:?} {mode:?} {shade:?}: one piece");
            assert_eq!(rays, u64::from(w * h));
            let whole = &one[0];
            assert_eq!(whole.len(), (w * h * 3) as usize);
            if shade == Shade::Normal {
                // The ball faces the camera in the middle (normal ~ +z: red ~ 128, blue ~ 255);
                // the top-left corner is sky (red ~ 180).
                let [r, _, b] = pixel(whole, w, w / 2, h / 2);
                assert!((110..=145).contains(&r) && b > 230, "centre {r} {b}");
                let [r, _, _] = pixel(whole, w, 0, 0);
                assert!(r > 160, "corner {r}");
            }
            for rows in [2u32, 3, 4, 6, 10, 36] {
                let (parts, rays) = bands(&s, &cam, backend, mode, shade, rows);
                let even = rows.next_multiple_of(2);
                assert_eq!(parts.len() as u32, h.div_ceil(even), "{rows} rows per band");
                for (i, p) in parts.iter().enumerate() {
                    let band_h = even.min(h - i as u32 * even);
                    assert_eq!(p.len() as u32, band_h * w * 3, "band {i} of {rows} rows");
                }
                assert!(parts.concat() == *whole, "{backend:?} {mode:?} {shade:?}: bands of {rows} rows differ");
                // Depth over several bands traces twice (the first pass finds the range).
                let passes = if shade == Shade::Depth { 2 } else { 1 };
                assert_eq!(rays, passes * u64::from(w * h));
            }
        }
    }

    #[test]
    fn render_gives_the_whole_image() {
        let s = scene();
        let (w, h) = (21, 15);
        let r = render(&s, &camera(w, h), Backend::Auto, Mode::Packet, Shade::Normal).unwrap();
        assert_eq!((r.image.width, r.image.height, r.rays), (w, h, u64::from(w * h)));
        assert_eq!(r.image.rgb.len(), (w * h * 3) as usize);
        let [red, _, blue] = pixel(&r.image.rgb, w, w / 2, h / 2);
        assert!((110..=145).contains(&red) && blue > 230, "centre {red} {blue}");
    }

    /// The band height depends on the width only (up to the height), so a band's memory does
    /// not grow with the image height.
    #[test]
    fn band_rows_are_bounded_and_even_whatever_the_height() {
        let widths = [1, 2, 3, 4, 13, 640, 4097, 32_768, 32_769, 65_536, 100_000, MAX_DIMENSION];
        let heights = [1, 2, 3, 7, 1000, 200_000, 100_000_000, MAX_DIMENSION];
        for w in widths {
            let tall = band_rows(w, MAX_DIMENSION);
            assert!(tall >= 2 && tall.is_multiple_of(2), "{w}: {tall}");
            assert!(
                tall as usize * w as usize <= BAND_PIXELS.max(2 * w as usize),
                "width {w}: {tall} rows is more than a band"
            );
            for h in heights {
                let r = band_rows(w, h);
                assert!(r >= 2 && r.is_multiple_of(2), "{w}x{h}: {r}");
                assert_eq!(r, tall.min(h.next_multiple_of(2)), "{w}x{h}: {r}");
            }
        }
        assert_eq!(band_rows(4, 200_000), BAND_PIXELS as u32 / 4);
        assert_eq!(band_rows(640, 480), 102);
    }

    #[test]
    fn sizes_out_of_range_are_rejected_before_any_work() {
        let s = scene();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.png");
        let cases = [
            (0, 10, Axis::Width, 0),
            (10, 0, Axis::Height, 0),
            (MAX_DIMENSION + 1, 10, Axis::Width, MAX_DIMENSION + 1),
            (10, u32::MAX, Axis::Height, u32::MAX),
            (3_000_000_000, 3_000_000_000, Axis::Width, 3_000_000_000),
        ];
        for (w, h, axis, value) in cases {
            let cam = camera(w, h);
            let is_case =
                |e: RenderError| matches!(e, RenderError::Dimension { axis: a, value: v } if a == axis && v == value);
            assert!(is_case(check_size(w, h).unwrap_err()));
            assert!(is_case(render(&s, &cam, Backend::Auto, Mode::Single, Shade::Normal).unwrap_err()));
            let sink = |_: &[u8]| -> Result<(), RenderError> { panic!("{w}x{h}: a band was rendered") };
            assert!(is_case(render_bands(&s, &cam, Backend::Auto, Mode::Single, Shade::Normal, 2, sink).unwrap_err()));
            let e = render_png_to(&path, &s, &cam, Backend::Auto, Mode::Single, Shade::Normal, |_| true).unwrap_err();
            assert!(e.to_string().contains(&value.to_string()) && e.to_string().contains("2147483647"), "{e}");
            assert!(is_case(e));
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{w}x{h} left a file");
        }
        assert_eq!(check_size(MAX_DIMENSION, 1).unwrap(), MAX_DIMENSION as usize * 3);
        assert_eq!(check_size(1, MAX_DIMENSION).unwrap(), MAX_DIMENSION as usize * 3);
        // An invalid camera is an error too, before any file is made.
        let mut cam = camera(8, 8);
        cam.look_at = cam.eye;
        let e = render_png_to(&path, &s, &cam, Backend::Auto, Mode::Single, Shade::Normal, |_| true).unwrap_err();
        assert!(matches!(e, RenderError::Camera(_)), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    fn decode(path: &Path) -> (u32, u32, Vec<u8>) {
        let f = std::io::BufReader::new(std::fs::File::open(path).unwrap());
        let mut reader = png::Decoder::new(f).read_info().unwrap();
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let info = reader.next_frame(&mut buf).unwrap();
        assert_eq!((info.color_type, info.bit_depth), (png::ColorType::Rgb, png::BitDepth::Eight));
        buf.truncate(info.buffer_size());
        (info.width, info.height, buf)
    }

    /// A tall image goes to the PNG file band by band (each progress step is at most one band),
    /// and the file decodes to the image.
    #[test]
    fn png_is_streamed_in_bands() {
        let s = scene();
        let (w, h) = (8, 20_001);
        let cam = camera(w, h);
        let band = band_rows(w, h);
        assert!(band < h / 2, "the test wants at least three bands");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tall.png");
        let mut steps = Vec::new();
        let rays = render_png_to(&path, &s, &cam, Backend::X8, Mode::Packet, Shade::Normal, |rows| {
            steps.push(rows);
            true
        })
        .unwrap();
        assert_eq!(rays, u64::from(w * h));
        let expected: Vec<u32> = (1..=h.div_ceil(band)).map(|i| (i * band).min(h)).collect();
        assert_eq!(steps, expected);
        let (dw, dh, rgb) = decode(&path);
        assert_eq!((dw, dh), (w, h));
        let mem = render(&s, &cam, Backend::X8, Mode::Packet, Shade::Normal).unwrap();
        assert!(rgb == mem.image.rgb, "the streamed PNG differs from the image");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["tall.png"]);
    }

    /// A render that fails midway (here: stopped after its first band) leaves no file, and an
    /// existing file of that name is untouched.
    #[test]
    fn a_failed_render_leaves_no_file() {
        let s = scene();
        let cam = camera(8, 20_001);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stopped.png");
        let mut calls = 0;
        let e = render_png_to(&path, &s, &cam, Backend::X8, Mode::Packet, Shade::Normal, |rows| {
            calls += 1;
            assert!(rows < cam.height);
            false
        })
        .unwrap_err();
        assert!(matches!(e, RenderError::Stopped), "{e}");
        assert_eq!(calls, 1);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        std::fs::write(&path, "old").unwrap();
        let e = render_png_to(&path, &s, &cam, Backend::X8, Mode::Packet, Shade::Normal, |_| false).unwrap_err();
        assert!(matches!(e, RenderError::Stopped), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // An unwritable destination: an error naming it, nothing created.
        let missing = dir.path().join("no such dir").join("x.png");
        let e =
            render_png_to(&missing, &s, &camera(4, 4), Backend::X8, Mode::Single, Shade::Normal, |_| true).unwrap_err();
        assert!(matches!(&e, RenderError::Io(io) if io.path == missing.display().to_string()), "{e}");
    }

    #[test]
    fn write_png_round_trips_and_rejects_a_wrong_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("img.png");
        let rgb: Vec<u8> = (0..5 * 3 * 3).map(|i| (i * 7) as u8).collect();
        write_png(&path, &Image { width: 5, height: 3, rgb: rgb.clone() }).unwrap();
        assert_eq!(decode(&path), (5, 3, rgb));
        let bad = dir.path().join("bad.png");
        let e = write_png(&bad, &Image { width: 5, height: 3, rgb: vec![0; 10] }).unwrap_err();
        assert_eq!(e.path, bad.display().to_string());
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["img.png"]);
    }
}
