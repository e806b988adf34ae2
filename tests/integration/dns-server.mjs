// A DNS server the test stack asks (PORTCULLIS_DNS_NAMESERVER, set by scripts/test to
// 127.0.0.1:$PORTCULLIS_TEST_DNS_PORT): Debian's dnsmasq, unprivileged on that loopback port,
// authoritative for the zones a test names (names it does not hold are NXDOMAIN there) and
// serving exactly the records the test gives it. No upstream, no /etc/hosts, no resolv.conf.
// dnsmasq reads TXT records only at start, so a test that needs other records restarts it.
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { configFile, varDir, sleep } from './harness.mjs';

export const dnsPort = Number(process.env.PORTCULLIS_TEST_DNS_PORT);

// The nameserver the stack was configured with must be this one, or the tests prove nothing.
export function configuredNameserver() {
  const line = readFileSync(configFile, 'utf8').split('\n').find((l) => l.startsWith('PORTCULLIS_DNS_NAMESERVER='));
  return line?.slice('PORTCULLIS_DNS_NAMESERVER='.length);
}

// Starts dnsmasq with `zones` (domains it answers for) and records:
// txt: [[name, [string, ...]], ...] (one TXT record of those character-strings per entry),
// hosts: [name, ...] (an A record 192.0.2.1, so the name exists but has no TXT record).
// Resolves to an object with stop().
export async function startDnsmasq({ zones, txt = [], hosts = [] }) {
  if (!dnsPort) throw new Error('PORTCULLIS_TEST_DNS_PORT is not set: run through scripts/test');
  const runDir = path.join(varDir, 'run');
  mkdirSync(runDir, { recursive: true });
  const args = [
    '--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts', '--no-poll',
    '--bind-interfaces', '--listen-address=127.0.0.1', `--port=${dnsPort}`,
    `--pid-file=${path.join(runDir, 'dnsmasq-test.pid')}`, '--log-facility=-', '--cache-size=0',
  ];
  for (const z of zones) args.push(`--local=/${z}/`);
  // On the command line dnsmasq keeps quotes as part of the text: strings go unquoted (and so
  // must not contain commas).
  for (const [name, strings] of txt) args.push(`--txt-record=${[name, ...strings].join(',')}`);
  for (const h of hosts) args.push(`--host-record=${h},192.0.2.1`);
  const child = spawn('/usr/sbin/dnsmasq', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  // Ready once it answers on the port.
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`dnsmasq exited: ${stderr}`);
    if (await answers()) {
      return {
        async stop() {
          child.kill('SIGTERM');
          await exited;
        },
      };
    }
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`dnsmasq did not start: ${stderr}`);
}

// Does something answer a DNS query on the port within 200 ms?
function answers() {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    const done = (v) => { clearTimeout(timer); s.close(); resolve(v); };
    const timer = setTimeout(() => done(false), 200);
    s.on('message', () => done(true));
    s.on('error', () => done(false));
    // A query for "probe." type A.
    const q = Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 5, ...Buffer.from('probe'), 0, 0, 1, 0, 1]);
    s.send(q, dnsPort, '127.0.0.1');
  });
}

// A "nameserver" that receives queries on the port and never answers: the lookup must time out.
export async function startSilentServer() {
  const s = dgram.createSocket('udp4');
  let queries = 0;
  s.on('message', () => { queries += 1; });
  await new Promise((resolve, reject) => {
    s.once('error', reject);
    s.bind(dnsPort, '127.0.0.1', resolve);
  });
  return {
    queries: () => queries,
    stop: () => new Promise((resolve) => s.close(resolve)),
  };
}
