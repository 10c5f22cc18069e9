//! pmdt-bench-quic: the QUIC peer for pmdt-bench. A quinn server and client in one
//! process over loopback, each on its own thread pinned to its own core with its
//! own single-threaded tokio runtime; TLS 1.3 (rustls, ring provider) with a
//! self-signed certificate. The client uploads `--bytes` on one stream; the figure
//! is bytes × 8 / time until the server confirmed it had them all.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::{ClientConfig, Endpoint, ServerConfig, TransportConfig, VarInt};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// Upload bytes over QUIC on loopback (server and client pinned to different cores).
#[derive(Debug, Parser)]
#[command(name = "pmdt-bench-quic", version, about)]
struct Cli {
    /// Bytes to upload.
    #[arg(long, default_value_t = 1 << 30)]
    bytes: u64,
    /// Core of the client thread.
    #[arg(long, default_value_t = 0)]
    client_cpu: usize,
    /// Core of the server thread.
    #[arg(long, default_value_t = 1)]
    server_cpu: usize,
    /// Print one JSON object at the end.
    #[arg(long)]
    json: bool,
}

type Error = Box<dyn std::error::Error + Send + Sync>;

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes inside it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

fn transport() -> Arc<TransportConfig> {
    // Windows large enough not to limit a loopback transfer (as quinn's perf tool).
    let mut t = TransportConfig::default();
    t.stream_receive_window(VarInt::from_u32(64 << 20))
        .receive_window(VarInt::from_u32(128 << 20))
        .send_window(128 << 20);
    Arc::new(t)
}

fn configs() -> Result<(ServerConfig, ClientConfig), Error> {
    let ck = rcgen::generate_simple_self_signed(vec!["localhost".into()])?;
    let cert: CertificateDer<'static> = ck.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(ck.key_pair.serialize_der()));
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server_tls = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)?;
    let mut server = ServerConfig::with_crypto(Arc::new(QuicServerConfig::try_from(server_tls)?));
    server.transport_config(transport());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert)?;
    let client_tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let mut client = ClientConfig::new(Arc::new(QuicClientConfig::try_from(client_tls)?));
    client.transport_config(transport());
    Ok((server, client))
}

fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    Ok(tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?)
}

async fn serve(ep: Endpoint) -> Result<u64, Error> {
    let conn = ep.accept().await.ok_or("no connection")?.await?;
    let (mut send, mut recv) = conn.accept_bi().await?;
    let mut buf = vec![0u8; 1 << 20];
    let mut got = 0u64;
    while let Some(n) = recv.read(&mut buf).await? {
        got += n as u64;
    }
    send.write_all(&got.to_be_bytes()).await?;
    send.finish()?;
    conn.closed().await;
    Ok(got)
}

async fn upload(cfg: ClientConfig, to: SocketAddr, bytes: u64) -> Result<(u64, f64), Error> {
    let mut ep = Endpoint::client("127.0.0.1:0".parse()?)?;
    ep.set_default_client_config(cfg);
    let conn = ep.connect(to, "localhost")?.await?;
    let started = Instant::now();
    let (mut send, mut recv) = conn.open_bi().await?;
    let chunk = vec![0x5au8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        send.write_all(&chunk[..n]).await?;
        left -= n as u64;
    }
    send.finish()?;
    let mut ack = [0u8; 8];
    recv.read_exact(&mut ack).await?;
    let secs = started.elapsed().as_secs_f64();
    conn.close(VarInt::from_u32(0), b"done");
    ep.wait_idle().await;
    Ok((u64::from_be_bytes(ack), secs))
}

fn run(cli: &Cli) -> Result<(u64, f64), Error> {
    let (server_cfg, client_cfg) = configs()?;
    let server_cpu = cli.server_cpu;
    let (tx, rx) = std::sync::mpsc::channel::<Result<SocketAddr, String>>();
    let server = std::thread::spawn(move || -> Result<u64, String> {
        pin(server_cpu);
        let rt = runtime().map_err(|e| e.to_string())?;
        rt.block_on(async {
            let ep = match Endpoint::server(server_cfg, "127.0.0.1:0".parse().expect("addr")) {
                Ok(ep) => ep,
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                    return Err(e.to_string());
                }
            };
            let _ = tx.send(ep.local_addr().map_err(|e| e.to_string()));
            serve(ep).await.map_err(|e| e.to_string())
        })
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(10))
        .map_err(|_| "the server did not start")??;
    pin(cli.client_cpu);
    let rt = runtime()?;
    let (acked, secs) = rt.block_on(upload(client_cfg, addr, cli.bytes))?;
    let got = server.join().map_err(|_| "server thread panicked")??;
    if acked != cli.bytes || got != cli.bytes {
        return Err(format!("sent {} bytes, server got {got}", cli.bytes).into());
    }
    Ok((got, secs))
}

fn main() {
    let cli = Cli::parse();
    match run(&cli) {
        Ok((bytes, secs)) => {
            let bps = bytes as f64 * 8.0 / secs;
            eprintln!(
                "pmdt-bench-quic: {bytes} bytes in {secs:.3} s = {:.2} Gbit/s",
                bps / 1e9
            );
            if cli.json {
                println!(
                    "{}",
                    serde_json::json!({"tool": "pmdt-bench-quic", "bytes": bytes, "seconds": secs, "goodput_bps": bps})
                );
            }
        }
        Err(e) => {
            eprintln!("pmdt-bench-quic: error: {e}");
            std::process::exit(1);
        }
    }
}
