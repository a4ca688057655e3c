//! Drawing a [`PlotSpec`] and its points on any plotters backend: a title, the panels on
//! a grid, and one legend for all panels underneath.

use crate::axis::{axis_labels, fit};
use crate::markup::{self, Shift as Script};
use crate::palette::resolve_color;
use crate::spec::{LineStyle, PanelKind, PanelSpec, PlotSpec, Point, SeriesStyle};
use crate::PlotError;
use ndarray::{Array2, ArrayView2};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;

const FONT: &str = "sans-serif";
const TITLE_HEIGHT: u32 = 44;
const LEGEND_ROW: u32 = 24;
const SAMPLE_LEN: i32 = 34;
const CAPTION_HEIGHT: u32 = 26;

/// Size of the whole image in pixels for `spec` (panels, title and legend).
pub fn image_size(spec: &PlotSpec) -> (u32, u32) {
    let cols = spec.columns.min(spec.panels.len().max(1) as u32);
    let rows = (spec.panels.len() as u32).div_ceil(cols);
    let width = cols * spec.panel_width;
    let legend = legend_layout(spec, width).1;
    (width, TITLE_HEIGHT + rows * spec.panel_height + legend)
}

/// Whether every panel is a heatmap (the legend is then a colour bar).
fn heatmaps_only(spec: &PlotSpec) -> bool {
    spec.panels.iter().all(|p| p.kind == PanelKind::Heatmap)
}

const COLOR_BAR_HEIGHT: u32 = 72;

/// Legend entries per row and the legend's height.
fn legend_layout(spec: &PlotSpec, width: u32) -> (usize, u32) {
    if heatmaps_only(spec) {
        return (1, COLOR_BAR_HEIGHT);
    }
    if spec.series.is_empty() {
        return (1, 0);
    }
    let longest = spec
        .series
        .iter()
        .map(|s| markup::plain(&s.label).chars().count())
        .max()
        .unwrap_or(0) as u32;
    let entry = entry_width(longest);
    let per_row = ((width.saturating_sub(20)) / entry).max(1) as usize;
    let rows = spec.series.len().div_ceil(per_row) as u32;
    (per_row, rows * LEGEND_ROW + 16)
}

fn entry_width(label_chars: u32) -> u32 {
    SAMPLE_LEN as u32 + 24 + label_chars * 8
}

fn rgb(s: &SeriesStyle) -> RGBColor {
    let (r, g, b) = resolve_color(&s.color).unwrap_or((0, 0, 0));
    RGBColor(r, g, b)
}

fn err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError::Draw(format!("{e:?}"))
}

/// Draws the whole figure on `root`.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spec: &PlotSpec,
    points: &[Point],
) -> Result<(), PlotError> {
    draw_only(root, spec, points, &|_, _| true)
}

/// Where one series of one line panel put its points: pixel coordinates in the image,
/// in the order they are joined (by `x`), only the points inside the axes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesPixels {
    /// Panel key.
    pub panel: String,
    /// Series key.
    pub series: String,
    /// The points' pixels `(column, row)`.
    pub pixels: Vec<(i32, i32)>,
}

/// [`draw`], but of the line panels' series only those `(panel key, series key)` for
/// which `keep` says true are drawn; axes, legend and heatmaps are unchanged (axis ranges
/// still cover every point). Used to measure what each series adds to the image.
pub fn draw_only<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spec: &PlotSpec,
    points: &[Point],
    keep: &dyn Fn(&str, &str) -> bool,
) -> Result<(), PlotError> {
    draw_probed(root, spec, points, keep, &mut |_| {})
}

