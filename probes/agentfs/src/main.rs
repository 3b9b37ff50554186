//! The agentfs-sdk 0.6.4 probe for wsfs's overlay issue (issue 20). Not part of wsfs.
//!
//! Every call into the SDK goes through `Runtime::block_on` on a current-thread tokio runtime,
//! which is how wsfs's synchronous C ABI would have to call it.
//!
//! Subcommands (run.sh calls them): `facts`, `bench`, `rss`, `crash [trials]`, `lock`, and the
//! internal `rss-one <agentfs|std>`, `crash-child <db> <trial>`, `lock-child <db>`.
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agentfs_sdk::{AgentFS, AgentFSOptions, FileSystem, HostFS, OverlayFS};
use tokio::runtime::Runtime;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn rt() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn open_db(rt: &Runtime, path: &Path) -> agentfs_sdk::error::Result<AgentFS> {
    rt.block_on(AgentFS::open(AgentFSOptions::with_path(
        path.to_str().expect("utf-8 path"),
    )))
}

/// A scratch directory on tmpfs (or elsewhere), removed first.
fn scratch(parent: &str, name: &str) -> PathBuf {
    let dir = Path::new(parent).join(format!("agentfs-probe-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn pattern(t: u64, k: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| ((t * 31 + k * 17 + j as u64) % 251) as u8)
        .collect()
}

fn sql_rows(rt: &Runtime, agent: &AgentFS, sql: &str) -> Res<Vec<String>> {
    rt.block_on(async {
        let conn = agent.get_connection().await?;
        let mut rows = conn.query(sql, ()).await?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().await? {
            out.push(format!("{:?}", row.get_value(0)?));
        }
        Ok(out)
    })
}

// ---------------------------------------------------------------------------------------------
// facts: what the SDK stores and how it behaves, checked rather than read.

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

fn facts() -> Res<()> {
    let t0 = threads();
    let rt = rt();
    let t1 = threads();
    let dir = scratch("/dev/shm", "facts");
    let db = dir.join("facts.db");
    let agent = open_db(&rt, &db)?;
    let t2 = threads();
    let fs = &agent.fs;
    rt.block_on(async {
        for i in 0..20 {
            let (_, f) = fs.create_file(&format!("/t{i}"), 0o644, 0, 0).await?;
            f.pwrite(0, b"t").await?;
            fs.fsync(&format!("/t{i}")).await?;
            fs.remove(&format!("/t{i}")).await?;
        }
        agentfs_sdk::error::Result::Ok(())
    })?;
    println!("== threads (entries in /proc/self/task)");
    println!(
        "at start {t0}; after a current-thread tokio runtime {t1}; after AgentFS::open {t2}; \
         after 20 create+write+fsync+remove {}",
        threads()
    );
    println!("== storage");
    println!(
        "journal_mode {:?}, synchronous {:?} (0 = OFF), page_size {:?}",
        sql_rows(&rt, &agent, "PRAGMA journal_mode")?,
        sql_rows(&rt, &agent, "PRAGMA synchronous")?,
        sql_rows(&rt, &agent, "PRAGMA page_size")?
    );
    println!(
        "tables: {:?}",
        sql_rows(
            &rt,
            &agent,
            "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"
        )?
    );
    rt.block_on(async {
        fs.mkdir("/d", 0, 0).await?;
        let (_, f) = fs.create_file("/d/exec.sh", 0o755, 0, 0).await?;
        f.pwrite(0, b"#!/bin/sh\n").await?;
        fs.symlink("d/exec.sh", "/link", 0, 0).await?;
        fs.mknod("/fifo", libc::S_IFIFO | 0o644, 0, 0, 0).await?;
        fs.mknod("/whiteout-like", libc::S_IFCHR | 0o000, 0, 0, 0)
            .await?;
        fs.link("/d/exec.sh", "/hardlink").await?;
        agentfs_sdk::error::Result::Ok(())
    })?;
    for p in [
        "/d/exec.sh",
        "/link",
        "/fifo",
        "/whiteout-like",
        "/hardlink",
    ] {
        let st = rt.block_on(fs.lstat(p))?.expect("exists");
        println!(
            "{p}: mode {:o} nlink {} size {} mtime {}.{:09} ino {}",
            st.mode, st.nlink, st.size, st.mtime, st.mtime_nsec, st.ino
        );
    }
    println!(
        "readlink /link = {:?}; stat (follows) /link is_file {:?}",
        rt.block_on(fs.readlink("/link"))?,
        rt.block_on(fs.stat("/link"))?.map(|s| s.is_file())
    );
    println!(
        "xattrs: no API and no table (schema above); names are &str (UTF-8 only), max 255 bytes"
    );
    let files: Vec<String> = std::fs::read_dir(&dir)?
        .map(|e| {
            let e = e.unwrap();
            format!(
                "{} ({} B)",
                e.file_name().to_string_lossy(),
                e.metadata().unwrap().len()
            )
        })
        .collect();
    println!("files beside the database on disk: {files:?}");

    println!("== paths");
    rt.block_on(async {
        fs.mkdir("/a", 0, 0).await?;
        fs.mkdir("/a/b", 0, 0).await?;
        let (_, f) = fs.create_file("/a/b/f", 0o644, 0, 0).await?;
        f.pwrite(0, b"x").await?;
        fs.symlink("/a/b", "/s", 0, 0).await?;
        agentfs_sdk::error::Result::Ok(())
    })?;
    println!(
        "lstat /s/f through a symlinked directory: {:?} (intermediate symlinks are not followed)",
        rt.block_on(fs.lstat("/s/f"))?.map(|s| s.ino)
    );
    println!(
        "lstat /../../a/b/f: {:?}; lstat /s/../b/f: {:?} ('..' is lexical, clamped at the root)",
        rt.block_on(fs.lstat("/../../a/b/f"))?.map(|s| s.ino),
        rt.block_on(fs.lstat("/s/../a/b/f"))?.map(|s| s.ino)
    );
    rt.block_on(async {
        let (_, f) = fs.create_file("/it's.txt", 0o644, 0, 0).await?;
        f.pwrite(0, b"q").await
    })?;
    println!(
        "a name with a quote: lstat ok = {}; AgentFS::get_file_mode (SQL built with format!) = {:?}",
        rt.block_on(fs.lstat("/it's.txt"))?.is_some(),
        rt.block_on(agent.get_file_mode("/it's.txt")).map_err(|e| e.to_string())
    );

    println!("== transactions");
    let held = rt.block_on(agent.get_connection())?;
    let t = Instant::now();
    // The timer must be created inside the runtime (tokio::time needs its reactor).
    let r = rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(2), fs.lstat("/d/exec.sh")).await
    });
    println!(
        "an fs call while the caller holds the pool's one connection (to BEGIN a transaction): {} after {:?}",
        if r.is_err() { "blocked (timed out here at 2 s; the pool's own timeout is 30 s)" } else { "completed" },
        t.elapsed()
    );
    drop(held);

    println!("== overlay (OverlayFS over HostFS, delta in this database)");
    let base = dir.join("base");
    std::fs::create_dir_all(base.join("dir/sub"))?;
    std::fs::write(base.join("dir/x"), b"base x\n")?;
    std::fs::write(base.join("dir/sub/y"), b"base y\n")?;
    std::fs::write(base.join("gone"), b"base gone\n")?;
    std::fs::write(base.join("edit"), b"base edit\n")?;
    let odb = dir.join("overlay.db");
    let agent2 = rt.block_on(AgentFS::open(
        AgentFSOptions::with_path(odb.to_str().unwrap()).with_base(&base),
    ))?;
    let overlay = OverlayFS::new(Arc::new(HostFS::new(&base)?), agent2.fs.clone());
    rt.block_on(overlay.init(base.to_str().unwrap()))?;
    rt.block_on(async {
        let gone = overlay.lookup(1, "gone").await?.expect("gone");
        let _ = gone;
        overlay.unlink(1, "gone").await?;
        let edit = overlay.lookup(1, "edit").await?.expect("edit");
        let f = overlay.open(edit.ino, libc::O_RDWR).await?;
        f.pwrite(0, b"EDIT").await?;
        overlay.lookup(1, "dir").await?.expect("dir");
        overlay.rename(1, "dir", 1, "renamed").await?;
        agentfs_sdk::error::Result::Ok(())
    })?;
    let view = |name: &str| -> Res<Vec<String>> {
        rt.block_on(async {
            let Some(st) = overlay.lookup(1, name).await? else {
                return Ok(vec!["<not found>".to_string()]);
            };
            Ok(overlay.readdir(st.ino).await?.unwrap_or_default())
        })
    };
    println!("view of / : {:?}", rt.block_on(overlay.readdir(1))?);
    println!(
        "after renaming base dir/ (holding x and sub/y) to renamed/: readdir renamed = {:?}",
        view("renamed")?
    );
    println!("base unchanged on disk: {:?}", walk_names(&base));
    println!(
        "whiteouts are rows: fs_whiteout = {:?}; origin rows: {:?}",
        sql_rows(&rt, &agent2, "SELECT path FROM fs_whiteout")?,
        sql_rows(
            &rt,
            &agent2,
            "SELECT delta_ino || '<-' || base_ino FROM fs_origin"
        )?
    );
    println!(
        "delta paths (AgentFS::get_delta_paths): {:?}",
        rt.block_on(agent2.get_delta_paths())?
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn walk_names(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            out.push(p.strip_prefix(root).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------
// bench: paired per-operation latency, agentfs (database on the same file system) vs std::fs.

struct Pairs {
    name: &'static str,
    a: Vec<f64>,
    s: Vec<f64>,
}

impl Pairs {
    fn new(name: &'static str) -> Self {
        Pairs {
            name,
            a: Vec::new(),
            s: Vec::new(),
        }
    }
    fn report(&mut self) {
        let mut ratios: Vec<f64> = self.a.iter().zip(&self.s).map(|(a, s)| a / s).collect();
        let (ma, ms, mr) = (
            median(&mut self.a),
            median(&mut self.s),
            median(&mut ratios),
        );
        println!(
            "{:<34} agentfs {:>9.1} us   std::fs {:>7.1} us   ratio {:>6.1}x   (n = {})",
            self.name,
            ma,
            ms,
            mr,
            ratios.len()
        );
    }
}

fn us(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e6
}

fn bench() -> Res<()> {
    let reps = 3;
    for (medium, parent, n, durable_n) in [
        ("tmpfs (/dev/shm)", "/dev/shm", 2000usize, 500usize),
        ("disk (/var/tmp)", "/var/tmp", 1000, 100),
    ] {
        for rep in 1..=reps {
            println!("-- {medium}, run {rep}/{reps}, load average {}", loadavg());
            bench_once(parent, n, durable_n)?;
        }
    }
    Ok(())
}

fn bench_once(parent: &str, n: usize, durable_n: usize) -> Res<()> {
    let rt = rt();
    let dir = scratch(parent, "bench");
    let host = dir.join("host");
    let db = dir.join("bench.db");
    let agent = open_db(&rt, &db)?;
    let fs = &agent.fs;
    for d in ["w", "y", "r", "l", "n", "x"] {
        std::fs::create_dir_all(host.join(d))?;
        rt.block_on(fs.mkdir(&format!("/{d}"), 0, 0))?;
    }
    let data = vec![7u8; 4096];
    let agent_write = |path: &str| {
        rt.block_on(async {
            let (_, f) = fs.create_file(path, 0o644, 0, 0).await?;
            f.pwrite(0, &data).await
        })
    };
    for i in 0..50 {
        agent_write(&format!("/r/f{i}"))?;
        agent_write(&format!("/l/f{i}"))?;
        std::fs::write(host.join(format!("r/f{i}")), &data)?;
        std::fs::write(host.join(format!("l/f{i}")), &data)?;
    }
    agent_write("/n/a")?;
    std::fs::write(host.join("n/a"), &data)?;
    for i in 0..n {
        agent_write(&format!("/x/f{i}"))?;
        std::fs::write(host.join(format!("x/f{i}")), &data)?;
    }
    let hostdir = std::fs::File::open(&host)?;

    let mut rows = vec![
        Pairs::new("block_on(ready) / nothing"),
        Pairs::new("create + write 4 KiB"),
        Pairs::new("create + write 4 KiB + fsync"),
        Pairs::new("read 4 KiB"),
        Pairs::new("list a directory of 50 (+ stats)"),
        Pairs::new("stat (lstat)"),
        Pairs::new("rename"),
        Pairs::new("remove"),
    ];
    for i in 0..n {
        let agent_first = i % 2 == 0;
        // Each closure pair: (agentfs, std). Run in alternating order.
        let mut pair = |row: usize,
                        fa: &mut dyn FnMut() -> Res<()>,
                        fs_: &mut dyn FnMut() -> Res<()>|
         -> Res<()> {
            let (ta, ts);
            if agent_first {
                let t = Instant::now();
                fa()?;
                ta = us(t);
                let t = Instant::now();
                fs_()?;
                ts = us(t);
            } else {
                let t = Instant::now();
                fs_()?;
                ts = us(t);
                let t = Instant::now();
                fa()?;
                ta = us(t);
            }
            rows[row].a.push(ta);
            rows[row].s.push(ts);
            Ok(())
        };
        pair(
            0,
            &mut || {
                rt.block_on(async {});
                Ok(())
            },
            &mut || Ok(()),
        )?;
        pair(
            1,
            &mut || Ok(agent_write(&format!("/w/f{i}"))?),
            &mut || {
                let mut f = std::fs::File::create(host.join(format!("w/f{i}")))?;
                f.write_all(&data)?;
                Ok(())
            },
        )?;
        if i < durable_n {
            pair(
                2,
                &mut || {
                    let p = format!("/y/f{i}");
                    agent_write(&p)?;
                    Ok(rt.block_on(fs.fsync(&p))?)
                },
                &mut || {
                    let mut f = std::fs::File::create(host.join(format!("y/f{i}")))?;
                    f.write_all(&data)?;
                    f.sync_all()?;
                    hostdir.sync_all()?;
                    Ok(())
                },
            )?;
        }
        let k = i % 50;
        pair(
            3,
            &mut || {
                let v = rt
                    .block_on(fs.read_file(&format!("/r/f{k}")))?
                    .expect("file");
                assert_eq!(v.len(), 4096);
                Ok(())
            },
            &mut || {
                let v = std::fs::read(host.join(format!("r/f{k}")))?;
                assert_eq!(v.len(), 4096);
                Ok(())
            },
        )?;
        pair(
            4,
            &mut || {
                let entries = rt.block_on(async {
                    let st = fs.lstat("/l").await?.expect("dir");
                    fs.readdir_plus(st.ino).await
                })?;
                assert_eq!(entries.expect("dir").len(), 50);
                Ok(())
            },
            &mut || {
                let mut count = 0;
                for e in std::fs::read_dir(host.join("l"))? {
                    let e = e?;
                    std::hint::black_box(std::fs::symlink_metadata(e.path())?);
                    count += 1;
                }
                assert_eq!(count, 50);
                Ok(())
            },
        )?;
        pair(
            5,
            &mut || {
                rt.block_on(fs.lstat(&format!("/r/f{k}")))?.expect("file");
                Ok(())
            },
            &mut || {
                std::hint::black_box(std::fs::symlink_metadata(host.join(format!("r/f{k}")))?);
                Ok(())
            },
        )?;
        let (from, to) = if i % 2 == 0 { ("a", "b") } else { ("b", "a") };
        pair(
            6,
            &mut || Ok(rt.block_on(fs.rename(&format!("/n/{from}"), &format!("/n/{to}")))?),
            &mut || {
                Ok(std::fs::rename(
                    host.join(format!("n/{from}")),
                    host.join(format!("n/{to}")),
                )?)
            },
        )?;
        pair(
            7,
            &mut || Ok(rt.block_on(fs.remove(&format!("/x/f{i}")))?),
            &mut || Ok(std::fs::remove_file(host.join(format!("x/f{i}")))?),
        )?;
    }
    for r in rows.iter_mut() {
        r.report();
    }

    // Reading an untouched base file through OverlayFS (HostFS base) vs std::fs, paired.
    let base = dir.join("base");
    std::fs::create_dir_all(base.join("r"))?;
    for i in 0..50 {
        std::fs::write(base.join(format!("r/f{i}")), &data)?;
    }
    let odb = dir.join("overlay.db");
    let agent2 = rt.block_on(AgentFS::open(
        AgentFSOptions::with_path(odb.to_str().unwrap()).with_base(&base),
    ))?;
    let overlay = OverlayFS::new(Arc::new(HostFS::new(&base)?), agent2.fs.clone());
    rt.block_on(overlay.init(base.to_str().unwrap()))?;
    let mut row = Pairs::new("overlay: read untouched 4 KiB");
    for i in 0..n {
        let k = i % 50;
        let name = format!("f{k}");
        let fa = || -> Res<()> {
            let v = rt.block_on(async {
                let d = overlay.lookup(1, "r").await?.expect("r");
                let st = overlay.lookup(d.ino, &name).await?.expect("f");
                let f = overlay.open(st.ino, libc::O_RDONLY).await?;
                f.pread(0, st.size as u64).await
            })?;
            assert_eq!(v.len(), 4096);
            Ok(())
        };
        let fs_ = || -> Res<()> {
            let mut f = std::fs::File::open(base.join("r").join(&name))?;
            let mut v = Vec::new();
            f.read_to_end(&mut v)?;
            assert_eq!(v.len(), 4096);
            Ok(())
        };
        let (ta, ts);
        if i % 2 == 0 {
            let t = Instant::now();
            fa()?;
            ta = us(t);
            let t = Instant::now();
            fs_()?;
            ts = us(t);
        } else {
            let t = Instant::now();
            fs_()?;
            ts = us(t);
            let t = Instant::now();
            fa()?;
            ta = us(t);
        }
        row.a.push(ta);
        row.s.push(ts);
    }
    row.report();
    drop(agent);
    drop(agent2);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// rss: memory growth for 10,000 files, each way in its own process.

fn rss() -> Res<()> {
    let exe = std::env::current_exe()?;
    for which in ["std", "agentfs"] {
        let out = Command::new(&exe).args(["rss-one", which]).output()?;
        print!("{}", String::from_utf8_lossy(&out.stdout));
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

fn rss_one(which: &str) -> Res<()> {
    let rt = rt();
    let dir = scratch("/dev/shm", "rss");
    let data = vec![5u8; 4096];
    let start_rss = status_kib("VmRSS:");
    let agent = if which == "agentfs" {
        Some(open_db(&rt, &dir.join("rss.db"))?)
    } else {
        None
    };
    if let Some(a) = &agent {
        rt.block_on(a.fs.mkdir("/m", 0, 0))?;
    } else {
        std::fs::create_dir_all(dir.join("m"))?;
    }
    let opened_rss = status_kib("VmRSS:");
    let t = Instant::now();
    let mut marks = Vec::new();
    for i in 0..10_000 {
        match &agent {
            Some(a) => rt.block_on(async {
                let (_, f) =
                    a.fs.create_file(&format!("/m/f{i:05}"), 0o644, 0, 0)
                        .await?;
                f.pwrite(0, &data).await
            })?,
            None => std::fs::write(dir.join(format!("m/f{i:05}")), &data)?,
        }
        if [999, 4999, 9999].contains(&i) {
            marks.push(format!("{}: {} KiB", i + 1, status_kib("VmRSS:")));
        }
    }
    let write_time = t.elapsed();
    let after_rss = status_kib("VmRSS:");
    let t = Instant::now();
    let listed = match &agent {
        Some(a) => rt.block_on(async {
            let st = a.fs.lstat("/m").await?.expect("dir");
            Ok::<_, agentfs_sdk::error::Error>(a.fs.readdir_plus(st.ino).await?.expect("dir").len())
        })?,
        None => std::fs::read_dir(dir.join("m"))?
            .map(|e| std::fs::symlink_metadata(e.unwrap().path()).unwrap())
            .count(),
    };
    let list_time = t.elapsed();
    let list_rss = status_kib("VmRSS:");
    let on_disk: u64 = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    println!(
        "{which:>7}: RSS {start_rss} KiB at start, {opened_rss} KiB opened, after 10,000 x 4 KiB files {after_rss} KiB \
         (growth {} KiB; {}) in {:.2} s; listing all 10,000 with stats took {:.1} ms, RSS then {list_rss} KiB, \
         peak (VmHWM) {} KiB; database files {} KiB",
        after_rss as i64 - opened_rss as i64,
        marks.join(", "),
        write_time.as_secs_f64(),
        list_time.as_secs_f64() * 1e3,
        status_kib("VmHWM:"),
        on_disk / 1024,
    );
    assert_eq!(listed, 10_000);
    drop(agent);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// crash: SIGKILL a child that writes files, then reopen and check.

const CRASH_LEN: usize = 10_000; // three 4 KiB chunks: one pwrite, one transaction

fn crash_child(db: &str, trial: u64) -> Res<()> {
    let rt = rt();
    let agent = open_db(&rt, Path::new(db))?;
    let fs = &agent.fs;
    rt.block_on(async {
        if fs.lstat("/direct").await?.is_none() {
            fs.mkdir("/direct", 0, 0).await?;
            fs.mkdir("/staged", 0, 0).await?;
        }
        agentfs_sdk::error::Result::Ok(())
    })?;
    println!("ready");
    std::io::stdout().flush()?;
    for k in 0.. {
        let data = pattern(trial, k, CRASH_LEN);
        rt.block_on(async {
            // Direct: create, then write (two transactions, as the SDK's API has it).
            let (_, f) = fs
                .create_file(&format!("/direct/t{trial}_{k}"), 0o644, 0, 0)
                .await?;
            f.pwrite(0, &data).await?;
            // Staged, as wsfs writes: a temp name, then rename over the final name.
            let tmp = format!("/staged/.tmp{trial}_{k}");
            let (_, f) = fs.create_file(&tmp, 0o644, 0, 0).await?;
            f.pwrite(0, &data).await?;
            fs.rename(&tmp, &format!("/staged/t{trial}_{k}")).await
        })?;
    }
    Ok(())
}

fn crash(trials: u64) -> Res<()> {
    let exe = std::env::current_exe()?;
    let dir = scratch("/var/tmp", "crash");
    let db = dir.join("crash.db");
    let rt = rt();
    let mut totals: BTreeMap<&str, u64> = BTreeMap::new();
    let mut open_errors = Vec::new();
    let mut integrity_bad = Vec::new();
    let mut reopen_ms = Vec::new();
    for t in 0..trials {
        let mut child = Command::new(&exe)
            .args(["crash-child", db.to_str().unwrap(), &t.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line)?;
        if line.trim() != "ready" {
            let mut err = String::new();
            child.stderr.take().unwrap().read_to_string(&mut err)?;
            open_errors.push(format!("trial {t}: child could not open: {}", err.trim()));
            let _ = child.wait();
            continue;
        }
        // A spread of kill points: 3..=160 ms after the child is writing.
        let delay = 3 + (t * 37 + 11) % 158;
        std::thread::sleep(Duration::from_millis(delay));
        child.kill()?; // SIGKILL
        child.wait()?;
        let start = Instant::now();
        let agent = match open_db(&rt, &db) {
            Ok(a) => a,
            Err(e) => {
                open_errors.push(format!("trial {t}: reopen failed: {e}"));
                continue;
            }
        };
        reopen_ms.push(start.elapsed().as_secs_f64() * 1e3);
        let ic = sql_rows(&rt, &agent, "PRAGMA integrity_check")
            .unwrap_or_else(|e| vec![format!("error: {e}")]);
        if ic.len() != 1 || !ic[0].contains("ok") {
            integrity_bad.push(format!("trial {t}: {ic:?}"));
        }
        let counts = rt.block_on(check_crash_dirs(&agent, t))?;
        for (k, v) in counts {
            *totals.entry(k).or_default() += v;
        }
        drop(agent);
    }
    let wal = std::fs::metadata(dir.join("crash.db-wal"))
        .map(|m| m.len())
        .unwrap_or(0);
    let dbsize = std::fs::metadata(&db).map(|m| m.len()).unwrap_or(0);
    println!("{trials} SIGKILL trials on one database on disk (/var/tmp); each child writes files of {CRASH_LEN} B until killed 3-160 ms in");
    println!("reopen failures: {}", open_errors.len());
    for e in &open_errors {
        println!("  {e}");
    }
    println!("integrity_check not ok: {}", integrity_bad.len());
    for e in &integrity_bad {
        println!("  {e}");
    }
    println!("file states after the last reopen, summed over trials (the last trial's files checked after each kill):");
    for (k, v) in &totals {
        println!("  {k}: {v}");
    }
    reopen_ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if !reopen_ms.is_empty() {
        println!(
            "reopen time after a kill: median {:.1} ms, max {:.1} ms; database {} KiB, WAL {} KiB at the end",
            reopen_ms[reopen_ms.len() / 2],
            reopen_ms[reopen_ms.len() - 1],
            dbsize / 1024,
            wal / 1024
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// Classify the files the killed trial wrote.
async fn check_crash_dirs(
    agent: &AgentFS,
    t: u64,
) -> agentfs_sdk::error::Result<BTreeMap<&'static str, u64>> {
    let fs = &agent.fs;
    let mut counts = BTreeMap::new();
    for (dir, kind) in [("/direct", "direct"), ("/staged", "staged")] {
        let Some(st) = fs.lstat(dir).await? else {
            continue;
        };
        let names = fs.readdir(st.ino).await?.unwrap_or_default();
        let prefix = format!("t{t}_");
        let tmp_prefix = format!(".tmp{t}_");
        for name in names {
            let key: &'static str = if let Some(k) = name.strip_prefix(&prefix) {
                let k: u64 = k.parse().unwrap();
                let data = fs
                    .read_file(&format!("{dir}/{name}"))
                    .await?
                    .unwrap_or_default();
                match (kind, data == pattern(t, k, CRASH_LEN), data.is_empty()) {
                    ("direct", true, _) => "direct: complete",
                    ("direct", _, true) => "direct: EMPTY (created, write lost)",
                    ("direct", _, _) => "direct: WRONG CONTENT",
                    (_, true, _) => "staged: complete",
                    (_, _, true) => "staged: EMPTY",
                    _ => "staged: WRONG CONTENT",
                }
            } else if name.starts_with(&tmp_prefix) {
                "staged: leftover temp name"
            } else {
                continue;
            };
            *counts.entry(key).or_default() += 1;
        }
    }
    Ok(counts)
}

// ---------------------------------------------------------------------------------------------
// lock: several processes / instances on one database.

fn lock() -> Res<()> {
    let exe = std::env::current_exe()?;
    let rt = rt();
    let dir = scratch("/dev/shm", "lock");
    let db = dir.join("lock.db");
    let a = open_db(&rt, &db)?;
    rt.block_on(async {
        let (_, f) = a.fs.create_file("/x", 0o644, 0, 0).await?;
        f.pwrite(0, b"one").await
    })?;
    let out = Command::new(&exe)
        .args(["lock-child", db.to_str().unwrap()])
        .output()?;
    println!(
        "second PROCESS opening the database while the first has it open: {}",
        String::from_utf8_lossy(&out.stdout).trim()
    );
    match open_db(&rt, &db) {
        Err(e) => println!("second instance in the SAME process: open error: {e}"),
        Ok(b) => {
            println!("second instance in the SAME process: opens");
            // Staleness of the per-instance dentry cache: B looks up /x, A renames it away.
            let before = rt.block_on(b.fs.lstat("/x"))?.map(|s| s.ino);
            rt.block_on(a.fs.rename("/x", "/y"))?;
            let after_b = rt.block_on(b.fs.lstat("/x"))?.map(|s| s.ino);
            let after_a = rt.block_on(a.fs.lstat("/x"))?.map(|s| s.ino);
            println!(
                "  B lstat /x = {before:?}; A renames /x -> /y; then B lstat /x = {after_b:?} (A sees {after_a:?})"
            );
            let r = rt
                .block_on(b.fs.read_file("/x"))
                .map(|v| v.map(|v| String::from_utf8_lossy(&v).into_owned()));
            println!("  B read_file /x after the rename = {r:?}");
        }
    }
    drop(a);
    let out = Command::new(&exe)
        .args(["lock-child", db.to_str().unwrap()])
        .output()?;
    println!(
        "second process after the first closed it: {}",
        String::from_utf8_lossy(&out.stdout).trim()
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn lock_child(db: &str) -> Res<()> {
    let rt = rt();
    match open_db(&rt, Path::new(db)) {
        Ok(a) => {
            let r = rt.block_on(a.fs.lstat("/x")).map(|s| s.is_some());
            println!("opens; lstat /x ok = {r:?}");
        }
        Err(e) => println!("open error: {e}"),
    }
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("facts") => facts(),
        Some("bench") => bench(),
        Some("rss") => rss(),
        Some("rss-one") => rss_one(&args[2]),
        Some("crash") => crash(args.get(2).and_then(|s| s.parse().ok()).unwrap_or(40)),
        Some("crash-child") => crash_child(&args[2], args[3].parse()?),
        Some("lock") => lock(),
        Some("lock-child") => lock_child(&args[2]),
        _ => {
            eprintln!("usage: probe facts|bench|rss|crash [trials]|lock");
            std::process::exit(2)
        }
    }
}
