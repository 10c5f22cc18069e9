//! Point-to-multipoint: one stream of data delivered to many receivers (RMDT's
//! multi-destination transfer). Each member is an ordinary connection with its own
//! reliability state (acks, losses, retransmissions, RTT, rate control); what the
//! members share is the payload: the writer copies each piece of data into packet
//! memory once and hands every member another reference to the same buffer (an
//! mbuf reference on DPDK, a shared heap block otherwise). A buffer returns to its
//! pool when the last member that holds it has had it acknowledged (or left), so
//! the data is read once and held once whatever the number of members.
//!
//! Receivers are ordinary: they accept a connection and read a stream.

use pmdt_proto::ConnectOptions;
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::io_loop::Control;
use super::stream::Stream;
use super::Runtime;
use crate::link::Buffer;
use pmdt_proto::CloseReason;
use pmdt_proto::ConnectionStats;

/// Reset code a member gets when the group drops it for lagging behind.
pub const LAGGING_CODE: u32 = 0x6c61_6701;

/// What the group does with a member that falls behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LagPolicy {
    /// The group moves at the pace of its slowest member (memory stays bounded by
    /// one member's buffer). A member that fails (reset, unreachable, silent for
    /// its idle timeout) leaves the group and the others go on.
    #[default]
    PaceOfSlowest,
    /// The group moves at the pace of its fastest members: a member that cannot
    /// take the data yet keeps a backlog (references to the shared buffers, no
    /// copy); when its backlog exceeds `max_lag` bytes it is dropped (its
    /// connection reset with [`LAGGING_CODE`]) and reported with the offset it had
    /// acknowledged, so it can be resumed from there.
    ///
    /// The backlog is what the member's connection could not take (beyond its
    /// share of memory and its peer's window) when the group wrote it, checked
    /// after the member caught up as far as it could: it is the member's true
    /// distance behind the fastest member. A member whose receiver stalls briefly
    /// (descheduled, a pause in its application) falls behind by the fastest
    /// member's rate times the stall: choose `max_lag` to cover the longest stall
    /// to be tolerated at the group's rate. Receivers also deliver ahead of
    /// their readers (up to half their share of receive memory, whatever their
    /// receive window): members whose readers read at the same pace can differ
    /// by that much, so `max_lag` must exceed it too.
    DropLagging {
        /// Largest backlog tolerated, bytes.
        max_lag: u64,
    },
}

/// Where a member stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemberState {
    /// Receiving the group's data.
    Active,
    /// Dropped by [`LagPolicy::DropLagging`].
    Dropped {
        /// Group bytes written when it was dropped.
        group_offset: u64,
    },
    /// Removed by the application ([`Group::remove`]); its stream was finished
    /// gracefully at `group_offset`.
    Left {
        /// Group bytes written when it left.
        group_offset: u64,
    },
    /// Its connection ended with an error before the group finished.
    Failed(CloseReason),
    /// Received everything the group wrote and acknowledged it ([`Group::close`]).
    Done,
}

/// A member's figures.
#[derive(Debug, Clone)]
pub struct MemberReport {
    /// The receiver.
    pub peer: SocketAddr,
    /// Group offset at which the member joined (its stream's byte 0).
    pub joined_at: u64,
    /// Where it stands.
    pub state: MemberState,
    /// Bytes of its stream the receiver acknowledged: with `joined_at`, where a
    /// dropped or failed member can be resumed.
    pub acked: u64,
    /// Its connection's statistics.
    pub stats: ConnectionStats,
}

struct Member {
    stream: Stream,
    joined_at: u64,
    state: MemberState,
    /// Group data its connection could not take yet (references to the shared
    /// buffers), under `DropLagging` only: at most `max_lag` bytes.
    backlog: VecDeque<Buffer>,
    backlog_bytes: u64,
}

impl Member {
    fn new(stream: Stream, joined_at: u64, state: MemberState) -> Self {
        Self {
            stream,
            joined_at,
            state,
            backlog: VecDeque::new(),
            backlog_bytes: 0,
        }
    }

    fn is_active(&self) -> bool {
        self.state == MemberState::Active
    }

    /// Whether its ring has a slot and its share of memory lets it take data.
    fn can_take(&self) -> bool {
        self.stream.tx.slots() > 0 && self.stream.shared.may_write()
    }

    /// Whether it is caught up and can take more now.
    fn ready(&self) -> bool {
        self.backlog.is_empty() && self.can_take()
    }

