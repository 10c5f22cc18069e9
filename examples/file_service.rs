//! A small service embedding pmdt: `serve` accepts connections and stores each
//! uploaded file in a directory, answering with its SHA-256; `send` uploads a file
//! and checks the answer. Uses the kernel UDP backend by default (no root needed);
//! `--dpdk-vdev` runs it on a DPDK port instead.
//!
//! ```text
//! cargo run --release --example file_service -- serve --bind 127.0.0.1:7000 --dir /tmp/inbox
//! cargo run --release --example file_service -- send --to 127.0.0.1:7000 README.md
//! ```
//!
//! Wire protocol on top of the pmdt stream: the client sends the file name, a
//! newline, the bytes, and finishes its side; the service replies `ok <sha256>\n`
//! (or `error <why>\n`) and closes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use pmdt::link::udp::UdpLinkConfig;
use pmdt::runtime::{Backend, Runtime, Stream};
use pmdt::TransportConfig;
use sha2::{Digest, Sha256};

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Store uploaded files in a directory.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:7000")]
        bind: SocketAddr,
        /// Where files go.
        #[arg(long, default_value = "/tmp/pmdt-inbox")]
        dir: PathBuf,
        /// Stop after this many uploads (0: run forever).
        #[arg(long, default_value_t = 0)]
        count: usize,
    },
    /// Upload a file.
    Send {
        /// The service.
        #[arg(long, default_value = "127.0.0.1:7000")]
        to: SocketAddr,
        /// The file.
        file: PathBuf,
    },
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn runtime(bind: &str) -> std::io::Result<Runtime> {
    Runtime::builder()
        .transport(TransportConfig::default())
        .backend(Backend::Udp(UdpLinkConfig {
            bind: bind.parse().expect("valid address"),
            ..Default::default()
        }))
        .start()
}

/// Handles one upload: name line, bytes, reply.
fn handle(stream: Stream, dir: &Path) -> std::io::Result<String> {
    let mut r = BufReader::with_capacity(256 * 1024, stream);
    let mut name = String::new();
    r.read_line(&mut name)?;
    let name = Path::new(name.trim())
        .file_name()
        .ok_or_else(|| std::io::Error::other("no file name"))?
        .to_owned();
    let path = dir.join(&name);
    let part = dir.join(format!("{}.part", name.to_string_lossy()));
    let mut out = std::fs::File::create(&part)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 256 * 1024];
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break; // the client finished its side
        }
        h.update(&buf[..n]);
        out.write_all(&buf[..n])?;
    }
    out.sync_all()?;
    std::fs::rename(&part, &path)?;
    let sha = hex(&h.finalize());
    let mut stream = r.into_inner();
    stream.write_all(format!("ok {sha}\n").as_bytes())?;
    stream.close()?; // returns once the client has the reply
    Ok(format!("{} ({sha})", path.display()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    match Cli::parse().cmd {
        Cmd::Serve { bind, dir, count } => {
            std::fs::create_dir_all(&dir)?;
            let rt = runtime(&bind.to_string())?;
            let listener = rt.listen(bind.port())?;
            eprintln!("file_service: listening on {}", rt.local_addr());
            let mut workers = Vec::new();
            for i in 1.. {
                let s = listener.accept()?;
                let dir = dir.clone();
                workers.push(std::thread::spawn(move || match handle(s, &dir) {
                    Ok(what) => eprintln!("file_service: stored {what}"),
                    Err(e) => eprintln!("file_service: upload failed: {e}"),
                }));
                if count > 0 && i >= count {
                    break;
                }
            }
            for w in workers {
                let _ = w.join();
            }
            rt.shutdown()?;
        }
        Cmd::Send { to, file } => {
            let data = std::fs::read(&file)?;
            let rt = runtime("0.0.0.0:0")?;
            let mut s = rt.connect(to)?;
            let name = file
                .file_name()
                .ok_or("no file name")?
                .to_string_lossy()
                .into_owned();
            s.write_all(format!("{name}\n").as_bytes())?;
            s.write_all(&data)?;
            s.finish();
            let mut reply = String::new();
            s.read_to_string(&mut reply)?;
            let want = format!("ok {}", hex(&Sha256::digest(&data)));
            if reply.trim() != want {
                return Err(format!("service answered {reply:?}, expected {want:?}").into());
            }
            println!(
                "uploaded {} ({} bytes), service confirmed sha256",
                file.display(),
                data.len()
            );
            s.close()?;
            rt.shutdown()?;
        }
    }
    Ok(())
}
