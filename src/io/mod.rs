//! Ray, segment, point, sphere-sweep, hit, visibility, count, closest-point and contact files: csv, raw
//! little-endian `.bin` and `.npy`, streamed in bounded chunks.
//!
//! # Formats
//!
//! The format comes from the file extension ([`Format::from_path`]) unless the caller names
//! one ([`Format::resolve`]). The path `-` means standard input (readers) or standard output
//! (writers) and works with csv only.
//!
//! | file | csv columns | `.bin` record (little-endian) | `.npy` |
//! |---|---|---|---|
//! | rays (in) | `ox,oy,oz,dx,dy,dz[,tmin,tmax]` | 8 × f32: `ox oy oz dx dy dz tmin tmax` | `<f4`, shape (N, 8) or (N, 6), C order |
//! | segments (in) | `ax,ay,az,bx,by,bz` | 6 × f32 | `<f4`, shape (N, 6), C order |
//! | hits (out) | header `t,geom,prim,inst,u,v,nx,ny,nz` (`inst` -1 when the hit is not through an instance); a miss is `inf,-1,-1,-1,0,0,0,0,0` | 36 bytes: `t` f32, `geom` `prim` `inst` u32, `u v nx ny nz` f32; a miss has `t = +inf`, ids `0xFFFFFFFF`; `inst` is `0xFFFFFFFF` when not instanced | structured dtype `[('t','<f4'),('geom','<u4'),('prim','<u4'),('inst','<u4'),('u','<f4'),('v','<f4'),('nx','<f4'),('ny','<f4'),('nz','<f4')]`, shape (N,) |
//! | visibility (out) | header `visible`, then `1` or `0` per line | 1 byte per segment (1/0) | `\|b1`, shape (N,) |
//! | points (in) | `x,y,z` | 3 × f32: `x y z` | `<f4`, shape (N, 3), C order |
//! | hit lists (out, `cast --all`) | header `ray,t,geom,prim,inst,u,v,nx,ny,nz`, one line per hit | 40 bytes: `ray` u32, then a hit record | structured dtype `[('ray','<u4')]` + the 9 hit fields, shape (hits,) |
//! | counts (out) | header `count`, then a decimal u32 per line | 4 bytes: u32 | `<u4`, shape (N,) |
//! | inside (out) | header `inside`, then `1` or `0` per line | 1 byte per point (1/0) | `\|b1`, shape (N,) |
//! | closest (out) | header `x,y,z,distance,geom,prim,u,v`; a miss is `inf,inf,inf,inf,-1,-1,0,0` | 32 bytes: `x y z distance` f32, `geom prim` u32, `u v` f32; a miss has `x y z distance = +inf`, ids `0xFFFFFFFF` | structured dtype `[('x','<f4'),('y','<f4'),('z','<f4'),('distance','<f4'),('geom','<u4'),('prim','<u4'),('u','<f4'),('v','<f4')]`, shape (N,) |
//! | sphere sweeps (in) | `cx,cy,cz,r,mx,my,mz` (centre, radius, motion) | 7 × f32 | `<f4`, shape (N, 7), C order |
//! | sweep contacts (out, `sweep`) | header `toi,geom,prim,inst,px,py,pz,nx,ny,nz`; a miss is `inf,-1,-1,-1,inf,inf,inf,0,0,0` | 40 bytes: `toi` f32, `geom prim inst` u32, `px py pz nx ny nz` f32; a miss has `toi`, `p` `+inf`, ids `0xFFFFFFFF` | structured dtype of those 10 fields (`<f4` / `<u4`), shape (N,) |
//!
//! * **Rays** without `tmin,tmax` (6 csv fields, or an `.npy` of shape (N, 6)) get
//!   `t ∈ [0, +inf)`. A csv file may mix 6- and 8-field lines.
//! * **Segments** `a → b` are returned as the rays `origin = a, dir = b - a, t ∈ [0, 1]`
//!   ([`Ray::segment`](crate::Ray::segment)); callers wanting another interval (an open
//!   segment for line of sight, say) adjust it.
//! * **csv input**: blank lines and lines starting with `#` are skipped; so is one optional
//!   header line, recognised as the first other line whose first field is not a number
//!   (and does not start like one, with a digit, sign or point: a garbled first data line
//!   such as `1;2;3;4;5;6` is an error, not a header).
//!   Whitespace around fields is ignored. Numbers are decimal or exponent notation; `inf`,
//!   `-inf`, `infinity` and `nan` (any case) are numbers too. Every other line must have
//!   the right number of numeric fields.
//! * **NaN and infinite values are not errors in ray and segment files**: such rays are
//!   defined misses in the library (see [`crate::ray`]), and output order always equals
//!   input order. **In point and sphere-sweep files they are errors** naming the line or
//!   record and the column ([`PointReader`], [`SweepReader`]; a negative radius too): a
//!   point has no defined answer to fall back on, and a broken sweep record is a mistake.
//! * **Sweep contacts**: `inst` is `-1` (`0xFFFFFFFF`) while scenes have no instances.
//! * **Hit lists** ([`AllHitsWriter`]) hold one record per hit, sorted by ray then `t`
//!   (ties by `geom`, `prim`), led by the 0-based index of the ray in the input; a ray
//!   without hits has no record.
//! * **Floats in csv output** are written in the shortest form that reads back to the same
//!   f32 (`inf`, `-inf` and `nan` for the non-finite values).
//! * **`.npy`** files are read in format versions 1.0, 2.0 and 3.0 and written in 1.0, with
//!   the header padded so the data starts at a multiple of 64 bytes. Only little-endian,
//!   C-order (`fortran_order: False`) data is read; the header is parsed here (no numpy).
//!
//! # Streaming
//!
//! [`RayReader::next_chunk`], [`PointReader::next_chunk`] and [`SweepReader::next_chunk`] return at most the requested
//! number of records at a time and keep no more than one chunk (plus a 64 KiB read buffer
//! and, for csv, the current line) in memory, so memory use does not grow with the file's
//! length. The writers
//! ([`HitWriter`], [`AllHitsWriter`], [`VisWriter`], [`FlagWriter`], [`CountWriter`],
//! [`ClosestWriter`], [`SweepWriter`]) append one chunk at a time through a 64 KiB buffer; their `.npy`
//! files reserve a header wide enough for any record count and fill in the shape in
//! `finish`.
//!
//! # Errors
//!
//! Every bad input is an [`IoError`] naming the file (`<stdin>` / `<stdout>` for `-`) and,
//! where there is one, the place: `line N` (1-based) in csv, `record N (byte offset B)`
//! (record index from 0) in `.bin` / `.npy` data, `header` for an `.npy` header. Its
//! `Display` is `file:place: message`. Checked: unreadable or missing files; malformed csv
//! lines, wrong field counts (expected vs found), non-numeric fields (which column, what
//! text); `.bin` sizes that are not a whole number of records (how many bytes are left
//! over); `.npy` magic, version, dtype, shape, `fortran_order`, and data shorter or longer
//! than the header declares. Sizes are checked when a file is opened, before any record is
//! returned, wherever the size is known.
//!
//! Errors from a reader concern its input (a command-line tool exits with code 2 for them);
//! errors from a writer concern its output (exit code 1).
//!
//! # Atomic output
//!
//! A writer to a file writes a temporary file `.NAME.tmp-PID-SEQ` in the destination's
//! directory and renames it to `NAME` in `finish()`, after syncing it. A writer dropped
//! without `finish()` (an error, a panic) deletes its temporary file, so a failed run never
//! leaves a file that looks complete. Standard output is written directly. The same
//! [`AtomicFile`] is public for other outputs (the PNG renderer and the command line use it).
//!
//! ```
//! use lanecast::io::{Format, HitWriter, InputKind, RayReader, write_rays};
//! use lanecast::{HitSoa, Ray};
//! use glam::Vec3;
//!
//! let dir = std::env::temp_dir().join(format!("lanecast-io-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let rays_path = dir.join("rays.npy").to_string_lossy().into_owned();
//! let rays: Vec<Ray> = (0..5).map(|i| Ray::new(Vec3::splat(i as f32), Vec3::Z)).collect();
//! write_rays(&rays_path, Format::Npy, &rays).unwrap();
//!
//! let mut reader = RayReader::open(&rays_path, Format::Npy, InputKind::Rays).unwrap();
//! assert_eq!(reader.total(), Some(5));
//! let hits_path = dir.join("hits.csv").to_string_lossy().into_owned();
//! let mut out = HitWriter::create(&hits_path, Format::Csv).unwrap();
//! while let Some(chunk) = reader.next_chunk(2).unwrap() {
//!     assert!(chunk.len() <= 2);
//!     out.write(&HitSoa::with_len(chunk.len())).unwrap(); // all misses
//! }
//! out.finish().unwrap();
//! let text = std::fs::read_to_string(&hits_path).unwrap();
//! assert_eq!(text.lines().nth(1), Some("inf,-1,-1,-1,0,0,0,0,0"));
//! std::fs::remove_dir_all(&dir).unwrap();
//! ```

