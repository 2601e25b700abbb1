//! `bardo tui` in a real terminal: tmux runs it in a 120×40 pane on the devnet, keys are sent to
//! it and the screen is read back with `capture-pane` (with `-e`, the colours too). Swaps and a
//! preview come from other processes, as an agent's would.

use bardo_devnet::DEV_KEY;
use bardo_test_artifacts::{STREAMING, UNISWAP};
use bardo_test_support::streams::env_with;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

alloy::sol! { function transfer(address to, uint256 amount) external returns (bool); }

/// A private tmux server (its own socket, no user configuration), killed when dropped.
struct Tmux {
    socket: String,
}

impl Tmux {
    fn start(dir: &Path, command: &str, (w, h): (u16, u16)) -> Self {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let socket = format!("bardo-tui-{}-{n}", std::process::id());
        let tmux = Self { socket };
        let o = tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "tui",
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
            "-c",
            &dir.display().to_string(),
            command,
        ]);
        assert!(o.status.success(), "tmux new-session: {o:?}");
        // Keep the pane (and its last screen) when the program exits.
        tmux.run(&["set-option", "-t", "tui", "remain-on-exit", "on"]);
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env("BARDO_PRIVATE_KEY", DEV_KEY)
            .output()
            .expect("tmux")
    }

    /// The pane's text; with `escapes`, its colours and attributes as SGR sequences too.
    fn capture(&self, escapes: bool) -> String {
        let mut args = vec!["capture-pane", "-p", "-t", "tui"];
        if escapes {
            args.push("-e");
        }
        String::from_utf8_lossy(&self.run(&args).stdout).into_owned()
    }

    /// Wait until the screen satisfies `ok` (at most `within`); returns it.
    fn wait(&self, what: &str, within: Duration, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within;
        loop {
            let screen = self.capture(false);
            if ok(&screen) {
                return screen;
            }
            assert!(Instant::now() < deadline, "{what} not on screen within {within:?}:\n{screen}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Send `signal` to the program the pane's shell runs (the shell's children).
    fn signal_program(&self, signal: &str) {
        for pid in self.program() {
            assert!(Command::new("kill").args([signal, &pid]).status().expect("kill").success());
        }
    }

    /// The processes the pane's shell runs (its children).
    fn program(&self) -> Vec<String> {
        let o = self.run(&["display-message", "-p", "-t", "tui", "#{pane_pid}"]);
        let shell = String::from_utf8_lossy(&o.stdout).trim().to_owned();
        let children: Vec<String> = std::fs::read_dir("/proc")
            .expect("/proc")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| s.rsplit(") ").next().map(|rest| rest.split(' ').nth(1) == Some(&shell)))
                    .unwrap_or(false)
            })
            .collect();
        assert!(!children.is_empty(), "the pane's shell {shell} runs nothing");
        children
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "tui"];
        args.extend(keys);
        assert!(self.run(&args).status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// The 0.30 % WETH/USDC pool's row in the Pool Explorer, after its name.
fn pool_row(screen: &str) -> Option<&str> {
    let line = screen.lines().find(|l| l.contains("WETH/USDC") && l.contains("0.30 %"))?;
    cell_after(line, "WETH/USDC")
}

/// The text after `label` on the first line that has it, up to the next `│`.
fn cell_after<'a>(screen: &'a str, label: &str) -> Option<&'a str> {
    let line = screen.lines().find(|l| l.contains(label))?;
    let rest = &line[line.find(label)? + label.len()..];
    Some(rest.split('│').next().unwrap_or(rest).trim())
}

