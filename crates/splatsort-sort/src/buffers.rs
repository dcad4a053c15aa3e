//! The keys and values a sort works on, owned by the caller: made here, or the caller's own buffers.

use crate::{KeyType, SortError, check_binding};

/// The keys and values a sort works on, owned by the caller: two ping-pong buffer sets. Inputs go into set 0 (the depth
/// pass writes them there); a sort's result lands in pair `GpuSort::output_set()`.
pub struct SortBuffers {
    keys: [wgpu::Buffer; 2],
    values: [wgpu::Buffer; 2],
    /// The number of pairs to sort when only the GPU knows it (`GpuSort::record_gpu_count`): one u32.
    count: wgpu::Buffer,
    capacity: u32,
    /// u32 words per key: 1, or 2 for u64 keys.
    key_words: u32,
}

impl SortBuffers {
    /// Buffers for up to `capacity` pairs of u32 keys (any 32-bit key type). Fails, before anything is made, past
    /// the device's limits.
    pub fn new(device: &wgpu::Device, capacity: u32) -> Result<Self, SortError> {
        Self::with_key_words(device, capacity, 1)
    }

    /// Buffers for up to `capacity` pairs of u64 keys (`KeyType::U64`: OneSweep).
    pub fn new_u64(device: &wgpu::Device, capacity: u32) -> Result<Self, SortError> {
        Self::with_key_words(device, capacity, 2)
    }

