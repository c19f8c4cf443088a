//! Input plumbing shared by the readers: opening a file (or stdin), csv lines with the
//! header/comment/blank rules, and fixed-size binary records with truncation checks.

use super::npy::{self, Header};
use super::{Format, IoError, STDIN_NAME};
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

/// Longest csv line accepted, in bytes (keeps a binary file fed to the csv reader from
/// growing the line buffer without bound).
pub(crate) const MAX_LINE: usize = 1 << 20;

/// Most bytes of binary records one call hands out, whatever chunk size was asked for.
pub(crate) const MAX_CHUNK_BYTES: usize = 1 << 30;

/// Buffer size for file readers.
const BUF: usize = 1 << 16;

/// The name errors use for `path`.
pub(crate) fn input_name(path: &str) -> String {
    if path == "-" { STDIN_NAME.to_string() } else { path.to_string() }
}

/// Opens a regular file for reading; returns it and its size.
pub(crate) fn open_file(path: &str) -> Result<(File, Option<u64>), IoError> {
    let name = input_name(path);
    let file = File::open(path).map_err(|e| IoError::new(&name, format!("cannot open for reading: {e}")))?;
    let meta = file.metadata().map_err(|e| IoError::new(&name, format!("cannot read file metadata: {e}")))?;
    if meta.is_dir() {
        return Err(IoError::new(&name, "is a directory, not a file"));
    }
    Ok((file, meta.is_file().then_some(meta.len())))
}

/// Refuses `-` for anything but csv.
pub(crate) fn check_stdio(path: &str, format: Format, stdio_name: &str) -> Result<(), IoError> {
    if path == "-" && format != Format::Csv {
        return Err(IoError::new(stdio_name, format!("'-' (standard input/output) works with csv only, not {format}")));
    }
    Ok(())
}

/// Parses a csv number: decimal or exponent notation, `inf`, `-inf`, `infinity`, `nan`
/// (any case). Values beyond f32 range become infinite.
pub(crate) fn parse_f32(s: &str) -> Option<f32> {
    s.parse::<f32>().ok()
}

/// True when a first field `s` marks its line as a header: it is not a number, and it does
/// not even start like one (a digit, sign or point), so that a garbled first data line such
/// as `1;2;3;4;5;6` or `1.0x,…` is reported instead of silently skipped as a header.
fn is_header_field(s: &str) -> bool {
    s.parse::<f64>().is_err() && !s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.'))
}

/// Shortens a field quoted in an error message.
pub(crate) fn quote_field(s: &str) -> String {
    const MAX: usize = 40;
    if s.chars().count() > MAX {
        let head: String = s.chars().take(MAX).collect();
        format!("{head:?}…")
    } else {
        format!("{s:?}")
    }
}

/// Data lines of a csv file: blank lines, `#` comments and an optional header (the first
/// non-blank, non-comment line when its first field is not a number and does not start
/// like one) are skipped.
pub(crate) struct CsvLines {
    name: String,
    reader: Box<dyn BufRead + Send>,
    line_no: u64,
    seen_content: bool,
    line: String,
}

impl CsvLines {
    /// Opens `path` (`-` for stdin).
    pub(crate) fn open(path: &str) -> Result<Self, IoError> {
        let reader: Box<dyn BufRead + Send> = if path == "-" {
            Box::new(BufReader::with_capacity(BUF, std::io::stdin()))
        } else {
            Box::new(BufReader::with_capacity(BUF, open_file(path)?.0))
        };
        Ok(Self { name: input_name(path), reader, line_no: 0, seen_content: false, line: String::new() })
    }

    /// The name used in errors.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// An error at the current line.
    pub(crate) fn err(&self, message: impl Into<String>) -> IoError {
        IoError::at(&self.name, format!("line {}", self.line_no), message)
    }