#[test]
fn the_dashboard_follows_the_devnet_and_cancels_a_permit_through_the_write_path() {
    let e = env_with(&[UNISWAP, STREAMING], DEV_KEY);
    let d = &e.d;
    let pool = e.pool();
    // A position a few tick spacings wide around the price: the swaps below push it out.
    let tick = e.tick(pool);
    let lower = tick.div_euclid(60) * 60 - 120;
    let upper = lower + 300;
    let position = e.mint_position(lower, upper);

    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
    std::fs::copy(UNISWAP, dir.path().join("plugins/uniswap.wasm")).expect("copy");
    std::fs::copy(STREAMING, dir.path().join("plugins/streaming.wasm")).expect("copy");
    std::fs::write(dir.path().join("uniswap.json"), d.uniswap_settings().to_string()).expect("settings");
    std::fs::write(dir.path().join("streaming.json"), d.streaming_settings().to_string()).expect("settings");
    std::fs::write(dir.path().join("pricing.json"), d.pricing_json().to_string()).expect("pricing");
    let allow: Vec<String> =
        d.write_targets().iter().map(|(a, role)| format!("\"{a}\" = \"{role}\"")).collect();
    let pool = pool.to_checksum(None);
    let config = format!(
        "profile = \"trader\"\nplugins = [\"plugins\"]\n[chains.31337]\nrpc = \"{url}\"\nhead_ttl_ms = 0\n\
         [settings]\nuniswap = \"uniswap.json\"\nstreaming = \"streaming.json\"\n\
         [safety]\npricing_file = \"pricing.json\"\n[safety.allowlist.31337]\n{allow}\n\
         [[tui.follow]]\ntool = \"stream_pool_state\"\nparams = {{ chain_id = 31337, pool = \"{pool}\", interval_ms = 5000 }}\n\
         [[tui.follow]]\ntool = \"stream_pool_events\"\nparams = {{ chain_id = 31337, pool = \"{pool}\" }}\n\
         [[tui.follow]]\ntool = \"stream_price_feed\"\nparams = {{ chain_id = 31337, base = \"WETH\", quote = \"USDC\" }}\n\
         [[tui.follow]]\ntool = \"stream_position_alerts\"\nparams = {{ chain_id = 31337, token_id = \"{position}\" }}\n",
        url = e.url(),
        allow = allow.join("\n"),
    );
    std::fs::write(dir.path().join("bardo.toml"), config).expect("config");
    let bardo = env!("CARGO_BIN_EXE_bardo");
    let tmux = Tmux::start(dir.path(), &format!("{bardo} tui; echo $? > exit-code"), (120, 40));

    // The first snapshot: the pool's price, fee tier and version.
    let screen = tmux.wait("the pool's first snapshot", Duration::from_secs(180), |s| {
        pool_row(s).is_some_and(|c| c.starts_with("v3  0.30 %"))
    });
    let before = pool_row(&screen).expect("row").to_owned();
    assert!(screen.contains("Position Monitor") && screen.contains("Tool Activity"), "{screen}");

    // Swaps (sent by this test, not by the dashboard's process) until the position is out of range.
    let mut swaps = 0;
    while e.tick(e.pool()) >= lower {
        e.swap("WETH", "USDC", "5");
        swaps += 1;
        assert!(swaps < 40, "the price does not leave the range");
    }
    // And one in the deepest WETH/USDC pool (0.05 %), which the price feed follows.
    e.swap_in("USDC", "WETH", "1000", 500);
    let screen = tmux.wait("the price moving, the swap and the alert", Duration::from_secs(30), |s| {
        pool_row(s).is_some_and(|c| c != before)
            && s.contains("Price Dashboard: WETH/USDC")
            && s.contains("PoolEventReceived")
            && s.contains("swap WETH/USDC amount0")
            && s.contains("OUT OF RANGE")
            && s.contains("out_of_range")
    });
    assert!(screen.contains("recent swaps of WETH/USDC"), "{screen}");
    // The alert is highlighted: on red (SGR 41, or 48;5;1 as tmux writes palette colour 1)
    // from where its line starts.
    let colours = tmux.capture(true);
    let alert = colours
        .lines()
        .find(|l| l.contains(&format!("position #{position} on chain 31337 out_of_range")))
        .expect("alert line");
    let at = alert.find(&format!("position #{position} on chain 31337 out_of_range")).expect("alert text");
    let before_text = &alert[..at];
    let last_sgr = &before_text[before_text.rfind("\u{1b}[").expect("an SGR before the alert")..];
    assert!(
        last_sgr.starts_with("\u{1b}[41m") || last_sgr.starts_with("\u{1b}[48;5;1m"),
        "alert not highlighted: {alert:?}"
    );

    // `bardo` in another process, as an agent's would be.
    let run = |args: &[&str]| {
        Command::new(bardo)
            .current_dir(dir.path())
            .env("BARDO_PRIVATE_KEY", DEV_KEY)
            .args(args)
            .output()
            .expect("bardo")
    };
    // A swap previewed: its permit id, and the row label the Permits pane gives it.
    let preview = || {
        let swap = r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"100"}"#;
        let o = run(&["preview", "swap", "--params", swap]);
        assert!(o.status.success(), "{o:?}");
        let permit: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let id = permit["permit_id"].as_str().expect("id").to_owned();
        let shown = format!("permit…{}", &id[id.len() - 4..]);
        (id, shown)
    };

    // A preview from another process: the permit appears with its countdown.
    let (id, shown) = preview();
    let screen = tmux.wait("the permit", Duration::from_secs(10), |s| s.contains(&shown));
    let countdown = cell_after(&screen, &shown).expect("permit row").to_owned();
    assert!(
        countdown.starts_with("swap") && countdown.contains("medium") && countdown.contains(":"),
        "{countdown}"
    );
    let first = tmux.capture(false);
    std::thread::sleep(Duration::from_millis(2_100));
    let later = tmux.capture(false);
    assert_ne!(cell_after(&first, &shown), cell_after(&later, &shown), "the countdown runs");

    // Tab to the Permits pane, `x`: cancelled through the write path.
    tmux.keys(&["Tab", "Tab", "Tab"]);
    tmux.wait("the Permits pane focused", Duration::from_secs(5), |s| s.contains(&shown));
    tmux.keys(&["x"]);
    tmux.wait("the cancel", Duration::from_secs(10), |s| s.contains(&format!("{id} cancelled")));
    let commit = run(&["commit", &id]);
    assert_eq!(commit.status.code(), Some(1), "{commit:?}");
    assert!(
        String::from_utf8_lossy(&commit.stdout).contains("cancelled"),
        "the store says cancelled: {commit:?}"
    );
    tmux.wait("the permit gone", Duration::from_secs(5), |s| !s.contains(&shown));

    // Another preview; `c` asks first, `y` commits it through the dashboard's write path.
    let (id, shown) = preview();
    tmux.wait("the second permit", Duration::from_secs(10), |s| s.contains(&shown));
    tmux.keys(&["c"]);
    tmux.wait("the commit prompt", Duration::from_secs(5), |s| s.contains(&format!("Commit {id}?")));
    tmux.keys(&["y"]);
    let screen = tmux.wait("the commit", Duration::from_secs(60), |s| {
        s.contains(&format!("{id} committed")) && s.contains("ActionExecuted")
    });
    assert!(screen.contains("✓ ") && screen.contains("fuel "), "the verify call in Tool Activity: {screen}");
    let again = run(&["commit", &id]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("already used"), "{again:?}");

    // 80×24: the focused pane alone under a tab bar, nothing garbled, still running.
    assert!(tmux.run(&["resize-window", "-t", "tui", "-x", "80", "-y", "24"]).status.success());
    let small = tmux.wait("the small layout", Duration::from_secs(5), |s| {
        s.lines().any(|l| l.contains("Pools") && l.contains("Events"))
    });
    assert!(small.lines().count() <= 24 && small.lines().all(|l| l.chars().count() <= 80), "{small}");
    assert!(!dir.path().join("exit-code").exists(), "the dashboard died: {small}");
    tmux.keys(&["?"]);
    tmux.wait("the help", Duration::from_secs(5), |s| s.contains("keys (any key closes)"));
    tmux.keys(&["Escape", "q"]);
    assert_eq!(exit_code(dir.path(), &tmux), "0", "q exits 0");
    // The events it showed are in the journal, StreamClosed of each subscription last.
    let journal = std::fs::read_to_string(dir.path().join(".bardo/events.jsonl")).expect("journal");
    assert!(journal.contains("PoolEventReceived") && journal.contains("PositionAlert"));
    assert_eq!(journal.matches("StreamClosed").count(), 4, "{journal}");
}

