//! Accessors: typed views of a buffer's bytes, checked against their bufferView and buffer before a byte is read,
//! and sparse accessors (glTF 2.0 §3.6.2.3): base values from the bufferView (or zeros without one) with `count`
//! elements replaced, at indices that must rise strictly and stay below the accessor's count.

use glam::Vec3;
use serde_json::Value;

use super::file::Buffers;
use super::{item, opt_u64, req_u64};
use crate::{MAX_TILED_SPLATS, SceneError};

/// A glTF accessor component type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Component {
    I8,
    U8,
    I16,
    U16,
    U32,
    F32,
}

impl Component {
    fn from_code(code: u64) -> Option<Self> {
        Some(match code {
            5120 => Self::I8,
            5121 => Self::U8,
            5122 => Self::I16,
            5123 => Self::U16,
            5125 => Self::U32,
            5126 => Self::F32,
            _ => return None,
        })
    }

    fn bytes(self) -> usize {
        match self {
            Self::I8 | Self::U8 => 1,
            Self::I16 | Self::U16 => 2,
            Self::U32 | Self::F32 => 4,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::I8 => "i8",
            Self::U8 => "u8",
            Self::I16 => "i16",
            Self::U16 => "u16",
            Self::U32 => "u32",
            Self::F32 => "f32",
        }
    }

    /// One value as glTF defines it (normalized integers mapped to [0, 1] or [-1, 1]); `b` holds `bytes()` bytes.
    fn decode(self, b: &[u8], normalized: bool) -> f32 {
        let n = normalized;
        match self {
            Component::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            Component::I8 => {
                let v = f32::from(b[0] as i8);
                if n { (v / 127.0).max(-1.0) } else { v }
            }
            Component::U8 => {
                let v = f32::from(b[0]);
                if n { v / 255.0 } else { v }
            }
            Component::I16 => {
                let v = f32::from(i16::from_le_bytes([b[0], b[1]]));
                if n { (v / 32767.0).max(-1.0) } else { v }
            }
            Component::U16 => {
                let v = f32::from(u16::from_le_bytes([b[0], b[1]]));
                if n { v / 65535.0 } else { v }
            }
            Component::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f32,
        }
    }
}

/// (component, normalized) pairs an attribute may use.
pub(super) type Allowed = &'static [(Component, bool)];
pub(super) const FLOAT_ONLY: Allowed = &[(Component::F32, false)];
/// The spec leaves `POSITION` to glTF, which is float; `KHR_mesh_quantization` adds 8- and 16-bit integers.
pub(super) const POSITION_TYPES: Allowed = &[
    (Component::F32, false),
    (Component::I8, false),
    (Component::I8, true),
    (Component::U8, false),
    (Component::U8, true),
    (Component::I16, false),
    (Component::I16, true),
    (Component::U16, false),
    (Component::U16, true),
];
pub(super) const ROTATION_TYPES: Allowed = &[(Component::F32, false), (Component::I8, true), (Component::I16, true)];
pub(super) const SCALE_TYPES: Allowed = &[
    (Component::F32, false),
    (Component::U8, false),
    (Component::U8, true),
    (Component::U16, false),
    (Component::U16, true),
];
pub(super) const OPACITY_TYPES: Allowed = &[(Component::F32, false), (Component::U8, true), (Component::U16, true)];

/// Bytes `start..end` of buffer `buffer`, checked to lie within it (the buffer is loaded).
#[derive(Clone, Copy, Debug)]
struct Span {
    buffer: u64,
    start: usize,
    end: usize,
}

/// Where an accessor's values are, checked.
pub(super) struct Layout {
    /// From the first element's first byte to the end of its bufferView; None without a bufferView (zeros).
    base: Option<Span>,
    stride: usize,
    pub(super) component: Component,
    normalized: bool,
    pub(super) count: usize,
    /// Bytes of one element (its components, without stride).
    element: usize,
    /// The replaced elements: their indices (strictly rising) and their values, tightly packed.
    sparse: Option<(Vec<u32>, Span)>,
}

/// One attribute's values.
pub(super) struct Accessor<'a> {
    /// Empty when the accessor has no bufferView (glTF then means zeros).
    base: &'a [u8],
    stride: usize,
    component: Component,
    normalized: bool,
    pub(super) count: usize,
    sparse: Option<(&'a [u32], &'a [u8])>,
    element: usize,
}

impl<'a> Accessor<'a> {
    /// The values `layout` describes, its buffers loaded by `read_accessor`.
    pub(super) fn new(buffers: &'a Buffers<'_>, layout: &'a Layout) -> Self {
        let bytes =
            |span: Option<Span>| span.and_then(|s| buffers.loaded(s.buffer)?.get(s.start..s.end)).unwrap_or_default();
        let sparse = layout.sparse.as_ref().map(|(indices, values)| (indices.as_slice(), bytes(Some(*values))));
        Accessor {
            base: bytes(layout.base),
            stride: layout.stride,
            component: layout.component,
            normalized: layout.normalized,
            count: layout.count,
            sparse,
            element: layout.element,
        }
    }

