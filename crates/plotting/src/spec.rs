//! The plot specification a manifest's `[plot]` table deserialises into, and the points
//! an experiment hands over.

use crate::palette::resolve_color;
use crate::PlotError;
use serde::Deserialize;

/// How an axis maps values to pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    /// Equal distances for equal differences.
    Linear,
    /// Equal distances for equal ratios (values must be > 0).
    Log,
}

/// One axis of a panel.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisSpec {
    /// The axis label.
    pub label: String,
    /// Linear or logarithmic.
    pub scale: Scale,
    /// Lower end; taken from the data when absent.
    #[serde(default)]
    pub min: Option<f64>,
    /// Upper end; taken from the data when absent.
    #[serde(default)]
    pub max: Option<f64>,
}

/// What a panel draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PanelKind {
    /// Series as lines and markers (the default).
    #[default]
    Lines,
    /// A grid of cells: `x` is the column, `y` the row (0 at the top), the point's `z` the
    /// value. All heatmap panels of a figure share one colour scale.
    Heatmap,
}

/// One panel: a pair of axes and a title; the data's `panel` column selects it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PanelSpec {
    /// The value of the `panel` column drawn here.
    pub key: String,
    /// Panel title. `{name}` is replaced by the value of column `name` in the panel's
    /// first row (done by the caller, see `dpw`).
    pub title: String,
    /// Lines (default) or heatmap.
    #[serde(default)]
    pub kind: PanelKind,
    /// Horizontal axis.
    pub x: AxisSpec,
    /// Vertical axis.
    pub y: AxisSpec,
}

/// How a series' points are joined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineStyle {
    /// A continuous line.
    Solid,
    /// Dashes.
    Dashed,
    /// Dots.
    Dotted,
    /// No line (markers only).
    None,
}

/// How one series is drawn, in every panel it appears in.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeriesStyle {
    /// The value of the `series` column drawn with this style.
    pub key: String,
    /// Legend text.
    pub label: String,
    /// Colour: a name from the shared [`crate::palette`] (`"laplace"`, `"gaussian"`,
    /// `"gaussian:dark"`, `"reference"`, …) or `#rrggbb`.
    pub color: String,
    /// Line style.
    #[serde(default = "default_line")]
    pub line: LineStyle,
    /// Whether each point gets a marker.
    #[serde(default)]
    pub markers: bool,
}

fn default_line() -> LineStyle {
    LineStyle::Solid
}

/// A whole figure: panels on a grid, one shared legend below them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// Figure title (top).
    pub title: String,
    /// Panels, laid out row by row.
    pub panels: Vec<PanelSpec>,
    /// Series styles; the legend lists them in this order.
    pub series: Vec<SeriesStyle>,
    /// Panels per row.
    #[serde(default = "default_columns")]
    pub columns: u32,
    /// Width of one panel in pixels.
    #[serde(default = "default_panel_width")]
    pub panel_width: u32,
    /// Height of one panel in pixels.
    #[serde(default = "default_panel_height")]
    pub panel_height: u32,
    /// Fixed `[low, high]` of the heatmaps' shared colour scale (values outside are
    /// drawn at the ends); taken from the data when absent.
    #[serde(default)]
    pub color_range: Option<[f64; 2]>,
}

fn default_columns() -> u32 {
    3
}
fn default_panel_width() -> u32 {
    520
}
fn default_panel_height() -> u32 {
    400
}

/// One observation to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Panel key.
    pub panel: String,
    /// Series key.
    pub series: String,
    /// Abscissa.
    pub x: f64,
    /// Ordinate.
    pub y: f64,
    /// Lower end of an error bar, if any.
    pub y_lo: Option<f64>,
    /// Upper end of an error bar, if any.
    pub y_hi: Option<f64>,
    /// Cell value, for heatmap panels.
    pub z: Option<f64>,
}

fn check_axis(what: &str, a: &AxisSpec) -> Result<(), PlotError> {
    let bad = |m: String| Err(PlotError::Spec(format!("{what}: {m}")));
    for (name, v) in [("min", a.min), ("max", a.max)] {
        if let Some(v) = v {
            if !v.is_finite() {
                return bad(format!("{name} must be finite, got {v}"));
            }
            if a.scale == Scale::Log && v <= 0.0 {
                return bad(format!("{name} must be > 0 on a log axis, got {v}"));
            }
        }
    }
    if let (Some(lo), Some(hi)) = (a.min, a.max) {
        if lo >= hi {
            return bad(format!("min ({lo}) must be below max ({hi})"));
        }
    }
    Ok(())
}

/// Checks a spec before any work: at least one panel, unique keys, valid colours, sizes
/// and axis limits. Errors name the offending key (e.g. `panels[1].x.min`).
pub fn validate(spec: &PlotSpec) -> Result<(), PlotError> {
    let bad = |m: String| Err(PlotError::Spec(m));
    if spec.panels.is_empty() {
        return bad("panels: at least one panel is required".into());
    }
    if !(1..=12).contains(&spec.columns) {
        return bad(format!("columns: must be in 1..=12, got {}", spec.columns));
    }
    for (name, v) in [
        ("panel_width", spec.panel_width),
        ("panel_height", spec.panel_height),
    ] {
        if !(120..=4000).contains(&v) {
            return bad(format!("{name}: must be in 120..=4000 pixels, got {v}"));
        }
    }
    if let Some([lo, hi]) = spec.color_range {
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return bad(format!(
                "color_range: expected [low, high] with low < high, got [{lo}, {hi}]"
            ));
        }
    }
    for (i, p) in spec.panels.iter().enumerate() {
        if spec.panels[..i].iter().any(|o| o.key == p.key) {
            return bad(format!("panels[{i}].key: duplicate key \"{}\"", p.key));
        }
        check_axis(&format!("panels[{i}].x"), &p.x)?;
        check_axis(&format!("panels[{i}].y"), &p.y)?;
    }
    for (i, s) in spec.series.iter().enumerate() {
        if spec.series[..i].iter().any(|o| o.key == s.key) {
            return bad(format!("series[{i}].key: duplicate key \"{}\"", s.key));
        }
        if resolve_color(&s.color).is_none() {
            return bad(format!(
                "series[{i}].color: expected a palette name ({}) or #rrggbb, got \"{}\"",
                crate::palette::names().join(", "),
                s.color
            ));
        }
    }
    Ok(())
}
