//! The `.npy` header, read and written by hand (format versions 1.0, 2.0 and 3.0).
//!
//! A file is the magic `\x93NUMPY`, a major and a minor version byte, the header length
//! (little-endian u16 in version 1, u32 in versions 2 and 3), then the header: a Python dict
//! literal `{'descr': …, 'fortran_order': …, 'shape': (…), }` padded with spaces and ended by
//! `\n` so that the data starts at a multiple of 64 bytes. The data follows, C order.

use std::fmt;
use std::io::Read;

/// The six magic bytes every `.npy` file starts with.
pub(crate) const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// Headers longer than this are refused (numpy itself refuses anything over 10 000 bytes by
/// default); it keeps a corrupt length field from asking for gigabytes.
const MAX_HEADER: usize = 1 << 20;

/// Nesting deeper than this in the header literal is refused (no unbounded recursion).
const MAX_DEPTH: usize = 32;

/// Data is aligned to this many bytes from the start of the file (npy format 1.0 spec).
const ALIGN: usize = 64;

/// The Python literals that appear in an npy header.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PyVal {
    /// `'text'` or `"text"`.
    Str(String),
    /// An integer (a trailing `L` from Python 2 era files is accepted).
    Int(i128),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
    /// `(a, b)` (tuple) or `[a, b]` (list).
    Seq(Vec<PyVal>, bool),
    /// `{k: v, …}`.
    Dict(Vec<(PyVal, PyVal)>),
}

impl fmt::Display for PyVal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyVal::Str(s) => write!(f, "'{s}'"),
            PyVal::Int(i) => write!(f, "{i}"),
            PyVal::Bool(true) => f.write_str("True"),
            PyVal::Bool(false) => f.write_str("False"),
            PyVal::None => f.write_str("None"),
            PyVal::Seq(items, tuple) => {
                f.write_str(if *tuple { "(" } else { "[" })?;
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                if *tuple && items.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(if *tuple { ")" } else { "]" })
            }
            PyVal::Dict(items) => {
                f.write_str("{")?;
                for (i, (k, v)) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// A parsed and checked header.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Header {
    /// The `descr` entry as written (a string for plain dtypes, a list for structured ones).
    pub descr: PyVal,
    /// The array shape.
    pub shape: Vec<u64>,
    /// Byte offset of the first data byte.
    pub data_offset: u64,
}

impl Header {
    /// The shape as Python prints it, e.g. `(10, 8)` or `(3,)`.
    pub fn shape_text(&self) -> String {
        shape_text(&self.shape)
    }
}

