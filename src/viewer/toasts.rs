//! Status messages as toasts over the 3D view, so they never push the panel's buttons around: notes fade after a
//! few seconds; errors stay, in their own colour, until closed.

/// Seconds a note stays.
const NOTE_SECS: f64 = 4.0;
/// Errors kept at most (the oldest go first).
const MAX_ERRORS: usize = 5;

struct Toast {
    text: String,
    error: bool,
    /// When it was first shown (egui time), set on the first frame it is drawn.
    since: Option<f64>,
}

#[derive(Default)]
pub struct Toasts {
    items: Vec<Toast>,
    /// Every error of the run, for the scripted run's summary.
    pub errors_seen: Vec<String>,
}

impl Toasts {
    pub fn note(&mut self, text: impl Into<String>) {
        let text = text.into();
        log::info!("{text}");
        self.items.push(Toast { text, error: false, since: None });
    }

    pub fn error(&mut self, text: impl Into<String>) {
        let text = text.into();
        log::warn!("{text}");
        self.errors_seen.push(text.clone());
        self.items.push(Toast { text, error: true, since: None });
        while self.items.iter().filter(|t| t.error).count() > MAX_ERRORS {
            let oldest = self.items.iter().position(|t| t.error).expect("an error");
            self.items.remove(oldest);
        }
    }

    /// Draws the toasts in the top-right corner of the screen and drops expired notes.
    pub fn show(&mut self, ctx: &egui::Context) {
        let now = ctx.input(|i| i.time);
        self.items.retain(|t| t.error || t.since.is_none_or(|s| now - s < NOTE_SECS));
        if self.items.is_empty() {
            return;
        }
        let mut close = None;
        egui::Area::new(egui::Id::unique("toasts"))
            .anchor(egui::Align2::RIGHT_TOP, [-12.0, 12.0])
            .order(egui::Order::Foreground)
            .show(ctx, |ui| {
                ui.set_max_width(420.0);
                for (i, toast) in self.items.iter_mut().enumerate() {
                    let since = *toast.since.get_or_insert(now);
                    let frame = egui::Frame::popup(ui.style());
                    frame.show(ui, |ui| {
                        ui.horizontal(|ui| {
                            if toast.error {
                                ui.colored_label(ui.visuals().error_fg_color, &toast.text);
                                if ui.small_button("x").on_hover_text("close").clicked() {
                                    close = Some(i);
                                }
                            } else {
                                let fade = (1.0 - (now - since) / NOTE_SECS).clamp(0.2, 1.0) as f32;
                                ui.label(
                                    egui::RichText::new(&toast.text)
                                        .color(ui.visuals().text_color().gamma_multiply(fade)),
                                );
                            }
                        });
                    });
                }
            });
        if let Some(i) = close {
            self.items.remove(i);
        }
        // Notes fade: ask for the frames that show it (errors stand still and need none).
        if self.items.iter().any(|t| !t.error) {
            ctx.request_repaint();
        }
    }
}
