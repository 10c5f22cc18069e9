//! What a port is and how it is doing: info, link status, statistics.

/// An Ethernet MAC address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

impl std::fmt::Display for MacAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

impl std::fmt::Debug for MacAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// Static facts about a port.
#[derive(Debug, Clone)]
pub struct PortInfo {
    /// Port id.
    pub id: u16,
    /// Device name (e.g. `net_tap0`, a PCI address).
    pub name: String,
    /// Driver name (e.g. `net_tap`).
    pub driver: String,
    /// MAC address.
    pub mac: MacAddr,
    /// Current MTU.
    pub mtu: u16,
    /// Smallest MTU the device accepts.
    pub min_mtu: u16,
    /// Largest MTU the device accepts.
    pub max_mtu: u16,
    /// Maximum rx queues.
    pub max_rx_queues: u16,
    /// Maximum tx queues.
    pub max_tx_queues: u16,
    /// Supported rx offloads (`RTE_ETH_RX_OFFLOAD_*` bits).
    pub rx_offload_capa: u64,
    /// Supported tx offloads (`RTE_ETH_TX_OFFLOAD_*` bits).
    pub tx_offload_capa: u64,
    /// RSS hash functions supported (`RTE_ETH_RSS_*` bits).
    pub rss_offloads: u64,
    /// NUMA socket of the device (-1 if unknown).
    pub socket: i32,
    /// Kernel interface index, when the device has one (TAP).
    pub if_index: u32,
}

impl PortInfo {
    /// Whether the device can compute IPv4 and UDP checksums on transmit.
    pub fn supports_tx_checksum(&self) -> bool {
        let need = (dpdk_sys::RTE_ETH_TX_OFFLOAD_IPV4_CKSUM
            | dpdk_sys::RTE_ETH_TX_OFFLOAD_UDP_CKSUM) as u64;
        self.tx_offload_capa & need == need
    }
}

/// Link state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStatus {
    /// Link up.
    pub up: bool,
    /// Speed in Mbit/s (0 when unknown).
    pub speed_mbps: u32,
    /// Full duplex.
    pub full_duplex: bool,
    /// Autonegotiated.
    pub autoneg: bool,
}

/// Basic port counters (`rte_eth_stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PortStats {
    /// Packets received.
    pub ipackets: u64,
    /// Packets sent.
    pub opackets: u64,
    /// Bytes received.
    pub ibytes: u64,
    /// Bytes sent.
    pub obytes: u64,
    /// Packets dropped by the NIC because no rx descriptor was free (the rx ring was full).
    pub imissed: u64,
    /// Erroneous received packets.
    pub ierrors: u64,
    /// Failed transmissions.
    pub oerrors: u64,
    /// Rx mbuf allocation failures.
    pub rx_nombuf: u64,
}