/// Wait for `dir/exit-code` (the command tmux ran writes it) and return it.
fn exit_code(dir: &Path, tmux: &Tmux) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        // The shell creates the file, then writes it: empty is not yet.
        if let Ok(code) = std::fs::read_to_string(dir.join("exit-code"))
            && !code.trim().is_empty()
        {
            return code.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "q did not end it:\n{}", tmux.capture(false));
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Without `[tui] follow` the dashboard follows the journal `bardo stream` writes (replayed from
/// `--resume-from`, then live); with `[cluster]` it follows the fleet's stream, its own
/// `[tui] follow` subscriptions being fleet subscriptions.
/// Every event journaled in `dir` (`bardo events` from the start, not following).
fn journaled(dir: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir)
        .args(["events", "--resume-from", "1", "--no-follow"])
        .output()
        .expect("bardo events");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn the_dashboard_follows_another_processs_journal_and_the_fleets_stream() {
    use alloy::sol_types::SolCall;
    let e = env_with(&[STREAMING], DEV_KEY);
    let d = &e.d;
    let jar = d.accounts[7];
    let deposit = |usdc: u64| {
        let call = transferCall { to: jar, amount: alloy::primitives::U256::from(usdc * 1_000_000) };
        e.send_as(d.deployer, d.tokens["USDC"].address, call.abi_encode());
    };
    let jar_params =
        format!(r#"{{ chain_id = 31337, jar = "{}", tokens = ["USDC"] }}"#, jar.to_checksum(None));
    let setup = |extra: &str| {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(dir.path().join("plugins")).expect("plugins dir");
        std::fs::copy(STREAMING, dir.path().join("plugins/streaming.wasm")).expect("copy");
        std::fs::write(dir.path().join("streaming.json"), d.streaming_settings().to_string())
            .expect("settings");
        let config = format!(
            "profile = \"data\"\nplugins = [\"plugins\"]\n[chains.31337]\nrpc = \"{}\"\n[settings]\nstreaming = \"streaming.json\"\n{extra}",
            e.url()
        );
        std::fs::write(dir.path().join("bardo.toml"), config).expect("config");
        dir
    };
    let bardo = env!("CARGO_BIN_EXE_bardo");

    // 1. `bardo stream` journals a deposit; the dashboard replays it, then shows the next live.
    let dir = setup("");
    let (mut stream, mut out) = super::cli::stream_tokenjar(dir.path(), jar);
    deposit(7);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).expect("the deposit's event");
    assert!(line.contains("TokenJarUpdate"), "{line}");
    let tmux =
        Tmux::start(dir.path(), &format!("{bardo} tui --resume-from 1; echo $? > exit-code"), (120, 40));
    let screen =
        tmux.wait("the replayed deposit", Duration::from_secs(120), |s| s.contains("deposit 7 USDC"));
    assert!(screen.contains("following") && screen.contains("TokenJarUpdate"), "{screen}");
    deposit(8);
    tmux.wait("the live deposit", Duration::from_secs(30), |s| s.contains("deposit 8 USDC"));
    tmux.keys(&["q"]);
    assert_eq!(exit_code(dir.path(), &tmux), "0");
    let _ = Command::new("kill").args(["-INT", &stream.id().to_string()]).status();
    let _ = stream.wait();

    // 2. A one-node fleet: the dashboard's subscription is the fleet's, its events the stream's.
    let nats_dir = tempfile::tempdir().expect("tempdir");
    let nats = bardo_devnet::nats::NatsCluster::start(nats_dir.path(), 1).expect("nats-server");
    let dir = setup(&format!(
        "[cluster]\nnats = [\"{}\"]\nname = \"fleet\"\nhost = \"tui\"\n\
         [[tui.follow]]\ntool = \"stream_tokenjar\"\nparams = {jar_params}\n",
        nats.url(0)
    ));
    let tmux = Tmux::start(dir.path(), &format!("{bardo} tui; echo $? > exit-code"), (120, 40));
    tmux.wait("the fleet dashboard", Duration::from_secs(120), |s| s.contains("fleet `fleet` as host `tui`"));
    // The lease is taken when the subscription starts: a deposit from now on is delivered.
    std::thread::sleep(Duration::from_millis(500));
    deposit(9);
    let screen = tmux.wait("the fleet's deposit", Duration::from_secs(30), |s| s.contains("deposit 9 USDC"));
    assert!(!screen.contains("gaps:"), "{screen}");
    tmux.keys(&["q"]);
    assert_eq!(exit_code(dir.path(), &tmux), "0");
    let text = journaled(dir.path());
    let deposits: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"]["type"] == "TokenJarUpdate")
        .collect();
    assert_eq!(deposits.len(), 1, "{text}");
    assert_eq!(
        (deposits[0]["host"].as_str(), deposits[0]["event"]["data"]["amount"].as_str()),
        (Some("tui"), Some("9"))
    );
}

/// The terminal closing under it (its tmux killed: SIGHUP, the tty gone) ends the dashboard
/// within seconds — it does not spin on the dead terminal.
#[test]
fn a_terminal_that_hangs_up_ends_the_dashboard() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"data\"\nplugins = []\n").expect("config");
    let tmux = Tmux::start(dir.path(), &format!("{} tui; true", env!("CARGO_BIN_EXE_bardo")), (100, 30));
    tmux.wait("the dashboard", Duration::from_secs(60), |s| s.contains("Permits"));
    let program = tmux.program();
    drop(tmux); // kill-server: the pty closes, the pane's processes get SIGHUP
    let alive =
        |pid: &str| std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
    let deadline = Instant::now() + Duration::from_secs(10);
    while program.iter().any(|p| alive(p)) {
        assert!(Instant::now() < deadline, "bardo tui still runs without a terminal: {program:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn without_a_terminal_it_says_what_to_use_instead() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("bardo.toml"), "profile = \"data\"\nplugins = []\n").expect("config");
    let o = Command::new(env!("CARGO_BIN_EXE_bardo"))
        .current_dir(dir.path())
        .arg("tui")
        .output()
        .expect("bardo tui");
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("stdout is not one") && err.contains("bardo events"), "{err}");
}

