/**
 * The CPU the loopback servers a bench started (ElasticMQ, memcached) spent while a contender ran:
 * on a machine of two cores they take turns with the contender, so a contender that makes them work
 * more runs slower whatever its own CPU. Read from /proc (Linux); BENCH_SERVER_PIDS names them
 * ("elasticmq=123 memcached=456", set by bench/lib/servers.sh for the servers it started). A server
 * that was reused, not started, is not measured.
 */
import { readFileSync } from 'node:fs';

const TICK_MICROS = 10_000; // USER_HZ is 100 on Linux

const servers = (process.env.BENCH_SERVER_PIDS ?? '')
  .split(' ')
  .filter((s) => s.includes('='))
  .map((s) => {
    const [name, pid] = s.split('=');
    return { name: name!, pid: Number(pid) };
  });

/** utime + stime of `pid` in µs, or undefined when it cannot be read (gone, not Linux). */
function cpuMicros(pid: number): number | undefined {
  try {
    // The fields after the command's closing parenthesis (the last: a command may hold one): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MICROS;
  } catch {
    return undefined;
  }
}

/**
 * Start measuring: the returned function gives each server's CPU (µs) since this call. `measured`:
 * the servers by name and pid, for a bench that started its own (default: BENCH_SERVER_PIDS).
 */
export function serverCpuSince(measured: readonly { name: string; pid: number }[] = servers): () => Record<string, number> {
  const start = measured.map((s) => cpuMicros(s.pid));
  return () => {
    const spent: Record<string, number> = {};
    measured.forEach((s, i) => {
      const now = cpuMicros(s.pid);
      if (now !== undefined && start[i] !== undefined) spent[s.name] = now - start[i]!;
    });
    return spent;
  };
}
