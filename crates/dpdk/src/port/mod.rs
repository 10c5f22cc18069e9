//! Ethernet ports (`rte_ethdev`): lookup, configuration, start/stop, info, stats.

mod config;
mod info;
mod queue;

pub use config::{Offloads, PortConfig};
pub use info::{LinkStatus, MacAddr, PortInfo, PortStats};
pub use queue::{RxQueue, TxQueue};

use std::collections::BTreeSet;
use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::eal::Eal;
use crate::error::{check, Error, ErrorKind, Result};
use crate::interrupt_thread::{self, lease};
use crate::mempool::Mempool;

/// Drivers that tear a port down on the EAL interrupt thread when the peer goes
/// away: their stop and close run on that thread, their bursts under its lease
/// (see `interrupt_thread`).
const TORN_DOWN_BY_INTERRUPTS: &[&str] = &["net_memif"];

/// Port ids owned by a live [`Port`] (or its queues) in this process: one owner per
/// port, so two handles never burst on, stop or close the same device.
static CLAIMED: Mutex<BTreeSet<u16>> = Mutex::new(BTreeSet::new());

fn claimed() -> MutexGuard<'static, BTreeSet<u16>> {
    CLAIMED.lock().unwrap_or_else(|e| e.into_inner())
}

/// One queue's "a burst is running" flag, on its own cache line.
#[repr(align(64))]
#[derive(Default)]
pub(crate) struct BurstGate {
    busy: AtomicBool,
}

impl BurstGate {
    /// Whether a burst through this gate is running.
    pub(crate) fn is_busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }
}

/// State shared by a port and its queues: the port is stopped and closed only after
/// the [`Port`] and every queue handle are gone.
///
/// Control operations that DPDK forbids while queues burst (stop, MAC change, stats
/// reset) close `open` and wait until no queue is inside a burst; a queue marks
/// itself busy, then bursts only if `open` is set (a Dekker handshake: both sides
/// store, then load the other's flag, sequentially consistent).
pub(crate) struct PortShared {
    pub(crate) id: u16,
    started: AtomicBool,
    /// Whether queues may call into the PMD now.
    open: AtomicBool,
    /// Every queue's burst flag.
    gates: Mutex<Vec<Arc<BurstGate>>>,
    /// Pools the rx queues refill from: they must outlive the port.
    pools: Mutex<Vec<Arc<Mempool>>>,
    /// For a driver the interrupt thread tears down: the lease its bursts need.
    lease: Option<lease::Holder>,
    /// Serializes [`Port::link`] reads: queues on several threads may ask
    /// (DPDK does not promise a driver's `link_update` is reentrant).
    link_read: Mutex<()>,
    _eal: Eal,
}

impl PortShared {
    /// A new gate for a queue handle.
    fn gate(&self) -> Arc<BurstGate> {
        let g = Arc::new(BurstGate::default());
        self.gates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(g.clone());
        if self.lease.is_some() {
            lease::watch(&g);
        }
        g
    }

    /// Runs a control operation where the driver needs it: on the interrupt thread
    /// for a driver torn down there, else here.
    fn control<R: Send + 'static>(&self, f: impl FnOnce() -> R + Send + 'static) -> R {
        if self.lease.is_some() {
            interrupt_thread::run(f)
        } else {
            f()
        }
    }

    /// Enters a burst on a queue: false when the port is not open for bursts (or,
    /// for a driver torn down by the interrupt thread, that thread is not parked in
    /// a lease).
    #[inline]
    pub(crate) fn enter(&self, gate: &BurstGate) -> bool {
        gate.busy.store(true, Ordering::SeqCst);
        if self.open.load(Ordering::SeqCst) && (self.lease.is_none() || lease::granted()) {
            true
        } else {
            gate.busy.store(false, Ordering::Release);
            false
        }
    }

    /// Leaves a burst entered with [`PortShared::enter`].
    #[inline]
    pub(crate) fn leave(&self, gate: &BurstGate) {
        gate.busy.store(false, Ordering::Release);
    }

    /// Closes the port to bursts and waits until none is running; returns whether it
    /// was open.
    fn quiesce(&self) -> bool {
        let was_open = self.open.swap(false, Ordering::SeqCst);
        let gates = self.gates.lock().unwrap_or_else(|e| e.into_inner());
        for g in gates.iter() {
            while g.busy.load(Ordering::SeqCst) {
                std::hint::spin_loop();
                std::thread::yield_now();
            }
        }
        was_open
    }
}

