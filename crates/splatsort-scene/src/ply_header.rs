//! The PLY header, parsed strictly: every number checked (counts are u64, sizes are checked arithmetic), duplicate
//! names refused, and an error is one line quoting at most a short excerpt. Shared by the 3DGS PLY reader (`ply`)
//! and the compressed PLY reader (`compressed`), which both start from it.

/// The longest header read; 3DGS headers are under 2 KiB.
pub const MAX_HEADER_BYTES: usize = 1 << 20;
/// The longest excerpt of a bad line or value quoted in an error.
const EXCERPT_CHARS: usize = 40;

/// How a PLY body is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Ascii,
    BinaryLittleEndian,
    BinaryBigEndian,
}

impl Encoding {
    pub(crate) fn keyword(self) -> &'static str {
        match self {
            Self::Ascii => "ascii",
            Self::BinaryLittleEndian => "binary_little_endian",
            Self::BinaryBigEndian => "binary_big_endian",
        }
    }
}

/// A PLY scalar type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    F32,
    F64,
}

impl ScalarType {
    fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "char" | "int8" => Self::I8,
            "uchar" | "uint8" => Self::U8,
            "short" | "int16" => Self::I16,
            "ushort" | "uint16" => Self::U16,
            "int" | "int32" => Self::I32,
            "uint" | "uint32" => Self::U32,
            "float" | "float32" => Self::F32,
            "double" | "float64" => Self::F64,
            _ => return None,
        })
    }

    /// Bytes of one value in a binary body.
    pub fn size(self) -> u64 {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::I32 | Self::U32 | Self::F32 => 4,
            Self::F64 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::I8 => "char",
            Self::U8 => "uchar",
            Self::I16 => "short",
            Self::U16 => "ushort",
            Self::I32 => "int",
            Self::U32 => "uint",
            Self::F32 => "float",
            Self::F64 => "double",
        }
    }

    /// The range of an integer type; None for floats.
    pub(crate) fn integer_range(self) -> Option<(i64, i64)> {
        Some(match self {
            Self::I8 => (i8::MIN.into(), i8::MAX.into()),
            Self::U8 => (0, u8::MAX.into()),
            Self::I16 => (i16::MIN.into(), i16::MAX.into()),
            Self::U16 => (0, u16::MAX.into()),
            Self::I32 => (i32::MIN.into(), i32::MAX.into()),
            Self::U32 => (0, u32::MAX.into()),
            Self::F32 | Self::F64 => return None,
        })
    }
}

/// A property's type: one scalar, or a list (a count, then that many items).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropertyType {
    Scalar(ScalarType),
    List { count: ScalarType, item: ScalarType },
}