/// [`draw`], handing every drawn series' pixels to `probe` in drawing order.
pub fn draw_probed<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    spec: &PlotSpec,
    points: &[Point],
    keep: &dyn Fn(&str, &str) -> bool,
    probe: &mut dyn FnMut(SeriesPixels),
) -> Result<(), PlotError> {
    if let Some(p) = points
        .iter()
        .find(|p| !spec.series.iter().any(|s| s.key == p.series))
    {
        return Err(PlotError::Data(format!(
            "series \"{}\" has no style in the plot spec",
            p.series
        )));
    }
    root.fill(&WHITE).map_err(err)?;
    let (width, height) = root.dim_in_pixel();
    let (per_row, legend_h) = legend_layout(spec, width);
    let (title_area, rest) = root.split_vertically(TITLE_HEIGHT);
    let (panel_area, legend_area) = rest.split_vertically(height - TITLE_HEIGHT - legend_h);

    // A title wider than the figure is set smaller, so that it stays inside the margins.
    let title_font = (FONT, 20.0)
        .into_font()
        .style(FontStyle::Bold)
        .color(&BLACK);
    let (title_w, _) = title_area
        .estimate_text_size(&markup::plain(&spec.title), &title_font)
        .map_err(err)?;
    let room = width.saturating_sub(24).max(1) as f64;
    let title_size = if title_w as f64 > room {
        (20.0 * room / title_w as f64).max(11.0)
    } else {
        20.0
    };
    draw_rich(
        &title_area,
        &spec.title,
        (width as i32 / 2, 22),
        Rich {
            size: title_size,
            bold: true,
            anchor: HPos::Center,
            vertical: false,
        },
    )?;

    let cols = spec.columns.min(spec.panels.len() as u32) as usize;
    let rows = spec.panels.len().div_ceil(cols);
    let cells = panel_area.split_evenly((rows, cols));
    // One colour scale for every heatmap panel.
    let zs = points
        .iter()
        .filter(|p| {
            spec.panels
                .iter()
                .any(|q| q.key == p.panel && q.kind == PanelKind::Heatmap)
        })
        .filter_map(|p| p.z)
        .filter(|z| z.is_finite());
    let (zlo, zhi) = zs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), z| {
        (a.min(z), b.max(z))
    });
    let zrange = match spec.color_range {
        Some([lo, hi]) => (lo, hi),
        None if zlo < zhi => (zlo, zhi),
        None => (zlo.min(0.0), zlo.max(0.0) + 1.0),
    };
    for (panel, cell) in spec.panels.iter().zip(cells.iter()) {
        match panel.kind {
            PanelKind::Lines => draw_panel(cell, panel, spec, points, keep, probe)?,
            PanelKind::Heatmap => {
                let cells = heatmap_cells(panel, points)?;
                draw_heatmap(cell, &panel.title, cells.view(), zrange)?
            }
        }
    }
    if heatmaps_only(spec) {
        // The bar is labelled by the first series' legend text (what a cell counts), and
        // says where the fixed colour range clips the data.
        let label = spec.series.first().map_or("", |s| s.label.as_str());
        let clipped = (zhi > zrange.1).then_some(zhi);
        draw_color_bar(&legend_area, zrange, label, clipped)?;
    } else {
        draw_legend(&legend_area, spec, per_row)?;
    }
    root.present().map_err(err)?;
    Ok(())
}

fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    panel: &PanelSpec,
    spec: &PlotSpec,
    points: &[Point],
    keep: &dyn Fn(&str, &str) -> bool,
    probe: &mut dyn FnMut(SeriesPixels),
) -> Result<(), PlotError> {
    let mine: Vec<&Point> = points.iter().filter(|p| p.panel == panel.key).collect();
    let xs: Vec<f64> = mine.iter().map(|p| p.x).collect();
    let ys: Vec<f64> = mine
        .iter()
        .flat_map(|p| [Some(p.y), p.y_lo, p.y_hi])
        .flatten()
        .collect();
    let xa = fit(panel.x.scale, &xs, panel.x.min, panel.x.max);
    let ya = fit(panel.y.scale, &ys, panel.y.min, panel.y.max);

    // Caption and axis labels are drawn here rather than by plotters, so that their
    // sub/superscripts are laid out (see `draw_rich`).
    let (caption, body) = area.split_vertically(CAPTION_HEIGHT);
    let (cw, _) = caption.dim_in_pixel();
    draw_rich(
        &caption,
        &panel.title,
        (cw as i32 / 2, CAPTION_HEIGHT as i32 / 2 + 4),
        Rich {
            size: 16.0,
            bold: false,
            anchor: HPos::Center,
            vertical: false,
        },
    )?;
    let mut chart = ChartBuilder::on(&body)
        .margin(12)
        .margin_top(4)
        .x_label_area_size(46)
        .y_label_area_size(62)
        .build_cartesian_2d(xa, ya)
        .map_err(err)?;
    let (px, py) = chart.plotting_area().get_pixel_range();
    let (bx, by) = body.get_base_pixel();
    let desc = |vertical| Rich {
        size: 13.0,
        bold: false,
        anchor: HPos::Center,
        vertical,
    };
    draw_rich(
        &body,
        &panel.x.label,
        ((px.start + px.end) / 2 - bx, py.end - by + 34),
        desc(false),
    )?;
    draw_rich(
        &body,
        &panel.y.label,
        (px.start - bx - 60, (py.start + py.end) / 2 - by),
        desc(true),
    )?;
    let (x_label, y_label) = (
        axis_labels(xa.scale, &xa.ticks(8)),
        axis_labels(ya.scale, &ya.ticks(8)),
    );
    chart
        .configure_mesh()
        .x_labels(8)
        .y_labels(8)
        .x_label_formatter(&|v| x_label(*v))
        .y_label_formatter(&|v| y_label(*v))
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(TRANSPARENT)
        .draw()
        .map_err(err)?;

    for style in spec.series.iter().filter(|s| keep(&panel.key, &s.key)) {
        let mut pts: Vec<&Point> = mine
            .iter()
            .copied()
            .filter(|p| p.series == style.key && xa.admits(p.x) && ya.admits(p.y))
            .collect();
        if pts.is_empty() {
            continue;
        }
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        let color = rgb(style);
        let coords: Vec<(f64, f64)> = pts.iter().map(|p| (p.x, p.y)).collect();
        probe(SeriesPixels {
            panel: panel.key.clone(),
            series: style.key.clone(),
            pixels: coords.iter().map(|c| chart.backend_coord(c)).collect(),
        });
        let line = color.stroke_width(2);
        match style.line {
            LineStyle::Solid => {
                chart
                    .draw_series(LineSeries::new(coords.clone(), line))
                    .map_err(err)?;
            }
            LineStyle::Dashed => {
                chart
                    .draw_series(DashedLineSeries::new(coords.clone(), 9, 6, line))
                    .map_err(err)?;
            }
            LineStyle::Dotted => {
                chart
                    .draw_series(DashedLineSeries::new(coords.clone(), 2, 4, line))
                    .map_err(err)?;
            }
            LineStyle::None => {}
        }
        let bars: Vec<(f64, f64, f64, f64)> = pts
            .iter()
            .filter_map(|p| match (p.y_lo, p.y_hi) {
                // A bar shorter than the line is wide would only draw its caps, which
                // read as markers: such bars are left out (they are narrower than the
                // line, as the figures' texts say).
                (Some(lo), Some(hi))
                    if ya.admits(lo)
                        && ya.admits(hi)
                        && hi > lo
                        && (chart.backend_coord(&(p.x, lo)).1
                            - chart.backend_coord(&(p.x, hi)).1)
                            .abs()
                            >= 3 =>
                {
                    Some((p.x, lo, p.y, hi))
                }
                _ => None,
            })
            .collect();
        chart
            .draw_series(bars.into_iter().map(|(x, lo, y, hi)| {
                ErrorBar::new_vertical(x, lo, y, hi, color.stroke_width(1), 6)
            }))
            .map_err(err)?;
        if style.markers {
            chart
                .draw_series(
                    coords
                        .iter()
                        .map(|&(x, y)| Circle::new((x, y), 3, color.filled())),
                )
                .map_err(err)?;
        }
    }
    Ok(())
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    spec: &PlotSpec,
    per_row: usize,
) -> Result<(), PlotError> {
    let longest = spec
        .series
        .iter()
        .map(|s| markup::plain(&s.label).chars().count())
        .max()
        .unwrap_or(0) as u32;
    let entry = entry_width(longest) as i32;
    let (width, _) = area.dim_in_pixel();
    let used = spec
        .series
        .len()
        .div_ceil(spec.series.len().div_ceil(per_row).max(1)) as i32
        * entry;
    let left = ((width as i32 - used) / 2).max(10);
    // Column by column, so that consecutive entries (a group of one kind) stay together.
    let rows = spec.series.len().div_ceil(per_row);
    for (i, s) in spec.series.iter().enumerate() {
        let x = left + (i / rows) as i32 * entry;
        let y = 8 + (i % rows) as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        let color = rgb(s);
        let style = color.stroke_width(2);
        let (dash, gap) = match s.line {
            LineStyle::Solid => (SAMPLE_LEN, 0),
            LineStyle::Dashed => (8, 5),
            LineStyle::Dotted => (2, 4),
            LineStyle::None => (0, SAMPLE_LEN),
        };
        let mut at = 0;
        while dash > 0 && at < SAMPLE_LEN {
            let end = (at + dash).min(SAMPLE_LEN);
            area.draw(&PathElement::new(vec![(x + at, y), (x + end, y)], style))
                .map_err(err)?;
            at = end + gap;
        }
        if s.markers {
            area.draw(&Circle::new((x + SAMPLE_LEN / 2, y), 3, color.filled()))
                .map_err(err)?;
        }
        draw_rich(
            area,
            &s.label,
            (x + SAMPLE_LEN + 8, y),
            Rich {
                size: 13.0,
                bold: false,
                anchor: HPos::Left,
                vertical: false,
            },
        )?;
    }
    Ok(())
}

