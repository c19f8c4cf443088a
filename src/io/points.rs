//! Point and sphere-sweep input: the streaming [`PointReader`] and [`SweepReader`] (records
//! of finite f32, checked value by value), and [`write_points`] / [`write_sweeps`].
//!
//! A point file holds one `x, y, z` per record: csv lines `x,y,z` (an optional header, `#`
//! comments and blank lines skipped, as for rays), `.bin` records of 3 little-endian f32
//! (12 bytes), or an `.npy` `<f4` array of shape (N, 3) in C order.
//!
//! Unlike rays, **every coordinate must be finite**: a NaN or infinite coordinate (including
//! a csv number beyond the f32 range) is an error naming the line or record and the column.
//! A ray file needs non-finite numbers (`tmax = inf` is the default interval, and an invalid
//! ray has a defined answer: a miss); a point has no such answer (there is no closest point
//! to NaN, and "inside" would be a guess), so refusing the file is the only answer that
//! does not lie.

use super::npy::{self, PyVal};
use super::rays::write_f32_records;
use super::source::{CsvLines, RecordSource, check_stdio, parse_f32, quote_field, record_place};
use super::{Format, IoError, STDIN_NAME};
use crate::scene::SphereSweep;
use glam::Vec3;

/// Column names of a point file, in order.
pub const POINT_COLUMNS: [&str; 3] = ["x", "y", "z"];

/// Reads points from a csv, `.bin` or `.npy` file (or csv on stdin) in chunks.
///
/// A point file holds one `x, y, z` per record: csv lines `x,y,z` (an optional header, `#`
/// comments and blank lines skipped, as for rays), `.bin` records of 3 little-endian f32
/// (12 bytes), or an `.npy` `<f4` array of shape (N, 3) in C order.
///
/// Memory use is bounded by the chunk size, whatever the file's length. Points come out in
/// file order. Errors are those of [`RayReader`](super::RayReader) (see the
/// [io docs](super)), plus one: **every coordinate must be finite**. A NaN or infinite
/// coordinate (also a csv number beyond the f32 range) is an error naming the line or
/// record and the column. A ray file needs non-finite numbers (`tmax = inf` is the default
/// interval, and an invalid ray has a defined answer: a miss); a point has no such answer
/// (there is no closest point to NaN, and "inside" would be a guess), so refusing the file
/// is the only answer that does not lie.
///
/// ```
/// use lanecast::io::{Format, PointReader, write_points};
/// use glam::Vec3;
///
/// let dir = std::env::temp_dir().join(format!("lanecast-points-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let p = dir.join("pts.csv").to_string_lossy().into_owned();
/// std::fs::write(&p, "x,y,z\n1,2,3\n# a comment\n4,5,6\n").unwrap();
/// let mut r = PointReader::open(&p, Format::Csv).unwrap();
/// assert_eq!(r.next_chunk(10).unwrap(), Some(vec![Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 5.0, 6.0)]));
/// assert_eq!(r.next_chunk(10).unwrap(), None);
///
/// std::fs::write(&p, "1,2,3\nnan,0,0\n").unwrap();
/// let e = PointReader::open(&p, Format::Csv).unwrap().next_chunk(10).unwrap_err();
/// assert!(e.to_string().ends_with("pts.csv:line 2: column 1 (x): coordinate is NaN; point coordinates must be finite"));
///
/// let q = dir.join("pts.npy").to_string_lossy().into_owned();
/// write_points(&q, Format::Npy, &[Vec3::X, Vec3::Y]).unwrap();
/// assert_eq!(PointReader::open(&q, Format::Npy).unwrap().total(), Some(2));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct PointReader {
    inner: FiniteRecords<3>,
}

/// Reads sphere sweeps (`lanecast sweep`'s input) from a csv, `.bin` or `.npy` file (or csv
/// on stdin) in chunks: `cx,cy,cz,r,mx,my,mz` per record (centre, radius, motion; see
/// [`SphereSweep`]), `.bin` records of 7 little-endian f32 (28 bytes), or an `.npy` `<f4`
/// array of shape (N, 7) in C order.
///
/// As for points, **every number must be finite and every radius `>= 0`**: anything else is
/// an error naming the line or record and the column. (The library answers an invalid sweep
/// with "no contact"; in a file such a record is almost always a mistake, and an error is more
/// use than a silent miss.) Memory use is bounded by the chunk size.
///
/// ```
/// use lanecast::io::{Format, SweepReader};
/// use lanecast::SphereSweep;
/// use glam::Vec3;
///
/// let dir = std::env::temp_dir().join(format!("lanecast-sweeps-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let p = dir.join("sweeps.csv").to_string_lossy().into_owned();
/// std::fs::write(&p, "cx,cy,cz,r,mx,my,mz\n0,1,0,0.5,10,0,0\n").unwrap();
/// let mut r = SweepReader::open(&p, Format::Csv).unwrap();
/// let want = SphereSweep::new(Vec3::Y, 0.5, Vec3::X * 10.0);
/// assert_eq!(r.next_chunk(10).unwrap(), Some(vec![want]));
///
/// std::fs::write(&p, "0,1,0,-0.5,10,0,0\n").unwrap();
/// let e = SweepReader::open(&p, Format::Csv).unwrap().next_chunk(10).unwrap_err();
/// assert!(e.to_string().ends_with("sweeps.csv:line 1: column 4 (r): radius is negative; radii must be >= 0"));
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub struct SweepReader {
    inner: FiniteRecords<7>,
}