impl Drop for PortShared {
    fn drop(&mut self) {
        // No queue handle is left (they hold this Arc): no burst needs the lease.
        let leased = self.lease.take().is_some();
        let (id, started) = (self.id, self.started.load(Ordering::Acquire));
        let stop_and_close = move || {
            // SAFETY: no queue handle is left, so nothing bursts on the port; stop
            // then close the device.
            unsafe {
                if started {
                    dpdk_sys::rte_eth_dev_stop(id);
                }
                dpdk_sys::rte_eth_dev_close(id);
            }
        };
        if leased {
            interrupt_thread::run(stop_and_close);
        } else {
            stop_and_close();
        }
        // Pools drop after the device stopped using them.
        self.pools.lock().map(|mut p| p.clear()).ok();
        claimed().remove(&self.id);
    }
}

/// An Ethernet port (physical or virtual). Owned, one per port id in the process:
/// dropping it (and its queues) stops and closes the device.
///
/// Control operations that DPDK forbids while queues burst take `&mut self` and
/// pause the queues' bursts (wherever they run) for their duration; a shared
/// `&Port` cannot stop the port:
///
/// ```compile_fail
/// fn stop_shared(p: &dpdk::Port) { p.stop().unwrap(); }
/// ```
///
/// The port helpers need a running EAL:
///
/// ```compile_fail
/// let n = dpdk::Port::count();
/// ```
pub struct Port {
    shared: Arc<PortShared>,
    enabled_rx_offloads: u64,
    enabled_tx_offloads: u64,
    configured: bool,
}

impl std::fmt::Debug for Port {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Port").field("id", &self.shared.id).finish()
    }
}

impl Port {
    /// Number of available ports. Takes the [`Eal`] as proof that it is running.
    pub fn count(_eal: &Eal) -> u16 {
        count_avail()
    }

    /// Ids of all available ports.
    pub fn ids(_eal: &Eal) -> Vec<u16> {
        ids()
    }

    /// Name of a port id.
    pub fn name_of(_eal: &Eal, id: u16) -> Option<String> {
        name_of(id)
    }

    /// Port id of a device name (e.g. `"net_tap0"`), with a clear error naming the
    /// ports that do exist.
    pub fn id_by_name(_eal: &Eal, name: &str) -> Result<u16> {
        id_by_name(name)
    }

