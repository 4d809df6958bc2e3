// Preloaded into the service processes by `pnpm bench --profile --mode distributed`
// (NODE_OPTIONS=--import …; Node 20 does not accept --cpu-prof there). It profiles the
// process whose command is BENCH_CPU_PROFILE (e.g. `gateway`) the way --cpu-prof does, and
// writes the profile to BENCH_CPU_PROFILE_DIR when the process exits. With
// BENCH_ALLOC_PROFILE=1 it also samples allocations (every 32 KiB allocated, kept whether or
// not the object was collected since) and writes them as a .heapprofile beside it.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROFILE_DIR;
if (dir && process.argv[2] === process.env.BENCH_CPU_PROFILE) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  // --cpu-prof's default sampling interval.
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  const allocations = process.env.BENCH_ALLOC_PROFILE === '1';
  if (allocations) {
    session.post('HeapProfiler.enable');
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 32 * 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  process.on('exit', () => {
    // The in-thread inspector session answers synchronously, so this completes before exit.
    const stamp = `${Date.now()}.0.${process.pid}.0.001`;
    session.post('Profiler.stop', (err, result) => {
      if (err || !result) return;
      writeFileSync(join(dir, `CPU.${stamp}.cpuprofile`), JSON.stringify(result.profile));
    });
    if (allocations) {
      session.post('HeapProfiler.stopSampling', (err, result) => {
        if (err || !result) return;
        writeFileSync(join(dir, `Heap.${stamp}.heapprofile`), JSON.stringify(result.profile));
      });
    }
  });
}
