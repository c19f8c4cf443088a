//! Ray and segment input: the streaming [`RayReader`] and writers for input files.

use super::npy::{self, PyVal};
use super::sink::Output;
use super::source::{CsvLines, RecordSource, check_stdio, parse_f32, quote_field};
use super::{Format, InputKind, IoError, STDIN_NAME, push_f32};
use crate::ray::{Ray, RaySoa};
use glam::Vec3;

/// Reads rays or segments from a csv, `.bin` or `.npy` file (or csv on stdin) in chunks.
///
/// Memory use is bounded by the chunk size, whatever the file's length. Records come out in
/// file order. See the [module docs](super) for the formats and the errors.
pub struct RayReader {
    kind: InputKind,
    format: Format,
    src: Src,
    returned: u64,
}

enum Src {
    Csv(CsvLines),
    Records(RecordSource),
}

/// Column buffers for one chunk.
struct Cols([Vec<f32>; 8]);

impl Cols {
    fn with_capacity(n: usize) -> Self {
        Self(std::array::from_fn(|_| Vec::with_capacity(n)))
    }
    fn len(&self) -> usize {
        self.0[0].len()
    }
    fn push(&mut self, r: &Ray) {
        let v = [r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z, r.t_min, r.t_max];
        for (c, x) in self.0.iter_mut().zip(v) {
            c.push(x);
        }
    }
    fn into_soa(self) -> RaySoa {
        let c = &self.0;
        RaySoa::from_columns([&c[0], &c[1], &c[2]], [&c[3], &c[4], &c[5]], Some([&c[6], &c[7]]))
            .expect("all columns have one value per record")
    }
}

/// The ray of one record of `kind` with `vals.len()` values (6 or 8).
fn to_ray(kind: InputKind, vals: &[f32]) -> Ray {
    let v3 = |i: usize| Vec3::new(vals[i], vals[i + 1], vals[i + 2]);
    match (kind, vals.len()) {
        (InputKind::Segments, _) => Ray::segment(v3(0), v3(3)),
        (InputKind::Rays, 8) => Ray::with_interval(v3(0), v3(3), vals[6], vals[7]),
        (InputKind::Rays, _) => Ray::new(v3(0), v3(3)),
    }
}

impl RayReader {
    /// Opens `path` (`-`: stdin, csv only) holding `kind` records in `format`.
    ///
    /// Fails on a missing or unreadable file, `-` with a binary format, a bad `.npy` header,
    /// or a `.bin` / `.npy` file whose size does not match its records.
    pub fn open(path: &str, format: Format, kind: InputKind) -> Result<Self, IoError> {
        check_stdio(path, format, STDIN_NAME)?;
        let src = match format {
            Format::Csv => Src::Csv(CsvLines::open(path)?),
            Format::Bin => Src::Records(RecordSource::open_bin(path, kind.bin_width() * 4)?),
            Format::Npy => {
                let (src, _) = RecordSource::open_npy(path, |h| check_npy(h, kind))?;
                Src::Records(src)
            }
        };
        Ok(Self { kind, format, src, returned: 0 })
    }

    /// Number of records in the input when known before reading it: from the size of a
    /// `.bin` file, from the shape of an `.npy` file; `None` for csv.
    pub fn total(&self) -> Option<u64> {
        match &self.src {
            Src::Csv(_) => None,
            Src::Records(r) => r.total(),
        }
    }

    /// Records returned so far.
    pub fn position(&self) -> u64 {
        self.returned
    }

    /// The input's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// What the input holds.
    pub fn kind(&self) -> InputKind {
        self.kind
    }

    /// The file name used in errors (`<stdin>` for `-`).
    pub fn name(&self) -> &str {
        match &self.src {
            Src::Csv(c) => c.name(),
            Src::Records(r) => r.name(),
        }
    }

    /// The next at most `max` records (at least one is asked for when `max` is 0), or
    /// `Ok(None)` once the input is exhausted. Segments come back as rays over `[0, 1]`.
    ///
    /// A chunk holds fewer than `max` records only at the end of the input, or when `max`
    /// records of a `.bin` / `.npy` file would be more than 1 GiB of file data.
    pub fn next_chunk(&mut self, max: usize) -> Result<Option<RaySoa>, IoError> {
        let max = max.max(1);
        let kind = self.kind;
        let cols = match &mut self.src {
            Src::Csv(lines) => read_csv_chunk(lines, kind, max)?,
            Src::Records(src) => {
                let width = src.record_size() / 4;
                let Some(bytes) = src.next_records(max)? else {
                    return Ok(None);
                };
                let mut cols = Cols::with_capacity(bytes.len() / (width * 4));
                let mut vals = [0f32; 8];
                for rec in bytes.chunks_exact(width * 4) {
                    for (v, b) in vals.iter_mut().zip(rec.chunks_exact(4)) {
                        *v = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    }
                    cols.push(&to_ray(kind, &vals[..width]));
                }
                cols
            }
        };
        if cols.len() == 0 {
            return Ok(None);
        }
        self.returned += cols.len() as u64;
        Ok(Some(cols.into_soa()))
    }
}

