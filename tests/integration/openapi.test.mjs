// docs/openapi.yaml itself: every route the api worker registers is documented (and nothing
// else is), and every schema in it compiles as JSON Schema 2020-12.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { repoDir } from './harness.mjs';
import { spec } from './openapi.mjs';

test('openapi: documents exactly the routes of the api worker', () => {
  const dir = path.join(repoDir, 'handlers', 'api');
  const routes = new Set();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.cc'))) {
    const text = readFileSync(path.join(dir, file), 'utf8');
    for (const m of text.matchAll(/app\.add\(\s*"([A-Z]+)",\s*"(\/api\/v1[^"]*)"/g)) routes.add(`${m[1]} ${m[2]}`);
    // add_collection_routes(app, "<path>", "<id>", {scopes}, {create, list, get, update, remove})
    // (handlers/api/collection_routes.h): a nullptr handler adds no route.
    const collection = /add_collection_routes\(\s*app,\s*"(\/api\/v1[^"]*)",\s*"(\w+)",\s*\{[^}]*\},\s*\{([^}]*)\}\)/g;
    for (const m of text.matchAll(collection)) {
      const item = `${m[1]}/{${m[2]}}`;
      const [create, list, get, update, remove] = m[3].split(',').map((h) => h.trim() !== 'nullptr');
      if (create) routes.add(`POST ${m[1]}`);
      if (list) routes.add(`GET ${m[1]}`);
      if (get) routes.add(`GET ${item}`);
      if (update) routes.add(`PATCH ${item}`);
      if (remove) routes.add(`DELETE ${item}`);
    }
  }
  assert.ok(routes.size >= 20, `found ${routes.size} routes`);
  const documented = new Set();
  for (const [p, item] of Object.entries(spec.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      if (item[method]) documented.add(`${method.toUpperCase()} ${p}`);
    }
  }
  assert.deepEqual([...routes].filter((r) => !documented.has(r)).sort(), [], 'routes missing from docs/openapi.yaml');
  assert.deepEqual([...documented].filter((r) => !routes.has(r)).sort(), [], 'documented operations no route serves');
});

test('openapi: every schema compiles (JSON Schema 2020-12)', () => {
  assert.equal(spec.openapi, '3.1.0');
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);
  ajv.addSchema({ ...spec, $id: 'https://portcullis.invalid/check.yaml' });
  for (const name of Object.keys(spec.components.schemas)) {
    assert.doesNotThrow(() => ajv.getSchema(`https://portcullis.invalid/check.yaml#/components/schemas/${name}`), name);
  }
  for (const item of Object.values(spec.paths)) {
    for (const op of Object.values(item).filter((o) => o && o.responses)) {
      assert.ok(op.operationId && op.summary, JSON.stringify(op).slice(0, 80));
      for (const code of Object.keys(op.responses)) assert.match(code, /^([1-5]\d\d|[1-5]XX|default)$/);
    }
  }
});
