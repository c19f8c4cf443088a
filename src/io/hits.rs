//! Hit and visibility output: the streaming [`HitWriter`], [`AllHitsWriter`] and
//! [`VisWriter`], and whole-file readers for checking such files.

use super::npy;
use super::sink::Output;
use super::source::{CsvLines, RecordSource, check_stdio, parse_f32, quote_field};
use super::values::{FlagWriter, read_flags};
use super::{Format, IoError, STDIN_NAME, push_f32};
use crate::hit::{Hit, HitKind, HitSoa, NO_ID};
use crate::scene::HitLists;
use glam::Vec3;
use std::fmt::Write as _;

/// The structured dtype of a hit `.npy` file, as a Python literal.
const HIT_DESCR: &str = "[('t', '<f4'), ('geom', '<u4'), ('prim', '<u4'), ('inst', '<u4'), \
                         ('u', '<f4'), ('v', '<f4'), ('nx', '<f4'), ('ny', '<f4'), ('nz', '<f4')]";
/// The structured dtype of a hit-list (`cast --all`) `.npy` file.
const ALL_DESCR: &str = "[('ray', '<u4'), ('t', '<f4'), ('geom', '<u4'), ('prim', '<u4'), ('inst', '<u4'), \
                         ('u', '<f4'), ('v', '<f4'), ('nx', '<f4'), ('ny', '<f4'), ('nz', '<f4')]";
/// Header line of a hit-list csv file.
const ALL_CSV_HEADER: &str = "ray,t,geom,prim,inst,u,v,nx,ny,nz";
/// Bytes per hit record in `.bin` and `.npy`.
const HIT_RECORD: usize = 36;
/// Header line of a hit csv file.
const HIT_CSV_HEADER: &str = "t,geom,prim,inst,u,v,nx,ny,nz";
/// Header line of a visibility csv file.
const VIS_CSV_HEADER: &str = "visible";
/// The csv line of a miss.
const MISS_CSV: &str = "inf,-1,-1,-1,0,0,0,0,0";
/// Flush the encode buffer to the output past this many bytes.
const FLUSH_AT: usize = 1 << 16;

/// Shared state of the record writers: the output, its format, and for `.npy` the dtype
/// and the header room reserved for the final shape.
pub(crate) struct Records {
    pub(crate) out: Output,
    pub(crate) format: Format,
    descr: &'static str,
    /// Header length reserved in an `.npy` file (fits any record count).
    reserved: usize,
    pub(crate) count: u64,
}

impl Records {
    /// Starts `path`: the csv header line, or the placeholder `.npy` header for a 1-d array
    /// of `descr` records.
    pub(crate) fn create(path: &str, format: Format, csv_header: &str, descr: &'static str) -> Result<Self, IoError> {
        let mut out = Output::create(path, format)?;
        let mut reserved = 0;
        match format {
            Format::Csv => out.write_all(format!("{csv_header}\n").as_bytes())?,
            Format::Bin => {}
            Format::Npy => {
                reserved = npy::reserved_len(descr, &[]);
                out.write_all(&npy::header_bytes(descr, &[0], reserved))?;
            }
        }
        Ok(Self { out, format, descr, reserved, count: 0 })
    }

    /// Fills in the `.npy` shape, syncs and renames the file into place.
    pub(crate) fn finish(self) -> Result<(), IoError> {
        let head = (self.format == Format::Npy).then(|| npy::header_bytes(self.descr, &[self.count], self.reserved));
        debug_assert!(head.as_ref().is_none_or(|h| h.len() == self.reserved));
        self.out.finish(head.as_deref())
    }
}

