// The size of each worker pool as started: PORTCULLIS_WORKERS processes, except the wellknown
// pool (the MCP validator, discovery documents, JWKS), which runs PORTCULLIS_WELLKNOWN_WORKERS,
// one per CPU by default: its requests never wait on the database, so a worker more than the
// CPUs only adds a process to wake (docs/operations.md; bench/README.md, "The validator's
// subrequest").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { configFile, masterPid, childPids, sleep } from './harness.mjs';

function setting(name) {
  const m = readFileSync(configFile, 'utf8').match(new RegExp(`^${name}=(.*)$`, 'm'));
  return m ? m[1] : undefined;
}

// A pool's workers once it holds steady (a reload by another test replaces them one by one).
async function settledCount(family) {
  let last = -1;
  for (let i = 0; i < 50; i++) {
    const n = childPids(masterPid(family)).length;
    if (n === last) return n;
    last = n;
    await sleep(200);
  }
  return last;
}

test('the wellknown pool runs one worker per CPU, the others PORTCULLIS_WORKERS', async () => {
  const wanted = Number(setting('PORTCULLIS_WELLKNOWN_WORKERS') || 0) || os.cpus().length;
  const workers = Number(setting('PORTCULLIS_WORKERS') || 0) || os.cpus().length;
  assert.equal(await settledCount('wellknown'), wanted);
  assert.equal(await settledCount('oauth'), workers);
});