/// How a piece of [`draw_rich`] text is set.
#[derive(Clone, Copy)]
struct Rich {
    /// Font size of the baseline runs.
    size: f64,
    bold: bool,
    /// Which end of the text `at` is (along the reading direction).
    anchor: HPos,
    /// Reads bottom to top (a y-axis label).
    vertical: bool,
}

/// Draws `text` with its sub/superscripts laid out (see [`markup`]): runs one after the
/// other, scripts at 70 % size shifted off the line; `at` is the middle of the line's
/// height at the `anchor` end.
fn draw_rich<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    at: (i32, i32),
    how: Rich,
) -> Result<(), PlotError> {
    let runs = markup::segments(text);
    let style = |shift: Script| {
        let size = match shift {
            Script::Base => how.size,
            _ => 0.7 * how.size,
        };
        let mut font = (FONT, size).into_font();
        if how.bold {
            font = font.style(FontStyle::Bold);
        }
        if how.vertical {
            font = font.transform(FontTransform::Rotate270);
        }
        font.color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center))
    };
    let widths: Vec<i32> = runs
        .iter()
        .map(|r| {
            area.estimate_text_size(&r.text, &style(r.shift))
                .map(|(w, _)| w as i32)
                .map_err(err)
        })
        .collect::<Result<_, _>>()?;
    let total: i32 = widths.iter().sum();
    let mut along = match how.anchor {
        HPos::Left => 0,
        HPos::Center => -total / 2,
        HPos::Right => -total,
    };
    for (run, w) in runs.iter().zip(&widths) {
        // Offset across the line (positive = down the page when read horizontally).
        let across = match run.shift {
            Script::Base => 0.0,
            Script::Sub => 0.3 * how.size,
            Script::Sup => -0.35 * how.size,
        }
        .round() as i32;
        let pos = if how.vertical {
            (at.0 + across, at.1 - along)
        } else {
            (at.0 + along, at.1 + across)
        };
        area.draw(&Text::new(run.text.clone(), pos, style(run.shift)))
            .map_err(err)?;
        along += w;
    }
    Ok(())
}

