// The benchmarks' baseline: the same hooks as graphiti-openclaw, doing nothing, so what OpenClaw's
// hook runner costs by itself is measured in the same run and subtracted.
export default {
  id: 'noop-openclaw',
  name: 'No-op baseline',
  description: 'Hooks that do nothing.',
  register(api) {
    api.on('before_prompt_build', async () => ({}));
    api.on('agent_end', async () => {});
  },
};
