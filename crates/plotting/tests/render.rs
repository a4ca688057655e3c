//! Rendering checks: the PNG decodes, has the spec's size, and carries text drawn from
//! the embedded font (no system font libraries involved).

use plotting::{render_png, render_svg, PlotSpec, Point};

fn spec() -> PlotSpec {
    toml::from_str(
        r##"
        title = "A title that must be drawn"
        columns = 2
        panel_width = 300
        panel_height = 240
        [[panels]]
        key = "a"
        title = "log-log"
        x = { label = "k", scale = "log" }
        y = { label = "value", scale = "log" }
        [[panels]]
        key = "b"
        title = "linear"
        x = { label = "x", scale = "linear" }
        y = { label = "y", scale = "linear", min = 0.0 }
        [[series]]
        key = "s"
        label = "solid"
        color = "#1f77b4"
        markers = true
        [[series]]
        key = "d"
        label = "dashed"
        color = "#d62728"
        line = "dashed"
        "##,
    )
    .unwrap()
}

fn points() -> Vec<Point> {
    let mut v = Vec::new();
    for i in 1..6 {
        let x = 10f64.powi(i);
        for (panel, series, y) in [("a", "s", x.sqrt()), ("b", "d", i as f64)] {
            v.push(Point {
                panel: panel.into(),
                series: series.into(),
                x: if panel == "a" { x } else { i as f64 },
                y,
                y_lo: Some(y * 0.9),
                y_hi: Some(y * 1.1),
                z: None,
            });
        }
    }
    v
}

#[test]
fn png_decodes_with_expected_size_and_has_title_text() {
    let bytes = render_png(&spec(), &points()).unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (w, h) = plotting::render::image_size(&spec());
    assert_eq!((info.width, info.height), (w, h));
    // The title band (top 40 px) is empty except for the title's glyphs: if the font
    // were missing, it would be pure white.
    let row_bytes = info.width as usize * 3;
    let dark = buf[..40 * row_bytes]
        .chunks(3)
        .filter(|p| p[0] < 128)
        .count();
    assert!(dark > 100, "title text not rendered ({dark} dark pixels)");
}

#[test]
fn svg_has_panels_titles_and_legend() {
    let svg = render_svg(&spec(), &points()).unwrap();
    for text in [
        "A title that must be drawn",
        "log-log",
        "linear",
        "solid",
        "dashed",
    ] {
        assert!(svg.contains(text), "missing {text}");
    }
}

#[test]
fn unknown_series_is_an_error_not_a_silent_drop() {
    let mut pts = points();
    pts[0].series = "nope".into();
    assert!(render_svg(&spec(), &pts).is_err());
}

#[test]
fn invalid_spec_is_refused() {
    let mut s = spec();
    s.series[0].color = "blue".into();
    let e = plotting::validate(&s).unwrap_err().to_string();
    assert!(e.contains("series[0].color"), "{e}");
    let mut s = spec();
    s.panels[0].x.min = Some(-1.0);
    assert!(plotting::validate(&s).is_err());
}