/// `confirm = "always"`, MCP elicitation opted in: an MCP client's commit waits on its user, who
/// never answers; the dashboard (another process) shows the permit held, and `y` there releases
/// the commit.
#[test]
fn y_in_the_dashboard_confirms_a_permit_an_mcp_client_is_waiting_on() {
    use super::mcp::{Workspace, balanceOfCall, python_client, view};
    let (node, d) = bardo_test_support::devnet();
    let opt_in = "[safety.confirm]\ndefault = \"always\"\nvia = [\"cli\", \"tui\", \"mcp-elicitation\"]";
    let w = Workspace::trader_with(&node, &d, opt_in);
    let usdc = || view(&node.url(), d.tokens["USDC"].address, balanceOfCall { account: d.deployer });
    let before = usdc();
    let bardo = env!("CARGO_BIN_EXE_bardo");
    let tmux = Tmux::start(w.path(), &format!("{bardo} tui; echo $? > exit-code"), (120, 40));
    tmux.wait("the dashboard", Duration::from_secs(120), |s| s.contains("Permits (0 open)"));

    let swap = r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"100"}"#;
    let client = python_client(&["confirm", "--answer", "hang", "--args", swap, "--stdio", "--"])
        .args(w.server(&[]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("the Python MCP client");
    let screen = tmux.wait("the held permit", Duration::from_secs(60), |s| s.contains("⏸ swap"));
    assert!(screen.contains("Permits (1 open)"), "{screen}");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(usdc(), before, "nothing is sent while the client's user is asked");

    tmux.keys(&["Tab", "Tab", "Tab"]);
    tmux.keys(&["y"]);
    tmux.wait("the confirmation", Duration::from_secs(10), |s| s.contains("confirmed: whoever waits on it"));
    let out = client.wait_with_output().expect("client");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let seen: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().last().expect("output"))
            .expect("json");
    assert_eq!(seen["commit"]["isError"], false, "{seen}");
    assert_eq!(seen["asked"].as_array().map(Vec::len), Some(1), "the client's user was asked: {seen}");
    assert_eq!(
        seen["asked"][0]["withdrawn"], true,
        "and the question withdrawn once confirmed in the dashboard: {seen}"
    );
    assert_eq!(before - usdc(), alloy::primitives::U256::from(100_000_000u64), "committed");
    let audit = std::fs::read_to_string(w.path().join(".bardo/audit.jsonl")).expect("audit log");
    assert!(audit.contains("\"PermitConfirmed\"") && audit.contains("\"channel\":\"tui\""), "{audit}");
    assert!(audit.contains("\"by\":\"operator (bardo tui, uid "), "{audit}");
    // A `kill` (SIGTERM) ends it as `q` does: the terminal back from the alternate screen, its
    // cursor shown again (what it wrote last, as the pane received it).
    let written = w.path().join("pane-output");
    let o = tmux.run(&["pipe-pane", "-t", "tui", "-o", &format!("cat > {}", written.display())]);
    assert!(o.status.success(), "{o:?}");
    tmux.signal_program("-TERM");
    assert_eq!(exit_code(w.path(), &tmux), "0", "SIGTERM ends it cleanly");
    let state = tmux.run(&["display-message", "-p", "-t", "tui", "#{alternate_on}"]);
    assert_eq!(String::from_utf8_lossy(&state.stdout).trim(), "0", "out of the alternate screen");
    // tmux hands the pane's output to the pipe as it reads it: wait for the last of it.
    let wrote = (0..20)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(100));
            String::from_utf8_lossy(&std::fs::read(&written).unwrap_or_default()).into_owned()
        })
        .find(|w| w.contains("\x1b[?1049l"))
        .unwrap_or_default();
    let (left, shown, hidden) =
        (wrote.rfind("\x1b[?1049l"), wrote.rfind("\x1b[?25h"), wrote.rfind("\x1b[?25l"));
    assert!(left.is_some() && shown > hidden, "left the alternate screen, cursor shown last: {wrote:?}");
}