/// Checks an `.npy` header for `kind`; returns the row size in bytes.
fn check_npy(h: &npy::Header, kind: InputKind) -> Result<usize, String> {
    if h.descr != PyVal::Str("<f4".into()) {
        return Err(format!("dtype must be little-endian float32 '<f4', got {}", h.descr));
    }
    let ok = matches!((kind, h.shape.as_slice()), (InputKind::Rays, [_, 6 | 8]) | (InputKind::Segments, [_, 6]));
    if !ok {
        let want = match kind {
            InputKind::Rays => "(N, 8) or (N, 6) for rays",
            InputKind::Segments => "(N, 6) for segments",
        };
        return Err(format!("shape must be {want}, got {}", h.shape_text()));
    }
    Ok(h.shape[1] as usize * 4)
}

/// Parses up to `max` csv records.
fn read_csv_chunk(lines: &mut CsvLines, kind: InputKind, max: usize) -> Result<Cols, IoError> {
    let names = kind.columns();
    let mut cols = Cols::with_capacity(max.min(1 << 16));
    let mut vals = [0f32; 8];
    while cols.len() < max {
        let Some(line) = lines.next_line()? else {
            break;
        };
        let n = line.split(',').count();
        let ok = match kind {
            InputKind::Rays => n == 6 || n == 8,
            InputKind::Segments => n == 6,
        };
        if !ok {
            let want = match kind {
                InputKind::Rays => "6 or 8 (ox,oy,oz,dx,dy,dz[,tmin,tmax])",
                InputKind::Segments => "6 (ax,ay,az,bx,by,bz)",
            };
            return Err(lines.err(format!("expected {want} fields, got {n}")));
        }
        let mut bad = None;
        for (i, field) in line.split(',').enumerate() {
            let field = field.trim();
            match parse_f32(field) {
                Some(x) => vals[i] = x,
                None => {
                    bad =
                        Some(format!("column {} ({}): expected a number, got {}", i + 1, names[i], quote_field(field)));
                    break;
                }
            }
        }
        if let Some(msg) = bad {
            return Err(lines.err(msg));
        }
        cols.push(&to_ray(kind, &vals[..n]));
    }
    Ok(cols)
}

/// Writes `rows` records of `width` f32 (the first `width` of each array) to `path`.
fn write_rows(
    path: &str,
    format: Format,
    width: usize,
    header: Option<&str>,
    rows: impl ExactSizeIterator<Item = [f32; 8]>,
) -> Result<(), IoError> {
    let mut out = Output::create(path, format)?;
    let n = rows.len() as u64;
    let mut buf = String::new();
    let mut bytes = Vec::new();
    match format {
        Format::Csv => {
            if let Some(h) = header {
                out.write_all(format!("{h}\n").as_bytes())?;
            }
        }
        Format::Bin => {}
        Format::Npy => out.write_all(&npy::header_bytes("'<f4'", &[n, width as u64], 0))?,
    }
    for row in rows {
        match format {
            Format::Csv => {
                for (i, &x) in row[..width].iter().enumerate() {
                    if i > 0 {
                        buf.push(',');
                    }
                    push_f32(&mut buf, x);
                }
                buf.push('\n');
                if buf.len() >= 1 << 16 {
                    out.write_all(buf.as_bytes())?;
                    buf.clear();
                }
            }
            Format::Bin | Format::Npy => {
                for &x in &row[..width] {
                    bytes.extend_from_slice(&x.to_le_bytes());
                }
                if bytes.len() >= 1 << 16 {
                    out.write_all(&bytes)?;
                    bytes.clear();
                }
            }
        }
    }
    out.write_all(buf.as_bytes())?;
    out.write_all(&bytes)?;
    out.finish(None)
}

/// Writes `rays` as a ray input file: csv with the header `ox,oy,oz,dx,dy,dz,tmin,tmax`,
/// `.bin` records of 8 f32, or `.npy` of shape (N, 8). Atomic like the other writers.
pub fn write_rays(path: &str, format: Format, rays: &[Ray]) -> Result<(), IoError> {
    let rows = rays.iter().map(|r| [r.origin.x, r.origin.y, r.origin.z, r.dir.x, r.dir.y, r.dir.z, r.t_min, r.t_max]);
    write_rows(path, format, 8, Some(&InputKind::Rays.columns().join(",")), rows)
}

/// Writes segments `(a, b)` as a segment input file: csv with the header
/// `ax,ay,az,bx,by,bz`, `.bin` records of 6 f32, or `.npy` of shape (N, 6).
pub fn write_segments(path: &str, format: Format, segments: &[(Vec3, Vec3)]) -> Result<(), IoError> {
    let rows = segments.iter().map(|(a, b)| [a.x, a.y, a.z, b.x, b.y, b.z, 0.0, 0.0]);
    write_rows(path, format, 6, Some(&InputKind::Segments.columns().join(",")), rows)
}

/// Writes `values` as records of `width` f32 each (1 to 8): csv lines of `width` fields
/// after the optional `header` line, raw little-endian `.bin`, or `.npy` of shape
/// (N, `width`). For example `width = 6` makes a ray file without intervals.
///
/// Fails when `width` is not in `1..=8` or `values.len()` is not a multiple of it.
pub fn write_f32_records(
    path: &str,
    format: Format,
    width: usize,
    values: &[f32],
    header: Option<&str>,
) -> Result<(), IoError> {
    if !(1..=8).contains(&width) || !values.len().is_multiple_of(width) {
        return Err(IoError::new(
            path,
            format!("{} values do not make whole records of width {width} (width must be 1 to 8)", values.len()),
        ));
    }
    let rows = values.chunks_exact(width).map(|rec| {
        let mut row = [0f32; 8];
        row[..width].copy_from_slice(rec);
        row
    });
    write_rows(path, format, width, header, rows)
}
