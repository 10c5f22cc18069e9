//! The connections a runtime has handed to its application (connected or
//! accepted), each under a process-wide id, so telemetry can list every one and
//! show one by id. Entries hold weak references: a connection leaves the list once
//! both the application and the I/O loop are done with it, and dead entries are
//! swept whenever the list would grow, so it stays within twice the live count.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use super::shared::StreamShared;

/// Ids are unique in the process (several runtimes share the telemetry commands).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One runtime's connections.
#[derive(Default)]
pub(crate) struct Directory {
    entries: Mutex<Vec<(u64, Weak<StreamShared>)>>,
}

impl Directory {
    /// Lists a connection; returns its id (also stored in the stream).
    pub fn register(&self, shared: &Arc<StreamShared>) -> u64 {
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        shared.directory_id.store(id, Ordering::Relaxed);
        let mut e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if e.len() == e.capacity() {
            e.retain(|(_, w)| w.strong_count() > 0);
        }
        e.push((id, Arc::downgrade(shared)));
        id
    }

    /// The live connections, by ascending id (what telemetry lists; without the
    /// `dpdk` feature there is no telemetry, and only the tests read the list).
    #[cfg(any(feature = "dpdk", test))]
    pub fn live(&self) -> Vec<(u64, Arc<StreamShared>)> {
        let e = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        e.iter()
            .filter_map(|(id, w)| Some((*id, w.upgrade()?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::doorbell::Doorbell;

    fn stream() -> Arc<StreamShared> {
        Arc::new(StreamShared::new(
            0,
            "10.0.0.1:9000".parse().unwrap(),
            Arc::new(Doorbell::new(1)),
            std::time::Duration::from_millis(5),
            std::sync::Weak::new(),
            1444,
        ))
    }

    #[test]
    fn ids_are_unique_and_dead_entries_are_swept() {
        let d = Directory::default();
        let keep = stream();
        let a = d.register(&keep);
        assert_eq!(keep.directory_id.load(Ordering::Relaxed), a);
        for _ in 0..1000 {
            let gone = stream();
            assert!(d.register(&gone) > a);
        }
        let live = d.live();
        assert_eq!(live.len(), 1);
        assert_eq!(live[0].0, a);
        let cap = d.entries.lock().unwrap().capacity();
        assert!(cap <= 8, "swept as it grew, not 1000 entries: {cap}");
        drop((live, keep));
        assert!(d.live().is_empty());
    }
}
