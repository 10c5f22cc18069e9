//! The PNG of an experiment: one bar panel per primary metric (cells in run
//! order, whiskers from min to max over the repeats); a failed cell gets a red
//! "failed" mark instead of a bar, never a zero-height bar.

use std::path::Path;

use plotters::prelude::*;

use crate::cell::Cell;
use crate::report::Report;

type Res = Result<(), Box<dyn std::error::Error>>;

/// Draws `report` into `path`.
pub fn draw(path: &Path, report: &Report) -> Res {
    let mut metrics: Vec<&str> = Vec::new();
    for c in &report.cells {
        if !metrics.contains(&c.primary.as_str()) {
            metrics.push(&c.primary);
        }
    }
    // Each panel is as tall as its number of cells needs.
    let heights: Vec<u32> = metrics
        .iter()
        .map(|m| {
            110 + 34
                * report
                    .cells
                    .iter()
                    .filter(|c| c.primary == *m)
                    .count()
                    .max(2) as u32
        })
        .collect();
    let total: u32 = heights.iter().sum::<u32>().max(200);
    let root = BitMapBackend::new(path, (1200, total)).into_drawing_area();
    root.fill(&WHITE)?;
    if report.cells.is_empty() {
        root.titled(
            &format!("{}: no cells", report.experiment),
            ("sans-serif", 24),
        )?;
        root.present()?;
        return Ok(());
    }
    let mut y = 0;
    let breaks: Vec<i32> = heights[..heights.len() - 1]
        .iter()
        .map(|h| {
            y += *h as i32;
            y
        })
        .collect();
    let areas = root.split_by_breakpoints::<i32, i32, _, _>([], breaks);
    for (area, metric) in areas.iter().zip(metrics) {
        let cells: Vec<&Cell> = report
            .cells
            .iter()
            .filter(|c| c.primary == metric)
            .collect();
        panel(area, report, metric, &cells)?;
    }
    root.present()?;
    Ok(())
}

fn panel(
    area: &DrawingArea<BitMapBackend<'_>, plotters::coord::Shift>,
    report: &Report,
    metric: &str,
    cells: &[&Cell],
) -> Res {
    let top = cells
        .iter()
        .filter(|c| !c.failed())
        .filter_map(|c| c.metrics.get(&c.primary).map(|s| s.max))
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let top = if top > 0.0 { top * 1.15 } else { 1.0 };
    let n = cells.len();
    let title = format!(
        "{}: {}{}",
        report.experiment,
        metric,
        if report.quick { " (--quick)" } else { "" }
    );
    // Horizontal bars: cell names read left of their bar, first cell on top.
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(220)
        .build_cartesian_2d(0f64..top, 0f64..n as f64)?;
    let names: Vec<String> = cells.iter().map(|c| c.name.clone()).collect();
    let row = |i: usize| (n - 1 - i) as f64;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n.max(1) * 2 + 1)
        .y_label_formatter(&|y| {
            let k = y.floor();
            let i = n as i64 - 1 - k as i64;
            if (y - k - 0.5).abs() < 0.01 && i >= 0 && (i as usize) < names.len() {
                names[i as usize].clone()
            } else {
                String::new()
            }
        })
        .y_label_style(("sans-serif", 13))
        .x_desc(metric)
        .draw()?;
    for (i, c) in cells.iter().enumerate() {
        let y0 = row(i) + 0.15;
        let y1 = row(i) + 0.85;
        let ym = row(i) + 0.5;
        match c.metrics.get(&c.primary).filter(|_| !c.failed()) {
            Some(st) => {
                let color = if c.status == "partial" {
                    &YELLOW
                } else {
                    &BLUE
                };
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(0.0, y0), (st.median, y1)],
                    color.mix(0.6).filled(),
                )))?;
                if st.runs.len() > 1 {
                    chart.draw_series(std::iter::once(ErrorBar::new_horizontal(
                        ym,
                        st.min,
                        st.median,
                        st.max,
                        BLACK.filled(),
                        10,
                    )))?;
                }
                let label = if c.status == "partial" {
                    format!("{} (partial)", crate::cell::fmt_num(st.median))
                } else {
                    crate::cell::fmt_num(st.median)
                };
                chart.draw_series(std::iter::once(Text::new(
                    label,
                    (st.max.max(st.median) + top * 0.01, ym),
                    ("sans-serif", 13),
                )))?;
            }
            None => {
                chart.draw_series(std::iter::once(Text::new(
                    "FAILED (see the table)",
                    (top * 0.01, ym),
                    ("sans-serif", 14).into_font().color(&RED),
                )))?;
            }
        }
    }
    Ok(())
}