    /// Opens port `id` (not yet configured). A port has one owner in the process:
    /// while a [`Port`] (or one of its queues) for `id` is alive, opening it again is
    /// an [`ErrorKind::Busy`] error.
    pub fn open(eal: &Eal, id: u16) -> Result<Self> {
        // SAFETY: plain query.
        if unsafe { dpdk_sys::rte_eth_dev_is_valid_port(id) } == 0 {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("open port {id}"),
                format!("no such port; {} ports available", count_avail()),
            ));
        }
        if !claimed().insert(id) {
            return Err(Error::new(
                ErrorKind::Busy,
                format!("open port {id}"),
                "the port is already open in this process (one owner per port); drop the \
                 other Port and its queues first",
            ));
        }
        let torn_down_by_interrupts = raw_dev_info(id)
            .map(|di| TORN_DOWN_BY_INTERRUPTS.contains(&port_info(id, &di).driver.as_str()))
            .unwrap_or(false);
        Ok(Self {
            shared: Arc::new(PortShared {
                id,
                started: AtomicBool::new(false),
                open: AtomicBool::new(false),
                gates: Mutex::new(Vec::new()),
                pools: Mutex::new(Vec::new()),
                lease: torn_down_by_interrupts.then(|| lease::Holder::new(id)),
                link_read: Mutex::new(()),
                _eal: eal.clone(),
            }),
            enabled_rx_offloads: 0,
            enabled_tx_offloads: 0,
            configured: false,
        })
    }

    /// Opens the port with device name `name`.
    pub fn open_by_name(eal: &Eal, name: &str) -> Result<Self> {
        Self::open(eal, id_by_name(name)?)
    }

    /// Port id.
    pub fn id(&self) -> u16 {
        self.shared.id
    }

    /// Device facts.
    pub fn info(&self) -> Result<PortInfo> {
        Ok(port_info(self.id(), &raw_dev_info(self.id())?))
    }

    /// Configures queues and offloads (once) and returns the queue handles. Rx queues
    /// refill from `pool`, which the port keeps alive (even when a later step fails:
    /// queues set up so far refer to it). Offloads the device lacks are left off (see
    /// [`Port::enabled_tx_offloads`]). After a failure the port cannot start until a
    /// configure succeeds.
    pub fn configure(
        &mut self,
        cfg: &PortConfig,
        pool: &Arc<Mempool>,
    ) -> Result<(Vec<RxQueue>, Vec<TxQueue>)> {
        let id = self.id();
        if self.configured {
            return Err(Error::new(
                ErrorKind::Busy,
                format!("configure port {id}"),
                "already configured; queues are handed out once",
            ));
        }
        let di = raw_dev_info(id)?;
        let info = port_info(id, &di);
        if cfg.rx_queues == 0 || cfg.rx_queues > info.max_rx_queues.max(1) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("configure port {id}"),
                format!(
                    "{} rx queues requested, device allows 1..={}",
                    cfg.rx_queues, info.max_rx_queues
                ),
            ));
        }
        if cfg.tx_queues == 0 || cfg.tx_queues > info.max_tx_queues.max(1) {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("configure port {id}"),
                format!(
                    "{} tx queues requested, device allows 1..={}",
                    cfg.tx_queues, info.max_tx_queues
                ),
            ));
        }
        let mut conf: dpdk_sys::rte_eth_conf = Default::default();
        let rx_off = cfg.offloads.rx_bits() & info.rx_offload_capa;
        let tx_off = cfg.offloads.tx_bits() & info.tx_offload_capa;
        conf.rxmode.offloads = rx_off;
        conf.txmode.offloads = tx_off;
        let rss_hf = (dpdk_sys::RTE_ETH_RSS_IP as u64 | dpdk_sys::RTE_ETH_RSS_UDP as u64)
            & info.rss_offloads;
        if cfg.rss && cfg.rx_queues > 1 && rss_hf != 0 {
            conf.rxmode.mq_mode = dpdk_sys::RTE_ETH_MQ_RX_RSS;
            conf.rx_adv_conf.rss_conf.rss_hf = rss_hf;
        }
        if cfg.rx_interrupts {
            conf.intr_conf.set_rxq(1);
        }
        // SAFETY: valid port and conf; the port is not started.
        check(&format!("configure port {id} ({})", info.name), unsafe {
            dpdk_sys::rte_eth_dev_configure(id, cfg.rx_queues, cfg.tx_queues, &conf)
        })?;
        let (mut nb_rx, mut nb_tx) = (cfg.rx_desc, cfg.tx_desc);
        // SAFETY: valid port and out pointers.
        check("adjust descriptor counts", unsafe {
            dpdk_sys::rte_eth_dev_adjust_nb_rx_tx_desc(id, &mut nb_rx, &mut nb_tx)
        })?;
        if let Some(mtu) = cfg.mtu {
            // SAFETY: valid port.
            let r = unsafe { dpdk_sys::rte_eth_dev_set_mtu(id, mtu) };
            // Devices without an MTU setting (memif, net_ring) carry what fits their
            // buffers; `mtu_required: false` accepts that.
            if r != -libc_enotsup() || cfg.mtu_required {
                check(&format!("set MTU {mtu} on port {id}"), r)?;
            }
        }
        let socket = info.socket.max(0) as u32;
        // Keep the pool before any rx queue refers to it: a later step may fail, and
        // the queues set up so far stay with the device.
        {
            let mut pools = self.shared.pools.lock().unwrap_or_else(|e| e.into_inner());
            if !pools.iter().any(|p| Arc::ptr_eq(p, pool)) {
                pools.push(pool.clone());
            }
        }
        let mut rxq = Vec::new();
        for q in 0..cfg.rx_queues {
            // SAFETY: valid port/queue, default rxconf (NULL), pool outlives the port.
            check(&format!("set up rx queue {q} of port {id}"), unsafe {
                dpdk_sys::rte_eth_rx_queue_setup(
                    id,
                    q,
                    nb_rx,
                    socket,
                    std::ptr::null(),
                    pool.as_ptr(),
                )
            })?;
            rxq.push(RxQueue::new(
                self.shared.clone(),
                self.shared.gate(),
                q,
                cfg.rx_interrupts,
            ));
        }
        let mut txconf = di.default_txconf;
        txconf.offloads = tx_off;
        let mut txq = Vec::new();
        for q in 0..cfg.tx_queues {
            // SAFETY: valid port/queue and txconf.
            check(&format!("set up tx queue {q} of port {id}"), unsafe {
                dpdk_sys::rte_eth_tx_queue_setup(id, q, nb_tx, socket, &txconf)
            })?;
            txq.push(TxQueue::new(self.shared.clone(), self.shared.gate(), q));
        }
        if cfg.promiscuous {
            // SAFETY: valid port. Unsupported (some vdevs) is fine: nothing to filter.
            let r = unsafe { dpdk_sys::rte_eth_promiscuous_enable(id) };
            if r < 0 && r != -95 {
                check(&format!("enable promiscuous mode on port {id}"), r)?;
            }
        }
        self.enabled_rx_offloads = rx_off;
        self.enabled_tx_offloads = tx_off;
        self.configured = true;
        Ok((rxq, txq))
    }

    /// Tx offload bits actually enabled by [`Port::configure`].
    pub fn enabled_tx_offloads(&self) -> u64 {
        self.enabled_tx_offloads
    }

    /// Rx offload bits actually enabled by [`Port::configure`].
    pub fn enabled_rx_offloads(&self) -> u64 {
        self.enabled_rx_offloads
    }

    /// Sets the port's MAC address (`rte_eth_dev_default_mac_addr_set`); not every
    /// device supports it. Exclusive: queue bursts pause (on every lcore) while it
    /// runs, as DPDK requires for control operations.
    pub fn set_mac(&mut self, mac: MacAddr) -> Result<()> {
        let mut a = dpdk_sys::rte_ether_addr { addr_bytes: mac.0 };
        let id = self.id();
        let was_open = self.shared.quiesce();
        // SAFETY: valid port id and address struct for the duration of the call; no
        // queue is inside a burst (quiesced).
        let r = unsafe { dpdk_sys::rte_eth_dev_default_mac_addr_set(id, &mut a) };
        self.shared.open.store(was_open, Ordering::SeqCst);
        check(&format!("set MAC {mac} on port {id}"), r).map(|_| ())
    }

    /// Starts the port. Only after a successful [`Port::configure`] (a failed one may
    /// have left queues half set up).
    pub fn start(&mut self) -> Result<()> {
        let id = self.id();
        if !self.configured {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!("start port {id}"),
                "the port is not configured (configure it successfully first)",
            ));
        }
        // SAFETY: valid, configured port; queues do not burst until `open` is set.
        let r = self
            .shared
            .control(move || unsafe { dpdk_sys::rte_eth_dev_start(id) });
        check(&format!("start port {id}"), r)?;
        self.shared.started.store(true, Ordering::Release);
        self.shared.open.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Stops the port; queue handles stay valid and receive nothing (their bursts
    /// return 0 without entering the PMD) until restarted. Waits for bursts running
    /// on other lcores to finish first.
    pub fn stop(&mut self) -> Result<()> {
        let id = self.id();
        let was_open = self.shared.quiesce();
        // SAFETY: valid port; no queue is inside a burst and none enters one.
        let r = self
            .shared
            .control(move || unsafe { dpdk_sys::rte_eth_dev_stop(id) });
        if let Err(e) = check(&format!("stop port {id}"), r) {
            self.shared.open.store(was_open, Ordering::SeqCst);
            return Err(e);
        }
        self.shared.started.store(false, Ordering::Release);
        Ok(())
    }

    /// Link status without waiting. Reads of one port from several threads
    /// (its queues' I/O loops) take turns. One may still run beside the
    /// interrupt thread's own read for a lease (memif's and TAP's
    /// `link_update` only read the device's state).
    pub fn link(&self) -> Result<LinkStatus> {
        let _turn = self
            .shared
            .link_read
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut l: dpdk_sys::rte_eth_link = Default::default();
        // SAFETY: valid port and out pointer.
        check("get link status", unsafe {
            dpdk_sys::rte_eth_link_get_nowait(self.id(), &mut l)
        })?;
        Ok(LinkStatus {
            up: l.link_status() != 0,
            speed_mbps: l.link_speed,
            full_duplex: l.link_duplex() != 0,
            autoneg: l.link_autoneg() != 0,
        })
    }

    /// Polls the link until it is up or `timeout` passes.
    pub fn wait_link_up(&self, timeout: std::time::Duration) -> Result<LinkStatus> {
        let start = std::time::Instant::now();
        loop {
            let l = self.link()?;
            if l.up {
                return Ok(l);
            }
            if start.elapsed() >= timeout {
                return Err(Error::new(
                    ErrorKind::Dpdk,
                    format!("wait for link up on port {}", self.id()),
                    format!("link still down after {timeout:?}"),
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Basic counters.
    pub fn stats(&self) -> Result<PortStats> {
        let mut s: dpdk_sys::rte_eth_stats = Default::default();
        // SAFETY: valid port and out pointer.
        check("get port stats", unsafe {
            dpdk_sys::rte_eth_stats_get(self.id(), &mut s)
        })?;
        Ok(PortStats {
            ipackets: s.ipackets,
            opackets: s.opackets,
            ibytes: s.ibytes,
            obytes: s.obytes,
            imissed: s.imissed,
            ierrors: s.ierrors,
            oerrors: s.oerrors,
            rx_nombuf: s.rx_nombuf,
        })
    }

    /// Resets the basic counters. Exclusive: queue bursts pause while it runs (PMDs
    /// reset per-queue counters the bursts update).
    pub fn reset_stats(&mut self) -> Result<()> {
        let was_open = self.shared.quiesce();
        // SAFETY: valid port; no queue is inside a burst.
        let r = unsafe { dpdk_sys::rte_eth_stats_reset(self.id()) };
        self.shared.open.store(was_open, Ordering::SeqCst);
        check("reset port stats", r)?;
        Ok(())
    }

    /// Extended, driver-specific counters as (name, value) pairs.
    pub fn xstats(&self) -> Result<Vec<(String, u64)>> {
        let id = self.id();
        // SAFETY: a NULL array asks for the count.
        let n = check("count xstats", unsafe {
            dpdk_sys::rte_eth_xstats_get_names(id, std::ptr::null_mut(), 0)
        })? as usize;
        let mut names = vec![dpdk_sys::rte_eth_xstat_name::default(); n];
        let mut vals = vec![dpdk_sys::rte_eth_xstat::default(); n];
        // SAFETY: arrays of n entries.
        let got_n = check("get xstat names", unsafe {
            dpdk_sys::rte_eth_xstats_get_names(id, names.as_mut_ptr(), n as u32)
        })? as usize;
        // SAFETY: arrays of n entries.
        let got_v = check("get xstats", unsafe {
            dpdk_sys::rte_eth_xstats_get(id, vals.as_mut_ptr(), n as u32)
        })? as usize;
        let m = got_n.min(got_v).min(n);
        Ok(vals[..m]
            .iter()
            .filter_map(|v| {
                let name = names.get(v.id as usize)?;
                // SAFETY: names are NUL-terminated within their fixed buffers.
                let s = unsafe { CStr::from_ptr(name.name.as_ptr()) };
                Some((s.to_string_lossy().into_owned(), v.value))
            })
            .collect())
    }
}

/// The device's `rte_eth_dev_info`.
fn raw_dev_info(id: u16) -> Result<dpdk_sys::rte_eth_dev_info> {
    let mut di: dpdk_sys::rte_eth_dev_info = Default::default();
    // SAFETY: valid port, valid out pointer.
    check("get port info", unsafe {
        dpdk_sys::rte_eth_dev_info_get(id, &mut di)
    })?;
    Ok(di)
}

/// Port facts from the device info, plus MTU, MAC and name.
fn port_info(id: u16, di: &dpdk_sys::rte_eth_dev_info) -> PortInfo {
    let mut mtu = 0u16;
    // SAFETY: valid port and out pointer.
    unsafe { dpdk_sys::rte_eth_dev_get_mtu(id, &mut mtu) };
    let mut mac: dpdk_sys::rte_ether_addr = Default::default();
    // SAFETY: valid port and out pointer.
    unsafe { dpdk_sys::rte_eth_macaddr_get(id, &mut mac) };
    let driver = if di.driver_name.is_null() {
        String::new()
    } else {
        // SAFETY: the driver name is a static C string.
        unsafe { CStr::from_ptr(di.driver_name) }
            .to_string_lossy()
            .into_owned()
    };
    PortInfo {
        id,
        name: name_of(id).unwrap_or_default(),
        driver,
        mac: MacAddr(mac.addr_bytes),
        mtu,
        min_mtu: di.min_mtu,
        max_mtu: di.max_mtu,
        max_rx_queues: di.max_rx_queues,
        max_tx_queues: di.max_tx_queues,
        rx_offload_capa: di.rx_offload_capa,
        tx_offload_capa: di.tx_offload_capa,
        rss_offloads: di.flow_type_rss_offloads,
        // SAFETY: plain query.
        socket: unsafe { dpdk_sys::rte_eth_dev_socket_id(id) },
        if_index: di.if_index,
    }
}

/// Number of available ports (callers hold an [`Eal`]).
pub(crate) fn count_avail() -> u16 {
    // SAFETY: the EAL is running (every caller holds an Eal).
    unsafe { dpdk_sys::rte_eth_dev_count_avail() }
}

fn ids() -> Vec<u16> {
    let mut v = Vec::new();
    let mut id = 0u16;
    // SAFETY: iterating with the documented rte_eth_find_next_owned_by(…, 0).
    unsafe {
        loop {
            let next = dpdk_sys::rte_eth_find_next_owned_by(id, 0);
            if next >= dpdk_sys::RTE_MAX_ETHPORTS as u64 {
                break;
            }
            v.push(next as u16);
            id = next as u16 + 1;
        }
    }
    v
}

fn name_of(id: u16) -> Option<String> {
    let mut buf = [0 as c_char; 64];
    // SAFETY: buffer of RTE_ETH_NAME_MAX_LEN (64) bytes.
    let r = unsafe { dpdk_sys::rte_eth_dev_get_name_by_port(id, buf.as_mut_ptr()) };
    // SAFETY: on success the buffer holds a NUL-terminated name.
    (r == 0).then(|| {
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    })
}

fn id_by_name(name: &str) -> Result<u16> {
    let op = format!("find port {name:?}");
    let c = CString::new(name)
        .map_err(|_| Error::new(ErrorKind::InvalidArgument, op.clone(), "NUL in name"))?;
    let mut id = 0u16;
    // SAFETY: valid C string and out pointer.
    let r = unsafe { dpdk_sys::rte_eth_dev_get_port_by_name(c.as_ptr(), &mut id) };
    if r != 0 {
        let have: Vec<String> = ids().into_iter().filter_map(name_of).collect();
        return Err(Error::new(
            ErrorKind::NotFound,
            op,
            format!(
                "no such device; available ports: [{}] (add it with --vdev or allow its PCI address)",
                have.join(", ")
            ),
        ));
    }
    Ok(id)
}

fn libc_enotsup() -> i32 {
    95 // ENOTSUP on Linux
}
