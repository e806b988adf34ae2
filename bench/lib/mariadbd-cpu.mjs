// What bench/refresh-db and bench/code-db share: the mariadbd process's CPU from /proc, the timing
// of a client's steps against it, and the table of µs a statement they print.
import { readFileSync } from 'node:fs';

// The process's user + system time, in clock ticks (1/100 s).
export const ticks = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
};

// Each step once outside the count (its statement is prepared then), then n times: the process's
// µs of CPU a run, noted under the step's label.
export async function timeSteps(pid, steps, n, note) {
  for (const [label, step] of steps) {
    await step();
    const t0 = ticks(pid);
    for (let i = 0; i < n; i++) await step();
    note(label, ((ticks(pid) - t0) * 1e4) / n);
  }
}

// Each label's µs a statement of every round, as Markdown: the median first.
export function printResults(results, rounds) {
  const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
  console.log(`| statement | µs of mariadbd CPU each: median | ${Array.from({ length: rounds }, (_, i) => `round ${i + 1}`).join(' | ')} |`);
  console.log(`|---|---:|${'---:|'.repeat(rounds)}`);
  for (const [label, us] of results) console.log(`| ${label} | **${median(us).toFixed(0)}** | ${us.map((x) => x.toFixed(0)).join(' | ')} |`);
}
