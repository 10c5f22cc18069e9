//! Accuracy of an estimator against the theoretical load.

use serde::Serialize;

/// How well one method tracks the theoretical load.
#[derive(Debug, Clone, Serialize)]
pub struct Accuracy {
    /// Method name.
    pub method: String,
    /// Largest |estimate − theoretical|, percentage points.
    pub max_abs_error_pp: f64,
    /// Root mean square error, percentage points.
    pub rmse_pp: f64,
    /// Least-squares fit estimate = slope × theoretical + intercept.
    pub slope: f64,
    /// Intercept of the fit (fraction).
    pub intercept: f64,
    /// Coefficient of determination of the fit.
    pub r2: f64,
}

/// Accuracy over the points (theoretical, estimate).
pub fn accuracy(method: &str, pts: &[(f64, f64)]) -> Accuracy {
    let n = pts.len().max(1) as f64;
    let max = pts.iter().map(|(t, e)| (e - t).abs()).fold(0.0, f64::max);
    let rmse = (pts.iter().map(|(t, e)| (e - t).powi(2)).sum::<f64>() / n).sqrt();
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = pts.iter().map(|p| (p.1 - my).powi(2)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    let intercept = my - slope * mx;
    let r2 = if sxx > 0.0 && syy > 0.0 {
        sxy * sxy / (sxx * syy)
    } else {
        0.0
    };
    Accuracy {
        method: method.into(),
        max_abs_error_pp: max * 100.0,
        rmse_pp: rmse * 100.0,
        slope,
        intercept,
        r2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_and_biased_estimators() {
        let p: Vec<_> = (1..10)
            .map(|i| (i as f64 / 10.0, i as f64 / 10.0))
            .collect();
        let a = accuracy("x", &p);
        assert!(
            a.max_abs_error_pp < 1e-9 && (a.slope - 1.0).abs() < 1e-9 && (a.r2 - 1.0).abs() < 1e-9
        );
        let q: Vec<_> = p.iter().map(|(t, e)| (*t, e * 0.5 + 0.2)).collect();
        let b = accuracy("y", &q);
        assert!((b.slope - 0.5).abs() < 1e-9 && (b.intercept - 0.2).abs() < 1e-9);
        assert!((b.max_abs_error_pp - 25.0).abs() < 1e-6);
    }
}
