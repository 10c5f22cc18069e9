//! The reliability sweep: many seeds, each a run of [`run_flows`] (the runtime
//! that ships, on a virtual clock) with the seed choosing an impairment mix, a
//! congestion controller, a number of flows, and the application's behaviour
//! (flow and write sizes, how connections open, whether readers start late, the
//! pool size). A seed passes when every byte of every flow arrived intact, every
//! connection closed gracefully on both sides and every packet buffer returned to
//! its pool. The same seed always makes the same case and the same run.

use std::fmt;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::flow_error::FlowError;
use super::flows::{run_flows, Connects, FlowsReport, FlowsScenario, ReadersStart};
use crate::link::impair_model::{GilbertElliott, ImpairConfig};
use pmdt_proto::{CongestionKind, Startup, TransportConfig};

/// The impairment mixes, one per path shape (both directions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Mix {
    /// 1 ms each way, nothing else.
    Clean,
    /// 1% random loss each way, 5 ms.
    Loss1,
    /// 10% loss forward, 2% back, 2 ms.
    Loss10,
    /// Gilbert–Elliott bursts (1% enter, 30% leave, 50% loss in bursts), 10 ms.
    Burst,
    /// 10% reordered by 3 ms plus 1 ms jitter, 5 ms.
    Reorder,
    /// 5% duplicated, 2% reordered, 1% lost, 2 ms.
    Duplicate,
    /// A 20 Mbit/s bottleneck with a 64 KB queue, 10 ms.
    Bottleneck,
    /// 50 ms each way, 200 Mbit/s with a 1 MB queue, 0.5% loss.
    LongFat,
    /// 1% of datagrams corrupted (dropped by the UDP checksum) and 1% lost.
    Corrupt,
    /// A bit of everything: bursts, loss, reordering, jitter, duplicates,
    /// corruption, a 100 Mbit/s bottleneck with a 256 KB queue, 5 ms.
    Everything,
}

impl Mix {
    /// Every mix.
    pub const ALL: [Mix; 10] = [
        Mix::Clean,
        Mix::Loss1,
        Mix::Loss10,
        Mix::Burst,
        Mix::Reorder,
        Mix::Duplicate,
        Mix::Bottleneck,
        Mix::LongFat,
        Mix::Corrupt,
        Mix::Everything,
    ];

    /// The forward (client → server) and reverse paths.
    pub fn paths(self) -> (ImpairConfig, ImpairConfig) {
        let ms = Duration::from_millis;
        let base = |delay: u64| ImpairConfig {
            delay: ms(delay),
            mtu: Some(1500),
            ..Default::default()
        };
        match self {
            Mix::Clean => (base(1), base(1)),
            Mix::Loss1 => {
                let p = ImpairConfig {
                    loss: 0.01,
                    ..base(5)
                };
                (p.clone(), p)
            }
            Mix::Loss10 => (
                ImpairConfig {
                    loss: 0.10,
                    ..base(2)
                },
                ImpairConfig {
                    loss: 0.02,
                    ..base(2)
                },
            ),
            Mix::Burst => {
                let p = ImpairConfig {
                    burst: Some(GilbertElliott {
                        p_good_to_bad: 0.01,
                        p_bad_to_good: 0.3,
                        loss_in_bad: 0.5,
                    }),
                    ..base(10)
                };
                (p.clone(), p)
            }
            Mix::Reorder => {
                let p = ImpairConfig {
                    reorder: 0.10,
                    reorder_delay: ms(3),
                    jitter: ms(1),
                    ..base(5)
                };
                (p.clone(), p)
            }
            Mix::Duplicate => {
                let p = ImpairConfig {
                    duplicate: 0.05,
                    reorder: 0.02,
                    loss: 0.01,
                    ..base(2)
                };
                (p.clone(), p)
            }
            Mix::Bottleneck => (
                ImpairConfig {
                    rate_bps: Some(20_000_000),
                    queue_bytes: 64 * 1024,
                    ..base(10)
                },
                base(10),
            ),
            Mix::LongFat => {
                let p = ImpairConfig {
                    rate_bps: Some(200_000_000),
                    queue_bytes: 1 << 20,
                    loss: 0.005,
                    ..base(50)
                };
                (p.clone(), p)
            }
            Mix::Corrupt => {
                let p = ImpairConfig {
                    corrupt: 0.01,
                    loss: 0.01,
                    ..base(3)
                };
                (p.clone(), p)
            }
            Mix::Everything => {
                let p = ImpairConfig {
                    loss: 0.02,
                    burst: Some(GilbertElliott {
                        p_good_to_bad: 0.005,
                        p_bad_to_good: 0.4,
                        loss_in_bad: 0.4,
                    }),
                    reorder: 0.05,
                    reorder_delay: ms(2),
                    jitter: ms(2),
                    duplicate: 0.02,
                    corrupt: 0.005,
                    rate_bps: Some(100_000_000),
                    queue_bytes: 256 * 1024,
                    ..base(5)
                };
                (p.clone(), p)
            }
        }
    }
}

