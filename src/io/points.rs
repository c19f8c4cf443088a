//! Point input: the streaming [`PointReader`] and [`write_points`].
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
use glam::Vec3;

/// Column names of a point file, in order.
pub const POINT_COLUMNS: [&str; 3] = ["x", "y", "z"];

/// Bytes per point in `.bin` and `.npy`.
const POINT_RECORD: usize = 12;

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
    format: Format,
    src: Src,
    returned: u64,
}

enum Src {
    Csv(CsvLines),
    Records(RecordSource),
}

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

/// Checks an `.npy` header for points; returns the row size in bytes.
fn check_npy(h: &npy::Header) -> Result<usize, String> {
    if h.descr != PyVal::Str("<f4".into()) {
        return Err(format!("dtype must be little-endian float32 '<f4', got {}", h.descr));
    }
    if !matches!(h.shape.as_slice(), [_, 3]) {
        return Err(format!("shape must be (N, 3) for points, got {}", h.shape_text()));
    }
    Ok(POINT_RECORD)
}

impl PointReader {
    /// Opens `path` (`-`: stdin, csv only) holding points in `format`.
    ///
    /// Fails on a missing or unreadable file, `-` with a binary format, a bad `.npy` header
    /// (dtype other than `<f4`, shape other than (N, 3), Fortran order), or a `.bin` /
    /// `.npy` file whose size does not match its records.
    pub fn open(path: &str, format: Format) -> Result<Self, IoError> {
        check_stdio(path, format, STDIN_NAME)?;
        let src = match format {
            Format::Csv => Src::Csv(CsvLines::open(path)?),
            Format::Bin => Src::Records(RecordSource::open_bin(path, POINT_RECORD)?),
            Format::Npy => Src::Records(RecordSource::open_npy(path, check_npy)?.0),
        };
        Ok(Self { format, src, returned: 0 })
    }

    /// Number of points in the input when known before reading it: from the size of a
    /// `.bin` file, from the shape of an `.npy` file; `None` for csv.
    pub fn total(&self) -> Option<u64> {
        match &self.src {
            Src::Csv(_) => None,
            Src::Records(r) => r.total(),
        }
    }

    /// Points returned so far.
    pub fn position(&self) -> u64 {
        self.returned
    }

    /// The input's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The file name used in errors (`<stdin>` for `-`).
    pub fn name(&self) -> &str {
        match &self.src {
            Src::Csv(c) => c.name(),
            Src::Records(r) => r.name(),
        }
    }

    /// The next at most `max` points (at least one is asked for when `max` is 0), or
    /// `Ok(None)` once the input is exhausted.
    ///
    /// A chunk holds fewer than `max` points only at the end of the input, or when `max`
    /// records of a `.bin` / `.npy` file would be more than 1 GiB of file data. An error
    /// (a malformed line, a non-finite coordinate, a truncated file) names the file and the
    /// line or record; the points before it in the same chunk are not returned.
    pub fn next_chunk(&mut self, max: usize) -> Result<Option<Vec<Vec3>>, IoError> {
        let max = max.max(1);
        let pts = match &mut self.src {
            Src::Csv(lines) => read_csv_chunk(lines, max)?,
            Src::Records(src) => {
                let first = src.position();
                let data_offset = src.data_offset();
                let Some(bytes) = src.next_records(max)? else {
                    return Ok(None);
                };
                let mut pts = Vec::with_capacity(bytes.len() / POINT_RECORD);
                for (i, rec) in bytes.chunks_exact(POINT_RECORD).enumerate() {
                    let mut v = [0f32; 3];
                    for (c, (x, b)) in v.iter_mut().zip(rec.chunks_exact(4)).enumerate() {
                        *x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                        if let Some(why) = not_finite(*x) {
                            let at = first + i as u64;
                            let place = record_place(at, data_offset + at * POINT_RECORD as u64);
                            let msg = format!(
                                "column {} ({}): {why}; point coordinates must be finite",
                                c + 1,
                                POINT_COLUMNS[c]
                            );
                            return Err(IoError::at(src.name(), place, msg));
                        }
                    }
                    pts.push(Vec3::from_array(v));
                }
                pts
            }
        };
        if pts.is_empty() {
            return Ok(None);
        }
        self.returned += pts.len() as u64;
        Ok(Some(pts))
    }
}

/// Parses up to `max` csv points.
fn read_csv_chunk(lines: &mut CsvLines, max: usize) -> Result<Vec<Vec3>, IoError> {
    let mut pts = Vec::with_capacity(max.min(1 << 16));
    while pts.len() < max {
        let Some(line) = lines.next_line()? else {
            break;
        };
        let n = line.split(',').count();
        if n != 3 {
            return Err(lines.err(format!("expected 3 fields (x,y,z), got {n}")));
        }
        let mut v = [0f32; 3];
        let mut bad = None;
        for (i, field) in line.split(',').enumerate() {
            let field = field.trim();
            match parse_f32(field) {
                Some(x) => match not_finite(x) {
                    None => v[i] = x,
                    Some(why) => {
                        bad = Some(format!(
                            "column {} ({}): {why}; point coordinates must be finite",
                            i + 1,
                            POINT_COLUMNS[i]
                        ));
                        break;
                    }
                },
                None => {
                    bad = Some(format!(
                        "column {} ({}): expected a number, got {}",
                        i + 1,
                        POINT_COLUMNS[i],
                        quote_field(field)
                    ));
                    break;
                }
            }
        }
        if let Some(msg) = bad {
            return Err(lines.err(msg));
        }
        pts.push(Vec3::from_array(v));
    }
    Ok(pts)
}

/// Writes `points` as a point input file: csv with the header `x,y,z`, `.bin` records of
/// 3 f32, or `.npy` of shape (N, 3). Atomic like the other writers. Non-finite coordinates
/// are written as given (the readers refuse them).
pub fn write_points(path: &str, format: Format, points: &[Vec3]) -> Result<(), IoError> {
    let flat: Vec<f32> = points.iter().flat_map(|p| p.to_array()).collect();
    write_f32_records(path, format, 3, &flat, Some(&POINT_COLUMNS.join(",")))
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
