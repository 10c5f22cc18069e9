//! Which flows a bottleneck's full queue drops. Drop-tail treats every frame
//! alike, so when several flows share the queue the question after a run is
//! whose frames it dropped, and whose burst filled it. Counted per flow: a flow
//! is a UDP 4-tuple, and for pmdt packets also the receiver's connection id (the
//! flows of one `pmdt-send -P` share a 4-tuple). The first [`MAX_FLOWS`] flows
//! are counted by name, the rest together, so the memory is bounded whatever
//! the traffic.
//!
//! An overflow episode is a run of queue drops no more than [`EPISODE_GAP`]
//! apart. When episodes are kept ([`FlowDrops::with_episodes`]), each gets a
//! report: when it began and ended, and for every flow the frames it offered
//! from the first drop to the last and how many were dropped. An episode
//! names the first [`MAX_FLOWS`] flows it sees, so a flow counted as "other"
//! in the run's totals may be named in an episode, and the other way round.
//! Frames are read (parsed) only on a drop, and while an episode is open if
//! episodes are kept. Only the first segment of a frame is read: the headers
//! are there, and a jumbo frame's chain is parsed from them alone.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use etherparse::{LaxNetSlice, LaxSlicedPacket, TransportSlice};
use serde::Serialize;

/// Flows counted by name; drops of any flow beyond them count as "other".
pub const MAX_FLOWS: usize = 16;

/// Drops further apart than this belong to different overflow episodes.
pub const EPISODE_GAP: Duration = Duration::from_millis(20);

/// A flow: UDP source and destination, and the pmdt connection id the packets
/// are for when they are pmdt's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowKey {
    /// Source address and port.
    pub src: SocketAddr,
    /// Destination address and port.
    pub dst: SocketAddr,
    /// The receiver's pmdt connection id (None: not a pmdt packet, or an Init,
    /// which has none yet).
    pub cid: Option<u64>,
}

impl FlowKey {
    /// The flow of an Ethernet frame, if it carries UDP over IPv4 or IPv6
    /// (behind VLAN tags too). `frame` may be cut short (a jumbo frame's first
    /// segment): its headers are enough.
    pub fn of_frame(frame: &[u8]) -> Option<FlowKey> {
        let p = LaxSlicedPacket::from_ethernet(frame).ok()?;
        let (src, dst): (IpAddr, IpAddr) = match p.net? {
            LaxNetSlice::Ipv4(ip) => (
                ip.header().source_addr().into(),
                ip.header().destination_addr().into(),
            ),
            LaxNetSlice::Ipv6(ip) => (
                ip.header().source_addr().into(),
                ip.header().destination_addr().into(),
            ),
            LaxNetSlice::Arp(_) => return None,
        };
        let TransportSlice::Udp(udp) = p.transport? else {
            return None;
        };
        let cid = pmdt::proto::wire::peek_header(udp.payload())
            .ok()
            .map(|(h, _)| h.dst_cid)
            .filter(|&c| c != 0);
        Some(FlowKey {
            src: SocketAddr::new(src, udp.source_port()),
            dst: SocketAddr::new(dst, udp.destination_port()),
            cid,
        })
    }
}

impl fmt::Display for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}>{}", self.src, self.dst)?;
        if let Some(c) = self.cid {
            write!(f, " cid {c:x}")?;
        }
        Ok(())
    }
}

/// One flow's queue drops over the run, for the JSON summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlowDropCount {
    /// The flow ([`FlowKey`]'s form), or "other" for flows beyond [`MAX_FLOWS`]
    /// and frames that are not UDP.
    pub flow: String,
    /// Frames of it the full queue dropped.
    pub queue_drops: u64,
}

/// What one flow did in an overflow episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EpisodeShare {
    /// Frames it offered the queue from the episode's first drop to its last.
    pub offered: u64,
    /// Of them, dropped.
    pub dropped: u64,
}

/// An overflow episode, once over.
#[derive(Debug, Clone, PartialEq)]
pub struct Episode {
    /// Its first drop.
    pub first: Instant,
    /// Its last drop.
    pub last: Instant,
    /// Each flow that offered frames in it ([`None`]: "other").
    pub flows: Vec<(Option<FlowKey>, EpisodeShare)>,
}

impl Episode {
    /// `overflow at 12.345 s for 3.2 ms: <flow> dropped 12 of 340; ...`, the
    /// time from `origin`.
    pub fn describe(&self, origin: Instant) -> String {
        let at = self.first.saturating_duration_since(origin).as_secs_f64();
        let lasted = self
            .last
            .saturating_duration_since(self.first)
            .as_secs_f64()
            * 1e3;
        let flows: Vec<String> = self
            .flows
            .iter()
            .map(|(k, s)| {
                let name = k.map_or("other".to_string(), |k| k.to_string());
                format!("{name} dropped {} of {}", s.dropped, s.offered)
            })
            .collect();
        format!(
            "overflow at {at:.3} s for {lasted:.1} ms: {}",
            flows.join("; ")
        )
    }
}