/// Appends the csv fields of `h` (no line end): `t,geom,prim,inst,u,v,nx,ny,nz` (`inst` -1
/// when not through an instance), or the miss line.
fn push_hit_csv(text: &mut String, h: &Hit) {
    if !h.is_hit() {
        text.push_str(MISS_CSV);
    } else {
        push_f32(text, h.t);
        // Writing to a String cannot fail.
        let _ = write!(text, ",{},{}", h.geom, h.prim);
        if h.inst == NO_ID {
            text.push_str(",-1");
        } else {
            let _ = write!(text, ",{}", h.inst);
        }
        for x in [h.u, h.v, h.normal.x, h.normal.y, h.normal.z] {
            text.push(',');
            push_f32(text, x);
        }
    }
}

/// Appends the 36-byte binary record of `h`.
fn push_hit_bytes(b: &mut Vec<u8>, h: &Hit) {
    b.extend_from_slice(&h.t.to_le_bytes());
    b.extend_from_slice(&h.geom.to_le_bytes());
    b.extend_from_slice(&h.prim.to_le_bytes());
    b.extend_from_slice(&h.inst.to_le_bytes());
    for x in [h.u, h.v, h.normal.x, h.normal.y, h.normal.z] {
        b.extend_from_slice(&x.to_le_bytes());
    }
}

/// Writes closest hits, one record per ray, in csv, `.bin` or `.npy` (see the
/// [module docs](super)). The file appears under its name only when [`HitWriter::finish`]
/// succeeds.
pub struct HitWriter {
    rec: Records,
    text: String,
    bytes: Vec<u8>,
}

impl HitWriter {
    /// Starts writing hits to `path` (`-`: stdout, csv only) in `format`.
    pub fn create(path: &str, format: Format) -> Result<Self, IoError> {
        Ok(Self {
            rec: Records::create(path, format, HIT_CSV_HEADER, HIT_DESCR)?,
            text: String::new(),
            bytes: Vec::new(),
        })
    }

    /// Appends the `hits.len()` records of `hits` (a record whose `geom` is `u32::MAX` is
    /// written as a miss).
    pub fn write(&mut self, hits: &HitSoa) -> Result<(), IoError> {
        for i in 0..hits.len() {
            let h = hits.get(i);
            match self.rec.format {
                Format::Csv => {
                    push_hit_csv(&mut self.text, &h);
                    self.text.push('\n');
                    if self.text.len() >= FLUSH_AT {
                        self.rec.out.write_all(self.text.as_bytes())?;
                        self.text.clear();
                    }
                }
                Format::Bin | Format::Npy => {
                    push_hit_bytes(&mut self.bytes, &h);
                    if self.bytes.len() >= FLUSH_AT {
                        self.rec.out.write_all(&self.bytes)?;
                        self.bytes.clear();
                    }
                }
            }
        }
        self.rec.out.write_all(self.text.as_bytes())?;
        self.rec.out.write_all(&self.bytes)?;
        self.text.clear();
        self.bytes.clear();
        self.rec.count += hits.len() as u64;
        Ok(())
    }

    /// Records written so far.
    pub fn count(&self) -> u64 {
        self.rec.count
    }

    /// Completes the file (fills in the `.npy` shape), syncs it and renames it into place.
    pub fn finish(self) -> Result<(), IoError> {
        self.rec.finish()
    }
}

/// Writes line-of-sight results, one record per segment: csv `1`/`0` lines under the header
/// `visible`, one byte per segment in `.bin`, or an `.npy` bool array (see the
/// [module docs](super)). The file appears under its name only when [`VisWriter::finish`]
/// succeeds. A [`FlagWriter`] with the column `visible`.
pub struct VisWriter(FlagWriter);

impl VisWriter {
    /// Starts writing visibility to `path` (`-`: stdout, csv only) in `format`.
    pub fn create(path: &str, format: Format) -> Result<Self, IoError> {
        Ok(Self(FlagWriter::create(path, format, VIS_CSV_HEADER)?))
    }

    /// Appends one record per entry of `visible`.
    pub fn write(&mut self, visible: &[bool]) -> Result<(), IoError> {
        self.0.write(visible)
    }

    /// Records written so far.
    pub fn count(&self) -> u64 {
        self.0.count()
    }

