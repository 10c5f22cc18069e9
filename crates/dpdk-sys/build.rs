//! Generates bindings to the system DPDK found by pkg-config.
//!
//! * cflags are exactly what `pkg-config --cflags libdpdk` prints (no `-march=native`);
//! * static inline functions (`rte_eth_rx_burst`, `rte_pktmbuf_alloc`, ...) are made
//!   callable through bindgen's `wrap_static_fns`, compiled here with `cc`;
//! * RTE_BIT64-style constants are evaluated by clang (`clang_macro_fallback`);
//! * linking is shared: the EAL loads PMDs from its plugin directory at run time.

use std::env;
use std::path::PathBuf;
use std::process::Command;

const HINT: &str = "install DPDK with `make setup` (as root) or \
`apt-get install -y dpdk dpdk-dev libdpdk-dev pkg-config clang libclang-dev`";

fn pkg_config_cflags() -> Vec<String> {
    let out = Command::new("pkg-config")
        .args(["--cflags", "libdpdk"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run pkg-config ({e}): {HINT}"));
    if !out.status.success() {
        panic!(
            "pkg-config --cflags libdpdk failed: {}\n{HINT}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    for f in ["wrapper.h", "shim.h", "shim.c", "build.rs"] {
        println!("cargo:rerun-if-changed={f}");
    }
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");

    let lib = pkg_config::Config::new()
        .atleast_version("22.11")
        .probe("libdpdk")
        .unwrap_or_else(|e| panic!("libdpdk (>= 22.11) not found by pkg-config: {e}\n{HINT}"));
    // Everything the EAL needs at run time is in the shared libraries pkg-config named
    // (the PMDs themselves are plugins). Make sure ethdev & co. are not dropped by
    // --as-needed before our wrappers reference them.
    println!("cargo:version={}", lib.version);

    let cflags = pkg_config_cflags();
    let wrap_c = out_dir.join("dpdk_static_fns");

    let bindings = bindgen::Builder::default()
        .header(manifest.join("wrapper.h").to_string_lossy())
        .clang_args(&cflags)
        .clang_arg(format!("-I{}", manifest.display()))
        .wrap_static_fns(true)
        .wrap_static_fns_path(&wrap_c)
        .clang_macro_fallback()
        .clang_macro_fallback_build_dir(&out_dir)
        .allowlist_function("rte_eal_.*")
        .allowlist_function("rte_eth_.*")
        .allowlist_function("rte_pktmbuf_.*")
        .allowlist_function("rte_mbuf_.*")
        .allowlist_function("rte_mempool_(avail_count|in_use_count|free|lookup|full|empty)")
        .allowlist_function("rte_ring_.*")
        .allowlist_function("rte_lcore_.*")
        .allowlist_function("rte_get_.*_lcore")
        .allowlist_function("rte_socket_id")
        .allowlist_function("rte_get_tsc_hz")
        .allowlist_function("rte_rdtsc.*")
        .allowlist_function("rte_get_tsc_cycles")
        .allowlist_function("rte_delay_us_block")
        .allowlist_function("rte_pause")
        .allowlist_function("rte_vdev_.*")
        .allowlist_function("rte_telemetry_.*")
        .allowlist_function("rte_tel_.*")
        .allowlist_function("rte_strerror")
        .allowlist_function("rte_log_set_global_level")
        .allowlist_function("rte_openlog_stream")
        .allowlist_function("rte_log_cur_msg_loglevel")
        .allowlist_function("rte_log_cur_msg_logtype")
        .allowlist_function("rte_thread_register")
        .allowlist_function("rte_thread_unregister")
        .allowlist_function("rte_thread_is_intr")
        .allowlist_function("rte_intr_(instance_alloc|fd_set|type_set|callback_register)")
        .allowlist_function("shim_.*")
        .allowlist_type("rte_ether_hdr")
        .allowlist_type("rte_ipv4_hdr")
        .allowlist_type("rte_udp_hdr")
        .allowlist_type("rte_arp_hdr")
        .allowlist_var("RTE_ETH_.*")
        .allowlist_var("RTE_MBUF_.*")
        .allowlist_var("RTE_PKTMBUF_.*")
        .allowlist_var("RTE_MAX_.*")
        .allowlist_var("RTE_LCORE_.*")
        .allowlist_var("LCORE_ID_ANY")
        .allowlist_var("RTE_RING_.*")
        .allowlist_var("RING_F_.*")
        .allowlist_var("RTE_ETHER_.*")
        .allowlist_var("RTE_LOG_.*")
        .allowlist_var("SOCKET_ID_ANY")
        .allowlist_var("RTE_TEL_.*")
        .allowlist_var("E_RTE_.*")
        // Packed protocol headers with nested packed/aligned members that Rust
        // cannot represent: keep them opaque (correct size, no fields).
        .opaque_type("rte_arp_hdr")
        .opaque_type("rte_arp_ipv4")
        .opaque_type("rte_l2tpv2_combined_msg_hdr")
        .opaque_type("rte_gtp_psc_generic_hdr")
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false)
        .prepend_enum_name(false)
        .generate()
        .unwrap_or_else(|e| panic!("bindgen over the DPDK headers failed: {e}\n{HINT}"));
    bindings
        .write_to_file(out_dir.join("bindings.rs"))
        .expect("write bindings.rs");

    let mut build = cc::Build::new();
    build
        .file(wrap_c.with_extension("c"))
        .file(manifest.join("shim.c"))
        .include(&manifest)
        // fopencookie (shim_cookie_stream) is a GNU extension.
        .define("_GNU_SOURCE", None)
        .warnings(false);
    // pkg-config's flags, as given (including `-include rte_config.h` and -march).
    for f in &cflags {
        build.flag(f);
    }
    build
        .flag("-include")
        .flag(manifest.join("wrapper.h").to_str().unwrap());
    build.compile("dpdk_sys_shim");
}
