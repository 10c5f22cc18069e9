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
    let panels = metrics.len().max(1);
    let root = BitMapBackend::new(path, (1200, 420 * panels as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    if report.cells.is_empty() {
        root.titled(
            &format!("{}: no cells", report.experiment),
            ("sans-serif", 24),
        )?;
        root.present()?;
        return Ok(());
    }
    let areas = root.split_evenly((panels, 1));
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
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(90)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n as f64, 0f64..top)?;
    let names: Vec<String> = cells.iter().map(|c| c.name.clone()).collect();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n.max(1) * 2 + 1)
        .x_label_formatter(&|x| {
            let i = x.floor() as usize;
            if (x - i as f64 - 0.5).abs() < 0.01 && i < names.len() {
                names[i].clone()
            } else {
                String::new()
            }
        })
        .x_label_style(
            ("sans-serif", 12)
                .into_font()
                .transform(FontTransform::Rotate90),
        )
        .y_desc(metric)
        .draw()?;
    for (i, c) in cells.iter().enumerate() {
        let x0 = i as f64 + 0.15;
        let x1 = i as f64 + 0.85;
        let xm = i as f64 + 0.5;
        match c.metrics.get(&c.primary).filter(|_| !c.failed()) {
            Some(st) => {
                let color = if c.status == "partial" {
                    &YELLOW
                } else {
                    &BLUE
                };
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(x0, 0.0), (x1, st.median)],
                    color.mix(0.6).filled(),
                )))?;
                if st.runs.len() > 1 {
                    chart.draw_series(std::iter::once(ErrorBar::new_vertical(
                        xm,
                        st.min,
                        st.median,
                        st.max,
                        BLACK.filled(),
                        10,
                    )))?;
                }
                chart.draw_series(std::iter::once(Text::new(
                    crate::cell::fmt_num(st.median),
                    (x0, st.median + top * 0.02),
                    ("sans-serif", 12),
                )))?;
            }
            None => {
                chart.draw_series(std::iter::once(Text::new(
                    "failed",
                    (x0, top * 0.05),
                    ("sans-serif", 14).into_font().color(&RED),
                )))?;
            }
        }
    }
    Ok(())
}
