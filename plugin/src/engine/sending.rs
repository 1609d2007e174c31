//! Sending: the spool passed to Graphiti on `tick` and `flush`, and the `spool` command.

use super::Engine;
use crate::memory::delivery::{self, Pass, Sender};
use crate::memory::import::Feeder;
use crate::memory::spool::Spool;
use crate::ops::reports;
use crate::platform::api::{CommandOutput, SpoolCommand, TickReport};

impl Engine {
    /// Makes the state directory's spare files (see `spare_files`), sends spooled turns to
    /// Graphiti, oldest first (see `delivery`), then saves the counters.
    pub fn tick(&mut self) -> TickReport {
        // Spares first: making them never overlaps the hooks that follow a turn's delivery.
        if let Some(state_dir) = &self.host.state_dir {
            crate::platform::spare_files::renew(state_dir);
        }
        let report = self.send_pass(Pass::Tick);
        self.follow_up_forgets();
        self.flush_stats();
        report
    }

    pub(super) fn send_pass(&mut self, pass: Pass) -> TickReport {
        self.ensure_loaded();
        let Some(state_dir) = self.host.state_dir.clone() else {
            return TickReport {
                notes: vec!["no state directory: no spool".into()],
                ..TickReport::default()
            };
        };
        let capture = self.config.settings.capture.clone();
        self.graphiti();
        let Engine { host, memory, .. } = self;
        let client = &mut memory.client.as_mut().expect("made by graphiti()").2;
        let mut sender = Sender {
            spool: Spool::new(&state_dir),
            capture: &capture,
            client,
            http: host.http.as_mut(),
            falkordb: capture_falkordb(&self.config.settings, host.database.as_mut()),
            locks: host.locks.as_mut(),
            counts: &mut memory.unsaved,
            temp_swept_at_ms: &mut memory.temp_swept_at_ms,
            known_depth: &mut memory.spool_depth,
            kept_depth: &mut memory.kept_spool_depth,
            import: Some(Feeder {
                per_minute: capture.import_per_minute,
                redact: capture.redact.clone(),
                max_episodes: capture.spool_max_episodes,
                held: (!capture.enabled).then(|| "capture is disabled in settings".to_string()),
                is_paused: Box::new(|dir, group| {
                    crate::memory::control::capture_paused(Some(dir), group).is_some()
                }),
            }),
            import_fed: None,
        };
        let mut report = sender.pass(pass);
        memory.import_fed = sender.import_fed.take();
        self.save_graphiti_session(&mut report.notes);
        report
    }

    /// `flush`: passes over the spool until nothing waits or a pass makes no progress.
    pub(super) fn flush(&mut self) -> CommandOutput {
        let mut sent = 0;
        let mut notes = Vec::new();
        let report = loop {
            let report = self.send_pass(Pass::Flush);
            sent += report.sent;
            notes.extend(report.notes.iter().cloned());
            if report.sent == 0 || report.error.is_some() || report.pending == 0 {
                break report;
            }
        };
        self.flush_stats_now();
        let strays = self
            .host
            .state_dir
            .as_deref()
            .and_then(|dir| Spool::new(dir).strays());
        let mut out = reports::render_flush(sent, &report, &notes);
        if let Some(strays) = strays {
            // Something stays in the spool that no flush will send.
            out.stderr.push_str(&format!("{strays}\n"));
            out.exit_code = 1;
        }
        out
    }

    pub(super) fn spool_command(&mut self, command: SpoolCommand) -> CommandOutput {
        let Some(state_dir) = &self.host.state_dir else {
            return reports::failure(1, "no state directory: there is no spool");
        };
        let spool = Spool::new(state_dir);
        let result = match command {
            SpoolCommand::List => delivery::render_list(
                &spool,
                &crate::memory::control::forget::held(state_dir, crate::platform::time::now_ms()),
            ),
            SpoolCommand::Requeue => spool.requeue_set_aside().map(|requeued| {
                let mut said = format!(
                    "{} set-aside episode(s) put back at the end of the queue; the next tick sends them\n",
                    requeued.total
                );
                if requeued.unconfirmed > 0 {
                    said.push_str(&format!(
                        "{} of them were sent before with no answer, and Graphiti could not be seen \
                         to have them: it may hold them already, and then stores them a second time\n",
                        requeued.unconfirmed
                    ));
                }
                said
            }),
        };
        match result {
            Ok(stdout) => CommandOutput {
                exit_code: 0,
                stdout,
                stderr: String::new(),
            },
            Err(e) => reports::failure(1, e),
        }
    }
}

/// The FalkorDB the settings name, for confirming sends in doubt there.
fn capture_falkordb<'a>(
    settings: &'a crate::config::PluginSettings,
    database: &'a mut dyn crate::memory::falkordb::Database,
) -> Option<crate::memory::falkordb::group_graph::FalkorAt<'a>> {
    let origin = settings.graphiti.falkordb.configured()?;
    Some(crate::memory::falkordb::group_graph::FalkorAt { database, origin })
}
