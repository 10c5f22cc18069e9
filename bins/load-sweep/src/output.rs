//! Writes the sweep as CSV, JSON, a Markdown table and a PNG plot.

use std::fs;
use std::path::Path;

use plotters::prelude::*;
use serde::Serialize;

use crate::analysis::Accuracy;

/// One sweep step.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Target fraction of capacity.
    pub target: f64,
    /// Offered packets per second (measured).
    pub offered_pps: f64,
    /// offered / capacity.
    pub theoretical: f64,
    /// Seconds since the sweep began.
    pub t_s: f64,
    /// offered / capacity interpolated in time between the searches before and
    /// after the sweep (a reference that follows a drifting machine).
    pub theoretical_drift: f64,
    /// Capacity probed right before and right after this step (mean of the rates
    /// the worker processed while overloaded), pps.
    pub capacity_local_pps: f64,
    /// offered / capacity_local_pps.
    pub theoretical_local: f64,
    /// Thesis method 1.
    pub method1: f64,
    /// Thesis method 2.
    pub method2: f64,
    /// Thesis method 3.
    pub method3: f64,
    /// Ours.
    pub ours: f64,
    /// Our capacity estimate, pps.
    pub ours_capacity_pps: f64,
    /// Our per-burst overhead `a` (cycles) at the end of the step.
    pub ours_burst_cycles: f64,
    /// Our per-packet cost `b` (cycles), mean over the step.
    pub ours_packet_cycles: f64,
    /// Our full-burst cost ratio κ at the end of the step.
    pub ours_kappa: f64,
    /// Share of the step's time excluded from ours' time base as stolen (preemption).
    pub ours_stolen_fraction: f64,
    /// Drop risk.
    pub drop_risk: f64,
    /// Warning raised in this step.
    pub warned: bool,
    /// Packets dropped in this step.
    pub dropped: u64,
    /// Packets offered in this step.
    pub offered: u64,
}

/// Everything a run produced.
#[derive(Debug, Clone, Serialize)]
pub struct SweepOutput {
    /// Command-line settings, for reproduction.
    pub settings: serde_json::Value,
    /// Measured capacity (pps) with the base work, before the sweep.
    pub capacity_pps: f64,
    /// The same, measured again right after the sweep.
    pub capacity_end_pps: f64,
    /// Accuracy per method against the drift-interpolated reference.
    pub accuracy_vs_drift: Vec<Accuracy>,
    /// Accuracy per method against the per-step probed capacity.
    pub accuracy_vs_local: Vec<Accuracy>,
    /// Steps.
    pub rows: Vec<Row>,
    /// Accuracy per method over 10–90%.
    pub accuracy: Vec<Accuracy>,
    /// Ramp: load at the first warning and at the first sustained drops.
    pub ramp: Option<RampResult>,
    /// Mid-run cost change.
    pub cost_change: Option<CostChange>,
    /// Steps below 85% load with a warning but no drops.
    pub false_alarms: usize,
}

/// Warning lead time on a slow ramp.
#[derive(Debug, Clone, Serialize)]
pub struct RampResult {
    /// Theoretical load when the warning was first raised.
    pub warned_at_load: Option<f64>,
    /// Theoretical load when sustained drops began.
    pub drops_at_load: Option<f64>,
    /// Seconds between the warning and the drops.
    pub lead_time_s: Option<f64>,
}

/// The estimate before and after per-packet work grew mid-run.
#[derive(Debug, Clone, Serialize)]
pub struct CostChange {
    /// Extra cycles per packet before.
    pub work_before: u64,
    /// Extra cycles per packet after.
    pub work_after: u64,
    /// Theoretical load before (offered / capacity with the light work).
    pub theoretical_before: f64,
    /// Our estimate before.
    pub ours_before: f64,
    /// Theoretical load after (same offered rate / capacity with the heavy work).
    pub theoretical_after: f64,
    /// Our estimate after.
    pub ours_after: f64,
}

/// Writes sweep.csv, sweep.json, sweep.md and sweep.png into `dir`.
pub fn write_all(dir: &Path, out: &SweepOutput) -> Result<(), Box<dyn std::error::Error>> {
    fs::create_dir_all(dir)?;
    let mut w = csv::Writer::from_path(dir.join("sweep.csv"))?;
    for r in &out.rows {
        w.serialize(r)?;
    }
    w.flush()?;
    fs::write(dir.join("sweep.json"), serde_json::to_string_pretty(out)?)?;
    fs::write(dir.join("sweep.md"), markdown(out))?;
    plot(&dir.join("sweep.png"), out)?;
    Ok(())
}