mod hits;
pub(crate) mod npy;
mod points;
mod rays;
mod sink;
mod source;
mod values;

pub use hits::{AllHitsWriter, HitWriter, VisWriter, read_hits, read_visibility};
pub use points::{POINT_COLUMNS, PointReader, SWEEP_COLUMNS, SweepReader, write_points, write_sweeps};
pub use rays::{RayReader, write_f32_records, write_rays, write_segments};
pub use sink::{AtomicFile, remove_unfinished};
pub use values::{ClosestWriter, CountWriter, FlagWriter, SweepWriter, read_counts, read_flags};

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The name errors use for `-` as an input.
pub const STDIN_NAME: &str = "<stdin>";
/// The name errors use for `-` as an output.
pub const STDOUT_NAME: &str = "<stdout>";

/// A file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Comma-separated text, one record per line.
    Csv,
    /// Raw little-endian fixed-size records, no header.
    Bin,
    /// NumPy `.npy` (format 1.0 when written).
    Npy,
}

impl Format {
    /// The format named by `path`'s extension (`csv`, `bin`, `npy`, any case), if any.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?;
        ext.to_ascii_lowercase().parse().ok()
    }

    /// The format to use for `path`: `explicit` when given, else csv for `-`, else the one
    /// the extension names; an error naming the file when none applies.
    pub fn resolve(path: &str, explicit: Option<Format>) -> Result<Format, IoError> {
        if let Some(f) = explicit {
            return Ok(f);
        }
        if path == "-" {
            return Ok(Format::Csv);
        }
        Format::from_path(Path::new(path)).ok_or_else(|| {
            IoError::new(
                path,
                "cannot tell the format from the file extension: use .csv, .bin or .npy, \
                 or name the format",
            )
        })
    }

    /// The usual extension (`csv`, `bin`, `npy`), also the name [`FromStr`] accepts.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Bin => "bin",
            Format::Npy => "npy",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.extension())
    }
}