    /// Element `i`'s bytes, or None for a zero element.
    fn element(&self, i: usize) -> Option<&'a [u8]> {
        if let Some((indices, values)) = self.sparse
            && let Ok(at) = indices.binary_search(&(i as u32))
        {
            return values.get(at * self.element..);
        }
        if self.base.is_empty() { None } else { self.base.get(i * self.stride..) }
    }

    /// Component `c` of element `i`.
    pub(super) fn get(&self, i: usize, c: usize) -> f32 {
        let size = self.component.bytes();
        match self.element(i) {
            Some(bytes) => self.component.decode(&bytes[c * size..(c + 1) * size], self.normalized),
            None => 0.0,
        }
    }

    pub(super) fn vec3(&self, i: usize) -> Vec3 {
        match self.element(i) {
            Some(bytes) => {
                let size = self.component.bytes();
                let at = |c: usize| self.component.decode(&bytes[c * size..(c + 1) * size], self.normalized);
                Vec3::new(at(0), at(1), at(2))
            }
            None => Vec3::ZERO,
        }
    }

    pub(super) fn describe(&self) -> String {
        format!("{}{}", self.component.name(), if self.normalized { " normalized" } else { "" })
    }

    pub(super) fn is_sparse(&self) -> bool {
        self.sparse.is_some()
    }
}

/// A bufferView's place: `(buffer, offset, length, stride)`, the view checked to lie within its (loaded) buffer.
fn view(buffers: &mut Buffers<'_>, index: u64) -> Result<(u64, u64, u64, Option<u64>), SceneError> {
    let e = buffers.e;
    let view = item(e, buffers.doc, "bufferViews", index)?;
    let what = format!("bufferView {index}");
    let buffer_index = req_u64(e, view, "buffer", &what)?;
    let offset = opt_u64(e, view, "byteOffset", &what)?.unwrap_or(0);
    let length = req_u64(e, view, "byteLength", &what)?;
    let stride = opt_u64(e, view, "byteStride", &what)?;
    let buffer = buffers.get(buffer_index)?;
    let end = u128::from(offset) + u128::from(length);
    if end > buffer.len() as u128 {
        return Err(e.body(format!(
            "{what} spans bytes {offset}..{end}, past the {} bytes of buffer {buffer_index}",
            buffer.len()
        )));
    }
    Ok((buffer_index, offset, length, stride))
}

/// Reads accessor `index` for attribute `name`: `components` values of an allowed type per element, every byte it
/// covers checked to lie in its bufferView and buffer. `max_zeros`: the most elements an accessor whose base is
/// zeros (no bufferView) may declare, as it has no bytes to bound its count.
pub(super) fn read_accessor(
    buffers: &mut Buffers<'_>,
    index: u64,
    name: &str,
    components: usize,
    allowed: Allowed,
    max_zeros: u64,
) -> Result<Layout, SceneError> {
    let e = buffers.e;
    let doc = buffers.doc;
    let accessor = item(e, doc, "accessors", index)?;
    let what = format!("accessor {index} ({name})");
    let code = req_u64(e, accessor, "componentType", &what)?;
    let component =
        Component::from_code(code).ok_or_else(|| e.body(format!("{what}: unknown componentType {code}")))?;
    let normalized = accessor.get("normalized").and_then(Value::as_bool).unwrap_or(false);
    let kind = accessor.get("type").and_then(Value::as_str).unwrap_or("(none)");
    let expected = match components {
        1 => "SCALAR",
        3 => "VEC3",
        _ => "VEC4",
    };
    if kind != expected {
        return Err(e.unsupported(format!("{what} is {kind}; {name} is {expected}")));
    }
    if !allowed.contains(&(component, normalized)) {
        let list: Vec<String> =
            allowed.iter().map(|(c, n)| format!("{}{}", c.name(), if *n { " normalized" } else { "" })).collect();
        return Err(e.unsupported(format!(
            "{what} holds {}{}; {name} may be {}",
            component.name(),
            if normalized { " normalized" } else { "" },
            list.join(", ")
        )));
    }
    let count = req_u64(e, accessor, "count", &what)?;
    if count == 0 {
        return Err(SceneError::Empty { path: e.path.clone() });
    }
    if count > MAX_TILED_SPLATS {
        return Err(SceneError::TooManySplats { path: e.path.clone(), count });
    }
    let element = (components * component.bytes()) as u64;
    let base = match opt_u64(e, accessor, "bufferView", &what)? {
        None => {
            if count > max_zeros {
                return Err(e.unsupported(format!(
                    "{what} declares {count} elements with no bufferView (zeros), more than the {max_zeros} the \
                     file's bytes can stand for"
                )));
            }
            None
        }
        Some(view_index) => {
            let (buffer, view_offset, view_length, stride) = view(buffers, view_index)?;
            let stride = stride.unwrap_or(element);
            if stride < element {
                return Err(e.body(format!(
                    "bufferView {view_index}'s byteStride {stride} is shorter than an element of {what} ({element} \
                     bytes)"
                )));
            }
            let accessor_offset = opt_u64(e, accessor, "byteOffset", &what)?.unwrap_or(0);
            // Every number is at most 2^64 here; u128 cannot overflow.
            let needed = u128::from(accessor_offset) + u128::from(stride) * u128::from(count - 1) + u128::from(element);
            if needed > u128::from(view_length) {
                return Err(e.body(format!(
                    "{what} declares {count} elements at offset {accessor_offset} with stride {stride} ({needed} \
                     bytes), past the {view_length} bytes of bufferView {view_index}"
                )));
            }
            // All within the buffer (checked by `view`), so each fits in usize.
            Some((
                Span {
                    buffer,
                    start: (view_offset + accessor_offset) as usize,
                    end: (view_offset + view_length) as usize,
                },
                stride as usize,
            ))
        }
    };
    let sparse = match accessor.get("sparse") {
        None => None,
        Some(sparse) => Some(read_sparse(buffers, sparse, &what, count, element)?),
    };
    let (base, stride) = match base {
        Some((span, stride)) => (Some(span), stride),
        None => (None, element as usize),
    };
    Ok(Layout { base, stride, component, normalized, count: count as usize, element: element as usize, sparse })
}

