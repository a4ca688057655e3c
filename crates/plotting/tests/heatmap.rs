//! Heatmap panels: the table's cells become a rows × columns grid (whatever the order
//! of the points), a missing cell stays blank, and a cell index that is not a whole
//! number is refused.

use plotting::render::heatmap_cells;
use plotting::{render_svg, PlotSpec, Point};

fn spec() -> PlotSpec {
    toml::from_str(
        r##"
        title = "grid"
        [[panels]]
        key = "h"
        title = "heat"
        kind = "heatmap"
        x = { label = "column", scale = "linear" }
        y = { label = "row", scale = "linear" }
        [[series]]
        key = "field"
        label = "field"
        color = "#000000"
        "##,
    )
    .unwrap()
}

fn cell(x: f64, y: f64, z: f64) -> Point {
    Point {
        panel: "h".into(),
        series: "field".into(),
        x,
        y,
        y_lo: None,
        y_hi: None,
        z: Some(z),
    }
}

#[test]
fn points_fill_the_grid_by_row_and_column() {
    // A 2 × 3 grid listed column by column, without cell (x = 2, y = 1).
    let pts: Vec<Point> = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (1.0, 1.0), (2.0, 0.0)]
        .iter()
        .map(|&(x, y)| cell(x, y, 10.0 * y + x))
        .collect();
    let spec = spec();
    let grid = heatmap_cells(&spec.panels[0], &pts).unwrap();
    assert_eq!(grid.dim(), (2, 3));
    for ((r, c), z) in grid.indexed_iter() {
        if (r, c) == (1, 2) {
            assert!(z.is_nan());
        } else {
            assert_eq!(*z, 10.0 * r as f64 + c as f64);
        }
    }
    // One rectangle per present cell (the colour bar draws its own, the same for any
    // grid), so a blank cell draws one rectangle fewer than a full grid.
    let rects = |pts: &[Point]| render_svg(&spec, pts).unwrap().matches("<rect").count();
    let mut full = pts.clone();
    full.push(cell(2.0, 1.0, 12.0));
    assert_eq!(rects(&full), rects(&pts) + 1);
}

#[test]
fn fractional_or_negative_cells_are_refused() {
    let spec = spec();
    for (x, y) in [(0.5, 0.0), (0.0, -1.0), (1e9, 0.0)] {
        let err = heatmap_cells(&spec.panels[0], &[cell(0.0, 0.0, 1.0), cell(x, y, 2.0)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("heatmap panel \"h\""), "{err}");
        assert!(render_svg(&spec, &[cell(x, y, 2.0)]).is_err());
    }
}