/// The congestion controllers a case may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Controller {
    /// BBR.
    Bbr,
    /// NewReno.
    NewReno,
    /// CUBIC.
    Cubic,
    /// A fixed window (its size chosen by the seed).
    Fixed,
    /// A fixed pacing rate (chosen by the seed).
    Paced,
}

impl Controller {
    /// Every controller.
    pub const ALL: [Controller; 5] = [
        Controller::Bbr,
        Controller::NewReno,
        Controller::Cubic,
        Controller::Fixed,
        Controller::Paced,
    ];
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl fmt::Display for Controller {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Flow counts a case may use.
pub const FLOW_COUNTS: [usize; 5] = [1, 2, 4, 8, 16];

/// One case of the sweep, as its seed makes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepCase {
    /// The seed.
    pub seed: u64,
    /// The path.
    pub mix: Mix,
    /// The controller family.
    pub controller: Controller,
    /// The scenario run (flows, sizes, application behaviour, the controller's
    /// parameters).
    pub scenario: FlowsScenario,
}

impl SweepCase {
    /// The case of `seed`: the mix, the controller and the flow count cycle
    /// through every combination (so any 250 consecutive seeds cover them all);
    /// the rest is drawn from the seed.
    pub fn of_seed(seed: u64) -> Self {
        let nm = Mix::ALL.len() as u64;
        let nc = Controller::ALL.len() as u64;
        let mix = Mix::ALL[(seed % nm) as usize];
        let controller = Controller::ALL[((seed / nm) % nc) as usize];
        let flows = FLOW_COUNTS[((seed / (nm * nc)) % FLOW_COUNTS.len() as u64) as usize];
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed_5eed_5eed_5eed);
        let congestion = match controller {
            Controller::Bbr => CongestionKind::Bbr,
            Controller::NewReno => CongestionKind::NewReno,
            Controller::Cubic => CongestionKind::Cubic,
            Controller::Fixed => CongestionKind::Fixed {
                window_packets: [4, 32, 256, 2048][rng.random_range(0..4)],
            },
            Controller::Paced => CongestionKind::Paced {
                rate_bps: [5_000_000, 50_000_000, 500_000_000][rng.random_range(0..3)],
            },
        };
        // Flow sizes from empty to 400 KB; more flows, smaller each.
        let bytes_per_flow = match rng.random_range(0..10) {
            0 => 0,
            1 => rng.random_range(1..2000),
            _ => rng.random_range(2000..(1_600_000 / flows as u64).clamp(2001, 400_000)),
        };
        let write_size = match rng.random_range(0..8) {
            0 => rng.random_range(1..1500),
            1 => 1400,
            2 => 4096,
            _ => 64 * 1024 + 17,
        };
        // Small writes make one datagram each: keep those flows short.
        let bytes_per_flow = if write_size < 1000 {
            bytes_per_flow.min(50_000)
        } else {
            bytes_per_flow
        };
        let readers = if rng.random_range(0..4) == 0 {
            ReadersStart::AfterAllAccepted(Duration::from_millis(rng.random_range(0..300)))
        } else {
            ReadersStart::AtAccept
        };
        let connects = if rng.random_range(0..2) == 0 {
            Connects::AtOnce
        } else {
            Connects::OneAfterAnother
        };
        let (client_buffers, server_buffers) = match rng.random_range(0..6) {
            0 => (1023, 1023),
            1 => (4095, 4095),
            _ => (16383, 16383),
        };
        // Drawn last, so the draws above stay what they were for every seed.
        let startup = if controller == Controller::Bbr && rng.random_range(0..2) == 0 {
            Startup::FromInitialTrain
        } else {
            Startup::Doubling
        };
        let (forward, reverse) = mix.paths();
        let scenario = FlowsScenario {
            seed,
            flows,
            bytes_per_flow,
            forward,
            reverse,
            transport: TransportConfig::default()
                .with_congestion(congestion)
                .with_startup(startup),
            client_buffers,
            server_buffers,
            write_size,
            connects,
            readers,
            time_limit: Duration::from_secs(600),
            ..Default::default()
        };
        Self {
            seed,
            mix,
            controller,
            scenario,
        }
    }