/// A sparse accessor's indices (decoded and checked) and the span of its values. Every size is checked against
/// the views before the indices are allocated, so their number is bounded by the bytes the file holds.
fn read_sparse(
    buffers: &mut Buffers<'_>,
    sparse: &Value,
    what: &str,
    count: u64,
    element: u64,
) -> Result<(Vec<u32>, Span), SceneError> {
    let e = buffers.e;
    let what = format!("{what}'s sparse");
    let replaced = req_u64(e, sparse, "count", &what)?;
    if replaced == 0 || replaced > count {
        return Err(e.body(format!("{what} `count` is {replaced}; it must be from 1 to the accessor's {count}")));
    }
    let part = |key: &str| {
        sparse.get(key).filter(|v| v.is_object()).ok_or_else(|| e.body(format!("{what} has no `{key}` object")))
    };
    let (indices, values) = (part("indices")?, part("values")?);
    let indices_what = format!("{what} indices");
    let code = req_u64(e, indices, "componentType", &indices_what)?;
    let index_type = match Component::from_code(code) {
        Some(c @ (Component::U8 | Component::U16 | Component::U32)) => c,
        _ => {
            return Err(e.body(format!(
                "{indices_what}: componentType {code}; sparse indices are unsigned bytes, shorts or ints (5121, \
                 5123, 5125)"
            )));
        }
    };
    // Each part's bytes within its view: (buffer, start, end).
    let mut place = |part: &Value, part_what: &str, size: u64| -> Result<Span, SceneError> {
        let view_index = req_u64(e, part, "bufferView", part_what)?;
        let (buffer, view_offset, view_length, stride) = view(buffers, view_index)?;
        if stride.is_some() {
            return Err(e.body(format!(
                "{part_what}: bufferView {view_index} has a byteStride; sparse indices and values are tightly packed"
            )));
        }
        let offset = opt_u64(e, part, "byteOffset", part_what)?.unwrap_or(0);
        let needed = u128::from(offset) + u128::from(size) * u128::from(replaced);
        if needed > u128::from(view_length) {
            return Err(e.body(format!(
                "{part_what}: {replaced} elements of {size} bytes at offset {offset} run past the {view_length} \
                 bytes of bufferView {view_index}"
            )));
        }
        let start = (view_offset + offset) as usize;
        Ok(Span { buffer, start, end: start + (size * replaced) as usize })
    };
    let index_span = place(indices, &indices_what, index_type.bytes() as u64)?;
    let values_span = place(values, &format!("{what} values"), element)?;
    let bytes = buffers.loaded(index_span.buffer).and_then(|b| b.get(index_span.start..index_span.end));
    let bytes = bytes.ok_or_else(|| e.body(format!("{indices_what}: the buffer is not loaded")))?;
    let mut decoded = Vec::with_capacity(replaced as usize);
    for (at, raw) in bytes.chunks_exact(index_type.bytes()).enumerate() {
        let index = match *raw {
            [a] => u64::from(a),
            [a, b] => u64::from(u16::from_le_bytes([a, b])),
            [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
            // Index components are 1, 2 or 4 bytes; anything else is refused as out of range.
            _ => u64::MAX,
        };
        if index >= count {
            return Err(e.body(format!("{indices_what}[{at}] is {index}, past the accessor's {count} elements")));
        }
        if let Some(&before) = decoded.last()
            && index <= u64::from(before)
        {
            return Err(e.body(format!(
                "{indices_what}[{at}] is {index}, not above the one before it ({before}); sparse indices rise \
                 strictly"
            )));
        }
        decoded.push(index as u32);
    }
    Ok((decoded, values_span))
}
