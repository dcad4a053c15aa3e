//! Why a sort could not be set up or recorded.

use crate::KeyType;

/// Why a sort could not be set up or recorded. Every check happens before any GPU work.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SortError {
    /// Radix bits other than 1, 2, 4 or 8.
    #[error("radix bits must be 1, 2, 4 or 8, not {0}")]
    RadixBits(u32),
    /// Radix bits the algorithm does not take.
    #[error("the {algorithm} sort takes {accepted:?} radix bits, not {radix_bits}")]
    RadixBitsFor {
        /// The algorithm's name.
        algorithm: &'static str,
        /// What was asked for.
        radix_bits: u32,
        /// What it takes.
        accepted: &'static [u32],
    },
    /// The device lacks what the algorithm needs.
    #[error("the {algorithm} sort cannot run on this device: {reason}")]
    Unavailable {
        /// The algorithm's name.
        algorithm: &'static str,
        /// What is missing.
        reason: String,
    },
    /// Key bits outside 1 to 32 (1 to 64 for u64 keys).
    #[error("key bits must be between 1 and 32 (64 for u64 keys), not {0}")]
    KeyBits(u32),
    /// Key bits the key type does not take (signed and float keys are sorted on all 32).
    #[error("{} keys are sorted on {} bits, not {key_bits}", key_type.name(), describe_bits(*key_type))]
    KeyBitsForType {
        /// The key type.
        key_type: KeyType,
        /// What was asked for.
        key_bits: u32,
    },
    /// A key type the algorithm does not sort (u64 keys are OneSweep's).
    #[error("the {algorithm} sort takes 32-bit keys; {} keys are sorted by onesweep", key_type.name())]
    KeyTypeFor {
        /// The algorithm's name.
        algorithm: &'static str,
        /// The key type.
        key_type: KeyType,
    },
    /// Keys of one width in buffers made for the other.
    #[error(
        "{} keys take buffers of {}-bit keys (SortBuffers::{}); these hold {buffer_bits}-bit keys",
        key_type.name(),
        32 * key_type.words(),
        if key_type.words() == 2 { "new_u64" } else { "new" }
    )]
    KeyWidth {
        /// The settings' key type.
        key_type: KeyType,
        /// The key width the buffers were made for.
        buffer_bits: u32,
    },
    /// A circular status table outside `OnesweepOptions::STATUS_ENTRIES`.
    #[error("the status table takes 4 to 65536 entries, not {0}")]
    StatusEntries(u32),
    /// A OneSweep tile the device cannot run.
    #[error(
        "a OneSweep tile of {threads} threads x {keys_per_thread} keys cannot run on this device: it takes 256 to \
         1024 threads (a multiple of 128, at most {max_threads} here) and 1 to 24 keys per thread, and needs \
         {needed} bytes of workgroup memory (the limit here is {limit}, max_compute_workgroup_storage_size)"
    )]
    TileShape {
        /// Threads per workgroup asked for.
        threads: u32,
        /// Keys per thread asked for.
        keys_per_thread: u32,
        /// Workgroup memory the tile needs, bytes.
        needed: u64,
        /// The device's workgroup memory, bytes.
        limit: u64,
        /// The device's most invocations per workgroup.
        max_threads: u32,
    },
    /// More keys than the buffers hold.
    #[error("{requested} keys exceed the sorter's capacity of {capacity}")]
    OverCapacity {
        /// Keys asked for.
        requested: u64,
        /// Keys the buffers hold.
        capacity: u64,
    },
    /// A caller's buffer (`SortBuffers::from_buffers`) without the usages a sort needs.
    #[error("{what} has usages {usage:?}; a sort needs STORAGE | COPY_DST | COPY_SRC")]
    BufferUsage {
        /// Which buffer.
        what: &'static str,
        /// Its usages.
        usage: wgpu::BufferUsages,
    },
    /// A caller's buffer (`SortBuffers::from_buffers`) too small for the capacity.
    #[error("{what} holds {size} bytes; the capacity needs {needed}")]
    BufferSize {
        /// Which buffer.
        what: &'static str,
        /// Its size, bytes.
        size: u64,
        /// What the capacity needs, bytes.
        needed: u64,
    },
    /// A buffer past the device's limits.
    #[error(
        "{what} would take {needed} bytes, over the device's limit of {limit} bytes ({limit_name}); \
         sort fewer keys or use a GPU with larger buffers"
    )]
    DeviceLimit {
        /// Which buffer.
        what: &'static str,
        /// Its size, bytes.
        needed: u64,
        /// The device's limit, bytes.
        limit: u64,
        /// The name of that limit in `wgpu::Limits`.
        limit_name: &'static str,
    },
}

/// "1 to 32", or "all 32" where there is one choice.
fn describe_bits(key_type: KeyType) -> String {
    let bits = key_type.key_bits();
    if bits.start() == bits.end() {
        format!("all {}", bits.end())
    } else {
        format!("{} to {}", bits.start(), bits.end())
    }
}

/// Checks that a buffer of `needed` bytes can be made and bound on `device`.
pub(crate) fn check_binding(device: &wgpu::Device, what: &'static str, needed: u64) -> Result<(), SortError> {
    let limits = device.limits();
    for (limit, limit_name) in [
        (limits.max_storage_buffer_binding_size, "max_storage_buffer_binding_size"),
        (limits.max_buffer_size, "max_buffer_size"),
    ] {
        if needed > limit {
            return Err(SortError::DeviceLimit { what, needed, limit, limit_name });
        }
    }
    Ok(())
}