    /// Hands `buf` to its connection (the caller checked `can_take`).
    fn push(&mut self, buf: Buffer) {
        let n = buf.bytes().len() as u64;
        if self.stream.tx.push(buf).is_err() {
            unreachable!("the member had a free slot");
        }
        self.stream.shared.ring_bytes.queued(n);
    }

    /// Moves what it can of its backlog to its connection.
    fn catch_up(&mut self) -> bool {
        let mut moved = false;
        while self.can_take() {
            let Some(b) = self.backlog.pop_front() else {
                break;
            };
            self.backlog_bytes -= b.bytes().len() as u64;
            self.push(b);
            moved = true;
        }
        moved
    }

    fn report(&self) -> MemberReport {
        let stats = self.stream.stats();
        MemberReport {
            peer: self.stream.peer_addr(),
            joined_at: self.joined_at,
            state: self.state.clone(),
            acked: stats.stream_bytes_acked,
            stats,
        }
    }
}

/// One sender, many receivers (RMDT's point-to-multipoint transfer): each member
/// is its own connection with its own reliability and rate control, all sharing one
/// copy of the payload in packet memory; receivers are ordinary. Writes block (parking
/// the thread) until every active member can take the data, except that under
/// [`LagPolicy::DropLagging`] a member too far behind is dropped instead.
pub struct Group {
    members: Vec<Member>,
    policy: LagPolicy,
    written: u64,
    copied: u64,
}

impl std::fmt::Debug for Group {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("members", &self.members.len())
            .field("policy", &self.policy)
            .field("written", &self.written)
            .finish()
    }
}

impl Runtime {
    /// Opens one connection to each of `to` (all handshakes at once) and returns
    /// them as a group. A destination that cannot be reached is reported as a
    /// [`MemberState::Failed`] member; it is an error only when none can.
    pub fn connect_group(
        &self,
        to: &[SocketAddr],
        policy: LagPolicy,
        timeout: Option<Duration>,
    ) -> io::Result<Group> {
        if to.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a group needs at least one destination",
            ));
        }
        let mut pending = Vec::with_capacity(to.len());
        for &addr in to {
            pending.push(self.start_connect(addr)?);
        }
        let mut members = Vec::with_capacity(to.len());
        let mut last_err = None;
        let gone = || io::Error::new(io::ErrorKind::NotConnected, "the runtime has shut down");
        for (i, p) in pending {
            // Run to completion: nobody else runs the loop that opens the
            // connection (waiting on the reply alone hung for ever).
            let stream = match self.loops[i].driver() {
                Some(d) => {
                    let mut got = None;
                    d.drive_until(super::caller::Urgency::Data, || {
                        got = got.take().or_else(|| p.try_recv().ok());
                        got.is_some()
                    });
                    got.ok_or_else(gone)??
                }
                None => p.recv().map_err(|_| gone())??,
            };
            let state = match stream.wait_established(timeout) {
                Ok(()) => {
                    // Listed by telemetry like any connection handed out.
                    self.directory.register(&stream.shared);
                    MemberState::Active
                }
                Err(e) => {
                    let r = stream.close_reason().unwrap_or(CloseReason::TimedOut);
                    last_err = Some(e);
                    MemberState::Failed(r)
                }
            };
            members.push(Member::new(stream, 0, state));
        }
        if !members.iter().any(Member::is_active) {
            return Err(last_err.unwrap_or_else(|| io::Error::other("no member connected")));
        }
        Ok(Group {
            members,
            policy,
            written: 0,
            copied: 0,
        })
    }

    /// Asks a loop to open a connection to `to`: the loop's index and where its
    /// stream will come.
    fn start_connect(
        &self,
        to: SocketAddr,
    ) -> io::Result<(usize, std::sync::mpsc::Receiver<io::Result<Stream>>)> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.loops.len();
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.loops[i]
            .control
            .send(Control::Connect {
                to,
                options: ConnectOptions::default(),
                reply: tx,
            })
            .map_err(|_| {
                io::Error::new(io::ErrorKind::NotConnected, "the runtime has shut down")
            })?;
        Ok((i, rx))
    }
}

impl Group {
    /// Adds an established connection (e.g. from [`Runtime::connect`]) as a member:
    /// it receives the group's data from the current offset on (its stream's byte
    /// 0 is group offset [`Group::written`]).
    pub fn join(&mut self, stream: Stream) {
        self.members
            .push(Member::new(stream, self.written, MemberState::Active));
    }

