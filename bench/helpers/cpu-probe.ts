// Bench helper, preloaded (`node --import ./bench/helpers/cpu-probe.ts`) into every server process
// bench/collab/ measures, ours and the peers alike. When the process has an IPC channel (the
// benchmark spawns it with one), it answers:
//   {type: 'cpu-usage', id}            -> {type: 'cpu-usage', id, user, system}: process.cpuUsage() in µs
//   {type: 'profile-start', id}        -> {type: 'profile-started', id}: V8's CPU profiler starts
//   {type: 'profile-stop', id, file}   -> {type: 'profile-stopped', id}: the profile since the start is written to `file`
// so that a profile covers exactly the measured stretch (not the start-up, the connects or the
// checks after it). The channel does not keep the process alive.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

type Message = { type?: string; id?: number; file?: string };

if (process.send) {
  let session: Session | null = null;
  const reply = (msg: object) => process.send!(msg);
  process.on('message', (msg: Message) => {
    if (msg?.type === 'cpu-usage') {
      const usage = process.cpuUsage();
      reply({ type: 'cpu-usage', id: msg.id, user: usage.user, system: usage.system });
    } else if (msg?.type === 'profile-start') {
      session = new Session();
      session.connect();
      const s = session;
      s.post('Profiler.enable', () => {
        // 1 ms, as --cpu-prof's default.
        s.post('Profiler.setSamplingInterval', { interval: 1000 }, () => {
          s.post('Profiler.start', () => reply({ type: 'profile-started', id: msg.id }));
        });
      });
    } else if (msg?.type === 'profile-stop' && session) {
      const s = session;
      session = null;
      s.post('Profiler.stop', (err, result) => {
        if (!err) writeFileSync(msg.file!, JSON.stringify(result.profile));
        s.disconnect();
        reply({ type: 'profile-stopped', id: msg.id, error: err ? String(err) : undefined });
      });
    }
  });
  process.channel?.unref();
}
