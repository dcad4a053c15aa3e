//! The window and its swapchain: resizing, vsync, and a texture to draw into (or none this frame).

use std::sync::Arc;

use winit::event_loop::ActiveEventLoop;
use winit::window::Window;

use crate::gpu::{AdapterPreference, GpuContext};

/// The window and its swapchain.
pub struct Surface {
    pub window: Arc<Window>,
    pub surface: wgpu::Surface<'static>,
    pub config: wgpu::SurfaceConfiguration,
}

impl Surface {
    /// Opens a window titled `title` of `width` x `height` pixels, a device that can present to it (a hardware
    /// adapter where there is one) and its swapchain.
    pub fn open(
        event_loop: &ActiveEventLoop,
        title: &str,
        (width, height): (u32, u32),
    ) -> anyhow::Result<(Self, GpuContext)> {
        let attributes = Window::default_attributes()
            .with_title(title)
            .with_inner_size(winit::dpi::PhysicalSize::new(width, height));
        let window = Arc::new(event_loop.create_window(attributes)?);
        let mut descriptor =
            wgpu::InstanceDescriptor::new_with_display_handle_from_env(Box::new(event_loop.owned_display_handle()));
        descriptor.backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
        descriptor.flags = crate::gpu::instance_flags(descriptor.flags);
        let instance = wgpu::Instance::new(descriptor);
        let surface = instance.create_surface(Arc::clone(&window))?;
        let ctx = pollster::block_on(GpuContext::with_instance(instance, Some(&surface), AdapterPreference::Hardware))?;
        let size = window.inner_size();
        let caps = surface.get_capabilities(&ctx.adapter);
        // A non-sRGB format: splat colours are display values already (the blit handles sRGB if that is all there is).
        let format = caps.formats.iter().copied().find(|f| !f.is_srgb()).unwrap_or(caps.formats[0]);
        let config = wgpu::SurfaceConfiguration {
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            format,
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode: wgpu::PresentMode::AutoVsync,
            desired_maximum_frame_latency: 2,
            alpha_mode: caps.alpha_modes[0],
            color_space: wgpu::SurfaceColorSpace::Auto,
            view_formats: vec![],
        };
        surface.configure(&ctx.device, &config);
        Ok((Self { window, surface, config }, ctx))
    }

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