const POOL_INFO: &str = r#"{"chain_id":31337,"token_a":"WETH","token_b":"USDC","fee":3000}"#;

#[test]
fn a_commit_from_the_cli_shows_in_a_dashboard_following_the_journal() {
    use super::mcp::Workspace;
    let (node, d) = bardo_test_support::devnet();
    let w = Workspace::trader(&node, &d);
    let bardo = env!("CARGO_BIN_EXE_bardo");
    let tmux = Tmux::start(w.path(), &format!("{bardo} tui; echo $? > exit-code"), (120, 40));
    tmux.wait("the dashboard", Duration::from_secs(120), |s| s.contains("Permits (0 open)"));

    // Another terminal: preview and commit with the CLI, which journals its write path's steps.
    let swap = r#"{"chain_id":31337,"token_in":"USDC","token_out":"WETH","amount":"100"}"#;
    let preview = w.bardo(&["preview", "swap", "--params", swap]);
    assert!(preview.status.success(), "{preview:?}");
    let permit: serde_json::Value = serde_json::from_slice(&preview.stdout).expect("json");
    let id = permit["permit_id"].as_str().expect("id");
    // The permit's outcome as the simulation showed it, in amounts a person reads.
    tmux.wait("the permit's outcome", Duration::from_secs(10), |s| s.contains("100 USDC →"));
    let commit = w.bardo(&["commit", id]);
    assert!(commit.status.success(), "{commit:?}");
    let screen = tmux.wait("the CLI's commit", Duration::from_secs(30), |s| s.contains("ActionExecuted"));
    assert!(screen.contains("PermitIssued") || screen.contains("permit"), "{screen}");
    let text = journaled(w.path());
    assert!(text.contains("ActionExecuted") && text.contains(id), "the journal holds the commit: {text}");
    // A read from the CLI shows in the tool activity too, with what it cost.
    let read = w.bardo(&["call", "uniswap_get_pool_info", "--params", POOL_INFO]);
    assert!(read.status.success(), "{read:?}");
    tmux.wait("the CLI's read", Duration::from_secs(10), |s| s.contains("uniswap_get_pool_info"));
    let text = journaled(w.path());
    let end = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("line"))
        .find(|e| e["event"]["type"] == "ToolExecutionEnd" && e["event"]["tool"] == "uniswap_get_pool_info")
        .expect("the read's end is journaled");
    assert!(end["event"]["ok"] == true && end["event"]["fuel"].as_u64() > Some(0), "{end}");
    tmux.keys(&["q"]);
    assert_eq!(exit_code(w.path(), &tmux), "0");
}
