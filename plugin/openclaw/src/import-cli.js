// `openclaw graphiti import`: memory-core's workspace files into one chat's memory. The component
// plans, feeds and sends; this file parses the options and calls again while the import is under
// way (the Gateway's own sending passes feed it too, so an interrupted import goes on there).

import { IMPORT_UNDER_WAY, importCommand } from './commands.js';
import { RECENT_DAYS, clearStaged, stageTranscripts } from './transcripts.js';

/** How long the CLI waits between the passes of an import under way. */
const POLL_MS = 1000;

/** What an import started and left under way says after its progress. */
export const LEFT_TO_THE_GATEWAY = "import: under way; the Gateway's sending passes carry it on, `openclaw graphiti status` says how far\n";

/**
 * @param {import('commander').Command} graphiti  the `graphiti` command
 * @param {(command: object) => Promise<{ exitCode: number, stdout: string, stderr: string }>} run
 *   runs a component command and returns its output
 * @param {string} stateDir  the plugin's state directory, where transcripts are staged
 */
export function registerImportCommand(graphiti, run, stateDir) {
  graphiti.command('import')
    .description("Import what OpenClaw remembers: memory-core's files in the agent's workspace (MEMORY.md, USER.md, memory/imports/; with --daily-notes the daily notes) into one chat's memory and, with --transcripts, past conversations into their own chats' memories; each item once, at capture.import_per_minute")
    .option('--sender <id>', 'the sender the workspace belongs to: their direct chat\'s group')
    .option('--group-id <id>', 'the Graphiti group to import into instead')
    .option('--agent <id>', 'the agent whose memories they are', 'main')
    .option('--daily-notes', 'import the daily notes (memory/YYYY-MM-DD*.md) too')
    .option('--transcripts', `import the past conversations of the last ${RECENT_DAYS} days too, each turn into its own chat's group`)
    .option('--all-transcripts', 'import every past conversation, however old')
    .option('--dry-run', 'list what would be sent per group, what is skipped and why, and Graphiti\'s work; send nothing')
    .option('--json', 'print the dry run as JSON')
    .option('--no-wait', 'start the import and return: the Gateway\'s sending passes carry it on, and status says how far it is')
    .action(async (opts) => {
      const dryRun = Boolean(opts.dryRun);
      // This invocation's calls share a run id: a job it started that the Gateway finished between
      // two calls is reported as finished, not planned again.
      const runId = `import-${process.pid}-${Date.now()}`;
      const command = importCommand({ sender: opts.sender, group: opts.groupId, agent: opts.agent, dailyNotes: opts.dailyNotes, runId }, { dryRun, json: Boolean(opts.json) });
      if (!command) {
        process.stderr.write('graphiti import: name one memory, --sender ID (their direct chat) or --group-id ID\n');
        process.exitCode = 2;
        return;
      }
      try {
        if (opts.transcripts || opts.allTranscripts) {
          await stageTranscripts(stateDir, { agentId: opts.agent, all: Boolean(opts.allTranscripts) });
        } else {
          clearStaged(stateDir);
        }
      } catch (error) {
        process.stderr.write(`graphiti import: OpenClaw's sessions could not be read: ${error?.message ?? error}\n`);
        process.exitCode = 1;
        return;
      }
      let last = '';
      for (;;) {
        const output = await run(command);
        if (output.exitCode === IMPORT_UNDER_WAY && opts.wait === false) {
          process.stdout.write(`${output.stdout}${LEFT_TO_THE_GATEWAY}`);
          return;
        }
        if (output.exitCode !== IMPORT_UNDER_WAY || dryRun) {
          if (output.stdout) process.stdout.write(output.stdout);
          if (output.stderr) process.stderr.write(output.stderr);
          process.exitCode = output.exitCode;
          return;
        }
        if (output.stdout !== last) process.stdout.write(output.stdout);
        last = output.stdout;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      }
    });
}