    /// The next data line, trimmed, or `None` at the end of the input.
    pub(crate) fn next_line(&mut self) -> Result<Option<&str>, IoError> {
        loop {
            self.line.clear();
            let read = (&mut self.reader).take(MAX_LINE as u64 + 1).read_line(&mut self.line);
            let n = match read {
                Ok(n) => n,
                Err(e) => {
                    self.line_no += 1;
                    return Err(if e.kind() == std::io::ErrorKind::InvalidData {
                        self.err("line is not valid UTF-8 text (is this a binary file?)")
                    } else {
                        self.err(format!("cannot read: {e}"))
                    });
                }
            };
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            if !self.line.ends_with('\n') && self.line.len() > MAX_LINE {
                return Err(self.err(format!("line is longer than {MAX_LINE} bytes")));
            }
            let full = self.line.as_str();
            let bom = if self.line_no == 1 && full.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
            let body = &full[bom..];
            let start = bom + (body.len() - body.trim_start().len());
            let end = (bom + body.trim_end().len()).max(start);
            let line = &full[start..end];
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let first = !self.seen_content;
            self.seen_content = true;
            if first && is_header_field(line.split(',').next().unwrap_or("").trim()) {
                continue; // the header line
            }
            return Ok(Some(&self.line[start..end]));
        }
    }
}

/// Fixed-size records of a `.bin` file or of the data part of an `.npy` file.
pub(crate) struct RecordSource {
    name: String,
    reader: BufReader<File>,
    /// Bytes per record.
    rec: usize,
    /// Records the file holds: from the size for `.bin` (regular files), from the shape for
    /// `.npy`.
    total: Option<u64>,
    /// `.npy`: the data must hold exactly `total` records; `.bin`: records run to the end.
    npy: bool,
    /// Byte offset of record 0.
    data_offset: u64,
    /// Records handed out so far.
    next: u64,
    buf: Vec<u8>,
    done: bool,
}

impl RecordSource {
    /// A `.bin` file of `rec`-byte records. A regular file whose size is not a whole number
    /// of records is refused here, before any record is read.
    pub(crate) fn open_bin(path: &str, rec: usize) -> Result<Self, IoError> {
        let (file, size) = open_file(path)?;
        let name = input_name(path);
        let total = size.map(|s| s / rec as u64);
        if let Some(size) = size {
            let left = size % rec as u64;
            if left != 0 {
                let whole = size / rec as u64;
                return Err(IoError::at(
                    &name,
                    record_place(whole, whole * rec as u64),
                    format!(
                        "truncated .bin file: {left} bytes left over after the last whole \
                         {rec}-byte record ({size} bytes = {whole} records + {left} bytes)"
                    ),
                ));
            }
        }
        Ok(Self {
            name,
            reader: BufReader::with_capacity(BUF, file),
            rec,
            total,
            npy: false,
            data_offset: 0,
            next: 0,
            buf: Vec::new(),
            done: false,
        })
    }

    /// An `.npy` file. `check` validates the header's `descr` and shape and returns the
    /// record size in bytes (one row: the product of the dimensions after the first times
    /// the item size); its error message gets the `header` place. Data shorter or longer
    /// than the header promises is refused here when the file size is known.
    pub(crate) fn open_npy(
        path: &str,
        check: impl FnOnce(&Header) -> Result<usize, String>,
    ) -> Result<(Self, Header), IoError> {
        let (file, size) = open_file(path)?;
        let name = input_name(path);
        let mut reader = BufReader::with_capacity(BUF, file);
        let header = npy::read_header(&mut reader).map_err(|m| IoError::at(&name, "header", m))?;
        let rec = check(&header).map_err(|m| IoError::at(&name, "header", m))?;
        let rows = header.shape.first().copied().unwrap_or(1);
        let need = rows
            .checked_mul(rec as u64)
            .ok_or_else(|| IoError::at(&name, "header", format!("shape {} is too large", header.shape_text())))?;
        let src = Self {
            name,
            reader,
            rec,
            total: Some(rows),
            npy: true,
            data_offset: header.data_offset,
            next: 0,
            buf: Vec::new(),
            done: false,
        };
        if let Some(size) = size {
            let have = size.saturating_sub(header.data_offset);
            if have < need {
                return Err(src.short_npy(have, &header));
            }
            if have > need {
                return Err(IoError::at(
                    &src.name,
                    record_place(rows, header.data_offset + need),
                    format!(
                        "{} bytes of unexpected data after the {rows} records the header \
                         declares (shape {})",
                        have - need,
                        header.shape_text()
                    ),
                ));
            }
        }
        Ok((src, header))
    }

