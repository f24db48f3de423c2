//! What every long-running command shares: its logs and its stop signal.

/// Structured logs (`tracing`) on stderr: level from `RUST_LOG` (default
/// INFO), colours only on a terminal.
pub fn init_logging() {
    let level = std::env::var("RUST_LOG")
        .ok()
        .and_then(|v| v.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::INFO);
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(ansi)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Listens for Ctrl-C and SIGTERM: the returned future completes on the
/// first one. The handlers are installed by this call, not when the future
/// is first polled, so a command calls it before it reports itself ready:
/// a signal sent as soon as it is (as supervisors and tests do) is then
/// neither lost nor fatal (the default action of SIGTERM kills at once).
/// Must be called inside the tokio runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            tokio::select! {
                () = received(interrupt, "Ctrl-C") => tracing::info!("received Ctrl-C"),
                () = received(terminate, "SIGTERM") => tracing::info!("received SIGTERM"),
            }
        }
    }
    #[cfg(not(unix))]
    async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
        tracing::info!("received Ctrl-C");
    }
}

/// Completes when `stream` (an installed handler, or the error installing
/// it: then never) delivers a signal.
#[cfg(unix)]
async fn received(stream: std::io::Result<tokio::signal::unix::Signal>, what: &str) {
    match stream {
        Ok(mut s) => {
            s.recv().await;
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot listen for {what}");
            std::future::pending::<()>().await;
        }
    }
}
