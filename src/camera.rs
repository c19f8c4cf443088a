//! A pinhole camera: primary rays through pixel centres, in row-major order, rows from the
//! top of the image.

use crate::ray::{Ray, RaySoa};
use glam::Vec3;

/// Why a camera is unusable ([`Camera::check`]).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum CameraError {
    /// A NaN or infinite coordinate.
    #[error("camera eye, look_at and up must be finite")]
    NotFinite,
    /// `eye == look_at`.
    #[error("camera eye and look_at are the same point")]
    EyeIsTarget,
    /// `up` is zero or parallel to the view direction.
    #[error("camera up is zero or parallel to the view direction")]
    BadUp,
    /// The vertical field of view is not in (0, 180) degrees.
    #[error("camera fov_y_deg must be in (0, 180), got {0}")]
    BadFov(f32),
    /// Zero width or height.
    #[error("image size must be positive, got {width}x{height}")]
    EmptyImage {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
    },
}

/// A pinhole camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Eye position.
    pub eye: Vec3,
    /// Point looked at.
    pub look_at: Vec3,
    /// Up direction (need not be orthogonal to the view direction).
    pub up: Vec3,
    /// Vertical field of view in degrees.
    pub fov_y_deg: f32,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
}

impl Camera {
    /// A camera with `up = +Y` and a 640×480 image.
    pub fn new(eye: Vec3, look_at: Vec3, fov_y_deg: f32) -> Self {
        Self { eye, look_at, up: Vec3::Y, fov_y_deg, width: 640, height: 480 }
    }
    /// The same camera with another image size.
    pub fn with_size(mut self, width: u32, height: u32) -> Self {
        self.width = width;
        self.height = height;
        self
    }
    /// Checks the camera: finite numbers, eye != look_at, up not parallel to the view,
    /// 0 < fov < 180, non-zero size.
    ///
    /// # Errors
    /// The first problem found.
    pub fn check(&self) -> Result<(), CameraError> {
        let fwd = self.look_at - self.eye;
        if !(self.eye.is_finite() && self.look_at.is_finite() && self.up.is_finite()) {
            return Err(CameraError::NotFinite);
        }
        if fwd.length_squared() == 0.0 {
            return Err(CameraError::EyeIsTarget);
        }
        if fwd.cross(self.up).length_squared() <= 1e-12 * fwd.length_squared() * self.up.length_squared() {
            return Err(CameraError::BadUp);
        }
        if !(self.fov_y_deg > 0.0 && self.fov_y_deg < 180.0) {
            return Err(CameraError::BadFov(self.fov_y_deg));
        }
        if self.width == 0 || self.height == 0 {
            return Err(CameraError::EmptyImage { width: self.width, height: self.height });
        }
        Ok(())
    }
    /// Orthonormal basis (right, up, forward) and the half extents of the image plane at
    /// distance 1.
    fn frame(&self) -> (Vec3, Vec3, Vec3, f32, f32) {
        let f = (self.look_at - self.eye).normalize();
        let r = f.cross(self.up).normalize();
        let u = r.cross(f);
        let hy = (self.fov_y_deg.to_radians() * 0.5).tan();
        let hx = hy * self.width as f32 / self.height as f32;
        (r, u, f, hx, hy)
    }
    /// The primary ray through the centre of pixel `(x, y)` (`y = 0` is the top row).
    pub fn ray(&self, x: u32, y: u32) -> Ray {
        self.pinhole().ray(x, y)
    }
    /// The camera with its frame precomputed, for generating many rays.
    pub fn pinhole(&self) -> Pinhole {
        let (r, u, f, hx, hy) = self.frame();
        Pinhole {
            eye: self.eye,
            right: r * (2.0 * hx / self.width as f32),
            down: u * (-2.0 * hy / self.height as f32),
            corner: f - r * hx + u * hy,
        }
    }
    /// Every pixel's primary ray, row-major.
    pub fn rays(&self) -> RaySoa {
        let p = self.pinhole();
        let mut v = Vec::with_capacity((self.width * self.height) as usize);
        for y in 0..self.height {
            for x in 0..self.width {
                v.push(p.ray(x, y));
            }
        }
        RaySoa::from_rays(&v)
    }
    /// Primary rays in 2×4 pixel tiles (8 neighbouring pixels per packet), tile after tile;
    /// `pixel[i]` gives the `(x, y)` of ray `i`. Pixels outside the image are skipped.
    pub fn tiled_rays(&self) -> (RaySoa, Vec<(u32, u32)>) {
        let p = self.pinhole();
        let mut v = Vec::with_capacity((self.width * self.height) as usize);
        let mut pix = Vec::with_capacity(v.capacity());
        for ty in (0..self.height).step_by(2) {
            for tx in (0..self.width).step_by(4) {
                for y in ty..(ty + 2).min(self.height) {
                    for x in tx..(tx + 4).min(self.width) {
                        v.push(p.ray(x, y));
                        pix.push((x, y));
                    }
                }
            }
        }
        (RaySoa::from_rays(&v), pix)
    }
}

/// A camera's precomputed frame: `ray(x, y)` costs a few multiply-adds and one normalize.
#[derive(Clone, Copy, Debug)]
pub struct Pinhole {
    eye: Vec3,
    right: Vec3,
    down: Vec3,
    corner: Vec3,
}

impl Pinhole {
    /// The primary ray through the centre of pixel `(x, y)`.
    #[inline]
    pub fn ray(&self, x: u32, y: u32) -> Ray {
        let d = self.corner + self.right * (x as f32 + 0.5) + self.down * (y as f32 + 0.5);
        Ray::new(self.eye, d.normalize())
    }
}
