//! Renders a tidy table (as [`Point`]s) and a [`PlotSpec`] to SVG and PNG.
//!
//! Several panels on a grid, linear or log axes per panel, one shared legend, solid,
//! dashed or dotted lines, markers and error bars. Text is drawn from the DejaVu Sans
//! font embedded in the binary (plotters' pure-Rust `ab_glyph` path), so PNGs render the
//! same on a bare machine without system font libraries.
//!
//! ```
//! let spec: plotting::PlotSpec = toml::from_str(r##"
//!     title = "demo"
//!     [[panels]]
//!     key = "a"
//!     title = "panel a"
//!     x = { label = "x", scale = "log" }
//!     y = { label = "y", scale = "linear", min = 0.0 }
//!     [[series]]
//!     key = "s"
//!     label = "a series"
//!     color = "#1f77b4"
//! "##).unwrap();
//! plotting::validate(&spec).unwrap();
//! let pts: Vec<plotting::Point> = (1..5)
//!     .map(|i| plotting::Point {
//!         panel: "a".into(), series: "s".into(), x: 10f64.powi(i), y: i as f64,
//!         y_lo: None, y_hi: None, z: None,
//!     })
//!     .collect();
//! let svg = plotting::render_svg(&spec, &pts).unwrap();
//! assert!(svg.starts_with("<svg"));
//! ```

#![deny(missing_docs)]

pub mod axis;
pub mod render;
pub mod spec;

pub use spec::{
    validate, AxisSpec, LineStyle, PanelKind, PanelSpec, PlotSpec, Point, Scale, SeriesStyle,
};

use plotters::prelude::*;
use std::sync::Once;

/// What can go wrong while plotting.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The spec is invalid (message names the key).
    #[error("{0}")]
    Spec(String),
    /// The data do not fit the spec.
    #[error("{0}")]
    Data(String),
    /// The backend failed.
    #[error("drawing failed: {0}")]
    Draw(String),
    /// PNG encoding failed.
    #[error("PNG encoding failed: {0}")]
    Png(String),
}

static FONTS: Once = Once::new();

/// Registers the embedded DejaVu Sans as plotters' "sans-serif" (once per process).
fn register_fonts() {
    FONTS.call_once(|| {
        // The embedded fonts are valid TTFs; a failure here would only drop text.
        let _ = plotters::style::register_font(
            "sans-serif",
            FontStyle::Normal,
            dejavu::sans::regular(),
        );
        let _ = plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Renders the figure as an SVG document.
pub fn render_svg(spec: &PlotSpec, points: &[Point]) -> Result<String, PlotError> {
    validate(spec)?;
    register_fonts();
    let size = render::image_size(spec);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        render::draw(&root, spec, points)?;
    }
    Ok(out)
}

/// Renders the figure as a PNG file's bytes.
pub fn render_png(spec: &PlotSpec, points: &[Point]) -> Result<Vec<u8>, PlotError> {
    validate(spec)?;
    register_fonts();
    let (w, h) = render::image_size(spec);
    let mut rgb = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        render::draw(&root, spec, points)?;
    }
    let mut bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc
            .write_header()
            .map_err(|e| PlotError::Png(e.to_string()))?;
        writer
            .write_image_data(&rgb)
            .map_err(|e| PlotError::Png(e.to_string()))?;
    }
    Ok(bytes)
}