impl PropertyType {
    pub fn describe(self) -> String {
        match self {
            Self::Scalar(s) => s.name().to_string(),
            Self::List { count, item } => format!("a list ({} count, {} items)", count.name(), item.name()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PropertyDef {
    pub name: String,
    pub ty: PropertyType,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementDef {
    pub name: String,
    pub count: u64,
    pub properties: Vec<PropertyDef>,
}

impl ElementDef {
    pub fn property(&self, name: &str) -> Option<usize> {
        self.properties.iter().position(|p| p.name == name)
    }

    /// Bytes of one row in a binary body; None when a property is a list (rows then differ in size).
    pub fn binary_row_bytes(&self) -> Option<u64> {
        self.properties
            .iter()
            .map(|p| match p.ty {
                PropertyType::Scalar(s) => Some(s.size()),
                PropertyType::List { .. } => None,
            })
            .sum()
    }
}

/// A parsed PLY header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub encoding: Encoding,
    pub elements: Vec<ElementDef>,
    /// Length of the header in bytes, `end_header` line included: where the body starts.
    pub bytes: u64,
    /// Lines in the header, `end_header` included (the body's first line is the next).
    pub lines: usize,
    /// A comment says the splats were trained with Mip-Splatting's 2D filter (`antialiased_comment`).
    pub antialiased: bool,
}

/// What a header comment says of the splats' kernel: Some(true) for an antialiased (Mip-Splatting) scene, Some(false)
/// for another kernel, None for a comment about something else. Brush writes `SplatRenderMode: mip` (or `default`,
/// `2dgs`), Postshot `antialiased 1` (or 0); case and spaces do not matter, and the last such comment wins.
pub fn antialiased_comment(comment: &str) -> Option<bool> {
    let comment = comment.trim().to_ascii_lowercase();
    if let Some(mode) = comment.strip_prefix("splatrendermode:") {
        return Some(mode.trim() == "mip");
    }
    let words: Vec<&str> = comment.split_ascii_whitespace().collect();
    match words.as_slice() {
        ["antialiased", flag] => Some(*flag == "1"),
        _ => None,
    }
}

/// At most `EXCERPT_CHARS` of `bytes`, printable, for quoting bad input in a one-line error.
pub fn excerpt(bytes: &[u8]) -> String {
    let quoted: String = bytes.iter().take(EXCERPT_CHARS).flat_map(|b| b.escape_ascii()).map(char::from).collect();
    if bytes.len() > EXCERPT_CHARS { format!("{quoted}...") } else { quoted }
}

/// Why a PLY header could not be read: one line, without the file name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("no `end_header` line in the first {} KiB", MAX_HEADER_BYTES >> 10)]
    TooLong,
    #[error("the file ends inside the header (no `end_header` line)")]
    Truncated,
    /// A header line that is not what PLY allows there, quoted short.
    #[error("line {line} ({problem}): `{excerpt}`")]
    Line { line: usize, problem: &'static str, excerpt: String },
    #[error("the header has no format line")]
    NoFormat,
}

/// Parses a PLY header from the start of a file. `start` holds the file's first bytes (up to `MAX_HEADER_BYTES`, or
/// the whole file when shorter).
pub fn parse_header(start: &[u8]) -> Result<Header, HeaderError> {
    let mut encoding = None;
    let mut antialiased = false;
    let mut elements: Vec<ElementDef> = Vec::new();
    let mut at = 0usize;
    let mut line_number = 0usize;
    loop {
        let Some(length) = start[at..].iter().position(|&b| b == b'\n') else {
            return Err(if start.len() >= MAX_HEADER_BYTES { HeaderError::TooLong } else { HeaderError::Truncated });
        };
        let raw = &start[at..at + length];
        at += length + 1;
        line_number += 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        let bad = |problem| HeaderError::Line { line: line_number, problem, excerpt: excerpt(line) };
        let Ok(text) = std::str::from_utf8(line) else { return Err(bad("not text")) };
        if !text.is_ascii() {
            return Err(bad("not ASCII"));
        }
        let words: Vec<&str> = text.split_ascii_whitespace().collect();
        if line_number == 1 {
            if words != ["ply"] {
                return Err(bad("the first line must be `ply`"));
            }
            continue;
        }
        match words.as_slice() {
            [] => return Err(bad("an empty line")),
            ["comment", ..] => {
                let rest = text.trim_start().strip_prefix("comment").unwrap_or_default();
                antialiased = antialiased_comment(rest).unwrap_or(antialiased);
            }
            ["obj_info", ..] => {}
            ["format", keyword, version] => {
                if encoding.is_some() {
                    return Err(bad("a second format line"));
                }
                encoding = Some(parse_format(keyword, version).map_err(bad)?);
            }
            ["format", ..] => return Err(bad("a format line is `format <encoding> 1.0`")),
            ["element", name, count] => {
                if encoding.is_none() {
                    return Err(bad("an element before the format line"));
                }
                let Ok(count) = count.parse::<u64>() else {
                    return Err(bad("the element count is not a whole number below 2^64"));
                };
                if elements.iter().any(|e| e.name == *name) {
                    return Err(bad("a second element of this name"));
                }
                elements.push(ElementDef { name: name.to_string(), count, properties: Vec::new() });
            }
            ["element", ..] => return Err(bad("an element line is `element <name> <count>`")),
            ["property", rest @ ..] => {
                let (ty, name) = parse_property(rest).map_err(bad)?;
                let Some(element) = elements.last_mut() else {
                    return Err(bad("a property before any element"));
                };
                if element.property(name).is_some() {
                    return Err(bad("a second property of this name in the element"));
                }
                element.properties.push(PropertyDef { name: name.to_string(), ty });
            }
            ["end_header"] => break,
            _ => return Err(bad("not a PLY header line")),
        }
    }
    let encoding = encoding.ok_or(HeaderError::NoFormat)?;
    Ok(Header { encoding, elements, bytes: at as u64, lines: line_number, antialiased })
}

/// The encoding a `format` line's words name, checked to be PLY 1.0; otherwise what is wrong with the line.
fn parse_format(keyword: &str, version: &str) -> Result<Encoding, &'static str> {
    let encoding = match keyword {
        "ascii" => Encoding::Ascii,
        "binary_little_endian" => Encoding::BinaryLittleEndian,
        "binary_big_endian" => Encoding::BinaryBigEndian,
        _ => return Err("unknown format; PLY has ascii, binary_little_endian, binary_big_endian"),
    };
    if !matches!(version, "1.0" | "1") {
        return Err("unsupported version; splatsort reads PLY 1.0");
    }
    Ok(encoding)
}

/// The type and name a `property` line's words after `property` declare; otherwise what is wrong with the line.
fn parse_property<'a>(words: &[&'a str]) -> Result<(PropertyType, &'a str), &'static str> {
    match words {
        [ty, name] => match ScalarType::parse(ty) {
            Some(s) => Ok((PropertyType::Scalar(s), *name)),
            None => Err("unknown property type"),
        },
        ["list", count, item, name] => match (ScalarType::parse(count), ScalarType::parse(item)) {
            (Some(count), Some(item)) if count.integer_range().is_some() => {
                Ok((PropertyType::List { count, item }, *name))
            }
            (Some(_), Some(_)) => Err("a list count must be an integer type"),
            _ => Err("unknown list type"),
        },
        _ => Err("a property line is `property <type> <name>`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Result<Header, String> {
        parse_header(text.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_3dgs_header_parses() {
        let text = "ply\nformat binary_little_endian 1.0\ncomment x\nelement vertex 3\nproperty float x\n\
                    property list uchar int idx\nelement face 2\nproperty uchar a\nend_header\nBODY";
        let h = header(text).unwrap();
        assert_eq!(h.encoding, Encoding::BinaryLittleEndian);
        assert_eq!(h.elements.len(), 2);
        assert_eq!(h.elements[0].count, 3);
        assert_eq!(h.elements[0].binary_row_bytes(), None, "a list makes rows differ in size");
        assert_eq!(h.elements[1].binary_row_bytes(), Some(1));
        assert_eq!(&text[h.bytes as usize..], "BODY", "the body starts after the end_header line");
    }

    #[test]
    fn bad_header_numbers_and_names_are_errors_not_panics() {
        let base = "ply\nformat ascii 1.0\n";
        for (text, want) in [
            (format!("{base}element vertex 18446744073709551616\nend_header\n"), "count"),
            (format!("{base}element vertex -1\nend_header\n"), "count"),
            ("ply\nformat ascii 1.99999999999999999999\nend_header\n".to_string(), "version"),
            (format!("{base}element vertex 1\nproperty float x\nproperty float x\nend_header\n"), "second property"),
            (format!("{base}element vertex 1\nelement vertex 2\nend_header\n"), "second element"),
            (format!("{base}property float x\nend_header\n"), "before any element"),
            (format!("{base}element vertex 1\nproperty float128 x\nend_header\n"), "unknown property type"),
            (format!("{base}element vertex 1\nproperty list float int x\nend_header\n"), "integer type"),
            (format!("{base}element vertex 1\n"), "ends inside the header"),
            ("ply\nelement vertex 1\nend_header\n".to_string(), "before the format"),
            ("ply\nend_header\n".to_string(), "no format"),
        ] {
            let error = header(&text).expect_err(&text);
            assert!(error.contains(want), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_bad_line_is_quoted_short() {
        let long = format!("ply\nformat ascii 1.0\n{}\nend_header\n", "x".repeat(1 << 19));
        let error = header(&long).unwrap_err();
        assert!(error.len() < 120, "one short line: {error}");
        assert!(!error.contains('\n'));
    }
}