    /// Runs the case.
    pub fn run(&self) -> SweepOutcome {
        match run_flows(&self.scenario) {
            Ok(r) => SweepOutcome::of_report(&r),
            Err(e) => SweepOutcome {
                ok: false,
                failure: Some(format!("scenario refused: {e}")),
                virtual_time: Duration::ZERO,
                bytes: 0,
                busy_overflows: 0,
            },
        }
    }
}

/// How one case went.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepOutcome {
    /// Every byte intact, every close graceful, every buffer returned.
    pub ok: bool,
    /// What went wrong first, if anything.
    pub failure: Option<String>,
    /// Virtual time the transfer took.
    pub virtual_time: Duration,
    /// Stream bytes verified.
    pub bytes: u64,
    /// Times a loop stayed busy at one instant.
    pub busy_overflows: u64,
}

impl SweepOutcome {
    fn of_report(r: &FlowsReport) -> Self {
        let failure = if r.ok() {
            None
        } else if let Some((i, f)) = r
            .flows
            .iter()
            .enumerate()
            .find(|(_, f)| !f.verified || !f.complete)
        {
            Some(format!(
                "flow {i}: read {} of {} (verified {}), client close {}, server close {}",
                f.read,
                f.written,
                f.verified,
                close_text(&f.client_close),
                close_text(&f.server_close)
            ))
        } else if !r.all_closed_gracefully {
            let (i, f) = r
                .flows
                .iter()
                .enumerate()
                .find(|(_, f)| f.client_close != Some(Ok(())) || f.server_close != Some(Ok(())))
                .expect("one did not close gracefully");
            Some(format!(
                "flow {i}: client close {}, server close {}",
                close_text(&f.client_close),
                close_text(&f.server_close)
            ))
        } else {
            Some(format!(
                "packet buffers not returned: client {}, server {}",
                r.client.buffers_in_use, r.server.buffers_in_use
            ))
        };
        Self {
            ok: r.ok(),
            failure,
            virtual_time: r.elapsed,
            bytes: r.flows.iter().map(|f| f.read).sum(),
            busy_overflows: r.busy_overflows,
        }
    }
}

/// How a close ended, as the sweep has always printed it (`Some(Ok(()))`,
/// `Some(Err("reason"))`, `None`).
fn close_text(c: &Option<Result<(), FlowError>>) -> String {
    format!(
        "{:?}",
        c.as_ref().map(|r| r.as_ref().map_err(|e| e.to_string()))
    )
}
