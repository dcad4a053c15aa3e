//! The container: a GLB's chunks, and the buffers a document names (the GLB's BIN chunk, files beside a `.gltf`,
//! `data:` URIs), each loaded once and checked against its declared `byteLength`.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use serde_json::Value;

use super::{CHUNK_BIN, CHUNK_JSON, Errors, GLB_HEADER_BYTES, item, req_u64};
use crate::SceneError;

/// The JSON chunk and the BIN chunk (if any) of a GLB file, every length checked against the file.
pub(super) fn split_glb<'a>(e: &Errors, bytes: &'a [u8]) -> Result<(&'a [u8], Option<&'a [u8]>), SceneError> {
    let u32_at =
        |at: usize| -> Option<u32> { Some(u32::from_le_bytes(bytes.get(at..at.checked_add(4)?)?.try_into().ok()?)) };
    let (Some(version), Some(length)) = (u32_at(4), u32_at(8)) else {
        return Err(e.body(format!("{} bytes is shorter than a GLB header (12 bytes)", bytes.len())));
    };
    if version != 2 {
        return Err(e.unsupported(format!("GLB version {version}; splatsort reads glTF 2.0")));
    }
    let length = length as usize;
    if length > bytes.len() {
        return Err(e.body(format!(
            "the GLB header declares {length} bytes but the file holds {}: the file is truncated",
            bytes.len()
        )));
    }
    let bytes = &bytes[..length];
    let mut chunks = Vec::new();
    let mut at = GLB_HEADER_BYTES;
    while at < bytes.len() {
        let (Some(chunk_length), Some(chunk_type)) = (u32_at(at), u32_at(at + 4)) else {
            return Err(e.body(format!("a GLB chunk header at byte {at} runs past the end of the file")));
        };
        let begin = at + 8;
        let end = begin.checked_add(chunk_length as usize).filter(|&end| end <= bytes.len()).ok_or_else(|| {
            e.body(format!(
                "the GLB chunk at byte {at} declares {chunk_length} bytes, past the end of the {}-byte file",
                bytes.len()
            ))
        })?;
        chunks.push((chunk_type, &bytes[begin..end]));
        // Chunks are padded to 4 bytes.
        at = end.next_multiple_of(4);
    }
    let json = match chunks.first() {
        Some(&(CHUNK_JSON, json)) => json,
        _ => return Err(e.body("the GLB file does not start with a JSON chunk")),
    };
    let bin = chunks.get(1).filter(|(kind, _)| *kind == CHUNK_BIN).map(|(_, b)| *b);
    Ok((json, bin))
}

/// The file's buffers, loaded when first used.
pub(super) struct Buffers<'a> {
    pub(super) doc: &'a Value,
    pub(super) e: &'a Errors,
    /// Where relative URIs start.
    pub(super) dir: &'a Path,
    /// The GLB's BIN chunk.
    pub(super) bin: Option<&'a [u8]>,
    pub(super) loaded: Vec<(u64, Cow<'a, [u8]>)>,
}

impl<'a> Buffers<'a> {
    /// Buffer `index`'s bytes when it is loaded.
    pub(super) fn loaded(&self, index: u64) -> Option<&[u8]> {
        self.loaded.iter().find(|(i, _)| *i == index).map(|(_, bytes)| &**bytes)
    }

    /// Bytes of every buffer loaded from outside the main file (external files and `data:` URIs are counted;
    /// the GLB's own chunk is part of the file).
    pub(super) fn external_bytes(&self) -> u64 {
        self.loaded.iter().filter(|(_, b)| matches!(b, Cow::Owned(_))).map(|(_, b)| b.len() as u64).sum()
    }

