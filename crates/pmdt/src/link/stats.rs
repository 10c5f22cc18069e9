//! Link counters (one flat struct for every backend and middleware).

use serde::{Deserialize, Serialize};

/// What a link did. Counters a backend does not have stay 0.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkStats {
    /// Datagrams received and handed to the transport.
    pub rx_datagrams: u64,
    /// UDP payload bytes received.
    pub rx_bytes: u64,
    /// Datagrams sent.
    pub tx_datagrams: u64,
    /// UDP payload bytes sent.
    pub tx_bytes: u64,
    /// Datagrams that could not be sent (device queue full, no memory, no route).
    pub tx_dropped: u64,
    /// Of `tx_dropped`: no packet buffer could be allocated (pool exhausted).
    pub tx_no_buffer: u64,
    /// Of `tx_dropped`: the transmit queue was full.
    pub tx_queue_full: u64,
    /// Frames not for this host (other MAC/IP/port, other protocols), dropped.
    pub rx_not_for_us: u64,
    /// Frames too short or inconsistent to parse, dropped.
    pub rx_malformed: u64,
    /// Frames with a wrong IPv4 or UDP checksum, dropped.
    pub rx_bad_checksum: u64,
    /// Frames dropped because no receive buffer was free.
    pub rx_no_buffer: u64,
    /// ARP requests for our address answered.
    pub arp_replies_sent: u64,
    /// ARP requests sent to resolve peers.
    pub arp_requests_sent: u64,
    /// Datagrams dropped while their peer's MAC was unresolved (held too long,
    /// or pushed out of a full hold).
    pub arp_unresolved_drops: u64,
    /// Datagrams held while their peer's MAC was being resolved (sent once the
    /// ARP reply came, unless counted in `arp_unresolved_drops`).
    pub arp_held: u64,
    /// ICMP echo requests answered.
    pub icmp_echo_replies: u64,
    /// Payloads that had to be copied into the frame (not sent from the original
    /// buffer by reference). The zero-copy path keeps this at 0.
    pub payload_copies: u64,
    /// Data frames sent as one segment, their headers written in the headroom
    /// of the payload's own mbuf (DPDK ports that take chains, when nothing else
    /// held that mbuf); the rest carry their headers in a mbuf of their own.
    pub tx_headed: u64,
    /// Datagrams whose UDP checksum used the payload sum the payload's writer
    /// stamped in its mbuf (DPDK without checksum offload): the I/O loop read
    /// none of their payload bytes.
    pub tx_payload_sums_reused: u64,
    /// Impairment: datagrams dropped by random or burst loss.
    pub impair_lost: u64,
    /// Impairment: datagrams duplicated.
    pub impair_duplicated: u64,
    /// Impairment: datagrams delayed out of order.
    pub impair_reordered: u64,
    /// Impairment: datagrams dropped by the rate limiter's full queue.
    pub impair_queue_drops: u64,
    /// Impairment: datagrams dropped for exceeding the MTU.
    pub impair_mtu_drops: u64,
    /// Impairment: copies corrupted (delivered with a flipped bit, or dropped as the
    /// receiver's checksum would drop them).
    pub impair_corrupted: u64,
    /// Capture: datagrams written to the pcap file.
    pub captured: u64,
    /// Port-wide device counter (DPDK; reported by the queue-0 link, 0 on the
    /// others): frames the device dropped because the receive ring was full
    /// (`imissed`).
    pub port_imissed: u64,
    /// Port-wide device counter (DPDK, queue-0 link): receive buffer allocation
    /// failures of the driver (`rx_nombuf`).
    pub port_rx_nombuf: u64,
    /// Port-wide device counter (DPDK, queue-0 link): erroneous frames received
    /// (`ierrors`).
    pub port_ierrors: u64,
    /// Port-wide device counter (DPDK, queue-0 link): failed transmissions
    /// (`oerrors`).
    pub port_oerrors: u64,
}