/// A format name that is not `csv`, `bin` or `npy`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown format {0:?}: expected \"csv\", \"bin\" or \"npy\"")]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;
    /// `"csv"`, `"bin"` or `"npy"` (exactly, lower case).
    fn from_str(s: &str) -> Result<Self, UnknownFormat> {
        match s {
            "csv" => Ok(Format::Csv),
            "bin" => Ok(Format::Bin),
            "npy" => Ok(Format::Npy),
            _ => Err(UnknownFormat(s.to_owned())),
        }
    }
}

/// What an input file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// Rays: `ox,oy,oz,dx,dy,dz[,tmin,tmax]`.
    Rays,
    /// Segments: `ax,ay,az,bx,by,bz`, read as rays over `t ∈ [0, 1]`.
    Segments,
}

impl InputKind {
    /// f32 values in one `.bin` record (8 for rays, 6 for segments).
    pub fn bin_width(self) -> usize {
        match self {
            InputKind::Rays => 8,
            InputKind::Segments => 6,
        }
    }

    /// Column names, in file order (rays: all 8, of which the last 2 are optional).
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            InputKind::Rays => &["ox", "oy", "oz", "dx", "dy", "dz", "tmin", "tmax"],
            InputKind::Segments => &["ax", "ay", "az", "bx", "by", "bz"],
        }
    }
}