    /// Buffer `index`'s declared bytes (checked to be there).
    pub(super) fn get(&mut self, index: u64) -> Result<&[u8], SceneError> {
        if let Some(at) = self.loaded.iter().position(|(i, _)| *i == index) {
            return Ok(&self.loaded[at].1);
        }
        let e = self.e;
        let buffer = item(e, self.doc, "buffers", index)?;
        let what = format!("buffer {index}");
        let declared = req_u64(e, buffer, "byteLength", &what)?;
        let short = |source: &str, held: usize| {
            e.body(format!(
                "{what} declares {declared} bytes but {source} holds only {held}: the file is truncated or its JSON \
                 is wrong"
            ))
        };
        let data: Cow<'a, [u8]> = match buffer.get("uri").map(|u| u.as_str()) {
            None => {
                // The GLB-stored buffer: the first buffer, with no URI.
                let bin = self.bin.filter(|_| index == 0).ok_or_else(|| {
                    e.body(format!("{what} has no URI, and the file is not a GLB with a BIN chunk for it"))
                })?;
                let bin = bin.get(..declared as usize).ok_or_else(|| short("the GLB's BIN chunk", bin.len()))?;
                Cow::Borrowed(bin)
            }
            Some(None) => return Err(e.body(format!("{what}: `uri` is not a string"))),
            Some(Some(uri)) if starts_with_ignore_case(uri, "data:") => {
                let mut bytes = decode_data_uri(uri).map_err(|why| e.body(format!("{what}: its data: URI {why}")))?;
                if (bytes.len() as u64) < declared {
                    return Err(short("its data: URI", bytes.len()));
                }
                bytes.truncate(declared as usize);
                Cow::Owned(bytes)
            }
            Some(Some(uri)) => {
                if uri.contains("://") {
                    let uri = quoted(uri);
                    return Err(e.unsupported(format!("{what} is at {uri}; splatsort reads only local files")));
                }
                let name = String::from_utf8_lossy(&percent_decode(uri)).into_owned();
                // A buffer is a file beside the .gltf or below it, never elsewhere on the machine.
                let outside = name.starts_with('/')
                    || name.contains(['\\', ':', '\0'])
                    || name.split('/').any(|part| part.is_empty() || part == "." || part == "..");
                if outside {
                    let name = quoted(&name);
                    return Err(e.unsupported(format!(
                        "{what} is at `{name}`; a buffer's uri must be a relative path inside the .gltf's folder"
                    )));
                }
                let file = name.split('/').fold(self.dir.to_path_buf(), |path, part| path.join(part));
                let bytes = read_buffer_file(&file, declared)
                    .map_err(|err| e.body(format!("{what}'s file {}: {err}", file.display())))?;
                if (bytes.len() as u64) < declared {
                    return Err(short(&format!("its file {}", file.display()), bytes.len()));
                }
                Cow::Owned(bytes)
            }
        };
        self.loaded.push((index, data));
        Ok(&self.loaded[self.loaded.len() - 1].1)
    }
}

/// Up to `limit` bytes of a buffer's file (a file longer than the buffer is not read past it).
fn read_buffer_file(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    // Checked before it is opened: opening a FIFO would block until something writes to it.
    let (file, _) = crate::open_regular_file(path).map_err(std::io::Error::other)?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// At most 60 characters of `text`, control characters escaped, for an error message of one short line.
fn quoted(text: &str) -> String {
    let mut out: String = text.chars().take(60).flat_map(char::escape_debug).collect();
    if text.chars().nth(60).is_some() {
        out.push_str("...");
    }
    out
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len()).is_some_and(|start| start.eq_ignore_ascii_case(prefix))
}

/// The bytes of a `data:` URI (RFC 2397: `data:[<media type>][;base64],<data>`; the scheme and `;base64` are
/// case-insensitive): base64, or percent-encoded octets without `;base64`.
fn decode_data_uri(uri: &str) -> Result<Vec<u8>, &'static str> {
    let (header, payload) = uri["data:".len()..].split_once(',').ok_or("has no `,` before its data")?;
    let base64 = header.len() >= 7 && header[header.len() - 7..].eq_ignore_ascii_case(";base64");
    if base64 { decode_base64(payload).ok_or("is not valid base64") } else { Ok(percent_decode(payload)) }
}

/// Standard base64 (with or without padding), or None for any other character.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 3);
    for group in text.chunks(4) {
        if group.len() == 1 {
            return None;
        }
        let mut bits = 0u32;
        for (i, &c) in group.iter().enumerate() {
            bits |= value(c)? << (18 - 6 * i);
        }
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..group.len()]);
    }
    Some(out)
}

/// `%XX` escapes decoded (glTF URIs are URI references; file names with spaces are escaped).
fn percent_decode(uri: &str) -> Vec<u8> {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

/// A file name as a relative URI: everything but unreserved characters escaped.
pub(super) fn percent_encode(name: &str) -> String {
    name.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_uris_follow_rfc_2397() {
        assert_eq!(decode_data_uri("data:application/octet-stream;base64,AAEC"), Ok(vec![0, 1, 2]));
        assert_eq!(decode_data_uri("data:;BASE64,AAEC"), Ok(vec![0, 1, 2]), "`;base64` in any case");
        assert_eq!(decode_data_uri("DATA:;Base64,AAE="), Ok(vec![0, 1]), "padding");
        assert_eq!(decode_data_uri("data:,%00%01a"), Ok(vec![0, 1, b'a']), "percent-encoded octets");
        assert!(decode_data_uri("data:;base64,A!AA").is_err(), "not base64");
        assert!(decode_data_uri("data:;base64").is_err(), "no comma");
    }
}