    /// Removes the member `peer`: its stream is finished gracefully (it gets what
    /// was written so far). Returns whether it was an active member.
    pub fn remove(&mut self, peer: SocketAddr) -> bool {
        let written = self.written;
        match self
            .members
            .iter_mut()
            .find(|m| m.is_active() && m.stream.peer_addr() == peer)
        {
            Some(m) => {
                m.stream.finish();
                m.state = MemberState::Left {
                    group_offset: written,
                };
                true
            }
            None => false,
        }
    }

    /// Bytes written to the group.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Bytes copied into packet memory: equal to [`Group::written`] whatever the
    /// number of members (every member references the same copy).
    pub fn bytes_copied(&self) -> u64 {
        self.copied
    }

    /// Members still receiving.
    pub fn active(&self) -> usize {
        self.members.iter().filter(|m| m.is_active()).count()
    }

    /// Every member's state and figures (statistics refreshed by the I/O loop every
    /// 100 ms and at close).
    pub fn members(&self) -> Vec<MemberReport> {
        self.members.iter().map(Member::report).collect()
    }

    /// Moves members whose connection ended into `Failed` (their backlog is
    /// released).
    fn update_members(&mut self) {
        for m in self.members.iter_mut().filter(|m| m.is_active()) {
            if let Some(r) = m.stream.close_reason() {
                // A graceful close needs our finish and every byte acknowledged.
                m.state = match r {
                    CloseReason::Graceful => MemberState::Done,
                    r => MemberState::Failed(r),
                };
                m.backlog.clear();
                m.backlog_bytes = 0;
            }
        }
    }

    /// Drops (resets) members whose backlog exceeds `max_lag`.
    fn drop_laggards(&mut self, max_lag: u64) {
        let written = self.written;
        for m in self.members.iter_mut().filter(|m| m.is_active()) {
            if m.backlog_bytes > max_lag {
                tracing::info!(peer = %m.stream.peer_addr(), lag = m.backlog_bytes, written,
                    "dropping a member that lags behind the group");
                m.stream.abort_handle().abort(LAGGING_CODE);
                m.state = MemberState::Dropped {
                    group_offset: written,
                };
                m.backlog.clear();
                m.backlog_bytes = 0;
            }
        }
    }