/// The tables, in the form of the thesis's Tables 4.2 and 4.3.
pub fn markdown(out: &SweepOutput) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Capacity (highest offered rate without sustained drops): {:.0} pps before the sweep, {:.0} pps after it ({:+.1}%)\n\n",
        out.capacity_pps,
        out.capacity_end_pps,
        (out.capacity_end_pps / out.capacity_pps - 1.0) * 100.0
    ));
    s.push_str("| theoretical load | same, vs capacity probed at the step | method 1 (iterations) | method 2 (1 s window) | method 3 (busy cycles) | ours | drop risk | dropped packets |\n");
    s.push_str("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in &out.rows {
        s.push_str(&format!(
            "| {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.1}% | {:.2}{} | {} |\n",
            r.theoretical * 100.0,
            r.theoretical_local * 100.0,
            r.method1 * 100.0,
            r.method2 * 100.0,
            r.method3 * 100.0,
            r.ours * 100.0,
            r.drop_risk,
            if r.warned { " ⚠" } else { "" },
            r.dropped
        ));
    }
    s.push_str("\nAccuracy over 10–90% theoretical load:\n\n| method | max abs error (pp) | RMSE (pp) | slope | intercept | R² |\n|---|---:|---:|---:|---:|---:|\n");
    for a in &out.accuracy {
        s.push_str(&format!(
            "| {} | {:.1} | {:.1} | {:.3} | {:.3} | {:.4} |\n",
            a.method, a.max_abs_error_pp, a.rmse_pp, a.slope, a.intercept, a.r2
        ));
    }
    s.push_str("\nThe same against the reference interpolated between the capacity before and after the sweep:\n\n| method | max abs error (pp) | RMSE (pp) | slope | intercept | R² |\n|---|---:|---:|---:|---:|---:|\n");
    for a in &out.accuracy_vs_drift {
        s.push_str(&format!(
            "| {} | {:.1} | {:.1} | {:.3} | {:.3} | {:.4} |\n",
            a.method, a.max_abs_error_pp, a.rmse_pp, a.slope, a.intercept, a.r2
        ));
    }
    s.push_str("\nThe same against the capacity probed right before and after each step (the worker's processing rate while overloaded for 0.35 s):\n\n| method | max abs error (pp) | RMSE (pp) | slope | intercept | R² |\n|---|---:|---:|---:|---:|---:|\n");
    for a in &out.accuracy_vs_local {
        s.push_str(&format!(
            "| {} | {:.1} | {:.1} | {:.3} | {:.3} | {:.4} |\n",
            a.method, a.max_abs_error_pp, a.rmse_pp, a.slope, a.intercept, a.r2
        ));
    }
    if let Some(r) = &out.ramp {
        s.push_str(&format!(
            "\nRamp (load rising slowly past capacity): warning at {}, sustained drops at {}, lead time {}. False alarms below 85% load: {}.\n",
            r.warned_at_load.map_or("never".into(), |l| format!("{:.1}% load", l * 100.0)),
            r.drops_at_load.map_or("never".into(), |l| format!("{:.1}% load", l * 100.0)),
            r.lead_time_s.map_or("n/a".into(), |t| format!("{:.2} s", t)),
            out.false_alarms
        ));
    }
    if let Some(c) = &out.cost_change {
        s.push_str(&format!(
            "\nPer-packet work raised mid-run ({} → {} extra cycles/packet) at a constant offered rate: theoretical {:.1}% → {:.1}%, ours {:.1}% → {:.1}%.\n",
            c.work_before,
            c.work_after,
            c.theoretical_before * 100.0,
            c.theoretical_after * 100.0,
            c.ours_before * 100.0,
            c.ours_after * 100.0
        ));
    }
    s
}

/// A plotted method: legend, colour, and how to read it from a row.
type Series = (&'static str, RGBColor, fn(&Row) -> f64);

fn plot(path: &Path, out: &SweepOutput) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::new(path, (1000, 640)).into_drawing_area();
    root.fill(&WHITE)?;
    let max_drop = out.rows.iter().map(|r| r.dropped).max().unwrap_or(1).max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Estimated vs theoretical load (drops on the right axis)",
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(55)
        .right_y_label_area_size(70)
        .build_cartesian_2d(0.0..115.0, 0.0..115.0)?
        .set_secondary_coord(0.0..115.0, 0.0..max_drop * 1.1);
    chart
        .configure_mesh()
        .x_desc("theoretical load (%)")
        .y_desc("estimated load (%)")
        .draw()?;
    chart
        .configure_secondary_axes()
        .y_desc("dropped packets per step")
        .draw()?;
    chart
        .draw_series(LineSeries::new(
            [(0.0, 0.0), (110.0, 110.0)],
            BLACK.mix(0.3),
        ))?
        .label("ideal")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.mix(0.3)));
    let series: [Series; 4] = [
        (
            "method 1: non-empty iterations",
            RGBColor(230, 159, 0),
            |r| r.method1,
        ),
        ("method 2: 1 s window", RGBColor(86, 180, 233), |r| {
            r.method2
        }),
        ("method 3: busy cycles", RGBColor(0, 158, 115), |r| {
            r.method3
        }),
        ("ours", RGBColor(213, 94, 0), |r| r.ours),
    ];
    for (name, color, f) in series {
        let pts: Vec<(f64, f64)> = out
            .rows
            .iter()
            .map(|r| (r.theoretical * 100.0, f(r) * 100.0))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
    }
    chart
        .draw_secondary_series(out.rows.iter().map(|r| {
            Rectangle::new(
                [
                    (r.theoretical * 100.0 - 1.0, 0.0),
                    (r.theoretical * 100.0 + 1.0, r.dropped as f64),
                ],
                RED.mix(0.4).filled(),
            )
        }))?
        .label("dropped packets")
        .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 20, y + 5)], RED.mix(0.4).filled()));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