    /// The error for npy data that ends early, `have` data bytes being present.
    fn short_npy(&self, have: u64, header: &Header) -> IoError {
        let rows = self.total.unwrap_or(0);
        let rec = self.rec as u64;
        let whole = have / rec;
        IoError::at(
            &self.name,
            record_place(whole, self.data_offset + whole * rec),
            format!(
                "npy data is shorter than the header promises: shape {} needs {} data bytes \
                 ({rows} records of {rec} bytes), the file has {have} ({whole} whole records)",
                header.shape_text(),
                rows * rec,
            ),
        )
    }

    /// Bytes per record.
    pub(crate) fn record_size(&self) -> usize {
        self.rec
    }

    /// Record count when known.
    pub(crate) fn total(&self) -> Option<u64> {
        self.total
    }

    /// The name used in errors.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Byte offset of record 0 in the file.
    pub(crate) fn data_offset(&self) -> u64 {
        self.data_offset
    }

    /// Index of the next record.
    pub(crate) fn position(&self) -> u64 {
        self.next
    }

    /// Up to `max` (at least 1, and at most [`MAX_CHUNK_BYTES`] worth) whole records, or
    /// `None` at the end.
    pub(crate) fn next_records(&mut self, max: usize) -> Result<Option<&[u8]>, IoError> {
        if self.done {
            return Ok(None);
        }
        let max = max.clamp(1, (MAX_CHUNK_BYTES / self.rec).max(1)) as u64;
        // Known sizes (every `.npy`, a regular `.bin` file) bound the request by what is
        // left; `.bin` from a pipe reads to the end of the stream.
        let want = match self.total {
            Some(total) => max.min(total.saturating_sub(self.next)),
            None => max,
        };
        if want == 0 {
            self.done = true;
            self.check_npy_end()?;
            return Ok(None);
        }
        let bytes = want as usize * self.rec;
        // Grow the buffer as data arrives, so a huge `max` on a short stream allocates
        // only what the stream holds.
        self.buf.clear();
        let mut got = 0;
        while got < bytes {
            if got == self.buf.len() {
                let grow = (bytes - got).min(1 << 20).max(self.buf.len().min(bytes - got));
                self.buf.resize(got + grow, 0);
            }
            match self.reader.read(&mut self.buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    let at = self.next + (got / self.rec) as u64;
                    return Err(IoError::at(
                        &self.name,
                        record_place(at, self.data_offset + at * self.rec as u64),
                        format!("cannot read: {e}"),
                    ));
                }
            }
        }
        let whole = got / self.rec;
        let left = got % self.rec;
        if got < bytes {
            self.done = true;
            if self.npy {
                let rows = self.total.unwrap_or(0);
                let have = self.next * self.rec as u64 + got as u64;
                let at = self.next + whole as u64;
                return Err(IoError::at(
                    &self.name,
                    record_place(at, self.data_offset + at * self.rec as u64),
                    format!(
                        "npy data is shorter than the header promises: {rows} records of {} \
                         bytes declared, the data ends after {have} bytes",
                        self.rec
                    ),
                ));
            }
            if left != 0 {
                let at = self.next + whole as u64;
                return Err(IoError::at(
                    &self.name,
                    record_place(at, at * self.rec as u64),
                    format!(
                        "truncated .bin file: {left} bytes left over after the last whole \
                         {}-byte record",
                        self.rec
                    ),
                ));
            }
            if whole == 0 {
                return Ok(None);
            }
        }
        self.next += whole as u64;
        Ok(Some(&self.buf[..whole * self.rec]))
    }

    /// After the last declared npy record: nothing may follow (for inputs whose size was not
    /// known at open).
    fn check_npy_end(&mut self) -> Result<(), IoError> {
        if !self.npy {
            return Ok(());
        }
        let mut one = [0u8; 1];
        let extra = loop {
            match self.reader.read(&mut one) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(IoError::new(&self.name, format!("cannot read: {e}"))),
            }
        };
        if extra > 0 {
            let end = self.reader.stream_position().unwrap_or(0).saturating_sub(1);
            let _ = self.reader.seek(SeekFrom::End(0));
            return Err(IoError::at(
                &self.name,
                record_place(self.next, end),
                format!("unexpected data after the {} records the header declares", self.next),
            ));
        }
        Ok(())
    }
}

/// The place of record `index` (0-based) starting at byte `offset` of the file.
pub(crate) fn record_place(index: u64, offset: u64) -> String {
    format!("record {index} (byte offset {offset})")
}
