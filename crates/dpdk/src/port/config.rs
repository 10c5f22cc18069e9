//! What a port is configured with.

/// Offloads an application may ask a port for; only those the port supports are enabled.
///
/// `MBUF_FAST_FREE` lets the PMD recycle sent mbufs without checking them, so it can
/// only be enabled with `unsafe` ([`Offloads::with_tx_fast_free`]):
///
/// ```compile_fail
/// let o = dpdk::Offloads { tx_fast_free: true, ..Default::default() };
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offloads {
    /// IPv4 header checksum on transmit.
    pub tx_ipv4_checksum: bool,
    /// UDP checksum on transmit.
    pub tx_udp_checksum: bool,
    /// IPv4 checksum verification on receive.
    pub rx_ipv4_checksum: bool,
    /// UDP checksum verification on receive.
    pub rx_udp_checksum: bool,
    /// Multi-segment (chained) mbufs on transmit (`RTE_ETH_TX_OFFLOAD_MULTI_SEGS`).
    /// Without it, simple tx paths of real NICs send (and free) only the first
    /// segment: send chains only when [`crate::Port::enabled_tx_offloads`] has it.
    pub tx_multi_segs: bool,
    /// Free transmitted mbufs fast; see [`Offloads::with_tx_fast_free`].
    tx_fast_free: bool,
}

impl Offloads {
    /// All checksum offloads (enabled where supported).
    pub fn checksums() -> Self {
        Self {
            tx_ipv4_checksum: true,
            tx_udp_checksum: true,
            rx_ipv4_checksum: true,
            rx_udp_checksum: true,
            tx_multi_segs: false,
            tx_fast_free: false,
        }
    }

    /// Requests `RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE`: the PMD returns sent mbufs to
    /// their pool without looking at their refcount, indirect or external flags.
    ///
    /// # Safety
    /// Every mbuf sent on the port's tx queues (every segment of every chain) must
    /// come from one mempool, have refcount 1 (no [`crate::Mbuf::clone_ref`] copy
    /// alive), and be direct (not from [`crate::Mbuf::slice_ref`], no external
    /// buffer). Otherwise memory another handle still uses returns to the pool
    /// (use after free, double free).
    pub unsafe fn with_tx_fast_free(mut self) -> Self {
        self.tx_fast_free = true;
        self
    }

    /// Whether `MBUF_FAST_FREE` is requested.
    pub fn tx_fast_free(&self) -> bool {
        self.tx_fast_free
    }

    pub(crate) fn tx_bits(&self) -> u64 {
        let mut b = 0u64;
        if self.tx_ipv4_checksum {
            b |= dpdk_sys::RTE_ETH_TX_OFFLOAD_IPV4_CKSUM as u64;
        }
        if self.tx_udp_checksum {
            b |= dpdk_sys::RTE_ETH_TX_OFFLOAD_UDP_CKSUM as u64;
        }
        if self.tx_multi_segs {
            b |= dpdk_sys::RTE_ETH_TX_OFFLOAD_MULTI_SEGS as u64;
        }
        if self.tx_fast_free {
            b |= dpdk_sys::RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE as u64;
        }
        b
    }

    pub(crate) fn rx_bits(&self) -> u64 {
        let mut b = 0u64;
        if self.rx_ipv4_checksum {
            b |= dpdk_sys::RTE_ETH_RX_OFFLOAD_IPV4_CKSUM as u64;
        }
        if self.rx_udp_checksum {
            b |= dpdk_sys::RTE_ETH_RX_OFFLOAD_UDP_CKSUM as u64;
        }
        b
    }
}

/// Port configuration: queue counts, descriptor ring sizes, MTU, promiscuous mode,
/// offloads, RSS.
#[derive(Debug, Clone)]
pub struct PortConfig {
    /// Number of receive queues.
    pub rx_queues: u16,
    /// Number of transmit queues.
    pub tx_queues: u16,
    /// Receive descriptors per queue (adjusted to the device's limits).
    pub rx_desc: u16,
    /// Transmit descriptors per queue (adjusted to the device's limits).
    pub tx_desc: u16,
    /// MTU to set, or `None` to keep the device's.
    pub mtu: Option<u16>,
    /// Fail when the device cannot set the MTU (default). When false, a device
    /// without an MTU setting (e.g. memif) is accepted as is.
    pub mtu_required: bool,
    /// Enable promiscuous mode (not every vdev supports it; unsupported is not an error).
    pub promiscuous: bool,
    /// Offloads to request.
    pub offloads: Offloads,
    /// Spread receive traffic over the rx queues with RSS (on IP/UDP fields) when the
    /// device supports it and there is more than one rx queue.
    pub rss: bool,
    /// Receive-queue interrupts (`intr_conf.rxq`, as DPDK's l3fwd-power uses):
    /// a quiet poller may then sleep until packets arrive
    /// ([`RxQueue::with_interrupt`](super::RxQueue::with_interrupt)). Devices
    /// without them (memif, ring, null) ignore the request; a PCI device may
    /// refuse to start without a driver that gives one interrupt per queue
    /// (vfio-pci).
    pub rx_interrupts: bool,
}

impl Default for PortConfig {
    fn default() -> Self {
        Self {
            rx_queues: 1,
            tx_queues: 1,
            rx_desc: 1024,
            tx_desc: 1024,
            mtu: None,
            mtu_required: true,
            promiscuous: true,
            offloads: Offloads::default(),
            rss: true,
            rx_interrupts: false,
        }
    }
}

impl PortConfig {
    /// Same queue count for rx and tx.
    pub fn queues(mut self, n: u16) -> Self {
        self.rx_queues = n;
        self.tx_queues = n;
        self
    }

    /// Descriptor counts for rx and tx.
    pub fn descriptors(mut self, rx: u16, tx: u16) -> Self {
        self.rx_desc = rx;
        self.tx_desc = tx;
        self
    }

    /// MTU.
    pub fn mtu(mut self, mtu: u16) -> Self {
        self.mtu = Some(mtu);
        self
    }

    /// Offloads to request.
    pub fn offloads(mut self, o: Offloads) -> Self {
        self.offloads = o;
        self
    }

    /// Promiscuous mode.
    pub fn promiscuous(mut self, on: bool) -> Self {
        self.promiscuous = on;
        self
    }
}
