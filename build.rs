//! Checks that the system DPDK is findable before anything links against it, so a
//! missing install fails with one actionable message instead of a wall of linker errors.

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    if let Err(e) = pkg_config::Config::new()
        .atleast_version("22.11")
        .cargo_metadata(false)
        .probe("libdpdk")
    {
        panic!(
            "\n\nDPDK (libdpdk >= 22.11) was not found by pkg-config: {e}\n\
             Install it with `make setup` (as root), or by hand:\n  \
             apt-get update && apt-get install -y dpdk dpdk-dev libdpdk-dev pkg-config clang libclang-dev\n"
        );
    }
}