/// Viridis-like colour for `t ∈ [0, 1]` (piecewise linear through five stops).
pub fn colormap(t: f64) -> RGBColor {
    const STOPS: [(u8, u8, u8); 5] = [
        (68, 1, 84),
        (59, 82, 139),
        (33, 145, 140),
        (94, 201, 98),
        (253, 231, 37),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * 4.0;
    let i = (x.floor() as usize).min(3);
    let f = x - i as f64;
    let mix = |a: u8, b: u8| (a as f64 + f * (b as f64 - a as f64)).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// Largest number of heatmap rows or columns: a bound on the grid a table can ask for.
const MAX_CELLS: usize = 4096;

/// The values of a heatmap panel as a `rows × columns` grid, `[y, x]` holding the `z` of
/// the point at cell `(x, y)`; a cell without a point (or without a value) is NaN and is
/// left blank. Errors: a finite cell index that is not a whole number in `[0, 4096)`.
pub fn heatmap_cells(panel: &PanelSpec, points: &[Point]) -> Result<Array2<f64>, PlotError> {
    let mut cells = Vec::new();
    // Points off the plane (non-finite x or y) are skipped, as on line panels.
    for p in points
        .iter()
        .filter(|p| p.panel == panel.key && p.x.is_finite() && p.y.is_finite())
    {
        let index = |v: f64| {
            (v.fract() == 0.0 && (0.0..MAX_CELLS as f64).contains(&v)).then_some(v as usize)
        };
        match (index(p.x), index(p.y)) {
            (Some(c), Some(r)) => cells.push((r, c, p.z.unwrap_or(f64::NAN))),
            _ => {
                return Err(PlotError::Data(format!(
                    "heatmap panel \"{}\": cell x = {}, y = {} is not a whole number in [0, {MAX_CELLS})",
                    panel.key, p.x, p.y
                )))
            }
        }
    }
    let rows = cells.iter().map(|c| c.0 + 1).max().unwrap_or(1);
    let cols = cells.iter().map(|c| c.1 + 1).max().unwrap_or(1);
    let mut grid = Array2::from_elem((rows, cols), f64::NAN);
    for (r, c, z) in cells {
        grid[[r, c]] = z;
    }
    Ok(grid)
}

/// Draws a heatmap panel: cell `[r, c]` of `cells` as a unit square, row 0 at the top,
/// coloured on the shared scale `zlo..zhi`.
fn draw_heatmap<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    cells: ArrayView2<f64>,
    (zlo, zhi): (f64, f64),
) -> Result<(), PlotError> {
    let (rows, cols) = (cells.nrows() as f64, cells.ncols() as f64);
    let (w, h) = area.dim_in_pixel();
    let caption = 34;
    let side = (w.saturating_sub(24))
        .min(h.saturating_sub(caption + 16))
        .max(10);
    let mx = (w - side) / 2;
    let mut chart = ChartBuilder::on(area)
        .caption(title, (FONT, 16))
        .margin_left(mx)
        .margin_right(mx)
        .margin_top(6)
        .margin_bottom(h.saturating_sub(caption + 6 + side))
        .build_cartesian_2d(0.0..cols, 0.0..rows)
        .map_err(err)?;
    chart
        .draw_series(
            cells
                .indexed_iter()
                .filter(|(_, z)| !z.is_nan())
                .map(|((r, c), z)| {
                    let t = (z - zlo) / (zhi - zlo);
                    let (x, top) = (c as f64, rows - r as f64);
                    Rectangle::new([(x, top), (x + 1.0, top - 1.0)], colormap(t).filled())
                }),
        )
        .map_err(err)?;
    Ok(())
}

fn draw_color_bar<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (zlo, zhi): (f64, f64),
    label: &str,
    clipped: Option<f64>,
) -> Result<(), PlotError> {
    let (w, _) = area.dim_in_pixel();
    let bar = (w as i32 * 2 / 5).max(100);
    let left = (w as i32 - bar) / 2;
    let (top, height) = (8, 14);
    for i in 0..bar {
        let c = colormap(i as f64 / (bar - 1) as f64);
        area.draw(&Rectangle::new(
            [(left + i, top), (left + i + 1, top + height)],
            c.filled(),
        ))
        .map_err(err)?;
    }
    // Nice ticks along the bar (integers when the range is in whole units).
    let axis = crate::axis::Axis {
        lo: zlo,
        hi: zhi,
        scale: crate::spec::Scale::Linear,
    };
    let ticks = axis.ticks(7);
    let fmt = axis_labels(crate::spec::Scale::Linear, &ticks);
    for v in ticks {
        let x = left + ((v - zlo) / (zhi - zlo) * (bar - 1) as f64).round() as i32;
        area.draw(&PathElement::new(
            vec![(x, top + height), (x, top + height + 4)],
            BLACK.stroke_width(1),
        ))
        .map_err(err)?;
        area.draw(&Text::new(
            fmt(v),
            (x, top + height + 6),
            (FONT, 12)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(err)?;
    }
    let mut text = label.to_string();
    if let Some(max) = clipped {
        text.push_str(&format!(
            " (clipped: cells above {} drawn at {}; the largest is {max:.0})",
            fmt(zhi),
            fmt(zhi),
        ));
    }
    draw_rich(
        area,
        &text,
        (w as i32 / 2, top + height + 30),
        Rich {
            size: 13.0,
            bold: false,
            anchor: HPos::Center,
            vertical: false,
        },
    )
}