/// `key`'s counters in `slots`: its own among the first [`MAX_FLOWS`] flows
/// named, else the shared "other" (`None`) ones, added when first needed.
fn slot<T: Default>(slots: &mut Vec<(Option<FlowKey>, T)>, key: Option<FlowKey>) -> &mut T {
    let named = slots.iter().filter(|(k, _)| k.is_some()).count();
    let key = match slots.iter().position(|(k, _)| *k == key) {
        Some(_) => key,
        None if key.is_some() && named >= MAX_FLOWS => None,
        None => key,
    };
    let i = match slots.iter().position(|(k, _)| *k == key) {
        Some(i) => i,
        None => {
            slots.push((key, T::default()));
            slots.len() - 1
        }
    };
    &mut slots[i].1
}

/// The episode under way: each flow's share committed up to the last drop,
/// and the frames it offered since (committed by the next drop, forgotten if
/// none comes).
#[derive(Debug, Clone)]
struct OpenEpisode {
    first: Instant,
    last: Instant,
    flows: Vec<(Option<FlowKey>, (EpisodeShare, u64))>,
}

impl OpenEpisode {
    fn close(self) -> Episode {
        Episode {
            first: self.first,
            last: self.last,
            flows: self
                .flows
                .into_iter()
                .map(|(k, (s, _))| (k, s))
                .filter(|(_, s)| s.offered > 0)
                .collect(),
        }
    }
}

/// Whether overflow episodes are followed.
#[derive(Debug, Clone, Default)]
enum Episodes {
    /// Only the totals are counted.
    #[default]
    Untracked,
    /// Followed; the one under way, if any.
    Tracked(Option<OpenEpisode>),
}

/// Queue drops per flow, and overflow episodes if kept, for one direction of
/// the path. Serialized as the list of [`FlowDropCount`]s, debug-printed as a
/// map from flow to drops.
#[derive(Clone, Default)]
pub struct FlowDrops {
    totals: Vec<(Option<FlowKey>, u64)>,
    episodes: Episodes,
}

impl FlowDrops {
    /// Counts drops per flow and also follows the overflow episodes.
    pub fn with_episodes() -> Self {
        Self {
            totals: Vec::new(),
            episodes: Episodes::Tracked(None),
        }
    }

    /// A frame reached the queue at `at` and was `dropped` or not. Returns the
    /// episode this frame showed to be over (the frame came more than
    /// [`EPISODE_GAP`] after its last drop).
    pub fn offered(&mut self, at: Instant, frame: &[u8], dropped: bool) -> Option<Episode> {
        let over = self.close_if_over(at);
        let open = match &mut self.episodes {
            Episodes::Untracked if !dropped => return None,
            Episodes::Tracked(None) if !dropped => return over,
            Episodes::Untracked => None,
            Episodes::Tracked(open) => Some(open),
        };
        let key = FlowKey::of_frame(frame);
        let Some(open) = open else {
            self.count_drop(key);
            return None;
        };
        let ep = open.get_or_insert_with(|| OpenEpisode {
            first: at,
            last: at,
            flows: Vec::new(),
        });
        let (share, pending) = slot(&mut ep.flows, key);
        *pending += 1;
        if dropped {
            share.dropped += 1;
            ep.last = at;
            for (_, (share, pending)) in &mut ep.flows {
                share.offered += std::mem::take(pending);
            }
            self.count_drop(key);
        }
        over
    }

    /// The open episode, if its last drop is more than [`EPISODE_GAP`] before
    /// `now` (call when no frame comes, to end it on time).
    pub fn close_if_over(&mut self, now: Instant) -> Option<Episode> {
        let Episodes::Tracked(open) = &mut self.episodes else {
            return None;
        };
        if open
            .as_ref()
            .is_some_and(|e| now.saturating_duration_since(e.last) > EPISODE_GAP)
        {
            open.take().map(OpenEpisode::close)
        } else {
            None
        }
    }

    /// The open episode, over or not (at the end of a run).
    pub fn close(&mut self) -> Option<Episode> {
        match &mut self.episodes {
            Episodes::Tracked(open) => open.take().map(OpenEpisode::close),
            Episodes::Untracked => None,
        }
    }

    fn count_drop(&mut self, key: Option<FlowKey>) {
        *slot(&mut self.totals, key) += 1;
    }

    /// Drops per flow so far, in the order the flows were first dropped.
    pub fn totals(&self) -> Vec<FlowDropCount> {
        self.totals
            .iter()
            .map(|(k, n)| FlowDropCount {
                flow: k.map_or("other".to_string(), |k| k.to_string()),
                queue_drops: *n,
            })
            .collect()
    }
}

impl fmt::Debug for FlowDrops {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.totals().into_iter().map(|c| (c.flow, c.queue_drops)))
            .finish()
    }
}

impl Serialize for FlowDrops {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.totals())
    }
}

#[cfg(test)]
mod tests;