    /// Completes the file (fills in the `.npy` shape), syncs it and renames it into place.
    pub fn finish(self) -> Result<(), IoError> {
        self.0.finish()
    }
}

/// Writes every hit of every ray (`lanecast cast --all`), one record per hit, each led by
/// the index of its ray: csv under the header `ray,t,geom,prim,inst,u,v,nx,ny,nz`, 40-byte
/// `.bin` records (`ray` u32, then a hit record as [`HitWriter`] writes it), or an `.npy`
/// structured array of those 10 fields (see the [module docs](super)). A ray without hits
/// writes nothing. The file appears under its name only when [`AllHitsWriter::finish`]
/// succeeds.
pub struct AllHitsWriter {
    rec: Records,
    text: String,
    bytes: Vec<u8>,
}

impl AllHitsWriter {
    /// Starts writing hit lists to `path` (`-`: stdout, csv only) in `format`.
    pub fn create(path: &str, format: Format) -> Result<Self, IoError> {
        Ok(Self {
            rec: Records::create(path, format, ALL_CSV_HEADER, ALL_DESCR)?,
            text: String::new(),
            bytes: Vec::new(),
        })
    }

    /// Appends the hits of `lists`, ray by ray in the order of `lists.hits`; the rays of
    /// `lists` are numbered from `first_ray`.
    ///
    /// Fails, writing nothing, when a ray index of this chunk does not fit the u32 `ray`
    /// column (`first_ray + lists.rays() > 2^32`).
    pub fn write(&mut self, first_ray: u64, lists: &HitLists) -> Result<(), IoError> {
        let rays = lists.rays() as u64;
        if first_ray.saturating_add(rays) > u64::from(u32::MAX) + 1 {
            let name = self.rec.out.name().to_string();
            return Err(IoError::new(
                name,
                format!(
                    "ray index {} does not fit the u32 `ray` column (at most {} rays)",
                    first_ray.max(u64::from(u32::MAX) + 1),
                    u64::from(u32::MAX) + 1
                ),
            ));
        }
        for r in 0..lists.rays() {
            let ray = (first_ray + r as u64) as u32;
            for k in lists.ray_splits[r] as usize..lists.ray_splits[r + 1] as usize {
                let h = lists.hits.get(k);
                match self.rec.format {
                    Format::Csv => {
                        // Writing to a String cannot fail.
                        let _ = write!(self.text, "{ray},");
                        push_hit_csv(&mut self.text, &h);
                        self.text.push('\n');
                        if self.text.len() >= FLUSH_AT {
                            self.rec.out.write_all(self.text.as_bytes())?;
                            self.text.clear();
                        }
                    }
                    Format::Bin | Format::Npy => {
                        self.bytes.extend_from_slice(&ray.to_le_bytes());
                        push_hit_bytes(&mut self.bytes, &h);
                        if self.bytes.len() >= FLUSH_AT {
                            self.rec.out.write_all(&self.bytes)?;
                            self.bytes.clear();
                        }
                    }
                }
                self.rec.count += 1;
            }
        }
        self.rec.out.write_all(self.text.as_bytes())?;
        self.rec.out.write_all(&self.bytes)?;
        self.text.clear();
        self.bytes.clear();
        Ok(())
    }

    /// Records (hits) written so far.
    pub fn count(&self) -> u64 {
        self.rec.count
    }

    /// Completes the file (fills in the `.npy` shape), syncs it and renames it into place.
    pub fn finish(self) -> Result<(), IoError> {
        self.rec.finish()
    }
}

