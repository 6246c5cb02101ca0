// Bench helper, preloaded (`node --import ./bench/helpers/cpu-probe.ts`) into every server process
// bench/collab/ measures, ours and the peers alike: when the process has an IPC channel (the
// benchmark spawns it with one), a message `{type: 'cpu-usage', id}` is answered with
// `{type: 'cpu-usage', id, user, system}`, the process's own process.cpuUsage() in microseconds.
// The channel does not keep the process alive.
if (process.send) {
  process.on('message', (msg: { type?: string; id?: number }) => {
    if (msg?.type !== 'cpu-usage') return;
    const usage = process.cpuUsage();
    process.send!({ type: 'cpu-usage', id: msg.id, user: usage.user, system: usage.system });
  });
  process.channel?.unref();
}
