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
pub mod markup;
pub mod palette;
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

/// The figure as an RGB buffer (width, height, 3 bytes a pixel), drawing of the line
/// panels' series only those `(panel, series)` that `keep` accepts.
fn render_rgb(
    spec: &PlotSpec,
    points: &[Point],
    keep: &dyn Fn(&str, &str) -> bool,
) -> Result<(u32, u32, Vec<u8>), PlotError> {
    validate(spec)?;
    register_fonts();
    let (w, h) = render::image_size(spec);
    let mut rgb = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        render::draw_only(&root, spec, points, keep)?;
    }
    Ok((w, h, rgb))
}

/// Where every series of every line panel puts its points in the rendered image, in
/// drawing order (later entries are drawn over earlier ones).
pub fn series_pixels(
    spec: &PlotSpec,
    points: &[Point],
) -> Result<Vec<render::SeriesPixels>, PlotError> {
    validate(spec)?;
    register_fonts();
    let (w, h) = render::image_size(spec);
    let mut rgb = vec![255u8; (w * h * 3) as usize];
    let mut out = Vec::new();
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        render::draw_probed(&root, spec, points, &|_, _| true, &mut |s| out.push(s))?;
    }
    Ok(out)
}

/// What one series shows in one line panel, in pixels of the rendered PNG.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Visibility {
    /// Panel key.
    pub panel: String,
    /// Series key.
    pub series: String,
    /// Pixels the series changes when drawn alone in its panel (its footprint).
    pub alone: usize,
    /// Pixels that change when it is left out of the full figure: what remains visible
    /// after every other series (drawn after it or not) is drawn.
    pub visible: usize,
}

/// For every series with points in a line panel: its footprint and how much of it is
/// visible in the finished figure (a series hidden under a later one of the same
/// geometry shows 0). Measured by rendering the figure with and without it.
pub fn visibility(spec: &PlotSpec, points: &[Point]) -> Result<Vec<Visibility>, PlotError> {
    let count = |a: &[u8], b: &[u8]| a.chunks(3).zip(b.chunks(3)).filter(|(p, q)| p != q).count();
    let (_, _, full) = render_rgb(spec, points, &|_, _| true)?;
    let (_, _, none) = render_rgb(spec, points, &|_, _| false)?;
    let mut out = Vec::new();
    for panel in spec.panels.iter().filter(|p| p.kind == PanelKind::Lines) {
        for s in &spec.series {
            if !points
                .iter()
                .any(|p| p.panel == panel.key && p.series == s.key)
            {
                continue;
            }
            let is = |pk: &str, sk: &str| pk == panel.key && sk == s.key;
            let (_, _, alone) = render_rgb(spec, points, &|pk, sk| is(pk, sk))?;
            let (_, _, without) = render_rgb(spec, points, &|pk, sk| !is(pk, sk))?;
            out.push(Visibility {
                panel: panel.key.clone(),
                series: s.key.clone(),
                alone: count(&alone, &none),
                visible: count(&full, &without),
            });
        }
    }
    Ok(out)
}

/// Renders the figure as a PNG file's bytes.
pub fn render_png(spec: &PlotSpec, points: &[Point]) -> Result<Vec<u8>, PlotError> {
    let (w, h, rgb) = render_rgb(spec, points, &|_, _| true)?;
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