    fn with_key_words(device: &wgpu::Device, capacity: u32, key_words: u32) -> Result<Self, SortError> {
        let value_bytes = u64::from(capacity.max(1)) * 4;
        let key_bytes = value_bytes * u64::from(key_words);
        check_binding(device, "the key and value buffers", key_bytes)?;
        let make = |label: &str, bytes: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: Self::USAGE,
                mapped_at_creation: false,
            })
        };
        Ok(Self {
            keys: [make("sort keys 0", key_bytes), make("sort keys 1", key_bytes)],
            values: [make("sort values 0", value_bytes), make("sort values 1", value_bytes)],
            count: count_buffer(device),
            capacity,
            key_words,
        })
    }

    /// The usages a buffer of keys or values needs: bound as storage, and copied to and from (inputs, readbacks).
    pub const USAGE: wgpu::BufferUsages =
        wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_DST).union(wgpu::BufferUsages::COPY_SRC);

    /// Sorts in buffers another part of the program made and keeps using: `keys[0]` and `values[0]` hold the input,
    /// `keys[1]` and `values[1]` are the ping-pong partners, for up to `capacity` pairs of keys of `key_type`'s width
    /// (wgpu buffers are shared handles: the caller keeps its clones). Each buffer needs `USAGE` and room for
    /// `capacity` entries (two words a key for u64 keys), checked here, before any GPU work.
    pub fn from_buffers(
        device: &wgpu::Device,
        keys: [wgpu::Buffer; 2],
        values: [wgpu::Buffer; 2],
        capacity: u32,
        key_type: KeyType,
    ) -> Result<Self, SortError> {
        let key_words = key_type.words();
        let value_bytes = u64::from(capacity.max(1)) * 4;
        let key_bytes = value_bytes * u64::from(key_words);
        check_binding(device, "the key and value buffers", key_bytes)?;
        let named = [("keys[0]", &keys[0], key_bytes), ("keys[1]", &keys[1], key_bytes)];
        let named =
            named.into_iter().chain([("values[0]", &values[0], value_bytes), ("values[1]", &values[1], value_bytes)]);
        for (what, buffer, needed) in named {
            if !buffer.usage().contains(Self::USAGE) {
                return Err(SortError::BufferUsage { what, usage: buffer.usage() });
            }
            if buffer.size() < needed {
                return Err(SortError::BufferSize { what, size: buffer.size(), needed });
            }
        }
        Ok(Self { keys, values, count: count_buffer(device), capacity, key_words })
    }

    /// The most pairs the buffers hold.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// u32 words per key: 1, or 2 for buffers of u64 keys.
    pub fn key_words(&self) -> u32 {
        self.key_words
    }

    /// Whether these buffers hold keys of `key_type`'s width.
    pub(crate) fn check_key_type(&self, key_type: KeyType) -> Result<(), SortError> {
        if key_type.words() != self.key_words {
            return Err(SortError::KeyWidth { key_type, buffer_bits: 32 * self.key_words });
        }
        Ok(())
    }

    /// The keys of buffer set `set` (0 or 1).
    pub fn keys(&self, set: usize) -> &wgpu::Buffer {
        &self.keys[set]
    }

    /// The values of buffer set `set` (0 or 1).
    pub fn values(&self, set: usize) -> &wgpu::Buffer {
        &self.values[set]
    }

    /// Where a GPU pass puts the number of pairs to sort (its first u32) for `GpuSort::record_gpu_count`; a count
    /// past the capacity sorts the capacity.
    pub fn count(&self) -> &wgpu::Buffer {
        &self.count
    }

    pub(crate) fn check_len(&self, num_keys: u64) -> Result<(), SortError> {
        if num_keys > u64::from(self.capacity) {
            return Err(SortError::OverCapacity { requested: num_keys, capacity: u64::from(self.capacity) });
        }
        Ok(())
    }

    /// Uploads keys and values into set 0 (tests and benchmarks; the renderer writes them on the GPU).
    pub fn write_input(&self, queue: &wgpu::Queue, keys: &[u32], values: &[u32]) -> Result<(), SortError> {
        self.check_key_type(KeyType::U32)?;
        self.write_words(queue, bytemuck::cast_slice(keys), values)
    }

    /// Uploads u64 keys and values into set 0 of buffers made by `new_u64`.
    pub fn write_input_u64(&self, queue: &wgpu::Queue, keys: &[u64], values: &[u32]) -> Result<(), SortError> {
        self.check_key_type(KeyType::U64)?;
        self.write_words(queue, bytemuck::cast_slice(keys), values)
    }

    fn write_words(&self, queue: &wgpu::Queue, key_bytes: &[u8], values: &[u32]) -> Result<(), SortError> {
        let num_keys = key_bytes.len() / (4 * self.key_words as usize);
        assert_eq!(num_keys, values.len(), "one value per key");
        self.check_len(num_keys as u64)?;
        if num_keys > 0 {
            queue.write_buffer(&self.keys[0], 0, key_bytes);
            queue.write_buffer(&self.values[0], 0, bytemuck::cast_slice(values));
        }
        Ok(())
    }

    /// Reads the first `num_keys` pairs of buffer set `set` back (blocking: tests, benchmarks, the viewer's verify
    /// button). Keys come back as u32 words: two per key, low word first, from buffers of u64 keys.
    pub fn read_blocking(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        set: usize,
        num_keys: u32,
    ) -> (Vec<u32>, Vec<u32>) {
        let bytes = u64::from(num_keys) * 4;
        let keys = crate::util::read_buffer_blocking(device, queue, &self.keys[set], bytes * u64::from(self.key_words));
        let values = crate::util::read_buffer_blocking(device, queue, &self.values[set], bytes);
        (bytemuck::pod_collect_to_vec(&keys), bytemuck::pod_collect_to_vec(&values))
    }

    /// Reads the first `num_keys` u64 keys and their values of buffer set `set` back (blocking: tests, benchmarks).
    pub fn read_u64_blocking(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        set: usize,
        num_keys: u32,
    ) -> (Vec<u64>, Vec<u32>) {
        assert_eq!(self.key_words, 2, "buffers of u64 keys");
        let (words, values) = self.read_blocking(device, queue, set, num_keys);
        (words.chunks_exact(2).map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32)).collect(), values)
    }

    /// GPU memory of the buffers (the caller's too, for `from_buffers`).
    pub fn allocated_bytes(&self) -> u64 {
        self.keys.iter().chain(&self.values).map(wgpu::Buffer::size).sum::<u64>() + self.count.size()
    }
}

/// The one-u32 count `GpuSort::record_gpu_count` reads (16 bytes: room for a GPU pass's other words).
fn count_buffer(device: &wgpu::Device) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("sort count"),
        size: 16,
        usage: SortBuffers::USAGE,
        mapped_at_creation: false,
    })
}