/// Column names of a sphere-sweep file, in order.
pub const SWEEP_COLUMNS: [&str; 7] = ["cx", "cy", "cz", "r", "mx", "my", "mz"];

/// What a file of fixed-width records of f32 holds: its column names, what its records are
/// called, and the check of each value (`None`: valid).
struct Spec<const W: usize> {
    what: &'static str,
    columns: [&'static str; W],
    check: fn(usize, f32) -> Option<String>,
}

static POINTS: Spec<3> = Spec { what: "points", columns: POINT_COLUMNS, check: check_coordinate };

static SWEEPS: Spec<7> = Spec { what: "sphere sweeps", columns: SWEEP_COLUMNS, check: check_sweep_value };

/// Why `x` is not a valid coordinate, if it is not.
fn not_finite(x: f32) -> Option<&'static str> {
    if x.is_nan() {
        Some("coordinate is NaN")
    } else if x.is_infinite() {
        Some("coordinate is infinite (or beyond the f32 range)")
    } else {
        None
    }
}

fn check_coordinate(_col: usize, x: f32) -> Option<String> {
    not_finite(x).map(|why| format!("{why}; point coordinates must be finite"))
}

fn check_sweep_value(col: usize, x: f32) -> Option<String> {
    if let Some(why) = not_finite(x) {
        return Some(format!("{}; sphere sweep numbers must be finite", why.replacen("coordinate", "value", 1)));
    }
    (col == 3 && x < 0.0).then(|| "radius is negative; radii must be >= 0".to_string())
}

/// The reader behind [`PointReader`] and [`SweepReader`]: records of `W` f32, each value
/// checked by the spec.
struct FiniteRecords<const W: usize> {
    spec: &'static Spec<W>,
    format: Format,
    src: Src,
    returned: u64,
}

enum Src {
    Csv(CsvLines),
    Records(RecordSource),
}

impl<const W: usize> FiniteRecords<W> {
    fn open(path: &str, format: Format, spec: &'static Spec<W>) -> Result<Self, IoError> {
        check_stdio(path, format, STDIN_NAME)?;
        let check_npy = |h: &npy::Header| {
            if h.descr != PyVal::Str("<f4".into()) {
                return Err(format!("dtype must be little-endian float32 '<f4', got {}", h.descr));
            }
            if !matches!(h.shape.as_slice(), [_, w] if *w as usize == W) {
                return Err(format!("shape must be (N, {W}) for {}, got {}", spec.what, h.shape_text()));
            }
            Ok(4 * W)
        };
        let src = match format {
            Format::Csv => Src::Csv(CsvLines::open(path)?),
            Format::Bin => Src::Records(RecordSource::open_bin(path, 4 * W)?),
            Format::Npy => Src::Records(RecordSource::open_npy(path, check_npy)?.0),
        };
        Ok(Self { spec, format, src, returned: 0 })
    }

    fn total(&self) -> Option<u64> {
        match &self.src {
            Src::Csv(_) => None,
            Src::Records(r) => r.total(),
        }
    }

    fn name(&self) -> &str {
        match &self.src {
            Src::Csv(c) => c.name(),
            Src::Records(r) => r.name(),
        }
    }

    fn next_chunk(&mut self, max: usize) -> Result<Option<Vec<[f32; W]>>, IoError> {
        let max = max.max(1);
        let recs = match &mut self.src {
            Src::Csv(lines) => {
                let mut recs = Vec::with_capacity(max.min(1 << 16));
                while recs.len() < max {
                    let Some(line) = lines.next_line()? else {
                        break;
                    };
                    match parse_csv_record(line, self.spec) {
                        Ok(rec) => recs.push(rec),
                        Err(msg) => return Err(lines.err(msg)),
                    }
                }
                recs
            }
            Src::Records(src) => {
                let first = src.position();
                let data_offset = src.data_offset();
                let Some(bytes) = src.next_records(max)? else {
                    return Ok(None);
                };
                let mut recs = Vec::with_capacity(bytes.len() / (4 * W));
                for (i, raw) in bytes.chunks_exact(4 * W).enumerate() {
                    let mut v = [0f32; W];
                    for (c, (x, b)) in v.iter_mut().zip(raw.chunks_exact(4)).enumerate() {
                        *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        if let Some(msg) = invalid(self.spec, c, *x) {
                            let at = first + i as u64;
                            let place = record_place(at, data_offset + at * (4 * W) as u64);
                            return Err(IoError::at(src.name(), place, msg));
                        }
                    }
                    recs.push(v);
                }
                recs
            }
        };
        if recs.is_empty() {
            return Ok(None);
        }
        self.returned += recs.len() as u64;
        Ok(Some(recs))
    }
}