/// A failure to read or write one of these files, naming the file and, when known, the place.
///
/// `Display` gives `path:place: message`, or `path: message` without a place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoError {
    /// The file as given, or `<stdin>` / `<stdout>` for `-`.
    pub path: String,
    /// `line N` (csv, 1-based), `record N (byte offset B)` (`.bin`/`.npy`, from 0) or
    /// `header` (`.npy`), when the error has a place.
    pub place: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl IoError {
    /// An error about a whole file.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), place: None, message: message.into() }
    }

    /// An error at a place in a file.
    pub fn at(path: impl Into<String>, place: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), place: Some(place.into()), message: message.into() }
    }
}

impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.place {
            Some(p) => write!(f, "{}:{}: {}", self.path, p, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

impl std::error::Error for IoError {}

/// Appends `x` in the shortest text that parses back to the same f32 (`inf`, `-inf`, `nan`
/// for the non-finite values; exponent notation for very small and very large magnitudes).
pub(crate) fn push_f32(out: &mut String, x: f32) {
    use std::fmt::Write as _;
    if x.is_nan() {
        out.push_str("nan");
    } else if x.is_infinite() {
        out.push_str(if x > 0.0 { "inf" } else { "-inf" });
    } else {
        let a = x.abs();
        // Writing to a String cannot fail.
        let _ = if a != 0.0 && !(1e-5..1e16).contains(&a) { write!(out, "{x:e}") } else { write!(out, "{x}") };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_parse_and_resolve() {
        assert_eq!(Format::from_path(Path::new("a/b.NPY")), Some(Format::Npy));
        assert_eq!(Format::from_path(Path::new("x.csv")), Some(Format::Csv));
        assert_eq!(Format::from_path(Path::new("x.txt")), None);
        assert_eq!(Format::from_path(Path::new("bin")), None);
        assert_eq!("bin".parse::<Format>(), Ok(Format::Bin));
        assert!("json".parse::<Format>().unwrap_err().to_string().contains("json"));
        assert_eq!(Format::resolve("-", None).unwrap(), Format::Csv);
        assert_eq!(Format::resolve("x.csv", Some(Format::Bin)).unwrap(), Format::Bin);
        assert!(Format::resolve("x.dat", None).unwrap_err().to_string().starts_with("x.dat: "));
    }

    #[test]
    fn errors_display_path_place_message() {
        assert_eq!(IoError::at("a.csv", "line 3", "bad").to_string(), "a.csv:line 3: bad");
        assert_eq!(IoError::new("a.csv", "gone").to_string(), "a.csv: gone");
    }

    #[test]
    fn floats_round_trip_through_text() {
        let xs = [
            0.0f32,
            -0.0,
            1.0,
            0.1,
            -3.25,
            1e-5,
            9.99e-6,
            f32::MIN_POSITIVE,
            1e-45,
            f32::MAX,
            f32::MIN,
            16777217.0,
            1e16,
            123456.79,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        for x in xs {
            let mut s = String::new();
            push_f32(&mut s, x);
            let back: f32 = s.parse().unwrap();
            assert_eq!(back.to_bits(), x.to_bits(), "{x} -> {s}");
            assert!(s.len() <= 16, "{s} is long");
        }
        let mut s = String::new();
        push_f32(&mut s, f32::NAN);
        assert!(s.parse::<f32>().unwrap().is_nan());
    }
}
