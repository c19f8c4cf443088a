//! Per-point and per-ray query output: [`FlagWriter`] (a bool per record, as `lanecast
//! inside` and `lanecast los` write), [`CountWriter`] (a u32 per record, as `lanecast count`
//! writes), [`ClosestWriter`] (a closest-point record, as `lanecast closest` writes) and
//! [`SweepWriter`] (a sphere-sweep contact, as `lanecast sweep` writes), with whole-file
//! readers for checking the first two.

use super::hits::{Records, open_records};
use super::source::{CsvLines, check_stdio, quote_field, record_place};
use super::{Format, IoError, STDIN_NAME, push_f32};
use crate::hit::NO_ID;
use crate::scene::{ClosestPoint, SweepHit};
use std::fmt::Write as _;

/// The dtype of a bool `.npy` file.
pub(crate) const BOOL_DESCR: &str = "'|b1'";
/// The dtype of a u32 `.npy` file.
const U32_DESCR: &str = "'<u4'";
/// Header line of a count csv file.
const COUNT_CSV_HEADER: &str = "count";
/// The structured dtype of a closest-point `.npy` file.
const CLOSEST_DESCR: &str = "[('x', '<f4'), ('y', '<f4'), ('z', '<f4'), ('distance', '<f4'), \
                             ('geom', '<u4'), ('prim', '<u4'), ('u', '<f4'), ('v', '<f4')]";
/// Header line of a closest-point csv file.
const CLOSEST_CSV_HEADER: &str = "x,y,z,distance,geom,prim,u,v";
/// The structured dtype of a sweep `.npy` file.
const SWEEP_DESCR: &str = "[('toi', '<f4'), ('geom', '<u4'), ('prim', '<u4'), ('inst', '<u4'), \
                           ('px', '<f4'), ('py', '<f4'), ('pz', '<f4'), ('nx', '<f4'), ('ny', '<f4'), ('nz', '<f4')]";
/// Header line of a sweep csv file.
const SWEEP_CSV_HEADER: &str = "toi,geom,prim,inst,px,py,pz,nx,ny,nz";
/// Records encoded per write to the output.
const BATCH: usize = 1 << 15;

/// Writes one flag per record: csv `1`/`0` lines under a one-column header (`inside` for
/// `lanecast inside`, `visible` for [`VisWriter`](super::VisWriter)), one byte (1/0) per
/// record in `.bin`, or an `.npy` bool (`|b1`) array of shape (N,). The file appears under
/// its name only when [`FlagWriter::finish`] succeeds.
pub struct FlagWriter {
    rec: Records,
    buf: Vec<u8>,
}

impl FlagWriter {
    /// Starts writing flags to `path` (`-`: stdout, csv only) in `format`; `column` is the
    /// csv header line.
    pub fn create(path: &str, format: Format, column: &str) -> Result<Self, IoError> {
        Ok(Self { rec: Records::create(path, format, column, BOOL_DESCR)?, buf: Vec::new() })
    }

