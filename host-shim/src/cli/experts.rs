//! The `experts …` subcommands: what they mount (a package directory's parent; the experts directory
//! writable for install, bind and remove only) and the command each becomes.

use std::path::Path;

use host_shim::{
    ChatType, ExpertsCommand, HookContext, InstallSource, ManualRun, PackageArchive, ToolBinding,
    ToolCall, ToolCheck, TriggerFire,
};

use super::input_files::read_text;
use super::moment::moment;
use host_shim::cli_grammar::{CliCommand, ExpertsCli, GlobalOptions};

/// Largest package archive read for `experts install`.
const MAX_ARCHIVE_BYTES: u64 = 16 << 20;

/// A package given as a directory: its parent is mounted as the experts directory.
pub(crate) fn mount_package_dir(
    command: &mut CliCommand,
    options: &mut GlobalOptions,
) -> Result<(), String> {
    if let CliCommand::Experts {
        command: ExpertsCli::Validate { target } | ExpertsCli::Prompt { target },
    } = command
    {
        let path = Path::new(target.as_str());
        if path.join("expert.yaml").is_file() {
            let dir = path
                .canonicalize()
                .map_err(|err| format!("{target}: {err}"))?;
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .ok_or_else(|| format!("{target}: not a package directory"))?;
            options.experts_dir = dir.parent().map(Path::to_path_buf);
            *target = name;
        }
    }
    if let CliCommand::Experts {
        command: ExpertsCli::Install { .. } | ExpertsCli::Bind { .. } | ExpertsCli::Remove { .. },
    } = command
    {
        options.experts_writable = true;
    }
    if let CliCommand::Experts {
        command: ExpertsCli::Install { source },
    } = command
        && source.is_dir()
    {
        options.install_dir = Some(source.clone());
    }
    Ok(())
}

pub(crate) fn experts_command(command: ExpertsCli) -> Result<ExpertsCommand, String> {
    Ok(match command {
        ExpertsCli::List => ExpertsCommand::List,
        ExpertsCli::Validate { target } => ExpertsCommand::Validate(target),
        ExpertsCli::Prompt { target } => ExpertsCommand::Prompt(target),
        ExpertsCli::Registry => ExpertsCommand::Registry,
        ExpertsCli::Pending => ExpertsCommand::Pending,
        ExpertsCli::Approve { id } => ExpertsCommand::Approve(id),
        ExpertsCli::CheckTool {
            tool,
            arguments,
            session,
            expert,
            agent,
        } => {
            let call = ToolCall {
                tool_name: tool,
                arguments_json: arguments,
                call_id: None,
            };
            let ctx = HookContext {
                session_key: session,
                session_id: None,
                agent_id: agent,
                sender_id: None,
                sender_name: None,
                chat_id: None,
                channel: Some("cli".into()),
                chat_type: ChatType::Unknown,
                trigger: None,
                run_id: None,
                input_provenance: None,
            };
            ExpertsCommand::CheckTool(ToolCheck { expert, call, ctx })
        }
        ExpertsCli::Fire {
            expert,
            trigger,
            payload,
        } => ExpertsCommand::Fire(TriggerFire {
            expert,
            trigger,
            payload_json: read_text("payload file", &payload)?,
        }),
        ExpertsCli::Queue => ExpertsCommand::Queue,
        ExpertsCli::DeadLetters => ExpertsCommand::DeadLetters,
        ExpertsCli::Replay { id } => ExpertsCommand::Replay(id),
        ExpertsCli::Reject { id } => ExpertsCommand::Reject(id),
        ExpertsCli::Run {
            expert,
            message,
            process,
            inputs,
            dry_run,
        } => ExpertsCommand::Run(ManualRun {
            expert,
            message: message.unwrap_or_default(),
            process,
            inputs_json: inputs.unwrap_or_default(),
            dry_run,
        }),
        ExpertsCli::Due { at } => ExpertsCommand::Due(moment("--at", at.as_deref())?),
        ExpertsCli::Install { source } => ExpertsCommand::Install(install_source(&source)?),
        ExpertsCli::Bind {
            expert,
            tool,
            server,
        } => ExpertsCommand::Bind(ToolBinding {
            expert,
            tool,
            server,
        }),
        ExpertsCli::Remove { expert } => ExpertsCommand::Remove(expert),
    })
}

/// A directory (mounted at /install) or a .tgz archive's bytes (at most 16 MiB).
fn install_source(source: &Path) -> Result<InstallSource, String> {
    let name = source.display().to_string();
    if source.is_dir() {
        return Ok(InstallSource::Directory(name));
    }
    let meta = std::fs::metadata(source).map_err(|e| format!("{name}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "{name} is neither a package directory nor a .tgz archive"
        ));
    }
    if meta.len() > MAX_ARCHIVE_BYTES {
        return Err(format!(
            "{name} has {} bytes; a package archive may have at most {MAX_ARCHIVE_BYTES}",
            meta.len()
        ));
    }
    let bytes = std::fs::read(source).map_err(|e| format!("{name}: {e}"))?;
    Ok(InstallSource::Archive(PackageArchive { name, bytes }))
}