    /// Writes what the group can take now, without blocking: the data is copied
    /// into packet memory once and each member gets a reference. Under
    /// `PaceOfSlowest` every active member must be able to take it; under
    /// `DropLagging` one is enough (the others keep a backlog, up to `max_lag`).
    /// `WouldBlock` when nothing could be taken; `NotConnected` when no member is
    /// left.
    pub fn try_write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.update_members();
        for m in self.members.iter_mut().filter(|m| m.is_active()) {
            if m.catch_up() {
                m.stream.shared.ring_doorbell();
            }
        }
        let Some(lead) = self.members.iter().position(Member::is_active) else {
            return Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "every member of the group has left or failed",
            ));
        };
        if data.is_empty() {
            return Ok(0);
        }
        self.members[lead].stream.pool.attach_thread();
        // One buffer goes to every member: the smallest datagram among them.
        let chunk = self
            .members
            .iter()
            .filter(|m| m.is_active())
            .map(|m| m.stream.shared.chunk())
            .min()
            .unwrap_or(1);
        let mut done = 0;
        while done < data.len() && self.may_take() {
            let s = &mut self.members[lead].stream;
            // None also once the pool is down to the reserve kept for receiving.
            let Some(buf) = s
                .pool
                .copy_from_stashed(&data[done..], chunk, s.reserve, &mut s.stash)
            else {
                break;
            };
            let n = buf.bytes().len() as u64;
            done += n as usize;
            self.copied += n;
            self.written += n;
            for m in self.members.iter_mut().filter(|m| m.is_active()) {
                // A member's backlog counts only what its connection cannot take
                // now: one that fell behind for a moment (its ring full until its
                // I/O loop ran) catches up before it is judged, so a long write
                // does not pile the rest of the call onto a member keeping pace.
                m.catch_up();
                if m.ready() {
                    m.push(buf.share());
                } else {
                    m.backlog_bytes += n;
                    m.backlog.push_back(buf.share());
                }
            }
            if let LagPolicy::DropLagging { max_lag } = self.policy {
                self.drop_laggards(max_lag);
            }
        }
        for m in self.members.iter().filter(|m| m.is_active()) {
            m.stream.shared.ring_doorbell();
        }
        if done == 0 {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(done)
    }

    /// Whether the group may take another piece of data now.
    fn may_take(&self) -> bool {
        let mut active = self.members.iter().filter(|m| m.is_active());
        match self.policy {
            LagPolicy::PaceOfSlowest => active.all(Member::ready),
            LagPolicy::DropLagging { .. } => active.any(Member::ready),
        }
    }

    /// Parks until the first member that cannot take data can, or its stream's park
    /// timeout (the runtime's, 5 ms by default: how late a lag check can be).
    fn wait_members(&self) {
        match self.members.iter().find(|m| m.is_active() && !m.can_take()) {
            Some(m) => {
                let s = &m.stream.shared;
                let tx = &m.stream.tx;
                s.waiter.wait_regularly(|| {
                    s.closed_flag.load(Ordering::Acquire)
                        || s.writer_may_resume(tx.slots(), tx.buffer().capacity())
                });
            }
            // Everyone has room but the packet pool is exhausted: back off.
            None => match self.members.first() {
                Some(m) => m.stream.shared.waiter.backoff(),
                None => std::thread::sleep(Duration::from_micros(100)),
            },
        }
    }

    /// Every member's stream, in the order of [`Group::members`] (to read their
    /// statistics, connection ids, abort handles).
    pub fn streams(&self) -> impl Iterator<Item = &Stream> {
        self.members.iter().map(|m| &m.stream)
    }

    /// The streams of the members still active, with their index in
    /// [`Group::members`] (after [`Group::finish`], to read what each receiver
    /// answers).
    pub fn active_streams_mut(&mut self) -> impl Iterator<Item = (usize, &mut Stream)> {
        self.members
            .iter_mut()
            .enumerate()
            .filter(|(_, m)| m.is_active())
            .map(|(i, m)| (i, &mut m.stream))
    }

    /// Hands every member its backlog (waiting up to `timeout`), then finishes each
    /// active member's stream: the receivers read end of stream after the last
    /// byte, and can still answer (see [`Group::active_streams_mut`]).
    pub fn finish(&mut self, timeout: Option<Duration>) {
        let deadline = timeout.map(|t| Instant::now() + t);
        self.flush_backlogs(deadline);
        for m in self.members.iter_mut().filter(|m| m.is_active()) {
            m.stream.finish();
        }
    }

    fn flush_backlogs(&mut self, deadline: Option<Instant>) {
        loop {
            self.update_members();
            let mut pending = false;
            for m in self.members.iter_mut().filter(|m| m.is_active()) {
                if m.catch_up() {
                    m.stream.shared.ring_doorbell();
                }
                pending |= !m.backlog.is_empty();
            }
            if !pending || deadline.is_some_and(|d| Instant::now() >= d) {
                return;
            }
            self.wait_members();
        }
    }

    /// Finishes every active member's stream and waits until each has acknowledged
    /// everything (or failed, or `timeout` passed: the ones still going are then
    /// reported `Failed(TimedOut)`); returns every member's report.
    pub fn close(&mut self, timeout: Option<Duration>) -> Vec<MemberReport> {
        let deadline = timeout.map(|t| Instant::now() + t);
        // Members behind first get their backlog.
        self.flush_backlogs(deadline);
        for m in self.members.iter_mut().filter(|m| m.is_active()) {
            m.stream.finish();
        }
        for m in self.members.iter_mut().filter(|m| m.is_active()) {
            loop {
                if let Some(r) = m.stream.close_reason() {
                    m.state = match r {
                        CloseReason::Graceful => MemberState::Done,
                        r => MemberState::Failed(r),
                    };
                    break;
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    m.stream.abort_handle().abort(0);
                    m.state = MemberState::Failed(CloseReason::TimedOut);
                    break;
                }
                while m.stream.rx.pop().is_ok() {}
                let s = &m.stream.shared;
                s.discard.store(true, Ordering::Release);
                // Regularly: the close timeout is checked between parks.
                s.waiter
                    .wait_regularly(|| s.closed_flag.load(Ordering::Acquire));
            }
        }
        self.members()
    }
}

impl io::Write for Group {
    /// Blocks (parking the thread) until some bytes were taken by every active
    /// member, or fails when none is left.
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        loop {
            match self.try_write(data) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait_members(),
                r => return r,
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
