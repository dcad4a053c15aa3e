//! Mouse and keyboard into the camera: drag to orbit or pan, wheel to zoom, WASD QE to fly, F to frame. Events the
//! panel takes never reach the camera: a button press or wheel turn counts only when the pointer is outside the
//! panel's rectangle as laid out in the frame that sees the event (egui's own "is the pointer over me" answer lags
//! a frame, which let one wheel turn both scroll the panel and zoom).

use std::collections::HashSet;

use winit::event::{ElementState, MouseButton, WindowEvent};
use winit::keyboard::{KeyCode, PhysicalKey};

use crate::viewer::controls::OrbitCamera;

/// Points of a pixel-precise scroll (touchpads) per zoom step.
const POINTS_PER_STEP: f32 = 40.0;

/// Zoom steps in this frame's wheel events: one per line, as winit reports a wheel notch.
pub fn wheel_steps(events: &[egui::Event]) -> f32 {
    events
        .iter()
        .map(|event| match event {
            egui::Event::MouseWheel { unit: egui::MouseWheelUnit::Line, delta, .. } => delta.y,
            egui::Event::MouseWheel { unit: egui::MouseWheelUnit::Point, delta, .. } => delta.y / POINTS_PER_STEP,
            egui::Event::MouseWheel { unit: egui::MouseWheelUnit::Page, delta, .. } => delta.y * 10.0,
            _ => 0.0,
        })
        .sum()
}

pub struct Input {
    pub orbit: OrbitCamera,
    keys_down: HashSet<KeyCode>,
    dragging: Option<MouseButton>,
    /// Physical pixels.
    cursor: Option<(f64, f64)>,
    /// The panel's rectangle in physical pixels, from the newest frame.
    panel: Option<egui::Rect>,
    /// F was pressed: frame the scene.
    pub frame_requested: bool,
}

impl Input {
    pub fn new(orbit: OrbitCamera) -> Self {
        Self { orbit, keys_down: HashSet::new(), dragging: None, cursor: None, panel: None, frame_requested: false }
    }

    /// The panel's rectangle as this frame laid it out, in physical pixels.
    pub fn set_panel_rect(&mut self, rect: egui::Rect) {
        self.panel = Some(rect);
    }

    fn over_panel(&self, x: f64, y: f64) -> bool {
        self.panel.is_some_and(|r| r.contains(egui::pos2(x as f32, y as f32)))
    }

    /// A window event; `egui_consumed` is egui's answer for it (keyboard focus in a text field, say).
    pub fn handle(&mut self, event: &WindowEvent, egui_consumed: bool, height: u32) {
        match event {
            WindowEvent::KeyboardInput { event, .. } => {
                if let PhysicalKey::Code(code) = event.physical_key {
                    if event.state == ElementState::Pressed && !egui_consumed {
                        if code == KeyCode::KeyF {
                            self.frame_requested = true;
                        }
                        self.keys_down.insert(code);
                    } else if event.state == ElementState::Released {
                        self.keys_down.remove(&code);
                    }
                }
            }
            WindowEvent::Focused(false) => self.keys_down.clear(),
            WindowEvent::MouseInput { state, button, .. } => match state {
                ElementState::Pressed if self.cursor.is_some_and(|(x, y)| !self.over_panel(x, y)) => {
                    self.dragging = Some(*button)
                }
                ElementState::Released => self.dragging = None,
                _ => {}
            },
            WindowEvent::CursorMoved { position, .. } => {
                if let (Some(button), Some((x, y))) = (self.dragging, self.cursor) {
                    let (dx, dy) = ((position.x - x) as f32, (position.y - y) as f32);
                    match button {
                        MouseButton::Left => self.orbit.orbit(dx, dy),
                        MouseButton::Right | MouseButton::Middle => self.orbit.pan(dx, dy, height as f32),
                        _ => {}
                    }
                }
                self.cursor = Some((position.x, position.y));
            }
            WindowEvent::CursorLeft { .. } => self.cursor = None,
            _ => {}
        }
    }

    /// The frame's wheel steps zoom when the pointer is outside this frame's panel.
    pub fn scroll(&mut self, steps: f32, pointer_over_panel: bool) {
        if steps != 0.0 && !pointer_over_panel {
            self.orbit.zoom(steps);
        }
    }

    /// Flies by the held keys for `dt` seconds (not while a text field has the keyboard).
    pub fn fly(&mut self, dt: f32, keyboard_taken: bool) {
        if keyboard_taken {
            return;
        }
        let key = |k: KeyCode| if self.keys_down.contains(&k) { 1.0 } else { 0.0 };
        let local = glam::Vec3::new(
            key(KeyCode::KeyD) - key(KeyCode::KeyA),
            key(KeyCode::KeyE) - key(KeyCode::KeyQ),
            key(KeyCode::KeyW) - key(KeyCode::KeyS),
        );
        if local != glam::Vec3::ZERO {
            let fast = self.keys_down.contains(&KeyCode::ShiftLeft) || self.keys_down.contains(&KeyCode::ShiftRight);
            self.orbit.fly(local, dt, fast);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wheel(unit: egui::MouseWheelUnit, y: f32) -> egui::Event {
        egui::Event::MouseWheel {
            unit,
            delta: egui::vec2(0.0, y),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers: Default::default(),
        }
    }

    #[test]
    fn the_wheel_zooms_outside_the_panel_only() {
        let events = [wheel(egui::MouseWheelUnit::Line, 1.0), wheel(egui::MouseWheelUnit::Point, 40.0)];
        assert_eq!(wheel_steps(&events), 2.0, "a line is a step, and so are 40 points");
        let mut input =
            Input::new(OrbitCamera::frame(glam::Vec3::ZERO, glam::Vec3::ONE, crate::viewer::controls::UpAxis::NegY));
        let start = input.orbit.eye();
        input.scroll(2.0, true);
        assert_eq!(input.orbit.eye(), start, "over the panel the wheel scrolls the panel, not the camera");
        input.scroll(2.0, false);
        assert_ne!(input.orbit.eye(), start, "over the view it zooms");
    }
}