    /// Appends one record per entry of `flags`.
    pub fn write(&mut self, flags: &[bool]) -> Result<(), IoError> {
        for chunk in flags.chunks(BATCH) {
            self.buf.clear();
            match self.rec.format {
                Format::Csv => {
                    for &v in chunk {
                        self.buf.extend_from_slice(if v { b"1\n" } else { b"0\n" });
                    }
                }
                Format::Bin | Format::Npy => self.buf.extend(chunk.iter().map(|&v| u8::from(v))),
            }
            self.rec.out.write_all(&self.buf)?;
        }
        self.rec.count += flags.len() as u64;
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

/// Writes one u32 per record: csv decimal lines under the header `count`, 4 little-endian
/// bytes per record in `.bin`, or an `.npy` `<u4` array of shape (N,). The file appears
/// under its name only when [`CountWriter::finish`] succeeds.
pub struct CountWriter {
    rec: Records,
    text: String,
    bytes: Vec<u8>,
}

impl CountWriter {
    /// Starts writing counts to `path` (`-`: stdout, csv only) in `format`.
    pub fn create(path: &str, format: Format) -> Result<Self, IoError> {
        Ok(Self {
            rec: Records::create(path, format, COUNT_CSV_HEADER, U32_DESCR)?,
            text: String::new(),
            bytes: Vec::new(),
        })
    }

    /// Appends one record per entry of `counts`.
    pub fn write(&mut self, counts: &[u32]) -> Result<(), IoError> {
        for chunk in counts.chunks(BATCH) {
            match self.rec.format {
                Format::Csv => {
                    self.text.clear();
                    for &c in chunk {
                        // Writing to a String cannot fail.
                        let _ = writeln!(self.text, "{c}");
                    }
                    self.rec.out.write_all(self.text.as_bytes())?;
                }
                Format::Bin | Format::Npy => {
                    self.bytes.clear();
                    for &c in chunk {
                        self.bytes.extend_from_slice(&c.to_le_bytes());
                    }
                    self.rec.out.write_all(&self.bytes)?;
                }
            }
        }
        self.rec.count += counts.len() as u64;
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

/// Writes closest surface points, one record per query point: csv under the header
/// `x,y,z,distance,geom,prim,u,v` (ids of a miss written as `-1`), 32-byte `.bin` records
/// (`x y z distance` f32, `geom prim` u32, `u v` f32), or an `.npy` structured array of
/// those 8 fields, shape (N,). A miss ([`ClosestPoint::MISS`]: nothing in the scene) has
/// `x = y = z = distance = +inf` and ids `0xFFFFFFFF`. The record is the [`ClosestPoint`]'s
/// fields as given (a caller wanting signed distances negates `distance` first). The file
/// appears under its name only when [`ClosestWriter::finish`] succeeds.
pub struct ClosestWriter {
    rec: Records,
    text: String,
    bytes: Vec<u8>,
}

impl ClosestWriter {
    /// Starts writing closest points to `path` (`-`: stdout, csv only) in `format`.
    pub fn create(path: &str, format: Format) -> Result<Self, IoError> {
        Ok(Self {
            rec: Records::create(path, format, CLOSEST_CSV_HEADER, CLOSEST_DESCR)?,
            text: String::new(),
            bytes: Vec::new(),
        })
    }

    /// Appends one record per entry of `closest`.
    pub fn write(&mut self, closest: &[ClosestPoint]) -> Result<(), IoError> {
        for chunk in closest.chunks(BATCH / 8) {
            match self.rec.format {
                Format::Csv => {
                    self.text.clear();
                    for c in chunk {
                        for x in [c.point.x, c.point.y, c.point.z, c.distance] {
                            push_f32(&mut self.text, x);
                            self.text.push(',');
                        }
                        // Writing to a String cannot fail.
                        for id in [c.geom, c.prim] {
                            let _ = if id == NO_ID { write!(self.text, "-1,") } else { write!(self.text, "{id},") };
                        }
                        push_f32(&mut self.text, c.u);
                        self.text.push(',');
                        push_f32(&mut self.text, c.v);
                        self.text.push('\n');
                    }
                    self.rec.out.write_all(self.text.as_bytes())?;
                }
                Format::Bin | Format::Npy => {
                    self.bytes.clear();
                    for c in chunk {
                        for x in [c.point.x, c.point.y, c.point.z, c.distance] {
                            self.bytes.extend_from_slice(&x.to_le_bytes());
                        }
                        self.bytes.extend_from_slice(&c.geom.to_le_bytes());
                        self.bytes.extend_from_slice(&c.prim.to_le_bytes());
                        self.bytes.extend_from_slice(&c.u.to_le_bytes());
                        self.bytes.extend_from_slice(&c.v.to_le_bytes());
                    }
                    self.rec.out.write_all(&self.bytes)?;
                }
            }
        }
        self.rec.count += closest.len() as u64;
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

/// Writes the first contacts of sphere sweeps, one record per sweep: csv under the header
/// `toi,geom,prim,inst,px,py,pz,nx,ny,nz` (ids of a miss written as `-1`), 40-byte `.bin`
/// records (`toi` f32, `geom prim inst` u32, `px py pz nx ny nz` f32), or an `.npy`
/// structured array of those 10 fields, shape (N,). A miss ([`SweepHit::MISS`]) has `toi`
/// and the point `+inf`, ids `0xFFFFFFFF` and a zero normal. `inst` is the instance id of a
/// contact through an instance, `-1` (`0xFFFFFFFF`) otherwise. The file appears under its name only when [`SweepWriter::finish`]
/// succeeds.
pub struct SweepWriter {
    rec: Records,
    text: String,
    bytes: Vec<u8>,
}

impl SweepWriter {
    /// Starts writing sweep contacts to `path` (`-`: stdout, csv only) in `format`.
    pub fn create(path: &str, format: Format) -> Result<Self, IoError> {
        Ok(Self {
            rec: Records::create(path, format, SWEEP_CSV_HEADER, SWEEP_DESCR)?,
            text: String::new(),
            bytes: Vec::new(),
        })
    }

    /// Appends one record per entry of `hits`.
    pub fn write(&mut self, hits: &[SweepHit]) -> Result<(), IoError> {
        for chunk in hits.chunks(BATCH / 10) {
            match self.rec.format {
                Format::Csv => {
                    self.text.clear();
                    for h in chunk {
                        push_f32(&mut self.text, h.toi);
                        for id in [h.geom, h.prim, h.inst] {
                            // Writing to a String cannot fail.
                            let _ = if id == NO_ID { write!(self.text, ",-1") } else { write!(self.text, ",{id}") };
                        }
                        for x in h.point.to_array().into_iter().chain(h.normal.to_array()) {
                            self.text.push(',');
                            push_f32(&mut self.text, x);
                        }
                        self.text.push('\n');
                    }
                    self.rec.out.write_all(self.text.as_bytes())?;
                }
                Format::Bin | Format::Npy => {
                    self.bytes.clear();
                    for h in chunk {
                        self.bytes.extend_from_slice(&h.toi.to_le_bytes());
                        for id in [h.geom, h.prim, h.inst] {
                            self.bytes.extend_from_slice(&id.to_le_bytes());
                        }
                        for x in h.point.to_array().into_iter().chain(h.normal.to_array()) {
                            self.bytes.extend_from_slice(&x.to_le_bytes());
                        }
                    }
                    self.rec.out.write_all(&self.bytes)?;
                }
            }
        }
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

/// Reads a whole flag file (as written by [`FlagWriter`]) into memory; every record must be
/// `1` or `0` (bytes 1/0 in `.bin` and `.npy`). Meant for tests and tools.
pub fn read_flags(path: &str, format: Format) -> Result<Vec<bool>, IoError> {
    check_stdio(path, format, STDIN_NAME)?;
    let mut out = Vec::new();
    match format {
        Format::Csv => {
            let mut lines = CsvLines::open(path)?;
            while let Some(line) = lines.next_line()? {
                match line {
                    "1" => out.push(true),
                    "0" => out.push(false),
                    other => {
                        let msg = format!("expected 1 or 0, got {}", quote_field(other));
                        return Err(lines.err(msg));
                    }
                }
            }
        }
        Format::Bin | Format::Npy => {
            let mut src = open_records(path, format, BOOL_DESCR, 1)?;
            loop {
                let start = src.position();
                let data_offset = src.data_offset();
                let Some(bytes) = src.next_records(1 << 16)? else {
                    break;
                };
                if let Some(i) = bytes.iter().position(|&b| b > 1) {
                    let at = start + i as u64;
                    let msg = format!("byte value {} is not 1 or 0", bytes[i]);
                    let place = record_place(at, data_offset + at);
                    return Err(IoError::at(src.name(), place, msg));
                }
                out.extend(bytes.iter().map(|&b| b == 1));
            }
        }
    }
    Ok(out)
}

/// Reads a whole count file (as written by [`CountWriter`]) into memory; every csv record
/// must be a decimal u32. Meant for tests and tools.
pub fn read_counts(path: &str, format: Format) -> Result<Vec<u32>, IoError> {
    check_stdio(path, format, STDIN_NAME)?;
    let mut out = Vec::new();
    match format {
        Format::Csv => {
            let mut lines = CsvLines::open(path)?;
            while let Some(line) = lines.next_line()? {
                match line.parse::<u32>() {
                    Ok(c) => out.push(c),
                    Err(_) => {
                        let msg = format!("expected a count (u32), got {}", quote_field(line));
                        return Err(lines.err(msg));
                    }
                }
            }
        }
        Format::Bin | Format::Npy => {
            let mut src = open_records(path, format, U32_DESCR, 4)?;
            while let Some(bytes) = src.next_records(1 << 16)? {
                out.extend(bytes.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])));
            }
        }
    }
    Ok(out)
}