/// A shape as Python prints it.
pub(crate) fn shape_text(shape: &[u64]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(|n| n.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// Reads exactly `buf.len()` bytes or reports how many were there.
fn read_exact_or_count(r: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads and checks the preamble and header dict. The error is a message for a `header`
/// place. Checks magic, version, the dict's keys and types, `fortran_order == False` and the
/// shape's form; the caller checks `descr` and the shape's values.
pub(crate) fn read_header(r: &mut impl Read) -> Result<Header, String> {
    let io = |e: std::io::Error| format!("cannot read the header: {e}");
    let mut pre = [0u8; 8];
    let got = read_exact_or_count(r, &mut pre).map_err(io)?;
    if got < 6 || &pre[..6] != MAGIC {
        return Err(format!(
            "not an npy file: it does not start with the magic bytes \\x93NUMPY (found {})",
            escape_bytes(&pre[..got])
        ));
    }
    if got < 8 {
        return Err("file ends inside the npy preamble".into());
    }
    let (major, minor) = (pre[6], pre[7]);
    let len_bytes = match (major, minor) {
        (1, 0) => 2,
        (2, 0) | (3, 0) => 4,
        _ => {
            return Err(format!("unsupported npy format version {major}.{minor} (1.0, 2.0 and 3.0 are read)"));
        }
    };
    let mut lb = [0u8; 4];
    if read_exact_or_count(r, &mut lb[..len_bytes]).map_err(io)? < len_bytes {
        return Err("file ends inside the npy preamble".into());
    }
    let hlen = u32::from_le_bytes(lb) as usize;
    if hlen > MAX_HEADER {
        return Err(format!("header length {hlen} bytes is implausible (at most {MAX_HEADER} accepted)"));
    }
    let mut text = vec![0u8; hlen];
    let got = read_exact_or_count(r, &mut text).map_err(io)?;
    if got < hlen {
        return Err(format!("file ends inside the header ({got} of {hlen} header bytes present)"));
    }
    let data_offset = (8 + len_bytes + hlen) as u64;
    // Versions 1 and 2 are latin-1, version 3 is UTF-8; the keys and values we accept are
    // ASCII either way, so other bytes can only end up inside strings.
    let text: String = if major == 3 {
        String::from_utf8(text).map_err(|_| "header is not valid UTF-8".to_string())?
    } else {
        text.iter().map(|&b| b as char).collect()
    };
    let dict = parse_literal(&text)?;
    let PyVal::Dict(items) = dict else {
        return Err(format!("header is not a dict: {dict}"));
    };
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    for (k, v) in items {
        let slot = match &k {
            PyVal::Str(s) if s == "descr" => &mut descr,
            PyVal::Str(s) if s == "fortran_order" => &mut fortran,
            PyVal::Str(s) if s == "shape" => &mut shape,
            _ => {
                return Err(format!("unexpected key {k} in the header (only 'descr', 'fortran_order', 'shape')"));
            }
        };
        if slot.is_some() {
            return Err(format!("key {k} appears twice in the header"));
        }
        *slot = Some(v);
    }
    let (Some(descr), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return Err("header lacks one of the keys 'descr', 'fortran_order', 'shape'".into());
    };
    match fortran {
        PyVal::Bool(false) => {}
        PyVal::Bool(true) => {
            return Err("fortran_order is True: only C-order arrays are read \
                 (save np.ascontiguousarray(a) instead)"
                .into());
        }
        other => return Err(format!("fortran_order must be True or False, got {other}")),
    }
    let shape = match &shape {
        PyVal::Seq(dims, true) => dims
            .iter()
            .map(|d| match d {
                PyVal::Int(n) if *n >= 0 && *n <= u64::MAX as i128 => Ok(*n as u64),
                _ => Err(format!("shape {shape} is not a tuple of non-negative integers")),
            })
            .collect::<Result<Vec<u64>, String>>()?,
        _ => return Err(format!("shape must be a tuple, got {shape}")),
    };
    Ok(Header { descr, shape, data_offset })
}

/// Printable form of a few raw bytes for error messages.
fn escape_bytes(b: &[u8]) -> String {
    if b.is_empty() {
        return "an empty file".into();
    }
    let s: String = b.iter().flat_map(|&c| std::ascii::escape_default(c)).map(char::from).collect();
    format!("\"{s}\"")
}

/// Parses one Python literal (the subset numpy writes) filling all of `text` but whitespace.
pub(crate) fn parse_literal(text: &str) -> Result<PyVal, String> {
    let mut p = Parser { s: text.as_bytes(), i: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("header has unexpected text after the dict at byte {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.s.get(self.i).copied()
    }
    fn err(&self, what: &str) -> String {
        format!("cannot parse the header dict at byte {}: {what}", self.i)
    }
    fn value(&mut self, depth: usize) -> Result<PyVal, String> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        match self.peek() {
            None => Err(self.err("unexpected end")),
            Some(b'{') => {
                self.i += 1;
                let mut items = Vec::new();
                loop {
                    if self.peek() == Some(b'}') {
                        self.i += 1;
                        return Ok(PyVal::Dict(items));
                    }
                    let k = self.value(depth + 1)?;
                    if self.peek() != Some(b':') {
                        return Err(self.err("expected ':'"));
                    }
                    self.i += 1;
                    let v = self.value(depth + 1)?;
                    items.push((k, v));
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {}
                        _ => return Err(self.err("expected ',' or '}'")),
                    }
                }
            }
            Some(open @ (b'(' | b'[')) => {
                let close = if open == b'(' { b')' } else { b']' };
                self.i += 1;
                let mut items = Vec::new();
                let mut trailing_comma = false;
                loop {
                    if self.peek() == Some(close) {
                        self.i += 1;
                        // `(x)` without a comma is just `x` in Python.
                        if open == b'(' && items.len() == 1 && !trailing_comma {
                            return Ok(items.pop().unwrap_or(PyVal::None));
                        }
                        return Ok(PyVal::Seq(items, open == b'('));
                    }
                    items.push(self.value(depth + 1)?);
                    trailing_comma = false;
                    match self.peek() {
                        Some(b',') => {
                            self.i += 1;
                            trailing_comma = true;
                        }
                        Some(c) if c == close => {}
                        _ => return Err(self.err("expected ',' or a closing bracket")),
                    }
                }
            }
            Some(q @ (b'\'' | b'"')) => {
                self.i += 1;
                let mut out = Vec::new();
                loop {
                    match self.s.get(self.i).copied() {
                        None => return Err(self.err("unterminated string")),
                        Some(c) if c == q => {
                            self.i += 1;
                            break;
                        }
                        Some(b'\\') => {
                            let c = self.s.get(self.i + 1).copied();
                            let Some(c) = c else {
                                return Err(self.err("unterminated string"));
                            };
                            out.push(c);
                            self.i += 2;
                        }
                        Some(c) => {
                            out.push(c);
                            self.i += 1;
                        }
                    }
                }
                Ok(PyVal::Str(String::from_utf8_lossy(&out).into_owned()))
            }
            Some(c) if c == b'-' || c == b'+' || c.is_ascii_digit() => {
                let start = self.i;
                self.i += 1;
                while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
                    self.i += 1;
                }
                let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                let n: i128 = digits.parse().map_err(|_| self.err(&format!("bad integer {digits:?}")))?;
                if matches!(self.s.get(self.i), Some(b'L' | b'l')) {
                    self.i += 1;
                }
                Ok(PyVal::Int(n))
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let start = self.i;
                while self.i < self.s.len() && self.s[self.i].is_ascii_alphanumeric() {
                    self.i += 1;
                }
                match &self.s[start..self.i] {
                    b"True" => Ok(PyVal::Bool(true)),
                    b"False" => Ok(PyVal::Bool(false)),
                    b"None" => Ok(PyVal::None),
                    w => {
                        self.i = start;
                        Err(self.err(&format!("unexpected word {:?}", String::from_utf8_lossy(w))))
                    }
                }
            }
            Some(c) => Err(self.err(&format!("unexpected character {:?}", c as char))),
        }
    }
}

/// A complete version 1.0 preamble + header for `descr` (a Python literal such as `'<f4'`)
/// and `shape`, padded with spaces so that it is at least `min_len` bytes long and the data
/// starts at a multiple of 64.
pub(crate) fn header_bytes(descr: &str, shape: &[u64], min_len: usize) -> Vec<u8> {
    let dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': {}, }}", shape_text(shape));
    let total = (MAGIC.len() + 4 + dict.len() + 1).div_ceil(ALIGN).max(min_len.div_ceil(ALIGN)) * ALIGN;
    let hlen = total - MAGIC.len() - 4;
    debug_assert!(hlen <= u16::MAX as usize, "npy v1 header too long");
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(hlen as u16).to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// The header length that fits every first dimension up to `u64::MAX` for `descr` and the
/// other dimensions `rest`, so a placeholder can later be overwritten in place.
pub(crate) fn reserved_len(descr: &str, rest: &[u64]) -> usize {
    let mut shape = vec![u64::MAX];
    shape.extend_from_slice(rest);
    header_bytes(descr, &shape, 0).len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_is_aligned() {
        for shape in [vec![0, 8], vec![123_456_789, 6], vec![5]] {
            let h = header_bytes("'<f4'", &shape, 0);
            assert_eq!(h.len() % 64, 0);
            assert_eq!(*h.last().unwrap(), b'\n');
            let parsed = read_header(&mut &h[..]).unwrap();
            assert_eq!(parsed.shape, shape);
            assert_eq!(parsed.descr, PyVal::Str("<f4".into()));
            assert_eq!(parsed.data_offset, h.len() as u64);
        }
        let r = reserved_len("'|b1'", &[]);
        let h = header_bytes("'|b1'", &[3], r);
        assert_eq!(h.len(), r);
        assert_eq!(header_bytes("'|b1'", &[u64::MAX], r).len(), r);
    }

    #[test]
    fn literals_parse_like_python() {
        let v =
            parse_literal("{'descr': [('t', '<f4'), (\"g\", '<u4')], 'shape': (3L, 2), 'x': (7), 'y': ()}").unwrap();
        assert_eq!(v.to_string(), "{'descr': [('t', '<f4'), ('g', '<u4')], 'shape': (3, 2), 'x': 7, 'y': ()}");
        assert!(parse_literal("{'a': 1").is_err());
        assert!(parse_literal("{'a': nope}").is_err());
        assert!(parse_literal(&"[".repeat(100)).is_err());
        assert!(parse_literal("{} junk").is_err());
    }

    #[test]
    fn bad_preambles_are_described() {
        assert!(read_header(&mut &b""[..]).unwrap_err().contains("empty file"));
        assert!(read_header(&mut &b"PK\x03\x04 zip"[..]).unwrap_err().contains("magic"));
        let mut v2 = header_bytes("'<f4'", &[1, 6], 0);
        v2[6] = 9;
        assert!(read_header(&mut &v2[..]).unwrap_err().contains("version 9.0"));
        let h = header_bytes("'<f4'", &[1, 6], 0);
        assert!(read_header(&mut &h[..40]).unwrap_err().contains("inside the header"));
    }
}