/// Opens the records of a hit or visibility file in a binary format, checking an `.npy`
/// header against `descr` and a 1-d shape.
pub(crate) fn open_records(path: &str, format: Format, descr: &str, rec: usize) -> Result<RecordSource, IoError> {
    if format == Format::Bin {
        return RecordSource::open_bin(path, rec);
    }
    let want = npy::parse_literal(descr).expect("the descr constants parse");
    let (src, _) = RecordSource::open_npy(path, |h| {
        if h.descr != want {
            return Err(format!("dtype must be {want}, got {}", h.descr));
        }
        if h.shape.len() != 1 {
            return Err(format!("shape must be (N,), got {}", h.shape_text()));
        }
        Ok(rec)
    })?;
    Ok(src)
}

/// Parses a hit id written in csv: `-1` for a miss, else a u32.
fn parse_id(s: &str) -> Option<u32> {
    if s == "-1" { Some(NO_ID) } else { s.parse().ok() }
}

/// Reads a whole hit file (as written by [`HitWriter`]) into memory, checking it as strictly
/// as [`RayReader`](super::RayReader) checks its inputs. Meant for tests and tools that
/// compare results; memory grows with the file.
pub fn read_hits(path: &str, format: Format) -> Result<HitSoa, IoError> {
    check_stdio(path, format, STDIN_NAME)?;
    let mut hits: Vec<Hit> = Vec::new();
    match format {
        Format::Csv => {
            let names = HIT_CSV_HEADER.split(',').collect::<Vec<_>>();
            let mut lines = CsvLines::open(path)?;
            while let Some(line) = lines.next_line()? {
                let fields: Vec<&str> = line.split(',').map(str::trim).collect();
                if fields.len() != 9 {
                    let msg = format!("expected 9 fields ({HIT_CSV_HEADER}), got {}", fields.len());
                    return Err(lines.err(msg));
                }
                let mut f = [0f32; 9];
                let mut ids = [0u32; 3];
                let mut bad = None;
                let is_id = |i: usize| (1..=3).contains(&i);
                for (i, s) in fields.iter().enumerate() {
                    let ok = if is_id(i) {
                        parse_id(s).map(|v| ids[i - 1] = v).is_some()
                    } else {
                        parse_f32(s).map(|v| f[i] = v).is_some()
                    };
                    if !ok {
                        let what = if is_id(i) { "an id (u32 or -1)" } else { "a number" };
                        bad = Some(format!("column {} ({}): expected {what}, got {}", i + 1, names[i], quote_field(s)));
                        break;
                    }
                }
                if let Some(msg) = bad {
                    return Err(lines.err(msg));
                }
                hits.push(Hit {
                    t: f[0],
                    geom: ids[0],
                    prim: ids[1],
                    inst: ids[2],
                    u: f[4],
                    v: f[5],
                    normal: Vec3::new(f[6], f[7], f[8]),
                    kind: HitKind::None,
                });
            }
        }
        Format::Bin | Format::Npy => {
            let mut src = open_records(path, format, HIT_DESCR, HIT_RECORD)?;
            while let Some(bytes) = src.next_records(4096)? {
                for r in bytes.chunks_exact(HIT_RECORD) {
                    let w = |i: usize| [r[4 * i], r[4 * i + 1], r[4 * i + 2], r[4 * i + 3]];
                    let f = |i: usize| f32::from_le_bytes(w(i));
                    hits.push(Hit {
                        t: f(0),
                        geom: u32::from_le_bytes(w(1)),
                        prim: u32::from_le_bytes(w(2)),
                        inst: u32::from_le_bytes(w(3)),
                        u: f(4),
                        v: f(5),
                        normal: Vec3::new(f(6), f(7), f(8)),
                        kind: HitKind::None,
                    });
                }
            }
        }
    }
    let mut soa = HitSoa::with_len(hits.len());
    for (i, h) in hits.iter().enumerate() {
        soa.set(i, h);
    }
    Ok(soa)
}

/// Reads a whole visibility file (as written by [`VisWriter`]) into memory; every record
/// must be `1` or `0` (bytes 1/0 in `.bin` and `.npy`). Meant for tests and tools.
pub fn read_visibility(path: &str, format: Format) -> Result<Vec<bool>, IoError> {
    read_flags(path, format)
}
