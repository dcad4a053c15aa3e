//! The window and its swapchain: resizing, vsync, and a texture to draw into (or none this frame).

use std::sync::Arc;

use winit::window::Window;

/// The window and its swapchain.
pub struct Surface {
    pub window: Arc<Window>,
    pub surface: wgpu::Surface<'static>,
    pub config: wgpu::SurfaceConfiguration,
}

impl Surface {
    pub fn resize(&mut self, device: &wgpu::Device, width: u32, height: u32) {
        self.config.width = width;
        self.config.height = height;
        self.surface.configure(device, &self.config);
    }

    pub fn set_vsync(&mut self, device: &wgpu::Device, vsync: bool) {
        let mode = if vsync { wgpu::PresentMode::AutoVsync } else { wgpu::PresentMode::AutoNoVsync };
        if mode != self.config.present_mode {
            self.config.present_mode = mode;
            self.surface.configure(device, &self.config);
        }
    }

    /// The texture to draw into, or None when there is none this frame (minimised, lost: reconfigured).
    pub fn acquire(&mut self, device: &wgpu::Device) -> Option<wgpu::SurfaceTexture> {
        if self.config.width == 0 || self.config.height == 0 || self.window.is_minimized().unwrap_or(false) {
            return None;
        }
        match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t) | wgpu::CurrentSurfaceTexture::Suboptimal(t) => Some(t),
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(device, &self.config);
                None
            }
            _ => None,
        }
    }
}