/// The error message for value `x` of column `c`, if it is invalid.
fn invalid<const W: usize>(spec: &Spec<W>, c: usize, x: f32) -> Option<String> {
    (spec.check)(c, x).map(|why| format!("column {} ({}): {why}", c + 1, spec.columns[c]))
}

/// One csv record of `W` checked numbers.
fn parse_csv_record<const W: usize>(line: &str, spec: &Spec<W>) -> Result<[f32; W], String> {
    let n = line.split(',').count();
    if n != W {
        return Err(format!("expected {W} fields ({}), got {n}", spec.columns.join(",")));
    }
    let mut v = [0f32; W];
    for (i, field) in line.split(',').enumerate() {
        let field = field.trim();
        let Some(x) = parse_f32(field) else {
            return Err(format!(
                "column {} ({}): expected a number, got {}",
                i + 1,
                spec.columns[i],
                quote_field(field)
            ));
        };
        if let Some(msg) = invalid(spec, i, x) {
            return Err(msg);
        }
        v[i] = x;
    }
    Ok(v)
}

/// The public surface shared by the two readers.
macro_rules! finite_reader {
    ($reader:ident, $spec:expr, $item:ty, $what:literal, $convert:expr) => {
        impl $reader {
            #[doc = concat!("Opens `path` (`-`: stdin, csv only) holding ", $what, " in `format`.")]
            ///
            /// Fails on a missing or unreadable file, `-` with a binary format, a bad `.npy`
            /// header (dtype other than `<f4`, another shape, Fortran order), or a `.bin` /
            /// `.npy` file whose size does not match its records.
            pub fn open(path: &str, format: Format) -> Result<Self, IoError> {
                Ok(Self { inner: FiniteRecords::open(path, format, $spec)? })
            }

            #[doc = concat!("Number of ", $what, " in the input when known before reading it: from the")]
            /// size of a `.bin` file, from the shape of an `.npy` file; `None` for csv.
            pub fn total(&self) -> Option<u64> {
                self.inner.total()
            }

            /// Records returned so far.
            pub fn position(&self) -> u64 {
                self.inner.returned
            }

            /// The input's format.
            pub fn format(&self) -> Format {
                self.inner.format
            }

            /// The file name used in errors (`<stdin>` for `-`).
            pub fn name(&self) -> &str {
                self.inner.name()
            }

            #[doc = concat!("The next at most `max` ", $what, " (at least one is asked for when `max` is")]
            /// 0), or `Ok(None)` once the input is exhausted.
            ///
            /// A chunk holds fewer than `max` records only at the end of the input, or when
            /// `max` records of a `.bin` / `.npy` file would be more than 1 GiB of file data.
            /// An error (a malformed line, an invalid value, a truncated file) names the file
            /// and the line or record; the records before it in the same chunk are not
            /// returned.
            pub fn next_chunk(&mut self, max: usize) -> Result<Option<Vec<$item>>, IoError> {
                Ok(self.inner.next_chunk(max)?.map(|recs| recs.iter().map($convert).collect()))
            }
        }
    };
}

finite_reader!(PointReader, &POINTS, Vec3, "points", |r: &[f32; 3]| Vec3::from_array(*r));
finite_reader!(SweepReader, &SWEEPS, SphereSweep, "sphere sweeps", |r: &[f32; 7]| bytemuck::cast(*r));

/// Writes `points` as a point input file: csv with the header `x,y,z`, `.bin` records of
/// 3 f32, or `.npy` of shape (N, 3). Atomic like the other writers. Non-finite coordinates
/// are written as given (the readers refuse them).
pub fn write_points(path: &str, format: Format, points: &[Vec3]) -> Result<(), IoError> {
    let flat: Vec<f32> = points.iter().flat_map(|p| p.to_array()).collect();
    write_f32_records(path, format, 3, &flat, Some(&POINT_COLUMNS.join(",")))
}

/// Writes `sweeps` as a sphere-sweep input file: csv with the header `cx,cy,cz,r,mx,my,mz`,
/// `.bin` records of 7 f32, or `.npy` of shape (N, 7). Atomic like the other writers.
pub fn write_sweeps(path: &str, format: Format, sweeps: &[SphereSweep]) -> Result<(), IoError> {
    let flat: &[f32] = bytemuck::cast_slice(sweeps);
    write_f32_records(path, format, 7, flat, Some(&SWEEP_COLUMNS.join(",")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_values_are_named() {
        assert_eq!(not_finite(1.0), None);
        assert_eq!(not_finite(-0.0), None);
        assert_eq!(not_finite(f32::MAX), None);
        assert!(not_finite(f32::NAN).unwrap().contains("NaN"));
        assert!(not_finite(f32::NEG_INFINITY).unwrap().contains("infinite"));
        assert!(not_finite(parse_f32("1e39").unwrap()).is_some(), "beyond the f32 range reads as infinite");
    }
}
