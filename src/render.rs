//! Rendering a scene to an image: one primary ray per pixel (single rays or 2×4-pixel
//! packets of 8), shaded by normal, depth or ambient occlusion, on all rayon threads.

use crate::camera::Camera;
use crate::hit::{Hit, HitPacket};
use crate::lanes::{F32x4, F32x8, Lanes, Mask};
use crate::ray::{Ray, RayPacket};
use crate::rng::Rng;
use crate::scene::{Backend, PacketScratch, Scene};
use glam::Vec3;
use rayon::prelude::*;

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

/// Result of [`render`]: the image and how many primary rays were cast.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// The picture.
    pub image: Image,
    /// Primary rays cast (one per pixel).
    pub rays: u64,
}

/// Renders `scene` from `cam` (its width and height give the image size).
pub fn render(scene: &Scene, cam: &Camera, backend: Backend, mode: Mode, shade: Shade) -> Rendered {
    let (w, h) = (cam.width as usize, cam.height as usize);
    let pin = cam.pinhole();
    let hits = match (mode, backend.resolve()) {
        (Mode::Packet, Backend::X4) => trace_packets::<F32x4>(scene, cam),
        (Mode::Packet, _) => trace_packets::<F32x8>(scene, cam),
        (Mode::Single, b) => (0..h)
            .into_par_iter()
            .flat_map_iter(|y| {
                (0..w).map(move |x| scene.intersect_with(&pin.ray(x as u32, y as u32), b).unwrap_or(Hit::MISS))
            })
            .collect(),
    };
    let b = scene.bounds();
    let size = if b.min.x <= b.max.x { (b.max - b.min).length() } else { 10.0 };
    let (t_lo, t_hi) =
        hits.iter().filter(|h| h.is_hit()).fold((f32::INFINITY, 0.0f32), |(lo, hi), h| (lo.min(h.t), hi.max(h.t)));
    let rgb: Vec<u8> = hits
        .par_iter()
        .enumerate()
        .flat_map_iter(|(i, hit)| {
            let ray = pin.ray((i % w) as u32, (i / w) as u32);
            let c = shade_pixel(scene, &ray, hit, shade, size, t_lo, t_hi, i as u64, backend);
            c.to_array().map(|v| (v.clamp(0.0, 1.0) * 255.0 + 0.5) as u8)
        })
        .collect();
    Rendered { image: Image { width: cam.width, height: cam.height, rgb }, rays: (w * h) as u64 }
}

fn trace_packets<L: Lanes>(scene: &Scene, cam: &Camera) -> Vec<Hit> {
    let (w, h) = (cam.width, cam.height);
    let pin = cam.pinhole();
    // Tiles of 2 rows × (N/2) columns: coherent packets.
    let tw = (L::N / 2) as u32;
    let tiles_x = w.div_ceil(tw);
    let tiles: Vec<(u32, u32)> =
        (0..h.div_ceil(2)).flat_map(|ty| (0..tiles_x).map(move |tx| (tx * tw, ty * 2))).collect();
    let per_tile: Vec<(u32, u32, HitPacket<L>, u32)> = tiles
        .par_iter()
        .map_init(PacketScratch::default, |scratch, &(x0, y0)| {
            let mut rays = [Ray::new(Vec3::ZERO, Vec3::ZERO); 8];
            let mut live = 0u32;
            for (k, r) in rays.iter_mut().enumerate().take(L::N) {
                let (x, y) = (x0 + (k as u32 % tw), y0 + k as u32 / tw);
                if x < w && y < h {
                    *r = pin.ray(x, y);
                    live |= 1 << k;
                }
            }
            let mut out = HitPacket::<L>::default();
            let packet = RayPacket::<L>::from_rays(&rays[..L::N]).expect("N rays fit N lanes");
            scene.intersect_packet(&packet.with_mask(L::Mask::from_bitmask(live)), &mut out, scratch);
            (x0, y0, out, live)
        })
        .collect();
    let mut hits = vec![Hit::MISS; (w * h) as usize];
    for (x0, y0, out, live) in per_tile {
        for k in 0..L::N {
            if live & (1 << k) != 0 {
                let (x, y) = (x0 + (k as u32 % tw), y0 + k as u32 / tw);
                hits[(y * w + x) as usize] = out.lane(k);
            }
        }
    }
    hits
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

/// Writes the image as PNG to `path` through a temporary file renamed on success.
pub fn write_png(path: &std::path::Path, img: &Image) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "render.png".into());
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        let mut enc = png::Encoder::new(f, img.width, img.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut wr = enc.write_header().map_err(std::io::Error::other)?;
        wr.write_image_data(&img.rgb).map_err(std::io::Error::other)?;
        wr.finish().map_err(std::io::Error::other)?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
