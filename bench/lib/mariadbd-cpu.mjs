// What bench/refresh-db and bench/code-db share: the mariadbd process's CPU from /proc, and the
// table of µs a statement they print.
import { readFileSync } from 'node:fs';

// The process's user + system time, in clock ticks (1/100 s).
export const ticks = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
};

// Each label's µs a statement of every round, as Markdown: the median first.
export function printResults(results, rounds) {
  const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
  console.log(`| statement | µs of mariadbd CPU each: median | ${Array.from({ length: rounds }, (_, i) => `round ${i + 1}`).join(' | ')} |`);
  console.log(`|---|---:|${'---:|'.repeat(rounds)}`);
  for (const [label, us] of results) console.log(`| ${label} | **${median(us).toFixed(0)}** | ${us.map((x) => x.toFixed(0)).join(' | ')} |`);
}
