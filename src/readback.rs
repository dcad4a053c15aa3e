//! One asynchronous GPU-to-CPU readback, shared by everything that reads results without stalling a frame: the
//! timer ring, the viewer's counts, sort checks and screenshots, the sort laboratory's checks.
//!
//! How it works: a mappable buffer and an atomic state, free -> in flight (after the submission that fills it,
//! `map`) -> mapped or failed (set by wgpu's callback when the device is polled) -> free again once `take` has read
//! it. Nothing here waits.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

const FREE: u8 = 0;
const IN_FLIGHT: u8 = 1;
const MAPPED: u8 = 2;
const FAILED: u8 = 3;

/// A fixed-size GPU-to-CPU copy mapped asynchronously: free, in flight, or mapped (or failed) and ready to take.
pub struct AsyncReadback {
    pub buffer: wgpu::Buffer,
    state: Arc<AtomicU8>,
    /// Bytes of the current mapping.
    mapped: AtomicU64,
}

impl AsyncReadback {
    pub fn new(device: &wgpu::Device, label: &str, size: u64) -> Self {
        Self::of(device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        }))
    }

    /// Tracks an existing mappable buffer.
    pub fn of(buffer: wgpu::Buffer) -> Self {
        Self { buffer, state: Arc::new(AtomicU8::new(FREE)), mapped: AtomicU64::new(0) }
    }

    pub fn is_free(&self) -> bool {
        self.state.load(Ordering::Acquire) == FREE
    }

    pub fn is_in_flight(&self) -> bool {
        self.state.load(Ordering::Acquire) == IN_FLIGHT
    }

    /// Mapped or failed: `take` will answer.
    pub fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) >= MAPPED
    }

    /// After the submission that fills it: maps the whole buffer.
    pub fn map(&self) {
        self.map_prefix(self.buffer.size());
    }

    /// After the submission that fills it: maps the first `bytes`.
    pub fn map_prefix(&self, bytes: u64) {
        self.state.store(IN_FLIGHT, Ordering::Release);
        self.mapped.store(bytes, Ordering::Relaxed);
        let state = Arc::clone(&self.state);
        self.buffer.map_async(wgpu::MapMode::Read, 0..bytes, move |result| {
            state.store(if result.is_ok() { MAPPED } else { FAILED }, Ordering::Release);
        });
    }

    /// Reads the mapped bytes with `read`; the buffer is free again afterwards. None while in flight or free, or
    /// when the mapping failed (the buffer is freed then too).
    pub fn take_with<T>(&self, read: impl FnOnce(&[u8]) -> T) -> Option<T> {
        match self.state.load(Ordering::Acquire) {
            MAPPED => {
                let bytes = self.mapped.load(Ordering::Relaxed);
                let value = self.buffer.get_mapped_range(0..bytes).ok().map(|v| read(&v));
                self.buffer.unmap();
                self.state.store(FREE, Ordering::Release);
                value
            }
            FAILED => {
                self.state.store(FREE, Ordering::Release);
                None
            }
            _ => None,
        }
    }

    /// The bytes, if mapped; the buffer is free again afterwards.
    pub fn take(&self) -> Option<Vec<u8>> {
        self.take_with(<[u8]>::to_vec)
    }

    /// Drops a finished result unread, freeing the buffer.
    pub fn discard(&self) {
        let _ = self.take_with(|_| ());
    }
}
