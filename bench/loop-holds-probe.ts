// How long the process's event loop was held, measured from inside it (bench/loop-holds.ts):
// a 1 ms timer notes, at each tick, the main thread's CPU time and the wall time since the last
// one; the longest of each since the last read is served as JSON on a side port, and reset. The
// CPU time held between two ticks is what one turn of the loop cost, however busy the machine is
// (on a quiet machine the wall time says the same; on a loaded one it says more). Loaded before
// the process's own code with `node --import bench/loop-holds-probe.ts ...` when
// BENCH_HOLDS_PORT is set.
import { createServer } from 'node:http';
import { isMainThread } from 'node:worker_threads';

const port = Number(process.env.BENCH_HOLDS_PORT);
// Worker threads (the audio scans) load it too, with the process's flags: the main thread's loop is the one measured.
if (Number.isInteger(port) && port > 0 && isMainThread) start(port);

function start(statsPort: number): void {
  const cpuMs = () => {
    const { user, system } = process.threadCpuUsage();
    return (user + system) / 1000;
  };
  let lastCpu = cpuMs();
  let lastWall = performance.now();
  let longest = { cpuMs: 0, wallMs: 0 };
  setInterval(() => {
    const cpu = cpuMs();
    const wall = performance.now();
    longest = { cpuMs: Math.max(longest.cpuMs, cpu - lastCpu), wallMs: Math.max(longest.wallMs, wall - lastWall) };
    lastCpu = cpu;
    lastWall = wall;
  }, 1).unref();
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(longest));
    longest = { cpuMs: 0, wallMs: 0 };
  });
  server.listen(statsPort, '127.0.0.1');
  server.unref();
}
